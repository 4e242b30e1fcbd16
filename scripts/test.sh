#!/usr/bin/env bash
# README command 2: install dependencies, build, and run the test suite: every CTest label except
# `slow` (large-sample versions) and `gpu` (needs a device). Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -LE 'slow|gpu' -j "$(nproc)" "$@"

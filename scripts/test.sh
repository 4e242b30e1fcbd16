#!/usr/bin/env bash
# README command 2: install dependencies, build, and run the test suite: every CTest label except
# `slow` (large-sample versions) and `gpu` (needs a device), then the Python package's tests
# (scripts/test_python.sh). Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -LE 'slow|gpu' -j "$(nproc)" "$@"
cd ..
# The Python package (python/, docs/PYTHON.md): pip install . into a fresh virtual environment, then pytest.
scripts/test_python.sh

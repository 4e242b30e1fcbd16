#!/usr/bin/env bash
# Configures and builds dpregret in ./build (Release). CUDA is auto-detected: where nvcc is found the
# CUDA backend and the gpu-labelled tests are compiled too (override: DPREGRET_CUDA=ON|OFF). The CPU kernels
# are compiled for every x86-64 instruction set (override: DPREGRET_CPU_ISAS=native|all|"avx2;generic";
# cmake/CpuIsaUnits.cmake). Arguments name the targets to build (e.g. `scripts/build.sh dpregret`); none
# builds everything, the tests too.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
fi
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DDPREGRET_CUDA="${DPREGRET_CUDA:-AUTO}" \
      -DDPREGRET_CPU_ISAS="${DPREGRET_CPU_ISAS:-all}" \
      ${DPREGRET_CMAKE_ARGS:-} > build.log.tmp 2>&1 || { cat build.log.tmp; rm -f build.log.tmp; exit 1; }
grep -E '^-- dpregret' build.log.tmp || true; rm -f build.log.tmp
targets=(); for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "${DPREGRET_JOBS:-$(nproc)}" "${targets[@]}"

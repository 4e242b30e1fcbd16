#!/usr/bin/env bash
# The Python package's tests (python/tests, docs/PYTHON.md): installs the package with `pip install .` into a fresh
# virtual environment of the machine's python3 (build/pyvenv; pip reaches PyPI for nanobind, scikit-build-core,
# NumPy, pytest and the optional pandas, tqdm, matplotlib) and runs pytest against the CLI built in build/.
# scripts/test.sh runs it after ctest; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
py="${DPREGRET_PYTHON:-python3}"
venv="$PWD/build/pyvenv"  # absolute: pytest runs from build/ below
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q numpy pytest pandas tqdm matplotlib nanobind scikit-build-core
# The package's own build directory (build/python) is kept between runs: a second install recompiles what changed.
# Without build isolation the build tools are this venv's, so the cached CMake paths stay valid between runs.
start=$SECONDS
"$venv/bin/python" -m pip install -q . --no-build-isolation --config-settings=build-dir=build/python
echo "test_python: pip install . took $((SECONDS - start)) s"
# The command the package is compared with: build/dpregret (built if missing), or DPREGRET_CLI when it is set (a
# command built from this tree elsewhere).
if [ -z "${DPREGRET_CLI:-}" ]; then
    [ -x build/dpregret ] || scripts/build.sh dpregret
    export DPREGRET_CLI="$PWD/build/dpregret"
fi
cd build  # import the installed package, not python/dpregret from the source tree
"$venv/bin/python" -m pytest -q ../python/tests "$@"

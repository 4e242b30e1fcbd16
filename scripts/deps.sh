#!/usr/bin/env bash
# Installs dpregret's build and run dependencies from Debian's apt, idempotently: packages already
# present are skipped, so this is cheap on a machine that has them. Needs root (or sudo).
set -euo pipefail
pkgs=(cmake g++ ninja-build git
      libgtest-dev libeigen3-dev libboost-math-dev librandom123-dev
      libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libfmt-dev libspdlog-dev
      libopenmpi-dev openmpi-bin
      python3 python3-numpy python3-matplotlib)
# On x86-64, QEMU's user-mode emulator runs the test that executes dpregret on CPUs without AVX-512 / AVX
# (tests/engine/test_cpu_isa.cpp).
case "$(uname -m)" in x86_64|amd64) pkgs+=(qemu-user) ;; esac
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all ${#pkgs[@]} apt packages present"
    exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

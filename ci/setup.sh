#!/usr/bin/env bash
# Installs what parity needs (Debian packages), only when missing, then configures and builds.
# Usage: ci/setup.sh [BUILD_DIR]   (default: build). Extra CMake flags: PARITY_CMAKE_FLAGS="...".
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}

packages=(build-essential cmake ninja-build git ccache libtorch-dev librapidcheck-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libbenchmark-dev libssl-dev chromium python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "parity setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# tests/schema_test.py validates reports with jsonschema (>= 4.18 for its referencing registry).
if ! python3 -c 'import jsonschema, referencing' 2>/dev/null; then
  echo "parity setup: installing jsonschema for $(command -v python3)"
  # A Debian-managed python3 refuses plain pip installs (PEP 668); the package is for tests only.
  python3 -m pip install --quiet 'jsonschema>=4.18' 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages 'jsonschema>=4.18'
fi

if [ ! -f "$build_dir/build.ninja" ]; then
  # shellcheck disable=SC2086
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${PARITY_CMAKE_FLAGS:-}
fi
cmake --build "$build_dir" --parallel "$(nproc)"

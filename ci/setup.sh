#!/usr/bin/env bash
# Installs what parity needs (Debian packages; for a PyPI oracle, a project-local venv), only when missing, then
# configures and builds.
# Usage: [PARITY_TORCH=1.13|2.15] [PARITY_PRESET=NAME] [PARITY_TARGETS="T ..."] ci/setup.sh [BUILD_DIR]
#   PARITY_TORCH picks the oracle: 1.13 (the default) is Debian's libtorch-dev; 2.15 is PyPI's torch wheel as
#   pinned in ci/torch-2.15.txt and resolved in ci/torch-2.15.lock (ci/lock_torch.py), installed into
#   .venv-torch-2.15. BUILD_DIR defaults to build (1.13) or build-torch-2.15. PARITY_PRESET names the configure
#   preset of CMakePresets.json (default: default; asan-ubsan is the sanitizer build, ci/sanitize.sh). Extra
#   CMake flags: PARITY_CMAKE_FLAGS="...".
set -euo pipefail
cd "$(dirname "$0")/.."
torch=${PARITY_TORCH:-1.13}
case "$torch" in
  1.13) default_build=build ;;
  2.15) default_build=build-torch-2.15 ;;
  *) echo "parity setup: PARITY_TORCH=$torch is not an oracle parity knows (1.13, 2.15)" >&2; exit 2 ;;
esac
build_dir=${1:-$default_build}

packages=(build-essential cmake ninja-build git ccache libtorch-dev librapidcheck-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libbenchmark-dev libssl-dev chromium python3 python3-venv)
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

# The tests' Python packages: tests/reports/schema_test.py validates reports with jsonschema (>= 4.18 for its
# referencing registry); tests/cli/junit_consumer_test.py reads parity's JUnit XML with junitparser, as CI tools do.
if ! python3 -c 'import jsonschema, referencing, junitparser' 2>/dev/null; then
  echo "parity setup: installing jsonschema and junitparser for $(command -v python3)"
  # A Debian-managed python3 refuses plain pip installs (PEP 668); the packages are for tests only.
  python3 -m pip install --quiet 'jsonschema>=4.18' 'junitparser>=3.1' 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages 'jsonschema>=4.18' 'junitparser>=3.1'
fi

oracle_flags=()
if [ "$torch" != 1.13 ]; then
  # The wheel is LibTorch for C++ and PyTorch for the Python repros: one venv serves both.
  venv=.venv-torch-$torch
  requirements=ci/torch-$torch.txt
  lock=ci/torch-$torch.lock
  wanted=$(sed -n 's/^torch==//p' "$requirements")
  if ! "$venv/bin/python" -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$wanted')" 2>/dev/null; then
    # The lock is the pins' resolution, with hashes: refuse one made from other pins or for another Python,
    # whose wheels pip would reject half way through.
    while read -r pin; do
      grep -qix "${pin%%[[:space:]]*} .*" "$lock" 2>/dev/null || {
        echo "parity setup: $lock does not pin $pin as $requirements does; run: python3 ci/lock_torch.py $torch" >&2
        exit 1
      }
    done < <(grep -v '^[[:space:]]*\(#\|$\)' "$requirements")
    lock_python=$(sed -n '1s/.* with Python \([0-9.]*\);.*/\1/p' "$lock")
    python=$(python3 -c 'import sys; print(f"{sys.version_info.major}.{sys.version_info.minor}")')
    if [ "$lock_python" != "$python" ]; then
      echo "parity setup: $lock was made for Python $lock_python, and python3 here is $python: its wheels would" \
           "not install. Run: python3 ci/lock_torch.py $torch" >&2
      exit 1
    fi
    # The locked packages unpack to about 4.5 GB. Installed one at a time, pip holds one download (at most about
    # 1 GB) while it unpacks it, rather than all of them (3.5 GB) until the end: a fuller CI disk still fits.
    need_gb=6
    free_kb=$(df -Pk . | awk 'NR == 2 { print $4 }')
    tmp_free_kb=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $4 }')
    ((tmp_free_kb < free_kb)) && free_kb=$tmp_free_kb
    if ((free_kb < need_gb * 1024 * 1024)); then
      echo "parity setup: installing torch $wanted needs about $need_gb GB free here and in ${TMPDIR:-/tmp};" \
           "$((free_kb / 1024 / 1024)) GB is free. Free some space (old build folders, fresh clones) or" \
           "run only the 1.13 oracle: PARITY_ORACLES=1.13 ci/test.sh" >&2
      exit 1
    fi
    echo "parity setup: installing torch $wanted into $venv ($lock: PyPI, about 4.5 GB, once)"
    python3 -m venv "$venv"
    # No pip cache (a second copy, for a venv made once per checkout), no dependency resolution (the lock is one).
    # A package already there is skipped, so a run stopped half way goes on where it stopped.
    n=0
    total=$(grep -c '^[^#]' "$lock")
    while read -r locked; do
      n=$((n + 1))
      echo "parity setup:   [$n/$total] ${locked%% *}"
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps \
        --require-hashes -r /dev/stdin <<< "$locked"
    done < <(grep '^[^#]' "$lock")
  fi
  torch_dir=$("$venv/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
  # CMAKE_PREFIX_PATH names the torch/ folder itself: its share/cmake would pair 2.x's headers with the first
  # libtorch.so on the system paths (Debian's 1.13).
  oracle_flags=(-DCMAKE_PREFIX_PATH="$torch_dir" -DPARITY_TORCH_VERSION="$wanted"
                -DPARITY_REPRO_PYTHON="$PWD/$venv/bin/python")
  # The drift test compares this release with the default oracle's build when there is one (ci/test.sh builds
  # it first).
  [ -x build/parity ] && oracle_flags+=(-DPARITY_DRIFT_AGAINST="$PWD/build/parity")
fi

if [ ! -f "$build_dir/build.ninja" ]; then
  # shellcheck disable=SC2086
  cmake --preset "${PARITY_PRESET:-default}" -B "$build_dir" "${oracle_flags[@]}" ${PARITY_CMAKE_FLAGS:-}
fi
# PARITY_TARGETS: only these targets (the sanitizer job needs no benchmarks).
# shellcheck disable=SC2086
cmake --build "$build_dir" --parallel "$(nproc)" ${PARITY_TARGETS:+--target $PARITY_TARGETS}

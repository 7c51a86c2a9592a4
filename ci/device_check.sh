#!/usr/bin/env bash
# On the GPU machine (../shared/device/README.md; `.devdeps` carried): builds parity against the machine's CUDA
# LibTorch with the CUDA oracle (PARITY_ORACLE_CUDA), runs the device tests, a short campaign on cuda (impl-CUDA vs
# LibTorch-CUDA) and the CPU campaign as a baseline. Logs and the campaigns' folders go under $OUT (default
# ./device-check-out). Exits non-zero when any step fails; each step's log says which.
set -uo pipefail
OUT=${OUT:-$PWD/device-check-out}
CASES=${PARITY_DEVICE_CASES:-2000}
mkdir -p "$OUT"
status=0
step() {  # step NAME COMMAND...: runs it, logging to $OUT/NAME.log, and remembers a failure
  local name=$1; shift
  echo "== $name: $*" | tee -a "$OUT/summary.txt"
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "   exit $rc" | tee -a "$OUT/summary.txt"
  [ $rc -eq 0 ] || status=1
  return $rc
}

nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || true
T=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
R=$PWD/.devdeps/root/usr; L=$R/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-}
step configure cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$T" \
  -Drapidcheck_DIR=$L/cmake/rapidcheck -DGTest_DIR=$L/cmake/GTest -Dbenchmark_DIR=$L/cmake/benchmark \
  -Dnlohmann_json_DIR=$R/share/cmake/nlohmann_json -DCMAKE_CUDA_ARCHITECTURES=90 -DPARITY_ORACLE_CUDA=ON || exit 1
step build cmake --build build-gpu -j16 || exit 1
# The device tests, and the unit tests a device changes the outcome of (the refusal test skips where both see one).
step device_tests build-gpu/parity_unit_tests --gtest_filter='ImplCuda.*:DevicePrograms.*:DeviceProbe.*:Cli.FuzzOnCuda*' \
  --gtest_output=xml:"$OUT/device_tests.xml"
step campaign_cuda build-gpu/parity fuzz --device cuda --cases "$CASES" --seed 14 --jobs 8 --out "$OUT/campaign-cuda" --overwrite
step campaign_cpu build-gpu/parity fuzz --cases "$CASES" --seed 14 --jobs 8 --out "$OUT/campaign-cpu" --overwrite
exit $status

#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds parity against the machine's CUDA LibTorch with the CUDA oracle
# (PARITY_ORACLE_CUDA), runs the device tests, the whole test suite, two campaigns on
# cuda (impl-CUDA judged by LibTorch-CUDA, and by impl on the CPU: --oracle impl-cpu) and the CPU campaign as a
# baseline, the campaign throughput on cuda (parity_throughput_bench --device cuda) and the device benchmark
# (bench/kernels.py --device cuda). It ends with one summary (ci/device_summary.py): each step's status, the device
# tests' counts, each campaign's cases/s, unexpected groups and judging LibTorch release, the throughput against
# its goal and the benchmark's ratios. What it leaves under $OUT (default ./device-check-out) is at most a few
# files, as the device tool brings back: summary.txt, logs.tar.gz, campaigns.tar.gz (the campaigns' folders),
# throughput-cuda.json and the benchmark's kernels-cuda.json, .svg and Google Benchmark JSON. Exits non-zero when
# a step fails. Built to fit one device call of 8 minutes on 16 cores; PARITY_DEVICE_CAMPAIGN_SECONDS=S runs each
# campaign for S seconds instead of PARITY_DEVICE_CASES cases (issue 30's 120-second check; a second call on a
# warm machine reuses build-gpu/).
# It needs there: CMake, ninja, nvcc, a python3 whose torch is a CUDA build (its LibTorch is the oracle), and
# RapidCheck, GoogleTest, Google Benchmark and nlohmann/json under .devdeps/root/usr (a machine that reaches no
# package registry gets them carried there, as Debian's packages unpacked).
set -uo pipefail
OUT=${OUT:-$PWD/device-check-out}
CASES=${PARITY_DEVICE_CASES:-3000}
JOBS=${PARITY_DEVICE_JOBS:-$(nproc)}
LOGS=$PWD/build-gpu/device-check-logs
mkdir -p "$OUT" "$LOGS"
status=0
step() {  # step NAME COMMAND...: runs it, logging to $LOGS/NAME.log, and remembers a failure
  local name=$1; shift
  local start=$SECONDS
  echo "== $name: $*" >>"$OUT/summary.txt"
  "$@" >"$LOGS/$name.log" 2>&1
  local rc=$?
  echo "   exit $rc after $((SECONDS - start)) s" >>"$OUT/summary.txt"
  [ $rc -eq 0 ] || status=1
  return $rc
}
finish() {
  tar -czf "$OUT/logs.tar.gz" -C "$LOGS" . 2>/dev/null
  python3 ci/device_summary.py --steps "$OUT/summary.txt" --tests "$LOGS/device_tests.xml" \
    --campaign cuda=build-gpu/campaign-cuda --campaign cuda-impl-cpu=build-gpu/campaign-cuda-impl-cpu \
    --campaign cpu=build-gpu/campaign-cpu --throughput "$OUT/throughput-cuda.json" \
    --kernels "$OUT/kernels-cuda.json" >"$LOGS/summary-block.txt" 2>&1
  cat "$LOGS/summary-block.txt" >>"$OUT/summary.txt"
  cat "$OUT/summary.txt"
  exit $status
}

{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'; nproc; } \
  >"$LOGS/machine.log" 2>&1
T=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
R=$PWD/.devdeps/root/usr; L=$R/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-}
step configure cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$T" \
  -Drapidcheck_DIR=$L/cmake/rapidcheck -DGTest_DIR=$L/cmake/GTest -Dbenchmark_DIR=$L/cmake/benchmark \
  -Dnlohmann_json_DIR=$R/share/cmake/nlohmann_json -DCMAKE_CUDA_ARCHITECTURES=90 -DPARITY_ORACLE_CUDA=ON || finish
step build cmake --build build-gpu -j"$JOBS" || finish
# Whether the CUDA driver starts under the address-space cap that campaigns on the CPU put on each worker (4 GiB):
# campaigns on cuda do not apply it (cli/memory_limit.h); this records why, on this machine.
step cuda_under_rlimit_as prlimit --as=$((4 << 30)) build-gpu/parity_unit_tests --gtest_filter='Memory/ImplCuda.DeviceCopyTransposes/Device'
status=0  # that step is a record, not a check
step device_tests build-gpu/parity_unit_tests --gtest_filter='*ImplCuda*:ImplCpuOracle.*:DevicePrograms.*:DeviceProbe.*:Cli.FuzzOnCuda*:Cli.FuzzJudged*' \
  --gtest_output=xml:"$LOGS/device_tests.xml"
step test_suite bash -c "cd build-gpu && ctest -j$JOBS --timeout 300 --output-on-failure -L 'unit|property|differential' -E fault_injection"
BUDGET=(--cases "$CASES")
[ -n "${PARITY_DEVICE_CAMPAIGN_SECONDS:-}" ] && BUDGET=(--seconds "$PARITY_DEVICE_CAMPAIGN_SECONDS")
step campaign_cuda build-gpu/parity fuzz --device cuda "${BUDGET[@]}" --seed 14 --jobs "$JOBS" \
  --out build-gpu/campaign-cuda --overwrite
step campaign_cuda_impl_cpu build-gpu/parity fuzz --device cuda --oracle impl-cpu "${BUDGET[@]}" --seed 14 \
  --jobs "$JOBS" --out build-gpu/campaign-cuda-impl-cpu --overwrite
step campaign_cpu build-gpu/parity fuzz "${BUDGET[@]}" --seed 14 --jobs "$JOBS" --out build-gpu/campaign-cpu --overwrite
tar -czf "$OUT/campaigns.tar.gz" -C build-gpu campaign-cuda campaign-cuda-impl-cpu campaign-cpu 2>/dev/null
step throughput build-gpu/parity_throughput_bench --device cuda --seconds 10 --json "$OUT/throughput-cuda.json"
step device_bench python3 bench/kernels.py --device cuda --bench build-gpu/parity_bench --out-dir "$OUT" \
  --repetitions 3 --min-time 0.2
finish

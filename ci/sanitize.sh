#!/usr/bin/env bash
# The sanitizer job: parity's own code built with AddressSanitizer and UndefinedBehaviorSanitizer (CMakePresets.json's
# asan-ubsan preset, in build-asan/, against Debian's LibTorch 1.13, which is not instrumented), then the unit tests,
# the property tests and the CI campaign's programs on that build. Any sanitizer report, in any process (forked
# workers included), fails it; the first reports are printed at the end. No HTML report: the campaign is here for
# what its processes do, not for its findings.
# Usage: ci/sanitize.sh [CASES]   (the campaign's cases; default the CI campaign's, PARITY_CI_CASES: 20000, 10 to 20 s
#   on 2 cores; fewer may leave some coverage unreached, which fails it)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build-asan
PARITY_TORCH=1.13 PARITY_PRESET=asan-ubsan PARITY_TARGETS="parity parity_unit_tests parity_property_tests" \
  ci/setup.sh "$build_dir"
cases=${1:-$(sed -n 's/^PARITY_CI_CASES:STRING=//p' "$build_dir/CMakeCache.txt")}

# Each process writes its reports to a file of its own (PREFIX.PID): a worker's report would otherwise be one line
# among many on stderr, and one after its last answer would fail nothing.
logs=$PWD/$build_dir/sanitizer-reports
rm -rf "$logs"
mkdir -p "$logs"
# handle_segv=0: a planted `crash` fault must die of SIGSEGV, as the engine tests expect, not of ASan's exit 1; a
# real segfault still fails its test or is a crash finding, and ASan and UBSan catch most bad accesses before one.
export ASAN_OPTIONS="log_path=$logs/asan:handle_segv=0:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"

# Unit tests that cannot pass under ASan, each group for the reason above it.
excluded=(
  # A sanitizer build caps no address space (its shadow memory takes terabytes of it: engine::
  # kAddressSpaceLimitSupported), and ASan's operator new ends the process on an allocation past its own limit
  # (1 TiB) instead of calling the new-handler that makes it an out_of_memory finding.
  EngineWorkers.PlantedOutOfMemoryEndsOnlyItsCase
  # Its two campaigns must shrink alike within a budget of time, which ASan's slowdown spends sooner.
  EngineCampaign.PlantedFaultIsFoundShrunkAndDeterministic
)

status=0
failed=()
# The unit tests in one process per core, each a gtest shard: ctest would start one per test, and ASan's start-up
# with LibTorch loaded costs more than most tests (on 2 cores, 7 minutes for the unit tests against 1); one process
# alone leaves a core idle. JUnit XML per shard, as ci/test.sh writes it.
shards=$(nproc)
pids=()
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "./$build_dir/parity_unit_tests" \
    --gtest_filter="-$(IFS=:; echo "${excluded[*]}")" --gtest_output="xml:$build_dir/junit-unit-$i.xml" \
    >"$build_dir/gtest-unit-$i.log" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < shards; i++)); do
  wait "${pids[$i]}" || { status=1; failed+=("parity_unit_tests (shard $i of $shards)"); }
  cat "$build_dir/gtest-unit-$i.log"
done
"./$build_dir/parity_property_tests" --gtest_output="xml:$build_dir/junit-property.xml" 2>&1 |
  tee "$build_dir/gtest-property.log" || { status=1; failed+=(parity_property_tests); }
# The CI campaign's seed and cases (CMakeLists.txt's differential_campaign): programs the 1.13 suite judges, so
# nothing unexpected may differ, and all of its coverage is reached under ASan too. --memory-mb 0: a sanitizer
# build caps no address space (see above); the command says so itself.
"./$build_dir/parity" fuzz --cases "$cases" --seed 20261121 --require-coverage --memory-mb 0 \
  --out "$build_dir/campaign-sanitize" --overwrite || { status=1; failed+=("the campaign ($build_dir/campaign-sanitize)"); }

if compgen -G "$logs/*" >/dev/null; then
  reports=("$logs"/*)
  # One bug can make a report in every worker that meets it: the first few say what it is.
  echo "sanitize: ${#reports[@]} processes made sanitizer reports ($logs); the first ones:" >&2
  for f in "${reports[@]:0:5}"; do
    echo "---- $f" >&2
    cat "$f" >&2
  done
  status=1
  failed+=("sanitizer reports ($logs)")
fi
if ((${#failed[@]})); then
  # gtest's own list of failed tests is far above the campaign's output: repeat it here.
  echo "sanitize: FAILED: ${failed[*]}" >&2
  grep -h '^\[  FAILED  \] [A-Za-z]' "$build_dir"/gtest-*.log 2>/dev/null | sort -u >&2 || true
fi
exit "$status"

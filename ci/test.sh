#!/usr/bin/env bash
# The whole test suite, against both oracles: unit tests, properties (impl and LibTorch), the seed claims, the
# fixed-seed differential campaign and the report checks, first with Debian's LibTorch 1.13 (build/), then with
# PyPI's LibTorch 2.15 (build-torch-2.15/, whose Python repros run with that PyTorch). Then the sanitizer job
# (ci/sanitize.sh: unit and property tests and the CI campaign's programs under ASan+UBSan, in build-asan/).
# Usage: ci/test.sh [BUILD_DIR]   (the 1.13 build; default build). PARITY_ORACLES="1.13" runs one oracle only;
# PARITY_SANITIZE=0 skips the sanitizer job.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
# What failed, repeated last: CI shows the end of a long log, and a failure hours of output above it is lost.
failed=()
timings=()
started=$SECONDS
for torch in ${PARITY_ORACLES:-1.13 2.15}; do
  if [ "$torch" = 1.13 ]; then build_dir=${1:-build}; else build_dir=build-torch-$torch; fi
  echo "parity test: the suite against LibTorch $torch ($build_dir)"
  # A build that cannot be made fails the run, but the other oracle and the sanitizer job still run.
  if ! PARITY_TORCH=$torch ci/setup.sh "$build_dir"; then
    status=1
    failed+=("against LibTorch $torch ($build_dir): its setup or build failed, as printed above")
    timings+=("LibTorch $torch: setup and build failed after $((SECONDS - started)) s")
    started=$SECONDS
    continue
  fi
  # JUnit XML for CI dashboards: one file per oracle, every test ctest ran (unit, property, differential, report).
  built=$SECONDS
  if ! (cd "$build_dir" && ctest --output-on-failure --timeout 900 -j "$(nproc)" --output-junit junit.xml); then
    status=1
    failed+=("against LibTorch $torch ($build_dir): $(tr '\n' ' ' < "$build_dir/Testing/Temporary/LastTestsFailed.log" 2>/dev/null)")
  fi
  # CI has a time budget: each phase's share, so that the one that grew is plain from the log.
  timings+=("LibTorch $torch: setup and build $((built - started)) s, tests $((SECONDS - built)) s")
  started=$SECONDS
done
# Last: it builds against the 1.13 build's packages.
if [ "${PARITY_SANITIZE:-1}" != 0 ]; then
  echo "parity test: unit and property tests and a campaign under ASan+UBSan (build-asan)"
  ci/sanitize.sh || { status=1; failed+=("the sanitizer job (build-asan): its own summary is above"); }
  timings+=("sanitizer job: $((SECONDS - started)) s")
fi
echo "parity test: took $SECONDS s"
printf '  %s\n' "${timings[@]}"
if ((${#failed[@]})); then
  echo "parity test: FAILED"
  printf '  %s\n' "${failed[@]}"
fi
exit "$status"

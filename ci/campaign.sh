#!/usr/bin/env bash
# A conformance campaign: impl against LibTorch on generated programs, for a time budget.
# Usage: [PARITY_TORCH=1.13|2.15] ci/campaign.sh [SECONDS] [SEED] [OUT_DIR]   (defaults: 60, 1, runs/latest)
# PARITY_TORCH picks the oracle (ci/setup.sh): Debian's LibTorch 1.13 (default, build/) or PyPI's 2.15
# (build-torch-2.15/). Writes OUT_DIR/findings.jsonl (one divergence per line, as found), OUT_DIR/run.json (the
# summary) and OUT_DIR/report.html (the page to triage, built even when the campaign fails or is interrupted).
# Exit status: the campaign's (0 budget spent, nothing unexpected; 1 unexpected findings; 5 stopped by a signal
# before its budget was spent; 6 no case ran; see `parity fuzz --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
seed=${2:-1}
out=${3:-runs/latest}
torch=${PARITY_TORCH:-1.13}
if [ "$torch" = 1.13 ]; then build_dir=build; else build_dir=build-torch-$torch; fi
PARITY_TORCH=$torch ci/setup.sh "$build_dir" >/dev/null
rm -rf "$out"
status=0
"./$build_dir/parity" fuzz --seconds "$seconds" --seed "$seed" --out "$out" || status=$?
# The page matters most when the campaign failed: its own failure must not hide the campaign's status.
"./$build_dir/parity" report "$out" -o "$out/report.html" || echo "campaign: the HTML report could not be built" >&2
exit "$status"

#!/usr/bin/env bash
# A campaign split into shards that run side by side, merged into one run.json, findings.jsonl and report.html.
# On one machine the shards are processes; in hosted CI each shard is a job of a matrix, and the merge is a last
# job (ci/github-actions-conformance.yml is that workflow, ready to copy to .github/workflows/).
#
# Usage: ci/sharded_campaign.sh SHARDS CASES [SEED] [OUT] [-- FUZZ_OPTIONS...]
#   defaults: seed 20261121, OUT runs/sharded. Shard i runs the cases k < CASES with k % SHARDS == i
#   (GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX) with --jobs cores/SHARDS (at least 1) into OUT/shard-i; the merge goes to
#   OUT/merged (run.json, findings.jsonl, report.html). FUZZ_OPTIONS go to every shard (e.g. --require-coverage).
#   PARITY names the parity binary (default: build/parity, built by ci/setup.sh first).
# Exit status: 2 if a shard failed to run or the merge failed; else 1 if any shard had unexpected findings, then 5
# (a shard was stopped by a signal), 6 (a shard ran no case), 3 (starved coverage), 4 (stale ledger), as
# `parity fuzz` says; 0 when every shard passed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 2 ]]; then
  sed -n '5,13p' "$0" >&2
  exit 2
fi
shards=$1 cases=$2
seed=${3:-20261121}
out=${4:-runs/sharded}
shift $(( $# < 4 ? $# : 4 ))
[[ ${1:-} == -- ]] && shift
if ! [[ $shards =~ ^[1-9][0-9]*$ && $cases =~ ^[0-9]+$ ]]; then
  echo "sharded_campaign: SHARDS must be a positive integer and CASES an integer" >&2
  exit 2
fi
if [[ -z ${PARITY:-} ]]; then
  ci/setup.sh build >/dev/null
  PARITY=./build/parity
fi
cores=$(nproc)
jobs=$(( cores / shards > 0 ? cores / shards : 1 ))

rm -rf "$out"
mkdir -p "$out"
pids=()
for (( i = 0; i < shards; i++ )); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
    "$PARITY" fuzz --cases "$cases" --seed "$seed" --jobs "$jobs" --out "$out/shard-$i" "$@" \
    >"$out/shard-$i.log" 2>&1 &
  pids+=($!)
done
worst=0
rank() { case $1 in 0) echo 0 ;; 4) echo 1 ;; 3) echo 2 ;; 6) echo 3 ;; 5) echo 4 ;; 1) echo 5 ;; *) echo 6 ;; esac; }
for (( i = 0; i < shards; i++ )); do
  status=0
  wait "${pids[$i]}" || status=$?
  echo "shard $i/$shards: exit $status ($(tail -n 1 "$out/shard-$i.log" 2>/dev/null))"
  (( status == 0 || status == 1 || status == 3 || status == 4 || status == 5 || status == 6 )) || status=2
  (( $(rank "$status") > $(rank "$worst") )) && worst=$status
done
dirs=()
for (( i = 0; i < shards; i++ )); do dirs+=("$out/shard-$i"); done
if ! "$PARITY" merge "${dirs[@]}" -o "$out/merged"; then
  echo "sharded_campaign: the shards could not be merged (their logs: $out/shard-*.log)" >&2
  exit 2
fi
"$PARITY" report "$out/merged" -o "$out/merged/report.html" || echo "sharded_campaign: the HTML report could not be built" >&2
echo "merged: $out/merged/run.json, $out/merged/findings.jsonl, $out/merged/report.html"
exit "$worst"

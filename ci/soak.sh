#!/usr/bin/env bash
# The soak test: one long campaign per oracle, side by side, each sampled every minute for memory, open
# descriptors, worker restarts and throughput (ci/soak.py says what fails it). Not part of ci/test.sh: it takes an
# hour by default, past CI's budget. Run it before a release, or after a change to the campaign loop, the workers
# or the journal.
# Usage: ci/soak.sh [MINUTES] [OUT]   (60 minutes, into soak-out/). PARITY_ORACLES="1.13" soaks one oracle only.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
out=${2:-soak-out}
campaigns=()
for torch in ${PARITY_ORACLES:-1.13 2.15}; do
  if [ "$torch" = 1.13 ]; then build_dir=build; else build_dir=build-torch-$torch; fi
  PARITY_TORCH=$torch ci/setup.sh "$build_dir"
  campaigns+=(--campaign "$torch=$build_dir/parity")
done
exec python3 ci/soak.py --minutes "$minutes" --out "$out" "${campaigns[@]}"

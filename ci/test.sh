#!/usr/bin/env bash
# The whole test suite: unit tests, properties (impl and LibTorch), and the fixed-seed differential campaign.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
ci/setup.sh "$build_dir"
cd "$build_dir"
# JUnit XML for CI dashboards: one file for every test ctest ran (unit, property, differential), with labels.
ctest --output-on-failure --timeout 900 -j "$(nproc)" --output-junit junit.xml

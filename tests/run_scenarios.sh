#!/usr/bin/env bash
# Runs scenario folders (format: ../shared/contract/SCENARIOS.md) against a
# build: this project's own tests/scenarios, and the shared acceptance
# scenarios when a shared/ folder sits beside the checkout.
# usage: run_scenarios.sh BUILD_DIR OWN_SCENARIOS_DIR SHARED_DIR
set -euo pipefail
build=$1 own=$2 shared=$3
runner="$shared/tools/run-scenarios"
if [ ! -x "$runner" ] && [ ! -f "$runner" ]; then
  echo "no scenario runner at $runner (shared/ absent): skipping"
  exit 77
fi
dirs=("$own")
[ -d "$shared/scenarios" ] && dirs+=("$shared/scenarios")
exec bash "$runner" "$build" "${dirs[@]}"

#!/usr/bin/env bash
# Installs what is missing, builds, ingests the bundled sample cluster
# stream into an embedded ledger and prints the audit report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
# As tools/test.sh builds it: one compile unit per library and program.
unity=(-Dunity=on -Dunity_size=1000)
meson setup build --buildtype=debugoptimized "${unity[@]}" >/dev/null 2>&1 ||
  meson setup --reconfigure build "${unity[@]}" >/dev/null
ninja -C build -j "$(nproc)" >/dev/null
ledger=$(mktemp -d)/ledger
trap 'rm -rf "$(dirname "$ledger")"' EXIT
build/tools/ledger-ingest --ledger "$ledger" --from tools/demo/cluster-events.jsonl
build/tools/ledger-replay --ledger "$ledger" verify -o table
echo
build/tools/ledger-replay --ledger "$ledger" -o table

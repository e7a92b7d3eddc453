#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (unit,
# crash, watch-daemon, scenario and benchmark smoke tests). With
# --sanitizers it also builds with AddressSanitizer+UndefinedBehaviorSanitizer
# and runs the unit and scenario tests there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
jobs=$(nproc)
meson setup build --buildtype=debugoptimized >/dev/null 2>&1 || meson setup --reconfigure build >/dev/null
ninja -C build -j "$jobs"
meson test -C build --print-errorlogs --num-processes 1
if [ "${1:-}" = "--sanitizers" ]; then
meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug >/dev/null 2>&1 \
  || meson setup --reconfigure build-asan >/dev/null
ninja -C build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  meson test -C build-asan --print-errorlogs --num-processes 1 unit scenarios
fi
# One closing line for CI: tests run in both builds (unit test cases are
# counted inside the 'unit' executable; this counts meson test programs).
python3 - "${1:-}" <<'PY'
import json
passed = failed = skipped = 0
import os, sys
logs = ["build/meson-logs/testlog.json"]
if len(sys.argv) > 1 and sys.argv[1] == "--sanitizers":
    logs.append("build-asan/meson-logs/testlog.json")
for log in logs:
    for line in open(log):
        r = json.loads(line).get("result")
        if r == "OK": passed += 1
        elif r == "SKIP": skipped += 1
        else: failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY

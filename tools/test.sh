#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite: the
# normal build (unit, crash, scenario tests) and an address+undefined
# sanitizer build of the unit and scenario tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
jobs=$(nproc)
meson setup build --buildtype=debugoptimized >/dev/null 2>&1 || meson setup --reconfigure build >/dev/null
ninja -C build -j "$jobs"
meson test -C build --print-errorlogs --num-processes 1
meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug >/dev/null 2>&1 \
  || meson setup --reconfigure build-asan >/dev/null
ninja -C build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  meson test -C build-asan --print-errorlogs --num-processes 1 unit scenarios
# One closing line for CI: tests run in both builds (unit test cases are
# counted inside the 'unit' executable; this counts meson test programs).
python3 - <<'PY'
import json
passed = failed = skipped = 0
for log in ("build/meson-logs/testlog.json", "build-asan/meson-logs/testlog.json"):
    for line in open(log):
        r = json.loads(line).get("result")
        if r == "OK": passed += 1
        elif r == "SKIP": skipped += 1
        else: failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY

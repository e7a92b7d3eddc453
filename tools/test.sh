#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (unit,
# crash, watch-daemon, scenario, generator and benchmark smoke tests) twice:
# on the normal build, then on a build with AddressSanitizer and
# UndefinedBehaviorSanitizer (leak checks on, first UB report fails the
# test); then the tests of the code that starts threads with
# ThreadSanitizer. Tests that start servers or time processes run alone, the
# others two at a time; under the sanitizers those that run alone form one
# queue beside the others. --quick skips the sanitizer builds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
jobs=$(nproc)
# One compile unit per library, program and test executable (meson's unity
# build): the headers their files share are parsed once per target, not
# once per file.
unity=(-Dunity=on -Dunity_size=1000)
meson setup build --buildtype=debugoptimized "${unity[@]}" >/dev/null 2>&1 ||
  meson setup --reconfigure build "${unity[@]}" >/dev/null
ninja -C build -j "$jobs"
meson test -C build --print-errorlogs --num-processes 2
logs=(build/meson-logs/testlog.json)
if [ "${1:-}" != "--quick" ]; then
  # Sanitizer builds keep line tables only (-g1): reports still name file
  # and line, and full debug info slows every file's compile.
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug \
    -Dcpp_args=-g1 "${unity[@]}" >/dev/null 2>&1 || meson setup --reconfigure build-asan "${unity[@]}" >/dev/null
  ninja -C build-asan -j "$jobs"
  # What runs under the sanitizers: every suite but the browser's page test
  # and the benchmark's smoke run (suite 'normal-only': the C++ they reach is
  # serve's, which serve-kubectl, serve-hostile-clients and the unit tests
  # drive), and the fleet on a smaller stream with fewer kills, without the
  # scenarios that only wait on timers and permissions (progress, sidecar,
  # squat, users); every fleet scenario runs on the normal build.
  # The suites that run alone (suite 'alone') wait on servers, timers and
  # processes starting; they run as one queue beside the others, which fill
  # the cores meanwhile. The queue's output is printed when both are done.
  export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    FLEET_TEST_EVENTS=1000 FLEET_TEST_KILLS=6 FLEET_TEST_ONLY=main,late,gap,tamper,refused,trust
  meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 1 --timeout-multiplier 3 \
    --logbase alone --suite alone --no-suite normal-only >build-asan/alone.out 2>&1 &
  alone=$!
  status=0
  meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 2 --timeout-multiplier 3 \
    --logbase others --no-suite alone --no-suite normal-only || status=$?
  wait "$alone" || status=$?
  cat build-asan/alone.out
  unset ASAN_OPTIONS UBSAN_OPTIONS FLEET_TEST_EVENTS FLEET_TEST_KILLS FLEET_TEST_ONLY
  logs+=(build-asan/meson-logs/others.json build-asan/meson-logs/alone.json)
  [ "$status" -eq 0 ] || exit "$status"
  # ThreadSanitizer on the tests of the code that starts threads
  # (tests/meson.build, 'threads'); the first race fails the test.
  meson setup build-tsan -Db_sanitize=thread -Doptimization=1 -Ddebug=true -Dcpp_args=-g1 \
    "${unity[@]}" >/dev/null 2>&1 || meson setup --reconfigure build-tsan "${unity[@]}" >/dev/null
  ninja -C build-tsan -j "$jobs" tests/thread_tests
  TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" meson test -C build-tsan --no-rebuild --print-errorlogs \
    --num-processes 1 --timeout-multiplier 4 threads
  logs+=(build-tsan/meson-logs/testlog.json)
fi
# One closing line for CI: meson test programs run in both builds (unit test
# cases are counted inside the 'unit' executable).
python3 - "${logs[@]}" <<'PY'
import json, sys
passed = failed = skipped = 0
for log in sys.argv[1:]:
    for line in open(log):
        r = json.loads(line).get("result")
        if r == "OK": passed += 1
        elif r == "SKIP": skipped += 1
        else: failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY

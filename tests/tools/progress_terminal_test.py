#!/usr/bin/env python3
"""ledger-ingest's progress on a terminal (tools/progress.h), through a pseudo-terminal.

usage: tests/tools/progress_terminal_test.py LEDGER_INGEST
With stderr on a terminal, `--from -` that runs past a second shows the records
committed so far; with --quiet, or stderr not a terminal, no progress line.
"""
import json
import os
import pty
import subprocess
import sys
import tempfile
import time


def event(i):
    return json.dumps({"type": "ADDED", "time": "2026-11-01T00:00:%02dZ" % i, "object": {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "a", "name": "c%d" % i, "uid": "u%d" % i,
                     "resourceVersion": str(i + 1)}}}) + "\n"


def ingest(program, ledger, extra, terminal):
    """Feeds three events, waits past the bar's first second, feeds three
    more; returns what stderr showed and the exit code."""
    if terminal:
        reader, writer = pty.openpty()
    else:
        reader, writer = os.pipe()
    proc = subprocess.Popen([program, "--ledger", ledger, "--from", "-", "--batch", "1", "--no-sync"]
                            + extra, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=writer)
    os.close(writer)
    for i in range(3):
        proc.stdin.write(event(i).encode())
    proc.stdin.flush()
    time.sleep(1.3)
    for i in range(3, 6):
        proc.stdin.write(event(i).encode())
        proc.stdin.flush()
        time.sleep(0.15)
    proc.stdin.close()
    out = b""
    while True:
        try:
            chunk = os.read(reader, 4096)
        except OSError:  # the pty's EIO once the writer is gone
            break
        if not chunk:
            break
        out += chunk
    os.close(reader)
    return out.decode(errors="replace"), proc.wait(timeout=30)


def main():
    program = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        shown, code = ingest(program, os.path.join(tmp, "a"), [], True)
        if code != 0 or "\ringest " not in shown or " records (" not in shown:
            failures.append(f"terminal: no progress line (exit {code}): {shown!r}")
        if "\r\033[K" not in shown:
            failures.append(f"terminal: the progress line is not erased at the end: {shown!r}")
        quiet, code = ingest(program, os.path.join(tmp, "b"), ["--quiet"], True)
        if code != 0 or "\r" in quiet:
            failures.append(f"--quiet: a progress line (exit {code}): {quiet!r}")
        piped, code = ingest(program, os.path.join(tmp, "c"), [], False)
        if code != 0 or "\r" in piped:
            failures.append(f"stderr not a terminal: a progress line (exit {code}): {piped!r}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Progress on a terminal (tools/progress.h), through a pseudo-terminal.

usage: tests/tools/progress_terminal_test.py LEDGER_INGEST LEDGER_REPLAY LEDGER_GEN
With stderr on a terminal, `ledger-ingest --from -` that runs past a second
shows the records committed so far, and the checkpoints it writes after;
`ledger-replay rebuild-projection`,
`ledger-replay checkpoint`, `ledger-replay archive` and `ledger-gen` show
their bar (the second's wait
shortened by LEDGER_PROGRESS_AFTER_MS=0, so a small ledger will do); with
--quiet, or stderr not a terminal, no progress line, and the same stdout.
"""
import datetime
import json
import os
import pty
import select
import subprocess
import sys
import tempfile
import time


def event(i):
    return json.dumps({"type": "ADDED", "time": "2026-11-01T00:%02d:%02dZ" % (i // 60, i % 60), "object": {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "a", "name": "c%d" % i, "uid": "u%d" % i,
                     "resourceVersion": str(i + 1)}}}) + "\n"


def drain(reader, timeout):
    """What the reader has within timeout seconds (b"" if nothing, None at
    its end)."""
    ready, _, _ = select.select([reader], [], [], timeout)
    if not ready:
        return b""
    try:
        chunk = os.read(reader, 4096)
    except OSError:  # the pty's EIO once the writer is gone
        return None
    return chunk or None


def ingest(program, ledger, extra, terminal):
    """Feeds three events, then one more every 0.2 s until the progress
    line shows (on a slow build the second it waits for can start late) or
    40 events are in; returns what stderr showed and the exit code."""
    if terminal:
        reader, writer = pty.openpty()
    else:
        reader, writer = os.pipe()
    proc = subprocess.Popen([program, "--ledger", ledger, "--from", "-", "--batch", "1", "--no-sync"]
                            + extra, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=writer)
    os.close(writer)
    out = b""
    for i in range(40):
        proc.stdin.write(event(i).encode())
        proc.stdin.flush()
        chunk = drain(reader, 0.2 if i >= 2 else 0)
        if chunk:
            out += chunk
        # Off a terminal or with --quiet no line ever shows: feed a second
        # and a half's worth, past the point where it would.
        if b"\ringest " in out or (not terminal or extra) and i >= 9:
            break
    proc.stdin.close()
    while True:
        chunk = drain(reader, 30)
        if not chunk:
            break
        out += chunk
    os.close(reader)
    return out.decode(errors="replace"), proc.wait(timeout=30)


def on_terminal(args, terminal):
    """Runs a program to its end with stderr on a pseudo-terminal (or a
    pipe); returns (stderr as shown, stdout, exit code)."""
    reader, writer = pty.openpty() if terminal else os.pipe()
    env = dict(os.environ, LEDGER_PROGRESS_AFTER_MS="0")
    # stdout to a file: a pipe no one reads until the end would fill.
    stdout_file = tempfile.TemporaryFile()
    proc = subprocess.Popen(args, stdout=stdout_file, stderr=writer, env=env)
    os.close(writer)
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
    code = proc.wait(timeout=120)
    stdout_file.seek(0)
    return out.decode(errors="replace"), stdout_file.read(), code


def bars(replay, gen, tmp, failures):
    """ledger-ingest's checkpoints, rebuild-projection, checkpoint and
    ledger-gen: a bar on a terminal, erased; none with --quiet or off a
    terminal; stdout the same."""
    ledger = os.path.join(tmp, "bars")
    stream = os.path.join(tmp, "bars.jsonl")
    with open(stream, "w") as f:
        f.writelines(event(i) for i in range(40))
    code = subprocess.run([sys.argv[1], "--ledger", ledger, "--from", stream, "--quiet"],
                          capture_output=True).returncode
    if code != 0:
        failures.append(f"ingest for the bars: exit {code}")
    # Each run of ledger-ingest gets a ledger of its own (`run`), so that
    # each records the events and writes the checkpoints anew.
    cases = [("checkpoint", lambda run: [sys.argv[1], "--ledger", os.path.join(tmp, "ingest-" + run),
                                         "--from", stream, "--checkpoint-every", "10"]),
             ("rebuild-projection", lambda run: [replay, "--ledger", ledger, "rebuild-projection"]),
             ("checkpoint", lambda run: [replay, "--ledger", ledger, "checkpoint", "--every", "10",
                                         "--rewrite"]),
             ("ledger-gen", lambda run: [gen, "--events", "300", "--nodes", "1", "--queues", "1"])]
    for label, args in cases:
        shown, stdout, code = on_terminal(args("terminal"), True)
        if code != 0 or "\r" + label + " [" not in shown or "\r\033[K" not in shown:
            failures.append(f"{args('')[0]} {label} on a terminal: no bar, or not erased "
                            f"(exit {code}): {shown!r}")
        quiet, quiet_out, code = on_terminal(args("quiet") + ["--quiet"], True)
        if code != 0 or "\r" in quiet or quiet_out != stdout:
            failures.append(f"{label} --quiet: a bar, or other output (exit {code}): {quiet!r}")
        piped, piped_out, code = on_terminal(args("piped"), False)
        if code != 0 or "\r" in piped or piped_out != stdout:
            failures.append(f"{label} off a terminal: a bar, or other output (exit {code}): {piped!r}")


def hourly_event(i):
    """A ConfigMap event in hour i of 2026-11-01..: archive cuts before the
    last whole hour the usage rollups cover, so the records span hours."""
    stamp = (datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
             + datetime.timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return event(i).replace("2026-11-01T00:00:%02dZ" % i, stamp)


def archive_bars(ingest_program, replay, tmp, failures):
    """`ledger-replay archive`: its bars on a terminal (the copy's among
    them), erased; none with --quiet or off a terminal; stdout the same but
    for the archive's directory. Each run cuts a ledger of its own."""
    stream = os.path.join(tmp, "hours.jsonl")
    with open(stream, "w") as f:
        f.writelines(hourly_event(i) for i in range(30))
    outputs = {}
    for run, terminal, extra in [("terminal", True, []), ("quiet", True, ["--quiet"]),
                                 ("piped", False, [])]:
        ledger = os.path.join(tmp, "cut-" + run)
        code = subprocess.run([ingest_program, "--ledger", ledger, "--from", stream, "--quiet"],
                              capture_output=True).returncode
        if code != 0:
            failures.append(f"ingest for archive ({run}): exit {code}")
        to = os.path.join(tmp, "archive-" + run)
        shown, stdout, code = on_terminal(
            [replay, "--ledger", ledger, "archive", "--before", "2026-11-01T20:00:00Z", "--to", to,
             "--every", "5"] + extra, terminal)
        outputs[run] = stdout.decode().replace(to, "DIR")
        if code != 0 or "archived records 1..20 " not in outputs[run]:
            failures.append(f"archive ({run}): exit {code}, stdout {outputs[run]!r}")
        if run == "terminal":
            for label in ("archive", "fold to the cut", "checkpoint"):
                if "\r" + label + " [" not in shown:
                    failures.append(f"archive on a terminal: no {label!r} bar: {shown!r}")
            if shown.count("\r\033[K") < 3:
                failures.append(f"archive on a terminal: the bars are not erased: {shown!r}")
        elif "\r" in shown:
            failures.append(f"archive ({run}): a bar: {shown!r}")
    if outputs["quiet"] != outputs["terminal"] or outputs["piped"] != outputs["terminal"]:
        failures.append(f"archive: stdout differs between runs: {outputs!r}")


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
        bars(sys.argv[2], sys.argv[3], tmp, failures)
        archive_bars(program, sys.argv[2], tmp, failures)
    for f in failures:
        print("FAIL", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Two builds of ledger-ingest on the same stream, in alternating pairs.

    python3 tools/bench/ingest_ab.py STREAM A_INGEST B_INGEST [--pairs 4] [--batch 5000]

Each run ingests STREAM into a new ledger (--no-sync, --checkpoint-every 0),
after the previous run's ledger is deleted and `sync` has written back what
it left dirty. One untimed pair comes first. Per run it reports wall time,
CPU (user + system, all threads), peak RSS, and the CPU of the two busiest
threads: `ledger-ingest --from` reads and parses on one thread and records
and commits on the other (ingest/stream_ingest.h). The reader's work is the
same in every build, so writer / reader cancels the machine's drift between
runs and isolates what a build changes on the writing side.

At the end: the medians, and the paired ratio B wall / A wall (above 1: A is
faster). Per-thread CPU comes from /proc/PID/task/*/stat, sampled every
0.1 s until the process exits (Linux only).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TICKS = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid):
    """CPU seconds per thread id of a live process ({} once it is gone)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[tid] = (int(fields[11]) + int(fields[12])) / TICKS
    return out


def run_once(binary, stream, ledger, batch, log):
    """One ingest into a new ledger: wall, CPU and peak RSS of the process,
    and the CPU seconds of its threads, busiest first."""
    shutil.rmtree(ledger, ignore_errors=True)
    subprocess.run(["sync"], check=True)
    time.sleep(1)
    cmd = [binary, "--from", stream, "--ledger", ledger, "--no-sync", "--batch", str(batch),
           "--checkpoint-every", "0"]
    start = time.monotonic()
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    last = {}
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        last.update(thread_cpu(proc.pid))
        time.sleep(0.1)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # reaped here, not by Popen
    if code != 0:
        with open(log, errors="replace") as f:
            sys.exit(f"{' '.join(cmd)} exited {code}:\n{f.read()[-4000:]}")
    threads = sorted(last.values(), reverse=True) + [0.0, 0.0]
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "first": threads[0],
        "second": threads[1],
        "quotient": threads[0] / threads[1] if threads[1] else float("nan"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stream")
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--workdir", default=None, help="where the ledgers go (default: a temp dir)")
    args = parser.parse_args()

    work = args.workdir or tempfile.mkdtemp(prefix="ingest-ab-")
    os.makedirs(work, exist_ok=True)
    results = {"A": [], "B": []}
    try:
        for i in range(args.pairs + 1):
            for name, binary in (("A", args.a), ("B", args.b)):
                r = run_once(binary, args.stream, os.path.join(work, "ledger"), args.batch,
                             os.path.join(work, "stderr.log"))
                label = "untimed" if i == 0 else f"pair {i}"
                print(f"{label} {name}: wall {r['wall']:.2f} s, cpu {r['cpu']:.2f} s, "
                      f"peak RSS {r['rss_mb']:.0f} MB, "
                      f"busiest threads {r['first']:.2f} / {r['second']:.2f} s "
                      f"(quotient {r['quotient']:.3f})",
                      flush=True)
                if i > 0:
                    results[name].append(r)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)

    def med(name, key):
        return statistics.median(r[key] for r in results[name])

    for name in ("A", "B"):
        walls = [r["wall"] for r in results[name]]
        quotients = [r["quotient"] for r in results[name]]
        print(f"{name}: wall median {med(name, 'wall'):.2f} s ({min(walls):.2f}-{max(walls):.2f}), "
              f"cpu median {med(name, 'cpu'):.2f} s, peak RSS median {med(name, 'rss_mb'):.0f} MB, "
              f"busiest / second thread {med(name, 'quotient'):.3f} "
              f"({min(quotients):.3f}-{max(quotients):.3f})")
    ratios = [b["wall"] / a["wall"] for a, b in zip(results["A"], results["B"])]
    print(f"B wall / A wall, per pair: {', '.join(f'{x:.3f}' for x in ratios)}; "
          f"median {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()

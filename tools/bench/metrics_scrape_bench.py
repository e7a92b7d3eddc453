#!/usr/bin/env python3
"""The --watch daemon's first /metrics scrape against later ones, at thousands of
ClusterQueues (docs/performance.md, "The first scrape").

usage: tools/bench/metrics_scrape_bench.py BUILD_DIR [--queues 3000]
           [--cohort-sizes 4,3000] [--events 40000] [--runs 5]

For each cohort size: generates a stream with the build's ledger-gen (that many
ClusterQueues, in cohorts of that size), ingests it with its ledger-ingest,
and runs `ledger-bench --ledger DIR --metrics-scrape`, which restores the live
state as the daemon does and times the first scrape, later scrapes of the
same state, and a scrape after a change. Prints one markdown row per cohort
size. Python standard library only; scratch files under $TMPDIR, removed after.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--queues", type=int, default=3000)
    ap.add_argument("--cohort-sizes", default="4,3000")
    ap.add_argument("--events", type=int, default=40000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tool = lambda name: os.path.join(args.build, "tools", name)
    bench = os.path.join(args.build, "tools", "bench", "ledger-bench")
    tmp = tempfile.mkdtemp(prefix="metrics-scrape-")
    try:
        header_printed = False
        for size in [int(s) for s in args.cohort_sizes.split(",")]:
            events = os.path.join(tmp, "events-%d.jsonl" % size)
            ledger = os.path.join(tmp, "ledger-%d" % size)
            with open(events, "w") as out:
                subprocess.run([tool("ledger-gen"), "--queues", str(args.queues), "--cohort-size",
                                str(size), "--events", str(args.events)], stdout=out, check=True)
            subprocess.run([tool("ledger-ingest"), "--ledger", ledger, "--from", events],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            table = subprocess.run([bench, "--ledger", ledger, "--metrics-scrape", "--runs",
                                    str(args.runs)], capture_output=True, text=True, check=True)
            # The live state logs its restore on stdout: the table's rows only.
            rows = [r for r in table.stdout.splitlines() if r.startswith("|")]
            if not header_printed:
                print("| cohort size " + rows[0])
                print("|---" + rows[1])
                header_printed = True
            print("| %d " % size + rows[2])
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

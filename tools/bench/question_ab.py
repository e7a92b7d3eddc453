#!/usr/bin/env python3
"""Two builds of ledger-query asked the same questions, in alternating pairs.

    python3 tools/bench/question_ab.py LEDGER A_LEDGER_QUERY B_LEDGER_QUERY [--runs 21]

The questions are ledger-bench's end-to-end ones (tools/bench/end_to_end.cpp),
at moments taken from the ledger itself: `state --at T` and `usage --at T` at
halfway through the history, `report` over the whole history and over the day
up to halfway, and `workload NS/NAME` for the first workload alive halfway;
then `--version`, which opens no ledger (what starting the program costs).
Each run is a process of its own, timed from its start to its exit, output
discarded; A and B take turns, one untimed pair first. The answers of A and B
are compared byte for byte before any timing: a speed-up that changed an
answer is no speed-up. With --superset (A adds fields to B's answers, as a
build with new report columns does), A's JSON answer must hold every field of
B's with B's value instead; --only NAME,... asks only those questions
(`report`, `series`: `usage --step 1h` over the day up to halfway, `series on
the hour`: from the first whole hour to the last, as ledger-bench asks).
--b-ledger DIR gives B its own copy of the ledger (the same records, derived
data as B's build writes it: B's answers are asked of DIR).

Prints per question the median wall time of each build (min-max) and the
median of the pairs' ratios A / B (below 1: A is faster).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_time(text):
    return datetime.strptime(text.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z") \
        if "." in text else datetime.strptime(text.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S%z")


def on_hour(t):
    return t.replace(minute=0, second=0, microsecond=0)


def answer(binary, args):
    return subprocess.run([binary] + args, check=True, capture_output=True).stdout


def questions(binary, ledger):
    at = lambda seq: json.loads(answer(binary, ["state", "--seq", str(seq), "--ledger", ledger,
                                                "-o", "json"]))
    first_state = at(1)
    try:
        last_state = at(2**63)
    except subprocess.CalledProcessError:  # a build that refuses a seq past the end
        last_state = json.loads(answer(binary, ["state", "--at", "end", "--ledger", ledger,
                                                "-o", "json"]))
    first = parse_time(first_state["at"]["time"])
    last = parse_time(last_state["at"]["time"])
    middle = first + (last - first) / 2
    mid_state = json.loads(answer(binary, ["state", "--at", rfc3339(middle), "--ledger", ledger,
                                           "-o", "json"]))
    alive = sorted(f"{w['namespace']}/{w['name']}" for w in mid_state["workloads"])
    out = [
        ("state --at T", ["state", "--at", rfc3339(middle), "-o", "json"]),
        ("usage --at T", ["usage", "--at", rfc3339(middle), "-o", "json"]),
        ("report, whole history", ["report", "--from", rfc3339(first), "--to", rfc3339(last),
                                   "-o", "json"]),
        ("report, a day", ["report", "--from", rfc3339(max(first, middle - timedelta(days=1))),
                           "--to", rfc3339(middle), "-o", "json"]),
        ("series", ["usage", "--from", rfc3339(max(first, middle - timedelta(days=1))),
                    "--to", rfc3339(middle), "--step", "1h", "-o", "json"]),
        ("series on the hour", ["usage", "--from", rfc3339(on_hour(first) + timedelta(hours=1)),
                                "--to", rfc3339(on_hour(last)), "--step", "1h", "-o", "json"]),
    ]
    if alive:
        out.append(("workload NS/NAME", ["workload", alive[0], "-o", "json"]))
    out = [(name, args + ["--ledger", ledger]) for name, args in out]
    out.append(("--version", ["--version"]))
    return out


def holds(a, b):
    """Whether JSON value a holds b: every field of b, with b's value."""
    if isinstance(b, dict):
        return isinstance(a, dict) and all(k in a and holds(a[k], v) for k, v in b.items())
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(map(holds, a, b))
    return a == b


def timed(binary, args):
    start = time.monotonic()
    subprocess.run([binary] + args, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("ledger")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--runs", type=int, default=21)
    p.add_argument("--superset", action="store_true")
    p.add_argument("--only", default="")
    p.add_argument("--b-ledger", default="")
    o = p.parse_args()
    qs = questions(o.a, o.ledger)
    if o.only:
        wanted = o.only.split(",")
        qs = [(n, a) for n, a in qs if any(n.startswith(w) for w in wanted)]
    b_args = lambda args: [o.b_ledger if o.b_ledger and x == o.ledger else x for x in args]
    for name, args in qs:
        if name == "--version":
            continue
        a, b = answer(o.a, args), answer(o.b, b_args(args))
        same = holds(json.loads(a), json.loads(b)) if o.superset else a == b
        if not same:
            print(f"{name}: the two builds answer differently", file=sys.stderr)
            return 1
    print(f"| question | A, median ms (min-max) | B, median ms (min-max) | A / B, median of {o.runs} pairs |")
    print("|---|---|---|---|")
    for name, args in qs:
        timed(o.a, args), timed(o.b, b_args(args))  # untimed pair: the page cache
        a, b = [], []
        for _ in range(o.runs):
            a.append(timed(o.a, args))
            b.append(timed(o.b, b_args(args)))
        ratio = statistics.median(x / y for x, y in zip(a, b))
        ms = lambda v: f"{statistics.median(v) * 1000:.1f} ({min(v) * 1000:.1f}-{max(v) * 1000:.1f})"
        print(f"| `{name}` | {ms(a)} | {ms(b)} | {ratio:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The fleet consumer's throughput with signatures against without, in one run.

Two single-node NATS JetStreams on loopback hold the same clusters' records:
one published unsigned, one published with each cluster's key
(`ledger-replay keygen`, `publish --signing-key`). Publishing is over before
any timing starts, so only the consumer is measured. Then, --rounds times,
alternating: the fleet consumer (`ledger-ingest --from-nats ... --no-sync
--checkpoint-every 0 --listen PORT`) on a fresh fleet directory and a fresh
durable, with `--allow-unsigned` on the unsigned stream and `--trusted-keys`
on the signed one; the clock runs from its start until every copy's
ledger_fleet_seq (its /metrics, polled every 50 ms) equals its source's last
seq. Reported: the median records/s of each, and signed over unsigned.
Every copy's head is checked against its source's.

    python3 tools/bench/fleet_signed_bench.py [--records-total 64000] [--clusters 4] [--rounds 3]

Options: --build DIR (default build/ beside this tree), --records-total N
(split over the clusters), --clusters C, --rounds R, --seed N, --json.
Stdlib only. Exit 0 ok, 1 failure, 77 without nats-server.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import fleet_bench  # noqa: E402
from fleet_bench import BenchError, fleet_seqs, log, nats_cluster, run, tail  # noqa: E402


def consumer_rate(bench, urls, fleet, trust, counts, where, tag):
    port = nats_cluster.free_ports(1)[0]
    cmd = [bench.ingest, "--from-nats", urls, "--fleet", fleet, "--no-sync", "--checkpoint-every",
           "0", "--listen", f"127.0.0.1:{port}", "--durable", tag, *trust]
    t0 = time.monotonic()
    p = bench.procs.spawn(cmd, os.path.join(where, f"{tag}.err"))
    try:
        while True:
            time.sleep(fleet_bench.THROUGHPUT_POLL)
            seqs = fleet_seqs(port) or {}
            if all(seqs.get(n, 0) >= c for n, c in counts.items()):
                seconds = time.monotonic() - t0
                break
            if p.poll() is not None:
                raise BenchError(f"consumer {tag} exited {p.returncode}:\n{tail(p.stderr_path)}")
            if time.monotonic() - t0 > 600:
                raise BenchError(f"consumer {tag} not caught up in 600 s: {seqs}")
    finally:
        bench.procs.stop(p)
    return sum(counts.values()) / seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(fleet_bench.SRC_ROOT, "build"))
    ap.add_argument("--records-total", type=int, default=64000)
    ap.add_argument("--clusters", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not shutil.which("nats-server"):
        log("nats-server not found: skipped")
        return 77
    args.nodes, args.keep, args.verify_sample = 1, False, 0
    work = tempfile.mkdtemp(prefix="fleet-signed-bench-")
    bench = fleet_bench.Bench(args, work)
    servers = []
    try:
        names = [f"c{i + 1}" for i in range(args.clusters)]
        per = args.records_total // args.clusters
        sources, counts, keys = {}, {}, os.path.join(work, "keys")
        os.makedirs(keys)
        for i, name in enumerate(names):
            events = os.path.join(work, f"{name}.jsonl")
            bench.generate(events, per, args.seed + i)
            sources[name] = os.path.join(work, "src", name)
            out, _ = run([bench.ingest, "--ledger", sources[name], "--from", events, "--no-sync",
                          "--checkpoint-every", "0", "-o", "json"])
            counts[name] = json.loads(out)["lastSeq"]
            os.remove(events)
            run([bench.replay, "keygen", "--out", os.path.join(work, name + ".key")])
            shutil.copy(os.path.join(work, name + ".key.pub"), os.path.join(keys, name + ".pub"))
        streams = {}
        for kind in ("unsigned", "signed"):
            server = nats_cluster.NatsCluster(os.path.join(work, "nats-" + kind), nodes=1)
            servers.append(server)
            streams[kind] = server.urls()
            t = time.monotonic()
            for name in names:
                sign = ["--signing-key", os.path.join(work, name + ".key")] if kind == "signed" else []
                run([bench.replay, "--ledger", sources[name], "publish", "--to", streams[kind],
                     "--cluster-name", name, *sign])
            log(f"    published {sum(counts.values())} records {kind} in {time.monotonic() - t:.1f}s")
        trust = {"unsigned": ["--allow-unsigned"], "signed": ["--trusted-keys", keys]}
        rates = {"unsigned": [], "signed": []}
        for r in range(args.rounds):
            for kind in ("unsigned", "signed"):
                fleet = os.path.join(work, f"fleet-{kind}-{r}")
                rate = consumer_rate(bench, streams[kind], fleet, trust[kind], counts, work, f"{kind}{r}")
                rates[kind].append(rate)
                log(f"    round {r + 1}: {kind}: {rate:,.0f} records/s")
                bench.compare_heads(sources, fleet)
                shutil.rmtree(fleet, ignore_errors=True)
        result = {"records": sum(counts.values()), "clusters": args.clusters,
                  "unsignedRecordsPerSecond": round(statistics.median(rates["unsigned"]), 1),
                  "signedRecordsPerSecond": round(statistics.median(rates["signed"]), 1),
                  "rounds": rates}
        result["ratio"] = round(result["signedRecordsPerSecond"] / result["unsignedRecordsPerSecond"], 4)
        log(f"consumer, median of {args.rounds}: unsigned {result['unsignedRecordsPerSecond']:,.0f} "
            f"records/s, signed {result['signedRecordsPerSecond']:,.0f} records/s, "
            f"ratio {result['ratio']:.3f}")
        if args.json:
            print(json.dumps(result))
        return 0
    except BenchError as e:
        log(f"FAIL: {e}")
        return 1
    finally:
        bench.procs.stop_all()
        for server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

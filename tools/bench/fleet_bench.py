#!/usr/bin/env python3
"""Fleet benchmark: what shipping ledgers through NATS JetStream costs.

Measures two things, with the built binaries (ledger-gen, ledger-ingest,
ledger-replay) and a throwaway NATS JetStream (tests/fleet/nats_cluster.py:
one standalone node, or a 3-node cluster with --nodes 3):

1. Throughput, for each cluster count C in --clusters (default 1,4,16), with
   the same TOTAL number of records (--records-total, default 64000, split
   evenly over the C clusters, cluster i generated with its own seed):
   - local: `ledger-ingest --from FILE --no-sync --checkpoint-every 0` of each
     cluster's events into a fresh ledger, one after another; the sum of the
     wall times gives the local records/s. These ledgers are the sources.
   - fleet: on a fresh NATS, the fleet consumer (`ledger-ingest --from-nats
     --fleet DIR --no-sync --checkpoint-every 0 --listen PORT --allow-unsigned`;
     signed against unsigned is tools/bench/fleet_signed_bench.py) runs; the C
     `ledger-replay publish` processes start at once; the clock runs from
     their start until every copy's ledger_fleet_seq (its /metrics, polled
     every 50 ms) equals its source's record count: fleet records/s end to
     end. "publish" is the time until every publisher exited (JetStream
     acknowledged everything). ratio = fleet records/s / local records/s.
   - check: every copy's head (lastSeq, lastHash from `ledger-replay verify`)
     equals its source's; a mismatch is an error (exit 1).

2. Lag at a steady rate, for each C in --lag-clusters (default 1,4): C
   sidecars `ledger-ingest --ledger SRC --from - --no-sync --batch 100
   --checkpoint-every 0 --publish URL --cluster-name cN` are fed through
   stdin pipes at --rate events/s each (a pacer writes what is due every
   10 ms, noting the time each line k was written) for --lag-seconds; the
   fleet consumer runs meanwhile and its /metrics is polled every 20 ms. The
   end-to-end lag of event k (record seq k) is the arrival time of the first
   poll whose ledger_fleet_seq{cluster} >= k minus the time line k was
   written. Reported: p50, p99 and max over all events written after the
   first second (warm-up), and the rate the pacer actually achieved. Note
   that --batch 100 makes a sidecar commit (and so publish) only every 100
   events: at 1000 events/s that alone adds up to 100 ms.

Usage (stdlib only; from the source tree, after building):

    python3 tools/bench/fleet_bench.py                    # full run, defaults
    python3 tools/bench/fleet_bench.py --nodes 3          # 3-node NATS, replicas 3
    python3 tools/bench/fleet_bench.py --records-total 8000 --clusters 1,4 \\
        --lag-seconds 5 --lag-clusters 1                  # a quick run

Options: --build DIR (default build/ beside this tree; binaries in DIR/tools),
--records-total N, --clusters LIST (empty: skip part 1), --nodes 1|3,
--lag-seconds S, --lag-clusters LIST (empty: skip part 2), --rate EVENTS/S
(per cluster), --seed N (cluster i gets seed N+i), --verify-sample K (compare
the heads of only K clusters per run; default all), --keep (keep the temp
dir, printed), --json (stdout is one JSON object; the table goes to stderr).
Progress goes to stderr. Every process it starts is ended and its temp dir
(under $TMPDIR) removed at the end, also on failure or SIGINT/SIGTERM; a
finished run's directory is removed right away (events are ~6 KB each: the
default sizes need about 1 GB of disk at peak), unless --keep.

Timing notes: the fleet time has the 50 ms poll granularity (small
--records-total exaggerate it); the local time includes each ledger-ingest's
process start, as the fleet time includes each publisher's. Run it on an
otherwise idle machine: everything (NATS, publishers, consumer) shares it.
Exit 0 ok, 1 failure (a mismatch, a process failing, a timeout), 77 when
nats-server is missing.
"""
import argparse
import array
import bisect
import json
import math
import mmap
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(SRC_ROOT, "tests", "fleet"))
import nats_cluster  # noqa: E402

THROUGHPUT_POLL = 0.050  # s between /metrics polls while timing throughput
LAG_POLL = 0.020  # s between /metrics polls while measuring lag
PACE_SLICE = 0.010  # s between the pacer's writes
WARMUP = 1.0  # s of events left out of the lag percentiles
SEQ_LINE = re.compile(r'^ledger_fleet_seq\{cluster="([^"]+)"\}\s+(\S+)', re.M)


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# -- processes ---------------------------------------------------------------

class Procs:
    """Every process started, so a finally block can end them all."""

    def __init__(self):
        self.procs = []
        self.lock = threading.Lock()

    def spawn(self, cmd, stderr_path, stdin=subprocess.DEVNULL, stdout_path=None):
        err = open(stderr_path, "wb")
        out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
        try:
            p = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=err, bufsize=0)
        finally:
            err.close()
            if stdout_path:
                out.close()
        p.stderr_path = stderr_path
        with self.lock:
            self.procs.append(p)
        return p

    def stop(self, p, timeout=15.0):
        """SIGTERM, then SIGKILL after timeout; returns the exit code."""
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)
            except OSError:
                pass
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return p.returncode

    def stop_all(self):
        with self.lock:
            procs = list(self.procs)
        for p in procs:
            if p.stdin is not None:
                try:
                    p.stdin.close()
                except OSError:
                    pass
            if p.poll() is None:
                try:
                    p.kill()
                except OSError:
                    pass
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass


def tail(path, n=2000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return "(none)"


def run(cmd, timeout=600):
    """(stdout, seconds) of cmd; BenchError unless it exits 0."""
    t = time.monotonic()
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchError(f"timed out after {timeout}s: {' '.join(cmd)}")
    elapsed = time.monotonic() - t
    if r.returncode != 0:
        raise BenchError(f"exit {r.returncode}: {' '.join(cmd)}\n"
                         f"{r.stderr.decode(errors='replace')[-2000:]}")
    return r.stdout.decode(errors="replace"), elapsed


def write_all(f, data):
    view = memoryview(data)
    while view:
        n = f.write(view)
        view = view[n:]


def http_get(port, path, timeout=2.0):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, ""
    except (urllib.error.URLError, OSError):
        return None, ""


def fleet_seqs(port):
    """{cluster: seq} from the consumer's /metrics, or None if it did not answer."""
    status, body = http_get(port, "/metrics")
    if status != 200:
        return None
    return {m.group(1): int(float(m.group(2))) for m in SEQ_LINE.finditer(body)}


# -- the bench -----------------------------------------------------------------

class Bench:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        tools = os.path.join(os.path.abspath(args.build), "tools")
        self.gen = self._binary(tools, "ledger-gen")
        self.ingest = self._binary(tools, "ledger-ingest")
        self.replay = self._binary(tools, "ledger-replay")
        self.replicas = 3 if args.nodes == 3 else 1
        self.procs = Procs()

    @staticmethod
    def _binary(tools, name):
        path = os.path.join(tools, name)
        if not os.access(path, os.X_OK):
            raise BenchError(f"{name} not found at {path} (build first, or pass --build DIR)")
        return path

    # -- shared pieces --

    def done_with(self, run_dir):
        """Removes a finished run's directory (disk: ~6 KB per event), unless --keep."""
        if not self.args.keep:
            shutil.rmtree(os.path.join(self.work, run_dir), ignore_errors=True)

    def generate(self, path, events, seed):
        with open(path, "wb") as f:
            r = subprocess.run([self.gen, "--events", str(events), "--seed", str(seed)],
                               stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise BenchError(f"ledger-gen exited {r.returncode}: {r.stderr.decode(errors='replace')}")

    def start_nats(self, where):
        t = time.monotonic()
        cluster = nats_cluster.NatsCluster(where, nodes=self.args.nodes)
        log(f"    NATS ({self.args.nodes} node{'s' if self.args.nodes > 1 else ''}) ready in "
            f"{time.monotonic() - t:.1f}s")
        return cluster

    def start_consumer(self, urls, fleet, where):
        port = nats_cluster.free_ports(1)[0]
        cmd = [self.ingest, "--from-nats", urls, "--fleet", fleet, "--no-sync",
               "--checkpoint-every", "0", "--listen", f"127.0.0.1:{port}",
               "--stream-replicas", str(self.replicas), "--allow-unsigned"]
        p = self.procs.spawn(cmd, os.path.join(where, "consumer.err"),
                             stdout_path=os.path.join(where, "consumer.out"))
        deadline = time.monotonic() + 30
        while True:
            if p.poll() is not None:
                raise BenchError(f"fleet consumer exited {p.returncode} at start:\n{tail(p.stderr_path)}")
            # Ready once its first fetch from the stream came back (/readyz is about
            # --watch's resources, never 200 here).
            status, body = http_get(port, "/metrics")
            if status == 200 and re.search(r"^ledger_fleet_caught_up\s+1", body, re.M):
                return p, port
            if time.monotonic() > deadline:
                raise BenchError(f"fleet consumer not caught up in 30s (/metrics {status}):\n"
                                 f"{tail(p.stderr_path)}")
            time.sleep(0.05)

    def stop_consumer(self, p):
        rc = self.procs.stop(p)
        if rc not in (0, -signal.SIGTERM):
            raise BenchError(f"fleet consumer exited {rc} on SIGTERM:\n{tail(p.stderr_path)}")

    def head(self, ledger):
        out, _ = run([self.replay, "--ledger", ledger, "verify", "-o", "json"])
        v = json.loads(out)
        if v.get("ok") is not True:
            raise BenchError(f"verify {ledger}: not ok: {out[:2000]}")
        return v["lastSeq"], v["lastHash"]

    def compare_heads(self, sources, fleet):
        """sources: {cluster: dir}; checks (lastSeq, lastHash) of each copy; returns the count."""
        names = sorted(sources)
        if self.args.verify_sample and len(names) > self.args.verify_sample:
            k = self.args.verify_sample
            names = [names[i * (len(names) - 1) // max(1, k - 1)] for i in range(k)]
        for name in names:
            src = self.head(sources[name])
            copy = self.head(os.path.join(fleet, name))
            if src != copy:
                raise BenchError(f"{name}: fleet copy at seq {copy[0]} {copy[1][:16]}…, "
                                 f"source at seq {src[0]} {src[1][:16]}…")
        return len(names), len(sources)

    # -- 1. throughput --

    def throughput(self, clusters):
        a = self.args
        where = os.path.join(self.work, f"throughput-{clusters}")
        os.makedirs(where)
        names = [f"c{i + 1}" for i in range(clusters)]
        per = [a.records_total // clusters + (1 if i < a.records_total % clusters else 0)
               for i in range(clusters)]
        log(f"== throughput, {clusters} cluster(s), {a.records_total} records "
            f"({per[0]}{'' if len(set(per)) == 1 else '/' + str(per[-1])} each)")
        files = {}
        for i, name in enumerate(names):
            files[name] = os.path.join(where, f"{name}.jsonl")
            self.generate(files[name], per[i], a.seed + i)

        # Local baseline: one after another, summed wall time.
        sources, counts, local_s = {}, {}, 0.0
        for name in names:
            sources[name] = os.path.join(where, "src", name)
            out, secs = run([self.ingest, "--ledger", sources[name], "--from", files[name],
                             "--no-sync", "--checkpoint-every", "0", "-o", "json"])
            local_s += secs
            summary = json.loads(out)
            counts[name] = summary["lastSeq"]
            if summary.get("recorded") != summary["lastSeq"]:
                log(f"    note: {name}: recorded {summary.get('recorded')}, lastSeq {summary['lastSeq']}")
        for path in files.values():  # hundreds of MB at full size; ledger-gen makes them again
            os.remove(path)
        records = sum(counts.values())
        local_rate = records / local_s
        log(f"    local: {records} records in {local_s:.2f}s = {local_rate:,.0f} records/s")

        cluster = self.start_nats(os.path.join(where, "nats"))
        try:
            urls = cluster.urls()
            fleet = os.path.join(where, "fleet")
            consumer, port = self.start_consumer(urls, fleet, where)
            exits = {}

            def waiter(name, p):
                p.wait()
                exits[name] = time.monotonic()

            t0 = time.monotonic()
            pubs = {}
            for name in names:
                pubs[name] = self.procs.spawn(
                    [self.replay, "--ledger", sources[name], "publish", "--to", urls,
                     "--cluster-name", name, "--stream-replicas", str(self.replicas)],
                    os.path.join(where, f"publish-{name}.err"))
            waiters = [threading.Thread(target=waiter, args=(n, p), daemon=True) for n, p in pubs.items()]
            for w in waiters:
                w.start()
            timeout = max(120.0, 20 * records / max(local_rate, 1.0))
            done_at = None
            seqs = {}
            while True:
                time.sleep(THROUGHPUT_POLL)
                got = fleet_seqs(port)
                now = time.monotonic()
                if got is not None:
                    seqs = got
                    if all(seqs.get(n, 0) >= counts[n] for n in names):
                        done_at = now
                        break
                for name, p in pubs.items():
                    if p.poll() is not None and p.returncode != 0:
                        raise BenchError(f"ledger-replay publish for {name} exited {p.returncode}:\n"
                                         f"{tail(p.stderr_path)}")
                if consumer.poll() is not None:
                    raise BenchError(f"fleet consumer exited {consumer.returncode}:\n{tail(consumer.stderr_path)}")
                if now - t0 > timeout:
                    raise BenchError(f"fleet not caught up after {timeout:.0f}s: copies at {seqs}, "
                                     f"sources at {counts}")
            for w in waiters:
                w.join(timeout)
            for name, p in pubs.items():
                if p.returncode != 0:
                    raise BenchError(f"ledger-replay publish for {name} exited {p.returncode}:\n"
                                     f"{tail(p.stderr_path)}")
            over = {n: s for n, s in seqs.items() if s != counts.get(n)}
            if over:
                raise BenchError(f"copies past or beside their sources: {over} (sources {counts})")
            fleet_s = done_at - t0
            publish_s = max(exits.values()) - t0
            self.stop_consumer(consumer)
        finally:
            cluster.stop()
        fleet_rate = records / fleet_s
        log(f"    fleet: {fleet_s:.2f}s end to end = {fleet_rate:,.0f} records/s "
            f"(publishers done in {publish_s:.2f}s)")
        checked, of = self.compare_heads(sources, fleet)
        log(f"    ok: heads equal (lastSeq, lastHash) for {checked} of {of} copies")
        return {
            "clusters": clusters, "records": records, "recordsPerCluster": per,
            "localSeconds": round(local_s, 4), "localRecordsPerSecond": round(local_rate, 1),
            "fleetSeconds": round(fleet_s, 4), "fleetRecordsPerSecond": round(fleet_rate, 1),
            "publishSeconds": round(publish_s, 4),
            "publishRecordsPerSecond": round(records / publish_s, 1),
            "ratio": round(fleet_rate / local_rate, 4),
            "headsChecked": checked, "headsEqual": True,
        }

    # -- 2. lag --

    def lag(self, clusters):
        a = self.args
        where = os.path.join(self.work, f"lag-{clusters}")
        os.makedirs(where)
        names = [f"c{i + 1}" for i in range(clusters)]
        per = int(a.rate * a.lag_seconds)
        log(f"== lag, {clusters} cluster(s) at {a.rate:g} events/s each for {a.lag_seconds:g}s")
        # Events are ~6 KB each: keep them in mapped files, with each line's offset.
        data, offsets, files = {}, {}, []
        for i, name in enumerate(names):
            path = os.path.join(where, f"{name}.jsonl")
            self.generate(path, per, a.seed + 100 + i)
            f = open(path, "rb")
            files.append(f)
            data[name] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            offs = array.array("q", [0])
            pos = data[name].find(b"\n")
            while pos >= 0:
                offs.append(pos + 1)
                pos = data[name].find(b"\n", pos + 1)
            offsets[name] = offs
            if len(offs) - 1 != per or offs[-1] != len(data[name]):
                raise BenchError(f"ledger-gen printed {len(offs) - 1} whole lines, not {per}")

        cluster = self.start_nats(os.path.join(where, "nats"))
        try:
            urls = cluster.urls()
            fleet = os.path.join(where, "fleet")
            consumer, port = self.start_consumer(urls, fleet, where)
            sidecars = {}
            for name in names:
                sidecars[name] = self.procs.spawn(
                    [self.ingest, "--ledger", os.path.join(where, "src", name), "--from", "-",
                     "--no-sync", "--batch", "100", "--checkpoint-every", "0",
                     "--publish", urls, "--cluster-name", name,
                     "--stream-replicas", str(self.replicas)],
                    os.path.join(where, f"sidecar-{name}.err"), stdin=subprocess.PIPE,
                    stdout_path=os.path.join(where, f"sidecar-{name}.out"))

            # Poller: (arrival time, seq) whenever a cluster's seq moves.
            polls = {n: ([], []) for n in names}  # name -> (times, seqs)
            poll_stop = threading.Event()
            poll_stats = {"polls": 0, "failed": 0}

            def poller():
                while not poll_stop.is_set():
                    got = fleet_seqs(port)
                    now = time.monotonic()
                    poll_stats["polls"] += 1
                    if got is None:
                        poll_stats["failed"] += 1
                    else:
                        for n in names:
                            s = got.get(n, 0)
                            ts, ss = polls[n]
                            if s > (ss[-1] if ss else 0):
                                ts.append(now)
                                ss.append(s)
                    poll_stop.wait(LAG_POLL)

            poll_thread = threading.Thread(target=poller, daemon=True)
            poll_thread.start()

            # Pacer: line k (1-based) is due at start + (k-1)/rate; every PACE_SLICE it
            # writes each cluster's lines due by then in one write, noting the time.
            written = {n: [] for n in names}  # write time of line k at index k-1
            sent = {n: 0 for n in names}
            start = time.monotonic()
            max_slip = 0.0  # s: latest a line was written after it was due
            slices = 0
            try:
                while not all(sent[n] >= per for n in names):
                    due = min(per, int((time.monotonic() - start) * a.rate) + 1)
                    for n in names:
                        if sent[n] < due:
                            chunk = data[n][offsets[n][sent[n]]:offsets[n][due]]
                            t = time.monotonic()
                            write_all(sidecars[n].stdin, chunk)
                            written[n].extend([t] * (due - sent[n]))
                            max_slip = max(max_slip, t - (start + sent[n] / a.rate))
                            sent[n] = due
                    slices += 1
                    delay = start + slices * PACE_SLICE - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
            except BrokenPipeError:
                dead = [f"{n} exited {p.poll()}:\n{tail(p.stderr_path)}" for n, p in sidecars.items()
                        if p.poll() is not None]
                raise BenchError("a sidecar closed its stdin: " + "\n".join(dead))
            pace_end = time.monotonic()
            for p in sidecars.values():
                p.stdin.close()
            pace_s = pace_end - start
            log(f"    pacer done: {sum(sent.values())} events in {pace_s:.2f}s; stdin closed")

            # Let every copy catch up with everything written, and the sidecars exit.
            deadline = time.monotonic() + 120
            while True:
                if all(polls[n][1] and polls[n][1][-1] >= sent[n] for n in names):
                    break
                for n, p in sidecars.items():
                    if p.poll() is not None and p.returncode != 0:
                        raise BenchError(f"sidecar {n} exited {p.returncode}:\n{tail(p.stderr_path)}")
                if consumer.poll() is not None:
                    raise BenchError(f"fleet consumer exited {consumer.returncode}:\n{tail(consumer.stderr_path)}")
                if time.monotonic() > deadline:
                    at = {n: (polls[n][1][-1] if polls[n][1] else 0) for n in names}
                    raise BenchError(f"copies not caught up 120s after the end: at {at}, written {sent}")
                time.sleep(0.05)
            caught_up_s = time.monotonic() - pace_end
            poll_stop.set()
            poll_thread.join(5)
            for n, p in sidecars.items():
                try:
                    rc = p.wait(60)
                except subprocess.TimeoutExpired:
                    raise BenchError(f"sidecar {n} still running 60s after its stdin closed")
                if rc != 0:
                    raise BenchError(f"sidecar {n} exited {rc}:\n{tail(p.stderr_path)}")
            self.stop_consumer(consumer)
        finally:
            cluster.stop()
            for m in data.values():
                m.close()
            for f in files:
                f.close()

        lags = []
        for n in names:
            ts, ss = polls[n]
            for k, w in enumerate(written[n], start=1):
                if w - start < WARMUP:
                    continue
                i = bisect.bisect_left(ss, k)
                lags.append(ts[i] - w)
        lags.sort()
        # Achieved rate: lines 2..per over the time from the start to the last write
        # (a perfect pacer writes line per at (per-1)/rate).
        rates = [(per - 1) / max(written[n][-1] - start, 1e-9) for n in names]
        kept_up = min(rates) >= 0.99 * a.rate
        checked, of = self.compare_heads({n: os.path.join(where, "src", n) for n in names}, fleet)
        log(f"    ok: heads equal (lastSeq, lastHash) for {checked} of {of} copies")

        def pct(p):
            if not lags:
                return None
            return lags[min(len(lags) - 1, max(0, math.ceil(p / 100.0 * len(lags)) - 1))]  # nearest rank

        ms = lambda v: None if v is None else round(v * 1000.0, 1)  # noqa: E731
        return {
            "clusters": clusters, "ratePerCluster": a.rate, "seconds": a.lag_seconds,
            "events": sum(sent.values()), "eventsMeasured": len(lags),
            "achievedRatePerCluster": round(min(rates), 1),
            "achievedRateTotal": round(sum(rates), 1),
            "pacerKeptUp": bool(kept_up), "pacerMaxSlipMs": round(max_slip * 1000.0, 1),
            "lagP50Ms": ms(pct(50)), "lagP99Ms": ms(pct(99)), "lagMaxMs": ms(lags[-1] if lags else None),
            "lagMeanMs": ms(sum(lags) / len(lags) if lags else None),
            "caughtUpAfterEndSeconds": round(caught_up_s, 3),
            "metricsPolls": poll_stats["polls"], "metricsPollsFailed": poll_stats["failed"],
            "headsChecked": checked, "headsEqual": True,
        }


# -- output --------------------------------------------------------------------

def table(rows, cols):
    """rows: list of dicts; cols: (header, key, format)."""
    cells = [[h for h, _, _ in cols]]
    for r in rows:
        cells.append([("-" if r.get(k) is None else f.format(r[k])) for _, k, f in cols])
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    out = []
    for j, row in enumerate(cells):
        out.append("  ".join(c.rjust(widths[i]) for i, c in enumerate(row)))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def render(result):
    a = result["config"]
    out = [f"fleet bench: NATS {a['nodes']} node(s), stream replicas {a['streamReplicas']}, "
           f"{a['cpus']} CPUs, build {a['build']}"]
    if result["throughput"]:
        out += ["", f"Throughput ({a['recordsTotal']} records in total, --no-sync, no checkpoints; "
                    "fleet = publish start until every copy caught up)",
                table(result["throughput"], [
                    ("clusters", "clusters", "{}"),
                    ("records", "records", "{}"),
                    ("local s", "localSeconds", "{:.2f}"),
                    ("local rec/s", "localRecordsPerSecond", "{:,.0f}"),
                    ("publish s", "publishSeconds", "{:.2f}"),
                    ("fleet s", "fleetSeconds", "{:.2f}"),
                    ("fleet rec/s", "fleetRecordsPerSecond", "{:,.0f}"),
                    ("ratio", "ratio", "{:.2f}"),
                    ("heads equal", "headsChecked", "{} ok"),
                ])]
    if result["lag"]:
        out += ["", f"Lag (sidecar stdin write -> fleet copy's ledger_fleet_seq, --batch 100, "
                    f"polled every {LAG_POLL * 1000:.0f} ms; first {WARMUP:g}s left out)",
                table(result["lag"], [
                    ("clusters", "clusters", "{}"),
                    ("target ev/s", "ratePerCluster", "{:g}"),
                    ("achieved ev/s", "achievedRatePerCluster", "{:,.0f}"),
                    ("kept up", "pacerKeptUp", "{}"),
                    ("pacer slip ms", "pacerMaxSlipMs", "{:.1f}"),
                    ("events", "eventsMeasured", "{}"),
                    ("p50 ms", "lagP50Ms", "{:.1f}"),
                    ("p99 ms", "lagP99Ms", "{:.1f}"),
                    ("max ms", "lagMaxMs", "{:.1f}"),
                    ("heads equal", "headsChecked", "{} ok"),
                ])]
    return "\n".join(out)


def int_list(text):
    text = text.strip()
    if not text:
        return []
    values = [int(v) for v in text.split(",") if v.strip()]
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError("cluster counts must be at least 1")
    return values


def main():
    ap = argparse.ArgumentParser(
        description="Fleet benchmark: local vs NATS-fleet ingest throughput, and end-to-end "
                    "lag at a steady rate (see the docstring of tools/bench/fleet_bench.py).")
    ap.add_argument("--build", default=os.path.join(SRC_ROOT, "build"),
                    help="build directory; binaries in DIR/tools (default: %(default)s)")
    ap.add_argument("--records-total", type=int, default=64000,
                    help="records in total for each throughput run, split over the clusters (default 64000)")
    ap.add_argument("--clusters", type=int_list, default=[1, 4, 16],
                    help="cluster counts for the throughput runs (default 1,4,16; empty: skip)")
    ap.add_argument("--nodes", type=int, choices=(1, 3), default=1,
                    help="NATS nodes: 1 standalone, 3 a cluster with stream replicas 3 (default 1)")
    ap.add_argument("--lag-seconds", type=float, default=20.0, help="seconds of steady rate (default 20)")
    ap.add_argument("--lag-clusters", type=int_list, default=[1, 4],
                    help="cluster counts for the lag runs (default 1,4; empty: skip)")
    ap.add_argument("--rate", type=float, default=1000.0, help="events/s per cluster in the lag runs (default 1000)")
    ap.add_argument("--seed", type=int, default=1, help="first ledger-gen seed (cluster i: seed+i)")
    ap.add_argument("--verify-sample", type=int, default=0,
                    help="compare the heads of only this many clusters per run (default 0: all)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (ledgers, logs)")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout (table to stderr)")
    args = ap.parse_args()
    if args.records_total < max(args.clusters or [1]):
        ap.error("--records-total must be at least the largest cluster count")
    if args.rate <= 0 or args.lag_seconds <= WARMUP:
        ap.error(f"--rate must be positive and --lag-seconds more than {WARMUP:g}")

    nats_cluster.require_nats_server()

    def on_sigterm(signum, frame):  # end like Ctrl-C: the finally blocks clean up
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_sigterm)
    work = tempfile.mkdtemp(prefix="fleet-bench-")
    bench = None
    result = {
        "config": {
            "build": os.path.abspath(args.build), "nodes": args.nodes,
            "streamReplicas": 3 if args.nodes == 3 else 1, "cpus": os.cpu_count(),
            "recordsTotal": args.records_total, "clusters": args.clusters,
            "lagClusters": args.lag_clusters, "lagSeconds": args.lag_seconds, "rate": args.rate,
            "seed": args.seed,
        },
        "throughput": [], "lag": [],
    }
    try:
        bench = Bench(args, work)
        log(f"fleet bench: work dir {work}")
        for c in args.clusters:
            result["throughput"].append(bench.throughput(c))
            bench.done_with(f"throughput-{c}")
        for c in args.lag_clusters:
            result["lag"].append(bench.lag(c))
            bench.done_with(f"lag-{c}")
    except (BenchError, nats_cluster.NatsError) as e:
        log(f"FAIL: {e}")
        return 1
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        if bench is not None:
            bench.procs.stop_all()
        nats_cluster._stop_live()
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    text = render(result)
    if args.json:
        print(text, file=sys.stderr)
        print(json.dumps(result, sort_keys=True))
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

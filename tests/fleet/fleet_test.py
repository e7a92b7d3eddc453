#!/usr/bin/env python3
"""End-to-end test of the fleet: ledger-ingest --publish / ledger-replay publish
shipping clusters' ledgers through NATS JetStream, and the fleet consumer
(ledger-ingest --from-nats --fleet) keeping per-cluster copies.

Scenarios (each prints what it checks):
  1. main     3-node NATS; clusters c1 c2 c3 signing with their own keys, the
              consumer trusting them; each stream in 3 parts published
              in turn (--stream-replicas 3); the fleet consumer is kill -9'd 20
              times at random moments while publishing goes on; a NATS node
              (the stream's leader) is kill -9'd and restarted mid-stream; a
              publisher is kill -9'd mid-part and rerun; c3's last part goes
              through `ledger-replay publish`. Then: heads equal, fleet verify
              ok, fleet report --by cluster == sums of each source's report.
  2. late     NATS down when the publisher starts (stdin a pipe): records are
              kept locally, shipped once NATS comes up; ingest exits 0.
  3. gap      records 50.. published first: the consumer exits 2 naming
              "records 1..49"; after publishing from 1 it exits 0, heads equal.
  4. tamper   a record re-published with a changed chain hash, or changed
              payload bytes under the original hash: the consumer exits 3
              naming "cluster evil seq 5"; the copy stays at seq 4; a rerun
              exits 0 (the message was terminated), still at seq 4.
  6. refused  single-node NATS, clusters a and b; on b's subject: random bytes,
              an empty message, a truncated record, a segment size of 2^31
              words, a name with path characters (a/b), a seq of 2^64-1, a
              chained record whose time goes backwards; an unknown cluster
              with a bad hash. Each is refused (terminated, counted, logged),
              the consumer exits 3 once and 0 after; records held ahead of a
              gap past --max-held-mb come again later; the copies equal their
              sources and the fleet holds no other directory. A junk message
              claiming `Ledger-Seq: 1` on a's subject does not make a rerun
              publisher send a's history again.
  7. trust    keys from `ledger-replay keygen` (b's file holds two keys); a
              consumer without keys or with out-of-range flags: exit 1;
              forged next records for b unsigned, signed by a's key and by
              another key, and a whole cluster `evil` signed by its own key:
              refused; the copies equal their sources, no directory for
              evil; `verify --trusted-keys` proves each head (exit 3 against
              the wrong key); an --allow-unsigned fleet says it is unsigned.
  8. progress a consumer SIGSTOP'd while records are published, past its
              --exit-when-idle, reads them all after SIGCONT before exiting 0;
              its durable deleted under it while records are published:
              /readyz 503 until it is created again and the copy caught up,
              then 200; the stream deleted under it: created again, /readyz
              200 again; the copy equals its source.
  9. squat    junk on another subject under a's next message ids: the
              publisher sees the stored message is not its record and sends
              the record again under `a:<seq>:<hash>`; the copy is whole.
  10. users   deploy/fleet/nats.yaml's authorization block (sample
              passwords in the environment): its first cluster publishes with
              ledger-ingest --publish, its second with ledger-replay publish,
              the consumer reads twice, each as its own user (--nats-user-file),
              and nats-server denies none of their calls; a raw client as the
              first cluster's user cannot publish on the second's subject,
              delete the durable or the stream, or read the fleet's replies;
              the fleet's user cannot publish records; copies equal sources.
  5. sidecar  `ledger-ingest --watch --publish` against a fake API server
              (namespaces) while NATS is down: the LIST and watched changes
              are committed, /metrics counts the publish lag; NATS comes up,
              the lag drains to 0, the copy's head equals the ledger's;
              SIGTERM exits 0.

Binaries: $LEDGER_INGEST $LEDGER_REPLAY $LEDGER_QUERY $LEDGER_GEN (default
build/tools/<name> beside this source tree). Exit 0 pass, 1 fail, 77 skip
(no nats-server). Run one scenario: FLEET_TEST_ONLY=main,gap. Random choices
come from $FLEET_TEST_SEED (printed). Keeps its temp dir on failure (printed),
or always with FLEET_TEST_KEEP=1.
"""
import base64
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nats_cluster  # noqa: E402

SRC_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
T1 = "2000-01-01T00:00:00Z"
T2 = "2100-01-01T00:00:00Z"


def binary(env, name):
    path = os.environ.get(env) or os.path.join(SRC_ROOT, "build", "tools", name)
    if not os.access(path, os.X_OK):
        raise SystemExit(f"FAIL: {name} not found at {path} (set ${env})")
    return path


INGEST = binary("LEDGER_INGEST", "ledger-ingest")
REPLAY = binary("LEDGER_REPLAY", "ledger-replay")
QUERY = binary("LEDGER_QUERY", "ledger-query")
GEN = binary("LEDGER_GEN", "ledger-gen")


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def log(msg):
    print(msg, flush=True)


# -- processes -----------------------------------------------------------------

_procs = []  # every Popen started, for cleanup
_procs_lock = threading.Lock()


def spawn(cmd, stdout_path=None, stderr_path=None, stdin=subprocess.DEVNULL):
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    try:
        p = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=err)
    finally:
        if stdout_path:
            out.close()
        if stderr_path:
            err.close()
    with _procs_lock:
        _procs.append(p)
    return p


def cleanup_procs():
    with _procs_lock:
        procs = list(_procs)
    for p in procs:
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


def run(cmd, timeout=120, input_bytes=None, expect=0):
    """Runs cmd; returns (rc, stdout, stderr); Failure unless rc == expect (None: any)."""
    try:
        r = subprocess.run(cmd, input=input_bytes, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, stdin=None if input_bytes is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise Failure(f"timed out after {timeout}s: {' '.join(cmd)}\nstderr: "
                      f"{(e.stderr or b'').decode(errors='replace')[-2000:]}")
    out = r.stdout.decode(errors="replace")
    err = r.stderr.decode(errors="replace")
    if expect is not None and r.returncode != expect:
        raise Failure(f"exit {r.returncode} (expected {expect}): {' '.join(cmd)}\n"
                      f"stdout: {out[-2000:]}\nstderr: {err[-3000:]}")
    return r.returncode, out, err


def tail(path, n=3000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return "(none)"


# -- ledger helpers ------------------------------------------------------------

def gen_events(n, seed):
    _, out, _ = run([GEN, "--events", str(n), "--seed", str(seed)])
    lines = out.splitlines(keepends=True)
    check(len(lines) == n, f"ledger-gen printed {len(lines)} lines, not {n}")
    return lines


def write_lines(path, lines):
    with open(path, "w") as f:
        f.writelines(lines)


def split3(lines):
    a, b = len(lines) // 3, 2 * len(lines) // 3
    return [lines[:a], lines[a:b], lines[b:]]


def verify_ledger(path):
    _, out, _ = run([REPLAY, "--ledger", path, "verify", "-o", "json"])
    v = json.loads(out)
    check(v.get("ok") is True, f"verify {path}: not ok: {out[:2000]}")
    return v


def head_of(path, strict=False):
    """(lastSeq, lastHash) of a ledger, read-only (works beside a writer); None where no
    report came (a copy not created yet), a Failure instead when strict."""
    rc, out, err = run([REPLAY, "--ledger", path, "verify", "-o", "json"], expect=None)
    try:
        v = json.loads(out)
    except ValueError:
        if strict:
            raise Failure(f"verify {path} beside its writer exited {rc} without a report\n"
                          f"stdout: {out[-1000:]}\nstderr: {err[-2000:]}")
        return None
    return v.get("lastSeq"), v.get("lastHash")


def verify_fleet(fleet):
    rc, out, err = run([REPLAY, "--fleet", fleet, "verify", "-o", "json"], expect=None)
    check(rc == 0, f"ledger-replay --fleet {fleet} verify exited {rc}: {out[-2000:]} {err[-2000:]}")
    v = json.loads(out)
    bad = [c["cluster"] for c in v["clusters"] if c.get("ok") is not True]
    check(not bad, f"fleet verify: not ok: {bad}")
    return {c["cluster"]: c for c in v["clusters"]}


def source_totals(path):
    """{resource: (reserved, quota or None)} summed over the source's --by cluster-queue rows."""
    _, out, _ = run([QUERY, "--ledger", path, "report", "--from", T1, "--to", T2,
                     "--by", "cluster-queue", "-o", "json"])
    totals = {}
    for row in json.loads(out)["rows"]:
        reserved, quota = totals.get(row["resource"], (Decimal(0), None))
        reserved += Decimal(row["reservedResourceSeconds"])
        if row.get("quotaResourceSeconds") is not None:
            quota = (quota or Decimal(0)) + Decimal(row["quotaResourceSeconds"])
        totals[row["resource"]] = (reserved, quota)
    return totals


def fleet_totals(fleet):
    """{(cluster, resource): (reserved, quota or None)} from the fleet report --by cluster."""
    _, out, _ = run([QUERY, "--fleet", fleet, "report", "--from", T1, "--to", T2,
                     "--by", "cluster", "-o", "json"])
    totals = {}
    for row in json.loads(out)["rows"]:
        key = (row["cluster"], row["resource"])
        check(key not in totals, f"fleet report: two rows for {key}")
        q = row.get("quotaResourceSeconds")
        totals[key] = (Decimal(row["reservedResourceSeconds"]), Decimal(q) if q is not None else None)
    return totals


def consumer_cmd(urls, fleet, idle=None, durable=None, replicas=None, extra=(), keys=None):
    """The fleet consumer; unsigned (--allow-unsigned) unless given a keys directory."""
    trust = ["--trusted-keys", keys] if keys else ["--allow-unsigned"]
    listen = [] if "--listen" in extra else ["--listen", "off"]
    cmd = [INGEST, "--from-nats", urls, "--fleet", fleet, *listen, *trust, *extra]
    if idle is not None:
        cmd += ["--exit-when-idle", str(idle)]
    if durable:
        cmd += ["--durable", durable]
    if replicas:
        cmd += ["--stream-replicas", str(replicas)]
    return cmd


def run_consumer_to_idle(urls, fleet, idle, expect, timeout=120, **kw):
    t = time.monotonic()
    rc, out, err = run(consumer_cmd(urls, fleet, idle=idle, **kw), timeout=timeout, expect=None)
    log(f"    consumer --exit-when-idle {idle}: exit {rc} in {time.monotonic() - t:.1f}s; "
        f"{' / '.join(l for l in out.splitlines() if l.startswith('cluster '))}")
    check(rc == expect, f"fleet consumer exited {rc}, expected {expect}\nstdout: {out[-2000:]}\n"
          f"stderr: {err[-3000:]}")
    return out, err


def compare_heads(sources, fleet):
    """sources: {cluster: source ledger dir}; every copy's head equals its source's."""
    copies = verify_fleet(fleet)
    for name, src in sorted(sources.items()):
        v = verify_ledger(src)
        check(name in copies, f"fleet has no copy of {name} (has {sorted(copies)})")
        c = copies[name]
        check((c["lastSeq"], c["lastHash"]) == (v["lastSeq"], v["lastHash"]),
              f"{name}: fleet copy at seq {c['lastSeq']} {c['lastHash'][:16]}…, "
              f"source at seq {v['lastSeq']} {v['lastHash'][:16]}…")
        log(f"    ok: {name}: copy head == source head (seq {v['lastSeq']}, {v['lastHash'][:16]}…)")
    return copies


# -- a minimal NATS client (text protocol over a socket) -------------------------

class Nats:
    def __init__(self, url, timeout=10.0, user=None, password=None):
        hostport = url.split("://", 1)[-1]
        host, port = hostport.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.buf = b""
        self.sid = 0
        # A user's replies come under its own prefix, as the programs' do
        # (deploy/fleet/nats.yaml lets each user subscribe to those only).
        self.inbox_prefix = f"_INBOX.{user}" if user is not None else "_INBOX.fleettest"
        line = self._line()
        check(line.startswith(b"INFO "), f"NATS: expected INFO, got {line[:100]!r}")
        connect = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True,
                   "lang": "python-test", "version": "0", "protocol": 1}
        if user is not None:
            connect.update({"user": user, "pass": password})
        self.sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        while True:
            kind, _ = self._next()
            if kind == "PONG":
                break

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise Failure("NATS: connection closed")
        self.buf += data

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _take(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _next(self):
        """(kind, value): ("MSG", (subject, sid, reply, headers_bytes, payload)), ("PONG", None)..."""
        while True:
            line = self._line()
            op = line.split(b" ", 1)[0].upper()
            if op == b"PING":
                self.sock.sendall(b"PONG\r\n")
            elif op == b"PONG":
                return "PONG", None
            elif op in (b"+OK", b"INFO"):
                continue
            elif op == b"-ERR":
                raise Failure(f"NATS: {line.decode(errors='replace')}")
            elif op == b"MSG":
                parts = line.decode().split()
                subject, sid = parts[1], parts[2]
                reply = parts[3] if len(parts) == 5 else None
                payload = self._take(int(parts[-1]))
                return "MSG", (subject, sid, reply, b"", payload)
            elif op == b"HMSG":
                parts = line.decode().split()
                subject, sid = parts[1], parts[2]
                reply = parts[3] if len(parts) == 6 else None
                hlen, total = int(parts[-2]), int(parts[-1])
                data = self._take(total)
                return "MSG", (subject, sid, reply, data[:hlen], data[hlen:])
            else:
                raise Failure(f"NATS: unexpected {line[:100]!r}")

    def subscribe(self, subject):
        """Subscribes and waits for the server's answer (a Failure with its -ERR)."""
        self.sid += 1
        self.sock.sendall(f"SUB {subject} {self.sid}\r\nPING\r\n".encode())
        while True:
            kind, _ = self._next()
            if kind == "PONG":
                return

    def request(self, subject, payload=b"", headers=None):
        """Publishes (HPUB when headers, raw header block bytes) with a fresh inbox and
        returns (headers_bytes, payload) of the first reply."""
        self.sid += 1
        inbox = f"{self.inbox_prefix}.{os.getpid()}.{self.sid}"
        sid = str(self.sid)
        out = f"SUB {inbox} {sid}\r\nUNSUB {sid} 1\r\n".encode()
        if headers is not None:
            out += f"HPUB {subject} {inbox} {len(headers)} {len(headers) + len(payload)}\r\n".encode()
            out += headers + payload + b"\r\n"
        else:
            out += f"PUB {subject} {inbox} {len(payload)}\r\n".encode() + payload + b"\r\n"
        self.sock.sendall(out)
        while True:
            kind, value = self._next()
            if kind == "MSG" and value[1] == sid:
                return value[3], value[4]


def parse_headers(block):
    """NATS/1.0 header block bytes -> {key: value} (the status line under "")."""
    lines = block.decode().split("\r\n")
    h = {"": lines[0]}
    for l in lines[1:]:
        if l:
            k, v = l.split(":", 1)
            h[k.strip()] = v.strip()
    return h


def js_api(nc, subject, body):
    hdrs, payload = nc.request(subject, json.dumps(body).encode() if body is not None else b"")
    if hdrs and "503" in parse_headers(hdrs)[""]:
        raise Failure(f"{subject}: no responders (JetStream off?)")
    reply = json.loads(payload)
    check("error" not in reply, f"{subject}: {reply.get('error')}")
    return reply


# -- scenarios ---------------------------------------------------------------------

def stream_leader(cluster):
    """The node index leading stream LEDGER, or None."""
    for i in cluster.running():
        jsz = cluster.monitor(i, "/jsz?streams=true")
        for acc in (jsz or {}).get("account_details") or []:
            for st in acc.get("stream_detail") or []:
                if st.get("name") == "LEDGER":
                    leader = (st.get("cluster") or {}).get("leader")
                    for j in range(cluster.nodes):
                        if cluster.name(j) == leader:
                            return j
    return None


class ConsumerKiller(threading.Thread):
    """Runs the fleet consumer, kill -9 after a random 0.05-0.6 s, restarts it; kills times."""

    def __init__(self, cmd, workdir, kills, rng):
        super().__init__(daemon=True)
        self.cmd, self.workdir, self.kills, self.rng = cmd, workdir, kills, rng
        self.error = None
        self.stopping = False
        self.done_kills = 0
        self.after_reading = 0
        self.current = None

    def run(self):
        try:
            for k in range(self.kills):
                if self.stopping:
                    return
                err = os.path.join(self.workdir, f"consumer-{k:02d}.err")
                p = spawn(self.cmd, stderr_path=err)
                self.current = p
                # On a 3-node NATS a restarted consumer spends 0.6-1 s recreating its
                # durable (R3) before it reads anything: counting the delay from the
                # start would kill it there every time. So every 4th kill counts from
                # the start (kills during startup), the others from its
                # "reading stream" line (kills while it applies and acks).
                if k % 4 != 3:
                    deadline = time.monotonic() + 30
                    while "reading stream" not in tail(err) and p.poll() is None:
                        if time.monotonic() > deadline:
                            raise Failure(f"fleet consumer run {k}: no \"reading stream\" line in 30 s\n"
                                          f"stderr: {tail(err)}")
                        time.sleep(0.02)
                    self.after_reading += 1
                time.sleep(self.rng.uniform(0.05, 0.6))
                rc = p.poll()
                if rc is not None:
                    raise Failure(f"fleet consumer run {k} exited {rc} on its own before its kill -9\n"
                                  f"stderr: {tail(err)}")
                p.send_signal(signal.SIGKILL)
                p.wait()
                self.done_kills += 1
        except BaseException as e:  # reported by the main thread
            self.error = e


def scenario_main(work, rng):
    events = int(os.environ.get("FLEET_TEST_EVENTS", "5000"))
    kills = int(os.environ.get("FLEET_TEST_KILLS", "20"))
    log(f"== 1. main: 3-node NATS, clusters c1 c2 c3 in 3 parts, consumer kill -9 x{kills}, "
        "NATS node and publisher killed mid-stream, c3's last part by ledger-replay publish")
    clusters = {"c1": 101, "c2": 202, "c3": 303}
    parts = {}
    for name, seed in clusters.items():
        for k, chunk in enumerate(split3(gen_events(events, seed))):
            path = os.path.join(work, f"{name}-part{k}.jsonl")
            write_lines(path, chunk)
            parts[(name, k)] = (path, chunk)
    log(f"    generated {events} events per cluster (seeds {list(clusters.values())}), 3 parts each")

    t = time.monotonic()
    cluster = nats_cluster.NatsCluster(os.path.join(work, "nats"), nodes=3)
    log(f"    3-node NATS ready in {time.monotonic() - t:.1f}s: {cluster.urls()}")
    urls = cluster.urls()
    fleet = os.path.join(work, "fleet")
    sources = {name: os.path.join(work, "src", name) for name in clusters}
    # Signed: each cluster its key, the consumer every public key.
    trusted = os.path.join(work, "trusted")
    os.makedirs(trusted)
    for name in clusters:
        key = os.path.join(work, name + ".key")
        run([REPLAY, "keygen", "--out", key])
        shutil.copy(key + ".pub", os.path.join(trusted, name + ".pub"))
    killer = None
    try:
        def publish_cmd(name, path):
            return [INGEST, "--ledger", sources[name], "--from", path, "--no-sync",
                    "--publish", urls, "--cluster-name", name, "--stream-replicas", "3",
                    "--signing-key", os.path.join(work, name + ".key")]

        # Part 0 of c1 first: it creates the stream (3 replicas) before the consumer starts.
        run(publish_cmd("c1", parts[("c1", 0)][0]), timeout=60)
        killer = ConsumerKiller(consumer_cmd(urls, fleet, replicas=3, keys=trusted), work, kills, rng)
        killer.start()
        log(f"    consumer kill -9 loop started ({kills} kills at random 0.05-0.6 s)")

        for k in range(3):
            for name in clusters:
                path, chunk = parts[(name, k)]
                if (name, k) == ("c1", 0):
                    continue
                if (name, k) == ("c3", 2):
                    run([INGEST, "--ledger", sources[name], "--from", path, "--no-sync"], timeout=60)
                    t = time.monotonic()
                    run([REPLAY, "--ledger", sources[name], "publish", "--to", urls,
                         "--cluster-name", name, "--stream-replicas", "3",
                         "--signing-key", os.path.join(work, name + ".key")], timeout=120)
                    log(f"    c3 part 2: ingested without --publish, shipped by ledger-replay publish "
                        f"(exit 0 in {time.monotonic() - t:.1f}s)")
                elif (name, k) == ("c2", 1):
                    # A publisher killed -9 mid-part, its command rerun. The part goes
                    # through stdin so the kill lands after some, not all, of it was recorded.
                    before = head_of(sources[name], strict=True)[0]
                    # --from - commits every --batch records (and at EOF), not on a timer.
                    cmd = publish_cmd(name, "-") + ["--batch", "100"]
                    p = spawn(cmd, stdin=subprocess.PIPE,
                              stderr_path=os.path.join(work, "publisher-killed.err"))
                    half = len(chunk) // 2
                    p.stdin.write("".join(chunk[:half]).encode())
                    p.stdin.flush()
                    deadline = time.monotonic() + 30
                    while True:
                        seq = head_of(sources[name], strict=True)[0]
                        if seq > before:
                            break
                        check(time.monotonic() < deadline, "publisher recorded nothing of its part in 30s")
                        check(p.poll() is None, f"publisher exited {p.returncode} early")
                        time.sleep(0.05)
                    p.send_signal(signal.SIGKILL)
                    p.wait()
                    try:
                        p.stdin.close()
                    except OSError:
                        pass
                    mid = head_of(sources[name], strict=True)[0]
                    log(f"    c2 part 1: publisher kill -9'd mid-part (source at seq {mid}, "
                        f"was {before}, part has {len(chunk)} events); rerunning the same command")
                    run(cmd, input_bytes="".join(chunk).encode(), timeout=60)
                elif (name, k) == ("c1", 1):
                    # Kill -9 the stream's leader node while this publisher runs; restart it.
                    p = spawn(publish_cmd(name, path), stderr_path=os.path.join(work, "publisher-c1-1.err"))
                    time.sleep(0.1)
                    victim = stream_leader(cluster)
                    victim = 1 if victim is None else victim
                    cluster.kill(victim)
                    log(f"    NATS node-{victim} (LEDGER's leader) kill -9'd while c1 part 1 publishes")
                    rc = p.wait(120)
                    perr = tail(os.path.join(work, 'publisher-c1-1.err'))
                    check(rc == 0, f"publisher for c1 part 1 exited {rc} with a NATS node down\n{perr}")
                    for line in perr.splitlines():
                        if "warn" in line or "error" in line:
                            log(f"      publisher: {line[:200]}")
                    t = time.monotonic()
                    cluster.start(victim)
                    log(f"    node-{victim} restarted, cluster ready again in {time.monotonic() - t:.1f}s "
                        f"(stream leader now node-{stream_leader(cluster)})")
                else:
                    run(publish_cmd(name, path), timeout=120)
        log("    all parts recorded and published")

        killer.join(120)
        check(not killer.is_alive(), "consumer kill loop did not finish in 120 s")
        if killer.error:
            raise killer.error
        log(f"    consumer kill -9'd {killer.done_kills} times ({killer.after_reading} while reading, "
            f"the others during startup), restarted each time")
        # Between kills the copies were always whole ledgers.
        copies = verify_fleet(fleet)
        log("    ok: fleet verify after the kills: " +
            ", ".join(f"{c} at seq {copies[c]['lastSeq']}" for c in sorted(copies)))

        run_consumer_to_idle(urls, fleet, 3, 0, replicas=3, keys=trusted)
        compare_heads(sources, fleet)
        _, out, _ = run([REPLAY, "--fleet", fleet, "verify", "--trusted-keys", trusted, "-o", "json"])
        heads = {c["cluster"]: c["headSignature"] for c in json.loads(out)["clusters"]}
        check(set(heads.values()) == {"verified"}, f"head signatures: {heads}")
        log("    ok: every copy's head is signed by its cluster's key (verify --trusted-keys)")
        log("    ok: ledger-replay --fleet verify exits 0, every copy ok")

        ft = fleet_totals(fleet)
        expected = {}
        for name, src in sources.items():
            for resource, v in source_totals(src).items():
                expected[(name, resource)] = v
        check(set(ft) == set(expected), f"fleet report rows {sorted(ft)} != sources' {sorted(expected)}")
        for key in sorted(expected):
            check(ft[key] == expected[key], f"fleet report {key}: {ft[key]} != sum of source rows {expected[key]}")
        log(f"    ok: fleet report --by cluster == per-cluster sums of the sources' cluster-queue rows "
            f"({len(expected)} (cluster, resource) rows, reserved and quota, exact)")
    finally:
        if killer is not None and killer.is_alive():
            killer.stopping = True
        cleanup_procs()
        cluster.stop()


def scenario_late(work, rng):
    log("== 2. late: the publisher starts while NATS is down")
    port = nats_cluster.free_ports(1)[0]
    url = f"nats://127.0.0.1:{port}"
    src = os.path.join(work, "src-late")
    fleet = os.path.join(work, "fleet-late")
    lines = gen_events(300, 404)
    # How many records these events make, from a scratch ledger.
    scratch = os.path.join(work, "scratch-late")
    write_lines(scratch + ".jsonl", lines)
    run([INGEST, "--ledger", scratch, "--from", scratch + ".jsonl", "--no-sync"])
    want = verify_ledger(scratch)["lastSeq"]
    # --from - commits every --batch records, and a full batch only once the
    # next one has filled up (or at EOF): with batches of 50, 300 events give at
    # least 200 records committed while stdin stays open.
    batch, least = 50, want - 100

    err_path = os.path.join(work, "ingest-late.err")
    cmd = [INGEST, "--ledger", src, "--from", "-", "--no-sync", "--batch", str(batch),
           "--publish", url, "--cluster-name", "late"]
    p = spawn(cmd, stdin=subprocess.PIPE, stdout_path=os.path.join(work, "ingest-late.out"),
              stderr_path=err_path)

    def feed():
        try:
            p.stdin.write("".join(lines).encode())
            p.stdin.flush()
        except (OSError, ValueError):
            pass
    # A thread writes: if ingest does not read its stdin, the check below fails
    # instead of this test blocking on a full pipe.
    threading.Thread(target=feed, daemon=True).start()
    cluster = None
    try:
        t = time.monotonic()
        while True:
            h = head_of(src)
            if h and h[0] >= least:
                break
            check(p.poll() is None, f"ingest exited {p.returncode} while NATS is down\n{tail(err_path)}")
            check(time.monotonic() - t < 30, f"with NATS down (nothing listening on {url}), the ledger "
                  f"reached seq {h and h[0]}, not {least} or more, in 30 s after {len(lines)} events were "
                  f"written to its stdin (still open): recording waits for NATS\n"
                  f"command: {' '.join(cmd)}\nstderr: {tail(err_path)}")
            time.sleep(0.1)
        log(f"    ok: with NATS down (port {port}), events recorded locally: seq {h[0]} "
            f"in {time.monotonic() - t:.1f}s, stdin still open")

        cluster = nats_cluster.NatsCluster(os.path.join(work, "nats-late"), nodes=1, client_ports=[port])
        log(f"    NATS started on {url}")
        consumer = spawn(consumer_cmd(url, fleet), stderr_path=os.path.join(work, "consumer-late.err"))
        t = time.monotonic()
        while True:
            src_head = head_of(src)
            h = head_of(os.path.join(fleet, "late")) if os.path.isdir(os.path.join(fleet, "late")) else None
            if h == src_head and h[0] >= least:
                break
            check(consumer.poll() is None, f"consumer exited {consumer.returncode}\n"
                  f"{tail(os.path.join(work, 'consumer-late.err'))}")
            check(time.monotonic() - t < 60, f"the fleet copy of late is at {h}, the source at {src_head}, "
                  f"60 s after NATS came up\npublisher: {tail(err_path)}")
            time.sleep(0.2)
        log(f"    ok: the fleet copy reached the source's head {src_head[0]} "
            f"{time.monotonic() - t:.1f}s after NATS came up (stdin still open)")
        p.stdin.close()
        rc = p.wait(60)
        check(rc == 0, f"ingest exited {rc} after stdin closed\n{tail(err_path)}")
        check(verify_ledger(src)["lastSeq"] == want, f"source not at seq {want} after EOF")
        log(f"    ok: stdin closed, ingest exits 0 at seq {want}")
        consumer.send_signal(signal.SIGTERM)
        rc = consumer.wait(30)
        log(f"    background consumer stopped with SIGTERM: exit {rc}")
        run_consumer_to_idle(url, fleet, 2, 0)
        compare_heads({"late": src}, fleet)
    finally:
        cleanup_procs()
        if cluster:
            cluster.stop()


def scenario_gap(work, rng):
    log("== 3. gap: records 50.. published before 1..49")
    src = os.path.join(work, "src-gap")
    fleet = os.path.join(work, "fleet-gap")
    path = os.path.join(work, "gap.jsonl")
    write_lines(path, gen_events(400, 505))
    run([INGEST, "--ledger", src, "--from", path, "--no-sync"])
    last = verify_ledger(src)["lastSeq"]
    with nats_cluster.NatsCluster(os.path.join(work, "nats-gap"), nodes=1) as cluster:
        url = cluster.urls()
        run([REPLAY, "--ledger", src, "publish", "--to", url, "--cluster-name", "gap", "--from-seq", "50"],
            timeout=60)
        log(f"    ledger-replay publish --from-seq 50 (of {last}): exit 0")
        _, err = run_consumer_to_idle(url, fleet, 2, 2)
        check("records 1..49" in err, f"consumer's stderr does not name records 1..49:\n{err[-2000:]}")
        log("    ok: consumer exits 2, stderr names \"records 1..49\"")
        run([REPLAY, "--ledger", src, "publish", "--to", url, "--cluster-name", "gap", "--from-seq", "1"],
            timeout=60)
        log("    ledger-replay publish --from-seq 1: exit 0")
        run_consumer_to_idle(url, fleet, 2, 0)
        compare_heads({"gap": src}, fleet)


def scenario_tamper(work, rng):
    log("== 4. tamper: a record re-published with a changed chain hash / changed bytes")
    src = os.path.join(work, "src-evil")
    path = os.path.join(work, "evil.jsonl")
    write_lines(path, gen_events(200, 606))
    run([INGEST, "--ledger", src, "--from", path, "--no-sync"])
    with nats_cluster.NatsCluster(os.path.join(work, "nats-a"), nodes=1) as a:
        run([REPLAY, "--ledger", src, "publish", "--to", a.urls(), "--cluster-name", "evil"], timeout=60)
        nc = Nats(a.url(0))
        try:
            config = js_api(nc, "$JS.API.STREAM.INFO.LEDGER", None)["config"]
            msgs = []
            for seq in range(1, 6):
                m = js_api(nc, "$JS.API.STREAM.MSG.GET.LEDGER", {"seq": seq})["message"]
                msgs.append((m["subject"], base64.b64decode(m["hdrs"]), base64.b64decode(m["data"])))
        finally:
            nc.close()
    for i, (subject, hdrs, data) in enumerate(msgs, 1):
        h = parse_headers(hdrs)
        check(subject == "ledger.evil.records", f"message {i}: subject {subject}")
        check(h.get("Nats-Msg-Id") == f"evil:{i}" and h.get("Ledger-Seq") == str(i)
              and h.get("Ledger-Cluster") == "evil" and len(h.get("Ledger-Chain-Hash", "")) == 64
              and h.get("Ledger-Time", "").isdigit(), f"message {i}: headers {h}")
    log(f"    fetched messages 1..5 from server A by {'$JS.API.STREAM.MSG.GET.LEDGER'}; headers as documented")

    def flip_hash(hdrs):
        h = parse_headers(hdrs)
        old = h["Ledger-Chain-Hash"]
        new = ("1" if old[0] != "1" else "2") + old[1:]
        out = hdrs.replace(f"Ledger-Chain-Hash: {old}".encode(), f"Ledger-Chain-Hash: {new}".encode())
        check(out != hdrs, "could not rewrite Ledger-Chain-Hash in the header block")
        return out

    def change_payload(data):
        # One byte in the middle, a digit to another digit when there is one (keeps JSON valid).
        b = bytearray(data)
        mid = len(b) // 2
        for i in list(range(mid, len(b))) + list(range(0, mid)):
            if 0x30 <= b[i] <= 0x39:
                b[i] = 0x30 + (b[i] - 0x30 + 1) % 10
                return bytes(b)
        b[mid] ^= 0x01
        return bytes(b)

    variants = [("changed Ledger-Chain-Hash", lambda h, d: (flip_hash(h), d)),
                ("changed payload byte, original hash", lambda h, d: (h, change_payload(d)))]
    for label, tamper in variants:
        tag = "hash" if "Hash" in label else "payload"
        with nats_cluster.NatsCluster(os.path.join(work, f"nats-b-{tag}"), nodes=1) as b:
            nc = Nats(b.url(0))
            try:
                js_api(nc, "$JS.API.STREAM.CREATE.LEDGER", config)
                for i, (subject, hdrs, data) in enumerate(msgs, 1):
                    if i == 5:
                        hdrs, data = tamper(hdrs, data)
                    _, ack = nc.request(subject, data, headers=hdrs)
                    ack = json.loads(ack)
                    check(ack.get("seq") == i and not ack.get("duplicate"), f"PubAck for message {i}: {ack}")
            finally:
                nc.close()
            log(f"    [{label}] server B: messages 1..4 re-published unchanged, 5 tampered; all stored")
            fleet = os.path.join(work, f"fleet-evil-{tag}")
            _, err = run_consumer_to_idle(b.urls(), fleet, 2, 3)
            check("cluster evil seq 5" in err, f"stderr does not name \"cluster evil seq 5\":\n{err[-2000:]}")
            log(f"    ok: [{label}] consumer exits 3, stderr: "
                f"{next((l for l in err.splitlines() if 'cluster evil seq 5' in l), '')[:200]}")
            copy = verify_ledger(os.path.join(fleet, "evil"))
            want = verify_ledger(src)
            seq4_hash = parse_headers(msgs[3][1])["Ledger-Chain-Hash"]
            check((copy["lastSeq"], copy["lastHash"]) == (4, seq4_hash),
                  f"copy of evil at seq {copy['lastSeq']} {copy['lastHash']}, not 4 {seq4_hash}")
            log(f"    ok: [{label}] the copy stays at seq 4 (the source's hash at 4) and verifies "
                f"(source at {want['lastSeq']})")
            # The refused message was terminated: a rerun does not see it again.
            _, err = run_consumer_to_idle(b.urls(), fleet, 2, 0)
            check("refused" not in err, f"the refused message came again:\n{err[-2000:]}")
            check(verify_ledger(os.path.join(fleet, "evil"))["lastSeq"] == 4, "copy moved past 4 on a rerun")


def header_block(headers):
    return ("NATS/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()


def shipped_headers(cluster, seq, time_ns, chain_hash):
    return {"Nats-Msg-Id": f"{cluster}:{seq}", "Ledger-Cluster": cluster, "Ledger-Seq": str(seq),
            "Ledger-Time": str(time_ns), "Ledger-Chain-Hash": chain_hash}


# A LogRecord (schema/log.capnp) as the ledger encodes it: one segment, the
# root struct's data section right after the segment table and root pointer,
# seq at its offset 0 and timeNs at 16.
SEQ_AT, TIME_AT = 16, 32


def patched_record(payload, seq, time_ns):
    b = bytearray(payload)
    b[SEQ_AT:SEQ_AT + 8] = struct.pack("<Q", seq)
    b[TIME_AT:TIME_AT + 8] = struct.pack("<q", time_ns)
    return bytes(b)


def last_message(nc, cluster):
    m = js_api(nc, "$JS.API.STREAM.MSG.GET.LEDGER", {"last_by_subj": f"ledger.{cluster}.records"})["message"]
    return parse_headers(base64.b64decode(m["hdrs"])), base64.b64decode(m["data"])


def attack_messages(nc):
    """The refused scenario's attacks: (label, subject, header block or None, payload)."""
    h, payload = last_message(nc, "b")
    seq, time_ns, prev = int(h["Ledger-Seq"]), int(h["Ledger-Time"]), h["Ledger-Chain-Hash"]
    check(struct.unpack("<Q", payload[SEQ_AT:SEQ_AT + 8])[0] == seq and
          struct.unpack("<q", payload[TIME_AT:TIME_AT + 8])[0] == time_ns,
          "b's last record does not lay out seq and time where this test patches them")
    nxt = seq + 1
    backwards = patched_record(payload, nxt, time_ns - 1)
    chained = hashlib.sha256(bytes.fromhex(prev) + backwards).hexdigest()
    huge = 2 ** 64 - 1
    far = patched_record(payload, huge, time_ns)
    segment = patched_record(payload, nxt + 2, time_ns)
    segment = struct.pack("<II", 0, 1 << 31) + segment[8:]
    hb = lambda seq_, t, hash_, cluster="b": header_block(shipped_headers(cluster, seq_, t, hash_))
    return seq, [
        ("random bytes", "ledger.b.records", None, os.urandom(300)),
        ("an empty message", "ledger.b.records", None, b""),
        # Each under its own message id: JetStream drops a repeated id.
        ("a truncated record", "ledger.b.records", hb(nxt + 1, time_ns, "0" * 64),
         payload[:len(payload) // 2]),
        ("a segment size of 2^31 words", "ledger.b.records", hb(nxt + 2, time_ns, "0" * 64), segment),
        ("a cluster name with path characters", "ledger.a/b.records", hb(nxt + 3, time_ns, "0" * 64, "a/b"),
         payload),
        ("seq 2^64-1", "ledger.b.records", hb(huge, time_ns, "0" * 64), far),
        ("a chained record whose time goes backwards", "ledger.b.records", hb(nxt, time_ns - 1, chained),
         backwards),
        ("an unknown cluster with a bad hash", "ledger.evil.records",
         hb(1, time_ns, "0" * 64, "evil"), patched_record(payload, 1, time_ns)),
    ]


def scenario_refused(work, rng):
    log("== 6. refused: junk, forged and out-of-window messages never stop the fleet")
    src = {"a": os.path.join(work, "src-a"), "b": os.path.join(work, "src-b")}
    fleet = os.path.join(work, "fleet")
    write_lines(os.path.join(work, "a.jsonl"), gen_events(300, 707))
    b_lines = gen_events(1500, 808)
    write_lines(os.path.join(work, "b0.jsonl"), b_lines[:300])
    write_lines(os.path.join(work, "b1.jsonl"), b_lines[300:])
    run([INGEST, "--ledger", src["a"], "--from", os.path.join(work, "a.jsonl"), "--no-sync"])
    run([INGEST, "--ledger", src["b"], "--from", os.path.join(work, "b0.jsonl"), "--no-sync"])
    with nats_cluster.NatsCluster(os.path.join(work, "nats"), nodes=1) as cluster:
        url = cluster.urls()
        nc = Nats(cluster.url(0))
        try:
            # A duplicate window of 1 s: the forged records squat b's next
            # message id, which the real record may take once it has passed.
            js_api(nc, "$JS.API.STREAM.CREATE.LEDGER",
                   {"name": "LEDGER", "subjects": ["ledger.*.records"], "storage": "file",
                    "num_replicas": 1, "duplicate_window": 1_000_000_000})
            for name in ("a", "b"):
                run([REPLAY, "--ledger", src[name], "publish", "--to", url, "--cluster-name", name],
                    timeout=60)
            b_head, attacks = attack_messages(nc)
            for label, subject, hdrs, payload in attacks:
                _, ack = nc.request(subject, payload, headers=hdrs)
                ack = json.loads(ack)
                check("error" not in ack and not ack.get("duplicate"), f"{label}: not stored: {ack!r}")
        finally:
            nc.close()
        log(f"    a and b published (b at seq {b_head}); {len(attacks)} attacks stored on the stream: "
            + "; ".join(a[0] for a in attacks))
        _, err = run_consumer_to_idle(url, fleet, 2, 3)
        refused = [l for l in err.splitlines() if "refused stream message" in l]
        check(len(refused) == len(attacks), f"{len(refused)} refusals logged, not {len(attacks)}:\n{err[-4000:]}")
        for reason in ("undecodable", "bad-cluster-name", "beyond-window", "not-canonical", "chain"):
            check(any(f"({reason}" in l for l in refused), f"no refusal for {reason}:\n" + "\n".join(refused))
        compare_heads(src, fleet)
        check(sorted(os.listdir(fleet)) == ["a", "b"], f"fleet directory holds {sorted(os.listdir(fleet))}")
        log(f"    ok: consumer exits 3, {len(refused)} refusals logged with their stream sequences; "
            "copies equal their sources; the fleet holds a and b only")

        run([INGEST, "--ledger", src["b"], "--from", os.path.join(work, "b1.jsonl"), "--no-sync"])
        b_last = verify_ledger(src["b"])["lastSeq"]
        run([REPLAY, "--ledger", src["b"], "publish", "--to", url, "--cluster-name", "b",
             "--from-seq", str(b_head + 2)], timeout=60)
        _, err = run_consumer_to_idle(url, fleet, 2, 2, extra=["--max-held-mb", "1"])
        check("held ahead of gaps, the most allowed" in err, f"no held bound reached:\n{err[-3000:]}")
        check(f"records {b_head + 1}..{b_head + 1}" in err, f"gap of b not named:\n{err[-3000:]}")
        log(f"    ok: b's records {b_head + 2}..{b_last} ahead of a gap: at most 1 MiB held, the rest "
            "handed back; consumer exits 2 naming the gap")
        time.sleep(1.2)
        run([REPLAY, "--ledger", src["b"], "publish", "--to", url, "--cluster-name", "b",
             "--from-seq", str(b_head + 1)], timeout=60)
        run_consumer_to_idle(url, fleet, 3, 0)
        compare_heads(src, fleet)
        check(sorted(os.listdir(fleet)) == ["a", "b"], f"fleet directory holds {sorted(os.listdir(fleet))}")
        log("    ok: b's valid records after the refused ones apply; no refused message came again "
            "(exit 0); copies equal their sources")
        # A junk message claiming seq 1 as a's last: a restarted publisher must
        # not take it for a purged stream and send a's whole history again.
        nc = Nats(cluster.url(0))
        try:
            _, ack = nc.request("ledger.a.records", b"junk", headers=header_block({"Ledger-Seq": "1"}))
            check("error" not in json.loads(ack), f"junk not stored: {ack!r}")
            time.sleep(1.2)  # past the duplicate window: a re-send would be stored
            before = js_api(nc, "$JS.API.STREAM.INFO.LEDGER", None)["state"]["messages"]
            _, _, err = run([REPLAY, "--ledger", src["a"], "publish", "--to", url, "--cluster-name", "a"],
                            timeout=60)
            after = js_api(nc, "$JS.API.STREAM.INFO.LEDGER", None)["state"]["messages"]
        finally:
            nc.close()
        check(after == before, f"the publisher sent {after - before} messages again after a junk "
              f"'Ledger-Seq: 1' on its subject\n{err[-2000:]}")
        check("is not this ledger's record" in err, f"no warning about the junk last message:\n{err[-2000:]}")
        log("    ok: a junk 'Ledger-Seq: 1' on a's subject: a rerun publisher warns and resumes after "
            "its mark (0 messages sent again)")


def sign_head(key, cluster, seq, chain_hash):
    """A head signature as a cluster's publisher makes it, by the openssl command."""
    text = f"kueue-dra-ledger fleet head v1\n{cluster}\n{seq}\n{chain_hash}\n".encode()
    # A file, not stdin: openssl signs Ed25519 in one shot and needs the size.
    path = key + ".head"
    with open(path, "wb") as f:
        f.write(text)
    r = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", key, "-rawin", "-in", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    check(r.returncode == 0 and len(r.stdout) == 64, f"openssl pkeyutl -sign: {r.stderr!r}")
    return base64.b64encode(r.stdout).decode()


def forged_next(nc, cluster):
    """A forged next record for `cluster`: its last record's bytes with the
    seq moved on, chained onto its last hash (what anyone on the path can do)."""
    h, payload = last_message(nc, cluster)
    seq, time_ns, prev = int(h["Ledger-Seq"]), int(h["Ledger-Time"]), h["Ledger-Chain-Hash"]
    forged = patched_record(payload, seq + 1, time_ns)
    return seq + 1, time_ns, hashlib.sha256(bytes.fromhex(prev) + forged).hexdigest(), forged


def scenario_trust(work, rng):
    log("== 7. trust: signed cluster histories; forged, unsigned, foreign-signed and unknown "
        "clusters' records refused")
    keys, trusted = os.path.join(work, "keys"), os.path.join(work, "trusted")
    os.makedirs(keys)
    os.makedirs(trusted)
    for name in ("a", "b-old", "b", "evil"):
        run([REPLAY, "keygen", "--out", os.path.join(keys, name + ".key")])
    check(os.stat(os.path.join(keys, "a.key")).st_mode & 0o777 == 0o600, "the private key is not mode 0600")
    run([REPLAY, "keygen", "--out", os.path.join(keys, "a.key")], expect=1)
    shutil.copy(os.path.join(keys, "a.key.pub"), os.path.join(trusted, "a.pub"))
    # b rotates: its file holds its old key and its new one.
    with open(os.path.join(trusted, "b.pub"), "w") as f:
        for name in ("b-old", "b"):
            f.write(open(os.path.join(keys, name + ".key.pub")).read())
    log("    ok: keygen writes KEY (0600) and KEY.pub, refuses to overwrite (exit 1); b.pub holds two keys")

    src = {n: os.path.join(work, "src-" + n) for n in ("a", "b", "evil")}
    b_lines = gen_events(600, 818)
    for name, lines in (("a", gen_events(300, 717)), ("b", b_lines[:300]), ("evil", gen_events(200, 919))):
        write_lines(os.path.join(work, name + ".jsonl"), lines)
        run([INGEST, "--ledger", src[name], "--from", os.path.join(work, name + ".jsonl"), "--no-sync"])
    fleet = os.path.join(work, "fleet")
    with nats_cluster.NatsCluster(os.path.join(work, "nats"), nodes=1) as cluster:
        url = cluster.urls()
        rc, _, err = run([INGEST, "--from-nats", url, "--fleet", fleet, "--exit-when-idle", "1"], expect=1)
        check("--trusted-keys" in err, f"no word of --trusted-keys:\n{err[-1000:]}")
        for flag, value in (("--batch", "3000000000"), ("--seq-window", "0"), ("--max-held-mb", "0")):
            run(consumer_cmd(url, fleet, idle=1, keys=trusted, extra=[flag, value]), expect=1)
        check(not os.path.exists(fleet) or not os.listdir(fleet), "a refused start wrote into the fleet")
        log("    ok: a consumer without --trusted-keys or --allow-unsigned, and --batch 3000000000, "
            "--seq-window 0, --max-held-mb 0: usage errors (exit 1)")
        nc = Nats(cluster.url(0))
        try:
            js_api(nc, "$JS.API.STREAM.CREATE.LEDGER",
                   {"name": "LEDGER", "subjects": ["ledger.*.records"], "storage": "file",
                    "num_replicas": 1, "duplicate_window": 1_000_000_000})
            signer = {"a": "a.key", "b": "b-old.key", "evil": "evil.key"}
            for name, key in signer.items():
                run([REPLAY, "--ledger", src[name], "publish", "--to", url, "--cluster-name", name,
                     "--signing-key", os.path.join(keys, key)], timeout=60)
            # Forged next records for b, each under b's next message id in turn.
            seq, t, chained, forged = forged_next(nc, "b")
            hdrs = shipped_headers("b", seq, t, chained)
            attacks = [("unsigned", hdrs),
                       ("signed by a's key", {**hdrs, "Ledger-Signature": sign_head(
                           os.path.join(keys, "a.key"), "b", seq, chained)}),
                       ("signed by evil's key", {**hdrs, "Ledger-Signature": sign_head(
                           os.path.join(keys, "evil.key"), "b", seq, chained)})]
            for label, h in attacks:
                _, ack = nc.request("ledger.b.records", forged, headers=header_block(h))
                ack = json.loads(ack)
                check("error" not in ack and not ack.get("duplicate"), f"{label}: not stored: {ack}")
                time.sleep(1.1)
        finally:
            nc.close()
        # b's real next records, with its new key, after the forgeries.
        write_lines(os.path.join(work, "b1.jsonl"), b_lines[300:])
        run([INGEST, "--ledger", src["b"], "--from", os.path.join(work, "b1.jsonl"), "--no-sync"])
        run([REPLAY, "--ledger", src["b"], "publish", "--to", url, "--cluster-name", "b",
             "--signing-key", os.path.join(keys, "b.key")], timeout=60)
        log(f"    published a, b (old key, then its new key after 3 forged seq {seq}: unsigned, signed by "
            "a's key, signed by evil's key) and evil (200 events, its own key, no trusted key)")
        _, err = run_consumer_to_idle(url, fleet, 2, 3, keys=trusted)
        refused = [l for l in err.splitlines() if "refused stream message" in l]
        for reason, least in (("unsigned", 1), ("signature", 2), ("unknown-cluster", 1)):
            n = sum(f"({reason}" in l for l in refused)
            check(n >= least, f"{n} refusals for {reason}, not {least} or more:\n" + "\n".join(refused[:20]))
        compare_heads({"a": src["a"], "b": src["b"]}, fleet)
        check(sorted(os.listdir(fleet)) == ["a", "b"], f"fleet directory holds {sorted(os.listdir(fleet))}")
        log(f"    ok: consumer exits 3 with {len(refused)} refusals (unsigned, signature, unknown-cluster); "
            "a and b equal their sources; no directory for evil")
        _, out, _ = run([REPLAY, "--fleet", fleet, "verify", "--trusted-keys", trusted, "-o", "json"])
        heads = {c["cluster"]: c["headSignature"] for c in json.loads(out)["clusters"]}
        check(heads == {"a": "verified", "b": "verified"}, f"head signatures: {heads}")
        wrong = os.path.join(work, "wrong")
        os.makedirs(wrong)
        shutil.copy(os.path.join(trusted, "a.pub"), os.path.join(wrong, "a.pub"))
        shutil.copy(os.path.join(keys, "evil.key.pub"), os.path.join(wrong, "b.pub"))
        rc, out, _ = run([REPLAY, "--fleet", fleet, "verify", "--trusted-keys", wrong, "-o", "json"], expect=3)
        heads = {c["cluster"]: c["headSignature"] for c in json.loads(out)["clusters"]}
        check(heads == {"a": "verified", "b": "bad"}, f"head signatures against the wrong key: {heads}")
        log("    ok: verify --trusted-keys proves both heads (exit 0); with another key for b, b is bad (exit 3)")
        unsigned = os.path.join(work, "fleet-unsigned")
        # Its own durable, from the stream's start; unsigned, it takes the forged
        # b 301 and evil on their chains, and refuses b's real records (exit 2 or 3).
        run(consumer_cmd(url, unsigned, idle=2, durable="unsigned"), expect=None)
        check(sorted(os.listdir(unsigned)) == ["a", "b", "evil"], "an unsigned fleet refused a cluster")
        _, out, _ = run([QUERY, "--fleet", unsigned, "state", "--at", T2, "-o", "json"])
        check(all(c.get("signed") is False for c in json.loads(out)["clusters"]),
              "an --allow-unsigned fleet's answers do not say unsigned")
        _, out, _ = run([QUERY, "--fleet", unsigned, "report", "--from", T1, "--to", T2, "--by", "cluster",
                         "-o", "json"])
        check(json.loads(out).get("unsignedClusters") == ["a", "b", "evil"],
              f"the fleet report does not name the unsigned copies: {out[:300]}")
        _, out, _ = run([REPLAY, "--fleet", unsigned, "verify", "-o", "json"])
        heads = {c["cluster"]: c["headSignature"] for c in json.loads(out)["clusters"]}
        check(set(heads.values()) == {"unsigned"}, f"verify of an unsigned fleet: {heads}")
        _, out, _ = run([REPLAY, "--fleet", unsigned, "verify", "-o", "table"])
        check("head signature: unsigned" in out, f"verify's table does not say unsigned:\n{out[-1000:]}")
        log("    ok: an --allow-unsigned fleet's answers (state, report) and verify say the copies are unsigned")


def http_status(url):
    import urllib.error
    import urllib.request
    try:
        return urllib.request.urlopen(url, timeout=2).status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def wait_for(what, cond, limit=60, proc=None, err_path=None, poll=0.05):
    t = time.monotonic()
    while not cond():
        check(proc is None or proc.poll() is None,
              f"{what}: the consumer exited {proc and proc.returncode}\n{tail(err_path) if err_path else ''}")
        check(time.monotonic() - t < limit, f"{what}: not within {limit} s\n{tail(err_path) if err_path else ''}")
        time.sleep(poll)
    return time.monotonic() - t


def scenario_progress(work, rng):
    log("== 8. progress: a consumer stopped (SIGSTOP) while records arrive; its durable and the "
        "stream deleted under it")
    src = os.path.join(work, "src-a")
    fleet = os.path.join(work, "fleet")
    lines = gen_events(6000, 929)
    parts = [lines[:1000], lines[1000:3000], lines[3000:5000], lines[5000:]]
    for i, part in enumerate(parts):
        write_lines(os.path.join(work, f"a{i}.jsonl"), part)

    def record_and_publish(i, url):
        run([INGEST, "--ledger", src, "--from", os.path.join(work, f"a{i}.jsonl"), "--no-sync"])
        run([REPLAY, "--ledger", src, "publish", "--to", url, "--cluster-name", "a"], timeout=60)
        return verify_ledger(src)["lastSeq"], verify_ledger(src)["lastHash"]

    copy = os.path.join(fleet, "a")
    with nats_cluster.NatsCluster(os.path.join(work, "nats"), nodes=1) as cluster:
        url = cluster.urls()
        head = record_and_publish(0, url)
        port = nats_cluster.free_ports(1)[0]
        err_path = os.path.join(work, "consumer-stopped.err")
        p = spawn(consumer_cmd(url, fleet, idle=2, extra=["--listen", f"127.0.0.1:{port}"]),
                  stderr_path=err_path)
        wait_for("the copy reaches the source", lambda: os.path.isdir(copy) and head_of(copy) == head,
                 proc=p, err_path=err_path)
        p.send_signal(signal.SIGSTOP)
        head = record_and_publish(1, url)
        time.sleep(3)  # longer than --exit-when-idle
        p.send_signal(signal.SIGCONT)
        rc = p.wait(60)
        check(rc == 0, f"the stopped consumer exited {rc}\n{tail(err_path)}")
        check(head_of(copy) == head, f"stopped while seq {head[0]} was published, the consumer exited "
              f"with the copy at {head_of(copy)}\n{tail(err_path)}")
        log(f"    ok: SIGSTOP'd while records 1001.. were published, 3 s past --exit-when-idle 2, then "
            f"SIGCONT: it read everything (copy at seq {head[0]}) before exiting 0")

        port = nats_cluster.free_ports(1)[0]
        err_path = os.path.join(work, "consumer-running.err")
        # 10 messages a fetch: see below.
        p = spawn(consumer_cmd(url, fleet, extra=["--listen", f"127.0.0.1:{port}", "--batch", "10"]),
                  stderr_path=err_path)
        readyz = f"http://127.0.0.1:{port}/readyz"
        wait_for("/readyz 200", lambda: http_status(readyz) == 200, proc=p, err_path=err_path)
        # /readyz is 503 from the moment the consumer finds its durable gone
        # until it has caught up again. A durable created anew reads the
        # stream from its start (the copy drops what it holds as repeats),
        # so that window lasts as long as reading the whole stream again;
        # with nothing pending it could pass between two looks. Deleted while
        # the consumer is stopped and 2,000 records are published, with
        # 5,000 to read again 10 a fetch, it lasts hundreds of fetches
        # (about half a second on an idle machine, longer on a busy one),
        # which a look every 10 ms does not miss.
        p.send_signal(signal.SIGSTOP)
        head = record_and_publish(2, url)
        nc = Nats(cluster.url(0))
        try:
            js_api(nc, "$JS.API.CONSUMER.DELETE.LEDGER.fleet", None)
        finally:
            nc.close()
        p.send_signal(signal.SIGCONT)
        wait_for("/readyz 503 once the durable is found gone", lambda: http_status(readyz) == 503,
                 proc=p, err_path=err_path, poll=0.01)
        behind = head_of(copy)
        check("is gone; creating it again" in tail(err_path, 20000),
              f"/readyz 503 without the durable found gone\n{tail(err_path)}")
        took = wait_for("/readyz 200 again after the durable was deleted",
                        lambda: http_status(readyz) == 200, proc=p, err_path=err_path, poll=0.01)
        # Read after the 200: the copy only moves forward, so it was at the
        # source's head when /readyz said 200 (caught up, not just created).
        check(head_of(copy) == head, f"/readyz 200 with the copy at {head_of(copy)}, the source at {head}")
        log(f"    ok: durable deleted under the consumer while 2,000 records were published: /readyz "
            f"503 (the copy at seq {behind[0] if behind else None}) until it was created again and the "
            f"copy reached seq {head[0]}, then 200 ({took:.2f} s of 503)")
        nc = Nats(cluster.url(0))
        try:
            js_api(nc, "$JS.API.STREAM.DELETE.LEDGER", None)
        finally:
            nc.close()
        wait_for("the consumer notices the stream is gone",
                 lambda: tail(err_path, 20000).count("is gone; creating it again") >= 2, proc=p,
                 err_path=err_path)
        head = record_and_publish(3, url)
        took = wait_for("the copy catches up after the stream was deleted",
                        lambda: head_of(copy) == head and http_status(readyz) == 200, proc=p, err_path=err_path)
        log(f"    ok: stream deleted under the running consumer: created again, the copy reached seq "
            f"{head[0]} {took:.1f} s after the next publish, /readyz 200")
        p.send_signal(signal.SIGTERM)
        check(p.wait(30) == 0, f"SIGTERM: exit {p.returncode}\n{tail(err_path)}")
        compare_heads({"a": src}, fleet)


def scenario_squat(work, rng):
    log("== 9. squat: junk on another subject takes a's next message ids first")
    src = os.path.join(work, "src-a")
    fleet = os.path.join(work, "fleet")
    lines = gen_events(600, 939)
    write_lines(os.path.join(work, "a0.jsonl"), lines[:300])
    write_lines(os.path.join(work, "a1.jsonl"), lines[300:])
    run([INGEST, "--ledger", src, "--from", os.path.join(work, "a0.jsonl"), "--no-sync"])
    with nats_cluster.NatsCluster(os.path.join(work, "nats"), nodes=1) as cluster:
        url = cluster.urls()
        run([REPLAY, "--ledger", src, "publish", "--to", url, "--cluster-name", "a"], timeout=60)
        head = verify_ledger(src)["lastSeq"]
        squatted = [head + 1, head + 5]
        nc = Nats(cluster.url(0))
        try:
            for seq in squatted:
                _, ack = nc.request("ledger.zzz.records", b"junk",
                                    headers=header_block({"Nats-Msg-Id": f"a:{seq}"}))
                check("error" not in json.loads(ack), f"junk not stored: {ack!r}")
        finally:
            nc.close()
        run([INGEST, "--ledger", src, "--from", os.path.join(work, "a1.jsonl"), "--no-sync"])
        _, _, err = run([REPLAY, "--ledger", src, "publish", "--to", url, "--cluster-name", "a"], timeout=60)
        for seq in squatted:
            check(f"publishing it again as a:{seq}:" in err, f"seq {seq}'s squatted id not noticed:\n{err[-2000:]}")
        log(f"    ok: the publisher found ids a:{squatted[0]} and a:{squatted[1]} held by junk and sent "
            "those records again under their hashed ids (exit 0)")
        run_consumer_to_idle(url, fleet, 2, 3)
        compare_heads({"a": src}, fleet)
        check(sorted(os.listdir(fleet)) == ["a"], f"fleet directory holds {sorted(os.listdir(fleet))}")
        log("    ok: the junk refused, the copy equals its source")


def deploy_authorization():
    """The authorization block of deploy/fleet/nats.yaml's nats.conf, as lines."""
    import yaml
    with open(os.path.join(SRC_ROOT, "deploy", "fleet", "nats.yaml")) as f:
        config_map = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "ConfigMap")
    lines = config_map["data"]["nats.conf"].splitlines()
    first = next(i for i, l in enumerate(lines) if l.strip().startswith("authorization {"))
    depth = 0
    for i in range(first, len(lines)):
        code = lines[i].split("#", 1)[0]
        depth += code.count("{") - code.count("}")
        if depth == 0:
            return lines[first:i + 1]
    raise Failure("nats.yaml: the authorization block does not end")


def expect_violation(url, user, password, what, act):
    """act(nc) as user must end in the server's Permissions Violation."""
    nc = Nats(url, user=user, password=password)
    try:
        act(nc)
        raise Failure(f"user {user} could {what}")
    except Failure as e:
        check("Permissions Violation" in str(e), f"user {user}, {what}: {e}")
    finally:
        nc.close()
    log(f"    ok: user {user} cannot {what}: Permissions Violation")


def scenario_users(work, rng):
    log("== 10. users: deploy/fleet/nats.yaml's NATS users; each cluster publishes only on its own "
        "subject")
    config = deploy_authorization()
    variables = sorted({w[1:].rstrip(",}") for l in config for w in l.split("#", 1)[0].split()
                        if w.startswith("$") and not w.startswith("$JS")})
    # Sample passwords as the header of nats.yaml makes them (a letter, then hex digits).
    env = {v: "p" + hashlib.sha256(v.encode()).hexdigest()[:32] for v in variables}
    users = {}
    for l in config:
        words = l.replace(",", " ").replace("{", " ").split()
        if "user:" in words and "password:" in words:
            users[words[words.index("user:") + 1]] = env[words[words.index("password:") + 1][1:]]
    clusters = sorted(u for u in users if u != "fleet")
    check("fleet" in users and len(clusters) >= 2, f"nats.yaml: users {sorted(users)}, expected fleet "
          "and two clusters")
    files = {}
    for name, password in users.items():
        files[name] = os.path.join(work, name + ".user")
        with open(files[name], "w") as f:
            f.write(f"{name}:{password}\n")
    a, b = clusters[0], clusters[1]
    srcs = {}
    for name, seed in ((a, 949), (b, 959)):
        srcs[name] = os.path.join(work, "src-" + name)
        lines = gen_events(300, seed)
        write_lines(os.path.join(work, name + ".jsonl"), lines[:200])
        write_lines(os.path.join(work, name + "-more.jsonl"), lines[200:])
    fleet = os.path.join(work, "fleet")
    with nats_cluster.NatsCluster(os.path.join(work, "nats"), nodes=1, extra_config=config,
                                  env=env) as cluster:
        url = cluster.urls()
        # The two ways a cluster publishes: the sidecar's ledger-ingest
        # --publish for a, `ledger-replay publish` for b.
        run([INGEST, "--ledger", srcs[a], "--from", os.path.join(work, a + ".jsonl"), "--no-sync",
             "--publish", url, "--cluster-name", a, "--nats-user-file", files[a]], timeout=60)
        run([INGEST, "--ledger", srcs[b], "--from", os.path.join(work, b + ".jsonl"), "--no-sync"])
        run([REPLAY, "--ledger", srcs[b], "publish", "--to", url, "--cluster-name", b,
             "--nats-user-file", files[b]], timeout=60)
        log(f"    {a} (ledger-ingest --publish) and {b} (ledger-replay publish) published, each as "
            "its own NATS user")
        # Twice: the second run finds the durable and re-creates it at its
        # floor (a deletion and a creation, both the fleet user's), and b's
        # publisher resumes after the last message on its subject.
        run_consumer_to_idle(url, fleet, 2, 0, extra=["--nats-user-file", files["fleet"]])
        run([INGEST, "--ledger", srcs[b], "--from", os.path.join(work, b + "-more.jsonl"), "--no-sync"])
        run([REPLAY, "--ledger", srcs[b], "publish", "--to", url, "--cluster-name", b,
             "--nats-user-file", files[b]], timeout=60)
        run_consumer_to_idle(url, fleet, 2, 0, extra=["--nats-user-file", files["fleet"]])
        compare_heads(srcs, fleet)
        # Every call the programs made was allowed: nats-server logs each
        # one it denies.
        with open(cluster.log_path(0), errors="replace") as f:
            denied = [l.strip() for l in f if "Violation" in l]
        check(not denied, "the programs made calls their users may not:\n" + "\n".join(denied[:10]))
        log("    ok: nats-server denied none of the programs' calls")

        junk = header_block({"Ledger-Seq": "301"})
        expect_violation(cluster.url(0), a, users[a], f"publish on ledger.{b}.records",
                         lambda nc: nc.request(f"ledger.{b}.records", b"junk", headers=junk))
        expect_violation(cluster.url(0), a, users[a], "delete the fleet's durable consumer",
                         lambda nc: nc.request("$JS.API.CONSUMER.DELETE.LEDGER.fleet"))
        expect_violation(cluster.url(0), a, users[a], "delete the stream",
                         lambda nc: nc.request("$JS.API.STREAM.DELETE.LEDGER"))
        expect_violation(cluster.url(0), a, users[a], "read the fleet's replies",
                         lambda nc: nc.subscribe("_INBOX.fleet.>"))
        expect_violation(cluster.url(0), "fleet", users["fleet"], f"publish on ledger.{a}.records",
                         lambda nc: nc.request(f"ledger.{a}.records", b"junk", headers=junk))
        with open(cluster.log_path(0), errors="replace") as f:
            check(sum("Violation" in l for l in f) >= 5, "nats-server logged no denial (so the check of "
                  "the programs' calls above proves nothing)")
        run_consumer_to_idle(url, fleet, 2, 0, extra=["--nats-user-file", files["fleet"]])
        compare_heads(srcs, fleet)
        dotted = os.path.join(work, "dotted.user")
        with open(dotted, "w") as f:
            f.write(f"fleet.x:{users['fleet']}\n")
        _, _, err = run(consumer_cmd(url, fleet, idle=1, extra=["--nats-user-file", dotted]), expect=1)
        check("subject token" in err, f"a user name with '.': {err[-1000:]}")
        log("    ok: a user name that is not one subject token (its replies' prefix): exit 1")
        check(sorted(os.listdir(fleet)) == sorted(srcs), f"fleet directory holds {sorted(os.listdir(fleet))}")


class FakeApiServer:
    """Just enough of the Kubernetes API for `ledger-ingest --watch --resources
    namespaces`: discovery of core v1, a LIST of the namespaces so far, and a
    watch that streams each namespace added later (one JSON line each)."""

    def __init__(self, names):
        import http.server
        self.lock = threading.Condition()
        self.items = [self.namespace(n, i + 1) for i, n in enumerate(names)]
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):
                pass

            def reply(self, body):
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path = self.path.split("?")[0]
                if path == "/api/v1":
                    self.reply({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                        {"name": "namespaces", "kind": "Namespace", "namespaced": False,
                         "verbs": ["list", "watch"]}]})
                elif path == "/api/v1/namespaces" and "watch=1" not in self.path:
                    with fake.lock:
                        items = list(fake.items)
                    self.reply({"kind": "NamespaceList", "apiVersion": "v1",
                                "metadata": {"resourceVersion": str(len(items))}, "items": items})
                elif path == "/api/v1/namespaces":
                    rv = int(self.path.split("resourceVersion=")[1].split("&")[0] or 0)
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    sent = rv
                    deadline = time.monotonic() + 30
                    try:
                        while time.monotonic() < deadline:
                            with fake.lock:
                                fake.lock.wait_for(lambda: len(fake.items) > sent, timeout=0.5)
                                new = fake.items[sent:]
                            for obj in new:
                                self.wfile.write((json.dumps({"type": "ADDED", "object": obj}) + "\n").encode())
                                sent += 1
                            self.wfile.flush()
                    except OSError:
                        pass
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @staticmethod
    def namespace(name, rv):
        return {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": str(rv),
                             "creationTimestamp": "2026-11-20T08:00:00Z"}}

    def add(self, names):
        with self.lock:
            for n in names:
                self.items.append(self.namespace(n, len(self.items) + 1))
            self.lock.notify_all()

    def stop(self):
        self.server.shutdown()


def metric(url, name):
    """The value of an unlabelled metric on a /metrics page, or None."""
    import urllib.request
    try:
        text = urllib.request.urlopen(url, timeout=2).read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def scenario_sidecar(work, rng):
    log("== 5. sidecar: ledger-ingest --watch --publish while NATS is down, then up")
    api = FakeApiServer([f"ns-{i}" for i in range(40)])
    nats_port, http_port = nats_cluster.free_ports(2)
    url = f"nats://127.0.0.1:{nats_port}"
    metrics = f"http://127.0.0.1:{http_port}/metrics"
    src = os.path.join(work, "src-sidecar")
    fleet = os.path.join(work, "fleet-sidecar")
    err_path = os.path.join(work, "sidecar.err")
    cmd = [INGEST, "--watch", "--ledger", src, "--server", api.url, "--resources", "namespaces",
           "--listen", f"127.0.0.1:{http_port}", "--no-sync", "--checkpoint-every", "0",
           "--verify-every", "0", "--publish", url, "--cluster-name", "side"]
    p = spawn(cmd, stderr_path=err_path)
    cluster = None

    def wait_metric(name, ok, what, limit=30):
        t = time.monotonic()
        while True:
            v = metric(metrics, name)
            if v is not None and ok(v):
                return v
            check(p.poll() is None, f"the sidecar exited {p.returncode}\n{tail(err_path)}")
            check(time.monotonic() - t < limit, f"{what}: {name} is {v} after {limit} s\n{tail(err_path)}")
            time.sleep(0.1)
    try:
        wait_metric("ledger_head_seq", lambda v: v >= 40, "the LIST is not recorded while NATS is down")
        api.add([f"ns-{i}" for i in range(40, 70)])
        wait_metric("ledger_head_seq", lambda v: v >= 70, "watched changes are not recorded while NATS is down")
        check(metric(metrics, "ledger_publish_connected") == 0, "publish_connected is not 0 with NATS down")
        lag = wait_metric("ledger_publish_lag_records", lambda v: v >= 70, "the publish lag does not count")
        log(f"    ok: NATS down: 70 records committed, ledger_publish_lag_records {lag:.0f}")
        cluster = nats_cluster.NatsCluster(os.path.join(work, "nats-sidecar"), nodes=1,
                                           client_ports=[nats_port])
        wait_metric("ledger_publish_lag_records", lambda v: v == 0, "nothing published after NATS came up", 60)
        check(metric(metrics, "ledger_publish_connected") == 1, "publish_connected is not 1 with NATS up")
        log("    ok: NATS up: the lag drains to 0")
        api.add([f"ns-{i}" for i in range(70, 80)])
        wait_metric("ledger_publish_seq", lambda v: v >= 80, "a change after NATS came up is not published")
        run_consumer_to_idle(url, fleet, 2, 0)
        compare_heads({"side": src}, fleet)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(30)
        check(rc == 0, f"the sidecar exited {rc} on SIGTERM\n{tail(err_path)}")
        log("    ok: the copy's head equals the sidecar's ledger; SIGTERM exits 0")
    finally:
        cleanup_procs()
        api.stop()
        if cluster:
            cluster.stop()


SCENARIOS = [("main", scenario_main), ("late", scenario_late), ("gap", scenario_gap),
             ("tamper", scenario_tamper), ("sidecar", scenario_sidecar), ("refused", scenario_refused),
             ("trust", scenario_trust), ("progress", scenario_progress),
             ("squat", scenario_squat), ("users", scenario_users)]


def main():
    nats_cluster.require_nats_server()
    seed = int(os.environ.get("FLEET_TEST_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    only = [s for s in os.environ.get("FLEET_TEST_ONLY", "").split(",") if s]
    work = tempfile.mkdtemp(prefix="fleet-test-")
    log(f"fleet test: seed {seed} (FLEET_TEST_SEED), work dir {work}")
    started = time.monotonic()
    failed = []
    reasons = []  # (scenario, first line of its failure), repeated at the end
    for name, fn in SCENARIOS:
        if only and name not in only:
            continue
        t = time.monotonic()
        d = os.path.join(work, name)
        os.makedirs(d)
        try:
            fn(d, rng)
            log(f"   {name}: passed in {time.monotonic() - t:.1f}s")
        except Failure as e:
            failed.append(name)
            reasons.append((name, str(e).splitlines()[0] if str(e) else "(no message)"))
            log(f"FAIL: {name} ({time.monotonic() - t:.1f}s): {e}")
        except Exception as e:
            failed.append(name)
            reasons.append((name, f"{type(e).__name__}: {e}"))
            log(f"FAIL: {name} ({time.monotonic() - t:.1f}s):\n{traceback.format_exc()}")
        finally:
            cleanup_procs()
    total = time.monotonic() - started
    if failed:
        # Again at the end: CI keeps only the log's tail.
        for name, reason in reasons:
            print(f"  {name}: {reason[:500]}", flush=True)
        print(f"FAIL: {', '.join(failed)} ({total:.1f}s, seed {seed}, work dir kept: {work})", flush=True)
        return 1
    if os.environ.get("FLEET_TEST_KEEP"):
        log(f"work dir kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print(f"PASS: fleet test in {total:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

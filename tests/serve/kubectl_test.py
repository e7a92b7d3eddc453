#!/usr/bin/env python3
"""Stock kubectl against `ledger-query serve` (docs/reference.md, "serve").

Ingests the demo stream and a generated one, starts `serve` on loopback and
runs the machine's kubectl, unmodified, against past moments: its table and
-o json output must equal the state report at the same moment; chunked
lists (limit/continue) and label selectors must select what the objects
say; `kubectl get -w` must see the recorded changes in the order of the
stream; bad input must come back as API errors, never a crash; a token
guards the server when given.

env: LEDGER_INGEST, LEDGER_QUERY, LEDGER_GEN (the built programs),
     DEMO_STREAM (tools/demo/cluster-events.jsonl). Exit 77 (skip) without kubectl.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import ssl
import urllib.error
import urllib.request

KUBECTL = shutil.which("kubectl")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120, **kw)


class Server:
    def __init__(self, ledger, *extra):
        self.proc = subprocess.Popen(
            [os.environ["LEDGER_QUERY"], "--ledger", ledger, "serve", "--listen", "127.0.0.1:0", *extra],
            stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        self.port = None
        while time.time() < deadline and self.port is None:
            line = self.proc.stderr.readline()
            m = re.search(r"serving .* on https?://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
        if self.port is None:
            raise SystemExit("serve did not start")

    def url(self, moment):
        return "http://127.0.0.1:%d/at/%s" % (self.port, moment)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        check(self.proc.returncode == 0, "serve exits 0 on SIGTERM (got %s)" % self.proc.returncode)


def raw(url, token=None, context=None):
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=30, context=context) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def kubectl(server, *args, token=None):
    extra = ["--token", token] if token else []
    return run(KUBECTL, "--server", server, *extra, *args)


def watched(proc, count, with_time=False):
    """The first `count` events a `kubectl get -w --output-watch-events`
    prints, as "TYPE NAME" (and the RECORDED column, the last, when
    `with_time`) (30 s at most); stops kubectl."""
    got = []
    deadline = time.time() + 30
    while len(got) < count and time.time() < deadline:
        fields = proc.stdout.readline().split()
        if len(fields) >= 3 and fields[0] != "EVENT":
            got.append("%s %s" % (fields[0], fields[2]) + (" " + fields[-1] if with_time else ""))
    proc.kill()
    proc.wait()
    return got


def state(ledger, seq):
    out = run(os.environ["LEDGER_QUERY"], "--ledger", ledger, "state", "--seq", str(seq), "-o", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def ingest(ledger, stream):
    out = run(os.environ["LEDGER_INGEST"], "--ledger", ledger, "--from", stream)
    assert out.returncode == 0, out.stderr


def lists_equal_state(srv, ledger, seq):
    url = srv.url("seq:%d" % seq)
    report = state(ledger, seq)
    out = kubectl(url, "get", "clusterqueues", "-o", "json")
    check(out.returncode == 0, "get clusterqueues -o json at seq %d: %s" % (seq, out.stderr))
    names = sorted(i["metadata"]["name"] for i in json.loads(out.stdout)["items"])
    check(names == sorted(c["name"] for c in report["clusterQueues"]),
          "ClusterQueues at seq %d equal the state report's" % seq)
    out = kubectl(url, "get", "workloads", "-A", "-o", "json")
    got = sorted((i["metadata"]["namespace"], i["metadata"]["name"]) for i in json.loads(out.stdout)["items"])
    want = sorted((w["namespace"], w["name"]) for w in report["workloads"])
    check(got == want, "Workloads at seq %d equal the state report's (%d vs %d)" % (seq, len(got), len(want)))
    # The table: one row per Workload, Kueue's printer columns.
    out = kubectl(url, "get", "workloads", "-A")
    lines = out.stdout.strip().splitlines()
    if want:
        check(lines[0].split()[:4] == ["NAMESPACE", "NAME", "QUEUE", "RESERVED"],
              "workload table header is Kueue's: %r" % lines[0])
        check(len(lines) == len(want) + 1, "workload table has one row per Workload")
    # The ledger's own resources: QueueUsage rows carry the report's counts.
    out = kubectl(url, "get", "queueusages", "-o", "json")
    usages = {i["metadata"]["name"]: i for i in json.loads(out.stdout)["items"]}
    for cq in report["clusterQueues"]:
        u = usages.get(cq["name"])
        check(u is not None and u["status"]["quotas"] == cq["quotas"] and
              u["status"]["workloads"] == cq["workloads"] and
              u["status"]["draHeld"] == cq["draHeld"],
              "QueueUsage %s equals the state report's quota rows at seq %d" % (cq["name"], seq))
    out = kubectl(url, "get", "queueusages")
    header = out.stdout.splitlines()[0].split() if out.stdout else []
    check(header[-2:] == ["USAGE", "HELD"], "queueusages table header ends USAGE HELD: %r" % header)
    for cq in report["clusterQueues"]:
        row = [l for l in out.stdout.splitlines() if l.split()[0] == cq["name"]]
        check(len(row) == 1 and row[0].split()[2] == str(cq["workloads"]["pending"]),
              "queueusages table row for %s shows its pending count" % cq["name"])
    out = kubectl(url, "get", "ledgerfindings", "-o", "json")
    check(len(json.loads(out.stdout)["items"]) == len(report["findings"]),
          "one LedgerFinding per finding at seq %d" % seq)
    return report


def table(out):
    """kubectl's table output as (header, rows): columns split at two or
    more spaces, so a cell with one space ("2 (5m ago)") stays whole."""
    lines = [l for l in out.splitlines() if l.strip()]
    split = lambda l: re.split(r"\s{2,}", l.strip())
    return (split(lines[0]), [split(l) for l in lines[1:]]) if lines else ([], [])


def pod_cells(pod):
    """READY, STATUS and NODE as Kubernetes' printPod writes them, for a pod
    without init containers (kubernetes pkg/printers/internalversion)."""
    status = pod.get("status", {})
    reason = status.get("reason") or status.get("phase", "")
    ready = 0
    for c in reversed(status.get("containerStatuses", [])):
        state = c.get("state", {})
        if state.get("waiting", {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state:
            t = state["terminated"]
            reason = t.get("reason") or ("Signal:%d" % t["signal"] if t.get("signal")
                                         else "ExitCode:%d" % t.get("exitCode", 0))
        elif c.get("ready") and "running" in state:
            ready += 1
    if pod["metadata"].get("deletionTimestamp") and status.get("phase") not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return ["%d/%d" % (ready, len(pod["spec"]["containers"])), reason,
            pod["spec"].get("nodeName") or "<none>"]


def claim_cells(claim):
    """STATE as Kubernetes' resourceClaimState writes it; the ledger's
    ALLOCATED (POOL/DEVICE) and RESERVED FOR (RESOURCE/NAME)."""
    status = claim.get("status", {})
    states = ["deleted"] if claim["metadata"].get("deletionTimestamp") else []
    if status.get("allocation") is None:
        if not states:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    results = (status.get("allocation") or {}).get("devices", {}).get("results", [])
    allocated = ",".join("%s/%s" % (r["pool"], r["device"]) for r in results) or "<none>"
    reserved = ",".join("%s/%s" % (r["resource"], r["name"])
                        for r in status.get("reservedFor", [])) or "<none>"
    return [",".join(states), allocated, reserved]


def core_tables(srv, stream, seq):
    """Pods and ResourceClaims get Kubernetes' printer columns (and -o
    wide's), WorkloadHistories their record count, two-flavor QueueUsages
    name each flavor."""
    url = srv.url("seq:%d" % seq)
    pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in
            json.loads(kubectl(url, "get", "pods", "-A", "-o", "json").stdout)["items"]}
    header, rows = table(kubectl(url, "get", "pods", "-A").stdout)
    check(header == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"],
          "pods table header is Kubernetes': %r" % header)
    header, rows = table(kubectl(url, "get", "pods", "-A", "-o", "wide").stdout)
    check(header == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE",
                     "NOMINATED NODE", "READINESS GATES"], "pods -o wide header: %r" % header)
    check(len(rows) == len(pods) > 0, "one pod row per pod at seq %d" % seq)
    for row in rows:
        pod = pods[(row[0], row[1])]
        check([row[2], row[3], row[7]] == pod_cells(pod),
              "pod %s/%s: READY STATUS NODE %r, want %r" % (row[0], row[1],
                                                            [row[2], row[3], row[7]], pod_cells(pod)))
    claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in
              json.loads(kubectl(url, "get", "resourceclaims", "-A", "-o", "json").stdout)["items"]}
    header, rows = table(kubectl(url, "get", "resourceclaims", "-A").stdout)
    check(header == ["NAMESPACE", "NAME", "STATE", "AGE"], "claims header is Kubernetes': %r" % header)
    header, rows = table(kubectl(url, "get", "resourceclaims", "-A", "-o", "wide").stdout)
    check(header == ["NAMESPACE", "NAME", "STATE", "AGE", "ALLOCATED", "RESERVED FOR"],
          "claims -o wide header: %r" % header)
    check(len(rows) == len(claims) > 0, "one claim row per claim at seq %d" % seq)
    states = set()
    for row in rows:
        want = claim_cells(claims[(row[0], row[1])])
        states.add(want[0])
        check([row[2], row[4], row[5]] == want, "claim %s: %r, want %r" % (row[1], row[2:], want))
    check("allocated,reserved" in states, "some claim is allocated and reserved: %r" % states)
    # RECORDS: the Workload's records up to the moment (one per stream line).
    records = {}
    with open(stream) as f:
        for line in f.readlines()[:seq]:
            o = json.loads(line)["object"]
            if o.get("kind") == "Workload":
                key = (o["metadata"]["namespace"], o["metadata"]["name"])
                records[key] = records.get(key, 0) + 1
    header, rows = table(kubectl(url, "get", "wlh", "-A").stdout)
    check(header[-1] == "RECORDS" and rows, "wlh table ends RECORDS: %r" % header)
    for row in rows:
        check(row[-1] == str(records.get((row[0], row[1]))),
              "wlh %s/%s RECORDS %s, want %s" % (row[0], row[1], row[-1], records.get((row[0], row[1]))))
    # Two flavors: each named once, before its resources.
    usages = json.loads(kubectl(url, "get", "queueusages", "-o", "json").stdout)["items"]
    header, rows = table(kubectl(url, "get", "queueusages").stdout)
    for u in usages:
        groups = {}
        for q in u["status"]["quotas"]:
            groups.setdefault(q["flavor"], []).append("%s %s/%s" % (q["resource"], q["reserved"], q["nominal"]))
        want = "; ".join("%s: %s" % (f, ", ".join(r)) for f, r in groups.items()) if len(groups) > 1 \
            else ", ".join(r for rs in groups.values() for r in rs)
        row = [r for r in rows if r[0] == u["metadata"]["name"]]
        check(len(groups) > 1, "queue %s has two flavors" % u["metadata"]["name"])
        check(len(row) == 1 and row[0][5] == want,
              "queueusages USAGE of %s names its flavors: %r, want %r" % (u["metadata"]["name"], row, want))


def held_column(srv, demo):
    """The demo's end: job-legacy-infer holds a GPU team-b's queue charges
    nothing for; `kubectl get queueusages` shows it held and uncharged."""
    last = json.loads(urllib.request.urlopen(
        "http://127.0.0.1:%d/ledger/v1/range" % srv.port).read())["lastSeq"]
    report = lists_equal_state(srv, demo, last)
    out = kubectl(srv.url("seq:%d" % last), "get", "queueusages")
    row = [l for l in out.stdout.splitlines() if l.split()[:1] == ["team-b"]]
    check(len(row) == 1 and "nvidia.com/gpu 1 (1 uncharged)" in row[0],
          "queueusages row for team-b shows the uncharged GPU held: %r" % row)
    held = [h for cq in report["clusterQueues"] if cq["name"] == "team-b"
            for h in cq["draHeld"]["quota"] if h["resource"] == "nvidia.com/gpu"]
    check(held == [{"flavor": "-", "resource": "nvidia.com/gpu", "held": "1", "uncharged": "1"}],
          "the state report's draHeld.quota for team-b's GPU: %r" % held)


def why_json(ledger, target):
    out = run(os.environ["LEDGER_QUERY"], "--ledger", ledger, "why", target, "-o", "json")
    check(out.returncode == 0, "ledger-query why %s: %s" % (target, out.stderr))
    return json.loads(out.stdout or "{}")


def workload_whys(srv, ledger, ns, name, evicted=None):
    """kubectl get workloadwhys/wlw: the table sums `ledger-query why`'s
    pending intervals, counts its evictions and the non-conforming ones; a
    get -o yaml carries its timeline."""
    url = srv.url("now")
    want = why_json(ledger, "%s/%s" % (ns, name))
    header, rows = table(kubectl(url, "get", "workloadwhys", "-A").stdout)
    check(header == ["NAMESPACE", "NAME", "STATE", "WAITED", "EVICTIONS", "UNEXPECTED", "AGE"],
          "workloadwhys header: %r" % header)
    row = [r for r in rows if r[:2] == [ns, name]]
    unexpected = sum(1 for e in want["evictions"] if e["conforms"] is False)
    check(len(row) == 1 and row[0][2] == want["intervals"][-1]["state"]
          and row[0][4] == str(len(want["evictions"])) and row[0][5] == str(unexpected),
          "workloadwhys row of %s/%s: %r (why: %d evictions, %d unexpected)"
          % (ns, name, row, len(want["evictions"]), unexpected))
    short = table(kubectl(url, "get", "wlw", "-n", ns).stdout)[1]
    check([r[0] for r in short] == sorted(r[1] for r in rows if r[0] == ns), "wlw -n %s: %r" % (ns, short))
    # -o yaml prints the timeline (compared through -o json: YAML reads an
    # unquoted time as a datetime).
    out = kubectl(url, "get", "workloadwhy", "-n", ns, name, "-o", "yaml")
    check(out.returncode == 0 and "intervals:" in out.stdout and "blockedBy:" in out.stdout
          and ("preemptor:" in out.stdout) == bool(want["evictions"]),
          "workloadwhy -o yaml of %s/%s: %s%s" % (ns, name, out.stdout[:400], out.stderr))
    out = kubectl(url, "get", "workloadwhy", "-n", ns, name, "-o", "json")
    status = json.loads(out.stdout or "{}").get("status", {})
    check(out.returncode == 0 and status.get("intervals") == want["intervals"]
          and status.get("evictions") == want["evictions"],
          "workloadwhy -o json of %s/%s is ledger-query why's timeline: %s" % (ns, name, out.stderr))
    if evicted:
        e = status.get("evictions", [{}])[0]
        check((e.get("preemptor"), e.get("policy"), e.get("conforms")) == evicted,
              "the eviction of %s/%s: %r, want %r" % (ns, name, e, evicted))
    code, body = raw("http://127.0.0.1:%d/ledger/v1/why?workload=%s/%s" % (srv.port, ns, name))
    check(code == 200 and body == want, "/ledger/v1/why is ledger-query why -o json")
    code, body = raw("http://127.0.0.1:%d/ledger/v1/why?workload=%s/no-such" % (srv.port, ns))
    check(code == 404 and body.get("reason") == "NotFound", "/ledger/v1/why of an unknown workload: %r" % body)
    code, body = raw("http://127.0.0.1:%d/ledger/v1/why?workload=%s/%s&from=yesterday" % (srv.port, ns, name))
    check(code == 400 and "yesterday" in body.get("message", ""), "/ledger/v1/why bad from: %r" % body)
    out = kubectl(url, "get", "workloadwhy", "-n", ns, "no-such")
    check(out.returncode != 0 and 'workloadwhys.quota-ledger.io "no-such" not found' in out.stderr,
          "workloadwhy NotFound: " + out.stderr)


def make_pki(tmp):
    """A CA, a server certificate for 127.0.0.1 and a client certificate."""
    d = os.path.join(tmp, "pki")
    os.makedirs(d)
    p = {n: os.path.join(d, n) for n in ("ca.key", "ca.crt", "server.key", "server.csr", "server.crt",
                                         "client.key", "client.csr", "client.crt", "san.ext")}
    def ossl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", p["ca.key"], "-out", p["ca.crt"],
         "-days", "2", "-subj", "/CN=ledger-test-ca")
    with open(p["san.ext"], "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for who, cn in (("server", "127.0.0.1"), ("client", "auditor")):
        ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", p[who + ".key"], "-out", p[who + ".csr"],
             "-subj", "/CN=" + cn)
        extra = ["-extfile", p["san.ext"]] if who == "server" else []
        ossl("x509", "-req", "-in", p[who + ".csr"], "-CA", p["ca.crt"], "-CAkey", p["ca.key"],
             "-CAcreateserial", "-out", p[who + ".crt"], "-days", "2", *extra)
    return p


def snapshot(phase, status=None):
    """The sidecar's Snapshot object (docs/reference.md "Observation")."""
    obj = {"apiVersion": "kueue-dra-ledger.io/v1", "kind": "Snapshot",
           "metadata": {"name": "snapshot-3", "uid": "snapshot-3",
                        "resourceVersion": "1" if phase == "ADDED" else "2"},
           "spec": {"reason": "relist", "startedAt": "2026-11-20T10:00:00Z",
                    "resources": ["kueue.x-k8s.io/clusterqueues"]}}
    if status:
        obj["status"] = status
    return obj


def gap_moments(tmp):
    """A ledger whose sidecar relisted after a gap: a moment in the gap is
    answered with a Warning header, which kubectl prints; one before the
    first record is refused with the reason."""
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
          "metadata": {"name": "team-a", "uid": "cq-a", "resourceVersion": "1"},
          "spec": {"resourceGroups": []}}
    cq2 = json.loads(json.dumps(cq))
    cq2["metadata"]["resourceVersion"] = "2"
    cq2["spec"]["cohort"] = "research"
    events = [
        {"type": "ADDED", "object": cq, "time": "2026-11-20T09:00:00Z"},
        {"type": "ADDED", "object": snapshot("ADDED"), "time": "2026-11-20T10:00:00Z"},
        {"type": "MODIFIED", "object": cq2, "time": "2026-11-20T10:00:00Z"},
        {"type": "MODIFIED", "time": "2026-11-20T10:00:01Z", "object": snapshot("MODIFIED", {
            "firstSeq": 2, "lastSeq": 3, "completedAt": "2026-11-20T10:00:01Z",
            "resources": [{"resource": "kueue.x-k8s.io/clusterqueues", "resourceVersion": "2",
                           "objects": 1, "deleted": 0}],
            "missing": [],
            "gaps": [{"from": "2026-11-20T09:30:00Z", "to": "2026-11-20T10:00:00Z",
                      "resources": ["kueue.x-k8s.io/clusterqueues"],
                      "reason": "the watch could not resume: its resourceVersion expired (410 Gone)"}]})},
    ]
    stream = os.path.join(tmp, "gap.jsonl")
    with open(stream, "w") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")
    ledger = os.path.join(tmp, "gap")
    ingest(ledger, stream)
    srv = Server(ledger)
    try:
        out = kubectl(srv.url("2026-11-20T09:45:00Z"), "get", "clusterqueues")
        check(out.returncode == 0 and "team-a" in out.stdout, "a moment in a gap is answered: " + out.stderr)
        check("Warning: this moment is in a gap: the ledger did not observe kueue.x-k8s.io/clusterqueues "
              "from 2026-11-20T09:30:00Z to 2026-11-20T10:00:00Z" in out.stderr,
              "kubectl prints the gap's warning: " + out.stderr)
        out = kubectl(srv.url("2026-11-20T09:15:00Z"), "get", "clusterqueues")
        check(out.returncode == 0 and "Warning" not in out.stderr, "an observed moment has no warning: " + out.stderr)
        out = kubectl(srv.url("2026-11-20T08:00:00Z"), "get", "clusterqueues")
        check(out.returncode != 0 and "before the ledger's first record" in out.stderr,
              "a moment before the first record is refused with the reason: " + out.stderr)
    finally:
        srv.stop()


def main():
    if KUBECTL is None:
        print("SKIP: kubectl is not installed (the set-up script does not install it)")
        return 77
    tmp = tempfile.mkdtemp(prefix="serve-kubectl-")
    try:
        demo = os.path.join(tmp, "demo")
        ingest(demo, os.environ["DEMO_STREAM"])
        gen = os.path.join(tmp, "gen")
        stream = os.path.join(tmp, "gen.jsonl")
        with open(stream, "w") as f:
            subprocess.run([os.environ["LEDGER_GEN"], "--events", "6000", "--seed", "3",
                            "--nodes", "4", "--queues", "4"], stdout=f, check=True)
        ingest(gen, stream)

        srv = Server(gen)
        try:
            last = json.loads(urllib.request.urlopen(
                "http://127.0.0.1:%d/ledger/v1/range" % srv.port).read())["lastSeq"]
            for seq in (last // 3, last // 2, last):
                lists_equal_state(srv, gen, seq)
            for seq in (last // 2, last):
                core_tables(srv, stream, seq)
            url = srv.url("seq:%d" % (last // 2))
            # limit/continue: kubectl's chunks add up to the whole list.
            whole = kubectl(url, "get", "pods", "-A", "-o", "name").stdout.split()
            chunked = kubectl(url, "get", "pods", "-A", "-o", "name", "--chunk-size=3").stdout.split()
            check(len(whole) > 3 and chunked == whole, "pods in chunks of 3 equal the whole list")
            # A label selector selects what the labels say.
            pods = json.loads(kubectl(url, "get", "pods", "-A", "-o", "json").stdout)["items"]
            labelled = [p for p in pods if p["metadata"].get("labels")]
            if labelled:
                key, value = sorted(labelled[0]["metadata"]["labels"].items())[0]
                want = sorted(p["metadata"]["name"] for p in pods
                              if p["metadata"].get("labels", {}).get(key) == value)
                got = json.loads(kubectl(url, "get", "pods", "-A", "-l", "%s=%s" % (key, value),
                                         "-o", "json").stdout)["items"]
                check(sorted(p["metadata"]["name"] for p in got) == want, "-l %s=%s" % (key, value))
            name = pods[0]["metadata"]
            got = kubectl(url, "get", "pods", "-n", name["namespace"],
                          "--field-selector", "metadata.name=" + name["name"], "-o", "name").stdout.split()
            check(got == ["pod/" + name["name"]], "--field-selector metadata.name")
            one = kubectl(url, "get", "pod", "-n", name["namespace"], name["name"], "-o", "json")
            check(json.loads(one.stdout)["metadata"]["name"] == name["name"], "get one pod")
            # Bad input: API errors with their message, never a crash.
            out = kubectl(srv.url("yesterday"), "get", "workloads", "-A")
            check(out.returncode != 0, "kubectl fails at a malformed time")
            # kubectl prints the server's reason, not client-go's discovery
            # lines ("the server rejected our request for an unknown reason").
            for moment, reason in (("yesterday", "is not an RFC 3339 time"),
                                   ("2026-11-20", "is not an RFC 3339 time"),
                                   ("2000-01-01T00:00:00Z", "before the ledger's first record")):
                out = kubectl(srv.url(moment), "get", "workloads", "-A")
                check(out.returncode != 0 and "Error from server (BadRequest): " in out.stderr
                      and "moment '%s' " % moment in out.stderr and reason in out.stderr
                      and "unknown reason" not in out.stderr
                      and "memcache.go" not in out.stderr,
                      "kubectl prints why /at/%s is refused: %s" % (moment, out.stderr))
            code, body = raw(srv.url("yesterday") + "/api/v1/pods")
            check(code == 400 and body.get("kind") == "Status" and "not an RFC 3339 time" in body.get("message", ""),
                  "malformed time is a 400 Status: %r" % body)
            out = kubectl(url, "get", "frobnicators")
            check(out.returncode != 0 and "frobnicators" in out.stderr, "unknown kind: " + out.stderr)
            out = kubectl(url, "get", "pod", "-n", name["namespace"], "no-such-pod")
            check(out.returncode != 0 and 'pods "no-such-pod" not found' in out.stderr, "NotFound: " + out.stderr)
            out = kubectl(url, "delete", "pod", "-n", name["namespace"], name["name"])
            check(out.returncode != 0 and "read-only" in out.stderr, "delete refused: " + out.stderr)
            code, first = raw(url + "/api/v1/pods?limit=1")
            code, body = raw(srv.url("seq:%d" % (last // 3)) + "/api/v1/pods?limit=1&continue=" +
                             first["metadata"]["continue"])
            check(code == 400 and
                  "continue token belongs to the list at seq" in body.get("message", ""),
                  "a continue token from another moment is a 400 Status: %r" % body)
            code, body = raw(url + "/api/v1/pods?limit=" + "9" * 40)
            check(code == 400 and body.get("reason") == "BadRequest", "a huge limit is a 400 Status")
            code, body = raw(url + "/apis/no.such.group/v1/things")
            check(code == 404 and body.get("kind") == "Status", "an unknown group is a 404 Status")
            code, body = raw("http://127.0.0.1:%d/at/now/api/v1/namespaces/%%2e%%2e/%%2e%%2e/secrets" % srv.port)
            check(code == 404 and body.get("kind") == "Status", "path traversal is a 404 Status: %r" % body)
            check(srv.proc.poll() is None, "serve is still running after bad input")
        finally:
            srv.stop()

        # Watch: the recorded changes after the moment, in stream order.
        srv = Server(demo)
        try:
            held_column(srv, demo)
            workload_whys(srv, demo, "team-a", "job-fpga-sim-f04d2")
            events = [json.loads(l) for l in open(os.environ["DEMO_STREAM"]) if l.strip()]
            after = 10
            want = ["%s %s %s" % (e["type"], e["object"]["metadata"]["name"], e["time"])
                    for e in events[after:] if e["object"].get("kind") == "Workload"]
            proc = subprocess.Popen([KUBECTL, "--server", srv.url("seq:%d" % after), "get", "workloads",
                                     "-A", "-w", "--output-watch-events"],
                                    stdout=subprocess.PIPE, text=True)
            got = watched(proc, len(want), with_time=True)
            check(got == want, "kubectl get -w sees the recorded changes in order, each with its "
                  "time:\n%r\n%r" % (got, want))
            # The time is an annotation on each event's object.
            proc = subprocess.Popen([KUBECTL, "--server", srv.url("seq:%d" % after), "get", "workloads",
                                     "-A", "--watch-only", "-o",
                                     r"custom-columns=NAME:.metadata.name,"
                                     r"RECORDED:.metadata.annotations.quota-ledger\.io/recorded-at"],
                                    stdout=subprocess.PIPE, text=True)
            got = []
            deadline = time.time() + 30
            while len(got) < len(want) and time.time() < deadline:
                fields = proc.stdout.readline().split()
                if len(fields) == 2 and fields[0] != "NAME":
                    got.append(fields)
            proc.kill()
            proc.wait()
            check(got == [w.split()[1:] for w in want],
                  "-o custom-columns shows the recorded-at annotation:\n%r" % got)
            out = kubectl(srv.url("seq:%d" % after), "get", "workloads", "-A", "-o", "json")
            check("recorded-at" not in out.stdout, "a list answers objects as recorded, unannotated")
        finally:
            srv.stop()

        # /at/now follows a live writer: a watch there sees what is committed
        # after it started, and lists see the new objects.
        events = [l for l in open(os.environ["DEMO_STREAM"]) if l.strip()]
        live = os.path.join(tmp, "live")
        first = os.path.join(tmp, "first.jsonl")
        rest = os.path.join(tmp, "rest.jsonl")
        with open(first, "w") as f:
            f.writelines(events[:20])
        with open(rest, "w") as f:
            f.writelines(events[20:])
        ingest(live, first)
        srv = Server(live)
        try:
            before = kubectl(srv.url("now"), "get", "workloads", "-A", "-o", "name").stdout.split()
            proc = subprocess.Popen([KUBECTL, "--server", srv.url("now"), "get", "workloads", "-A",
                                     "--watch-only", "--output-watch-events"],
                                    stdout=subprocess.PIPE, text=True)
            time.sleep(1)
            ingest(live, rest)
            want = ["%s %s" % (json.loads(e)["type"], json.loads(e)["object"]["metadata"]["name"])
                    for e in events[20:] if json.loads(e)["object"].get("kind") == "Workload"]
            got = watched(proc, len(want))
            check(got == want, "a watch at now sees the commits made after it:\n%r\n%r" % (got, want))
            after = []
            for _ in range(50):
                after = kubectl(srv.url("now"), "get", "workloads", "-A", "-o", "name").stdout.split()
                if len(after) > len(before):
                    break
                time.sleep(0.2)
            check(len(after) == 4 and len(before) < 4, "a list at now sees the new Workloads (%d -> %d)"
                  % (len(before), len(after)))
        finally:
            srv.stop()

        # TLS: a token, or client certificates, guard the server (kubectl
        # sends a token over https only).
        pki = make_pki(tmp)
        token = os.path.join(tmp, "token")
        with open(token, "w") as f:
            f.write("s3cret-token\n")
        tls = ["--tls-cert", pki["server.crt"], "--tls-key", pki["server.key"]]
        srv = Server(demo, "--token-file", token, *tls)
        try:
            https = srv.url("now").replace("http://", "https://")
            ca = ["--certificate-authority", pki["ca.crt"]]
            out = kubectl(https, *ca, "get", "clusterqueues", token="s3cret-token")
            check(out.returncode == 0 and "team-a" in out.stdout, "the right token is let in: " + out.stderr)
            out = kubectl(https, *ca, "get", "clusterqueues", token="wrong")
            check(out.returncode != 0 and "a valid bearer token is required" in out.stderr,
                  "a wrong token is refused: " + out.stderr)
            context = ssl.create_default_context(cafile=pki["ca.crt"])
            code, body = raw(https + "/api", token="s3cret-token-and-more", context=context)
            check(code == 401 and body.get("reason") == "Unauthorized", "a longer token is refused: %r" % body)
        finally:
            srv.stop()
        srv = Server(demo, *tls, "--tls-client-ca", pki["ca.crt"])
        try:
            https = srv.url("now").replace("http://", "https://")
            ca = ["--certificate-authority", pki["ca.crt"]]
            out = kubectl(https, *ca, "--client-certificate", pki["client.crt"], "--client-key",
                          pki["client.key"], "get", "clusterqueues")
            check(out.returncode == 0 and "team-a" in out.stdout, "a client certificate is let in: " + out.stderr)
            out = kubectl(https, *ca, "get", "clusterqueues")
            check(out.returncode != 0, "no client certificate, no answer")
        finally:
            srv.stop()
        # An eviction the queue's policy does not allow (tests/scenarios).
        evicted = os.path.join(tmp, "evicted")
        ingest(evicted, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios",
                                     "why-preemption-not-allowed", "events.jsonl"))
        srv = Server(evicted)
        try:
            workload_whys(srv, evicted, "t", "low", evicted=("t/in", "withinClusterQueue", False))
        finally:
            srv.stop()
        gap_moments(tmp)
        out = run(os.environ["LEDGER_QUERY"], "--ledger", demo, "serve", "--listen", "0.0.0.0:0")
        check(out.returncode == 1 and "--token-file" in out.stderr,
              "listening beyond loopback without a token is refused: " + out.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

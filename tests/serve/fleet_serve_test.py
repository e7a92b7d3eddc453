#!/usr/bin/env python3
"""`ledger-query serve --fleet DIR` (docs/reference.md "serve", "The fleet").

A fleet directory of three clusters' copies, each an ordinary ledger written by
`ledger-ingest --ledger DIR/NAME` (the layout `ledger-query --fleet` reads; no
NATS needed): eu-1 the demo's events, us-2 and ap-3 ledger-gen streams.
Served with --fleet:
- --ledger with --fleet, and a --fleet that is not a directory, are usage
  errors (exit 1);
- /ledger/v1/clusters has one row per copy whose last seq, findings by type,
  pending workloads, ClusterQueue count, per-resource nominal, reserved and
  held sums and signature equal `ledger-query --fleet DIR state -o json`;
- kubectl --server .../clusters/NAME/at/seq:N prints what it prints against a
  single-ledger serve of that copy, for two clusters; an unknown cluster is a
  404 Status naming the fleet's clusters, and kubectl prints its message;
- a copy ingested into DIR while serving is served within seconds;
- eight clusters (four more names linked to the copies) fit the first screen;
- headless Chromium: at 1400x1000 the overview at / shows every cluster's row
  on the first screen with its figures, and /clusters/eu-1/ is that cluster's
  own view, reading its API under the prefix (a screenshot lands in
  SCREENSHOT_DIR/fleet-view.png).

env: LEDGER_INGEST, LEDGER_QUERY, LEDGER_GEN (the built programs), DEMO_STREAM
     (tools/demo/cluster-events.jsonl), SCREENSHOT_DIR. kubectl and chromium
     are used where installed (their checks are skipped, saying so, without).
"""
import html.parser
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from decimal import Decimal

import serve_support

failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run(*args, timeout=180):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)


SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
            "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": 10**3,
            "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


def quantity(text):
    """A Kubernetes quantity's exact value (the forms the state report prints)."""
    m = re.fullmatch(r"([+-]?[0-9.]+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?",
                     text)
    assert m, text
    value = Decimal(m.group(1))
    if m.group(2):
        value *= Decimal(10) ** int(m.group(2)[1:])
    if m.group(3):
        value *= Decimal(SUFFIXES[m.group(3)])
    return value


def ingest(ledger, stream):
    r = run(os.environ["LEDGER_INGEST"], "--ledger", ledger, "--from", stream)
    check(r.returncode == 0, f"ingest {os.path.basename(ledger)}: {r.stderr[-300:]}")


def generated(tmp, seed, queues):
    path = os.path.join(tmp, f"gen-{seed}.jsonl")
    with open(path, "w") as out:
        subprocess.run([os.environ["LEDGER_GEN"], "--events", "3000", "--seed", str(seed),
                        "--nodes", "3", "--queues", str(queues)], stdout=out, check=True)
    return path


class Server:
    def __init__(self, log, *where):
        self.log = log
        with open(log, "w") as err:
            self.proc = subprocess.Popen(
                [os.environ["LEDGER_QUERY"], *where, "serve", "--listen", "127.0.0.1:0"],
                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.time() + 60
        self.port = None
        while time.time() < deadline and self.proc.poll() is None and self.port is None:
            with open(log) as f:
                m = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
            time.sleep(0.1)
        if self.port is None:
            self.proc.kill()
            raise SystemExit("serve did not start: " + open(log).read())
        self.base = f"http://127.0.0.1:{self.port}"

    def get(self, path):
        """(status, body text)."""
        try:
            with urllib.request.urlopen(self.base + path, timeout=60) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        check(self.proc.returncode == 0, f"serve exits 0 on SIGTERM (got {self.proc.returncode})")


def expected_row(state):
    """What /ledger/v1/clusters should say of a cluster, from its state report."""
    findings = {}
    for f in state["findings"]:
        findings[f["type"]] = findings.get(f["type"], 0) + 1
    sums = {}
    for cq in state["clusterQueues"]:
        for q in cq["quotas"]:
            s = sums.setdefault(q["resource"], [Decimal(0), Decimal(0), Decimal(0)])
            s[0] += quantity(q["nominal"])
            s[1] += quantity(q["reserved"])
        for h in cq["draHeld"]["quota"]:
            sums.setdefault(h["resource"], [Decimal(0), Decimal(0), Decimal(0)])[2] += \
                quantity(h["held"])
    return {"lastSeq": state["at"]["seq"], "lastTime": state["at"]["time"],
            "findings": findings, "signed": state["signed"],
            "pending": sum(cq["workloads"]["pending"] for cq in state["clusterQueues"]),
            "clusterQueues": len(state["clusterQueues"]),
            "resources": {r: tuple(v) for r, v in sums.items()}}


def shown_row(row):
    return {"lastSeq": row["lastSeq"], "lastTime": row["lastTime"], "findings": row["findings"],
            "signed": row.get("signed"), "pending": row["pending"],
            "clusterQueues": row["clusterQueues"],
            "resources": {r["resource"]: tuple(quantity(r[k]) for k in ("nominal", "reserved", "held"))
                          for r in row["resources"]}}


def check_clusters(srv, fleet):
    cli = run(os.environ["LEDGER_QUERY"], "--fleet", fleet, "state", "--at", "end", "-o", "json")
    check(cli.returncode == 0, "ledger-query --fleet state: " + cli.stderr[-300:])
    states = {c["cluster"]: c for c in json.loads(cli.stdout)["clusters"]}
    status, body = srv.get("/ledger/v1/clusters")
    check(status == 200, f"/ledger/v1/clusters: 200 (got {status})")
    rows = {r["cluster"]: r for r in json.loads(body)["clusters"]}
    check(sorted(rows) == sorted(states), f"one row per copy: {sorted(rows)}, the CLI's {sorted(states)}")
    for name, state in states.items():
        want, got = expected_row(state), shown_row(rows.get(name, {}))
        check(got == want, f"cluster {name}: the row {got} is the CLI's state {want}")
        check(rows[name]["behindSeconds"] > 0, f"cluster {name}: behind the clock")
    return states, rows


def check_kubectl(srv, fleet, states):
    kubectl = shutil.which("kubectl")
    if not kubectl:
        print("SKIP kubectl checks: kubectl not installed")
        return
    for name in ("eu-1", "us-2"):
        seq = states[name]["at"]["seq"] // 2
        single = Server(srv.log + f".{name}", "--ledger", os.path.join(fleet, name))
        try:
            for what in (["get", "workloads", "-A"], ["get", "clusterqueues", "-o", "json"],
                         ["get", "queueusages"], ["get", "resourceclaims", "-A", "-o", "wide"]):
                a = run(kubectl, "--server", f"{srv.base}/clusters/{name}/at/seq:{seq}", *what)
                b = run(kubectl, "--server", f"{single.base}/at/seq:{seq}", *what)
                check(a.returncode == 0 and a.stdout == b.stdout and a.stdout.strip(),
                      f"kubectl {' '.join(what)} on cluster {name} at seq {seq}: as on its own "
                      f"serve ({len(a.stdout.splitlines())} lines; {a.stderr[-200:]})")
        finally:
            single.stop()
    r = run(kubectl, "--server", f"{srv.base}/clusters/mars/at/now", "get", "workloads", "-A")
    check(r.returncode != 0 and "'mars' is not in the fleet" in r.stderr and
          "ap-3, eu-1, us-2" in r.stderr,
          "kubectl on an unknown cluster prints the 404's message naming the clusters: " +
          r.stderr[-300:])
    status, body = srv.get("/clusters/mars/ledger/v1/range")
    status_json = json.loads(body)
    check(status == 404 and status_json.get("kind") == "Status" and status_json.get("code") == 404,
          f"an unknown cluster is a 404 Status (got {status})")


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.body, self.rows, self.types, self.resources = {}, [], [], []
        self.elements = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "tr" and "data-cluster" in a:
            self.rows.append(a)
        if tag == "li" and "data-type" in a and self.rows:
            self.types.append((self.rows[-1]["data-cluster"], a["data-type"], int(a["data-count"])))
        if "class" in a and "fleet-resource" in a["class"].split() and self.rows:
            self.resources.append((self.rows[-1]["data-cluster"], a))
        if "id" in a:
            self.elements[a["id"]] = a


def chromium(browser, tmp, url, *extra):
    try:
        return serve_support.chromium(browser, os.path.join(tmp, "chromium-profile"), url,
                                      "--window-size=1400,1000", *extra)
    except RuntimeError as e:
        check(False, str(e))
        return ""


def check_pages(srv, tmp, rows):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("SKIP Chromium checks: chromium not installed (tools/setup-debian.sh installs it)")
        return
    dom = Dom()
    dom.feed(chromium(browser, tmp, srv.base + "/", "--dump-dom"))
    check(dom.body.get("data-ready") == "1", "the overview loaded")
    check(dom.elements.get("errors", {}).get("data-error-count") == "0", "the overview has no error")
    shown = {r["data-cluster"]: (int(r["data-last-seq"]), int(r["data-pending"])) for r in dom.rows}
    want = {n: (r["lastSeq"], r["pending"]) for n, r in rows.items()}
    check(shown == want, f"the overview's rows (last seq, pending) {shown}, the API's {want}")
    types = {(c, t): n for c, t, n in dom.types}
    want_types = {(n, t): k for n, r in rows.items() for t, k in r["findings"].items()}
    check(types == want_types, f"the overview's findings by type {types}, the API's {want_types}")
    res = {(c, a["data-resource"]): (a["data-nominal"], a["data-reserved"], a["data-held"])
           for c, a in dom.resources}
    want_res = {(n, r["resource"]): (r["nominal"], r["reserved"], r["held"])
                for n, row in rows.items() for r in row["resources"]}
    check(res == want_res, f"the overview's bars {len(res)}, the API's {len(want_res)}")
    bottom = int(dom.body.get("data-table-bottom", "-1"))
    check(0 < bottom <= 1000, f"every cluster's row is on the first 1400x1000 screen (ends at {bottom} px)")
    shot = os.path.join(os.environ.get("SCREENSHOT_DIR", tmp), "fleet-view.png")
    chromium(browser, tmp, srv.base + "/", f"--screenshot={shot}")
    check(os.path.getsize(shot) > 0, "a screenshot of the overview: " + shot)

    page = Dom()
    page.feed(chromium(browser, tmp, srv.base + "/clusters/eu-1/?at=now", "--dump-dom"))
    check(page.body.get("data-ready") == "1", "eu-1's own view loaded")
    check(page.elements.get("errors", {}).get("data-error-count", "0") == "0",
          "eu-1's own view has no error")
    check(page.elements.get("state", {}).get("data-state-seq") == str(rows["eu-1"]["lastSeq"]),
          f"eu-1's view shows its state at seq {rows['eu-1']['lastSeq']}: "
          f"{page.elements.get('state', {}).get('data-state-seq')}")
    check(page.elements.get("fleet-link", {}).get("data-cluster") == "eu-1",
          "eu-1's view links the fleet's overview")


def check_eight(srv, tmp, fleet):
    """Eight clusters (four more names for the copies there, as symbolic links)
    fit the first 1400x1000 screen."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        return
    for i, name in enumerate(("eu-1", "us-2", "ap-3", "sa-4")):
        os.symlink(os.path.join(fleet, name), os.path.join(fleet, f"zz-{i + 5}"))
    deadline, count = time.time() + 20, 0
    while time.time() < deadline and count < 8:
        time.sleep(0.5)
        count = len(json.loads(srv.get("/ledger/v1/clusters")[1])["clusters"])
    dom = Dom()
    dom.feed(chromium(browser, tmp, srv.base + "/", "--dump-dom"))
    bottom = int(dom.body.get("data-table-bottom", "-1"))
    check(len(dom.rows) == 8 and 0 < bottom <= 1000,
          f"eight clusters' rows ({len(dom.rows)} drawn) end at {bottom} px, on the first screen")


def main():
    tmp = tempfile.mkdtemp(prefix="serve-fleet-")
    srv = None
    try:
        fleet = os.path.join(tmp, "fleet")
        os.mkdir(fleet)
        ingest(os.path.join(fleet, "eu-1"), os.environ["DEMO_STREAM"])
        ingest(os.path.join(fleet, "us-2"), generated(tmp, 3, 4))
        ingest(os.path.join(fleet, "ap-3"), generated(tmp, 5, 2))
        q = os.environ["LEDGER_QUERY"]
        r = run(q, "--ledger", os.path.join(fleet, "eu-1"), "--fleet", fleet, "serve",
                "--listen", "127.0.0.1:0", timeout=30)
        check(r.returncode == 1 and "--fleet" in r.stderr,
              f"--ledger with --fleet: exit 1 (got {r.returncode}: {r.stderr[-200:]})")
        r = run(q, "--fleet", os.path.join(tmp, "none"), "serve", "--listen", "127.0.0.1:0",
                timeout=30)
        check(r.returncode == 1 and "not a directory" in r.stderr,
              f"--fleet that is not a directory: exit 1 (got {r.returncode}: {r.stderr[-200:]})")

        srv = Server(os.path.join(tmp, "serve.log"), "--fleet", fleet)
        states, rows = check_clusters(srv, fleet)
        status, body = srv.get("/clusters/us-2/ledger/v1/range")
        check(status == 200 and json.loads(body)["lastSeq"] == states["us-2"]["at"]["seq"],
              "/clusters/us-2/ledger/v1/range is us-2's range")
        status, body = srv.get("/clusters/eu-1/")
        check(status == 200 and "/assets/app.js" in body, "/clusters/eu-1/ is the web view")
        status, body = srv.get("/at/now/api")
        check(status == 404 and "/clusters/NAME/" in body,
              f"a path of no cluster is a 404 saying where the clusters are (got {status})")
        check_kubectl(srv, fleet, states)
        check_pages(srv, tmp, rows)

        ingest(os.path.join(fleet, "sa-4"), os.environ["DEMO_STREAM"])
        deadline, names = time.time() + 20, []
        while time.time() < deadline and "sa-4" not in names:
            time.sleep(0.5)
            names = [c["cluster"] for c in json.loads(srv.get("/ledger/v1/clusters")[1])["clusters"]]
        check("sa-4" in names, f"a copy that appears while serving is served: {names}")
        status, _ = srv.get("/clusters/sa-4/ledger/v1/range")
        check(status == 200, f"/clusters/sa-4/ answers (got {status})")
        check_eight(srv, tmp, fleet)
    finally:
        if srv:
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("all fleet serve checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The web view of `ledger-query serve` in a real browser, against the CLI.

usage: tests/serve/web_view_test.py SOURCE_ROOT
env:   LEDGER_INGEST, LEDGER_QUERY (the programs), LEDGER_GEN (optional: also
       a generated cluster), SCREENSHOT_DIR (where web-view.png goes; default
       the current directory)

It ingests tools/demo/cluster-events.jsonl (and, with LEDGER_GEN, a small
simulated cluster) into a temporary ledger, starts
`ledger-query --ledger DIR serve --listen 127.0.0.1:PORT` and loads the page
in headless Chromium at several moments (`/?at=T`), dumping the DOM once its
scripts have run. Per moment it checks, from the DOM's data- attributes:
- the page finished (body[data-ready="1"]) with no error shown;
- the state shown is the one `ledger-query state --at T -o json` prints: the
  same seq, and per (ClusterQueue, flavor, resource) the same reserved,
  admitted and nominal quantities (the strings, exactly), no row more or less;
- the findings count and the workload count are the CLI's;
- the charts: one per series of `ledger-query usage --from --to --step` (the
  range and step the page asked for, read from #charts), with as many points;
- a held line on exactly the charts whose series some pod held through
  ResourceClaims, above reserved at as many steps as the CLI's series (for
  the demo, team-b's GPU: job-legacy-infer holds one uncharged);
- the first load asked the API for one /state and one /usage, nothing more.
A bad moment (?at=yesterday) shows the server's error message on the page;
?workload=NS/NAME opens that workload's history with the CLI's changes. A
screenshot (1400x1000) is saved as SCREENSHOT_DIR/web-view.png and must be a
PNG of that size. Chromium comes from Debian's chromium package
(tools/setup-debian.sh); without it the test skips (exit 77), saying so.
"""
import decimal
import html.parser
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77


class Dom(html.parser.HTMLParser):
    """The attributes the page puts on its numbers, from a dumped DOM."""

    def __init__(self):
        super().__init__()
        self.body = {}
        self.state = {}
        self.charts_section = {}
        self.errors_box = {}
        self.findings = {}
        self.panel = {}
        self.quota = []       # the quota rows' attributes
        self.charts = []      # the chart figures' attributes
        self.held = {}        # chart key -> its held line's attributes
        self.workloads = []   # the workload rows' attributes
        self.history = []     # the workload panel's change rows
        self.markers = []     # the charts' moment markers
        self.gaps = []        # the coverage lines over the charts
        self.error_texts = []
        self._in_error = 0
        self._in_history = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        ident = a.get("id")
        if tag == "body":
            self.body = a
        elif ident == "state":
            self.state = a
        elif ident == "charts":
            self.charts_section = a
        elif ident == "errors":
            self.errors_box = a
        elif ident == "findings":
            self.findings = a
        elif ident == "workload-panel":
            self.panel = a
        elif ident == "workload-body":
            self._in_history = True
        elif tag == "tr" and "data-reserved" in a:
            self.quota.append(a)
        elif tag == "tr" and "data-workload" in a:
            self.workloads.append(a)
        elif tag == "tr" and "data-seq" in a and self._in_history:
            self.history.append(a)
        elif tag == "figure" and "chart" in a.get("class", "").split():
            self.charts.append(a)
        elif tag == "path" and "held" in a.get("class", "").split() and self.charts:
            c = self.charts[-1]
            self.held[(c.get("data-cq"), c.get("data-flavor"), c.get("data-resource"))] = a
        elif tag == "line" and "marker" in a.get("class", "").split():
            self.markers.append(a)
        elif tag == "li" and "gap" in a.get("class", "").split():
            self.gaps.append(a)
        if tag == "div" and "error" in a.get("class", "").split():
            self._in_error += 1
            self.error_texts.append("")

    def handle_endtag(self, tag):
        if tag == "div" and self._in_error:
            self._in_error -= 1
        if tag == "aside":
            self._in_history = False

    def handle_data(self, data):
        if self._in_error:
            self.error_texts[-1] += data


class Failures:
    def __init__(self):
        self.items = []

    def check(self, ok, message):
        if not ok:
            self.items.append(message)
            print("FAIL", message)
        return ok


def run_json(*args):
    run = subprocess.run(list(args), capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {run.returncode}: {run.stderr.strip()}")
    return json.loads(run.stdout)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read()


def start_server(query, ledger, log):
    """ledger-query serve on a free loopback port, once /range answers."""
    for _ in range(3):
        port = free_port()
        proc = subprocess.Popen([query, "--ledger", ledger, "serve", "--listen", f"127.0.0.1:{port}"],
                                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status, _ = get(f"http://127.0.0.1:{port}/ledger/v1/range", timeout=2)
                if status == 200:
                    return proc, port
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                time.sleep(0.2)
        stop(proc)
    log.flush()
    raise RuntimeError("ledger-query serve did not answer /ledger/v1/range: "
                       + open(log.name, errors="replace").read()[-2000:])


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def chromium(browser, profile, url, *extra):
    """Headless Chromium on url; stdout (the DOM with --dump-dom)."""
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
            "--virtual-time-budget=10000", *extra, url]
    # Its own session, so that the browser's helper processes go with it.
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        out, err = "", "timed out after 180 s"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    if proc.returncode != 0:
        raise RuntimeError(f"chromium exit {proc.returncode}: {err[-2000:]}")
    return out


def load_page(browser, profile, base, params):
    dom = Dom()
    dom.feed(chromium(browser, profile, f"{base}/?{urllib.parse.urlencode(params)}", "--dump-dom"))
    return dom


def moment_args(at):
    return ["--seq", at[4:]] if at.startswith("seq:") else ["--at", at]


def quantity(text):
    """A series value (a plain decimal) as an exact number."""
    return decimal.Decimal(text)


def check_held(f, label, dom, usage, held_cq):
    """The held lines against the CLI's series: drawn where something was
    held, above reserved at the same number of steps."""
    expected = {}
    for s in usage["series"]:
        points = s["points"]
        if any(quantity(p.get("held", "0")) > 0 for p in points):
            expected[(s["clusterQueue"], s["flavor"], s["resource"])] = sum(
                quantity(p["held"]) > quantity(p["reserved"]) for p in points)
    shown = {k: int(a.get("data-above", "-1")) for k, a in dom.held.items()}
    f.check(shown == expected, f"{label}: held lines (steps above reserved) {shown}, "
            f"the CLI's {expected}")
    if held_cq:
        f.check(any(k[0] == held_cq and n > 0 for k, n in shown.items()),
                f"{label}: no chart of {held_cq} shows held above reserved: {shown}")
    print(f"ok {label}: held lines (steps above reserved) {shown}")


def check_moment(f, browser, profile, base, query, ledger, at, held_cq=None):
    """The page at ?at=at against ledger-query state/usage on the same ledger."""
    label = f"{os.path.basename(ledger)} ?at={at}"
    dom = load_page(browser, profile, base, {"at": at})
    state = run_json(query, "--ledger", ledger, "state", *moment_args(at), "-o", "json")
    f.check(dom.body.get("data-ready") == "1", f"{label}: the page did not finish loading")
    f.check(dom.errors_box.get("data-error-count") == "0" and not dom.error_texts,
            f"{label}: errors shown: {dom.error_texts}")
    f.check(dom.state.get("data-state-seq") == str(state["at"]["seq"]),
            f"{label}: state seq {dom.state.get('data-state-seq')}, the CLI's {state['at']['seq']}")

    expected = {}
    for cq in state["clusterQueues"]:
        for q in cq["quotas"]:
            expected[(cq["name"], q["flavor"], q["resource"])] = (
                q["reserved"], q["admitted"], q["nominal"])
    shown = {}
    for row in dom.quota:
        key = (row.get("data-cq"), row.get("data-flavor"), row.get("data-resource"))
        f.check(key not in shown, f"{label}: quota row {key} twice")
        shown[key] = (row.get("data-reserved"), row.get("data-admitted"), row.get("data-nominal"))
    f.check(len(expected) > 0, f"{label}: the CLI's state has no quota rows to compare")
    for key in sorted(set(expected) | set(shown)):
        f.check(shown.get(key) == expected.get(key),
                f"{label}: quota {key}: page (reserved, admitted, nominal) {shown.get(key)}, "
                f"CLI {expected.get(key)}")
    f.check(dom.findings.get("data-findings-count") == str(len(state["findings"])),
            f"{label}: findings {dom.findings.get('data-findings-count')}, "
            f"the CLI's {len(state['findings'])}")
    f.check(len(dom.workloads) == min(500, len(state["workloads"])),
            f"{label}: {len(dom.workloads)} workload rows, the CLI's {len(state['workloads'])}")

    step, start, end = (dom.charts_section.get(k) for k in ("data-step", "data-from", "data-to"))
    if f.check(step and start and end, f"{label}: #charts does not say which usage it shows"):
        usage = run_json(query, "--ledger", ledger, "usage", "--from", start, "--to", end,
                         "--step", step, "-o", "json")
        series = {(s["clusterQueue"], s["flavor"], s["resource"]): len(s["points"])
                  for s in usage["series"]}
        charts = {(c.get("data-cq"), c.get("data-flavor"), c.get("data-resource")):
                  int(c.get("data-points", "-1")) for c in dom.charts}
        f.check(charts == series, f"{label}: charts {charts}, the CLI's series {series}")
        points = max(series.values(), default=0)
        f.check(points <= 300, f"{label}: {points} points per chart (step {step})")
        check_held(f, label, dom, usage, held_cq)
    f.check(dom.markers and all(m.get("data-at") for m in dom.markers),
            f"{label}: the charts do not mark the moment")
    f.check(dom.body.get("data-requests-state") == "1" and dom.body.get("data-requests-usage") == "1",
            f"{label}: the first load asked for /state {dom.body.get('data-requests-state')} and "
            f"/usage {dom.body.get('data-requests-usage')} times, not once each")
    print(f"ok {label}: seq {state['at']['seq']}, {len(shown)} quota rows, "
          f"{len(state['findings'])} findings, {len(dom.charts)} charts (step {step})")
    return state


def check_png(f, path, width, height):
    data = open(path, "rb").read() if os.path.exists(path) else b""
    if not f.check(len(data) > 1000 and data[:8] == b"\x89PNG\r\n\x1a\n",
                   f"{path}: not a PNG ({len(data)} bytes)"):
        return
    w, h = struct.unpack(">II", data[16:24])
    f.check((w, h) == (width, height), f"{path}: {w}x{h}, not {width}x{height}")
    print(f"ok screenshot {path}: {w}x{h}, {len(data)} bytes")


def check_ledger(f, browser, tmp, query, ledger, moments, workload, screenshot, held_cq=None):
    log = open(os.path.join(tmp, os.path.basename(ledger) + "-serve.log"), "w+")
    proc, port = start_server(query, ledger, log)
    base = f"http://127.0.0.1:{port}"
    profile = os.path.join(tmp, "chromium-profile")
    try:
        for at in moments:
            check_moment(f, browser, profile, base, query, ledger, at, held_cq)

        # The server's error (a Kubernetes Status) reaches the page, message and all.
        try:
            get(f"{base}/ledger/v1/state?at=yesterday")
            status = None
        except urllib.error.HTTPError as err:
            status = json.loads(err.read())
        f.check(status and status.get("code", 0) >= 400 and status.get("message"),
                f"/ledger/v1/state?at=yesterday: not an error Status: {status}")
        dom = load_page(browser, profile, base, {"at": "yesterday"})
        f.check(dom.body.get("data-ready") == "1", "?at=yesterday: the page did not finish")
        f.check(dom.errors_box.get("data-error-count") == "1" and len(dom.error_texts) == 1
                and status and status.get("message", "?") in dom.error_texts[0],
                f"?at=yesterday: the server's error {status} is not shown: {dom.error_texts}")
        print(f"ok ?at=yesterday shows: {dom.error_texts}")

        if workload:
            history = run_json(query, "--ledger", ledger, "workload", workload, "-o", "json")
            dom = load_page(browser, profile, base, {"at": "now", "workload": workload})
            f.check(dom.panel.get("data-workload") == workload and "hidden" not in dom.panel,
                    f"?workload={workload}: the panel is not open: {dom.panel}")
            seqs = [int(r["data-seq"]) for r in dom.history]
            f.check(seqs == [c["seq"] for c in history["changes"]],
                    f"?workload={workload}: changes at seqs {seqs}, the CLI's "
                    f"{[c['seq'] for c in history['changes']]}")
            print(f"ok ?workload={workload}: {len(seqs)} changes")

        if screenshot:
            if os.path.exists(screenshot):
                os.remove(screenshot)
            chromium(browser, profile, f"{base}/?at={urllib.parse.quote(moments[0])}",
                     f"--screenshot={screenshot}", "--window-size=1400,1000",
                     "--hide-scrollbars")
            check_png(f, screenshot, 1400, 1000)
    finally:
        stop(proc)
        log.close()


def check_gap(f, browser, tmp, ingest, query, root):
    """The demo, then a sidecar's relist after a gap (docs/reference.md
    "Observation"): the page lists the gap over its charts, as `usage`'s
    coverage names it."""
    ledger = os.path.join(tmp, "gap")
    subprocess.run([ingest, "--ledger", ledger, "--from",
                    os.path.join(root, "tools", "demo", "cluster-events.jsonl")],
                   check=True, stdout=subprocess.DEVNULL)
    def snapshot(rv, status=None):
        obj = {"apiVersion": "kueue-dra-ledger.io/v1", "kind": "Snapshot",
               "metadata": {"name": "snapshot-45", "uid": "snapshot-45", "resourceVersion": rv},
               "spec": {"reason": "relist", "startedAt": "2026-11-20T08:55:00Z",
                        "resources": ["kueue.x-k8s.io/workloads"]}}
        if status:
            obj["status"] = status
        return obj
    gap = {"from": "2026-11-20T08:52:00Z", "to": "2026-11-20T08:55:00Z",
           "resources": ["kueue.x-k8s.io/workloads"],
           "reason": "the watch could not resume: its resourceVersion expired (410 Gone)"}
    events = os.path.join(tmp, "gap.jsonl")
    with open(events, "w") as out:
        out.write(json.dumps({"type": "ADDED", "object": snapshot("1"),
                              "time": "2026-11-20T08:55:00Z"}) + "\n")
        out.write(json.dumps({"type": "MODIFIED", "time": "2026-11-20T08:55:01Z", "object": snapshot("2", {
            "firstSeq": 45, "lastSeq": 45, "completedAt": "2026-11-20T08:55:01Z", "resources": [],
            "missing": [], "gaps": [gap]})}) + "\n")
    subprocess.run([ingest, "--ledger", ledger, "--from", events], check=True,
                   stdout=subprocess.DEVNULL)
    log = open(os.path.join(tmp, "gap-serve.log"), "w+")
    proc, port = start_server(query, ledger, log)
    try:
        dom = load_page(browser, os.path.join(tmp, "chromium-profile"),
                        f"http://127.0.0.1:{port}", {"at": "now"})
        f.check(dom.body.get("data-ready") == "1", "gap: the page did not finish")
        f.check(len(dom.gaps) == 1, f"gap: {len(dom.gaps)} coverage lines over the charts, not 1")
        print(f"ok the page lists {len(dom.gaps)} gap")
    finally:
        stop(proc)
        log.close()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("SKIP: chromium not installed (Debian's chromium package; tools/setup-debian.sh installs it)")
        return SKIP
    ingest, query = os.environ.get("LEDGER_INGEST"), os.environ.get("LEDGER_QUERY")
    if not ingest or not query:
        print("LEDGER_INGEST and LEDGER_QUERY must name the programs")
        return 1
    shots = os.environ.get("SCREENSHOT_DIR") or os.getcwd()
    f = Failures()
    try:
        run_all(f, browser, ingest, query, root, shots)
    except (RuntimeError, subprocess.CalledProcessError) as err:
        f.check(False, str(err))
    if f.items:
        print(f"{len(f.items)} failures")
        return 1
    print("web view: all checks passed")
    return 0


def run_all(f, browser, ingest, query, root, shots):
    with tempfile.TemporaryDirectory(prefix="web-view-") as tmp:
        demo = os.path.join(tmp, "demo")
        subprocess.run([ingest, "--ledger", demo, "--from",
                        os.path.join(root, "tools", "demo", "cluster-events.jsonl")],
                       check=True, stdout=subprocess.DEVNULL)
        # The demo: mid-way (two jobs running), as a seq, and the end (findings).
        check_ledger(f, browser, tmp, query, demo,
                     ["2026-11-20T08:50:05Z", "seq:20", "now"],
                     "team-b/job-legacy-infer-79951", os.path.join(shots, "web-view.png"),
                     held_cq="team-b")

        check_gap(f, browser, tmp, ingest, query, root)

        gen = os.environ.get("LEDGER_GEN")
        if gen:
            events = os.path.join(tmp, "gen.jsonl")
            with open(events, "w") as out:
                subprocess.run([gen, "--events", "4000", "--queues", "6", "--nodes", "8"],
                               check=True, stdout=out)
            ledger = os.path.join(tmp, "generated")
            subprocess.run([ingest, "--ledger", ledger, "--from", events],
                           check=True, stdout=subprocess.DEVNULL)
            end = run_json(query, "--ledger", ledger, "state", "--at", "now", "-o", "json")
            check_ledger(f, browser, tmp, query, ledger,
                         [f"seq:{end['at']['seq'] // 2}", "now"], None, None)


if __name__ == "__main__":
    sys.exit(main())

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
?workload=NS/NAME opens that workload's history with the CLI's changes. The
overview: the open findings' count and the count per type are the CLI's, a
workload row with findings names their types; ?cq=&ns= keeps only that
ClusterQueue's charts and quota rows and the workloads and findings there;
?finding=TYPE lists that type's findings. On a generated 16-queue, 64-node
ledger, at 1400x1000, the findings' count is on the first screen, the page is
at most 10,000 px tall, each queue's GPU line is the CLI's last step and
its pending workloads and open findings are the CLI's, and each chart marks
on its time axis when findings opened and closed: as many as
/ledger/v1/findings (and `ledger-query findings`) answers, at their times. A
page left open (Chromium over the DevTools pipe) while records are ingested
shows the state at the new last seq within 20 s, with no reload. A
screenshot (1400x1000) is saved as SCREENSHOT_DIR/web-view.png and must be a
PNG of that size. Chromium comes from Debian's chromium package
(tools/setup-debian.sh); without it the test skips (exit 77), saying so.
"""
import datetime
import decimal
import html.parser
import importlib.util
import json
import math
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from serve_support import chromium

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
        self.ticks = []       # the charts' finding ticks, with "chart": its index
        self.gaps = []        # the coverage lines over the charts
        self.open_findings = {}  # the overview's count
        self.finding_types = []  # the overview's count per type
        self.gpu = []            # the folded queues' GPU lines
        self.charts_groups = []  # the queues' chart groups, in order
        self.cq_flags = []       # the queues' lines: pending, open findings
        self.error_texts = []
        self.why_rows = []       # the panel's why timeline: [kind, cell texts...]
        self.nonconforming = []  # the why timeline's marked evictions (their times)
        self._in_why_cell = False
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
        elif ident == "open-findings":
            self.open_findings = a
        elif tag == "span" and "gpu-summary" in a.get("class", "").split():
            self.gpu.append(dict(a, cq=self.charts_groups[-1] if self.charts_groups else None))
        elif tag == "span" and "cq-flags" in a.get("class", "").split():
            self.cq_flags.append(a)
        elif tag == "details" and "cq-charts" in a.get("class", "").split():
            self.charts_groups.append(a.get("data-cq"))
        elif tag == "li" and "data-count" in a:
            self.finding_types.append(a)
        elif ident == "workload-panel":
            self.panel = a
        elif ident == "workload-body":
            self._in_history = True
        elif tag == "tr" and "data-reserved" in a:
            self.quota.append(a)
        elif tag == "tr" and "data-workload" in a:
            self.workloads.append(a)
        elif tag == "tr" and ("data-interval" in a or "data-eviction" in a) and self._in_history:
            self.why_rows.append(["interval" if "data-interval" in a else "eviction"])
            if "nonconforming" in a.get("class", "").split():
                self.nonconforming.append(a.get("data-eviction"))
        elif tag == "td" and self.why_rows and self._in_history and len(self.why_rows[-1]) < 7:
            self.why_rows[-1].append("")
            self._in_why_cell = True
        elif tag == "tr" and "data-seq" in a and self._in_history:
            self.history.append(a)
        elif tag == "figure" and "chart" in a.get("class", "").split():
            self.charts.append(a)
        elif tag == "path" and "held" in a.get("class", "").split() and self.charts:
            c = self.charts[-1]
            self.held[(c.get("data-cq"), c.get("data-flavor"), c.get("data-resource"))] = a
        elif tag == "path" and "finding-tick" in a.get("class", "").split() and self.charts:
            self.ticks.append(dict(a, chart=len(self.charts) - 1))
        elif tag == "line" and "marker" in a.get("class", "").split():
            self.markers.append(a)
        elif tag == "li" and "gap" in a.get("class", "").split():
            self.gaps.append(a)
        if tag == "div" and "error" in a.get("class", "").split():
            self._in_error += 1
            self.error_texts.append("")

    def handle_endtag(self, tag):
        if tag == "td":
            self._in_why_cell = False
        if tag == "div" and self._in_error:
            self._in_error -= 1
        if tag == "aside":
            self._in_history = False

    def handle_data(self, data):
        if self._in_why_cell:
            self.why_rows[-1][-1] += data
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
        check_ticks(f, label, dom, start, end)
    f.check(dom.markers and all(m.get("data-at") for m in dom.markers),
            f"{label}: the charts do not mark the moment")
    f.check(dom.body.get("data-requests-state") == "1" and dom.body.get("data-requests-usage") == "1",
            f"{label}: the first load asked for /state {dom.body.get('data-requests-state')} and "
            f"/usage {dom.body.get('data-requests-usage')} times, not once each")
    print(f"ok {label}: seq {state['at']['seq']}, {len(shown)} quota rows, "
          f"{len(state['findings'])} findings, {len(dom.charts)} charts (step {step})")
    return state


def check_ticks(f, label, dom, start, end):
    """Every chart's time axis: two to five ticks at round UTC times (a
    multiple of one of the page's intervals, a minute to a week) inside the
    chart's period."""
    from_ms = int(datetime.datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp() * 1000)
    to_ms = int(datetime.datetime.fromisoformat(end.replace("Z", "+00:00")).timestamp() * 1000)
    intervals = {s * 1000 for s in (60, 300, 900, 1800, 3600, 10800, 21600, 43200, 86400,
                                    172800, 604800)}
    for c in dom.charts:
        every = int(c.get("data-tick-every") or 0)
        ticks = [int(t) for t in (c.get("data-ticks") or "").split()]
        where = (c.get("data-cq"), c.get("data-flavor"), c.get("data-resource"))
        f.check((every in intervals or (every and every % 604800000 == 0)) and 2 <= len(ticks) <= 5
                and all(t % every == 0 and from_ms <= t <= to_ms for t in ticks),
                f"{label}: chart {where}: time ticks {ticks} every {every} ms in [{from_ms}, {to_ms}]")


def finding_place(finding, workloads):
    """(ClusterQueue, namespace) of a finding's object, as the page reads it:
    "Workload ns/name" (its ClusterQueue from the state), "ClusterQueue X",
    or any "Kind ns/name"."""
    kind, _, name = finding["object"].partition(" ")
    ns = name.split("/")[0] if "/" in name else None
    cq = name if kind == "ClusterQueue" else None
    if kind == "Workload" and name in workloads:
        cq = workloads[name]["clusterQueue"]
    return cq, ns


def check_scope(f, browser, profile, base, query, ledger, cq, ns, finding_type):
    """The overview's open findings (all, then ?cq=&ns=) and ?finding=TYPE
    against the CLI's findings; the scope narrows the tables and charts."""
    state = run_json(query, "--ledger", ledger, "state", "--at", "now", "-o", "json")
    workloads = {f"{w['namespace']}/{w['name']}": w for w in state["workloads"]}
    dom = load_page(browser, profile, base, {"at": "now"})
    counts = {}
    for x in state["findings"]:
        counts[x["type"]] = counts.get(x["type"], 0) + 1
    shown = {li.get("data-type"): int(li.get("data-count")) for li in dom.finding_types}
    f.check(dom.open_findings.get("data-open-findings") == str(len(state["findings"])),
            f"overview: {dom.open_findings.get('data-open-findings')} open findings, "
            f"the CLI's {len(state['findings'])}")
    f.check(shown == counts, f"overview: findings per type {shown}, the CLI's {counts}")
    flagged = {r["data-workload"]: set(r.get("data-findings", "").split()) for r in dom.workloads
               if r.get("data-findings")}
    expected_flags = {}
    for x in state["findings"]:
        kind, _, name = x["object"].partition(" ")
        if kind == "Workload" and name in workloads:
            expected_flags.setdefault(name, set()).add(x["type"])
    f.check(flagged == expected_flags, f"workload rows marked {flagged}, the CLI's {expected_flags}")

    params = {"at": "now", "cq": cq, **({"ns": ns} if ns else {})}
    dom = load_page(browser, profile, base, params)
    inside = [x for x in state["findings"]
              if finding_place(x, workloads)[0] == cq and (not ns or finding_place(x, workloads)[1] == ns)]
    f.check(dom.body.get("data-ready") == "1", f"?cq={cq}&ns={ns}: the page did not finish")
    f.check(dom.open_findings.get("data-open-findings") == str(len(inside)),
            f"?cq={cq}&ns={ns}: {dom.open_findings.get('data-open-findings')} open findings, "
            f"the CLI's {len(inside)} there")
    f.check(dom.quota and all(r.get("data-cq") == cq for r in dom.quota),
            f"?cq={cq}: quota rows of {sorted({r.get('data-cq') for r in dom.quota})}")
    f.check(dom.charts and all(c.get("data-cq") == cq for c in dom.charts),
            f"?cq={cq}: charts of {sorted({c.get('data-cq') for c in dom.charts})}")
    rows = {r["data-workload"] for r in dom.workloads}
    want = {k for k, w in workloads.items()
            if w["clusterQueue"] == cq and (not ns or w["namespace"] == ns)}
    f.check(rows == want, f"?cq={cq}&ns={ns}: workload rows {sorted(rows)}, the CLI's {sorted(want)}")

    dom = load_page(browser, profile, base, {"at": "now", "finding": finding_type})
    f.check(dom.findings.get("data-shown-count") == str(counts.get(finding_type, -1)),
            f"?finding={finding_type}: {dom.findings.get('data-shown-count')} rows, the CLI's "
            f"{counts.get(finding_type)}")
    print(f"ok overview: {len(state['findings'])} open findings {counts}; ?cq={cq}&ns={ns}: "
          f"{len(inside)} findings, {len(rows)} workloads; ?finding={finding_type}")


def check_first_screen(f, browser, profile, base, query, ledger):
    """At 1400x1000 the count of open findings is on the first screen and the
    whole first load is at most ten screens tall."""
    state = run_json(query, "--ledger", ledger, "state", "--at", "now", "-o", "json")
    dom = Dom()
    dom.feed(chromium(browser, profile, f"{base}/?at=now", "--dump-dom", "--window-size=1400,1000"))
    height = int(dom.body.get("data-document-height", "-1"))
    bottom = int(dom.body.get("data-findings-bottom", "-1"))
    f.check(0 < height <= 10000, f"first load: the page is {height} px tall, more than ten screens")
    f.check(0 < bottom <= 1000, f"first load: the open findings' count ends at {bottom} px, "
            "below the first screen")
    f.check(dom.open_findings.get("data-open-findings") == str(len(state["findings"])),
            f"first load: {dom.open_findings.get('data-open-findings')} open findings shown, "
            f"the CLI's {len(state['findings'])}")
    step, start, end = (dom.charts_section.get(k) for k in ("data-step", "data-from", "data-to"))
    usage = run_json(query, "--ledger", ledger, "usage", "--from", start, "--to", end,
                     "--step", step, "-o", "json")
    expected = {}
    for series in usage["series"]:
        if series["resource"].endswith("/gpu") and series["points"]:
            last = series["points"][-1]
            r, n = expected.get(series["clusterQueue"], (0.0, 0.0))
            expected[series["clusterQueue"]] = (r + float(last["reserved"]), n + float(last["nominal"]))
    tenth = lambda v: f"{math.floor(v * 10 + 0.5) / 10:g}"  # as JavaScript rounds
    expected = {k: (tenth(r), tenth(n)) for k, (r, n) in expected.items()}
    shown = {g["cq"]: (g.get("data-gpu-reserved"), g.get("data-gpu-nominal")) for g in dom.gpu}
    f.check(shown == expected, f"first load: GPUs per queue (reserved, nominal) {shown}, the "
            f"CLI's last step {expected}")
    workloads = {f"{w['namespace']}/{w['name']}": w for w in state["workloads"]}
    want = {cq["name"]: (str(cq["workloads"]["pending"]), "0") for cq in state["clusterQueues"]}
    for x in state["findings"]:
        cq = finding_place(x, workloads)[0]
        if cq in want:
            want[cq] = (want[cq][0], str(int(want[cq][1]) + 1))
    flags = {s.get("data-cq"): (s.get("data-pending"), s.get("data-findings")) for s in dom.cq_flags}
    f.check(flags == want, f"first load: queues' lines (pending, findings) {flags}, the CLI's {want}")
    print(f"ok first screen: {len(state['clusterQueues'])} ClusterQueues, {len(state['pools'])} "
          f"pools, page {height} px tall, findings count at {bottom} px")
    return dom


def check_finding_ticks(f, dom, base, query, ledger):
    """Each chart's time axis (on the page `dom` dumped) marks when findings
    opened and closed: the ticks of a chart count the events of
    /ledger/v1/findings (the charts' period and step; the same as
    `ledger-query findings`), one tick per step and change, each at an
    event's time."""
    step, start, end = (dom.charts_section.get(k) for k in ("data-step", "data-from", "data-to"))
    query_string = urllib.parse.urlencode({"from": start, "to": end, "step": step})
    answer = json.loads(get(f"{base}/ledger/v1/findings?{query_string}")[1])
    events = answer["events"]
    cli = run_json(query, "--ledger", ledger, "findings", "--from", start, "--to", end,
                   "--step", step, "-o", "json")
    f.check([(e["time"], e["change"], e["type"], e["object"]) for e in events] ==
            [(e["time"], e["change"], e["type"], e["object"]) for e in cli["events"]],
            f"/findings: {len(events)} events, the CLI's {len(cli['events'])}")
    f.check(len(events) > 0, f"/findings from {start} to {end}: no finding opened or closed")
    f.check(dom.charts_section.get("data-finding-events") == str(len(events)),
            f"#charts: {dom.charts_section.get('data-finding-events')} finding events, "
            f"the endpoint's {len(events)}")
    # An event's openSeq is a state where the finding is open.
    for event in [e for e in events if e["change"] == "opened"][:1] + \
            [e for e in events if e["change"] == "closed"][:1]:
        there = run_json(query, "--ledger", ledger, "state", "--seq", str(event["openSeq"]),
                         "-o", "json")["findings"]
        key = (event["type"], event["object"], event["message"])
        f.check(key in {(x["type"], x["object"], x["message"]) for x in there},
                f"/findings: {event['change']} {key} is not open at seq {event['openSeq']}")
    times = {(e["time"], e["change"]) for e in events}
    for index in range(len(dom.charts)):
        ticks = [t for t in dom.ticks if t["chart"] == index]
        count = sum(int(t.get("data-count", "0")) for t in ticks)
        if not f.check(count == len(events) and len(ticks) == len(times),
                       f"chart {index}: {len(ticks)} ticks for {count} findings, the endpoint's "
                       f"{len(times)} steps and changes of {len(events)}"):
            break
        stray = [t for t in ticks if (t.get("data-time"), t.get("data-change")) not in times]
        if not f.check(not stray, f"chart {index}: ticks at no finding's time: {stray[:3]}"):
            break
    print(f"ok finding ticks: {len(events)} events in {len(times)} ticks on each of "
          f"{len(dom.charts)} charts")


def why_text(why):
    """The rows `ledger-query why` prints, in the drawer's column order:
    state, from, to, reason, blocked by (the holders, else the admission
    check's first word); evictions: at, reason, preemptor, policy, conforms
    (yes/NO/-), explanation."""
    rows = []
    for i in why["intervals"]:
        held = ", ".join("%s %s=%s" % (h["workload"], h["resource"], h["amount"]) for h in i["blockedBy"])
        blocked = held or (i["shortfalls"][0] if i["shortfalls"] else "-")
        rows.append(["interval", i["state"], i["from"], i["to"] or "-", i["reason"] or "-",
                     blocked if i["state"] == "Pending" else "-"])
    for e in why["evictions"]:
        conforms = "-" if e["conforms"] is None else ("yes" if e["conforms"] else "NO")
        rows.append(["eviction", e["at"], e["reason"] or "-", e["preemptor"] or "-", e["policy"] or "-",
                     conforms, e["explanation"]])
    return rows


def check_why(f, browser, profile, base, query, ledger, workload):
    """The drawer's why timeline says what `ledger-query why` says."""
    want = why_text(run_json(query, "--ledger", ledger, "why", workload, "-o", "json"))
    dom = load_page(browser, profile, base, {"at": "now", "workload": workload})
    f.check(dom.why_rows == want and want,
            f"?workload={workload}: the why timeline\n{dom.why_rows}\nis not the CLI's\n{want}")
    marked = [r[1] for r in want if r[0] == "eviction" and r[5] == "NO"]
    f.check(dom.nonconforming == marked,
            f"?workload={workload}: marked evictions {dom.nonconforming}, want {marked}")
    print(f"ok ?workload={workload}: why timeline of {len(want)} rows, {len(marked)} marked")
    return dom


def check_why_scenario(f, browser, tmp, ingest, query, root):
    """A preemption the queue's policy does not allow, marked in the drawer
    (tests/scenarios/why-preemption-not-allowed)."""
    ledger = os.path.join(tmp, "why-not-allowed")
    subprocess.run([ingest, "--ledger", ledger, "--from",
                    os.path.join(root, "tests", "scenarios", "why-preemption-not-allowed",
                                 "events.jsonl")], check=True, stdout=subprocess.DEVNULL)
    log = open(os.path.join(tmp, "why-serve.log"), "w+")
    proc, port = start_server(query, ledger, log)
    try:
        dom = check_why(f, browser, os.path.join(tmp, "chromium-profile"),
                        f"http://127.0.0.1:{port}", query, ledger, "t/low")
        f.check(len(dom.nonconforming) == 1, f"t/low: one eviction marked, got {dom.nonconforming}")
    finally:
        stop(proc)
        log.close()


def check_png(f, path, width, height):
    data = open(path, "rb").read() if os.path.exists(path) else b""
    if not f.check(len(data) > 1000 and data[:8] == b"\x89PNG\r\n\x1a\n",
                   f"{path}: not a PNG ({len(data)} bytes)"):
        return
    w, h = struct.unpack(">II", data[16:24])
    f.check((w, h) == (width, height), f"{path}: {w}x{h}, not {width}x{height}")
    print(f"ok screenshot {path}: {w}x{h}, {len(data)} bytes")


def check_ledger(f, browser, tmp, query, ledger, moments, workload, screenshot, held_cq=None,
                 scope=None, first_screen=False, why=None):
    log = open(os.path.join(tmp, os.path.basename(ledger) + "-serve.log"), "w+")
    proc, port = start_server(query, ledger, log)
    base = f"http://127.0.0.1:{port}"
    profile = os.path.join(tmp, "chromium-profile")
    try:
        for at in moments:
            check_moment(f, browser, profile, base, query, ledger, at, held_cq)
        if scope:
            check_scope(f, browser, profile, base, query, ledger, *scope)
        if first_screen:
            dom = check_first_screen(f, browser, profile, base, query, ledger)
            check_finding_ticks(f, dom, base, query, ledger)

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
        if why:
            check_why(f, browser, profile, base, query, ledger, why)

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


def check_live(f, root, url, append, last_seq):
    """The page stays open (Chromium over the DevTools pipe, as
    tools/bench/web_load.py drives it) while append() adds records to the
    served ledger; within 20 s its state is at the new last seq, with no
    reload."""
    spec = importlib.util.spec_from_file_location(
        "web_load", os.path.join(root, "tools", "bench", "web_load.py"))
    web_load = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(web_load)
    browser = web_load.Chromium()
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.call("Target.attachToTarget",
                               {"targetId": target, "flatten": True})["sessionId"]
        browser.call("Page.navigate", {"url": url}, session)
        def shown():
            r = browser.call("Runtime.evaluate", {"expression":
                "document.body && document.body.dataset.ready === '1' ? "
                "document.getElementById('state').dataset.stateSeq + ' ' + "
                "document.body.dataset.refreshes : ''"}, session)
            return r.get("result", {}).get("value", "")
        def wait(ok, seconds):
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                value = shown()
                if value and ok(value.split()):
                    return value.split()
                time.sleep(0.1)
            return (shown() or "- -").split()
        before = wait(lambda v: True, 30)
        append()
        after_seq = last_seq()
        f.check(int(before[0]) < after_seq, f"live: the page shows seq {before[0]} before the "
                f"append, the ledger ends at {after_seq}")
        now = wait(lambda v: v[0] == str(after_seq), 20)
        f.check(now[0] == str(after_seq), f"live: 20 s after the append the page shows seq "
                f"{now[0]}, the ledger ends at {after_seq}")
        print(f"ok live refresh: seq {before[0]} at load, {now[0]} after the append "
              f"({now[1]} refreshes)")
    finally:
        browser.close()


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
    log = open(os.path.join(tmp, "gap-serve.log"), "w+")
    proc, port = start_server(query, ledger, log)
    try:
        # Live refresh: the page, loaded before the relist's records, shows them.
        check_live(f, root, f"http://127.0.0.1:{port}/?at=now",
                   lambda: subprocess.run([ingest, "--ledger", ledger, "--from", events],
                                          check=True, stdout=subprocess.DEVNULL),
                   lambda: run_json(query, "--ledger", ledger, "state", "--at", "now",
                                    "-o", "json")["at"]["seq"])
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
                     held_cq="team-b", scope=("team-b", "team-b", "UnchargedDRA"),
                     why="team-a/job-fpga-sim-f04d2")

        check_why_scenario(f, browser, tmp, ingest, query, root)
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

            # A team's scale: the generator's 16 ClusterQueues and 64 GPU nodes;
            # of 2000, 4000, ... events (seed 3), 10000 is the first that ends
            # with open findings (StatusMismatch of ClusterQueue team-06).
            events = os.path.join(tmp, "gen16.jsonl")
            with open(events, "w") as out:
                subprocess.run([gen, "--events", "10000", "--seed", "3"], check=True, stdout=out)
            ledger = os.path.join(tmp, "sixteen")
            subprocess.run([ingest, "--ledger", ledger, "--from", events, "--no-sync"],
                           check=True, stdout=subprocess.DEVNULL)
            check_ledger(f, browser, tmp, query, ledger, ["now"], None,
                         os.path.join(shots, "web-view-16-queues.png"),
                         scope=("team-06", None, "StatusMismatch"), first_screen=True)


if __name__ == "__main__":
    sys.exit(main())

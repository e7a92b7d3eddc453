#!/usr/bin/env python3
"""`ledger-query serve` on a cut ledger (`ledger-replay archive`, docs/reference.md
"Retention"), without and with `--archive DIR`.

The demo's events re-timed 15 minutes apart from 2026-11-20T08:00:00Z, cut
before 13:00 (records 1..20 to the archive), served:
- a moment before the cut (/ledger/v1/state?at=, /at/{TIME}/... and kubectl
  through it) is a 400 BadRequest Status naming the archive and --archive,
  the moment in RFC 3339, as the CLI's refusal;
- a moment after the cut is answered as `ledger-query state` answers it;
- /ledger/v1/range starts at the live ledger's first record (seq 21, 13:00)
  and names the archive and its last record;
- with --archive, a moment before the cut is answered from the archive, as
  `ledger-query --archive` answers it, and kubectl lists its workloads; a
  ledger not cut is exit 1, a directory that is not its archive exit 3.

env: LEDGER_INGEST, LEDGER_QUERY, LEDGER_REPLAY (the built programs),
     DEMO_STREAM (tools/demo/cluster-events.jsonl). kubectl is used where
     installed.
"""
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from serve_support import start_server, stop_server

failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


def spread_demo(path):
    """The demo stream, its events 15 minutes apart from 08:00 UTC."""
    with open(os.environ["DEMO_STREAM"]) as src, open(path, "w") as out:
        i = 0
        for line in src:
            if not line.strip():
                continue
            event = json.loads(line)
            event["time"] = "2026-11-20T%02d:%02d:00Z" % (8 + i // 4, (i % 4) * 15)
            out.write(json.dumps(event) + "\n")
            i += 1


def get(port, path):
    """(status, body as JSON)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read() or b"{}")
    finally:
        conn.close()


def refusal_checks(what, message, archive):
    check("archive " + archive in message, what + " names the archive: " + message)
    check("--archive " + archive in message, what + " says --archive")
    check("2026-11-20T10:00:00Z" in message, what + " gives the moment in RFC 3339")
    check(re.search(r"\d{16}", message) is None, what + " holds no nanoseconds")


def with_archive(ledger, archive, tmp, kubectl):
    """serve --archive: a moment before the cut answered from the archive, as
    `ledger-query --archive` answers it; one after it from the ledger."""
    for args, code, what in ((["--ledger", archive, "serve", "--archive", archive], 1,
                              "a ledger not cut"),
                             (["--ledger", ledger, "serve", "--archive", tmp], 3,
                              "a directory that is not its archive")):
        r = run(os.environ["LEDGER_QUERY"], *args, "--listen", "127.0.0.1:0")
        check(r.returncode == code, "serve --archive on %s: exit %d (got %d: %s)" %
              (what, code, r.returncode, r.stderr.strip()[-200:]))
    proc, port = start_server(ledger, os.path.join(tmp, "serve-archive.log"), "--archive", archive)
    try:
        for moment in ("2026-11-20T12:40:00Z", "seq:12", "2026-11-20T14:00:00Z"):
            at = ["--seq", moment[4:]] if moment.startswith("seq:") else ["--at", moment]
            cli = run(os.environ["LEDGER_QUERY"], "--ledger", ledger, "--archive", archive,
                      "state", *at, "-o", "json")
            status, body = get(port, "/ledger/v1/state?at=" + moment)
            check(status == 200 and cli.returncode == 0 and
                  body.get("workloads") == json.loads(cli.stdout).get("workloads") and
                  body.get("digest") == json.loads(cli.stdout).get("digest"),
                  "serve --archive at %s answers as ledger-query --archive (got %d)" %
                  (moment, status))
        if kubectl:
            cli = run(os.environ["LEDGER_QUERY"], "--ledger", ledger, "--archive", archive,
                      "state", "--at", "2026-11-20T12:40:00Z", "-o", "json")
            names = sorted(w["namespace"] + "/" + w["name"]
                           for w in json.loads(cli.stdout).get("workloads", []))
            url = "http://127.0.0.1:%d/at/2026-11-20T12:40:00Z" % port
            r = run(kubectl, "--server", url, "get", "workloads", "-A", "--no-headers",
                    "-o", "custom-columns=NS:.metadata.namespace,NAME:.metadata.name")
            listed = sorted("/".join(line.split()) for line in r.stdout.splitlines() if line)
            check(r.returncode == 0 and names and listed == names,
                  "kubectl lists the archive's workloads before the cut: %s (want %s) %s" %
                  (listed, names, r.stderr.strip()))
    finally:
        stop_server(proc)


def main():
    tmp = tempfile.mkdtemp(prefix="serve-cut-")
    proc = None
    try:
        events = os.path.join(tmp, "events.jsonl")
        spread_demo(events)
        ledger = os.path.join(tmp, "live")
        archive = os.path.join(tmp, "archive")
        r = run(os.environ["LEDGER_INGEST"], "--ledger", ledger, "--from", events)
        check(r.returncode == 0, "ingest: " + r.stderr[-300:])
        r = run(os.environ["LEDGER_REPLAY"], "--ledger", ledger, "archive", "--before",
                "2026-11-20T13:00:00Z", "--to", archive)
        check(r.returncode == 0 and "archived records 1..20 " in r.stdout,
              "archive before 13:00: " + r.stdout + r.stderr[-300:])
        cli = run(os.environ["LEDGER_QUERY"], "--ledger", ledger, "state", "--at",
                  "2026-11-20T10:00:00Z", "-o", "json")
        check(cli.returncode == 1, "the CLI refuses a moment before the cut (exit 1)")
        refusal_checks("the CLI's refusal", cli.stderr, archive)

        proc, port = start_server(ledger, os.path.join(tmp, "serve.log"))
        status, body = get(port, "/ledger/v1/state?at=2026-11-20T10:00:00Z")
        check(status == 400 and body.get("kind") == "Status" and body.get("reason") == "BadRequest",
              "/ledger/v1/state before the cut: 400 BadRequest (got %d)" % status)
        refusal_checks("/ledger/v1/state", body.get("message", ""), archive)
        status, body = get(port, "/at/2026-11-20T10:00:00Z/apis/kueue.x-k8s.io/v1beta1/workloads")
        check(status == 400 and body.get("kind") == "Status",
              "/at/{before the cut}/.../workloads: 400 Status (got %d)" % status)
        refusal_checks("the Kubernetes API", body.get("message", ""), archive)

        status, body = get(port, "/ledger/v1/state?at=2026-11-20T14:00:00Z")
        after = run(os.environ["LEDGER_QUERY"], "--ledger", ledger, "state", "--at",
                    "2026-11-20T14:00:00Z", "-o", "json")
        check(status == 200 and after.returncode == 0 and
              body.get("workloads") == json.loads(after.stdout).get("workloads"),
              "a moment after the cut is answered as ledger-query state answers it")

        status, body = get(port, "/ledger/v1/range")
        check(status == 200 and body.get("firstSeq") == 21 and
              body.get("firstTime") == "2026-11-20T13:00:00Z",
              "/ledger/v1/range starts after the cut: %s" % json.dumps(body))
        check(body.get("archive", {}).get("lastSeq") == 20 and
              body["archive"].get("lastTime") == "2026-11-20T12:45:00Z" and
              body["archive"].get("dir") == archive,
              "/ledger/v1/range names the archive and its last record")

        kubectl = shutil.which("kubectl")
        if kubectl:
            url = "http://127.0.0.1:%d/at/2026-11-20T10:00:00Z" % port
            r = run(kubectl, "--server", url, "get", "workloads", "-A")
            check(r.returncode != 0 and "BadRequest" in r.stderr,
                  "kubectl prints the refusal as an API error: " + r.stderr.strip())
            refusal_checks("kubectl", r.stderr, archive)
        else:
            print("skip: kubectl is not installed")
        stop_server(proc)
        proc = None
        with_archive(ledger, archive, tmp, kubectl)
    finally:
        stop_server(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`ledger-query serve` states the ledger's proof on every answer (docs/reference.md,
"The proof line").

On a served demo ledger:
- before any verification: the `Ledger-Proof` header says "never verified" and
  /ledger/v1/range and /ledger/v1/state carry verifyOk null;
- after `ledger-replay verify`: "...: ok" and verifyOk true, verifiedUpTo the
  last seq, without restarting the server;
- a failed verification recorded while serving (the record file written as
  its documented format says): the next answer, also an answer about a past
  moment that the server keeps in its cache, carries a Warning header naming
  the failed seq, and /ledger/v1/ answers say verifyOk false (serve answers,
  warning, where the CLI refuses);
- a passing `verify` again: the warning is gone.

env: LEDGER_INGEST, LEDGER_QUERY, LEDGER_REPLAY (the built programs),
     DEMO_STREAM (tools/demo/cluster-events.jsonl).
"""
import http.client
import json
import os
import re
import shutil
import signal
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


def get(port, path):
    """(status, headers as a list of pairs, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        reply = conn.getresponse()
        return reply.status, reply.getheaders(), reply.read()
    finally:
        conn.close()


def header(headers, name):
    return [v for k, v in headers if k.lower() == name.lower()]


def verify(ledger):
    return subprocess.run([os.environ["LEDGER_REPLAY"], "--ledger", ledger, "verify"],
                          capture_output=True, text=True, timeout=300).returncode


def main():
    tmp = tempfile.mkdtemp(prefix="serve-proof-")
    proc = None
    try:
        ledger = os.path.join(tmp, "demo")
        out = subprocess.run([os.environ["LEDGER_INGEST"], "--ledger", ledger, "--from",
                              os.environ["DEMO_STREAM"]], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        proc, port = start_server(ledger, os.path.join(tmp, "serve.log"))
        status, headers, body = get(port, "/ledger/v1/range")
        last = json.loads(body)["lastSeq"]
        check(status == 200 and json.loads(body)["verifyOk"] is None,
              "before any verification: range says verifyOk null")
        check(header(headers, "Ledger-Proof") == ["never verified"],
              "Ledger-Proof: never verified (got %s)" % header(headers, "Ledger-Proof"))

        check(verify(ledger) == 0, "ledger-replay verify passes beside the server")
        for path in ("/ledger/v1/range", "/ledger/v1/state?at=now"):
            status, headers, body = get(port, path)
            answer = json.loads(body)
            check(status == 200 and answer.get("verifyOk") is True and
                  answer.get("verifiedUpTo") == last and
                  answer.get("verifiedBy") == "ledger-replay verify",
                  "%s states the passing verification up to seq %d" % (path, last))
        proof = header(headers, "Ledger-Proof")
        check(len(proof) == 1 and proof[0].startswith("verified up to seq %d at " % last) and
              proof[0].endswith(": ok"), "Ledger-Proof states it (%s)" % proof)

        # An answer about a past moment, kept in the answer cache.
        past = "/at/seq:5/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
        status, headers, _ = get(port, past)
        check(status == 200 and not header(headers, "Warning"), "a past moment, no warning")
        record = {"format": 1, "scope": "full", "timeNs": time.time_ns(), "upToSeq": last,
                  "ok": False, "failedSeq": 7, "problem": "the projection differs"}
        path = os.path.join(ledger, "ledger-verified")
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(path + ".tmp", path)
        status, headers, _ = get(port, past)
        warning = " ".join(header(headers, "Warning"))
        check(status == 200 and "FAILED at seq 7" in warning,
              "the cached answer now warns of the failed verification (%s)" % warning)
        status, headers, body = get(port, "/ledger/v1/state?at=now")
        answer = json.loads(body)
        check(status == 200 and answer.get("verifyOk") is False and
              answer.get("verifyFailedSeq") == 7, "/ledger/v1/state says verifyOk false")
        check(verify(ledger) == 0, "a passing verify again")
        status, headers, _ = get(port, past)
        check(not header(headers, "Warning") and
              header(headers, "Ledger-Proof")[0].endswith(": ok"), "the warning is gone")
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`ledger-query serve` against slow and malformed clients (docs/testing.md).

On loopback only (127.0.0.1), every wait bounded:
- 600 connections from 127.0.0.1 (more than the server's 512) that send
  `GET /at/now/api HTTP/1.1` and one header, and never finish: a request
  from 127.0.0.2 is still answered within a second, and one more from
  127.0.0.1 is 503 (64 connections per address);
- a connection that stops in its headers, or in a body it announced, is
  closed by the server after its read timeout;
- a POST with neither body nor Content-Length is 405 at once; a body past
  the limit is 413, never read into memory;
- a bearer token over plain HTTP on an address beyond loopback is refused
  at start (exit 1, naming TLS), through `ledger-query serve` as through
  ledger-serve. The address is a documentation one (192.0.2.1, never
  assigned): a build that let it through fails to bind, never listens.

env: LEDGER_INGEST, LEDGER_QUERY (the built programs),
     DEMO_STREAM (tools/demo/cluster-events.jsonl).
"""
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

failures = []
# Past the server's bound on connections (tools/serve/server.h, 512).
HALF_OPEN = 600
# The server's read timeout (tools/serve/server.h, kReadTimeout) and what a
# loaded machine may add to it.
READ_TIMEOUT = 5.0
SLACK = 3.0


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


class Server:
    def __init__(self, ledger, log):
        self.log = log
        with open(log, "w") as err:
            self.proc = subprocess.Popen(
                [os.environ["LEDGER_QUERY"], "--ledger", ledger, "serve", "--listen", "127.0.0.1:0"],
                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.time() + 30
        self.port = None
        while time.time() < deadline and self.port is None and self.proc.poll() is None:
            with open(log) as f:
                m = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
            else:
                time.sleep(0.1)
        if self.port is None:
            self.proc.kill()
            raise SystemExit("serve did not start: " + open(log).read())

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        check(self.proc.returncode == 0, "serve exits 0 on SIGTERM (got %s)" % self.proc.returncode)


def timed_get(port, path, timeout=10, source="127.0.0.1"):
    """(status, seconds) of one GET on a new connection from `source`; status None on a timeout."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        conn.request("GET", path)
        status = conn.getresponse().status
    except (OSError, http.client.HTTPException):
        status = None
    finally:
        conn.close()
    return status, time.monotonic() - start


def raw(port, data, timeout=10):
    """Sends `data` and reads until the server closes: (bytes, seconds until closed or timed out)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    start = time.monotonic()
    got = b""
    try:
        s.sendall(data)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except socket.timeout:
        pass
    except ConnectionResetError:
        pass
    finally:
        s.close()
    return got, time.monotonic() - start


def status_of(reply):
    m = re.match(rb"HTTP/1\.1 (\d+)", reply)
    return int(m.group(1)) if m else None


def half_open_clients(srv):
    path = "/at/now/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
    status, before = timed_get(srv.port, path)
    check(status == 200, "a normal request is answered (%s)" % status)
    held = []
    try:
        # More than the server's 512 connections, all from 127.0.0.1: it
        # holds 64 of them (--max-connections-per-address) and refuses the rest.
        for _ in range(HALF_OPEN):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            try:
                s.sendall(b"GET /at/now/api HTTP/1.1\r\nHost: x\r\n")
            except OSError:
                pass  # refused and closed already
            held.append(s)
        time.sleep(1.0)  # every one accepted and reading, or refused
        status, took = timed_get(srv.port, path, source="127.0.0.2")
        check(status == 200 and took < 1.0,
              "with %d half-open connections from 127.0.0.1 a request from 127.0.0.2 is "
              "answered in %.2f s (%s; %.2f s without them)" % (HALF_OPEN, took, status, before))
        status, took = timed_get(srv.port, path)
        check(status == 503 and took < 1.0,
              "one more from 127.0.0.1 is 503 in %.2f s (%s)" % (took, status))
    finally:
        for s in held:
            s.close()
    time.sleep(0.5)  # the server sees them close
    status, _ = timed_get(srv.port, path)
    check(status == 200, "127.0.0.1 is answered after they close (%s)" % status)


def read_timeouts(srv):
    _, took = raw(srv.port, b"GET /at/now/api HTTP/1.1\r\nHost: x\r\n", timeout=READ_TIMEOUT + 10)
    check(took < READ_TIMEOUT + SLACK,
          "a connection that stops in its headers is closed after %.1f s" % took)
    reply, took = raw(srv.port, b"POST /at/now/api/v1/namespaces HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Length: 10\r\n\r\nab", timeout=READ_TIMEOUT + 10)
    check(took < READ_TIMEOUT + SLACK,
          "a connection that stops in its body is closed after %.1f s (%r)" % (took, reply[:40]))


def bodies(srv):
    start = time.monotonic()
    reply, _ = raw(srv.port, b"POST /at/now/api/v1/namespaces HTTP/1.1\r\nHost: x\r\n"
                   b"Connection: close\r\n\r\n", timeout=READ_TIMEOUT + 10)
    took = time.monotonic() - start
    check(status_of(reply) == 405 and took < 1.0,
          "a POST without body or Content-Length is 405 in %.2f s (%r)" % (took, reply[:40]))
    for method in (b"PUT", b"PATCH", b"DELETE"):
        reply, took = raw(srv.port, method + b" /at/now/api/v1/namespaces/x HTTP/1.1\r\n"
                          b"Host: x\r\nConnection: close\r\n\r\n", timeout=READ_TIMEOUT + 10)
        check(status_of(reply) == 405 and took < 1.0,
              "a %s without body is 405 in %.2f s" % (method.decode(), took))
    reply, took = raw(srv.port, b"POST /at/now/api/v1/namespaces HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Length: 100000000\r\nConnection: close\r\n\r\n",
                      timeout=READ_TIMEOUT + 10)
    # cpp-httplib skips what is sent of it before answering: at most until the read times out.
    check(status_of(reply) == 413 and took < READ_TIMEOUT + SLACK,
          "a body past the limit is 413, not read into memory, in %.2f s (%r)" % (took, reply[:40]))
    reply, took = raw(srv.port, b"POST /at/now/api/v1/namespaces HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Length: 2\r\nConnection: close\r\n\r\n{}", timeout=READ_TIMEOUT + 10)
    check(status_of(reply) == 405, "a POST with its body is 405 (%r)" % reply[:40])


def token_beyond_loopback(ledger, tmp):
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("s3cret\n")
    out = subprocess.run([os.environ["LEDGER_QUERY"], "--ledger", ledger, "serve", "--listen",
                          "192.0.2.1:9480", "--token-file", token],
                         capture_output=True, text=True, timeout=60)
    check(out.returncode == 1 and "TLS" in out.stderr and "--tls-cert" in out.stderr,
          "a token over plain HTTP beyond loopback is refused at start (%d): %s"
          % (out.returncode, out.stderr.strip()))


def main():
    tmp = tempfile.mkdtemp(prefix="serve-hostile-")
    try:
        ledger = os.path.join(tmp, "demo")
        out = subprocess.run([os.environ["LEDGER_INGEST"], "--ledger", ledger, "--from",
                              os.environ["DEMO_STREAM"]], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        srv = Server(ledger, os.path.join(tmp, "serve.log"))
        try:
            half_open_clients(srv)
            bodies(srv)
            read_timeouts(srv)
        finally:
            srv.stop()
        token_beyond_loopback(ledger, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""How long the web view of `ledger-query serve` takes to load, in Chromium.

usage: tools/bench/web_load.py URL [--runs N]

Drives Debian's headless Chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe), opens URL (the page served at / of a running
`ledger-query serve`) N times, each in a fresh tab, and prints the time from
the navigation's start until the page's first loads finished (the page's
body[data-load-ms], from performance.now()), median and range. Python
standard library only.
"""
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


class Chromium:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="web-load-")
        # --remote-debugging-pipe: Chromium reads fd 3 and writes fd 4. The
        # pipes are placed there in the child only (the caller's own fds 3
        # and 4, a log file say, stay as they are), moved above 10 first so
        # that placing them cannot clobber one another; close-on-exec keeps
        # every other fd out of Chromium.
        def high(fd):
            moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
            return moved
        to_chrome_r, self.to_chrome = (high(fd) for fd in os.pipe())
        self.from_chrome, from_chrome_w = (high(fd) for fd in os.pipe())

        def place_pipes():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        self.proc = subprocess.Popen(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--user-data-dir=" + self.profile, "about:blank"],
            close_fds=False, preexec_fn=place_pipes,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (to_chrome_r, from_chrome_w):
            os.close(fd)
        self.next_id = 0
        self.buffer = b""

    def call(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.from_chrome, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium went away")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})

    def close(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def load_once(browser, url):
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    browser.call("Page.navigate", {"url": url}, session)
    deadline = time.time() + 60
    while time.time() < deadline:
        r = browser.call("Runtime.evaluate", {
            "expression": "document.body && document.body.dataset.ready === '1' ? "
                          "document.body.dataset.loadMs + ' ' + document.getElementById('errors').dataset.errorCount : ''"},
            session)
        value = r.get("result", {}).get("value", "")
        if value:
            ms, errors = value.split()
            browser.call("Target.closeTarget", {"targetId": target})
            if errors != "0":
                raise RuntimeError("the page shows %s errors" % errors)
            return float(ms)
        time.sleep(0.01)
    raise RuntimeError("the page did not finish loading within 60 s")


def main():
    args = sys.argv[1:]
    runs = 5
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__)
        return 1
    browser = Chromium()
    try:
        times = [load_once(browser, args[0]) for _ in range(runs)]
    finally:
        browser.close()
    print("web view load (navigation start to first loads done), %d runs: median %.0f ms "
          "(%.0f-%.0f)" % (runs, statistics.median(times), min(times), max(times)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

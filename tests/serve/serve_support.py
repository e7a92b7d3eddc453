"""What the serve tests share: `ledger-query serve` started on a free
loopback port, found from its log line, and stopped.

env: LEDGER_QUERY (the built program).
"""
import os
import re
import subprocess
import time


def start_server(ledger, log, *extra):
    """(process, port) of `ledger-query --ledger LEDGER serve EXTRA...` once it
    logs where it serves; its stderr goes to the file `log`."""
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [os.environ["LEDGER_QUERY"], "--ledger", ledger, "serve", "--listen", "127.0.0.1:0",
             *extra],
            stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.time() + 30
    while time.time() < deadline and proc.poll() is None:
        with open(log) as f:
            m = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", f.read())
        if m:
            return proc, int(m.group(1))
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("serve did not start: " + open(log).read())


def stop_server(proc):
    if proc is not None and proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=30)

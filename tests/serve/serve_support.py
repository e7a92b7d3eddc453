"""What the serve tests share: `ledger-query serve` started on a free
loopback port, found from its log line, and stopped; headless Chromium on a
page of it.

env: LEDGER_QUERY (the built program).
"""
import os
import re
import signal
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


def chromium(browser, profile, url, *extra):
    """Headless Chromium on url with the profile directory `profile`; its
    stdout (the DOM with --dump-dom). RuntimeError when it fails or takes
    more than 180 s."""
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
        raise RuntimeError(f"chromium on {url}: exit {proc.returncode}: {err[-2000:]}")
    return out

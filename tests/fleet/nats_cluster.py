#!/usr/bin/env python3
"""A throwaway NATS JetStream cluster on 127.0.0.1 for the fleet tests.

Imported by the tests under tests/fleet/ (stdlib only):

    import nats_cluster
    nats_cluster.require_nats_server()        # exit 77, saying so, if missing
    with nats_cluster.NatsCluster(workdir, nodes=3) as cluster:
        ... ledger-ingest --publish cluster.urls() ...
        cluster.kill(1)                       # SIGKILL one node
        cluster.start(1)                      # same ports and store, rejoined
        cluster.wait_ready()

NatsCluster picks free ports (client, cluster route and HTTP monitoring per
node), writes workdir/node-N.conf, starts `nats-server -c node-N.conf` per
node (output in workdir/node-N.log, its JetStream store in workdir/store-N)
and waits until the cluster is ready: every running node answers /healthz
(which in nats-server 2.9 means JetStream is enabled, the node is in contact
with the meta leader and its streams and consumers are current), every
running node reports the same meta leader in /jsz, one that is running, and
is routed to every other running node (/routez). With nodes=1 the server is
standalone: no cluster block, ready when /healthz answers.

The servers die with the test: stop() (idempotent) on leaving the `with`,
an atexit hook, and on Linux PR_SET_PDEATHSIG, so even a test killed with
SIGKILL leaves none behind. (PDEATHSIG follows the thread that started the
server: start clusters from the main thread or one that outlives them.)

Self-check, run by hand (about 10 seconds):
    python3 tests/fleet/nats_cluster.py
starts a 3-node cluster, kills node 1, restarts it, waits for it to rejoin,
then does the same with a single node; exit 77 if nats-server is missing.
"""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SKIP_MESSAGE = "SKIP: nats-server not installed (Debian's nats-server; tools/setup-debian.sh installs it)"

READY_TIMEOUT = 30.0  # seconds; a meta leader is elected in 1-3 s on an idle machine
STOP_TIMEOUT = 10.0  # seconds between SIGTERM and SIGKILL in stop()
POLL_INTERVAL = 0.1
HTTP_TIMEOUT = 2.0

_live = []  # clusters not stopped yet, for the atexit hook


def nats_server_path():
    """The nats-server binary ($NATS_SERVER, PATH, then Debian's /usr/sbin), or None."""
    override = os.environ.get("NATS_SERVER")
    if override:
        return override if os.access(override, os.X_OK) else None
    found = shutil.which("nats-server")
    if found:
        return found
    # Debian installs it in /usr/sbin, which is not on a user's PATH.
    for candidate in ("/usr/sbin/nats-server", "/usr/local/sbin/nats-server"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def require_nats_server():
    """Returns the nats-server binary; without one, prints SKIP and exits 77."""
    path = nats_server_path()
    if path is None:
        print(SKIP_MESSAGE, flush=True)
        sys.exit(77)
    return path


def free_ports(count):
    """count distinct TCP ports free on 127.0.0.1 (all held open until chosen)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _die_with_parent():
    """preexec_fn: SIGKILL the server if the test process dies (Linux only)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:  # not Linux, or no prctl: stop() and atexit still apply
        pass


def _http_get(port, path):
    """(status, body) of GET http://127.0.0.1:port/path; (None, error) when unreachable."""
    url = f"http://127.0.0.1:{port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:  # 503 from /healthz carries the reason
        return e.code, e.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as e:
        return None, str(e)


class NatsError(RuntimeError):
    pass


class NatsCluster:
    """nodes nats-server processes with JetStream, clustered when nodes > 1.

    The constructor starts them and waits until ready (NatsError, with the
    logs' tails, if that takes more than ready_timeout seconds); on any
    failure it stops what it started.
    """

    CLUSTER_NAME = "fleet-test"

    def __init__(self, workdir, nodes=3, ready_timeout=READY_TIMEOUT,
                 max_memory_store="64MB", max_file_store="2GB", client_ports=None, extra_config=(),
                 env=None):
        """client_ports: optional list of fixed client ports, one per node (e.g. a
        port a client was told to use before the server existed); the other
        ports are still picked free. extra_config: lines added to every node's
        configuration (an authorization block). env: variables added to the
        servers' environment (what the configuration's $VARIABLES name)."""
        if nodes < 1:
            raise ValueError("nodes must be at least 1")
        if client_ports is not None and len(client_ports) != nodes:
            raise ValueError("client_ports needs one port per node")
        self.fixed_client_ports = list(client_ports) if client_ports is not None else None
        self.extra_config = list(extra_config)
        self.env = dict(os.environ, **(env or {}))
        self.binary = nats_server_path()
        if self.binary is None:
            raise NatsError(SKIP_MESSAGE)
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.nodes = nodes
        self.max_memory_store = max_memory_store
        self.max_file_store = max_file_store
        self.procs = [None] * nodes
        self._stopped = False
        _live.append(self)
        try:
            self._start_all(ready_timeout)
        except BaseException:
            self.stop()
            raise

    # -- addresses ---------------------------------------------------------

    def name(self, i):
        return f"node-{i}"

    def url(self, i):
        return f"nats://127.0.0.1:{self.client_ports[i]}"

    def urls(self):
        """Every node's client URL, comma-separated (as libnats' natsOptions_SetURL takes)."""
        return ",".join(self.url(i) for i in range(self.nodes))

    def http_port(self, i):
        return self.http_ports[i]

    def config_path(self, i):
        return os.path.join(self.workdir, f"node-{i}.conf")

    def log_path(self, i):
        return os.path.join(self.workdir, f"node-{i}.log")

    def store_dir(self, i):
        return os.path.join(self.workdir, f"store-{i}")

    def monitor(self, i, path):
        """Node i's monitoring endpoint path (e.g. "/jsz?streams=true") as JSON, or None."""
        status, body = _http_get(self.http_ports[i], path)
        if status != 200:
            return None
        try:
            return json.loads(body)
        except ValueError:
            return None

    def meta_leader(self, i=None):
        """The JetStream meta leader's server name as node i (or the first running node) sees it."""
        for j in [i] if i is not None else self.running():
            jsz = self.monitor(j, "/jsz")
            if jsz:
                return (jsz.get("meta_cluster") or {}).get("leader") or None
        return None

    def running(self):
        return [i for i, p in enumerate(self.procs) if p is not None and p.poll() is None]

    # -- processes ---------------------------------------------------------

    def _pick_ports(self):
        fixed = set(self.fixed_client_ports or ())
        ports = [p for p in free_ports(3 * self.nodes + len(fixed)) if p not in fixed][:3 * self.nodes]
        self.client_ports = ports[0:self.nodes]
        self.route_ports = ports[self.nodes:2 * self.nodes]
        self.http_ports = ports[2 * self.nodes:3 * self.nodes]
        if self.fixed_client_ports is not None:
            self.client_ports = list(self.fixed_client_ports)

    def _write_config(self, i):
        lines = [
            "# written by tests/fleet/nats_cluster.py",
            f'server_name: "{self.name(i)}"',
            f"listen: 127.0.0.1:{self.client_ports[i]}",
            f"http: 127.0.0.1:{self.http_ports[i]}",
            "jetstream {",
            f'  store_dir: "{self.store_dir(i)}"',
            f"  max_memory_store: {self.max_memory_store}",
            f"  max_file_store: {self.max_file_store}",
            "}",
        ]
        if self.nodes > 1:
            lines += [
                "cluster {",
                f"  name: {self.CLUSTER_NAME}",
                f"  listen: 127.0.0.1:{self.route_ports[i]}",
                "  routes: [",
                *[f"    nats-route://127.0.0.1:{p}" for p in self.route_ports],
                "  ]",
                "}",
            ]
        lines += self.extra_config
        with open(self.config_path(i), "w") as f:
            f.write("\n".join(lines) + "\n")

    def _spawn(self, i):
        with open(self.log_path(i), "ab") as log:
            log.write(f"=== nats_cluster.py: starting {self.name(i)} at {time.strftime('%H:%M:%S')}\n".encode())
            log.flush()
            self.procs[i] = subprocess.Popen(
                [self.binary, "-c", self.config_path(i)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=self.workdir, env=self.env, preexec_fn=_die_with_parent)

    def _start_all(self, ready_timeout):
        # Another process can take a port between choosing it and the server
        # binding it: start over on new ports a few times.
        for attempt in range(3):
            if attempt > 0:  # keep the failed attempt's logs, start clean
                for i in range(self.nodes):
                    if os.path.exists(self.log_path(i)):
                        os.replace(self.log_path(i), f"{self.log_path(i)}.attempt-{attempt}")
                    shutil.rmtree(self.store_dir(i), ignore_errors=True)
            self._pick_ports()
            for i in range(self.nodes):
                self._write_config(i)
            for i in range(self.nodes):
                self._spawn(i)
            try:
                self.wait_ready(ready_timeout)
                return
            except NatsError:
                if attempt == 2 or not self._port_clash():
                    raise
                self._terminate_all()

    def _port_clash(self):
        for i in range(self.nodes):
            try:
                with open(self.log_path(i), errors="replace") as f:
                    if "address already in use" in f.read():
                        return True
            except OSError:
                pass
        return False

    def kill(self, i):
        """SIGKILL node i and reap it (no-op if it is not running)."""
        p = self.procs[i]
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()

    def terminate(self, i, timeout=STOP_TIMEOUT):
        """Stops node i gracefully (SIGTERM), SIGKILL after timeout seconds."""
        p = self.procs[i]
        if p is None or p.poll() is not None:
            return
        p.terminate()
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def start(self, i, timeout=READY_TIMEOUT):
        """Restarts node i (same config, ports and store) and waits until the
        cluster is ready again with it rejoined."""
        if self._stopped:
            raise NatsError("start() after stop()")
        if self.procs[i] is not None and self.procs[i].poll() is None:
            raise NatsError(f"{self.name(i)} is already running")
        self._spawn(i)
        self.wait_ready(timeout)

    def stop(self):
        """Stops every node (SIGTERM, then SIGKILL after STOP_TIMEOUT). Idempotent."""
        self._stopped = True
        self._terminate_all()
        if self in _live:
            _live.remove(self)

    def _terminate_all(self):
        for p in self.procs:
            if p is not None and p.poll() is None:
                try:
                    p.terminate()
                except OSError:
                    pass
        deadline = time.monotonic() + STOP_TIMEOUT
        for p in self.procs:
            if p is None:
                continue
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- readiness ---------------------------------------------------------

    def _not_ready(self):
        """Why the running nodes are not ready yet, or None when they are."""
        running = self.running()
        if not running:
            return "no node is running"
        expected = {self.name(i) for i in running}
        leaders = set()
        for i in running:
            status, body = _http_get(self.http_ports[i], "/healthz")
            if status != 200:
                return f"{self.name(i)} /healthz: {status} {body.strip()}"
            if self.nodes == 1:
                continue
            jsz = self.monitor(i, "/jsz")
            meta = (jsz or {}).get("meta_cluster") or {}
            if not meta.get("leader"):
                return f"{self.name(i)} /jsz: no meta leader yet"
            leaders.add(meta["leader"])
            routez = self.monitor(i, "/routez") or {}
            peers = {r.get("remote_id") for r in routez.get("routes") or []}
            if len(peers) < len(running) - 1:
                return f"{self.name(i)} /routez: routed to {len(peers)} of {len(running) - 1} running peers"
        if len(leaders) > 1:
            return f"nodes disagree on the meta leader: {sorted(leaders)}"
        if leaders and not leaders <= expected:
            return f"meta leader {leaders.pop()} is not a running node yet"
        return None

    def wait_ready(self, timeout=READY_TIMEOUT):
        """Waits until every running node is ready (see the module's docstring).

        Raises NatsError, with each node's log tail, if a node started by
        this object exits on its own or timeout seconds pass.
        """
        deadline = time.monotonic() + timeout
        reason = None
        while True:
            for i, p in enumerate(self.procs):
                if p is not None and p.returncode is None and p.poll() is not None:
                    raise NatsError(f"{self.name(i)} exited with {p.returncode}\n" + self.log_tails())
            reason = self._not_ready()
            if reason is None:
                return
            if time.monotonic() >= deadline:
                raise NatsError(f"NATS not ready after {timeout:g}s: {reason}\n" + self.log_tails())
            time.sleep(POLL_INTERVAL)

    def log_tails(self, lines=15):
        out = []
        for i in range(self.nodes):
            try:
                with open(self.log_path(i), errors="replace") as f:
                    tail = f.read().splitlines()[-lines:]
            except OSError:
                tail = ["(no log)"]
            out.append(f"--- {self.log_path(i)}")
            out += ["    " + line for line in tail]
        return "\n".join(out)


def _stop_live():
    for cluster in list(_live):
        cluster.stop()


atexit.register(_stop_live)


def _self_check():
    require_nats_server()
    with tempfile.TemporaryDirectory(prefix="nats-cluster-") as workdir:
        started = time.monotonic()
        cluster = NatsCluster(os.path.join(workdir, "three"), nodes=3)
        try:
            print(f"3 nodes ready in {time.monotonic() - started:.1f}s: {cluster.urls()}; "
                  f"meta leader {cluster.meta_leader()}", flush=True)
            pids = [p.pid for p in cluster.procs]
            cluster.kill(1)
            assert cluster.running() == [0, 2], cluster.running()
            cluster.wait_ready()
            print(f"node-1 killed; nodes 0 and 2 ready, meta leader {cluster.meta_leader()}", flush=True)
            t = time.monotonic()
            cluster.start(1)
            assert cluster.running() == [0, 1, 2], cluster.running()
            assert cluster.meta_leader(1), "node-1 has no meta leader after rejoining"
            print(f"node-1 restarted and rejoined in {time.monotonic() - t:.1f}s, "
                  f"meta leader {cluster.meta_leader(1)}", flush=True)
        finally:
            cluster.stop()
        cluster.stop()  # idempotent
        for pid in pids:
            assert not _alive(pid), f"nats-server {pid} still running after stop()"
        print("3 nodes stopped", flush=True)

        with NatsCluster(os.path.join(workdir, "one"), nodes=1) as single:
            print(f"1 node ready: {single.urls()}", flush=True)
            single.kill(0)
            single.start(0)
            print("1 node killed and restarted", flush=True)
        assert not single.running()
    print("PASS: nats_cluster self-check")
    return 0


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


if __name__ == "__main__":
    sys.exit(_self_check())

#!/usr/bin/env python3
"""The fleet's manifests in deploy/fleet/ checked against each other, the
sidecar's manifest and nats-server.

usage: tests/deploy/fleet_manifests_test.py SOURCE_ROOT
- every document in deploy/fleet/*.yaml parses and has apiVersion, kind and
  metadata.name;
- nats.yaml: the StatefulSet has 3 replicas and the ConfigMap's nats.conf
  routes to each of them by the headless Service's per-pod names; the config
  is mounted where the server's --config points; the environment variables
  it references are set on the container; with sample values for them it
  passes `nats-server -t` (the server resolves them itself, as in the pod);
  its authorization block gives every client a user: each cluster's may
  publish only on ledger.<cluster>.> and the JetStream calls on stream
  LEDGER a publisher makes, the consumer's (`fleet`) only on its durable's
  and the stream's calls and acknowledgements, no user publishing on
  another's subjects, each subscribing only to _INBOX.<user>.>; each
  password's variable comes from the Secret nats-user-<user>, key password;
- sidecar-publish-patch.yaml: its ledger container's args are all of
  deploy/sidecar-patch.yaml's plus --publish, --cluster-name and
  --signing-key and --nats-user-file, whose files are in mounted Secrets;
  where
  kubectl is installed, `kubectl patch --local` of both patches in turn onto
  a minimal Kueue Deployment leaves the sidecar with exactly those args;
- fleet-consumer.yaml: the Deployment's args have --from-nats and --fleet,
  a volume is mounted at the --fleet directory, from the file's
  PersistentVolumeClaim, --trusted-keys is a directory mounted from a
  Secret, --nats-user-file is the key `user` of the Secret nats-user-fleet,
  its --durable is the one nats.conf lets user fleet use, and the port
  --listen names is the probed one.
nats-server is Debian's nats-server package (tools/setup-debian.sh): without
it the other checks still run, and then the test skips (exit 77), saying so.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
import nats_cluster  # noqa: E402  (nats_server_path and the skip message)

CONFIG_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
# Passwords as nats.yaml's header makes them: a letter, then hex digits.
SAMPLE_ENV = {"POD_NAME": "nats-0", "NATS_TOKEN": "sample-token"}
SAMPLE_PASSWORD = "p0123456789abcdef0123456789abcdef"


def flag(args, name):
    """The value of --name=VALUE or --name VALUE in args, or None."""
    for i, arg in enumerate(args):
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
        if arg == name and i + 1 < len(args):
            return args[i + 1]
    return None


def flag_names(args):
    return [a.split("=", 1)[0] for a in args if a.startswith("--")]


def find(docs, kind, name=None):
    for doc in docs:
        if doc.get("kind") == kind and (name is None or doc["metadata"]["name"] == name):
            return doc
    return None


def container(doc, name=None):
    for c in doc["spec"]["template"]["spec"]["containers"]:
        if name is None or c["name"] == name:
            return c
    return None


def check_nats(docs, problems):
    """Returns nats.conf's text and the environment to test it with."""
    sts = find(docs, "StatefulSet")
    config_map = find(docs, "ConfigMap")
    if sts is None or config_map is None:
        problems.append("nats.yaml: no StatefulSet or no ConfigMap")
        return None, None
    replicas = sts["spec"].get("replicas")
    if replicas != 3:
        problems.append(f"nats.yaml: the StatefulSet has {replicas} replicas, not 3")
    if sts["spec"].get("podManagementPolicy") != "Parallel":
        problems.append("nats.yaml: podManagementPolicy is not Parallel (OrderedReady never gets a quorum)")
    name, service, namespace = sts["metadata"]["name"], sts["spec"]["serviceName"], sts["metadata"]["namespace"]
    headless = find(docs, "Service", service)
    if headless is None or headless["spec"].get("clusterIP") != "None":
        problems.append(f"nats.yaml: serviceName {service} is not a headless Service in the file")
    elif not headless["spec"].get("publishNotReadyAddresses"):
        problems.append(f"nats.yaml: Service {service} does not publish not-ready pods' names (routes need them)")

    keys = [k for k in config_map["data"] if k.endswith(".conf")]
    if len(keys) != 1:
        problems.append(f"nats.yaml: ConfigMap {config_map['metadata']['name']} has {len(keys)} .conf keys, not 1")
        return None, None
    conf = config_map["data"][keys[0]]
    settings = "\n".join(line.split("#", 1)[0] for line in conf.splitlines())
    routes = set(re.findall(r"nats(?:-route)?://([\w.-]+):6222", settings))
    want = {f"{name}-{i}.{service}.{namespace}.svc" for i in range(replicas or 0)}
    if routes != want:
        problems.append(f"nats.conf: routes {sorted(routes)}, expected {sorted(want)}")

    nats = container(sts)
    pod = sts["spec"]["template"]["spec"]
    command = (nats.get("command") or []) + (nats.get("args") or [])
    config_path = flag(command, "--config") or flag(command, "-c")
    config_volume = next((v["name"] for v in pod.get("volumes", [])
                          if (v.get("configMap") or {}).get("name") == config_map["metadata"]["name"]), None)
    mounts = [m["mountPath"].rstrip("/") + "/" + keys[0]
              for m in nats.get("volumeMounts", []) if m["name"] == config_volume]
    if config_path not in mounts:
        problems.append(f"nats.yaml: the server reads {config_path}, the ConfigMap is mounted as {mounts}")

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    defined = {e["name"] for e in nats.get("env", [])}
    # A quoted "$JS.API..." is a subject, not a variable.
    for variable in sorted(set(CONFIG_VARIABLE.findall(re.sub(r'"[^"]*"', '""', settings)))):
        if variable not in defined:
            problems.append(f"nats.conf: ${variable} is not set on the {nats['name']} container")
        env[variable] = SAMPLE_ENV.get(variable, SAMPLE_PASSWORD)
    ports = {p["name"]: p["containerPort"] for p in nats.get("ports", [])}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        port = ((nats.get(probe) or {}).get("httpGet") or {}).get("port")
        if ports.get(port) != 8222:
            problems.append(f"nats.yaml: {probe} is not on the monitoring port 8222")
    return conf, env


def check_publish_patch(root, docs, problems):
    sidecar = yaml.safe_load(open(os.path.join(root, "deploy", "sidecar-patch.yaml")))
    patch = find(docs, "Deployment")
    if patch is None:
        problems.append("sidecar-publish-patch.yaml: no Deployment")
        return None
    for field in ("name", "namespace"):
        if patch["metadata"].get(field) != sidecar["metadata"].get(field):
            problems.append(f"sidecar-publish-patch.yaml: metadata.{field} is not sidecar-patch.yaml's")
    base = container(sidecar, "ledger")["args"]
    patched = container(patch, "ledger")
    if patched is None:
        problems.append("sidecar-publish-patch.yaml: no container named ledger")
        return None
    args = patched.get("args") or []
    missing = [a for a in base if a not in args]
    if missing:
        problems.append(f"sidecar-publish-patch.yaml: drops sidecar-patch.yaml's args {missing}")
    publish = flag(args, "--publish")
    if not publish or not publish.startswith("nats://"):
        problems.append(f"sidecar-publish-patch.yaml: --publish is {publish!r}, not a nats:// URL")
    if not flag(args, "--cluster-name"):
        problems.append("sidecar-publish-patch.yaml: no --cluster-name")
    for name in ("--signing-key", "--nats-user-file"):
        key = flag(args, name) or ""
        if not secret_mounted(patched, patch["spec"]["template"]["spec"], os.path.dirname(key)):
            problems.append(f"sidecar-publish-patch.yaml: {name}={key!r} is not in a mounted Secret")
    if len(set(flag_names(args))) != len(flag_names(args)):
        problems.append(f"sidecar-publish-patch.yaml: a flag is given twice: {flag_names(args)}")
    return base + [a for a in args if a not in base]


def check_strategic_merge(root, expected, problems):
    """Both patches, in turn, onto a minimal Kueue Deployment, by kubectl."""
    kueue = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"},
        "spec": {"selector": {"matchLabels": {"control-plane": "controller-manager"}},
                 "template": {"metadata": {"labels": {"control-plane": "controller-manager"}},
                              "spec": {"containers": [{"name": "manager", "image": "kueue"}]}}},
    }
    with tempfile.TemporaryDirectory() as tmp:
        current = os.path.join(tmp, "deployment.yaml")
        with open(current, "w") as f:
            yaml.safe_dump(kueue, f)
        for patch in (os.path.join(root, "deploy", "sidecar-patch.yaml"),
                      os.path.join(root, "deploy", "fleet", "sidecar-publish-patch.yaml")):
            run = subprocess.run(["kubectl", "patch", "--local", "-f", current, "--type", "strategic",
                                  "--patch-file", patch, "-o", "yaml"], capture_output=True, text=True)
            if run.returncode != 0:
                problems.append(f"kubectl patch --local with {os.path.basename(patch)} failed: {run.stderr.strip()}")
                return
            with open(current, "w") as f:
                f.write(run.stdout)
        merged = yaml.safe_load(open(current))
    ledger = container(merged, "ledger")
    if ledger is None or container(merged, "manager") is None:
        problems.append("kubectl patch: the patched Deployment lost a container")
        return
    if ledger.get("args") != expected:
        problems.append(f"kubectl patch: the sidecar's args are {ledger.get('args')}, expected {expected}")
    if not ledger.get("image") or not ledger.get("volumeMounts"):
        problems.append("kubectl patch: the publishing patch lost the sidecar's image or volumes")
    print(f"kubectl patch --local: the sidecar runs with {len(expected)} args, {len(ledger['volumeMounts'])} mounts")


def secret_mounted(c, pod, directory):
    """Whether `directory` is where container c mounts a Secret volume of pod."""
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in c.get("volumeMounts", [])}
    name = mounts.get(directory.rstrip("/")) if directory else None
    volume = next((v for v in pod.get("volumes", []) if v["name"] == name), {})
    return bool((volume.get("secret") or {}).get("secretName"))


def quoted(text):
    return re.findall(r'"([^"]*)"', text)


def conf_users(conf):
    """{user: (password variable, publish allow list, subscribe allow list)} of
    nats.conf's authorization block (each entry `{user: NAME, password: $VAR,
    permissions: {publish: {allow: [...]}, subscribe: {allow: [...]}}}`)."""
    settings = "\n".join(line.split("#", 1)[0] for line in conf.splitlines())
    users = {}
    entries = re.split(r"\{\s*user:", settings)[1:]
    for entry in entries:
        name = re.match(r'\s*"?([\w-]+)"?', entry).group(1)
        password = re.search(r"password:\s*\$(\w+)", entry)
        publish = re.search(r"publish:\s*\{\s*allow:\s*\[([^\]]*)\]", entry)
        subscribe = re.search(r"subscribe:\s*\{\s*allow:\s*\[([^\]]*)\]", entry)
        users[name] = (password.group(1) if password else None,
                       quoted(publish.group(1)) if publish else None,
                       quoted(subscribe.group(1)) if subscribe else None)
    return users


# What a publisher's user may call on stream LEDGER (ingest/fleet/nats_link.cpp):
# the stream's info and creation, and a message lookup.
PUBLISHER_API = {"$JS.API.STREAM.INFO.LEDGER", "$JS.API.STREAM.CREATE.LEDGER",
                 "$JS.API.STREAM.MSG.GET.LEDGER"}


def check_users(nats_docs, consumer_docs, problems):
    """nats.conf's users against the StatefulSet's environment and the consumer."""
    conf = find(nats_docs, "ConfigMap")["data"]["nats.conf"]
    users = conf_users(conf)
    if "fleet" not in users or len(users) < 2:
        problems.append(f"nats.conf: users {sorted(users)}: expected fleet and one per cluster")
        return
    env = {e["name"]: e for e in container(find(nats_docs, "StatefulSet")).get("env", [])}
    for name, (password, publish, subscribe) in sorted(users.items()):
        ref = ((env.get(password) or {}).get("valueFrom") or {}).get("secretKeyRef") or {}
        if password is None or ref != {"name": f"nats-user-{name}", "key": "password"}:
            problems.append(f"nats.conf: user {name}'s password is not ${password} from the Secret "
                            f"nats-user-{name}, key password ({ref})")
        if subscribe != [f"_INBOX.{name}.>"]:
            problems.append(f"nats.conf: user {name} subscribes to {subscribe}, not only _INBOX.{name}.>")
        if publish is None:
            problems.append(f"nats.conf: user {name} may publish on anything")
            continue
        records = [p for p in publish if not p.startswith("$JS.")]
        if name != "fleet":
            if records != [f"ledger.{name}.>"] or not set(publish) - set(records) <= PUBLISHER_API:
                problems.append(f"nats.conf: user {name} may publish on {publish}, not only "
                                f"ledger.{name}.> and {sorted(PUBLISHER_API)}")
    def subjects(publish):
        records = " ".join(p for p in publish or [] if not p.startswith("$"))
        return f"{records} and JetStream calls" if records else "JetStream calls only"
    print("nats.conf: users " + ", ".join(f"{u} ({subjects(v[1])})" for u, v in sorted(users.items())))
    deployment = find(consumer_docs, "Deployment")
    args = container(deployment).get("args") or []
    durable = flag(args, "--durable") or "fleet"
    _, publish, _ = users["fleet"]
    if publish is not None:
        wanted = {"$JS.API.STREAM.INFO.LEDGER", "$JS.API.STREAM.CREATE.LEDGER",
                  f"$JS.API.CONSUMER.INFO.LEDGER.{durable}", f"$JS.API.CONSUMER.DELETE.LEDGER.{durable}",
                  f"$JS.API.CONSUMER.DURABLE.CREATE.LEDGER.{durable}",
                  f"$JS.API.CONSUMER.MSG.NEXT.LEDGER.{durable}", f"$JS.ACK.LEDGER.{durable}.>"}
        if set(publish) != wanted:
            problems.append(f"nats.conf: user fleet may publish on {sorted(publish)}, expected the calls "
                            f"of durable {durable}: {sorted(wanted)}")
    path = flag(args, "--nats-user-file") or ""
    pod = deployment["spec"]["template"]["spec"]
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in container(deployment).get("volumeMounts", [])}
    volume = next((v for v in pod.get("volumes", []) if v["name"] == mounts.get(os.path.dirname(path))), {})
    secret = volume.get("secret") or {}
    items = {i["key"]: i["path"] for i in secret.get("items", [])}
    if secret.get("secretName") != "nats-user-fleet" or items.get("user") != os.path.basename(path):
        problems.append(f"fleet-consumer.yaml: --nats-user-file={path!r} is not the key user of the "
                        "mounted Secret nats-user-fleet")


def check_consumer(docs, problems):
    deployment = find(docs, "Deployment")
    if deployment is None:
        problems.append("fleet-consumer.yaml: no Deployment")
        return
    consumer = container(deployment)
    args = consumer.get("args") or []
    source, fleet = flag(args, "--from-nats"), flag(args, "--fleet")
    if not source or not source.startswith("nats://"):
        problems.append(f"fleet-consumer.yaml: --from-nats is {source!r}, not a nats:// URL")
    if not fleet:
        problems.append("fleet-consumer.yaml: no --fleet")
        return
    pod = deployment["spec"]["template"]["spec"]
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in consumer.get("volumeMounts", [])}
    if fleet.rstrip("/") not in mounts:
        problems.append(f"fleet-consumer.yaml: --fleet={fleet} but the volumes are mounted at {sorted(mounts)}")
    else:
        volume = next((v for v in pod.get("volumes", []) if v["name"] == mounts[fleet.rstrip("/")]), {})
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if find(docs, "PersistentVolumeClaim", claim) is None:
            problems.append(f"fleet-consumer.yaml: --fleet's volume is not the file's PersistentVolumeClaim ({claim})")
    if deployment["spec"].get("replicas") != 1 or (deployment["spec"].get("strategy") or {}).get("type") != "Recreate":
        problems.append("fleet-consumer.yaml: not 1 replica with the Recreate strategy (one writer of the volume)")
    if not secret_mounted(consumer, pod, flag(args, "--trusted-keys") or ""):
        problems.append("fleet-consumer.yaml: --trusted-keys is not a directory mounted from a Secret")
    listen = flag(args, "--listen") or ""
    ports = {p["name"]: p["containerPort"] for p in consumer.get("ports", [])}
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = (consumer.get(probe) or {}).get("httpGet") or {}
        if get.get("path") != path or str(ports.get(get.get("port"))) != listen.rsplit(":", 1)[-1]:
            problems.append(f"fleet-consumer.yaml: {probe} is not {path} on the --listen port {listen}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    problems = []
    manifests = {}
    for path in sorted(glob.glob(os.path.join(root, "deploy", "fleet", "*.yaml"))):
        name = os.path.basename(path)
        try:
            docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
        except yaml.YAMLError as e:
            problems.append(f"{name}: does not parse: {e}")
            continue
        for i, doc in enumerate(docs):
            if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind") \
                    or not (doc.get("metadata") or {}).get("name"):
                problems.append(f"{name}: document {i + 1} lacks apiVersion, kind or metadata.name")
        manifests[name] = docs
        print(f"{name}: " + ", ".join(f"{d.get('kind')}/{(d.get('metadata') or {}).get('name')}"
                                      for d in docs if isinstance(d, dict)))
    for name in ("nats.yaml", "sidecar-publish-patch.yaml", "fleet-consumer.yaml"):
        if name not in manifests:
            problems.append(f"deploy/fleet/{name}: missing or unreadable")

    conf, env = None, None
    if not problems:
        conf, env = check_nats(manifests["nats.yaml"], problems)
        expected = check_publish_patch(root, manifests["sidecar-publish-patch.yaml"], problems)
        check_consumer(manifests["fleet-consumer.yaml"], problems)
        if conf is not None:
            check_users(manifests["nats.yaml"], manifests["fleet-consumer.yaml"], problems)
        if expected is not None and shutil.which("kubectl"):
            check_strategic_merge(root, expected, problems)
        elif expected is not None:
            print("kubectl not installed: the strategic-merge check is left out")

    server = nats_cluster.nats_server_path()
    if conf is not None and server is not None:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "nats.conf")
            with open(path, "w") as f:
                f.write(conf)
            run = subprocess.run([server, "-t", "-c", path], capture_output=True, text=True, env=env)
            shown = " ".join(f"{k}={v}" for k, v in env.items() if k != "PATH")
            print(f"nats-server -t ({shown}): " + (run.stdout + run.stderr).strip().replace(tmp + "/", ""))
            if run.returncode != 0:
                problems.append("nats.yaml: nats-server -t rejects the ConfigMap's nats.conf")

    for p in problems:
        print("FAIL:", p)
    if problems:
        return 1
    if server is None:
        print(nats_cluster.SKIP_MESSAGE)
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The manifests in deploy/ checked by the tools that consume them.

usage: tests/deploy/deploy_test.py SOURCE_ROOT
- deploy/prometheusrule.yaml: its rule groups pass `promtool check rules`,
  and its alerts fire (and stay quiet) as tests/deploy/alerts_test.yaml
  says, under `promtool test rules`.
- deploy/grafana-dashboard.json: every query (template variables filled in)
  is PromQL that `promtool check rules` accepts, and names only metrics the
  sidecar renders (tests/docs/metrics_test.py's list); every panel has a
  datasource and a unique id.
promtool comes from Debian's prometheus package (tools/setup-debian.sh);
without it the test skips (exit 77), saying so.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs"))
import metrics_test  # noqa: E402  (the list of metrics the sidecar renders)

VARIABLE = re.compile(r"\$\{?(\w+)\}?")
METRIC = re.compile(r"\b(ledger_[a-z_]+)\b")


def promtool(*args):
    run = subprocess.run(["promtool", *args], capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    if shutil.which("promtool") is None:
        print("SKIP: promtool not installed (Debian's prometheus package; tools/setup-debian.sh installs it)")
        return 77
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        rule = yaml.safe_load(open(os.path.join(root, "deploy", "prometheusrule.yaml")))
        if rule.get("kind") != "PrometheusRule":
            problems.append("deploy/prometheusrule.yaml: not a PrometheusRule")
        rules = os.path.join(tmp, "rules.yaml")
        with open(rules, "w") as f:
            yaml.safe_dump(rule["spec"], f)
        rc, out = promtool("check", "rules", rules)
        print(out.strip())
        if rc != 0:
            problems.append("promtool check rules deploy/prometheusrule.yaml failed")

        tests = open(os.path.join(root, "tests", "deploy", "alerts_test.yaml")).read()
        test_file = os.path.join(tmp, "alerts_test.yaml")
        with open(test_file, "w") as f:
            f.write(tests.replace("  - RULES", "  - " + rules))
        rc, out = promtool("test", "rules", test_file)
        print(out.strip())
        if rc != 0:
            problems.append("promtool test rules tests/deploy/alerts_test.yaml failed")

        dashboard = json.load(open(os.path.join(root, "deploy", "grafana-dashboard.json")))
        rendered = metrics_test.rendered_metrics(root)
        exprs, ids = [], set()
        for panel in dashboard["panels"]:
            if panel["id"] in ids:
                problems.append(f"dashboard: panel id {panel['id']} is used twice")
            ids.add(panel["id"])
            if panel["type"] == "row":
                continue
            if "datasource" not in panel:
                problems.append(f"dashboard: panel {panel['title']!r} has no datasource")
            exprs += [(panel["title"], t["expr"]) for t in panel.get("targets", [])]
        for variable in dashboard["templating"]["list"]:
            if variable["type"] == "query":
                exprs.append((variable["name"], variable["definition"]))
        groups = {"groups": [{"name": "dashboard", "rules": []}]}
        for i, (title, expr) in enumerate(exprs):
            for name in METRIC.findall(expr):
                if name not in rendered:
                    problems.append(f"dashboard: {title!r} queries {name}, which the sidecar does not render")
            # label_values(...) is Grafana's, not PromQL: its series selector is.
            match = re.fullmatch(r"label_values\((.*), *\w+\)", expr)
            promql = VARIABLE.sub(".*", match.group(1) if match else expr)
            groups["groups"][0]["rules"].append({"record": f"dashboard:query_{i}", "expr": promql})
        queries = os.path.join(tmp, "dashboard_queries.yaml")
        with open(queries, "w") as f:
            yaml.safe_dump(groups, f)
        rc, out = promtool("check", "rules", queries)
        print(f"dashboard: {len(exprs)} queries; " + out.strip())
        if rc != 0:
            problems.append("dashboard: a query is not valid PromQL")
        if len(exprs) < 10:
            problems.append("dashboard: fewer queries than panels")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every metric the --watch daemon renders is documented, and the alerts use
only metrics it renders.

usage: tests/docs/metrics_test.py SOURCE_ROOT
Takes the metric names from the sources that render them (every
"ledger_..." string literal there), fails naming each one that
docs/watch-daemon.md does not list as `` `name `` or `` `name{ ``, and each
ledger_... name in deploy/prometheusrule.yaml that no source renders.
"""
import os
import re
import sys

RENDERERS = ["ingest/kube/metrics.cpp", "tools/render/report_metrics.cpp", "tools/live_state.cpp",
             "tools/ledger_upkeep.cpp", "ingest/fleet/publisher.cpp", "tools/watch/volume_forecast.cpp",
             "tools/watch/admission_waits.cpp"]
# A metric name at the start of a string literal: "ledger_x ", "ledger_x{", "ledger_x".
LITERAL = re.compile(r'"(ledger_[a-z_]+)[ {"]')
NAME = re.compile(r"\b(ledger_[a-z_]+)\b")


def read(root, path):
    return open(os.path.join(root, path), encoding="utf-8").read()


def rendered_metrics(root):
    """The names of the metrics the sidecar renders, from the sources."""
    rendered = set()
    for path in RENDERERS:
        rendered.update(LITERAL.findall(read(root, path)))
    return rendered


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    rendered = rendered_metrics(root)
    doc = read(root, "docs/watch-daemon.md")
    problems = []
    for name in sorted(rendered):
        if "`" + name + "`" not in doc and "`" + name + "{" not in doc:
            problems.append(f"{name}: rendered but not in docs/watch-daemon.md")
    for name in sorted(set(NAME.findall(read(root, "deploy/prometheusrule.yaml")))):
        if name not in rendered:
            problems.append(f"deploy/prometheusrule.yaml: {name} is not a metric the daemon renders")
    print(f"{len(rendered)} metrics rendered")
    for p in problems:
        print(p)
    return 1 if problems or len(rendered) < 20 else 0


if __name__ == "__main__":
    sys.exit(main())

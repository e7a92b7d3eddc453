#!/usr/bin/env python3
"""The layers of the tree, checked from the includes.

Every `#include "a/b/c.h"` names its module from the top of the tree. This
script maps each source file and each included header to its module (the
folders below), prints the include edges between modules with their counts,
and fails when an edge points up a layer, when a module reaches into
another's internal headers, or when an include does not name its module.

usage: tests/layers_test.py [SOURCE_ROOT]   (prints the edges; exit 1 on a violation)
"""
import os
import re
import sys

# Modules, lowest first. A module may include itself and the modules it
# lists; nothing else. ledger/internal is the ledger's own business.
LAYERS = {
    "schema": set(),
    "schema/k8s": set(),
    "ledger/internal": {"ledger", "schema"},
    "ledger": {"ledger/internal", "schema", "schema/k8s"},
    "ingest/net": set(),
    "ingest": {"ledger", "schema", "schema/k8s"},
    "ingest/kube": {"ingest", "ingest/net", "ledger", "schema", "schema/k8s"},
    "ingest/fleet": {"ingest", "ledger", "schema", "schema/k8s"},
    "replay/cel": {"schema/k8s"},
    "replay/fold": {"ledger", "schema", "schema/k8s"},
    "replay/kueue": {"replay/fold", "replay/cel", "ledger", "schema", "schema/k8s"},
    "replay/admission": {"replay/kueue", "replay/fold", "replay/cel", "ledger", "schema",
                         "schema/k8s"},
    "replay/history": {"replay/admission", "replay/kueue", "replay/fold", "replay/cel", "ledger",
                       "schema", "schema/k8s"},
    "tools/render": {"replay/admission", "replay/kueue", "replay/fold", "ingest/net", "ledger", "schema",
                     "schema/k8s"},
    "tools/generator": {"schema/k8s"},
    "tools/serve": {"replay/fold", "ingest/net", "ledger", "schema", "schema/k8s"},
    "tools": {"tools/render", "tools/generator", "tools/serve", "replay/history", "replay/admission", "replay/kueue", "replay/fold", "replay/cel",
              "ingest", "ingest/net", "ingest/kube", "ingest/fleet", "ledger", "schema",
              "schema/k8s"},
    "tools/bench": {"tools", "tools/generator", "ingest", "replay/kueue", "replay/fold",
                    "ledger", "schema", "schema/k8s"},
}
# Tests may include any public header; only the ledger's own tests reach
# its internals.
TEST_INTERNAL_OK = ("tests/ledger/",)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_DIRS = ("schema", "ledger", "ingest", "replay", "tools", "tests")


def module_of(path):
    """The longest LAYERS key that is a folder prefix of `path`."""
    if path.startswith("tests/"):
        return "tests"
    best = None
    for m in LAYERS:
        if path.startswith(m + "/") and (best is None or len(m) > len(best)):
            best = m
    return best


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    edges, problems = {}, []
    for top in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                text = open(os.path.join(root, path), encoding="utf-8").read()
                src = module_of(path)
                for inc in INCLUDE.findall(text):
                    dst = module_of(inc)
                    if dst is None or not os.path.exists(os.path.join(root, inc)) and \
                            not inc.endswith(".capnp.h"):
                        problems.append(f"{path}: #include \"{inc}\" does not name its module")
                        continue
                    if src == dst:
                        continue
                    edges[(src, dst)] = edges.get((src, dst), 0) + 1
                    if src == "tests":
                        if dst == "ledger/internal" and not path.startswith(TEST_INTERNAL_OK):
                            problems.append(f"{path}: includes the ledger's internal {inc}")
                    elif dst == "tests" or dst not in LAYERS[src]:
                        problems.append(f"{path}: {src} -> {dst} ({inc}) points up a layer")
    for (src, dst), n in sorted(edges.items()):
        print(f"{src:18} -> {dst:18} {n:4} includes")
    for p in problems:
        print("VIOLATION", p)
    print(f"{len(edges)} edges between modules, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

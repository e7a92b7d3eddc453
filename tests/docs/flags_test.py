#!/usr/bin/env python3
"""Every flag a program's --help lists is documented in docs/reference.md.

usage: tests/docs/flags_test.py BUILD_DIR SOURCE_ROOT
Runs each program with --help, takes every `--flag` its options list, and fails
naming the program and flag when docs/reference.md has no `` `--flag `` for it.
"""
import os
import re
import subprocess
import sys

PROGRAMS = ["ledger-ingest", "ledger-replay", "ledger-query", "ledger-serve", "ledger-gen"]
OPTION = re.compile(r"^\s+(?:-[A-Za-z] \[ )?(--[a-z][a-z0-9-]*)", re.M)


def main():
    build, root = sys.argv[1], sys.argv[2]
    reference = open(os.path.join(root, "docs", "reference.md"), encoding="utf-8").read()
    missing, seen = [], 0
    for program in PROGRAMS:
        out = subprocess.run([os.path.join(build, "tools", program), "--help"],
                             capture_output=True, text=True, check=True).stdout
        flags = OPTION.findall(out)
        if not flags:
            missing.append(f"{program}: --help lists no options (format changed?)")
        for flag in flags:
            seen += 1
            if "`" + flag not in reference:
                missing.append(f"{program} {flag}: not in docs/reference.md")
    for m in missing:
        print("MISSING", m)
    print(f"{seen} flags checked, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

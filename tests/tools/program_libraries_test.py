#!/usr/bin/env python3
"""The shared libraries ledger-query loads at every start.

Each question typed at a shell pays for loading and relocating every shared
library the program names, so ledger-query names neither the NATS client nor
libcurl (with the TLS, Kerberos and LDAP libraries behind it): asking the
fleet's copies reads directories (tools/fleet_query.h), and `serve` runs
ledger-serve (tools/sibling_program.h), so not even cpp-httplib with its TLS
and compression libraries is loaded. A direct dependency added back (a query
command that reaches ingest/fleet's NATS side, ingest/kube or the HTTP
server) fails here.
ledger-query links statically every library Debian ships as an archive
(meson.build, link_static_dep): RocksDB, whose shared library alone cost a
question tens of thousands of symbol relocations, Cap'n Proto, libcrypto,
the compression libraries, yaml-cpp, RE2, Boost.Program_options and jemalloc;
naming any of them fails too.

Where jemalloc is linked (not in sanitizer builds), ledger-query carries its
options (tools/question_allocator.cpp: transparent huge pages, one arena,
its memory reserved at start in one piece, for a program that answers one
question and exits; jemalloc's own statistics show them in effect) and
ledger-ingest, which runs for days as a daemon, does not.

usage: program_libraries_test.py LEDGER_QUERY LEDGER_INGEST
"""
import os
import re
import subprocess
import sys

FORBIDDEN = ("libnats", "libcurl", "libcpp-httplib", "libssl",
             # linked from their archives
             "librocksdb", "libcapnp", "libkj", "libcrypto", "libsnappy", "liblz4", "libzstd",
             "libz.", "libbz2", "libxxhash", "libyaml-cpp", "libre2", "libboost",
             "libjemalloc")


def needed(binary):
    out = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True,
                         text=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines()
            if "(NEEDED)" in line]


def defines(binary, symbol, dynamic=False):
    out = subprocess.run(["nm", "--defined-only"] + (["-D"] if dynamic else []) + [binary],
                         check=True, capture_output=True, text=True).stdout
    return any(line.split()[-1] == symbol for line in out.splitlines() if line.strip())


def carries_malloc_conf(binary):
    # Read by a jemalloc linked in (a static symbol) or loaded (exported).
    return defines(binary, "malloc_conf") or defines(binary, "malloc_conf", dynamic=True)


def question_heap_problems(binary):
    """What jemalloc's statistics say is missing of question_allocator.cpp."""
    env = dict(os.environ, MALLOC_CONF="stats_print:true")
    run = subprocess.run([binary, "--version"], env=env, capture_output=True, text=True)
    stats = run.stdout + run.stderr
    problems = [f"{option} is not {value}" for option, value in
                (("opt.thp", '"always"'), ("opt.narenas", "1"), ("opt.oversize_threshold", "0"))
                if not re.search(rf"^\s*{re.escape(option)}: {re.escape(value)}$", stats, re.M)]
    totals = re.search(r"^Allocated: .*mapped: (\d+), retained: (\d+)$", stats, re.M)
    if not totals:
        problems.append("jemalloc printed no totals")
    elif int(totals.group(1)) + int(totals.group(2)) < 64 << 20:
        problems.append(f"the arena holds {int(totals.group(1)) + int(totals.group(2))} bytes, "
                        "less than the 64 MiB reserve")
    return problems


def main():
    binary, ingest = sys.argv[1], sys.argv[2]
    libs = needed(binary)
    bad = [lib for lib in libs if lib.startswith(FORBIDDEN)]
    print(f"{binary}: {len(libs)} shared libraries named: {' '.join(libs)}")
    if bad:
        print(f"FAIL: {binary} names {' '.join(bad)}")
        return 1
    if not any(lib.startswith("libstdc++") for lib in libs):
        print("FAIL: readelf listed no libstdc++, so this check reads nothing")
        return 1
    # jemalloc linked from its archive defines its API; none in sanitizer builds.
    if defines(binary, "mallocx"):
        if not carries_malloc_conf(binary):
            print(f"FAIL: {binary} carries no jemalloc options (malloc_conf)")
            return 1
        if carries_malloc_conf(ingest):
            print(f"FAIL: {ingest} carries the answering programs' jemalloc options")
            return 1
        problems = question_heap_problems(binary)
        if problems:
            print(f"FAIL: {binary}'s heap: {'; '.join(problems)}")
            return 1
        print("jemalloc options: in ledger-query (one arena, reserved, huge pages), "
              "not in ledger-ingest")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs scenario folders (events + expect.json) against the built ledger tools.

usage: run_scenarios.py [--verbose] [--keep] [--skip-if-missing] BUILD_DIR DIR...

A DIR is a scenario folder (it holds expect.json) or a folder of them. For each
scenario a fresh ledger is made in a temporary folder, `ledger-ingest --ledger L
--from F` runs for every file of `ingest` in order, then each query runs with
`--ledger L -o json` appended and its JSON is checked against the expectations.
The format is in docs/reference.md ("Scenario format"). Each failed expectation
is printed with the scenario, the expectation, the command line and the actual
value; the last line is 'N passed, M failed' (scenarios). Exit 0 only when every
scenario passes and at least one ran.

--verbose          print the ingest runs' standard error and untruncated values
--keep             keep a failed scenario's ledger (its folder is printed)
--skip-if-missing  a DIR that does not exist is skipped with a message; when no
                   DIR exists the exit is 77 (meson's "skipped")

Python 3 standard library only.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from fractions import Fraction

TIMEOUT_SECONDS = 60
EXIT_SKIP = 77

# Kubernetes quantities: a decimal number, then a binary or decimal suffix or a
# decimal exponent ("1e3", "1E3"; "1E" alone is the suffix exa).
SUFFIX = {
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30),
    "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60),
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 10**3), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9),
    "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18),
}
QUANTITY = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$")
MAX_EXPONENT = 1000

MATCHERS = ("quantity", "equals", "absent", "contains", "notContains",
            "containsText", "count", "nonEmpty")


class ScenarioError(Exception):
    """A scenario that cannot be run as written (bad expect.json)."""


def parse_quantity(value):
    """The exact value of a Kubernetes quantity (string) or a JSON number.

    Raises ValueError for anything else (booleans included)."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"not a quantity: {json.dumps(value)}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"not a quantity: {value!r}")
        return Fraction(repr(value))
    if not isinstance(value, str):
        raise ValueError(f"not a quantity: {json.dumps(value)}")
    m = QUANTITY.match(value.strip())
    if not m:
        raise ValueError(f"not a quantity: {json.dumps(value)}")
    number, exponent, suffix = m.groups()
    n = Fraction(number)
    if exponent is not None:
        e = int(exponent)
        if abs(e) > MAX_EXPONENT:
            raise ValueError(f"quantity exponent out of range: {json.dumps(value)}")
        return n * Fraction(10) ** e
    return n * SUFFIX[suffix or ""]


def json_equal(a, b):
    """JSON equality: a boolean equals only a boolean (Python has True == 1),
    numbers compare by value (1 == 1.0), objects by keys and values, arrays
    element by element."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if type(a) is not type(b):
        return False
    return a == b


def partial_match(value, want):
    """An object matches when it has every key of `want` and each of those
    values matches (recursively); anything else must be equal."""
    if isinstance(want, dict):
        return isinstance(value, dict) and all(
            k in value and partial_match(value[k], v) for k, v in want.items())
    return json_equal(value, want)


def selects(element, selector):
    """A path step {"field": value} selects the element whose fields equal those
    values (a missing field counts as null)."""
    return isinstance(element, dict) and all(
        json_equal(element.get(k), v) for k, v in selector.items())


def describe_step(step):
    return json.dumps(step)


def keys_hint(obj):
    keys = sorted(obj.keys())
    shown = ", ".join(json.dumps(k) for k in keys[:20])
    return shown + (f", ... ({len(keys)} keys)" if len(keys) > 20 else "")


def walk(doc, path):
    """Follows a path. Returns (found, value, why-not): why-not says where and
    why the path stopped when it is not found."""
    cur = doc
    for i, step in enumerate(path):
        here = json.dumps(path[: i + 1])
        if isinstance(step, str):
            if not isinstance(cur, dict):
                return False, None, f"{here}: not an object but {type_name(cur)}"
            if step not in cur:
                return False, None, f"{here}: no key {json.dumps(step)} (keys: {keys_hint(cur)})"
            cur = cur[step]
        elif isinstance(step, int) and not isinstance(step, bool):
            if not isinstance(cur, list):
                return False, None, f"{here}: not an array but {type_name(cur)}"
            # Like the shared runner (Python indexing): a negative index counts from the end.
            if not -len(cur) <= step < len(cur):
                return False, None, f"{here}: index {step} out of range (length {len(cur)})"
            cur = cur[step]
        elif isinstance(step, dict):
            if not isinstance(cur, list):
                return False, None, f"{here}: not an array but {type_name(cur)}"
            hits = [e for e in cur if selects(e, step)]
            if len(hits) != 1:
                return False, None, (f"{here}: {len(hits)} of {len(cur)} elements match "
                                     f"{describe_step(step)} (a selector needs exactly one)")
            cur = hits[0]
        else:
            raise ScenarioError(f"path step {json.dumps(step)} is not a key, an index or a selector")
    return True, cur, ""


def type_name(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


def shown(value, limit):
    text = json.dumps(value, sort_keys=True)
    if limit and len(text) > limit:
        return text[:limit] + f"... ({len(text)} characters; --verbose shows all)"
    return text


def validate_expectation(exp):
    """Raises ScenarioError for an expectation the runner cannot read: no path,
    not exactly one matcher, an unknown key (a misspelt matcher would otherwise
    be silently ignored), or a matcher value of the wrong kind."""
    if not isinstance(exp, dict):
        raise ScenarioError("an expectation must be an object")
    if not isinstance(exp.get("path"), list):
        raise ScenarioError("an expectation needs a \"path\" array")
    unknown = [k for k in exp if k != "path" and k not in MATCHERS]
    if unknown:
        raise ScenarioError(f"unknown key {', '.join(json.dumps(k) for k in unknown)} "
                            f"(matchers: {', '.join(MATCHERS)})")
    matchers = [k for k in exp if k in MATCHERS]
    if len(matchers) != 1:
        raise ScenarioError(f"an expectation needs exactly one matcher, found {len(matchers)}")
    kind = matchers[0]
    want = exp[kind]
    if kind == "quantity":
        try:
            parse_quantity(want)
        except ValueError as e:
            raise ScenarioError(f"expected {e}") from None
    elif kind == "absent" and not isinstance(want, bool):
        raise ScenarioError("\"absent\" must be true or false")
    elif kind == "nonEmpty" and want is not True:
        raise ScenarioError("\"nonEmpty\" must be true")
    elif kind == "containsText" and not isinstance(want, str):
        raise ScenarioError("\"containsText\" must be a string")
    elif kind == "count" and (not isinstance(want, int) or isinstance(want, bool) or want < 0):
        raise ScenarioError("\"count\" must be a non-negative integer")
    return kind


def check(doc, exp, limit=400):
    """Checks one expectation against a query's JSON. Returns (ok, actual):
    actual describes what was found, for the failure message."""
    kind = validate_expectation(exp)
    want = exp[kind]
    found, val, why = walk(doc, exp["path"])
    missing = f"missing: {why}"
    if kind == "absent":
        return found != want, f"present: {shown(val, limit)}" if found else missing
    if kind == "quantity":
        if not found:
            # A quantity the output leaves out is zero.
            return parse_quantity(want) == 0, missing
        try:
            return parse_quantity(val) == parse_quantity(want), shown(val, limit)
        except ValueError as e:
            return False, str(e)
    if not found:
        return False, missing
    if kind == "equals":
        return json_equal(val, want), shown(val, limit)
    if kind == "contains":
        if not isinstance(val, list):
            return False, f"not an array: {shown(val, limit)}"
        return any(partial_match(e, want) for e in val), f"{len(val)} elements: {shown(val, limit)}"
    if kind == "notContains":
        if not isinstance(val, list):
            return False, f"not an array: {shown(val, limit)}"
        hits = [e for e in val if partial_match(e, want)]
        return not hits, f"{len(hits)} matching of {len(val)}: {shown(hits, limit)}"
    if kind == "containsText":
        texts = val if isinstance(val, list) else [val]
        return any(isinstance(t, str) and want in t for t in texts), shown(val, limit)
    if kind == "count":
        if not isinstance(val, list):
            return False, f"not an array: {shown(val, limit)}"
        return len(val) == want, f"{len(val)} elements: {shown(val, limit)}"
    if kind == "nonEmpty":
        # Empty: null, false, 0, "", [] and {}.
        return bool(val), shown(val, limit)
    raise AssertionError(kind)


def find_tool(build, name):
    """BUILD_DIR/tools/NAME, else the first executable NAME under BUILD_DIR."""
    direct = os.path.join(build, "tools", name)
    if os.path.isfile(direct) and os.access(direct, os.X_OK):
        return direct
    for root, dirs, files in os.walk(build):
        dirs.sort()
        if name in files and os.access(os.path.join(root, name), os.X_OK):
            return os.path.join(root, name)
    raise FileNotFoundError(f"no executable {name} under {build}")


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
                          stdin=subprocess.DEVNULL)


def tail(text, n=600):
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def load_spec(sdir):
    try:
        with open(os.path.join(sdir, "expect.json"), encoding="utf-8") as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        raise ScenarioError(f"expect.json: {e}") from None
    if not isinstance(spec, dict):
        raise ScenarioError("expect.json must hold an object")
    ingest = spec.get("ingest", ["events.jsonl"])
    if not isinstance(ingest, list) or not all(isinstance(f, str) for f in ingest):
        raise ScenarioError("\"ingest\" must be an array of file names")
    exit_code = spec.get("ingestExit", 0)
    if not isinstance(exit_code, int) or isinstance(exit_code, bool):
        raise ScenarioError("\"ingestExit\" must be an integer")
    checks = spec.get("checks", [])
    if not isinstance(checks, list):
        raise ScenarioError("\"checks\" must be an array")
    for i, c in enumerate(checks, 1):
        if (not isinstance(c, dict) or not isinstance(c.get("query"), list) or not c["query"]
                or not all(isinstance(w, str) for w in c["query"])
                or not isinstance(c.get("expect"), list)):
            raise ScenarioError(f"check {i}: needs \"query\" (non-empty array of strings) "
                                f"and \"expect\" (array)")
    return spec


def run_scenario(build, sdir, verbose=False, keep=False):
    """Runs one scenario. Returns the list of failure messages (empty: passed)."""
    failures = []
    limit = 0 if verbose else 400
    work = tempfile.mkdtemp(prefix="ledger-scenario-")
    ledger = os.path.join(work, "ledger")
    scenario = os.path.abspath(sdir)
    try:
        spec = load_spec(sdir)
        ingest_tool = find_tool(build, "ledger-ingest")
        highest, runs = 0, []
        for f in spec.get("ingest", ["events.jsonl"]):
            cmd = [ingest_tool, "--ledger", ledger, "--from", os.path.join(scenario, f)]
            p = run(cmd)
            highest = max(highest, p.returncode)
            runs.append((cmd, p))
            if verbose and p.stderr:
                sys.stderr.write(p.stderr)
        expected_exit = spec.get("ingestExit", 0)
        if highest != expected_exit:
            lines = [f"ingest: highest exit {highest}, expected {expected_exit} (ingestExit)"]
            for cmd, p in runs:
                lines.append(f"  command: {shlex.join(cmd)}")
                lines.append(f"  exit {p.returncode}" + (f"; stderr: {tail(p.stderr)}" if p.stderr.strip() else ""))
            failures.append("\n".join(lines))
        checks = spec.get("checks", [])
        for ci, c in enumerate(checks, 1):
            query = [w.replace("{scenario}", scenario) for w in c["query"]]
            if query[0] == "replay":
                cmd = [find_tool(build, "ledger-replay")] + query[1:]
            else:
                cmd = [find_tool(build, "ledger-query")] + query
            cmd += ["--ledger", ledger, "-o", "json"]
            where = f"check {ci} of {len(checks)} (query {json.dumps(c['query'])})"
            p = run(cmd)
            if p.returncode != 0:
                failures.append(f"{where}: exit {p.returncode}, expected 0\n"
                                f"  command: {shlex.join(cmd)}\n"
                                f"  stderr: {tail(p.stderr)}")
                continue
            try:
                doc = json.loads(p.stdout)
            except ValueError as e:
                failures.append(f"{where}: the output is not JSON ({e})\n"
                                f"  command: {shlex.join(cmd)}\n"
                                f"  stdout: {tail(p.stdout)}")
                continue
            for ei, exp in enumerate(c["expect"], 1):
                try:
                    ok, actual = check(doc, exp, limit)
                except ScenarioError as e:
                    ok, actual = False, f"bad expectation: {e}"
                if not ok:
                    failures.append(f"{where}, expectation {ei} of {len(c['expect'])}:\n"
                                    f"  expected: {json.dumps(exp)}\n"
                                    f"  command: {shlex.join(cmd)}\n"
                                    f"  actual: {actual}")
    except ScenarioError as e:
        failures.append(f"bad scenario: {e}")
    except FileNotFoundError as e:
        failures.append(str(e))
    except subprocess.TimeoutExpired as e:
        failures.append(f"timed out after {TIMEOUT_SECONDS}s: {shlex.join(e.cmd)}")
    finally:
        if keep and failures:
            failures.append(f"ledger kept in {ledger}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return failures


def scenario_dirs(dirs):
    found = []
    for d in dirs:
        if os.path.isfile(os.path.join(d, "expect.json")):
            found.append(d)
        else:
            found += sorted(os.path.join(d, s) for s in os.listdir(d)
                            if os.path.isfile(os.path.join(d, s, "expect.json")))
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Runs scenario folders (expect.json + events) against a build's ledger tools.")
    ap.add_argument("build", metavar="BUILD_DIR", help="build folder holding tools/ledger-*")
    ap.add_argument("dirs", metavar="DIR", nargs="+", help="a scenario folder or a folder of them")
    ap.add_argument("--verbose", action="store_true",
                    help="print the ingest runs' stderr and untruncated values")
    ap.add_argument("--keep", action="store_true", help="keep a failed scenario's ledger")
    ap.add_argument("--skip-if-missing", action="store_true",
                    help="skip a DIR that does not exist; exit 77 when none exists")
    args = ap.parse_args(argv)

    dirs = []
    for d in args.dirs:
        if os.path.isdir(d):
            dirs.append(d)
        elif args.skip_if_missing:
            print(f"{d}: no such folder, skipped")
        else:
            print(f"{d}: no such folder")
            print("0 passed, 1 failed")
            return 1
    if not dirs:
        print("no scenario folder present: skipping")
        return EXIT_SKIP
    if not os.path.isdir(args.build):
        print(f"{args.build}: no such build folder")
        print("0 passed, 1 failed")
        return 1

    passed = failed = 0
    for sdir in scenario_dirs(dirs):
        name = os.path.basename(os.path.normpath(sdir))
        failures = run_scenario(args.build, sdir, args.verbose, args.keep)
        if failures:
            failed += 1
            print(f"FAIL {name} ({sdir})")
            for f in failures:
                print("  " + f.replace("\n", "\n  "))
        else:
            passed += 1
            print(f"ok   {name}")
        sys.stdout.flush()
    if passed + failed == 0:
        print(f"no scenario (a folder with expect.json) in {', '.join(dirs)}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())

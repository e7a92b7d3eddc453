#!/usr/bin/env python3
"""Self-test of the scenario runner (tests/scenarios/run_scenarios.py): its
matchers on small in-memory documents, and whole runs against fake ledger tools
(scripts in a temporary build folder), so a wrong expectation is shown to fail
with a useful message without building anything. Python 3 standard library."""
import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import textwrap
import unittest
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ beside the scenarios
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios"))
import run_scenarios as R  # noqa: E402

DOC = {
    "workloads": [
        {"namespace": "a", "name": "w1", "state": "Admitted",
         "computed": {"cpu": "1500m", "memory": "1Gi", "example.com/gpu": 2},
         "errors": [], "warnings": ["template default/t is taken as existing"]},
        {"namespace": "b", "name": "w1", "state": "Pending", "computed": {}, "errors": ["no class"]},
    ],
    "findings": [{"type": "ChargeMismatch", "workload": "a/w1", "detail": {"resource": "cpu"}}],
    "fits": True,
    "count": 1,
    "empty": "",
    "nothing": None,
}


def ok(exp):
    return R.check(DOC, exp)[0]


class Quantity(unittest.TestCase):
    def test_suffixes_and_exponents(self):
        q = R.parse_quantity
        self.assertEqual(q("1Ki"), 1024)
        self.assertEqual(q("1Mi"), 2**20)
        self.assertEqual(q("1Gi"), 2**30)
        self.assertEqual(q("1Ti"), 2**40)
        self.assertEqual(q("1Pi"), 2**50)
        self.assertEqual(q("1Ei"), 2**60)
        self.assertEqual(q("1k"), 1000)
        self.assertEqual(q("1M"), 10**6)
        self.assertEqual(q("1G"), 10**9)
        self.assertEqual(q("1T"), 10**12)
        self.assertEqual(q("1P"), 10**15)
        self.assertEqual(q("1E"), 10**18)  # exa, not an exponent
        self.assertEqual(q("1500m"), Fraction(3, 2))
        self.assertEqual(q("1.5"), q("1500m"))
        self.assertEqual(q("0.5Gi"), q("512Mi"))
        self.assertEqual(q("1e3"), 1000)
        self.assertEqual(q("1E3"), q("1k"))
        self.assertEqual(q("25e-3"), q("25m"))
        self.assertEqual(q("100n"), Fraction(1, 10**7))
        self.assertEqual(q("-2"), -2)
        self.assertEqual(q(2), 2)
        self.assertEqual(q(0.25), Fraction(1, 4))
        # Exact past 28 digits (the default decimal precision).
        self.assertNotEqual(q("1234567890123456789012345678901Ei"), q("1234567890123456789012345678900Ei"))

    def test_not_quantities(self):
        for bad in ["", "abc", "1.2.3", ".", "1Kb", "1 Gi", "1e", "Gi", True, None, [1], {"a": 1}, "1e99999"]:
            with self.assertRaises(ValueError, msg=repr(bad)):
                R.parse_quantity(bad)

    def test_matcher(self):
        self.assertTrue(ok({"path": ["workloads", 0, "computed", "cpu"], "quantity": "1.5"}))
        self.assertTrue(ok({"path": ["workloads", 0, "computed", "memory"], "quantity": "1024Mi"}))
        self.assertTrue(ok({"path": ["workloads", 0, "computed", "example.com/gpu"], "quantity": "2"}))
        self.assertFalse(ok({"path": ["workloads", 0, "computed", "memory"], "quantity": "1G"}))
        # A missing key equals only "0".
        self.assertTrue(ok({"path": ["workloads", 1, "computed", "cpu"], "quantity": "0"}))
        self.assertTrue(ok({"path": ["workloads", 1, "computed", "cpu"], "quantity": "0m"}))
        passed, actual = R.check(DOC, {"path": ["workloads", 1, "computed", "cpu"], "quantity": "1"})
        self.assertFalse(passed)
        self.assertIn("no key \"cpu\"", actual)
        # A value that is not a quantity fails with that said.
        passed, actual = R.check(DOC, {"path": ["workloads", 0, "state"], "quantity": "1"})
        self.assertFalse(passed)
        self.assertIn("not a quantity", actual)


class Paths(unittest.TestCase):
    def test_steps(self):
        self.assertEqual(R.walk(DOC, ["workloads", 1, "name"]), (True, "w1", ""))
        self.assertEqual(R.walk(DOC, ["workloads", -1, "namespace"])[1], "b")
        self.assertEqual(R.walk(DOC, ["workloads", {"namespace": "b", "name": "w1"}, "state"])[1], "Pending")

    def test_where_it_stops(self):
        found, _, why = R.walk(DOC, ["workloads", 5])
        self.assertFalse(found)
        self.assertIn("index 5 out of range (length 2)", why)
        found, _, why = R.walk(DOC, ["workloads", {"name": "w1"}])
        self.assertFalse(found)
        self.assertIn("2 of 2 elements match", why)  # a selector needs exactly one
        found, _, why = R.walk(DOC, ["workloads", {"name": "zz"}])
        self.assertIn("0 of 2 elements match", why)
        found, _, why = R.walk(DOC, ["fits", "x"])
        self.assertIn("not an object but a boolean", why)
        found, _, why = R.walk(DOC, ["nope"])
        self.assertIn("no key \"nope\"", why)
        self.assertIn("\"workloads\"", why)  # the keys that are there

    def test_bad_step(self):
        with self.assertRaises(R.ScenarioError):
            R.walk(DOC, ["workloads", 1.5])
        with self.assertRaises(R.ScenarioError):
            R.walk(DOC, ["workloads", True])


class Matchers(unittest.TestCase):
    def test_equals(self):
        self.assertTrue(ok({"path": ["fits"], "equals": True}))
        self.assertTrue(ok({"path": ["nothing"], "equals": None}))
        self.assertTrue(ok({"path": ["findings", 0, "detail"], "equals": {"resource": "cpu"}}))
        self.assertTrue(ok({"path": ["count"], "equals": 1.0}))
        self.assertFalse(ok({"path": ["count"], "equals": True}))  # JSON: true is not 1
        self.assertFalse(ok({"path": ["fits"], "equals": 1}))
        self.assertFalse(ok({"path": ["findings", 0, "detail"], "equals": {}}))
        self.assertFalse(ok({"path": ["missing"], "equals": None}))
        passed, actual = R.check(DOC, {"path": ["workloads", 0, "state"], "equals": "Pending"})
        self.assertFalse(passed)
        self.assertEqual(actual, "\"Admitted\"")

    def test_absent(self):
        self.assertTrue(ok({"path": ["workloads", 0, "current"], "absent": True}))
        self.assertFalse(ok({"path": ["workloads", 0, "state"], "absent": True}))
        self.assertTrue(ok({"path": ["workloads", 0, "state"], "absent": False}))
        self.assertFalse(ok({"path": ["workloads", 0, "current"], "absent": False}))
        passed, actual = R.check(DOC, {"path": ["workloads", 0, "state"], "absent": True})
        self.assertIn("present: \"Admitted\"", actual)

    def test_contains_partial_objects(self):
        self.assertTrue(ok({"path": ["findings"], "contains": {"type": "ChargeMismatch"}}))
        self.assertTrue(ok({"path": ["findings"], "contains": {"detail": {"resource": "cpu"}}}))
        self.assertFalse(ok({"path": ["findings"], "contains": {"type": "ChargeMismatch", "workload": "b/w1"}}))
        self.assertFalse(ok({"path": ["findings"], "contains": {"type": "Uncharged"}}))
        self.assertFalse(ok({"path": ["fits"], "contains": {"type": "x"}}))  # not an array
        self.assertTrue(ok({"path": ["workloads", 0, "warnings"],
                            "contains": "template default/t is taken as existing"}))

    def test_not_contains(self):
        self.assertTrue(ok({"path": ["findings"], "notContains": {"type": "Uncharged"}}))
        passed, actual = R.check(DOC, {"path": ["findings"], "notContains": {"type": "ChargeMismatch"}})
        self.assertFalse(passed)
        self.assertIn("1 matching of 1", actual)
        self.assertIn("ChargeMismatch", actual)
        self.assertFalse(ok({"path": ["missing"], "notContains": {"type": "x"}}))

    def test_contains_text(self):
        self.assertTrue(ok({"path": ["workloads", 0, "warnings"], "containsText": "taken as existing"}))
        self.assertTrue(ok({"path": ["workloads", 0, "state"], "containsText": "Admit"}))
        self.assertFalse(ok({"path": ["workloads", 0, "warnings"], "containsText": "missing"}))
        self.assertFalse(ok({"path": ["count"], "containsText": "1"}))  # not a string

    def test_count(self):
        self.assertTrue(ok({"path": ["workloads"], "count": 2}))
        self.assertTrue(ok({"path": ["workloads", 0, "errors"], "count": 0}))
        passed, actual = R.check(DOC, {"path": ["workloads"], "count": 3})
        self.assertFalse(passed)
        self.assertTrue(actual.startswith("2 elements"))
        self.assertFalse(ok({"path": ["workloads"], "count": 1}))
        self.assertFalse(ok({"path": ["workloads", 0, "computed"], "count": 3}))  # an object

    def test_non_empty(self):
        self.assertTrue(ok({"path": ["workloads", 1, "errors"], "nonEmpty": True}))
        self.assertTrue(ok({"path": ["fits"], "nonEmpty": True}))
        for empty in (["workloads", 0, "errors"], ["workloads", 1, "computed"], ["empty"], ["nothing"]):
            self.assertFalse(ok({"path": empty, "nonEmpty": True}), empty)
        self.assertFalse(ok({"path": ["missing"], "nonEmpty": True}))

    def test_malformed_expectations(self):
        for bad in [{"path": ["fits"]},                                   # no matcher
                    {"path": ["fits"], "equals": True, "absent": False},  # two
                    {"path": ["fits"], "equal": True},                    # misspelt
                    {"path": ["fits"], "equals": True, "note": "x"},      # unknown key
                    {"equals": True},                                     # no path
                    {"path": ["count"], "quantity": "1 Gi"},
                    {"path": ["fits"], "absent": "yes"},
                    {"path": ["fits"], "nonEmpty": False},
                    {"path": ["workloads"], "count": "2"},
                    {"path": ["fits"], "containsText": 1}]:
            with self.assertRaises(R.ScenarioError, msg=json.dumps(bad)):
                R.check(DOC, bad)


FAKE_INGEST = """\
    import os, sys
    a = sys.argv[1:]
    ledger, source = a[a.index("--ledger") + 1], a[a.index("--from") + 1]
    os.makedirs(ledger, exist_ok=True)
    text = open(source).read()
    if "reject" in text:
        sys.stderr.write("rejected at line 1\\n")
        sys.exit(2)
    open(os.path.join(ledger, "log"), "a").write(text)
"""
FAKE_QUERY = """\
    import json, os, sys
    a = sys.argv[1:]
    ledger = a[a.index("--ledger") + 1]
    if a[0] == "fail":
        sys.stderr.write("no such query\\n")
        sys.exit(1)
    if a[0] == "garbage":
        print("not json")
        sys.exit(0)
    print(json.dumps({"tool": TOOL, "argv": a, "ingested": open(os.path.join(ledger, "log")).read(),
                      "quotas": [{"resource": "cpu", "nominal": "8"}, {"resource": "memory", "nominal": "16Gi"}]}))
"""


class WholeRuns(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="scenario-runner-test-")
        self.addCleanup(self.tmp.cleanup)
        root = self.tmp.name
        self.build = os.path.join(root, "build")
        os.makedirs(os.path.join(self.build, "tools"))
        for name, body in [("ledger-ingest", FAKE_INGEST),
                           ("ledger-query", "TOOL = 'query'\n" + textwrap.dedent(FAKE_QUERY)),
                           ("ledger-replay", "TOOL = 'replay'\n" + textwrap.dedent(FAKE_QUERY))]:
            path = os.path.join(self.build, "tools", name)
            with open(path, "w") as f:
                f.write(f"#!{sys.executable}\n" + textwrap.dedent(body))
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        self.scenarios = os.path.join(root, "scenarios")

    def scenario(self, name, spec, files=None):
        d = os.path.join(self.scenarios, name)
        os.makedirs(d)
        for fname, text in (files or {"events.jsonl": "{}\n"}).items():
            with open(os.path.join(d, fname), "w") as f:
                f.write(text)
        with open(os.path.join(d, "expect.json"), "w") as f:
            json.dump(spec, f)
        return d

    def run_main(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = R.main(list(args))
        return code, out.getvalue()

    def test_passing_scenarios(self):
        self.scenario("a", {"checks": [
            {"query": ["state", "--at", "now"], "expect": [
                {"path": ["tool"], "equals": "query"},
                {"path": ["argv", 0], "equals": "state"},
                {"path": ["argv"], "containsText": "json"},
                {"path": ["quotas", {"resource": "memory"}, "nominal"], "quantity": "16384Mi"},
                {"path": ["quotas"], "count": 2}]},
            {"query": ["replay", "--at", "x"], "expect": [
                {"path": ["tool"], "equals": "replay"},
                {"path": ["argv", 0], "equals": "--at"}]}]})
        # ingest in order, {scenario} substitution, the highest exit of the ingest runs.
        d = self.scenario("b", {"ingest": ["one.yaml", "two.yaml", "three.yaml"], "ingestExit": 2, "checks": [
            {"query": ["admit", "--workload", "{scenario}/job.yaml"], "expect": [
                {"path": ["ingested"], "equals": "first\nthird\n"},
                {"path": ["argv", 2], "containsText": "/b/job.yaml"}]}]},
            {"one.yaml": "first\n", "two.yaml": "reject\n", "three.yaml": "third\n"})
        code, out = self.run_main(self.build, self.scenarios)
        self.assertEqual(code, 0, out)
        self.assertEqual(out.splitlines()[-1], "2 passed, 0 failed")
        code, out = self.run_main(self.build, d)  # one scenario folder
        self.assertEqual((code, out.splitlines()[-1]), (0, "1 passed, 0 failed"))

    def test_wrong_expectation_fails_with_what_to_look_at(self):
        self.scenario("good", {"checks": [{"query": ["state"], "expect": [{"path": ["tool"], "equals": "query"}]}]})
        self.scenario("wrong", {"checks": [{"query": ["state", "--at", "now"], "expect": [
            {"path": ["quotas", {"resource": "cpu"}, "nominal"], "quantity": "9"}]}]})
        code, out = self.run_main(self.build, self.scenarios)
        self.assertEqual(code, 1)
        self.assertEqual(out.splitlines()[-1], "1 passed, 1 failed")
        self.assertIn("FAIL wrong", out)
        self.assertIn("check 1 of 1 (query [\"state\", \"--at\", \"now\"]), expectation 1 of 1", out)
        self.assertIn('expected: {"path": ["quotas", {"resource": "cpu"}, "nominal"], "quantity": "9"}', out)
        self.assertIn(os.path.join(self.build, "tools", "ledger-query") + " state --at now --ledger ", out)
        self.assertIn("-o json", out)
        self.assertIn('actual: "8"', out)

    def test_each_matcher_can_fail_a_run(self):
        wrong = [{"path": ["tool"], "equals": "replay"},
                 {"path": ["tool"], "absent": True},
                 {"path": ["quotas", 0, "nominal"], "quantity": "8001m"},
                 {"path": ["quotas"], "contains": {"resource": "gpu"}},
                 {"path": ["quotas"], "notContains": {"resource": "cpu"}},
                 {"path": ["argv"], "containsText": "yaml"},
                 {"path": ["quotas"], "count": 3},
                 {"path": ["quotas", 0, "missing"], "nonEmpty": True}]
        for i, exp in enumerate(wrong):
            self.scenario(f"wrong-{i}", {"checks": [{"query": ["state"], "expect": [exp]}]})
        code, out = self.run_main(self.build, self.scenarios)
        self.assertEqual(code, 1)
        self.assertEqual(out.splitlines()[-1], f"0 passed, {len(wrong)} failed")
        for exp in wrong:
            self.assertIn("expected: " + json.dumps(exp), out)

    def test_ingest_exit_query_exit_and_bad_output(self):
        self.scenario("ingest", {"checks": []}, {"events.jsonl": "reject\n"})
        self.scenario("query-exit", {"checks": [{"query": ["fail"], "expect": []}]})
        self.scenario("not-json", {"checks": [{"query": ["garbage"], "expect": []}]})
        self.scenario("bad-spec", {"checks": [{"query": [], "expect": []}]})
        code, out = self.run_main(self.build, self.scenarios)
        self.assertEqual(code, 1)
        self.assertEqual(out.splitlines()[-1], "0 passed, 4 failed")
        self.assertIn("ingest: highest exit 2, expected 0 (ingestExit)", out)
        self.assertIn("rejected at line 1", out)
        self.assertIn("exit 1, expected 0", out)
        self.assertIn("no such query", out)
        self.assertIn("the output is not JSON", out)
        self.assertIn("bad scenario: check 1", out)

    def test_missing_folders(self):
        absent = os.path.join(self.tmp.name, "no-such")
        code, out = self.run_main("--skip-if-missing", self.build, absent)
        self.assertEqual(code, 77)
        self.assertIn("skip", out)
        code, out = self.run_main(self.build, absent)
        self.assertEqual(code, 1)
        os.makedirs(self.scenarios)
        code, out = self.run_main(self.build, self.scenarios)  # no scenario at all fails
        self.assertEqual((code, out.splitlines()[-1]), (1, "0 passed, 0 failed"))


if __name__ == "__main__":
    unittest.main()

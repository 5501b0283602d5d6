#!/usr/bin/env python3
"""Tests of the Python package `trident` (run by ctest with PYTHONPATH=build/python):
simulate, validate and ConfigError, sweep rows, compare, and `python3 -m trident`."""
import os
import subprocess
import sys
import unittest

import trident

SOURCE = os.environ.get("TRIDENT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
TINY = os.path.join(SOURCE, "scenarios", "tiny.yaml")


class SimulateTest(unittest.TestCase):
    def test_report_has_the_json_keys(self):
        r = trident.simulate(TINY)
        cli = subprocess.run([trident.binary(), "simulate", TINY, "--format", "json"],
                             stdout=subprocess.PIPE, check=True, text=True).stdout
        import json
        self.assertEqual(set(r), set(json.loads(cli)))
        self.assertAlmostEqual(r["step_time_s"], json.loads(cli)["step_time_s"], places=9)

    def test_metrics_are_the_report_keys(self):
        r = trident.simulate(TINY)
        scalars = [k for k, v in r.items() if not isinstance(v, (dict, list))]
        self.assertEqual([m["key"] for m in trident.metrics()], scalars)
        for m in trident.metrics():
            self.assertTrue(m["unit"] and m["doc"], m["key"])

    def test_sets_and_names(self):
        a = trident.simulate("llama3-70b-dgx-h100")
        b = trident.simulate("llama3-70b-dgx-h100", sets={"cluster": "hgx-b200"})
        self.assertEqual(b["cluster"], "hgx-b200")
        self.assertLess(b["step_time_s"], a["step_time_s"])
        # Several simulations in one Python process: each runs in its own child.
        c = trident.simulate(TINY, sets={"plan.num_microbatches": 16})
        self.assertEqual(c["num_microbatches"], 16)

    def test_config_error_has_file_line_key(self):
        with self.assertRaises(trident.ConfigError) as ctx:
            trident.simulate(TINY, sets={"plan.tensor_parallel": 3})
        self.assertTrue(ctx.exception.key.startswith("plan."), ctx.exception.key)
        with self.assertRaises(trident.ConfigError) as ctx:
            trident.simulate("llama3-70b-dgx-h10")
        self.assertIn("did you mean `llama3-70b-dgx-h100`?", str(ctx.exception))


class ValidateTest(unittest.TestCase):
    def test_kinds(self):
        self.assertEqual(trident.validate("dgx-h100"), "cluster")
        self.assertEqual(trident.validate(TINY), "scenario")

    def test_error_location(self):
        bad = os.path.join(SOURCE, "tests", "bad_inputs", "missing_section.yaml")
        with self.assertRaises(trident.ConfigError) as ctx:
            trident.validate(bad)
        e = ctx.exception
        self.assertEqual(e.file, bad)
        self.assertEqual(e.line, 2)
        self.assertEqual(e.key, "plan")
        self.assertIn("missing required key", e.message)


class SweepCompareTest(unittest.TestCase):
    def test_sweep_rows(self):
        rows = trident.sweep(TINY, vary={"plan.num_microbatches": [4, 8]}, jobs=2)
        if not isinstance(rows, list):  # a pandas DataFrame
            rows = rows.to_dict("records")
        points = sorted(set(r["point"] for r in rows))
        self.assertEqual(len(points), len(rows))
        self.assertTrue(all(r["status"] == "ok" for r in rows))
        self.assertIn(4, [r["num_microbatches"] for r in rows])
        self.assertIsInstance(rows[0]["step_time_s"], float)

    def test_sweep_bad_key(self):
        with self.assertRaises(trident.ConfigError):
            trident.sweep(TINY, vary={"plan.tensor_paralel": [1, 2]})

    def test_compare(self):
        rows = trident.compare(TINY, {"m4": {"plan.num_microbatches": 4},
                                      "m8": {"plan.num_microbatches": 8}}, jobs=2)
        if not isinstance(rows, list):
            rows = rows.to_dict("records")
        self.assertEqual([r["name"] for r in rows], ["m4", "m8"])
        self.assertEqual(rows[1]["num_microbatches"], 8)
        self.assertEqual(rows[0]["step_time_ratio"], 1)
        self.assertEqual(rows[1]["status"], "ok")
        with self.assertRaises(trident.ConfigError):
            trident.compare(TINY, {"bad": {"plan.tensor_paralel": 2}})


class ArgumentTest(unittest.TestCase):
    def test_wrong_types_raise_type_errors_naming_the_argument(self):
        with self.assertRaisesRegex(TypeError, r"trident.simulate: scenario .* not None"):
            trident.simulate(None)  # not looked up as a scenario named "None"
        with self.assertRaisesRegex(TypeError, r"trident.simulate: fidelity must be a str"):
            trident.simulate(TINY, fidelity=3)
        with self.assertRaisesRegex(TypeError, r"trident.simulate: sets must be a dict"):
            trident.simulate(TINY, sets="plan.tensor_parallel=2")
        with self.assertRaisesRegex(TypeError, r"trident.validate: path .* not int"):
            trident.validate(5)
        with self.assertRaisesRegex(TypeError, r"trident.sweep: vary must be a dict"):
            trident.sweep(TINY, vary=[1, 2])
        with self.assertRaisesRegex(TypeError, r"trident.compare: variants must be a dict"):
            trident.compare(TINY, ["a", "b"])
        with self.assertRaisesRegex(TypeError, r"trident.plan: top must be an int, not str"):
            trident.plan(TINY, top="3")
        # A path object is a path.
        import pathlib
        self.assertEqual(trident.validate(pathlib.Path(TINY)), "scenario")

    def test_a_sweep_past_the_point_limit_is_refused_before_running(self):
        with self.assertRaisesRegex(ValueError, r"more than 100000 points"):
            trident.sweep(TINY, vary={"plan.num_microbatches": list(range(1, 200001))})
        with self.assertRaisesRegex(ValueError, r"more than 100000 points"):
            trident.sweep(TINY, vary={"plan.num_microbatches": list(range(1, 401)),
                                      "plan.micro_batch_size": list(range(1, 401))})
        self.assertEqual(trident.MAX_SWEEP_POINTS, 100000)


class MainTest(unittest.TestCase):
    def test_python_m_trident(self):
        p = subprocess.run([sys.executable, "-m", "trident", "list", "clusters"],
                           stdout=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("dgx-h100", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=1)

#!/usr/bin/env python3
"""Tests of trident.plan (run by ctest with PYTHONPATH=build/python): the ranked plans are
those of `trident plan --format json`, options map to the command line's, and bad input
raises ConfigError."""
import json
import os
import subprocess
import unittest

import trident

SOURCE = os.environ.get("TRIDENT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
TINY = os.path.join(SOURCE, "scenarios", "tiny.yaml")


def cli_plans(args):
    out = subprocess.run([trident.binary(), "plan"] + args + ["--format", "json"],
                         stdout=subprocess.PIPE, check=True, text=True).stdout
    return json.loads(out)["plans"]


def records(rows):
    """The rows of a DataFrame (when pandas is importable) or the list itself."""
    return rows if isinstance(rows, list) else rows.to_dict("records")


class PlanTest(unittest.TestCase):
    def test_scenario_search_is_the_cli_one(self):
        plans = records(trident.plan(TINY, top=3, fix={"plan.schedule": "1f1b"}, jobs=2))
        self.assertEqual(plans, cli_plans([TINY, "--top", "3", "--fix", "plan.schedule=1f1b"]))
        self.assertEqual(len(plans), 3)
        steps = [p["step_time_s"] for p in plans]
        self.assertEqual(steps, sorted(steps))

    def test_cluster_and_model_with_limits(self):
        plans = records(trident.plan(cluster="tiny-2node", model="gpt-1.7b", global_batch=32,
                                     top=2, vary={"plan.tensor_parallel": [1, 2]},
                                     sets={"plan.attention_backend": "unfused"}, wide=True))
        self.assertEqual(plans, cli_plans(
            ["--cluster", "tiny-2node", "--model", "gpt-1.7b", "--global-batch", "32",
             "--top", "2", "--vary", "plan.tensor_parallel=1,2", "--set",
             "plan.attention_backend=unfused", "--wide"]))
        for p in plans:
            self.assertIn("plan.tensor_parallel=%s" % p["plan"].split()[0][2:], p["set"])

    def test_max_simulations_warns_when_unproven(self):
        with self.assertWarnsRegex(UserWarning, "not proven: --max-simulations 2"):
            plans = records(trident.plan(TINY, top=2, max_simulations=2))
        self.assertEqual(plans, cli_plans([TINY, "--top", "2", "--max-simulations", "2"]))

    def test_rows_like_sweep_and_compare(self):
        rows = trident.plan(TINY, top=1, fix={"plan.schedule": "1f1b"})
        try:
            import pandas
            self.assertIsInstance(rows, pandas.DataFrame)
        except ImportError:
            self.assertIsInstance(rows, list)  # as sweep and compare without pandas
        self.assertEqual(len(records(rows)), 1)

    def test_bad_input_raises_config_error(self):
        with self.assertRaises(trident.ConfigError) as ctx:
            trident.plan(cluster="tiny-2node", model="gpt-1.7b", global_batch=32,
                         vary={"plan.no_such_field": [1]})
        self.assertIn("plan.no_such_field", str(ctx.exception))


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Tests of scripts/end_to_end.py and scripts/fit_end_to_end.py (ctest: end_to_end_script):
how a published run becomes a scenario and a measured step, the interpolation the fit uses,
and that one dense run simulates through the built binary (TRIDENT_BINARY)."""
import math
import os
import sys
import unittest

SOURCE = os.environ.get("TRIDENT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
import end_to_end  # noqa: E402
import fit_end_to_end  # noqa: E402

BINARY = os.environ.get("TRIDENT_BINARY", os.path.join(SOURCE, "build", "trident"))


def row(set_name, **measured):
    r = {"set": set_name, "id": "x", "gpus": 16, "cluster": "dgx-h100", "precision": "bf16",
         "model": {"name": "m", "num_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
                   "seq_length": 2048, "vocab_size": 32000},
         "plan": {"tensor_parallel": 2, "pipeline_parallel": 1, "data_parallel": 8,
                  "micro_batch_size": 1, "global_batch_size": 32, "sequence_parallel": True,
                  "recompute": "not stated", "precision": "bf16"},
         "overrides": []}
    r.update(measured)
    return r


class EndToEndTest(unittest.TestCase):
    def test_dense_flops_are_narayanans_formula(self):
        # Narayanan et al. 2021, eq. 3: 72 B s l h^2 (1 + s / 6h + V / 12 l h), attention
        # counted in full (the 2024 formula).
        r = row("megatron_moe", measured_tflops_per_gpu=100.0)
        b, s, l, h, v = 32, 2048, 4, 1024, 32000
        expected = 72 * b * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h))
        self.assertAlmostEqual(end_to_end.megatron_flops_per_step(r) / expected, 1, places=12)
        # The measured TFLOP/s per GPU becomes seconds per step by the same count.
        self.assertAlmostEqual(end_to_end.measured_step_s(r), expected / (100e12 * 16))

    def test_causal_halving_removes_half_the_scores(self):
        full = end_to_end.megatron_flops_per_step(row("megatron_moe"))
        halved = end_to_end.megatron_flops_per_step(row("megatron_moe_recipes"))
        b, s, l, h = 32, 2048, 4, 1024
        self.assertAlmostEqual(full - halved, 72 * b * s * l * h * h * s / (6 * h) / 2)

    def test_tokens_per_second_and_seconds(self):
        r = row("nemo2407_h100_fp8", measured_tokens_per_s_per_gpu=1000.0)
        self.assertAlmostEqual(end_to_end.measured_step_s(r), 32 * 2048 / (1000.0 * 16))
        self.assertEqual(end_to_end.measured_step_s(row("dgxc_h100_bf16", measured_s=2.5)), 2.5)

    def test_scenario_applies_stated_facts_and_drops_unstated_values(self):
        sc, applied = end_to_end.scenario_for(row("dgxc_h100_bf16", measured_s=1.0))
        self.assertNotIn("recompute", sc["plan"])  # "not stated": trident's default
        self.assertEqual(sc["model"]["hidden_dropout"], 0)
        self.assertTrue(sc["plan"]["tp_comm_overlap"])
        self.assertIn("plan.tp_comm_overlap=True", applied)
        self.assertEqual(sc["overrides"]["cluster.nodes"], 2)
        r = row("megatron_moe_recipes", measured_s=1.0)
        r["plan"]["precision"] = "mxfp8"
        sc, _ = end_to_end.scenario_for(r)
        self.assertEqual((sc["plan"]["precision"], sc["plan"]["fp8_recipe"]), ("fp8", "mxfp8"))

    def test_interpolation_is_exact_for_time_linear_in_inverse_throughput(self):
        # A step of c + k / x (fixed communication plus compute at throughput x) is
        # reproduced between and at the grid points.
        steps = [0.3 + 2.0 / g for g in fit_end_to_end.GRID]
        for x in (0.7, 0.75, 0.812, 0.9, 1.0):
            self.assertAlmostEqual(fit_end_to_end.interpolate(steps, x), 0.3 + 2.0 / x)
        rows = [{"set": "a", "measured_s": 0.3 + 2.0 / 0.83, "grid": steps}]
        self.assertAlmostEqual(fit_end_to_end.best(rows), 0.83, delta=0.0025)

    def test_cuda_graph_words_become_impl_and_scope(self):
        cg = end_to_end.cuda_graph_settings
        self.assertEqual(cg("transformer_engine: attn, moe_router, moe_preprocess"),
                         ("transformer_engine", ["attn", "moe_router", "moe_preprocess"]))
        self.assertEqual(cg("external (TE): attn"), ("transformer_engine", ["attn"]))
        self.assertEqual(cg("local: full_iteration"), ("local", ["full_iteration"]))
        self.assertEqual(cg(False), ("none", []))
        self.assertEqual(cg("sometimes"), (None, None))
        r = row("megatron_moe_recipes")
        r["plan"]["cuda_graph"] = "local: full_iteration"
        sc, _ = end_to_end.scenario_for(r)
        self.assertEqual((sc["plan"]["cuda_graph_impl"], sc["plan"]["cuda_graph_scope"]),
                         ("local", ["full_iteration"]))
        self.assertNotIn("cuda_graph", sc["plan"])

    def test_host_interpolation_is_linear_between_grid_points(self):
        steps = [1.0 + 0.01 * g for g in fit_end_to_end.HOST_GRID]
        for x in (0, 5, 25, 33.5, fit_end_to_end.HOST_GRID[-1]):
            self.assertAlmostEqual(fit_end_to_end.host_interpolate(steps, x), 1.0 + 0.01 * x)
        rows = [{"set": "a", "measured_s": 1.0 + 0.01 * 42.5, "grid": steps}]
        self.assertEqual(fit_end_to_end.host_best(rows), 42.5)

    @unittest.skipUnless(os.path.exists(BINARY), "no trident binary")
    def test_one_published_run_simulates(self):
        rows = [r for r in end_to_end.load_rows() if r["id"] == "nemotron4-15b-16-v24.11"]
        self.assertEqual(len(rows), 2)  # BF16 and FP8
        res = end_to_end.simulate(rows[0], BINARY)
        self.assertNotIn("error", res)
        self.assertEqual(res["dropped"], [])
        self.assertTrue(res["fits"])
        self.assertLess(abs(math.log(res["predicted_s"] / rows[0]["measured_s"])), 0.15)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Checks trident's Blackwell compute model against published dense Llama 3 training runs that
no fit ever sees: NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, "25.11 NeMo
Container" tables for DGX-B200 and DGX-GB200 (as mirrored in pufanyi/Megatron-Bridge at
21a2ced8). Each run is simulated with the plan its row states, through scripts/end_to_end.py.

usage: scripts/check_blackwell.py [--binary build/trident] [--format table|json]

Nothing here is fitted; docs/calibration.md ("Blackwell checks") reports the output. The
rows' precision: FP8-CS is Transformer Engine's per-tensor current scaling (trident
`tensorwise`), FP8-MX its MXFP8 recipe (`mxfp8`). Rows that use Megatron FSDP (which trident
does not model for dense runs) are left out; so is GB200 Llama 3 70B FP8-CS (FSDP).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import end_to_end  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SET = "mbridge2511_blackwell"
# Megatron-Bridge performance recipes run the Llama models without dropout and with Transformer
# Engine's TP communication overlap where TP > 1 (scripts/performance, as NeMo's 24.x recipes).
end_to_end.SET_FACTS[SET] = {"model": {"attention_dropout": 0, "hidden_dropout": 0},
                             "plan_if_tp": {"tp_comm_overlap": True}}

LLAMA3_8B = {"name": "llama3-8b", "num_layers": 32, "hidden_size": 4096,
             "num_attention_heads": 32, "seq_length": 8192, "vocab_size": 128256,
             "num_query_groups": 8, "ffn_hidden_size": 14336, "swiglu": True,
             "position_embedding": "rope", "untie_embeddings_and_output_weights": True}
LLAMA3_70B = dict(LLAMA3_8B, name="llama3-70b", num_layers=80, hidden_size=8192,
                  num_attention_heads=64, ffn_hidden_size=28672)
LLAMA31_405B = dict(LLAMA3_8B, name="llama3.1-405b", num_layers=126, hidden_size=16384,
                    num_attention_heads=128, ffn_hidden_size=53248)


def plan(tp, pp, cp, vp, gpus, gbs, mbs, recipe, model_layers):
    p = {"tensor_parallel": tp, "pipeline_parallel": pp, "context_parallel": cp,
         "data_parallel": gpus // (tp * pp * cp), "micro_batch_size": mbs,
         "global_batch_size": gbs, "sequence_parallel": tp > 1, "recompute": "none",
         "distributed_optimizer": True, "overlap_grad_reduce": True, "precision": "fp8",
         "fp8_recipe": recipe}
    p["schedule"] = "interleaved-1f1b" if vp > 1 else "1f1b"
    if vp > 1:
        p["virtual_stages"] = vp
    if pp > 1 and model_layers % (pp * vp):
        # Megatron-Bridge's Llama 3.1 405B recipe: the embedding and the loss take a layer's
        # slot each (126 + 2 = 128 = 8 x 8 x 2).
        p.update(account_for_embedding_in_pipeline_split=True,
                 account_for_loss_in_pipeline_split=True)
    return p


# (id, cluster, GPUs, model, (TP, PP, CP, VP), GBS, MBS, recipe, tokens/s/GPU)
RUNS = [
    ("b200-llama3-8b-fp8cs", "hgx-b200", 8, LLAMA3_8B, (1, 1, 1, 1), 128, 2, "tensorwise", 30624),
    ("b200-llama3-8b-mxfp8", "hgx-b200", 8, LLAMA3_8B, (1, 1, 1, 1), 128, 2, "mxfp8", 29521),
    ("b200-llama3.1-405b-fp8cs", "hgx-b200", 128, LLAMA31_405B, (4, 8, 2, 8), 64, 1,
     "tensorwise", 661),
    ("b200-llama3.1-405b-mxfp8", "hgx-b200", 128, LLAMA31_405B, (4, 8, 2, 8), 64, 1, "mxfp8",
     624),
    ("gb200-llama3-8b-fp8cs", "gb200-nvl72", 8, LLAMA3_8B, (1, 1, 1, 1), 128, 2, "tensorwise",
     31508),
    ("gb200-llama3-8b-mxfp8", "gb200-nvl72", 8, LLAMA3_8B, (1, 1, 1, 1), 128, 2, "mxfp8", 29789),
    ("gb200-llama3-70b-mxfp8", "gb200-nvl72", 64, LLAMA3_70B, (2, 4, 1, 5), 128, 2, "mxfp8",
     3617),
    ("gb200-llama3.1-405b-mxfp8", "gb200-nvl72", 128, LLAMA31_405B, (4, 8, 2, 8), 64, 1,
     "mxfp8", 563),
]


def rows():
    out = []
    for rid, cluster, gpus, model, (tp, pp, cp, vp), gbs, mbs, recipe, tps in RUNS:
        out.append({"set": SET, "id": rid, "gpus": gpus, "cluster": cluster, "precision": "fp8",
                    "model": model,
                    "plan": plan(tp, pp, cp, vp, gpus, gbs, mbs, recipe, model["num_layers"]),
                    "measured_tokens_per_s_per_gpu": tps, "overrides": []})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "trident"))
    ap.add_argument("--format", choices=["table", "json"], default="table")
    args = ap.parse_args()
    results = end_to_end.run_rows(rows(), args.binary)
    if args.format == "json":
        json.dump(results, sys.stdout, indent=1, sort_keys=True)
        print()
        return
    print("| run | measured s | trident s | error | MFU | dropped |")
    print("|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['id']} | {r['measured_s']:.3f} | refused: {r['error']} | | | |")
            continue
        print(f"| {r['id']} | {r['measured_s']:.3f} | {r['predicted_s']:.3f} | "
              f"{r['error_pct']:+.1f} % | {100 * r['mfu']:.1f} % | "
              f"{', '.join(d.split('=')[0] for d in r['dropped'])} |")


if __name__ == "__main__":
    main()

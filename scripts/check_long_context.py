#!/usr/bin/env python3
"""Checks trident against published long-context runs with context parallelism (held out:
never fitted on; docs/context-parallel.md, "Published runs", and docs/calibration.md).

usage: scripts/check_long_context.py [--binary build/trident] [--set K=V]... [--jobs N]
                                     [--format table|json]

Each run is simulated as its source states it (scripts/end_to_end.py turns a row into a
scenario, so the fields and conversions are those of tests/data/end_to_end/). Sources:

- torchtitan: pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md @ 820504e2,
  Table 2: Llama 3.1 8B, 8 H100 (Grand Teton: 96 GB HBM2e at 2.4 TB/s, 500 W power limit),
  FSDP + CP + torch.compile + Float8 (torchao tensorwise), local batch 1, full activation
  checkpointing; torch 1963fc8, torchtitan 9dec370. CP is PyTorch's context_parallel with
  torchtitan's default rotate method allgather (config_manager.py @ 9dec370) and SDPA limited
  to the flash and memory-efficient backends (utils.py get_train_context @ 9dec370): on H100
  that is PyTorch's FlashAttention-2.
- nemo_h100: NVIDIA/NeMo docs/source/performance/performance_long_sequence.md @ 9421f21a,
  Llama 2 7B FP8 on DGX-H100 (NeMo 24.03.01), the CP rows from 32k; TFLOP/s per GPU, converted
  with Megatron's formula without causal halving. Recompute and overlap settings are not
  stated: none assumed, sequence parallelism with TP.
- nemo_b200: the same file, Llama 3 8B FP8 on DGX-B200 (NeMo 25.04.rc2), the CP rows.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import end_to_end  # noqa: E402

LLAMA31_8B = {"name": "llama3-8b", "num_layers": 32, "hidden_size": 4096,
              "num_attention_heads": 32, "num_query_groups": 8, "ffn_hidden_size": 14336,
              "vocab_size": 128256, "swiglu": True, "position_embedding": "rope",
              "untie_embeddings_and_output_weights": True, "attention_dropout": 0,
              "hidden_dropout": 0, "normalization": "RMSNorm"}
LLAMA2_7B = {"name": "llama2-7b", "num_layers": 32, "hidden_size": 4096,
             "num_attention_heads": 32, "num_query_groups": 32, "ffn_hidden_size": 11008,
             "vocab_size": 32000, "swiglu": True, "position_embedding": "rope",
             "untie_embeddings_and_output_weights": True, "attention_dropout": 0,
             "hidden_dropout": 0, "normalization": "RMSNorm"}
# Grand Teton's H100: HBM2e, 96 GB at 2.4 TB/s (the 500 W power limit is not modelled).
# The stack: torchtitan with torch.compile and Float8 (Table 2's runs), whose `attention: sdpa`
# runs PyTorch's FlashAttention-2 (attention_backend auto -> flash2, fitted on kernel data in
# scripts/fit_compute_model.py; docs/stacks.md).
GRAND_TETON = ["cluster.gpu.memory=96 GiB", "cluster.gpu.memory_bandwidth=2400 GB/s"]


def torchtitan(cp, tps):
    seq, dp = 32768 * cp, 8 // cp
    return {"set": "torchtitan", "id": f"llama3.1-8b-{seq // 1024}k-cp{cp}", "gpus": 8,
            "cluster": "dgx-h100", "precision": "fp8",
            "model": dict(LLAMA31_8B, seq_length=seq),
            "plan": {"tensor_parallel": 1, "pipeline_parallel": 1, "context_parallel": cp,
                     "data_parallel": dp, "micro_batch_size": 1, "global_batch_size": dp,
                     "precision": "fp8", "fp8_recipe": "tensorwise", "recompute": "full",
                     "data_parallel_sharding_strategy": "optim_grads_params",
                     "stack": "torchtitan-compile",
                     "cp_comm_type": "all_gather"},
            "overrides": GRAND_TETON, "measured_tokens_per_s_per_gpu": tps}


def nemo(setname, model, cluster, seq_k, gpus, gbs, tp, dp, cp, tflops):
    seq = seq_k * 1024
    return {"set": setname, "id": f"{model['name']}-{seq_k}k-tp{tp}-cp{cp}", "gpus": gpus,
            "cluster": cluster, "precision": "fp8", "model": dict(model, seq_length=seq),
            "plan": {"tensor_parallel": tp, "pipeline_parallel": 1, "context_parallel": cp,
                     "data_parallel": dp, "micro_batch_size": 1, "global_batch_size": gbs,
                     "precision": "fp8", "sequence_parallel": tp > 1,
                     "distributed_optimizer": True, "cp_comm_type": "p2p"},
            "overrides": [], "measured_tflops_per_gpu": tflops}


ROWS = ([torchtitan(cp, tps) for cp, tps in ((1, 3890), (2, 2540), (4, 1071), (8, 548))] +
        [nemo("nemo_h100", LLAMA2_7B, "dgx-h100", *r) for r in (
            (32, 32, 128, 2, 8, 2, 610), (64, 64, 64, 4, 8, 2, 574),
            (128, 128, 32, 4, 8, 4, 555), (256, 256, 16, 4, 8, 8, 549))] +
        [nemo("nemo_b200", LLAMA31_8B, "hgx-b200", *r) for r in (
            (32, 8, 128, 1, 4, 2, 1624), (64, 16, 64, 1, 4, 4, 1600),
            (128, 32, 32, 2, 4, 4, 1588), (256, 64, 16, 4, 4, 4, 1590))])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(end_to_end.ROOT, "build", "trident"))
    ap.add_argument("--set", action="append", default=[], help="--set passed to every run")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--format", choices=["table", "json"], default="table")
    args = ap.parse_args()
    out = end_to_end.run_rows(ROWS, args.binary, args.jobs, args.set)
    for res in out:
        if "predicted_s" in res:
            res["ratio"] = res["measured_s"] / res["predicted_s"]
    if args.format == "json":
        json.dump(out, sys.stdout, indent=1, sort_keys=True)
        print()
        return
    print("| set | run | measured s | trident s | measured / trident | fits | dropped |")
    print("|---|---|---|---|---|---|---|")
    for r in out:
        if "error" in r:
            print(f"| {r['set']} | {r['id']} | {r['measured_s']:.2f} | refused: {r['error']} "
                  f"| | | {', '.join(r['dropped'])} |")
            continue
        print(f"| {r['set']} | {r['id']} | {r['measured_s']:.2f} | {r['predicted_s']:.2f} | "
              f"{r['ratio']:.2f} | {'yes' if r['fits'] else 'no'} | "
              f"{', '.join(d.split('=')[0] for d in r['dropped'])} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs the published end-to-end training runs (tests/data/end_to_end/calibration.jsonl)
through trident and prints, per run, the predicted step against the measured one and the
memory verdict. scripts/fit_end_to_end.py fits on its output; this file is also the library
that turns a run into a scenario (`scenario_for`) and a measurement into seconds per step
(`measured_step_s`).

usage: scripts/end_to_end.py [--binary build/trident] [--only SET,...] [--jobs N]
                             [--set K=V]... [--format table|json]

Every run is simulated with the settings its source states. Where trident does not take a
stated setting yet, the run is still simulated without it and the setting is listed in the
`dropped` column (and JSON field), so nothing is silently lost. Set-level facts the rows do
not carry but their sources state are applied by `SET_FACTS` below, each with its source.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "end_to_end", "calibration.jsonl")

# What each set's source states beyond the row (applied unless the row says otherwise).
SET_FACTS = {
    # Megatron-LM README, "Training Speed and Scalability" (table of f2e5db40): "DP overlap and
    # TP overlap on" for the weak-scaling runs.
    "megatron_h100": {"plan": {"overlap_param_gather": True},
                      "plan_if_tp": {"tp_comm_overlap": True}},
    # NeMo 24.07 / 24.11 (dgxc-benchmarking v24.11 runs NeMo's performance recipes): the model
    # configs run without dropout (NeMo GPTConfig / Llama / Nemotron configs: hidden_dropout
    # and attention_dropout 0) and with Transformer Engine's userbuffer TP overlap whenever
    # TP > 1 with sequence parallelism (NeMo performance recipes: tp_comm_overlap=True).
    # dgxc-benchmarking v24.11.1 (35a9aecc) states its optimizers per model:
    # nemotron/nemotron4-340b-synth.yaml runs Apex DistributedFusedAdam (NeMo-1 trainer) with
    # dtype bf16 and grad_sync_dtype bf16 (bf16 moments, 2-byte master, bf16 gradients),
    # nemotron/configure.sh adds fp8_params for FP8 runs; nemo_megatron/gpt3_175b_hydra.yaml
    # has grad_sync_dtype bf16 and fp8_params; nemotron4-15b-synth.yaml runs Megatron-Core's
    # distributed optimizer with its defaults (docs/memory.md, D1).
    "dgxc_h100_bf16": {"model": {"attention_dropout": 0, "hidden_dropout": 0},
                       "plan_if_tp": {"tp_comm_overlap": True},
                       "by_model": {"nemotron4-340b": "apex_bf16_state",
                                    "gpt3-175b": "bf16_grads"}},
    "dgxc_h100_fp8": {"model": {"attention_dropout": 0, "hidden_dropout": 0},
                      "plan_if_tp": {"tp_comm_overlap": True},
                      "by_model": {"nemotron4-340b": "apex_bf16_state",
                                   "gpt3-175b": "bf16_grads"}},
    # NeMo 24.07 ran NeMo-Framework-Launcher's configs: its GPT-3 FP8 performance recipes
    # (launcher_scripts/conf/training/gpt3/{5b,20b,175b}_fp8_performance.yaml at 1e46ac6c) set
    # optim distributed_fused_adam with grad_sync_dtype bf16; nemotron/nemotron_340b.yaml
    # (3be81fc1) sets mcore_distributed_optim with dtype bf16 and grad_sync_dtype bf16, as the
    # dgxc 340B recipe does. The Llama and smaller Nemotron configs keep the defaults.
    # The Llama configs (llama/llama{2,3}_*.yaml at tag 24.07, 8325688d) run Apex
    # DistributedFusedAdam, and the launcher's Llama H100 FP8 scripts that reproduce the
    # table's runs (examples/training/llama/h100/llama*_fp8.sh, e.g. llama3_8b_fp8.sh line 22)
    # add +training.model.optim.grad_sync_dtype=bf16: bf16 gradient buffers. The smaller
    # Nemotron configs (nemotron/nemotron_{8b,22b}.yaml) keep Apex's defaults (fp32 state and
    # gradients, megatron_amp_O2).
    "nemo2407_h100_fp8": {"model": {"attention_dropout": 0, "hidden_dropout": 0},
                          "plan_if_tp": {"tp_comm_overlap": True},
                          "by_model": {"gpt3-5b": "bf16_grads", "gpt3-20b": "bf16_grads",
                                       "gpt3-175b": "bf16_grads",
                                       "nemotron4-340b": "apex_bf16_state",
                                       "llama2-7b": "bf16_grads", "llama2-13b": "bf16_grads",
                                       "llama2-70b": "bf16_grads", "llama3-8b": "bf16_grads",
                                       "llama3-70b": "bf16_grads", "nemotron3-8b": "apex_fp32",
                                       "nemotron3-22b": "apex_fp32"}},
    # Megatron-Core MoE runs: Megatron-LM MoE examples set --attention-dropout 0.0
    # --hidden-dropout 0.0 for Mixtral, DeepSeek and Qwen3.
    "megatron_moe": {"model": {"attention_dropout": 0, "hidden_dropout": 0}},
    "megatron_moe_recipes": {"model": {"attention_dropout": 0, "hidden_dropout": 0}},
    "modelzoo_mixtral": {"model": {"attention_dropout": 0, "hidden_dropout": 0}},
    "modelzoo_qwen3_h100": {"model": {"attention_dropout": 0, "hidden_dropout": 0}},
}

# Optimizer setups a source states, in trident's settings: Apex DistributedFusedAdam with
# grad_sync_dtype bf16 keeps bf16 gradient buckets; with dtype bf16 its moments and master
# weights are bf16 too (main_params_dtype fp16 is trident's 2-byte master); fp8_params keeps
# FP8 primary weights (fp8_param_gather). With fp32 state and bf16 parameters NeMo's
# MegatronGPTModel.setup_optimization passes store_params=False, store_param_remainders=True
# (nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py; store_params when
# fp8_params): the optimizer keeps the low 16 bits of each fp32 master beside the bf16
# parameter, as Megatron-Core's precision-aware optimizer does (trident's
# use_precision_aware_optimizer with store_param_remainders, which applies it only where the
# primary weights are bf16).
OPTIMIZER_SETUPS = {
    "apex_fp32": {"use_precision_aware_optimizer": True, "store_param_remainders": True},
    "bf16_grads": {"grad_reduce_in_bf16": True, "use_precision_aware_optimizer": True,
                   "store_param_remainders": True},
    "apex_bf16_state": {"grad_reduce_in_bf16": True, "use_precision_aware_optimizer": True,
                        "main_grads_dtype": "bf16", "main_params_dtype": "fp16",
                        "exp_avg_dtype": "bf16", "exp_avg_sq_dtype": "bf16"},
}
FP8_PARAMS = {"dgxc_h100_fp8": {"nemotron4-340b", "gpt3-175b"}}

# Megatron's FLOPs formula as each TFLOP/s figure was computed (the row's notes): the 2024
# formula counts attention scores in full, later ones halve them under the causal mask.
CAUSAL_HALVED = {"megatron_moe": False, "megatron_moe_recipes": True,
                 "modelzoo_mixtral": False, "modelzoo_qwen3_h100": True}

# Row values trident names differently (a translation, not a dropped setting).
PRECISION_ALIASES = {"mxfp8": ("fp8", "mxfp8"), "blockwise": ("fp8", "blockwise")}

# Row keys that are not Megatron's names, in trident's (translations, not drops): the rows'
# first_k_dense is DeepSeek's first_k_dense_replace; optimizer_offload is Megatron's
# --optimizer-cpu-offload.
MODEL_KEY_NAMES = {"first_k_dense": "first_k_dense_replace"}
PLAN_KEY_NAMES = {"optimizer_offload": "optimizer_cpu_offload"}
# The rows' optimizer_states words, in trident's settings: Megatron-Core's precision-aware
# optimizer (--use-precision-aware-optimizer) with bf16 Adam moments (--exp-avg-dtype bf16
# --exp-avg-sq-dtype bf16).
OPTIMIZER_STATES = {
    "bf16 exp_avg/exp_avg_sq (precision-aware optimizer)": {
        "use_precision_aware_optimizer": True, "exp_avg_dtype": "bf16",
        "exp_avg_sq_dtype": "bf16"},
}

GPUS_PER_NODE = {"gb200-nvl72": 4, "gb300-nvl72": 4}

# A row's `pipeline_layout` is Megatron's --pipeline-model-parallel-layout string, or the
# recipe's words for --account-for-embedding/loss-in-pipeline-split (a translation).
LAYOUT_STRING = re.compile(r"[EtmL|()*0-9, ]+")
LAYOUT_ACCOUNTED = re.compile(r"embedding and loss each counted as a layer|"
                              r"\+ embedding \+ loss split evenly")

# GPUs a job used per NVLink domain where the source states it, by (set, cluster): the
# Megatron-LM moe_recipes GB200 YAMLs (e5ad0980, ENV_VARS) set NVLINK_DOMAIN_SIZE 72 and
# NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN 64, i.e. 64 of each NVL72 rack's 72 GPUs (16 of its
# 18 trays, as block-topology schedulers hand them out). The cluster gets whole racks.
GPUS_PER_ISLAND = {("megatron_moe_recipes", "gb200-nvl72"): (64, 72)}


def load_rows(path=DATA):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def megatron_flops_per_step(row):
    """Model FLOPs of one step as Megatron-LM counts them (3 x forward: forward, data and
    weight gradients; 2 FLOPs per multiply-add), for the formula of the row's set."""
    m, p = row["model"], row["plan"]
    h, layers, s = m["hidden_size"], m["num_layers"], m["seq_length"]
    a = m["num_attention_heads"]
    g = m.get("num_query_groups") or a
    d = m.get("kv_channels") or h // a
    ffn = m.get("ffn_hidden_size") or 4 * h
    gated = 3 if m.get("swiglu") else 2
    halve = 0.5 if CAUSAL_HALVED.get(row["set"], False) else 1.0
    if m.get("multi_latent_attention"):
        qk, pe, vd = m["qk_head_dim"], m["qk_pos_emb_head_dim"], m["v_head_dim"]
        q_lora, kv_lora = m.get("q_lora_rank"), m["kv_lora_rank"]
        q = q_lora * (h + a * (qk + pe)) if q_lora else h * a * (qk + pe)
        attn_params = q + h * (kv_lora + pe) + kv_lora * a * (qk + vd) + a * vd * h
        scores = 2 * s * a * (qk + pe + vd) * halve  # QK^T and attention x V, per token
    else:
        attn_params = h * d * (a + 2 * g) + a * d * h
        scores = 2 * s * a * d * 2 * halve
    experts = m.get("num_experts")
    freq = m.get("moe_layer_freq", 1 if experts else 0)
    if isinstance(freq, list):
        moe_layers = sum(freq)
    elif experts:
        moe_layers = layers // freq if freq else 0
    else:
        moe_layers = 0
    dense_layers = layers - moe_layers
    moe_mlp = 0
    if experts:
        moe_mlp = gated * h * m["moe_ffn_hidden_size"] * m["moe_router_topk"]
        moe_mlp += gated * h * (m.get("moe_shared_expert_intermediate_size") or 0)
        moe_mlp += h * experts  # router
    per_token = (layers * (2 * attn_params + scores) + dense_layers * 2 * gated * h * ffn +
                 moe_layers * 2 * moe_mlp + 2 * h * m["vocab_size"])
    mtp = m.get("mtp_num_layers") or 0
    if mtp:  # each MTP depth: a projection of 2h -> h, one more layer and the logits
        mtp_mlp = moe_mlp if experts else gated * h * ffn
        per_token += mtp * (2 * 2 * h * h + 2 * attn_params + scores + 2 * mtp_mlp +
                            2 * h * m["vocab_size"])
    return 3 * per_token * s * p["global_batch_size"]


def measured_step_s(row):
    """Seconds per optimizer step the source measured (converted as the data README says)."""
    if "measured_s" in row:
        return row["measured_s"]
    if "measured_tokens_per_s_per_gpu" in row:
        tokens = row["plan"]["global_batch_size"] * row["model"]["seq_length"]
        return tokens / (row["measured_tokens_per_s_per_gpu"] * row["gpus"])
    return megatron_flops_per_step(row) / (row["measured_tflops_per_gpu"] * 1e12 * row["gpus"])


def cuda_graph_settings(value):
    """A row's `cuda_graph` ("transformer_engine: attn, moe_router", "external (TE): attn",
    "local: full_iteration", false) as (plan.cuda_graph_impl, plan.cuda_graph_scope list);
    (None, None) when not understood. Megatron-LM's --external-cuda-graph is the older name of
    --cuda-graph-impl transformer_engine."""
    if value is False or value == "none":
        return "none", []
    if not isinstance(value, str) or ":" not in value:
        return None, None
    impl, scope = (part.strip() for part in value.split(":", 1))
    impl = {"external (TE)": "transformer_engine"}.get(impl, impl)
    if impl not in ("local", "transformer_engine"):
        return None, None
    return impl, [w.strip() for w in scope.split(",") if w.strip()]


def scenario_for(row):
    """Returns (scenario dict, settings applied from SET_FACTS) for a row."""
    def stated(v):
        return v is not None and not (isinstance(v, str) and "not stated" in v)
    model = {k: v for k, v in row["model"].items() if stated(v)}
    plan = {k: v for k, v in row["plan"].items() if stated(v)}
    facts = SET_FACTS.get(row["set"], {})
    applied = []
    for k, v in facts.get("model", {}).items():
        if k not in model:
            model[k] = v
            applied.append(f"model.{k}={v}")
    extra = dict(facts.get("plan", {}))
    if plan.get("tensor_parallel", 1) > 1 and plan.get("sequence_parallel"):
        extra.update(facts.get("plan_if_tp", {}))
    setup = facts.get("by_model", {}).get(model.get("name"))
    if setup:
        extra.update(OPTIMIZER_SETUPS[setup])
    if model.get("name") in FP8_PARAMS.get(row["set"], ()):
        extra["fp8_param_gather"] = True
    for k, v in extra.items():
        if k not in plan:
            plan[k] = v
            applied.append(f"plan.{k}={v}")
    for names, section in ((MODEL_KEY_NAMES, model), (PLAN_KEY_NAMES, plan)):
        for old, new in names.items():
            if old in section and new not in section:
                section[new] = section.pop(old)
    states = plan.get("optimizer_states")
    if states in OPTIMIZER_STATES:
        del plan["optimizer_states"]
        for k, v in OPTIMIZER_STATES[states].items():
            plan.setdefault(k, v)
    layout = plan.pop("pipeline_layout", None)
    if layout and LAYOUT_STRING.fullmatch(layout):
        plan["pipeline_model_parallel_layout"] = layout
    elif layout and LAYOUT_ACCOUNTED.search(layout):
        plan["account_for_embedding_in_pipeline_split"] = True
        plan["account_for_loss_in_pipeline_split"] = True
    elif layout:
        plan["pipeline_layout"] = layout  # not understood: dropped and listed
    graphs = plan.pop("cuda_graph", None)
    if graphs is not None:
        impl, scope = cuda_graph_settings(graphs)
        if impl is None:
            plan["cuda_graph"] = graphs  # not understood: dropped and listed
        else:
            plan["cuda_graph_impl"] = impl
            if scope:
                plan["cuda_graph_scope"] = scope
    prec = plan.get("precision")
    if prec in PRECISION_ALIASES:
        plan["precision"], plan["fp8_recipe"] = PRECISION_ALIASES[prec]
    per_node = GPUS_PER_NODE.get(row["cluster"], 8)
    nodes = max(1, -(-row["gpus"] // per_node))
    used = GPUS_PER_ISLAND.get((row["set"], row["cluster"]))
    if used and row["gpus"] > used[0] and "gpus_per_island" not in plan:
        plan["gpus_per_island"] = used[0]
        applied.append(f"plan.gpus_per_island={used[0]}")
        nodes = -(-row["gpus"] // used[0]) * used[1] // per_node
    overrides = {"cluster.nodes": nodes}
    for o in row.get("overrides", []):
        k, v = o.split("=", 1)
        try:  # a bare number stays a number in the YAML ("900 GB/s" stays text)
            v = float(v) if "." in v else int(v)
        except ValueError:
            pass
        overrides[k] = v
    return {"cluster": row["cluster"], "model": model, "plan": plan,
            "overrides": overrides}, applied


def _yaml(value, indent=0):
    """A small YAML writer (JSON scalars are valid YAML flow values)."""
    pad = "  " * indent
    out = []
    for k, v in value.items():
        if isinstance(v, dict):
            out.append(f"{pad}{k}:")
            out.append(_yaml(v, indent + 1))
        else:
            out.append(f"{pad}{k}: {json.dumps(v)}")
    return "\n".join(out)


# The plan's shape: never dropped (a run that refuses one of these is reported as refused).
CORE = {"tensor_parallel", "pipeline_parallel", "data_parallel", "context_parallel",
        "expert_model_parallel_size", "expert_tensor_parallel_size", "micro_batch_size",
        "global_batch_size", "schedule", "virtual_stages", "precision", "num_layers",
        "hidden_size", "num_attention_heads", "seq_length", "num_experts", "moe_router_topk"}
UNKNOWN = re.compile(r":\d+:\d+: ((?:model|plan)\.[A-Za-z0-9_]+): unknown key")
BAD_VALUE = re.compile(r":\d+:\d+: ((?:model|plan)\.[A-Za-z0-9_]+): ")


def simulate(row, binary, sets=(), workdir=None):
    """Simulates a row; drops (and records) each setting trident refuses until it runs.
    Returns a result dict."""
    sc, applied = scenario_for(row)
    dropped = []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        path = os.path.join(tmp, "run.yaml")
        for _ in range(64):
            with open(path, "w") as f:
                f.write(_yaml(sc) + "\n")
            cmd = [binary, "simulate", path, "--format", "json"]
            for s in sets:
                cmd += ["--set", s]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode == 0:
                rep = json.loads(p.stdout)
                break
            msg = p.stderr.strip()
            hit = UNKNOWN.search(msg) or (p.returncode == 2 and BAD_VALUE.search(msg))
            if not hit:
                return {"error": msg.splitlines()[-1] if msg else f"exit {p.returncode}",
                        "dropped": dropped, "applied": applied}
            section, key = hit.group(1).split(".", 1)
            if key not in sc[section] or key in CORE:
                return {"error": msg.splitlines()[-1], "dropped": dropped, "applied": applied}
            dropped.append(f"{section}.{key}={json.dumps(sc[section].pop(key))}")
        else:
            return {"error": "too many refused settings", "dropped": dropped, "applied": applied}
    # The fullest GPU: its tensors and its reserve (device_gib; memory_gib in older reports).
    stage = max(rep["stages"], key=lambda st: st.get("device_gib", st["memory_gib"]))
    return {
        "predicted_s": rep["step_time_s"],
        "fits": rep["fits_in_memory"],
        "margin_gib": rep["memory_margin_gib"],
        "peak_memory_gib": rep["peak_memory_gib"],
        "memory_terms_gib": {k[:-4]: stage[k] for k in stage if k.endswith("_gib")},
        "mfu": rep["mfu"],
        "dropped": dropped,
        "applied": applied,
    }


def run_all(binary, only=(), jobs=2, sets=()):
    """Simulates the calibration set's runs (of the sets in `only`, all when empty)."""
    return run_rows([r for r in load_rows() if not only or r["set"] in only], binary, jobs, sets)


def run_rows(rows, binary, jobs=2, sets=()):
    """Simulates `rows` (calibration.jsonl's form); returns simulate()'s results with each
    row's set, id, GPUs, cluster, precision, measured step and error in per cent."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda r: simulate(r, binary, sets), rows))
    out = []
    for r, res in zip(rows, results):
        res.update({"set": r["set"], "id": r["id"], "gpus": r["gpus"],
                    "cluster": r["cluster"], "precision": r["precision"],
                    "measured_s": measured_step_s(r)})
        if "predicted_s" in res:
            res["error_pct"] = 100 * (res["predicted_s"] / res["measured_s"] - 1)
        out.append(res)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "trident"))
    ap.add_argument("--only", default="", help="comma-separated sets")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--set", action="append", default=[], help="--set passed to every run")
    ap.add_argument("--format", choices=["table", "json"], default="table")
    args = ap.parse_args()
    only = [s for s in args.only.split(",") if s]
    res = run_all(args.binary, only, args.jobs, args.set)
    if args.format == "json":
        json.dump(res, sys.stdout, indent=1, sort_keys=True)
        print()
        return
    print("| set | run | GPUs | measured s | trident s | error | fits (margin GiB) | dropped |")
    print("|---|---|---|---|---|---|---|---|")
    for r in res:
        if "error" in r:
            print(f"| {r['set']} | {r['id']} | {r['gpus']} | {r['measured_s']:.3f} | "
                  f"refused: {r['error']} | | | {', '.join(r['dropped'])} |")
            continue
        print(f"| {r['set']} | {r['id']} | {r['gpus']} | {r['measured_s']:.3f} | "
              f"{r['predicted_s']:.3f} | {r['error_pct']:+.1f} % | "
              f"{'yes' if r['fits'] else 'NO'} ({r['margin_gib']:+.1f}) | "
              f"{', '.join(d.split('=')[0] for d in r['dropped'])} |")


if __name__ == "__main__":
    main()

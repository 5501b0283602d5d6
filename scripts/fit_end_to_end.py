#!/usr/bin/env python3
"""Fits the compute model's in-step throughput (`gpu.efficiency.in_training`, one value per
GPU x precision) and Megatron-Core's host launch time (`host_time_per_kernel` of
configs/stacks/megatron-core.yaml, one value for the stack) on the published end-to-end runs
(tests/data/end_to_end/calibration.jsonl), all rows at once, and reports every residual and a
leave-one-set-out check in docs/calibration.md ("End-to-end fit").

usage: scripts/fit_end_to_end.py [--binary build/trident] [--jobs N] [--dry-run]
                                 [--before FILE] [--doc-only]

How: first the host time, on the mixture-of-experts runs (the ones it moves: their many short
kernels and the host-device sync at each dispatch, docs/host-launch.md), each simulated at a
grid of host times (HOST_GRID) with in_training as the GPU files hold it; a run's step is
interpolated linearly between grid points. Then in_training on the dense runs with that host
time: each run simulated at a grid of in_training values; a run's step is interpolated
between grid points in 1 / in_training (compute time scales with it, communication does not).
Each value minimises the mean squared log error, each set weighted equally; they are written
to scripts/data/end_to_end_fit.json, scripts/fit_compute_model.py writes in_training into the
GPU files and this script the host time into the stack profile (the built-in default,
config/stack.h kMegatronCoreHostTimePerKernel, must then be set to it: tests/test_stack.cc
checks the two agree). 16-bit first (its rows run 16-bit throughout), then FP8 with the 16-bit
value fixed (FP8 runs keep attention in 16 bits). Leave-one-set-out: each fit repeated
without a set, and that set predicted.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import end_to_end  # noqa: E402
from fit_compute_model import IN_TRAINING as ASSUMED  # noqa: E402  the ratio before any fit

ROOT = end_to_end.ROOT
FIT_FILE = os.path.join(ROOT, "scripts", "data", "end_to_end_fit.json")
DOC = os.path.join(ROOT, "docs", "calibration.md")
BEGIN = "<!-- end-to-end-fit: begin (written by scripts/fit_end_to_end.py; do not edit) -->"
END = "<!-- end-to-end-fit: end -->"
GRID = [0.70, 0.78, 0.86, 0.94, 1.0]
# Megatron-Core's host time per kernel launch, us (plan.stack.host_time_per_kernel).
HOST_GRID = [0, 20, 30, 40, 50, 70]
STACK_FILE = os.path.join(ROOT, "configs", "stacks", "megatron-core.yaml")
# The 'before' runs of the last fit (--before), for --doc-only.
BEFORE_FILE = os.path.join(ROOT, "scripts", "data", "end_to_end_before.json")
# Shipped cluster -> (key of scripts/fit_compute_model.py's GPUS, GPU file name).
CLUSTER_GPU = {"dgx-h100": ("h100", "H100-SXM5-80GB"), "hgx-h200": ("h200", "H200-SXM-141GB"),
               "hgx-b200": ("b200", "B200"), "gb200-nvl72": ("gb200", "GB200")}
# GPUs without runs of their own that take another's fitted values: the H200 is the H100's
# GH100 die at the same clocks with more HBM.
SAME_AS = {"h200": "h100"}
MOE_SETS = {"megatron_moe", "megatron_moe_recipes", "modelzoo_mixtral", "modelzoo_qwen3_h100"}


def knob(precision):
    block = "" if precision == "bf16" else precision + "."
    return f"cluster.gpu.efficiency.{block}in_training"


def interpolate(grid_steps, x):
    """A run's step at in_training x from its steps on GRID, piecewise linear in 1 / x."""
    u = 1 / x
    pts = sorted((1 / g, s) for g, s in zip(GRID, grid_steps))
    for (u0, s0), (u1, s1) in zip(pts, pts[1:]):
        if u <= u1 or (u1, s1) == pts[-1]:
            return s0 + (s1 - s0) * (u - u0) / (u1 - u0)
    return pts[-1][1]


def loss(rows, x, at=None):
    """Mean over sets of the mean squared log error of the set's rows at x, each row's step
    read off its grid by `at` (interpolate, or host_interpolate for the host time's grid)."""
    at = at or interpolate
    by_set = {}
    for r in rows:
        by_set.setdefault(r["set"], []).append(math.log(at(r["grid"], x) / r["measured_s"]) ** 2)
    return sum(sum(v) / len(v) for v in by_set.values()) / len(by_set)


def best(rows):
    xs = [0.60 + 0.0025 * i for i in range(161)]  # 0.60 .. 1.00
    return min(xs, key=lambda x: loss(rows, x))


def end_to_end_current():
    """The in_training knobs of the last fit (scripts/data/end_to_end_fit.json), the H100's."""
    try:
        with open(FIT_FILE) as f:
            h100 = json.load(f)["in_training"]["h100"]
    except (OSError, KeyError, ValueError):
        return {}
    return {knob(p): v for p, v in sorted(h100.items())}


def simulate_grid(rows, precision, fixed, binary, jobs, extra=()):
    """Adds r['grid'] (steps at each GRID value) to each row."""
    for g in GRID:
        sets = [f"{k}={v}" for k, v in fixed.items()] + [f"{knob(precision)}={g}"] + list(extra)
        res = {(r["set"], r["id"]): r for r in
               end_to_end.run_all(binary, sorted({r["set"] for r in rows}), jobs, sets)}
        for r in rows:
            r.setdefault("grid", []).append(res[(r["set"], r["id"])]["predicted_s"])


def host_interpolate(grid_steps, x):
    """A run's step at host time x (us) from its steps on HOST_GRID, piecewise linear."""
    for (x0, s0), (x1, s1) in zip(zip(HOST_GRID, grid_steps),
                                  zip(HOST_GRID[1:], grid_steps[1:])):
        if x <= x1:
            return s0 + (s1 - s0) * (x - x0) / (x1 - x0)
    return grid_steps[-1]


def host_best(rows):
    xs = [0.5 * i for i in range(int(2 * HOST_GRID[-1]) + 1)]  # 0 .. max, every 0.5 us
    return min(xs, key=lambda x: loss(rows, x, host_interpolate))


def fit_host(binary, jobs, fixed):
    """Fits Megatron-Core's host_time_per_kernel (us) on the MoE runs at the in_training values
    `fixed`; returns (value, rows with their grid, leave-one-set-out {set: (x, mean, max)})."""
    rows = None
    for g in HOST_GRID:
        sets = [f"{k}={v}" for k, v in fixed.items()] + [
            "plan.stack=megatron-core", f"plan.stack.host_time_per_kernel={g}us"]
        res = end_to_end.run_all(binary, sorted(MOE_SETS), jobs, sets)
        if rows is None:
            rows = [dict(set=r["set"], id=r["id"], measured_s=r["measured_s"], grid=[])
                    for r in res if "predicted_s" in r]
        by_id = {(r["set"], r["id"]): r for r in res}
        for r in rows:
            r["grid"].append(by_id[(r["set"], r["id"])]["predicted_s"])
    x = host_best(rows)
    loso = {}
    for s in sorted({r["set"] for r in rows}):
        others = [r for r in rows if r["set"] != s]
        xo = host_best(others)
        held = [100 * (host_interpolate(r["grid"], xo) / r["measured_s"] - 1)
                for r in rows if r["set"] == s]
        loso[s] = (xo, sum(map(abs, held)) / len(held), max(map(abs, held)))
    return x, rows, loso


def write_stack_host(us):
    """Writes the fitted host time into configs/stacks/megatron-core.yaml."""
    text = open(STACK_FILE).read()
    text = re.sub(r"(?m)^host_time_per_kernel: .*$", f"host_time_per_kernel: {us:g} us", text)
    with open(STACK_FILE, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "trident"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--dry-run", action="store_true", help="print, write nothing")
    ap.add_argument("--before", help="end_to_end.py --format json output to show as 'before' "
                    "(default: every GPU and precision at the assumed in_training)")
    ap.add_argument("--doc-only", action="store_true",
                    help="fit nothing: rerun the runs at the fitted values and rewrite the doc")
    args = ap.parse_args()

    if args.doc_only:
        with open(FIT_FILE) as f:
            fit = json.load(f)
        with open(BEFORE_FILE) as f:
            before = json.load(f)
        host_us = fit["host_time_per_kernel_us"]["megatron-core"]
        lo = fit["leave_one_set_out"]
        after = end_to_end.run_all(args.binary, [], args.jobs, [
            "plan.stack=megatron-core", f"plan.stack.host_time_per_kernel={host_us:g}us"])
        write_doc(before["runs"], after, fit["in_training"],
                  {tuple(k.split("|")): v for k, v in lo["in_training"].items()},
                  before["label"], host_us, lo["host_time_per_kernel_us"])
        return

    if args.before:
        with open(args.before) as f:
            base = json.load(f)
        before_label = "main before this fit"
    else:
        # Before: every GPU and precision at the assumed ratio, as without an end-to-end fit.
        base = end_to_end.run_all(args.binary, [], args.jobs,
                                  [f"{knob(p)}={ASSUMED}" for p in ("bf16", "fp8")] +
                                  ["plan.stack=megatron-core",
                                   "plan.stack.host_time_per_kernel=0us"])
        before_label = f"in_training {ASSUMED}, the ratio assumed before any fit, no host time"
    # Megatron-Core's host time first, on the MoE runs (the ones it moves), at the in_training
    # the GPU files hold; then in_training on the dense runs with that host time.
    current = end_to_end_current()
    host_us, host_rows, host_loso = fit_host(args.binary, args.jobs, current)
    print(f"megatron-core host_time_per_kernel {host_us:g} us on {len(host_rows)} MoE runs",
          file=sys.stderr)
    host_sets = ["plan.stack=megatron-core", f"plan.stack.host_time_per_kernel={host_us:g}us"]
    fits, loso = {}, {}
    groups = {}
    for r in base:
        if r["set"] in MOE_SETS or "predicted_s" not in r or r["cluster"] not in CLUSTER_GPU:
            continue
        groups.setdefault((CLUSTER_GPU[r["cluster"]][0], r["precision"]), []).append(r)
    fixed = {}
    for (gpu, precision) in sorted(groups, key=lambda k: (k[0], k[1] != "bf16")):
        rows = [dict(set=r["set"], id=r["id"], measured_s=r["measured_s"])
                for r in groups[(gpu, precision)]]
        simulate_grid(rows, precision, fixed, args.binary, args.jobs, host_sets)
        x = best(rows)
        fits.setdefault(gpu, {})[precision] = round(x, 3)
        if precision == "bf16":
            fixed[knob("bf16")] = round(x, 3)
        for s in sorted({r["set"] for r in rows}):
            others = [r for r in rows if r["set"] != s]
            if not others:
                continue
            xo = best(others)
            held = [100 * (interpolate(r["grid"], xo) / r["measured_s"] - 1)
                    for r in rows if r["set"] == s]
            loso[(gpu, precision, s)] = (xo, sum(map(abs, held)) / len(held),
                                         max(map(abs, held)))
        print(f"{gpu} {precision}: in_training {x:.3f} on {len(rows)} runs", file=sys.stderr)
    for gpu, like in SAME_AS.items():
        if like in fits:
            fits[gpu] = dict(fits[like])
    if args.dry_run:
        print(json.dumps({"in_training": fits, "host_time_per_kernel_us": host_us}, indent=1))
        return
    os.makedirs(os.path.dirname(FIT_FILE), exist_ok=True)
    with open(FIT_FILE, "w") as f:
        # The leave-one-set-out figures too, so that --doc-only can rewrite the doc.
        json.dump({"in_training": fits, "host_time_per_kernel_us": {"megatron-core": host_us},
                   "leave_one_set_out": {"in_training": {"|".join(k): v for k, v in loso.items()},
                                         "host_time_per_kernel_us": host_loso}},
                  f, indent=1, sort_keys=True)
        f.write("\n")
    if args.before:
        with open(BEFORE_FILE, "w") as f:
            json.dump({"label": before_label, "runs": base}, f, indent=1, sort_keys=True)
            f.write("\n")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "fit_compute_model.py")],
                   check=True, stdout=subprocess.DEVNULL)
    write_stack_host(host_us)
    # After: as shipped (the GPU files and the stack profile now hold the fit; the binary's
    # built-in default stack must be rebuilt to match: tests/test_stack.cc checks it).
    after = end_to_end.run_all(args.binary, [], args.jobs, host_sets)
    write_doc(base, after, fits, loso, before_label, host_us, host_loso)


def fmt_row(b, a):
    if "predicted_s" not in a:
        return f"refused: {a.get('error', '')[:80]}"
    fits = "yes" if a["fits"] else "**no**"
    return (f"{b.get('predicted_s', float('nan')):.3f} | {a['predicted_s']:.3f} | "
            f"{a['error_pct']:+.1f} % | {fits} ({a['margin_gib']:+.1f})")


def write_doc(base, after, fits, loso, before_label, host_us, host_loso):
    out = [BEGIN, ""]
    out.append(f"Fitted Megatron-Core `host_time_per_kernel` (plan.stack; the host's time to "
               f"launch one kernel, docs/host-launch.md): **{host_us:g} us**, on the "
               f"{sum(1 for r in after if r['set'] in MOE_SETS and 'error_pct' in r)} MoE "
               f"runs (grid {', '.join(f'{g:g}' for g in HOST_GRID)} us). Leave-one-set-out:")
    out.append("")
    out.append("| left out | host time fitted without it | its mean / max error then |")
    out.append("|---|---|---|")
    for s_, (xo, mean, mx) in sorted(host_loso.items()):
        out.append(f"| {s_} | {xo:g} us | {mean:.1f} % / {mx:.1f} % |")
    out.append("")
    out.append("Fitted `in_training` (fraction of the isolated-kernel throughput that tensor-core "
               "kernels sustain inside a step), per GPU and precision:")
    out.append("")
    out.append("| GPU | precision | in_training | runs |")
    out.append("|---|---|---|---|")
    for gpu in sorted(fits):
        for p in sorted(fits[gpu]):
            n = sum(1 for r in after if r["set"] not in MOE_SETS and
                    CLUSTER_GPU.get(r["cluster"], ("",))[0] == gpu and r["precision"] == p)
            runs = f"{n}" if gpu not in SAME_AS else f"{n} (the {SAME_AS[gpu]}'s value)"
            out.append(f"| {gpu} | {p} | {fits[gpu][p]:.3f} | {runs} |")
    out.append("")
    out.append("Per set (mean and max absolute step-time error after the fit; the MoE sets "
               "fit the host time, the dense sets in_training; runs that do not fit in memory by "
               "trident's verdict):")
    out.append("")
    out.append("| set | runs | mean error | max error | called \"does not fit\" | "
               "leave-one-set-out in_training | held-out mean / max |")
    out.append("|---|---|---|---|---|---|---|")
    sets = []
    for r in after:
        if r["set"] not in sets:
            sets.append(r["set"])
    for s in sets:
        rs = [r for r in after if r["set"] == s and "error_pct" in r]
        errs = [abs(r["error_pct"]) for r in rs]
        nofit = sum(1 for r in rs if not r["fits"])
        refused = sum(1 for r in after if r["set"] == s and "error_pct" not in r)
        lo = [v for k, v in loso.items() if k[2] == s]
        lo_text = (f"{lo[0][0]:.3f} | {lo[0][1]:.1f} % / {lo[0][2]:.1f} %" if lo else "— | —")
        mean = f"{sum(errs) / len(errs):.1f} %" if errs else "—"
        mx = f"{max(errs):.1f} %" if errs else "—"
        extra = f" (+{refused} refused)" if refused else ""
        out.append(f"| {s} | {len(rs)}{extra} | {mean} | {mx} | {nofit} | {lo_text} |")
    out.append("")
    out.append(f"Every run (step seconds; before: {before_label}; after: fitted; memory "
               "verdict after, margin in GiB):")
    out.append("")
    out.append("| set | run | GPUs | measured | before | after | error | fits | "
               "settings trident does not simulate yet |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for b, a in zip(base, after):
        dropped = ", ".join(d.split("=")[0] for d in a.get("dropped", []))
        out.append(f"| {a['set']} | {a['id']} | {a['gpus']} | {a['measured_s']:.3f} | "
                   f"{fmt_row(b, a)} | {dropped} |")
    out.append("")
    out.append(END)
    text = open(DOC).read()
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + "\n".join(out) + tail
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(out) + "\n"
    with open(DOC, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

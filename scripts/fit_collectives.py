#!/usr/bin/env python3
"""Fits the collective cost model (src/workload/nccl_model.h, docs/collectives.md) per cluster.

Python 3 standard library only. Rerun from the repository root:

    python3 scripts/fit_collectives.py           # fit, write the files below
    python3 scripts/fit_collectives.py --check   # fit, fail if any written file would change

It writes
  configs/clusters/{dgx-h100,hgx-h200,hgx-b200,gb200-nvl72,hgx-b300,gb300-nvl72}.yaml   the
      `nccl:` block between the `# fit: collectives` markers;
  docs/calibration.md   the residual tables between the `collectives-fit:` markers.

The model (mirrors src/workload/nccl_model.cc; single island, n GPUs, S bytes, protocol p):
  ring  t = max(L, lat) + 2(n-1)/n S / (B eff_ring frac_p),
        L = base_p + 2(n-1) (lat + step_p)                       (NCCL tuning.cc, ring)
  NVLS  t = nvls_latency + lat + S / (B eff_nvls)                 (Simple only)
  auto  the least of those (NCCL's choice); busbw = 2(n-1)/n S / t (nccl-tests).
Multi-island points use the hierarchical plans (ring pipelined over chunks, tree, NVLS-tree)
exactly as the C++ does; they are held out (reported, not fitted).

Each fit minimises the sum of squared log(predicted / measured busbw) over its points with a
coordinate search. The measurements are the published ones in DATA, each with its source.
"""
import argparse
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------------------------
# Published measurements (busbw in GB/s, nccl-tests, all-reduce).
# ---------------------------------------------------------------------------------------------
# Azure AI benchmarking guide (Azure/AI-benchmarking-guide, ND H100 v5 / ND H200 v5 /
# ND GB200 v6 result files), all_reduce_perf -b 8 -e 8G -f 2 -g 8, in-place. H100: NCCL 2.18.5,
# NVLS forced, 8 GPUs. H200: NCCL 2.20.5, NVLS forced, 8 GPUs. GB200: NCCL 2.25.1, Ring forced,
# 4 GPUs of one NVLink domain. Sizes as the source labels them (33M = 33554432 B).
SIZES = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 21, 1 << 22, 1 << 23,
         1 << 24, 1 << 25, 1 << 26, 1 << 27, 1 << 28, 1 << 29, 1 << 30, 1 << 31, 1 << 32, 1 << 33]
CURVES = {
    "H100 NVLS, 8 GPUs": ("nvls", 8, [0.07, 0.27, 0.95, 2.72, 10.86, 43.70, 81.93, 128.73, 172.13,
                                      234.45, 295.53, 361.78, 400.61, 423.38, 438.46, 466.35,
                                      472.36, 475.54, 478.87]),
    "H200 NVLS, 8 GPUs": ("nvls", 8, [0.06, 0.23, 0.93, 3.72, 14.75, 52.96, 88.78, 138.44, 181.94,
                                      240.41, 300.91, 368.11, 412.45, 432.24, 442.72, 467.58,
                                      472.57, 477.41, 479.98]),
    "GB200 Ring, 4 GPUs": ("ring", 4, [0.10, 0.38, 1.46, 5.71, 22.41, 80.48, 110.43, 146.27,
                                       253.46, 331.09, 422.62, 550.73, 574.19, 593.53, 618.74,
                                       646.87, 666.63, 673.06, 679.61]),
}
# Held out: 2 x 8 H100 (default algorithm): Nebius IB, NCCL 2.20.5, PyTorch benchmark
# (drmysore/nebius-h100-16gpu-benchmark README); GCP A3 Mega (lessizzmore/create-a3mega-ztan-fork,
# ztan-NCCL-test-result @ 02dd8f45; A3 Mega NICs are 8 x 200 Gb/s, so below the NDR model).
# NCCL maintainers: 370 GB/s ring on 8 x H100 (nccl-tests#212), 46-48 GB/s per NDR NIC
# (nccl-tests#290). Large scale: 32 x 8 H100 AR 2G ~340 (nccl#1218), 248 x 8 H200 AR 512M ~350
# (nccl-tests#283).
HELD_OUT = [
    # (label, nodes, size, busbw, algorithm forced or "auto")
    ("8 x H100 ring, 8G (nccl-tests#212)", 1, 1 << 33, 370.0, "ring"),
    ("2 x 8 H100 Nebius 100MB", 2, 100e6, 304.03, "auto"),
    ("2 x 8 H100 Nebius 1GB", 2, 1e9, 434.99, "auto"),
    ("2 x 8 H100 A3 Mega 128M", 2, 1 << 27, 152.32, "auto"),
    ("2 x 8 H100 A3 Mega 1G", 2, 1 << 30, 297.86, "auto"),
    ("2 x 8 H100 A3 Mega 8G", 2, 1 << 33, 338.82, "auto"),
    ("32 x 8 H100 2G (nccl#1218)", 32, 1 << 31, 340.0, "auto"),
    ("248 x 8 H200 512M (nccl-tests#283)", 248, 1 << 29, 350.0, "auto"),
]

# Fixed (not fitted) terms, from NVIDIA/nccl src/graph/tuning.cc: hwLat[NVLINK][RING] is
# LL 0.6, LL128 1.25, Simple 3.4 us per step; the route latency (2 us) stands for LL's, so the
# per-step extras are the differences, floored at 0.
STEP = {"ll": 0.0, "ll128": 0.0, "simple": 2.8e-6}
FRACTION = {"ll": 0.25, "ll128": 0.92, "simple": 1.0}  # tuning.cc protocol factors

# Cluster files the fit writes, and the curve whose fit each takes (B200, GB200, B300 and GB300
# take the GB200 ring fit for protocol latencies and the H200 NVLS fit for NVLS: no B200 or
# Blackwell Ultra curve).
CLUSTERS = {
    "dgx-h100": {"nvls": "H100 NVLS, 8 GPUs", "ring": "GB200 Ring, 4 GPUs"},
    "hgx-h200": {"nvls": "H200 NVLS, 8 GPUs", "ring": "GB200 Ring, 4 GPUs"},
    "hgx-b200": {"nvls": "H200 NVLS, 8 GPUs", "ring": "GB200 Ring, 4 GPUs"},
    "gb200-nvl72": {"nvls": "H200 NVLS, 8 GPUs", "ring": "GB200 Ring, 4 GPUs"},
    "hgx-b300": {"nvls": "H200 NVLS, 8 GPUs", "ring": "GB200 Ring, 4 GPUs"},
    "gb300-nvl72": {"nvls": "H200 NVLS, 8 GPUs", "ring": "GB200 Ring, 4 GPUs"},
}
# Link figures of the fitted curves' machines (configs/clusters; docs/calibration.md).
LINKS = {
    "H100 NVLS, 8 GPUs": dict(bw=450e9, lat=2e-6, eff=0.82, nvls=0.61),
    "H200 NVLS, 8 GPUs": dict(bw=450e9, lat=2e-6, eff=0.82, nvls=0.61),
    "GB200 Ring, 4 GPUs": dict(bw=900e9, lat=2e-6, eff=0.82, nvls=0.61),
}
NET = dict(bw=50e9, lat=5e-6, eff=0.94, nics=8)  # DGX H100: 8 x NDR


# ---------------------------------------------------------------------------------------------
# The model (mirrors src/workload/nccl_model.cc).
# ---------------------------------------------------------------------------------------------

def plan_time(phases_stages, latency, chunks):
    """phases_stages: list of (rings, steps, bytes, bw) with rings in 'flat', 'intra', 'inter'
    and bw the bytes/s of the route at the stage's efficiency, plus the route latency."""
    q = len(phases_stages)
    if q == 1 or chunks <= 1:
        phases = [[(i, 1.0)] for i in range(q)]
    else:
        m = float(chunks)
        body = [(i, (m - 1) / m if i in (0, q - 1) else 1.0) for i in range(q)]
        phases = [[(0, 1 / m)], body, [(q - 1, 1 / m)]]
    routes = rest = 0.0
    for ph in phases:
        busy, lat = {}, {}
        for i, share in ph:
            rings, _steps, b, bw, rl = phases_stages[i]
            busy[rings] = busy.get(rings, 0.0) + b * share / bw
            lat[rings] = max(lat.get(rings, 0.0), rl)
        latest = max(lat.values())
        routes += latest
        rest += max(busy[r] - (latest - lat[r]) for r in busy)
    return max(latency, routes) + rest


def depth(k):
    d = 0
    while (1 << d) < k:
        d += 1
    return d


def plans(p, n, k, S, link, net):
    """Every (algorithm, protocol, time) for an all-reduce of S over n GPUs in k islands of
    n / k (p: the nccl parameters)."""
    c = n // k
    out = []
    nv_bw = link["bw"] * link["eff"]
    net_bw = net["bw"] * net["eff"]
    for proto in ("simple", "ll128", "ll"):
        frac, step = FRACTION[proto], STEP[proto]
        lat_nv, lat_net = link["lat"] + step, net["lat"] + step
        base = p[proto]
        steps, inter = 2 * (n - 1), 2 * (k - 1) if k > 1 else 0
        L = base + (steps - inter) * lat_nv + inter * lat_net
        if k == 1 or c == 1:
            crosses = k > 1
            bw = (net_bw if crosses else nv_bw) * frac
            rl = net["lat"] if crosses else link["lat"]
            t = plan_time([("flat", steps, S / n * steps, bw, rl)], L, 1)
        else:
            chunks = min(64, max(1, math.ceil(S / p["chunk"])))
            intra = ("intra", c - 1, S / c * (c - 1), nv_bw * frac, link["lat"])
            across = ("inter", 2 * (k - 1), S / (c * k) * 2 * (k - 1), net_bw * frac, net["lat"])
            t = plan_time([intra, across, intra], L, chunks)
        out.append(("ring", proto, t))
        if k > 1:
            d = depth(k)
            L = base + 2 * ((c - 1) * lat_nv + d * lat_net)
            tree = ("inter" if c > 1 else "flat", 2 * d, 2.0 * (k - 1) / k * S / c,
                    net_bw * frac * p["tree"],
                    net["lat"])
            st = [tree] if c == 1 else [("intra", c - 1, S, nv_bw * frac, link["lat"]), tree,
                                        ("intra", c - 1, S, nv_bw * frac, link["lat"])]
            chunks = 1 if len(st) == 1 else min(64, max(1, math.ceil(S / p["chunk"])))
            out.append(("tree", proto, plan_time(st, L, chunks)))
    if k == 1:
        out.append(("nvls", "simple",
                    max(p["nvls_latency"] + link["lat"], link["lat"]) +
                    S / (link["bw"] * link["nvls"])))
    elif c > 1:
        d = depth(k)
        L = p["nvls_latency"] + 2 * link["lat"] + 2 * d * (net["lat"] + STEP["simple"])
        sw = ("intra", 1, S * (1 + 1.0 / c) / 2, link["bw"] * link["nvls"], link["lat"])
        tree = ("inter", 2 * d, 2.0 * (k - 1) / k * S / c, net_bw * p["tree"], net["lat"])
        chunks = min(64, max(1, math.ceil(S / p["chunk"])))
        out.append(("nvls_tree", "simple", plan_time([sw, tree, sw], L, chunks)))
    return out


def busbw(p, n, k, S, link, net, algo):
    cands = plans(p, n, k, S, link, net)
    if algo != "auto":
        cands = [x for x in cands if x[0] == algo] or cands
    best = min(cands, key=lambda x: x[2])  # first of equal times, as the C++ order
    for x in cands:
        if x[2] == best[2]:
            best = x
            break
    return 2.0 * (n - 1) / n * S / best[2] / 1e9, best[0], best[1]


# ---------------------------------------------------------------------------------------------
# Fits.
# ---------------------------------------------------------------------------------------------

# simple: NCCL's baseLat for ring Simple (tuning.cc), fixed: with LL128 at 0.92 of its bandwidth
# the curve alone cannot tell the two apart at large sizes.
DEFAULTS = {"ll": 0.0, "ll128": 0.0, "simple": 8.4e-6, "nvls_latency": 0.0, "tree": 0.9,
            "chunk": 4.0 * (1 << 20)}


def loss(p, curve):
    algo, n, values = CURVES[curve]
    link = LINKS[curve]
    err = 0.0
    for S, meas in zip(SIZES, values):
        pred = busbw(p, n, 1, S, link, NET, algo)[0]
        err += math.log(pred / meas) ** 2
    return err


def fit(curve, keys):
    p = dict(DEFAULTS)
    for k in keys:
        p[k] = 10e-6
    step = {k: 8e-6 for k in keys}
    best = loss(p, curve)
    for _ in range(200):
        improved = False
        for k in keys:
            for sgn in (1, -1):
                q = dict(p)
                q[k] = max(0.0, p[k] + sgn * step[k])
                v = loss(q, curve)
                if v < best - 1e-15:
                    p, best, improved = q, v, True
        if not improved:
            for k in keys:
                step[k] /= 2
            if max(step.values()) < 1e-9:
                break
    for k in keys:
        p[k] = round(p[k] * 1e7) / 1e7  # 0.1 us
    return p


def us(x):
    return f"{x * 1e6:.1f} us"


def block_for(name, ring_p, nvls_p):
    lines = [
        "# fit: collectives begin (written by scripts/fit_collectives.py; do not edit)",
        "nccl:                        # NCCL cost model (docs/collectives.md; fit: docs/calibration.md)",
        f"  ll_latency: {us(ring_p['ll'])}",
        f"  ll128_latency: {us(ring_p['ll128'])}",
        f"  simple_latency: {us(ring_p['simple'])}   # tuning.cc baseLat ring Simple",
        f"  simple_step_latency: {us(STEP['simple'])}   # tuning.cc hwLat NVLink ring Simple - LL",
        f"  nvls_latency: {us(nvls_p['nvls_latency'])}",
        "# fit: collectives end",
    ]
    return "\n".join(lines) + "\n"


def replace_between(text, begin, end, new):
    b = text.find(begin)
    if b < 0:
        return text.rstrip("\n") + "\n" + new
    e = text.find(end, b)
    e = text.find("\n", e) + 1
    return text[:b] + new + text[e:]


def tables(ring_p, nvls_fits):
    o = ["<!-- collectives-fit: begin (written by scripts/fit_collectives.py; do not edit) -->",
         "",
         "Fitted: `ll_latency`, `ll128_latency` on the GB200 ring curve "
         f"({us(ring_p['ll'])}, {us(ring_p['ll128'])}); `nvls_latency` "
         "on each NVLS curve (" +
         ", ".join(f"{c}: {us(p['nvls_latency'])}" for c, p in nvls_fits.items()) + "). "
         "Fixed: `simple_latency` 8.4 us (tuning.cc baseLat, ring Simple), "
         "`simple_step_latency` 2.8 us, protocol fractions LL 0.25, LL128 0.92, "
         "`tree_bandwidth` 0.9 (NVIDIA/nccl src/graph/tuning.cc); link efficiencies as in "
         "configs/clusters.",
         ""]
    for curve, (algo, n, values) in CURVES.items():
        p = nvls_fits[curve] if algo == "nvls" else ring_p
        o.append(f"**{curve}** (all-reduce busbw, GB/s; forced {algo}, as measured)")
        o.append("")
        o.append("| size | measured | model | residual | protocol |")
        o.append("|---|---|---|---|---|")
        for S, meas in zip(SIZES, values):
            pred, a, proto = busbw(p, n, 1, S, LINKS[curve], NET, algo)
            o.append(f"| {S} | {meas:.2f} | {pred:.2f} | {100 * (pred / meas - 1):+.0f} % | "
                     f"{proto} |")
        o.append("")
    o.append("**Held out** (dgx-h100 model, H100 NVLS fit; all-reduce busbw, GB/s)")
    o.append("")
    o.append("| point | measured | model | residual | algorithm |")
    o.append("|---|---|---|---|---|")
    h100 = dict(nvls_fits["H100 NVLS, 8 GPUs"])
    for label, nodes, S, meas, algo in HELD_OUT:
        n = 8 * nodes
        pred, a, proto = busbw(h100, n, nodes, S, LINKS["H100 NVLS, 8 GPUs"], NET, algo)
        o.append(f"| {label} | {meas:.1f} | {pred:.1f} | {100 * (pred / meas - 1):+.0f} % | "
                 f"{a} / {proto} |")
    o.append("")
    o.append("<!-- collectives-fit: end -->")
    return "\n".join(o) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    ring_p = fit("GB200 Ring, 4 GPUs", ["ll", "ll128"])
    nvls_fits = {}
    for curve, (algo, _n, _v) in CURVES.items():
        if algo == "nvls":
            q = dict(ring_p)
            q.update(fit(curve, ["nvls_latency"]))
            q.update({k: ring_p[k] for k in ("ll", "ll128", "simple")})
            nvls_fits[curve] = q
    writes = {}
    for name, src in CLUSTERS.items():
        path = os.path.join(ROOT, "configs", "clusters", name + ".yaml")
        text = open(path).read()
        new = replace_between(text, "# fit: collectives begin", "# fit: collectives end",
                              block_for(name, ring_p, nvls_fits[src["nvls"]]))
        writes[path] = (text, new)
    cal = os.path.join(ROOT, "docs", "calibration.md")
    text = open(cal).read()
    begin, end = "<!-- collectives-fit: begin", "<!-- collectives-fit: end -->"
    if begin in text:
        new = replace_between(text, begin, end, tables(ring_p, nvls_fits))
    else:
        new = text.rstrip("\n") + "\n\n## Collectives (scripts/fit_collectives.py)\n\n" + \
            tables(ring_p, nvls_fits)
    writes[cal] = (text, new)
    stale = [p for p, (old, new) in writes.items() if old != new]
    if args.check:
        if stale:
            print("out of date (rerun scripts/fit_collectives.py):", *stale, sep="\n  ")
            return 1
        print("collective fit: every written file is up to date")
        return 0
    for p, (old, new) in writes.items():
        if old != new:
            open(p, "w").write(new)
    print(tables(ring_p, nvls_fits))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Fits trident's compute model (src/workload/compute_model.h) per GPU and precision.

Python 3 standard library only. Rerun from the repository root:

    python3 scripts/fit_compute_model.py           # fit, write the files below
    python3 scripts/fit_compute_model.py --check   # fit, fail if any written file would change

It writes
  configs/gpus/*.yaml                the GPU files (peaks, memory, fitted `efficiency` blocks);
  docs/calibration.md                the residual tables between the `fit:` markers;
  tests/data/kernel_reference.csv    every reference point with the model's prediction, which
                                     tests/test_compute_model.cc recomputes with the C++ model.

The model (mirrors src/workload/compute_model.cc exactly):
  GEMM   eff = gemm * waves(ceil(m/128) ceil(n/128) batch) * F / (F + gemm_half)
         t   = max(F / (peak * eff), bytes / (hbm * memory)) + kernel_overhead
  attention (one kernel per pass; F = 4 b s^2 d heads, halved when causal; backward 2.5 F)
         eff = E * [d/(d+Dh)] / [128/(128+Dh)] * s/(s+S) * (causal ? s/(s+C) : 1)
               * waves(b * heads * ceil(s/128))
         t   = F / (peak * eff) + kernel_overhead
Each fit minimises the sum of squared log(predicted / measured) over the points of its tables
with a bounded Nelder-Mead search. The measurements are the published ones listed in DATA
below, each with its source. Nothing end-to-end (no training run) is used.
"""
import argparse
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TILE = 128.0

# ---------------------------------------------------------------------------------------------
# Published measurements. TF = TFLOP/s as the source reports it.
# ---------------------------------------------------------------------------------------------

SEQS = [512, 1024, 2048, 4096, 8192, 16384]
# FA3 FP8 runs use these lengths from 4k up (divisible by 132 SMs): FA3 paper App. C.1.
SEQS_FP8 = [512, 1024, 2048, 4224, 8448, 16896]


def fa3_setup(hd, seq, nominal=None):
    """FA3 paper sec. 4.1 (arXiv 2407.08608): hidden 2048, batch = 16k tokens / seqlen."""
    nominal = nominal or seq
    return dict(batch=max(1, 16384 // nominal), heads=2048 // hd, s=seq, d=hd)


def attn_rows(table, gpu, prec, backend, backward, hd, causal, values, seqs=SEQS):
    out = []
    for s, nominal, v in zip(seqs, SEQS, values):
        if v is None:
            continue
        # FA3 paper sec. 4.1: clock fixed at 1830 MHz, the clock of the 989 TFLOPS peak.
        p = dict(table=table, gpu=gpu, prec=prec, op="attention", backend=backend,
                 backward=backward, causal=causal, tf=v, clock="quoted")
        p.update(fa3_setup(hd, s, nominal))
        out.append(p)
    return out


def gemm_rows(table, gpu, prec, rows, clock="boost"):
    """clock: what the SMs ran at: "quoted" (the peak's clock), "boost", "sustained" (dense work
    at the power limit, as in the GPU's clocks) or a measured clock in MHz."""
    return [dict(table=table, gpu=gpu, prec=prec, op="gemm", m=m, n=n, k=k, batch=1, tf=v,
                 clock=clock) for m, n, k, v in rows if v is not None]


DATA = []
# -- H100 SXM5 BF16 attention forward: FA3 paper Fig. 5, bar labels of
#    Dao-AILab/flash-attention assets/flash3_fp16_fwd.png. cuDNN 9.1.1 = "fused", FA3 = "flash".
T_FWD = "H100 BF16 attention forward (FA3 paper Fig. 5)"
for hd, causal, cudnn, fa3 in [
        (64, False, [335, 373, 395, 408, 412, 413], [333, 392, 460, 476, 496, 497]),
        (64, True, [225, 288, 334, 363, 379, 388], [197, 265, 371, 420, 460, 473]),
        (128, False, [497, 574, 617, 609, 600, 595], [467, 565, 625, 638, 646, 648]),
        (128, True, [315, 410, 484, 518, 529, 539], [292, 423, 521, 579, 602, 616]),
        (256, False, [470, 546, 580, 581, 580, 581], [482, 639, 707, 736, 746, 756]),
        (256, True, [308, 391, 450, 483, 497, 509], [286, 427, 537, 612, 628, 642])]:
    DATA += attn_rows(T_FWD + ", cuDNN", "h100", "bf16", "fused", False, hd, causal, cudnn)
    DATA += attn_rows(T_FWD + ", FA3", "h100", "bf16", "flash", False, hd, causal, fa3)
# FA2 rows of the same figure: the shape of the FlashAttention-2 kernel (used for the A100).
T_FA2 = "H100 BF16 FlashAttention-2 forward and backward (FA3 paper Figs. 5-6)"
for hd, causal, fa2 in [(64, False, [282, 306, 318, 321, 322, 324]),
                        (64, True, [180, 229, 262, 284, 295, 299]),
                        (128, False, [309, 350, 362, 368, 370, 370]),
                        (128, True, [191, 260, 298, 319, 333, 335])]:
    DATA += attn_rows(T_FA2, "h100-fa2", "bf16", "flash", False, hd, causal, fa2)
# -- H100 backward: FA3 paper Fig. 6 (third-party transcription; no mask caption: taken as
#    non-causal, as the paper's backward benchmarks are).
T_BWD = "H100 BF16 attention backward (FA3 paper Fig. 6)"
for hd, fa2, cudnn, fa3 in [
        (64, [198, 238, 264, 279, 287, 291], [266, 348, 395, 417, 432, 433],
         [272, 363, 422, 453, 472, 474]),
        (128, [214, 260, 291, 310, 318, 322], [305, 408, 465, 499, 518, 516],
         [316, 424, 501, 542, 559, 561])]:
    DATA += attn_rows(T_BWD + ", cuDNN", "h100", "bf16", "fused", True, hd, False, cudnn)
    DATA += attn_rows(T_BWD + ", FA3", "h100", "bf16", "flash", True, hd, False, fa3)
    DATA += attn_rows(T_FA2, "h100-fa2", "bf16", "flash", True, hd, False, fa2)
# -- H100 FP8 attention forward: FA3 paper Figs. 7/9 (third-party transcription).
T_FP8 = "H100 FP8 attention forward (FA3 paper Fig. 7)"
for hd, causal, cudnn, fa3 in [
        (64, False, [344, 398, 447, 413, 431, 438], [240, 396, 462, 568, 596, 613]),
        (64, True, [194, 258, None, None, None, None], [164, 244, None, None, None, None]),
        (128, False, [617, 751, 886, 864, 971, 1005], [348, 596, 733, 918, 974, 1008]),
        (128, True, [253, 384, 528, 719, 883, 922], [241, 367, 553, 716, 815, 881]),
        (256, False, [686, 878, 1001, 1087, 1122, 1139], [510, 744, 931, 966, 1151, 1171]),
        (256, True, [304, 449, 768, 1015, 1056, 1099], [329, 521, 703, 856, 960, 1024])]:
    DATA += attn_rows(T_FP8 + ", cuDNN", "h100", "fp8", "fused", False, hd, causal, cudnn, SEQS_FP8)
    DATA += attn_rows(T_FP8 + ", FA3", "h100", "fp8", "flash", False, hd, causal, fa3, SEQS_FP8)

# -- cuBLASLt FP8 / FP4 GEMMs (Azure/AI-benchmarking-guide, superbenchmark cublaslt_gemm:
#    ND_H100_v5, ND_H200_v5 and ND_GB200_v6 results).
AZURE = [  # m, n, k, H100 FP8, H200 FP8, GB200 FP8, GB200 FP4
    (1024, 1024, 1024, 274.1, 290.8, 489.2, 287.2),
    (2048, 2048, 2048, 1011.3, 1013.4, 2243.6, 1677.7),
    (4096, 4096, 4096, 1216.9, 1249.1, 2834.6, 5177.3),
    (8192, 8192, 8192, 1290.1, 1300.6, 2876.6, 7535.6),
    (16384, 16384, 16384, 1377.3, 1366.3, 2906.9, 7627.6),
    (32768, 32768, 32768, 1382.2, 1349.5, 2825.6, 7487.2),
    (1024, 2145, 1024, 410.7, 407.9, 1022.2, 549.0),
    (6144, 12288, 12288, 1351.4, 1318.0, 2895.6, None),
    (802816, 192, 768, 663.8, 717.5, 1459.5, 2216.7)]
for col, gpu, prec in [(3, "h100", "fp8"), (4, "h200", "fp8"), (5, "gb200", "fp8"),
                       (6, "gb200", "fp4")]:
    # 10,000 warm-up iterations: the fat shapes run at the power-limited clock.
    DATA += gemm_rows("%s %s GEMM (cuBLASLt, Azure AI benchmarking guide)" %
                      (gpu.upper(), prec.upper()), gpu, prec,
                      [(r[0], r[1], r[2], r[col]) for r in AZURE], "sustained")
# -- B200 BF16 GEMMs: Dao-AILab/quack commit 542cf519 message (CuTeDSL GEMM, round-to-nearest;
#    20 warm-up + 200 iterations of one fat kernel: taken at the power-limited clock). A check:
#    Transformer Engine runs cuBLAS.
DATA += [dict(d, check=True) for d in gemm_rows(
    "check: B200 BF16 GEMM (QuACK CuTeDSL, commit 542cf519)", "b200", "bf16", [
    (1024, 1024, 1024, 48.6), (2048, 2048, 2048, 427.7), (4096, 4096, 4096, 1047.0),
    (8192, 8192, 8192, 1232.7), (16384, 16384, 16384, 1224.7), (16384, 4096, 4096, 1224.3),
    (16384, 4096, 8192, 1237.0), (16384, 16384, 4096, 1238.0), (4096, 4096, 16384, 1124.0),
    (8192, 8192, 4096, 1275.6), (16384, 8192, 1024, 1188.2)], "sustained")]
# -- B200 FlashAttention-4 (BF16), Dao-AILab/flash-attention commit messages.
T_FA4 = "B200 BF16 FlashAttention-4 (flash-attention commits)"
for s, v in [(4096, 1530), (8192, 1572), (16384, 1594), (32768, 1521)]:  # 34625094, after fix
    DATA.append(dict(table=T_FA4, gpu="b200", prec="bf16", op="attention", backend="flash",
                     backward=False, causal=False, tf=v, batch=max(1, 32768 // s), heads=16,
                     s=s, d=128, clock="boost"))
E122 = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 98304, 131072]  # e122e67c, hd256, 8 heads
for causal, vals in [(False, [728, 1265, 1488, 1608, 1680, 1726, 1569, 1557, 1560]),
                     (True, [343, 709, 1190, 1384, 1505, 1586, 1628, 1434, 1444])]:
    for s, v in zip(E122, vals):
        DATA.append(dict(table=T_FA4, gpu="b200", prec="bf16", op="attention", backend="flash",
                         backward=False, causal=causal, tf=v, batch=max(1, 32768 // s),
                         heads=8, s=s, d=256, clock=1965))
for s, v in [(16384, 835), (32768, 849)]:  # 9848f9a0: hd64 backward, 64k tokens, 32 heads
    DATA.append(dict(table=T_FA4, gpu="b200", prec="bf16", op="attention", backend="flash",
                     backward=True, causal=False, tf=v, batch=max(1, 65536 // s), heads=32,
                     s=s, d=64, clock="boost"))
# -- Held-out checks (reported, not fitted): DeepGEMM FP8 1x128/128x128 block scaling on H800
#    (H100 compute), deepseek-ai/DeepGEMM README @ 55ab91f7: the blockwise recipe's GEMMs.
DATA += [dict(d, check=True) for d in gemm_rows(
    "check: H800 FP8 blockwise GEMM (DeepGEMM README), H100 FP8 curve", "h100", "fp8", [
        (4096, 2112, 7168, 1009), (4096, 24576, 1536, 1125), (4096, 32768, 512, 751),
        (4096, 7168, 16384, 1426), (4096, 4096, 7168, 1265), (4096, 7168, 2048, 1168)],
    "sustained")]
# TileLang FP8 on H800, M = N = 8192, K sweep (xwhzz/tilelang benchmark/matmul_fp8, v1).
DATA += [dict(d, check=True) for d in gemm_rows(
    "check: H800 FP8 GEMM K sweep (TileLang), H100 FP8 curve", "h100", "fp8",
    [(8192, 8192, k, v) for k, v in zip([256, 512, 1024, 2048, 4096, 8192, 16384],
                                        [569, 858, 1129, 1343, 1467, 1507, 1541])],
    "sustained")]
# FlashAttention-2 at batch 2, seq 8192, hd128 (Azure guide; mask not stated: non-causal).
for gpu, v in [("h100-fa2", 327.9)]:
    DATA.append(dict(table="check: H100 FA2 b=2 s=8192 hd128 (Azure guide)", gpu=gpu,
                     prec="bf16", op="attention", backend="flash", backward=False, causal=False,
                     tf=v, batch=2, heads=16, s=8192, d=128, check=True, clock="boost"))

# -- cuBLAS through torch.matmul, stas00/ml-engineering commit 082816f9
#    compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison table" (torch
#    2.13.0+cu130). MSMF: the best shape once the GPU is power-saturated, at the clock given
#    (fitted); MAMF: a short burst of a low-power shape at the boost clock (checks; such shapes
#    do fewer FLOP per clock, which is why they draw little power). H100 rows: the same table's
#    earlier MAMF (torch 2.7.0); the H200's MSMF stands for the H100 (same GH100 at 700 W).
MSMF = [  # table, gpu, prec, m, n, k, TFLOP/s, MHz
    ("H200 BF16 GEMM, power-saturated (MSMF, stas00/ml-engineering 082816f9)", "h200", "bf16",
     8192, 8448, 20480, 708.5, 1465),
    ("H200 BF16 GEMM, power-saturated (MSMF, stas00/ml-engineering 082816f9), as H100", "h100",
     "bf16", 8192, 8448, 20480, 708.5, 1465),
    ("H200 FP8 GEMM, power-saturated (MSMF, stas00/ml-engineering 082816f9)", "h200", "fp8",
     8448, 8192, 16384, 1288.7, 1374),
    ("B200 BF16 GEMM, power-saturated (MSMF, stas00/ml-engineering 082816f9)", "b200", "bf16",
     9472, 8192, 20480, 1456.3, 1339),
    ("B200 FP8 GEMM, power-saturated (MSMF, stas00/ml-engineering 082816f9)", "b200", "fp8",
     9472, 8192, 16384, 2795.7, 1331),
]
for table, gpu, prec, m, n, k, v, mhz in MSMF:
    DATA += gemm_rows(table, gpu, prec, [(m, n, k, v)], mhz)
T_MAMF = "check: boost-clock bursts (MAMF, stas00/ml-engineering 082816f9)"
for gpu, prec, m, n, k, v in [
        ("h100", "bf16", 2048, 2048, 13312, 794.5), ("h100", "fp8", 1024, 9216, 14336, 1402.6),
        ("h200", "bf16", 19712, 1536, 20480, 841.9), ("h200", "fp8", 8448, 8192, 12288, 1491.9),
        ("b200", "bf16", 1536, 9472, 14336, 1770.9), ("b200", "fp8", 9472, 5632, 8192, 3435.2),
        ("gb200", "bf16", 4096, 9728, 2048, 1822.0), ("gb200", "fp8", 19456, 5120, 1536, 3615.6)]:
    DATA += [dict(d, check=True) for d in gemm_rows(T_MAMF, gpu, prec, [(m, n, k, v)], "boost")]
# -- cuBLAS(Lt) on a B200, M = N = 8192, K sweep: tmoreau89/triton
#    python/triton_cublas_bench/RESULTS.md (CUDA/cuBLAS 13.0; 10k warm-up + 10k timed
#    iterations: the power-limited clock). FP16 and FP8 (per-tensor scales) K sweeps, MXFP8
#    (block-scaled, the Blackwell FP8 recipe) at K = 8192 and 16384.
#    The K <= 1024 sweeps are checks: with an 8192 x 8192 output per call they are bound by the
#    output tiles' prologue and epilogue, which the model's size ramp does not describe.
KS = [128, 256, 384, 512, 640, 768, 896, 1024]
DATA += [dict(d, check=True) for d in gemm_rows(
    "check: B200 BF16 GEMM, M=N=8192 K<=1024 (cuBLAS 13.0, tmoreau89/triton)", "b200", "bf16",
    [(8192, 8192, k, v) for k, v in zip(KS, [493, 845, 1073, 1222, 1313, 1342, 1373, 1389])],
    "sustained")]
DATA += [dict(d, check=True) for d in gemm_rows(
    "check: B200 FP8 GEMM, M=N=8192 K<=1024 (cuBLAS 13.0, tmoreau89/triton)", "b200", "fp8",
    [(8192, 8192, k, v) for k, v in zip(KS, [647, 1102, 1521, 1950, 2300, 2608, 2730, 2770])],
    "sustained")]
DATA += gemm_rows("B200 MXFP8 GEMM, 8192^2 x 8192 / 16384 (cuBLAS 13.0, tmoreau89/triton)", "b200",
                  "fp8", [(8192, 8192, 8192, 2886), (8192, 8192, 16384, 2810)], "sustained")


def sdpa_rows(table, gpu, prec, backend, rows, batch, heads, clock="boost", check=False):
    """rows: (seq, causal, backward, TFLOP/s); head dim 128 (GQA: the query heads count)."""
    return [dict(table=table, gpu=gpu, prec=prec, op="attention", backend=backend,
                 backward=bwd, causal=causal, tf=v, batch=batch, heads=heads, s=s, d=128,
                 clock=clock, check=check) for s, causal, bwd, v in rows]


# -- NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training: Llama 3.1 attention (64 query
#    heads, 8 KV heads, head dim 128, batch 2), 10 iterations (boost clock; the GB200 rows
#    record 2568 TFLOPS at the sampled SM clock, 152 SMs x 8192 x 2062 MHz).
#    GB200: results/llama3.1/gb200/llama3.1_20260813_111214.csv (cuDNN 9.27, FA4).
#    GB300: results/llama3.1/gb300/llama3.1_20260724_040919.csv (cuDNN 9.26, FA4).
#    Columns per seq: (causal fwd, causal bwd, full fwd, full bwd); non-deterministic backward.
SEQ5 = [2048, 4096, 8192, 16384, 32768]
CUDNN_FE = {  # (gpu, prec, backend): [per seq (causal fwd, causal bwd, full fwd, full bwd)]
    ("gb200", "bf16", "fused"): [(1061, 880, 1407, 1114), (1334, 1131, 1559, 1325),
                                 (1552, 1297, 1701, 1434), (1608, 1271, 1690, 1305),
                                 (1556, 1241, 1567, 1304)],
    ("gb200", "fp8", "fused"): [(1430, 824, 1855, 1215), (1801, 1166, 2045, 1577),
                                (2037, 1451, 2191, 1780), (2154, 1620, 2221, 1805),
                                (2199, 1658, 2137, 1790)],
    ("gb200", "bf16", "flash"): [(1086, 844, 1112, 1161), (1388, 1157, 1194, 1399),
                                 (1594, 1403, 1255, 1553), (1734, 1405, 1217, 1423),
                                 (1580, 1334, 1227, 1397)],
    ("gb300", "bf16", "fused"): [(1467, 971, 1895, 1219), (1813, 1254, 2050, 1440),
                                 (1991, 1448, 2161, 1549), (2065, 1516, 2127, 1538),
                                 (2105, 1416, 1944, 1446)],
    ("gb300", "fp8", "fused"): [(1949, 943, 2731, 1390), (2526, 1395, 2981, 1839),
                                (2893, 1777, 3172, 2119), (3074, 2037, 3186, 2208),
                                (3134, 2121, 3077, 2209)],
}
for (gpu, prec, backend), vals in CUDNN_FE.items():
    name = {"fused": "cuDNN", "flash": "FlashAttention-4"}[backend]
    table = "%s %s attention, Llama 3.1 GQA (%s, cudnn-frontend sdpa benchmark)" % (
        gpu.upper(), prec.upper(), name)
    rows = []
    for s, (cf, cb, ff, fb) in zip(SEQ5, vals):
        rows += [(s, True, False, cf), (s, True, True, cb), (s, False, False, ff),
                 (s, False, True, fb)]
    DATA += sdpa_rows(table, gpu, prec, backend, rows, 2, 64)
# B200, cuDNN 9.13 through PyTorch SDPA (artifacts/sdpa_bf16_benchmark_results_NVIDIA_B200.csv,
# 128 query heads, 8 KV heads, batch 1, causal): a check of the GB200 fit carried to the B200.
DATA += sdpa_rows("check: B200 BF16 cuDNN 9.13 attention via PyTorch (cudnn-frontend)", "b200",
                  "bf16", "fused", [(s, True, b, v) for s, fw, bw in [
                      (2048, 478.9, 371.5), (4096, 855.7, 701.3), (8192, 1171.3, 942.5),
                      (16384, 1332.4, 1074.8), (32768, 1419.0, 1108.7)]
                      for b, v in ((False, fw), (True, bw))], 1, 128, check=True)

# Achieved HBM bandwidth of streaming kernels (fraction of the datasheet bandwidth).
STREAM = {
    # BabelStream Copy/Mul/Add/Triad (Azure guide ND_H100_v5): 2.90/2.90/2.97/2.97 of 3.35 TB/s
    "h100": ([2.90, 2.90, 2.97, 2.97], 3.35, "BabelStream Copy/Mul/Add/Triad, Azure guide"),
    "h200": ([4.01, 4.00, 4.15, 4.15], 4.8, "BabelStream Copy/Mul/Add/Triad, Azure guide"),
    # Azure GB200 blog: 7.35 TB/s, "92% efficiency of its theoretical peak" (of 8 TB/s)
    "gb200": ([7.35], 8.0, "HBM bandwidth test, Azure GB200 blog"),
}

# ---------------------------------------------------------------------------------------------
# The model (as src/workload/compute_model.cc).
# ---------------------------------------------------------------------------------------------


def waves(tiles, sm):
    if sm <= 0 or tiles <= 0:
        return 1.0
    w = math.ceil(tiles / sm)
    return tiles / (w * sm)


def gemm_tflops(g, prec, m, n, k, batch=1, clock=1.0):
    """g: GPU dict (peaks, hbm, memory, overhead, sm, eff[prec]); clock: the SM clock the
    kernel runs at / the clock the peaks are quoted at (tensor-core work scales with it)."""
    e = g["eff"][prec]
    flops = 2.0 * m * n * k * batch
    eff = e["gemm"] * waves(math.ceil(m / TILE) * math.ceil(n / TILE) * batch, g["sm"]) * \
        flops / (flops + e["gemm_half"])
    elem = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5}[prec]
    out = 2.0 if prec in ("fp8", "fp4") else elem
    nbytes = batch * (elem * (m * k + k * n) + out * m * n)
    t = max(flops / (g["peak"][prec] * clock * eff), nbytes / (g["hbm"] * g["memory"])) + \
        g["overhead"]
    return flops / t / 1e12


def attn_eff(a, batch, heads, s, d, causal, backward, sm):
    hdf = (d / (d + a["half_head_dim"])) / (128.0 / (128.0 + a["half_head_dim"]))
    ramp = s / (s + (a["backward_half_seq"] if backward else a["half_seq"]))
    c = s / (s + a["causal_seq"]) if causal else 1.0
    fill = waves(batch * heads * math.ceil(s / TILE), sm)
    return (a["backward"] if backward else a["forward"]) * hdf * ramp * c * fill


def attn_tflops(g, prec, backend, p, clock=1.0):
    a = g["eff"][prec][backend]
    flops = 4.0 * p["batch"] * p["s"] ** 2 * p["d"] * p["heads"] * (0.5 if p["causal"] else 1)
    flops *= 2.5 if p["backward"] else 1.0
    eff = attn_eff(a, p["batch"], p["heads"], p["s"], p["d"], p["causal"], p["backward"], g["sm"])
    t = flops / (g["peak"][prec] * clock * eff) + g["overhead"]
    return flops / t / 1e12


def clock_ratio(g, p):
    """The SM clock point p ran at / the clock g's peaks are quoted at (1 without clocks)."""
    c = g.get("clocks")
    if not c:
        return 1.0
    f = p.get("clock", "quoted")
    mhz = c[f] if isinstance(f, str) else float(f)
    return mhz / c["quoted"]


def predict(g, p):
    r = clock_ratio(g, p)
    if p["op"] == "gemm":
        return gemm_tflops(g, p["prec"], p["m"], p["n"], p["k"], p.get("batch", 1), r)
    return attn_tflops(g, p["prec"], p["backend"], p, r)


# ---------------------------------------------------------------------------------------------
# Bounded Nelder-Mead on sum of squared log residuals.
# ---------------------------------------------------------------------------------------------


def nelder_mead(f, x0, lo, hi, iters=3000):
    n = len(x0)
    clip = lambda x: [min(max(v, l), h) for v, l, h in zip(x, lo, hi)]
    pts = [clip(x0)]
    for i in range(n):
        x = list(x0)
        x[i] = x[i] * 1.25 if x[i] != 0 else (hi[i] - lo[i]) * 0.1
        pts.append(clip(x))
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < 1e-12 * (1 + abs(vals[0])):
            break
        cen = [sum(p[i] for p in pts[:-1]) / n for i in range(n)]
        refl = clip([c + (c - w) for c, w in zip(cen, pts[-1])])
        fr = f(refl)
        if fr < vals[0]:
            exp = clip([c + 2 * (c - w) for c, w in zip(cen, pts[-1])])
            fe = f(exp)
            pts[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            con = clip([c + 0.5 * (w - c) for c, w in zip(cen, pts[-1])])
            fc = f(con)
            if fc < vals[-1]:
                pts[-1], vals[-1] = con, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = clip([b + 0.5 * (p - b) for b, p in zip(pts[0], pts[i])])
                    vals[i] = f(pts[i])
    best = min(range(n + 1), key=lambda i: vals[i])
    return pts[best]


def loss(g, points):
    total = 0.0
    for p in points:
        r = math.log(predict(g, p) / p["tf"])
        total += r * r
    return total


def fit(g, points, setters, x0, lo, hi):
    def f(x):
        for s, v in zip(setters, x):
            s(v)
        return loss(g, points)
    x = nelder_mead(f, x0, lo, hi)
    # restart once from the optimum (Nelder-Mead stalls on flat directions)
    x = nelder_mead(f, x, lo, hi)
    f(x)
    return x


# ---------------------------------------------------------------------------------------------
# GPUs. Peaks: dense tensor-core peaks from the NVIDIA datasheets (A100, H100, H200; B200 and
# GB200 from the DGX B200 / GB200 NVL72 product pages; B300 and GB300 from the HGX B300 /
# GB300 NVL72 product pages), FLOP/s.
# ---------------------------------------------------------------------------------------------

T = 1e12


def attention_defaults():
    return dict(forward=0.5, backward=0.4, half_seq=256.0, backward_half_seq=512.0,
                causal_seq=256.0, half_head_dim=64.0)


def precision_defaults():
    return dict(gemm=0.7, gemm_half=2e9, fused=attention_defaults(), flash=attention_defaults())


# Kernels inside a training step run slower than in an isolated benchmark (sustained clocks
# under the power cap, HBM/L2 shared with communication kernels, launch gaps). Only the A100 has
# a whole-layer measurement (Korthikanti et al. 2022, Table 4): its fitted large-GEMM
# efficiency there is 0.67 of peak, while isolated GEMMs reach 80-90 % (FlashAttention-2 paper,
# Dao 2023, section 1: "GEMM can reach up to 80-90% of the theoretical maximum"). The ratio at
# the midpoint, 0.67 / 0.85, is applied to the GPUs fitted on isolated kernels.
A100_LAYER_GEMM = 0.67
ISOLATED_GEMM = 0.85
IN_TRAINING = round(A100_LAYER_GEMM / ISOLATED_GEMM, 3)
# Where published end-to-end runs exist for a GPU and precision, scripts/fit_end_to_end.py fits
# in_training on them and records it here ({gpu key: {precision: value}}); that replaces the
# assumed ratio above (docs/calibration.md, "End-to-end fit").
END_TO_END_FIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                              "end_to_end_fit.json")


# GPUs without published end-to-end runs of their own that take another GPU's fitted
# in_training: with the sustained clock explicit (gpu.clocks), in_training holds what is left
# (communication kernels beside the GEMMs, launch gaps), assumed common to Hopper and Blackwell
# under the same software stack.
IN_TRAINING_FROM = {"b200": "h100", "gb200": "h100", "b300": "h100", "gb300": "h100"}


def in_training_of(gk):
    """Returns ({precision: in_training}, comment) from the end-to-end fit."""
    fits = end_to_end_in_training()
    if gk in fits:
        return fits[gk], "fitted on published runs (scripts/fit_end_to_end.py)"
    src = IN_TRAINING_FROM.get(gk)
    if src in fits:
        return fits[src], "the %s's, fitted on published runs (clocks apart)" % src.upper()
    return {}, ""


def end_to_end_in_training():
    if not os.path.exists(END_TO_END_FIT):
        return {}
    with open(END_TO_END_FIT) as f:
        return json.load(f)["in_training"]


def new_gpu(peak, hbm, sm, memory=0.9, overhead=2e-6):
    g = dict(peak=peak, hbm=hbm, sm=sm, memory=memory, overhead=overhead, eff={},
             in_training=IN_TRAINING)
    for p in peak:
        g["eff"][p] = precision_defaults()
    return g


GPUS = {
    "a100": new_gpu({"bf16": 312 * T, "fp16": 312 * T}, 2039e9, 108),
    "h100": new_gpu({"bf16": 989 * T, "fp16": 989 * T, "fp8": 1979 * T}, 3350e9, 132),
    "h100-fa2": new_gpu({"bf16": 989 * T, "fp16": 989 * T}, 3350e9, 132),
    "h200": new_gpu({"bf16": 989 * T, "fp16": 989 * T, "fp8": 1979 * T}, 4800e9, 132),
    "b200": new_gpu({"bf16": 2250 * T, "fp16": 2250 * T, "fp8": 4500 * T, "fp4": 9000 * T},
                    8000e9, 148),
    "gb200": new_gpu({"bf16": 2500 * T, "fp16": 2500 * T, "fp8": 5000 * T, "fp4": 10000 * T},
                     8000e9, 152),
    # Blackwell Ultra (NVIDIA technical blog "Inside NVIDIA Blackwell Ultra": 160 SMs, 15 PFLOPS
    # dense NVFP4, 288 GB HBM3e at 8 TB/s). GB300: the GB300 NVL72 product page's rack figures /
    # 72 (sparse BF16 and FP8 halved; FP4 published dense). B300: the HGX B300 page / 8.
    "b300": new_gpu({"bf16": 2250 * T, "fp16": 2250 * T, "fp8": 4500 * T, "fp4": 13500 * T},
                    8000e9, 160),
    "gb300": new_gpu({"bf16": 2500 * T, "fp16": 2500 * T, "fp8": 5000 * T, "fp4": 15000 * T},
                     8000e9, 160),
}

# SM clocks (MHz). quoted: the clock the dense BF16 peak is quoted at, SMs x 8192 (Blackwell) or
# 4096 (Hopper) FLOP per clock x quoted = the peak (NVIDIA gives 1830 MHz for H100/H200; the
# Blackwell ones follow from their peaks and SM counts). boost: the device's maximum SM clock.
# sustained: where dense GEMMs settle at the board power limit. power: that limit (W).
# Measured sustained clocks: stas00/ml-engineering 082816f9, MAMF/MSMF table: H200 BF16 at
# 8192x8448x20480, ~693 W @ 1465 MHz; B200 BF16 at 9472x8192x20480, ~994 W @ 1339 MHz. Both do
# 0.89-0.90 of their FLOP per clock there, which is what lets per-clock efficiencies transfer.
B200_SUSTAINED, B200_WATTS = 1339.0, 994.0


def scaled_sustained(watts, sms):
    """Assumed where nothing was measured: dynamic power ~ clock x voltage^2 with the voltage
    rising about linearly with the clock near the top of the DVFS range, so per SM the
    sustained clock grows as the cube root of the power per SM (from the B200's 994 W, 148 SMs
    at 1339 MHz)."""
    return B200_SUSTAINED * ((watts / sms) / (B200_WATTS / 148)) ** (1.0 / 3.0)


def quoted_clock(peak_bf16, sms, per_clock):
    return peak_bf16 / (sms * per_clock) / 1e6


CLOCKS = {
    "h100": dict(quoted=1830.0, boost=1980.0, sustained=1465.0, power=700),
    "h200": dict(quoted=1830.0, boost=1980.0, sustained=1465.0, power=700),
    "b200": dict(quoted=quoted_clock(2250 * T, 148, 8192), boost=1965.0,
                 sustained=B200_SUSTAINED, power=1000),
    "gb200": dict(quoted=quoted_clock(2500 * T, 152, 8192), boost=2062.0,
                  sustained=scaled_sustained(1200, 152), power=1200),
    "b300": dict(quoted=quoted_clock(2250 * T, 160, 8192), boost=None,
                 sustained=scaled_sustained(1100, 160), power=1100),
    "gb300": dict(quoted=quoted_clock(2500 * T, 160, 8192), boost=2070.0,
                  sustained=scaled_sustained(1400, 160), power=1400),
}
for _gk, _c in CLOCKS.items():
    GPUS[_gk]["clocks"] = _c
GPUS["h100-fa2"]["clocks"] = CLOCKS["h100"]

ATTN_KEYS = ["forward", "backward", "half_seq", "backward_half_seq", "causal_seq", "half_head_dim"]
NOTES = {}  # gpu -> list of assumption lines (written into the GPU file and the doc)


def pts(gpu, prec, op=None, backend=None, backward=None, fitted=True):
    out = []
    for p in DATA:
        if p["gpu"] != gpu or p["prec"] != prec or bool(p.get("check")) == fitted:
            continue
        if op and p["op"] != op:
            continue
        if backend and p.get("backend") != backend:
            continue
        if backward is not None and p.get("backward") != backward:
            continue
        out.append(p)
    return out


def fit_attention(g, prec, backend, gpu_key=None):
    """Fits the forward shape (E, S, C, Dh), then the backward (E_b, S_b) with Dh, C shared."""
    gk = gpu_key or [k for k, v in GPUS.items() if v is g][0]
    a = g["eff"][prec][backend]
    fwd = pts(gk, prec, "attention", backend, False)
    bwd = pts(gk, prec, "attention", backend, True)
    setters = [lambda v: a.__setitem__("forward", v), lambda v: a.__setitem__("half_seq", v),
               lambda v: a.__setitem__("causal_seq", v),
               lambda v: a.__setitem__("half_head_dim", v)]
    has_causal = any(p["causal"] for p in fwd)
    if not has_causal:
        setters = setters[:2] + setters[3:]
    has_hd = len(set(p["d"] for p in fwd)) > 1
    if not has_hd:
        setters = setters[:-1]
    x0 = [0.6, 200, 300, 60][:len(setters)] if has_causal else [0.6, 200, 60][:len(setters)]
    lo = [0.05, 0, 0, 0][:len(setters)]
    hi = [1.0, 5000, 20000, 2000][:len(setters)]
    fit(g, fwd, setters, x0, lo, hi)
    if bwd:
        bs = [lambda v: a.__setitem__("backward", v)]
        if len(set(p["s"] for p in bwd)) > 2:
            bs.append(lambda v: a.__setitem__("backward_half_seq", v))
        fit(g, bwd, bs, [0.5, 500][:len(bs)], [0.05, 0][:len(bs)], [1.0, 20000][:len(bs)])


def fit_gemm(g, prec, gk, with_overhead):
    e = g["eff"][prec]
    setters = [lambda v: e.__setitem__("gemm", v), lambda v: e.__setitem__("gemm_half", v * 1e9)]
    x0, lo, hi = [0.7, 2.0], [0.05, 0.0], [1.0, 200.0]
    if with_overhead:
        # Kernel overhead bounded to 1-5 us: the smallest benchmark GEMMs (1024^3) floor at
        # tens of microseconds in some harnesses, which is not a per-kernel cost inside a
        # stream-pipelined training step.
        setters.append(lambda v: g.__setitem__("overhead", v * 1e-6))
        x0.append(2.0), lo.append(1.0), hi.append(5.0)
    fit(g, pts(gk, prec, "gemm"), setters, x0, lo, hi)


def copy_attention(dst, src, scale=1.0):
    for k in ATTN_KEYS:
        dst[k] = src[k]
    dst["forward"] *= scale
    dst["backward"] *= scale


def run_fits():
    G = GPUS
    # Memory-bound kernels: mean achieved fraction of the streaming kernels.
    for gk, (vals, spec, _) in STREAM.items():
        G[gk]["memory"] = sum(vals) / len(vals) / spec
    # A100: GEMM and memory parameters fitted on Korthikanti et al. 2022 Table 4 through the
    # whole layer (tests/test_calibration.cc; docs/calibration.md), kept as they were.
    a100 = G["a100"]
    a100.update(memory=0.90, overhead=2e-6, in_training=1.0)
    for p in ("bf16", "fp16"):
        a100["eff"][p].update(gemm=0.67, gemm_half=2e9)

    # H100: FP8 GEMMs on cuBLASLt (Azure, at the power-limited clock); BF16 GEMMs on the
    # power-saturated cuBLAS measurement (MSMF) of the H200, same GH100 at 700 W, with the FP8
    # ramp at the same time (half the FLOPs); attention fused = cuDNN, flash = FA3.
    h100 = G["h100"]
    fit_gemm(h100, "fp8", "h100", True)
    fit_bf16_on_msmf(h100, "h100")
    for prec in ("bf16", "fp8"):
        for backend in ("fused", "flash"):
            fit_attention(h100, prec, backend, "h100")
    # FP8 attention backward: no measurement; the BF16 backward/forward ratio of the backend.
    for backend in ("fused", "flash"):
        b16, b8 = h100["eff"]["bf16"][backend], h100["eff"]["fp8"][backend]
        b8["backward"] = b8["forward"] * b16["backward"] / b16["forward"]
        b8["backward_half_seq"] = b16["backward_half_seq"]
    sustained = ("Clocks: the peaks hold at %s; dense GEMMs at the %d W limit settle at "
                 "%.0f MHz%s. Every kernel measurement is converted to the clock it ran at "
                 "(locked, boost for short runs, the sustained clock for power-saturated runs), "
                 "so the efficiency block holds fractions of the peak at the quoted clock and "
                 "kernels inside a step run at sustained / quoted of them.")
    NOTES["h100"] = [
        "FP8 GEMM: fitted on cuBLASLt FP8 (Azure AI benchmarking guide, ND H100 v5; 10,000 "
        "warm-up iterations, taken at the sustained clock).",
        "BF16 GEMM: fitted on the power-saturated cuBLAS BF16 GEMM of the H200 (same GH100 "
        "at 700 W; stas00/ml-engineering 082816f9, MSMF 708.5 TFLOPS at 8192x8448x20480, "
        "1465 MHz), with the FP8 ramp at the same time (half the FLOPs). It replaces the "
        "earlier assumption of FP8 / 1.75.",
        "Attention: fused = cuDNN 9.1, flash = FlashAttention-3, forward BF16 and FP8 from the "
        "FA3 paper Figs. 5 and 7, backward BF16 Fig. 6 (taken as non-causal), at the locked "
        "1830 MHz of the paper. FP8 backward: not measured; the BF16 backward/forward ratio is "
        "assumed.",
        "Memory-bound kernels: BabelStream Copy/Mul/Add/Triad (Azure guide).",
        sustained % ("1830 MHz (NVIDIA's H100 SXM figure; 132 SMs x 4096 FLOP per clock)", 700,
                     1465, " (the H200's power-saturated BF16 GEMM, stas00/ml-engineering "
                     "082816f9: ~693 W at 1465 MHz; its FP8 GEMM settles at 1374 MHz)"),
    ]

    # A100 attention: FlashAttention-2 (what Transformer Engine picks on Ampere). The shape is
    # fitted on FA2 on H100 (FA3 paper Figs. 5-6); the level is the FA2 paper's A100 figure
    # (Dao 2023, arXiv 2307.08691: forward "up to 73%" of the A100 peak, we take 70 %).
    fa2 = G["h100-fa2"]
    fit_attention(fa2, "bf16", "flash", "h100-fa2")
    src = fa2["eff"]["bf16"]["flash"]
    for p in ("bf16", "fp16"):
        for backend in ("fused", "flash"):
            copy_attention(a100["eff"][p][backend], src, 0.70 / src["forward"])
    NOTES["a100"] = [
        "GEMM and memory: fitted on Korthikanti et al. 2022, Table 4 (one 22B layer) with the "
        "unfused attention backend; tests/test_calibration.cc holds it.",
        "Attention (flash, fused): no A100 kernel table in the reference. FlashAttention-2 "
        "curve shape fitted on its H100 measurements (FA3 paper Figs. 5-6), scaled so the "
        "forward reaches 70 % of the A100 peak at long sequences (FA2 paper: up to 73 %); "
        "cuDNN fused attention assumed equal (Transformer Engine prefers FlashAttention on "
        "Ampere).",
        "Clocks: none given; the fit on whole layers of a step already holds the A100's.",
    ]

    # H200: same GH100 compute (132 SMs, same clocks) with HBM3e.
    h200 = G["h200"]
    fit_gemm(h200, "fp8", "h200", True)
    fit_bf16_on_msmf(h200, "h200")
    for prec in ("bf16", "fp8"):
        for backend in ("fused", "flash"):
            copy_attention(h200["eff"][prec][backend], h100["eff"][prec][backend])
    NOTES["h200"] = [
        "FP8 GEMM: fitted on cuBLASLt FP8 (Azure guide, ND H200 v5) and the power-saturated "
        "FP8 GEMM (stas00/ml-engineering 082816f9, MSMF 1288.7 TFLOPS at 1374 MHz).",
        "BF16 GEMM: the power-saturated cuBLAS BF16 GEMM (MSMF, as for the H100).",
        "Attention: no H200 curves; the H100 fractions (same GH100 SMs and clocks; FA2 at b=2, "
        "s=8192 measures 329.3 vs 327.9 TFLOP/s on the H100, Azure guide).",
        "Memory-bound kernels: BabelStream (Azure guide, ND H200 v5).",
        sustained % ("1830 MHz", 700, 1465, " (stas00/ml-engineering 082816f9, MSMF)"),
    ]

    # GB200: FP8 and FP4 GEMMs fitted on cuBLASLt (Azure, ND GB200 v6, power-limited clock).
    gb = G["gb200"]
    fit_gemm(gb, "fp8", "gb200", True)
    fit_gemm(gb, "fp4", "gb200", False)
    # B200: BF16 and FP8 GEMMs on power-saturated cuBLAS runs (MSMF; the tmoreau89 K sweeps).
    # Their ramps: the GB200 cuBLASLt FP8 ramp, reached at the same kernel time (BF16: half
    # the FLOPs), as for the H100; the overhead is the GB200's.
    b200 = G["b200"]
    b200["overhead"] = gb["overhead"]
    b200["eff"]["fp8"]["gemm_half"] = gb["eff"]["fp8"]["gemm_half"] * 4500 / 5000
    e8 = b200["eff"]["fp8"]
    fit(b200, pts("b200", "fp8", "gemm"), [lambda v: e8.__setitem__("gemm", v)], [0.8], [0.05],
        [1.0])
    fit_bf16_on_msmf(b200, "b200")
    b200["eff"]["fp4"].update(gemm=gb["eff"]["fp4"]["gemm"], gemm_half=gb["eff"]["fp4"]["gemm_half"])
    # GB200 BF16: the B200's fractions of the peak at the quoted clock (same die), the ramp
    # scaled with the peak.
    for p in ("bf16", "fp16"):
        gb["eff"][p].update(gemm=b200["eff"]["bf16"]["gemm"],
                            gemm_half=b200["eff"]["bf16"]["gemm_half"] * 2500 / 2250)
    # Attention on the GB200: cuDNN (fused) BF16 and FP8, FlashAttention-4 (flash) BF16, from
    # the cudnn-frontend benchmark; forward and backward, causal and not.
    for prec, backend in (("bf16", "fused"), ("fp8", "fused"), ("bf16", "flash")):
        fit_attention(gb, prec, backend, "gb200")
    copy_attention(gb["eff"]["fp16"]["fused"], gb["eff"]["bf16"]["fused"])
    copy_attention(gb["eff"]["fp16"]["flash"], gb["eff"]["bf16"]["flash"])
    # B200 flash: FlashAttention-4 commits (forward; backward two hd64 points with the H100 FA3
    # backward ramp). B200 fused: the GB200's cuDNN fractions (same die; the PyTorch cuDNN 9.13
    # rows of the cudnn-frontend benchmark are a check).
    fit_attention(b200, "bf16", "flash", "b200")
    fl = b200["eff"]["bf16"]["flash"]
    fl["backward_half_seq"] = h100["eff"]["bf16"]["flash"]["backward_half_seq"]
    fit(b200, pts("b200", "bf16", "attention", "flash", True),
        [lambda v: fl.__setitem__("backward", v)], [0.4], [0.05], [1.0])
    # The backward points are head dim 64 only, and the one head-dim term is the forward's (no
    # gain from 128 to 256 there): as measured, every head dim would run at the hd64 fraction,
    # and an hd128 FP8 backward slower than the H100's FA3. The H100 FA3 backward's gain from
    # hd64 to hd128 (as its ramp) states the fraction at hd128, the shipped models' head dim.
    h = h100["eff"]["bf16"]["flash"]["half_head_dim"]
    fl["backward"] *= (128.0 / (128.0 + h)) / (64.0 / (64.0 + h))
    copy_attention(b200["eff"]["fp16"]["flash"], fl)
    for p in ("bf16", "fp16", "fp8"):
        copy_attention(b200["eff"][p]["fused"], gb["eff"][p]["fused"])
    # FP8 FlashAttention on Blackwell: FA4 MXFP8 1902 vs BF16 1540 TFLOP/s at one shape (commit
    # 0bf487c5): the BF16 curve x 1902/1540 in TFLOP/s. FP4 attention: the FP8 TFLOP/s.
    for g in (b200, gb):
        copy_attention(g["eff"]["fp8"]["flash"], g["eff"]["bf16"]["flash"],
                       1902.0 / 1540.0 * g["peak"]["bf16"] / g["peak"]["fp8"])
        for backend in ("fused", "flash"):
            copy_attention(g["eff"]["fp4"][backend], g["eff"]["fp8"][backend],
                           g["peak"]["fp8"] / g["peak"]["fp4"])
    b200["memory"] = gb["memory"]
    blackwell_clock = ("the quoted clock is the peak / (SMs x 8192 BF16 FLOP per clock), "
                       "cudnn-frontend's per-SM figure")
    NOTES["b200"] = [
        "BF16 GEMM: fitted on the power-saturated cuBLAS GEMM (MSMF) of stas00/ml-engineering "
        "082816f9 (1456.3 TFLOPS at 9472x8192x20480, ~994 W, 1339 MHz); an M=N=8192 K sweep "
        "(cuBLAS 13.0, 10k + 10k iterations; tmoreau89/triton "
        "python/triton_cublas_bench/RESULTS.md: a check, bound by its output tiles at K <= "
        "1024). Ramp: the GB200 cuBLASLt FP8 one at the same kernel time; kernel overhead: the "
        "GB200's. QuACK's CuTeDSL GEMM (commit 542cf519, ~1230 TFLOPS), the earlier source, is "
        "a check: Transformer Engine runs cuBLAS.",
        "FP8 GEMM: fitted on the power-saturated FP8 GEMM (MSMF 2795.7 TFLOPS at 1331 MHz) and "
        "the cuBLAS MXFP8 (block-scaled, the Blackwell recipe) 8192^2 x 8192 / 16384 GEMMs of "
        "tmoreau89/triton (2886 / 2810 TFLOPS, 10k + 10k iterations); its per-tensor FP8 K "
        "sweep is a check. FP4 GEMM: the GB200's cuBLASLt fractions.",
        "Attention flash = FlashAttention-4 (forward: commits 34625094, e122e67c at a locked "
        "1965 MHz; backward: two hd64 points of 9848f9a0 with the H100 FA3 backward ramp and "
        "its gain from hd64 to hd128). "
        "fused = cuDNN: the GB200's fitted fractions (same die; NVIDIA/cudnn-frontend "
        "sdpa_benchmark_training); the B200 cuDNN 9.13 rows through PyTorch are a check. FP8 "
        "FlashAttention: FA4 MXFP8 1902 vs BF16 1540 TFLOP/s at one shape (commit 0bf487c5), "
        "applied as a ratio.",
        "Memory-bound kernels: no B200 stream measurement; the GB200's 92 % (same HBM3e) is "
        "assumed.",
        "SMs: 148 (74 per die x 2, chipsandcheese).",
        sustained % ("%.0f MHz (%s; the boost clock is 1965 MHz)" % (CLOCKS["b200"]["quoted"],
                                                              blackwell_clock), 1000, 1339,
                     " (stas00/ml-engineering 082816f9: BF16 GEMM ~994 W at 1339 MHz, FP8 "
                     "~990 W at 1331 MHz)"),
    ]
    NOTES["gb200"] = [
        "FP8 and FP4 GEMM: fitted on cuBLASLt (Azure guide, ND GB200 v6; 10,000 warm-up "
        "iterations, taken at the sustained clock).",
        "BF16 GEMM: the B200's fitted fraction of the peak at the quoted clock (same die), the "
        "ramp scaled with the peak.",
        "Attention: cuDNN 9.27 (fused, BF16 and FP8) and FlashAttention-4 (flash, BF16), "
        "forward and backward, causal and not, Llama 3.1 GQA shapes at 2k-32k tokens: "
        "NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results/llama3.1/gb200/"
        "llama3.1_20260813_111214.csv (10 iterations, boost clock). FP8 FlashAttention: the "
        "FA4 MXFP8/BF16 ratio of the B200.",
        "Memory-bound kernels: 7.35 TB/s of 8 TB/s (Azure GB200 blog).",
        "SMs: 152: cudnn-frontend records the GB200's dense MMA peak at its sampled 2062 MHz "
        "as 2568 TFLOPS = 152 x 8192 x 2062 MHz (ByteDance-Seed/VeOmni PR 986 states the same "
        "152 SMs at 2.062 GHz); the 2.5 PFLOPS datasheet peak then holds at 2008 MHz.",
        sustained % ("2008 MHz (%s; the boost clock is 2062 MHz)" % blackwell_clock, 1200,
                     CLOCKS["gb200"]["sustained"],
                     " (not measured: the B200's 1339 MHz at 994 W scaled by the cube root of "
                     "the power per SM, dynamic power ~ clock x voltage^2)"),
    ]

    # Blackwell Ultra (B300 in HGX B300, GB300 in GB300 NVL72). GB300 attention: cuDNN BF16 and
    # FP8 fitted on the cudnn-frontend GB300 run (Blackwell Ultra's faster exponent shows in
    # it). GEMMs, FlashAttention and the B300's attention: the fitted fractions of the peak at
    # the quoted clock of the same SM design (GEMMs: the GB200's, whose BF16 is the B200's;
    # attention: the GB300's), the GEMM ramp scaled with the peak.
    g3 = G["gb300"]
    g3.update(memory=gb["memory"], overhead=gb["overhead"])
    for prec in ("bf16", "fp8"):
        fit_attention(g3, prec, "fused", "gb300")
    copy_attention(g3["eff"]["fp16"]["fused"], g3["eff"]["bf16"]["fused"])
    for gk in ("b300", "gb300"):
        g = G[gk]
        g.update(memory=gb["memory"], overhead=gb["overhead"])
        for p in ("bf16", "fp16", "fp8", "fp4"):
            g["eff"][p].update(gemm=gb["eff"][p]["gemm"],
                               gemm_half=gb["eff"][p]["gemm_half"] * g["peak"][p] / gb["peak"][p])
            if p in ("bf16", "fp16", "fp8"):
                copy_attention(g["eff"][p]["flash"], gb["eff"][p]["flash"])
                if gk == "b300":
                    copy_attention(g["eff"][p]["fused"], g3["eff"][p]["fused"])
        for backend in ("fused", "flash"):
            copy_attention(g["eff"]["fp4"][backend], g["eff"]["fp8"][backend],
                           g["peak"]["fp8"] / g["peak"]["fp4"])
    ultra = ("GEMM and memory-bound kernels: no published %s kernel sweep; the GB200's fitted "
             "fractions of each precision's peak at the quoted clock (same Blackwell SM design), "
             "the GEMM ramp scaled with the peak. Attention: cuDNN %s; FlashAttention: the "
             "GB200's fractions (Blackwell Ultra's doubled exponent throughput not credited "
             "there); FP4 attention at the FP8 attention's TFLOP/s. Kernel overhead and memory "
             "fraction: the GB200's.")
    gb300_attention = ("fitted on NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/"
                       "results/llama3.1/gb300/llama3.1_20260724_040919.csv (cuDNN 9.26, BF16 "
                       "and FP8, forward and backward, causal and not)")
    sms = ("SMs: 160 (NVIDIA technical blog \"Inside NVIDIA Blackwell Ultra\", 2025; the full "
           "GPU implementation, the enabled count of the shipping part not checked).")
    NOTES["b300"] = [
        ultra % ("B300", "the GB300's (same SM)"),
        "BF16 2.25 and FP8 4.5 PFLOPS: the HGX B300 page's 36 / 72 PFLOPS with sparsity / 2 "
        "/ 8 GPUs (the B200's). FP4 dense: not verified from NVIDIA's page (its FP4 sparse "
        "figure, 144 PFLOPS, is not 2x its dense one on Blackwell Ultra); third-party copies "
        "give 105 PFLOPS per board (13.1 per GPU), 14 and 12.6 per GPU. Taken: 13.5 (108 per "
        "board), the GB300's 15 x 0.9, the ratio of the B300's BF16 and FP8 peaks to the "
        "GB300's (1100 W vs 1400 W).",
        sms,
        sustained % ("%.0f MHz (%s; the boost clock is not published)" % (
            CLOCKS["b300"]["quoted"], blackwell_clock), 1100, CLOCKS["b300"]["sustained"],
            " (not measured: the B200's 1339 MHz at 994 W scaled by the cube root of the power "
            "per SM)"),
    ]
    NOTES["gb300"] = [
        ultra % ("GB300", gb300_attention),
        "Peaks: GB300 NVL72 page, per rack: FP4 1,080 PFLOPS dense (1,440 sparse), FP8 720 "
        "and BF16 360 PFLOPS with sparsity; / 72 GPUs, sparse figures halved.",
        sms,
        sustained % ("%.0f MHz (%s; the boost clock is 2070 MHz, facebookexperimental/triton PR "
                     "2023)" % (CLOCKS["gb300"]["quoted"], blackwell_clock), 1400,
                     CLOCKS["gb300"]["sustained"],
                     " (not measured: the B200's 1339 MHz at 994 W scaled by the cube root of "
                     "the power per SM)"),
    ]


def add_flash2(G):
    """FlashAttention-2 as PyTorch SDPA runs it (stacks with attention sdpa, docs/stacks.md):
    the H100 FA2 fit (FA3 paper Figs. 5-6) on the Hopper GPUs; on Blackwell the same shape at the
    level of the one GB200 measurement (Azure guide: 373.9 TFLOP/s, b=2 s=8192 hd128, taken as
    non-causal like the H100 point). The A100 needs no block: its flash is FA2."""
    src = G["h100-fa2"]["eff"]["bf16"]["flash"]
    for gk in ("h100", "h200"):
        G[gk]["flash2"] = dict(src)
        NOTES[gk].append("FlashAttention-2 (flash2_attention, PyTorch SDPA): fitted on the FA2 "
                         "rows of the FA3 paper Figs. 5-6 (H100; the H200 takes them).")
    gb = G["gb200"]
    level = 373.9e12 / gb["peak"]["bf16"] / attn_eff(src, 2, 16, 8192, 128, False, False, gb["sm"])
    for gk in ("b200", "gb200", "b300", "gb300"):
        G[gk]["flash2"] = {}
        copy_attention(G[gk]["flash2"], src, level)
        NOTES[gk].append("FlashAttention-2 (flash2_attention, PyTorch SDPA): the H100 FA2 shape "
                         "at the level of the one GB200 point (Azure guide, 373.9 TFLOP/s at b=2 "
                         "s=8192 hd128), as a fraction of the BF16 peak.")


def fit_bf16_on_msmf(g, gk):
    """BF16 GEMM efficiency fitted on the power-saturated BF16 point(s); ramp: the FP8 one at
    the same time (half the FLOPs)."""
    half = g["eff"]["fp8"]["gemm_half"] / 2
    for p in ("bf16", "fp16"):
        g["eff"][p]["gemm_half"] = half
    e = g["eff"]["bf16"]
    fit(g, pts(gk, "bf16", "gemm"), [lambda v: e.__setitem__("gemm", v)], [0.8], [0.05], [1.0])
    g["eff"]["fp16"]["gemm"] = e["gemm"]


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

GPU_FILES = {
    "a100": ("a100-sxm4-80gb.yaml", "A100-SXM4-80GB", "ampere", "80 GiB", "2039 GB/s",
             [("bf16", "312 TFLOPS", "A100 datasheet, dense"), ("fp16", "312 TFLOPS", ""),
              ("tf32", "156 TFLOPS", ""), ("fp32", "19.5 TFLOPS", "non-tensor-core FP32")],
             "# NVIDIA A100 SXM4 80GB (NVIDIA A100 datasheet: 312 TFLOPS dense BF16, 80 GB HBM2e,\n"
             "# 2039 GB/s, 108 SMs)."),
    "h100": ("h100-sxm5-80gb.yaml", "H100-SXM5-80GB", "hopper", "80 GiB", "3350 GB/s",
             [("bf16", "989 TFLOPS", "H100 SXM5 datasheet, dense"), ("fp16", "989 TFLOPS", ""),
              ("fp8", "1979 TFLOPS", "dense"), ("tf32", "494 TFLOPS", "dense"),
              ("fp32", "67 TFLOPS", "")],
             "# NVIDIA H100 SXM5 80GB (H100 datasheet: 989 TFLOPS dense BF16, 1979 FP8, 80 GB HBM3,\n"
             "# 3.35 TB/s, 132 SMs)."),
    "h200": ("h200-sxm-141gb.yaml", "H200-SXM-141GB", "hopper", "141 GB", "4800 GB/s",
             [("bf16", "989 TFLOPS", "H200 datasheet, dense (the H100's GH100 compute)"),
              ("fp16", "989 TFLOPS", ""), ("fp8", "1979 TFLOPS", "dense, as the H100"),
              ("tf32", "494 TFLOPS", "dense, as the H100"), ("fp32", "67 TFLOPS", "")],
             "# NVIDIA H200 SXM 141GB (H200 datasheet: H100 compute, 141 GB HBM3e, 4.8 TB/s)."),
    "b200": ("b200.yaml", "B200", "blackwell", "180 GB", "8000 GB/s",
             [("bf16", "2250 TFLOPS", "HGX B200 (1000 W), dense"), ("fp16", "2250 TFLOPS", ""),
              ("fp8", "4500 TFLOPS", "dense"), ("fp4", "9000 TFLOPS", "dense")],
             "# NVIDIA B200 (HGX B200, 1000 W; DGX B200 product page: 2250 TFLOPS dense BF16, 4500\n"
             "# FP8, 9000 FP4, ~180 GB HBM3e as tested in MLPerf, 8 TB/s)."),
    "gb200": ("gb200.yaml", "GB200", "blackwell", "186 GB", "8000 GB/s",
              [("bf16", "2500 TFLOPS", "GB200 NVL72, per GPU (1200 W), dense"),
               ("fp16", "2500 TFLOPS", ""), ("fp8", "5000 TFLOPS", "dense"),
               ("fp4", "10000 TFLOPS", "dense")],
              "# NVIDIA GB200 (the Blackwell GPU of a GB200 NVL72 rack, 1200 W; NVL72 product page:\n"
              "# 2500 TFLOPS dense BF16, 5000 FP8, 10000 FP4 per GPU, ~186 GB HBM3e, 8 TB/s)."),
    "b300": ("b300.yaml", "B300", "blackwell", "288 GB", "8000 GB/s",
             [("bf16", "2250 TFLOPS", "HGX B300, dense (36 PFLOPS sparse / 2 / 8 GPUs)"),
              ("fp16", "2250 TFLOPS", ""), ("fp8", "4500 TFLOPS", "dense (72 PFLOPS sparse / 2 / 8)"),
              ("fp4", "13500 TFLOPS", "dense (not verified: see above)")],
             "# NVIDIA B300 (Blackwell Ultra in HGX B300 / DGX B300, 8 per board, ~1100 W). HGX B300 page\n"
             "# (https://www.nvidia.com/en-us/data-center/hgx/), per board: FP4 144 PFLOPS sparse, FP8\n"
             "# 72 and FP16/BF16 36 PFLOPS with sparsity; DGX B300 datasheet: 2.3 TB HBM3e\n"
             "# (288 GB per GPU). NVIDIA technical blog \"Inside NVIDIA Blackwell Ultra: The Chip\n"
             "# Powering the AI Factory Era\" (developer.nvidia.com/blog/inside-nvidia-blackwell-ultra-\n"
             "# the-chip-powering-the-ai-factory-era): 160 SMs, 288 GB HBM3e, 8 TB/s. MLPerf Training\n"
             "# v6.0 lists the part as B300-SXM-270GB (capacity visible to CUDA)."),
    "gb300": ("gb300.yaml", "GB300", "blackwell", "288 GB", "8000 GB/s",
              [("bf16", "2500 TFLOPS", "GB300 NVL72, per GPU (1400 W), dense (360 PF sparse / 2 / 72)"),
               ("fp16", "2500 TFLOPS", ""), ("fp8", "5000 TFLOPS", "dense (720 PFLOPS sparse / 2 / 72)"),
               ("fp4", "15000 TFLOPS", "dense (1,080 PFLOPS dense / 72)")],
              "# NVIDIA GB300 (the Blackwell Ultra GPU of a GB300 NVL72 rack, 1400 W). GB300 NVL72 page\n"
              "# (https://www.nvidia.com/en-us/data-center/gb300-nvl72/), per rack of 72: FP4 1,440 PFLOPS\n"
              "# sparse | 1,080 dense, FP8/FP6 720 and FP16/BF16 360 PFLOPS with sparsity, HBM3e 576 TB/s.\n"
              "# NVIDIA technical blog \"Inside NVIDIA Blackwell Ultra: The Chip Powering the AI Factory\n"
              "# Era\" (developer.nvidia.com/blog/inside-nvidia-blackwell-ultra-the-chip-powering-the-ai-\n"
              "# factory-era): 160 SMs, 15 PFLOPS dense NVFP4 (20 sparse), 288 GB HBM3e, 8 TB/s."),
}


def fmt(v, digits=3):
    return ("%." + str(digits) + "g") % v


def attention_yaml(a, indent):
    pad = " " * indent
    return "".join("%s%s: %s\n" % (pad, k, fmt(a[k], 4 if "seq" in k or "dim" in k else 3))
                   for k in ATTN_KEYS)


def gpu_yaml(gk):
    fname, name, arch, mem, bw, peaks, header = GPU_FILES[gk]
    g = GPUS[gk]
    b = g["eff"]["bf16"]
    o = header + "\n"
    o += "# Clusters reference this file by name, `gpu: %s` (or by path).\n" % fname[:-len(".yaml")]
    o += "# The `efficiency` block is written by scripts/fit_compute_model.py (rerun it rather than\n"
    o += "# editing by hand); the fit, its data and residuals: docs/calibration.md. Sources and\n"
    o += "# assumptions where no data was published:\n"
    for line in NOTES.get(gk, []):
        words, cur = line.split(), "#  -"
        for w in words:
            if len(cur) + 1 + len(w) > 96:
                o += cur + "\n"
                cur = "#   "
            cur += " " + w
        o += cur + "\n"
    o += "name: %s\narchitecture: %s          # decides attention_backend auto and FP8 recipes\n" % (name, arch)
    o += "peak_flops:\n"
    for p, v, c in peaks:
        o += ("  %-6s %-14s%s" % (p + ":", v, ("# " + c) if c else "")).rstrip() + "\n"
    o += "memory: %s\nmemory_bandwidth: %s\n" % (mem, bw)
    c = g.get("clocks")
    if c:
        o += "clocks:                     # SM clocks (docs/calibration.md, \"Sustained clocks\")\n"
        o += "  peak: %.0f MHz            # the clock peak_flops are quoted at\n" % c["quoted"]
        if c.get("boost"):
            o += "  boost: %.0f MHz\n" % c["boost"]
        o += "  sustained: %.0f MHz       # dense GEMMs at the power limit\n" % c["sustained"]
        o += "  power_limit: %d W\n" % c["power"]
    o += "efficiency:                 # 16-bit (bf16 / fp16) GEMMs and attention, and GPU-wide terms\n"
    o += "  gemm: %s\n  gemm_half_size: %s GFLOP\n" % (fmt(b["gemm"]), fmt(b["gemm_half"] / 1e9))
    o += "  memory: %s\n  kernel_overhead: %s us\n  sm_count: %d\n" % (
        fmt(g["memory"]), fmt(g["overhead"] * 1e6), g["sm"])
    fitted, note = in_training_of(gk)
    source = ("fitted on whole layers of a step" if g["in_training"] == 1.0 else
              "assumed: A100 layer fit 0.67 / isolated 0.85")
    o += "  in_training: %s          # %s\n" % (
        fmt(fitted.get("bf16", g["in_training"])), note if "bf16" in fitted else source)
    o += "  fused_attention:          # cuDNN fused attention\n" + attention_yaml(b["fused"], 4)
    o += "  flash_attention:          # FlashAttention (2 on Ampere, 3 on Hopper, 4 on Blackwell)\n"
    o += attention_yaml(b["flash"], 4)
    if "flash2" in g:
        o += "  flash2_attention:         # FlashAttention-2 as PyTorch SDPA runs it (backend flash2)\n"
        o += attention_yaml(g["flash2"], 4)
    for p in ("fp8", "fp4"):
        if p not in g["peak"]:
            continue
        e = g["eff"][p]
        o += "  %s:\n    gemm: %s\n    gemm_half_size: %s GFLOP\n" % (p, fmt(e["gemm"]), fmt(e["gemm_half"] / 1e9))
        if p in fitted:
            o += "    in_training: %s          # %s\n" % (fmt(fitted[p]), note)
        o += "    fused_attention:\n" + attention_yaml(e["fused"], 6)
        o += "    flash_attention:\n" + attention_yaml(e["flash"], 6)
    return fname, o


def residual_tables():
    """Returns {table: (gpu file, fitted?, [(point, predicted, residual)])}."""
    tables = {}
    for p in DATA:
        gk = p["gpu"]
        g = GPUS[gk]
        pred = predict(g, p)
        tables.setdefault(p["table"], []).append((p, pred, pred / p["tf"] - 1))
    return tables


def csv_text(tables):
    lines = ["# Written by scripts/fit_compute_model.py: published kernel measurements (TFLOP/s)",
             "# and the compute model's prediction; tests/test_compute_model.cc recomputes them.",
             "# clock_ratio: the SM clock the measurement ran at / the clock the peaks are quoted at.",
             "table,gpu_file,precision,op,backend,backward,m,n,k,batch,heads,seq,head_dim,causal,"
             "measured_tflops,predicted_tflops,fitted,clock_ratio"]
    for table, rows in tables.items():
        for p, pred, _ in rows:
            gk = p["gpu"]
            if gk == "h100-fa2":
                continue  # a shape-only fit, not a shipped GPU
            f = GPU_FILES[gk][0]
            if p["op"] == "gemm":
                vals = [p["m"], p["n"], p["k"], p.get("batch", 1), 0, 0, 0, 0]
                be, bw = "", 0
            else:
                vals = [0, 0, 0, p["batch"], p["heads"], p["s"], p["d"], int(p["causal"])]
                be, bw = p["backend"], int(p["backward"])
            lines.append(",".join(['"%s"' % table, f, p["prec"], p["op"], be, str(bw)] +
                                  [str(v) for v in vals] +
                                  ["%g" % p["tf"], "%.6g" % pred, "0" if p.get("check") else "1",
                                   "%.6g" % clock_ratio(GPUS[gk], p)]))
    return "\n".join(lines) + "\n"


def doc_text(tables):
    o = ["<!-- fit: begin (written by scripts/fit_compute_model.py; do not edit) -->", ""]
    o.append("| reference table | points | fitted | mean abs. error | max abs. error |")
    o.append("|---|---|---|---|---|")
    for table, rows in tables.items():
        errs = [abs(r) for _, _, r in rows]
        o.append("| %s | %d | %s | %.1f %% | %.1f %% |" % (
            table, len(rows), "no (check)" if rows[0][0].get("check") else "yes",
            100 * sum(errs) / len(errs), 100 * max(errs)))
    for gk, (vals, spec, src) in STREAM.items():
        m = GPUS[gk]["memory"] * spec
        errs = [abs(m / v - 1) for v in vals]
        o.append("| %s HBM streaming (%s) | %d | yes | %.1f %% | %.1f %% |" % (
            GPU_FILES[gk][1], src, len(vals), 100 * sum(errs) / len(errs), 100 * max(errs)))
    o.append("")
    o.append("Fitted parameters (fractions of the precision's dense peak; half sizes in GFLOP;")
    o.append("attention lengths in tokens, head-dim constant in elements):")
    o.append("")
    o.append("| GPU | precision | gemm | gemm_half | fused fwd / bwd | flash fwd / bwd | flash half_seq / bwd / causal / half_hd |")
    o.append("|---|---|---|---|---|---|---|")
    for gk in ("a100", "h100", "h200", "b200", "gb200", "b300", "gb300"):
        g = GPUS[gk]
        for p in ("bf16", "fp8", "fp4"):
            if p not in g["peak"]:
                continue
            e = g["eff"][p]
            fu, fl = e["fused"], e["flash"]
            o.append("| %s | %s | %.3f | %.3g | %.3f / %.3f | %.3f / %.3f | %.0f / %.0f / %.0f / %.0f |" % (
                GPU_FILES[gk][1], p, e["gemm"], e["gemm_half"] / 1e9, fu["forward"], fu["backward"],
                fl["forward"], fl["backward"], fl["half_seq"], fl["backward_half_seq"],
                fl["causal_seq"], fl["half_head_dim"]))
    o.append("")
    o.append("| GPU | memory (fraction of HBM bandwidth) | kernel overhead | SMs | clocks: peak quoted at / boost / sustained (MHz), power limit | in step: sustained / quoted |")
    o.append("|---|---|---|---|---|---|")
    for gk in ("a100", "h100", "h200", "b200", "gb200", "b300", "gb300"):
        g = GPUS[gk]
        c = g.get("clocks")
        clocks = ("%.0f / %s / %.0f, %d W" % (c["quoted"], "%.0f" % c["boost"] if c.get("boost")
                                              else "-", c["sustained"], c["power"])) if c else "-"
        ratio = "%.3f" % (c["sustained"] / c["quoted"]) if c else "1"
        o.append("| %s | %.3f | %.2g us | %d | %s | %s |" % (
            GPU_FILES[gk][1], g["memory"], g["overhead"] * 1e6, g["sm"], clocks, ratio))
    o.append("")
    o.append("Assumptions where the reference has no data:")
    o.append("")
    for gk in ("a100", "h100", "h200", "b200", "gb200", "b300", "gb300"):
        for line in NOTES.get(gk, []):
            o.append("- %s: %s" % (GPU_FILES[gk][1], line))
    o.append("")
    o.append("<!-- fit: end -->")
    return "\n".join(o) + "\n"


def replace_between(text, new):
    b = text.find("<!-- fit: begin")
    e = text.find("<!-- fit: end -->")
    if b < 0 or e < 0:
        return text.rstrip("\n") + "\n\n" + new
    return text[:b] + new + text[e + len("<!-- fit: end -->\n"):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if a written file would change")
    args = ap.parse_args()
    run_fits()
    add_flash2(GPUS)
    tables = residual_tables()
    outputs = {}
    for gk in GPU_FILES:
        fname, text = gpu_yaml(gk)
        outputs[os.path.join("configs", "gpus", fname)] = text
    outputs[os.path.join("tests", "data", "kernel_reference.csv")] = csv_text(tables)
    doc = os.path.join("docs", "calibration.md")
    with open(os.path.join(ROOT, doc)) as f:
        outputs[doc] = replace_between(f.read(), doc_text(tables))
    changed = []
    for rel, text in outputs.items():
        path = os.path.join(ROOT, rel)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            changed.append(rel)
            if not args.check:
                with open(path, "w") as f:
                    f.write(text)
    for table, rows in tables.items():
        errs = [abs(r) for _, _, r in rows]
        print("%-75s n=%2d mean %5.1f %% max %5.1f %%" % (table, len(rows), 100 * sum(errs) / len(errs),
                                                          100 * max(errs)))
    if args.check and changed:
        print("out of date: " + ", ".join(changed), file=sys.stderr)
        return 1
    for rel in changed:
        print("wrote " + rel)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Plots a `trident sweep` CSV: step time and time per sample, and the measured pipeline
bubble beside the closed form (p-1)/(m+p-1), against the swept value (by default the first
varied column, e.g. plan.num_microbatches).

    build/trident sweep scenarios/microbatch-sweep.yaml --out mb.csv
    scripts/plot_sweep.py mb.csv -o docs/img/microbatch-sweep.png

Needs matplotlib (Debian: apt-get install python3-matplotlib). Rows whose status is an error
are left out; rows that do not fit in memory are drawn hollow.
"""
import argparse
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="CSV written by trident sweep (or trident merge)")
    ap.add_argument("-o", "--output", required=True, help="PNG file to write")
    ap.add_argument("--x", help="column for the x axis (default: the first varied column)")
    ap.add_argument("--title", help="figure title (default: from the file name)")
    args = ap.parse_args()

    with open(args.csv, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        rows = list(reader)
    if len(header) < 3 or header[0] != "point":
        sys.exit(f"plot_sweep.py: {args.csv}: not a trident sweep CSV")
    x_key = args.x or header[1]
    if x_key not in header:
        sys.exit(f"plot_sweep.py: no column {x_key!r} in {args.csv}")
    rows = [r for r in rows if r["status"] in ("ok", "does not fit")]
    if not rows:
        sys.exit(f"plot_sweep.py: {args.csv}: no point ran")

    xs = [number(r[x_key]) for r in rows]
    numeric = all(x is not None for x in xs)
    if not numeric:
        xs = list(range(len(rows)))
    step = [float(r["step_time_s"]) for r in rows]
    per_sample = [float(r["step_time_s"]) / float(r["global_batch_size"]) for r in rows]
    bubble = [100 * float(r["bubble_fraction"]) for r in rows]
    ideal = [100 * float(r["ideal_bubble_fraction"]) for r in rows]
    fits = [r["status"] == "ok" for r in rows]

    fig, (ax1, ax3) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax1.plot(xs, step, "o-", color="tab:blue", label="step time")
    ax1.set_ylabel("step time (s)", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(xs, per_sample, "s--", color="tab:orange", label="time per sample")
    ax2.set_ylabel("time per sample (s)", color="tab:orange")
    ax2.set_ylim(bottom=0)
    ax1.set_ylim(bottom=0)
    ax1.set_title("step time and time per sample")

    ax3.plot(xs, bubble, "o-", color="tab:red", label="measured bubble_fraction")
    ax3.plot(xs, ideal, "k--", label="ideal (p-1)/(m+p-1)")
    ax3.set_ylabel("pipeline bubble (% of step)")
    ax3.set_ylim(bottom=0)
    ax3.set_title("pipeline bubble")
    ax3.legend()

    for ax in (ax1, ax3):
        for x, y, ok in zip(xs, step if ax is ax1 else bubble, fits):
            if not ok:
                ax.plot([x], [y], "o", mfc="white", mec="black", ms=10)
        ax.grid(True, alpha=0.3)
        ax.set_xlabel(x_key)
        if numeric and min(xs) > 0 and max(xs) / min(xs) >= 8:
            ax.set_xscale("log", base=2)
            ax.set_xticks(xs)
            ax.set_xticklabels([f"{x:g}" for x in xs])
        elif not numeric:
            ax.set_xticks(xs)
            ax.set_xticklabels([r[x_key] for r in rows], rotation=20)
    fig.suptitle(args.title or args.csv)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()

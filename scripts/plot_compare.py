#!/usr/bin/python3
"""Plots a `trident compare --format csv` table as grouped bars: for each variant, the step
time and where it goes (compute, pipeline bubble, exposed TP, PP and DP communication), in
seconds per step.

    build/trident compare scenarios/tp-placement.yaml --tp-placement intra,inter \\
        --format csv > tp.csv
    scripts/plot_compare.py tp.csv -o docs/img/tp-placement.png

Needs matplotlib (Debian: apt-get install python3-matplotlib). Variants that failed are left
out.
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

GROUPS = [
    ("step time", lambda r: r["step_time_s"]),
    ("compute", lambda r: r["step_time_s"] * r["compute_utilization"]),
    ("bubble", lambda r: r["step_time_s"] * r["bubble_fraction"]),
    ("exposed TP", lambda r: r["tp_comm_exposed_s"]),
    ("exposed PP", lambda r: r["pp_comm_exposed_s"]),
    ("exposed DP", lambda r: r["dp_comm_exposed_s"]),
]
KEYS = ["step_time_s", "compute_utilization", "bubble_fraction", "tp_comm_exposed_s",
        "pp_comm_exposed_s", "dp_comm_exposed_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="CSV written by trident compare --format csv")
    ap.add_argument("-o", "--output", required=True, help="PNG file to write")
    ap.add_argument("--title", help="figure title (default: from the file name)")
    args = ap.parse_args()

    with open(args.csv, newline="") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or reader.fieldnames[0] != "variant":
            sys.exit(f"plot_compare.py: {args.csv}: not a trident compare CSV")
        rows = [r for r in reader if r["status"] == "ok"]
    if not rows:
        sys.exit(f"plot_compare.py: {args.csv}: no variant ran")
    for r in rows:
        for k in KEYS:
            r[k] = float(r[k])

    n = len(rows)
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for i, r in enumerate(rows):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(GROUPS))]
        ys = [fn(r) for _, fn in GROUPS]
        label = r["variant"] + (f" ({r['overrides']})" if r["overrides"] else "")
        bars = ax.bar(xs, ys, width, label=label)
        for bar, y in zip(bars, ys):
            ax.annotate(f"{y:.2f}", (bar.get_x() + bar.get_width() / 2, y), ha="center",
                        va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
        if i > 0:
            ratio = r["step_time_s"] / rows[0]["step_time_s"]
            ax.annotate(f"{ratio:.2f}x", (xs[0], ys[0]), ha="center", va="bottom",
                        fontsize=9, fontweight="bold", xytext=(0, 12),
                        textcoords="offset points")
    ax.set_xticks(range(len(GROUPS)))
    ax.set_xticklabels([g for g, _ in GROUPS])
    ax.set_ylabel("seconds per step (per GPU mean)")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.12)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(args.title or args.csv)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()

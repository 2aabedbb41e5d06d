#!/usr/bin/env python3
"""Plot a metric (busbw by default) against message size for `railkit report --plot FILE.png|svg`.

Input: a JSON file of series written by railkit (`railkit.plot-series/1`):
  {"baseline": NAME, "metric": "busbw", "ylabel": "busbw (GB/s)",
   "panels": [{"title": T, "series": [{"name": N, "config": C, "group": G, "baseline": bool,
               "slowest": bool, "inert": bool, "bytes": [...], "values": [...],
               "lo": [...], "hi": [...]}]}]}
One panel per collective/placement, one line per configuration and --split group (the slowest
group drawn thick and marked), the spread of the rounds (lo..hi) shaded, inert configurations
dotted, log2 x axis. Simulated values (railkit-bench --backend sim; the series file's
"simulated": "all" | "some" | "none", and each series' "simulated") are labelled so: "all" puts
SIMULATED in the title, the y label and across every panel; "some" marks each simulated series
(SIMULATED) in the legend and says so in the title.
Exit codes: 0 written, 5 matplotlib is missing (Debian: python3-matplotlib), 6 bad input, 9 write error.
"""
import argparse
import json
import sys


def size_label(b):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div} {unit}"
    return f"{b} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", required=True, help="JSON series written by railkit report")
    ap.add_argument("--out", required=True, help="output image, .png or .svg")
    ap.add_argument("--title", default="", help="figure title")
    a = ap.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        print("plot_results.py: matplotlib is not installed (Debian package: python3-matplotlib)", file=sys.stderr)
        return 5

    try:
        with open(a.series) as f:
            doc = json.load(f)
        panels = doc["panels"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"plot_results.py: {a.series}: cannot read the series: {e}", file=sys.stderr)
        return 6
    panels = [p for p in panels if p.get("series")]
    if not panels:
        print(f"plot_results.py: {a.series}: nothing to plot", file=sys.stderr)
        return 6

    simulated = doc.get("simulated", "none")
    cols = 1 if len(panels) == 1 else 2
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(7.5 * cols, 4.5 * rows), squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        for s in panel["series"]:
            values = s.get("values", s.get("busbw_GBps"))  # busbw_GBps: series written before --metric
            label = s["name"] + (" (slowest group)" if s.get("slowest") else "") + (" (inert)" if s.get("inert") else "")
            if simulated == "some" and s.get("simulated"):
                label += " (SIMULATED)"
            style = ":" if s.get("inert") else "--" if s.get("baseline") else "-"
            line, = ax.plot(s["bytes"], values, marker="v" if s.get("slowest") else "o",
                            markersize=5 if s.get("slowest") else 3,
                            linewidth=2.6 if s.get("slowest") else 2.2 if s.get("baseline") else 1.4,
                            linestyle=style, label=label)
            if s.get("lo") and s.get("hi"):
                ax.fill_between(s["bytes"], s["lo"], s["hi"], color=line.get_color(), alpha=0.15, linewidth=0)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: size_label(int(round(v)))))
        ax.set_xlabel("message size (bytes per rank)")
        ylabel = doc.get("ylabel", "busbw (GB/s)")
        ax.set_ylabel("SIMULATED " + ylabel if simulated == "all" else ylabel)
        if simulated == "all":
            ax.text(0.5, 0.5, "SIMULATED", transform=ax.transAxes, ha="center", va="center", fontsize=40,
                    color="grey", alpha=0.15, rotation=20, zorder=0)
        ax.set_title(panel.get("title", ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
        for label in ax.get_xticklabels():
            label.set_rotation(30)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    title = a.title
    if simulated == "all":
        title = "SIMULATED (railkit-bench --backend sim): a model of a cluster, not a measurement" + (
            "\n" + title if title else "")
    elif simulated == "some":
        title = "Series marked (SIMULATED) are simulated (railkit-bench --backend sim); the others measured" + (
            "\n" + title if title else "")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    try:
        fig.savefig(a.out)
    except OSError as e:
        print(f"plot_results.py: cannot write {a.out}: {e}", file=sys.stderr)
        return 9
    return 0


if __name__ == "__main__":
    sys.exit(main())

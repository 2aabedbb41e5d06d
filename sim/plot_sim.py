#!/usr/bin/env python3
"""Plot a railkit-sim run: per-flow goodput, queues and PFC pauses over time.

Input: the railkit.sim/1 document railkit-sim wrote (DIR/sim.json). Output: one image with three
panels sharing the time axis: goodput of each flow (Gb/s; dotted: its DCQCN rate), the mean queue
of the busiest ports (KB), and pause frames sent per sample interval. The title says "simulated".
Usage: plot_sim.py DIR/sim.json --out rates.png [--flows N] [--ports N]
Exit codes: 0 written, 5 matplotlib is missing (Debian: python3-matplotlib), 6 bad input, 9 write error.
"""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if not str(doc.get("schema", "")).startswith("railkit.sim/") or doc.get("simulated") is not True:
        raise ValueError("not a railkit.sim document")
    s = doc["series"]
    return doc, s["t_us"], s["flows"], s["ports"]


def smooth(values, width):
    """Trailing moving average over `width` samples (packets arrive in whole frames: a short
    interval's goodput is quantized)."""
    if width <= 1:
        return values
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= width:
            acc -= values[i - width]
        out.append(acc / min(i + 1, width))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("document", help="sim.json written by railkit-sim")
    ap.add_argument("--out", required=True, help="output image, .png or .svg")
    ap.add_argument("--flows", type=int, default=16, help="flows to draw (the first N)")
    ap.add_argument("--ports", type=int, default=4, help="ports to draw (the deepest queues)")
    ap.add_argument("--smooth-us", type=float, default=None,
                    help="moving average of goodput over this many us (default: 1/200 of the run)")
    a = ap.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_sim.py: matplotlib is not installed (Debian package: python3-matplotlib)", file=sys.stderr)
        return 5

    try:
        doc, t, flows, ports = load(a.document)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"plot_sim.py: {a.document}: cannot read the document: {e}", file=sys.stderr)
        return 6
    if not t:
        print(f"plot_sim.py: {a.document}: no samples to plot", file=sys.stderr)
        return 6

    t_ms = [x / 1000.0 for x in t]
    step_us = t[1] - t[0] if len(t) > 1 else t[0]
    window_us = a.smooth_us if a.smooth_us is not None else t[-1] / 200.0
    width = max(1, int(round(window_us / step_us))) if step_us > 0 else 1
    fig, (ax_rate, ax_queue, ax_pause) = plt.subplots(3, 1, figsize=(10, 10), sharex=True)
    for f in flows[:a.flows]:
        line, = ax_rate.plot(t_ms, smooth(f["goodput_Gbps"], width), linewidth=1.0, label=f["name"])
        ax_rate.plot(t_ms, f["dcqcn_rate_Gbps"], linewidth=0.8, linestyle=":", color=line.get_color())
    ax_rate.set_ylabel(f"goodput (Gb/s, {width * step_us:g} us mean)\n(dotted: DCQCN rate)")
    if len(flows[:a.flows]) <= 16:
        ax_rate.legend(fontsize="x-small", ncol=2)
    for p in ports[:a.ports]:
        ax_queue.plot(t_ms, [q / 1000.0 for q in p["queue_mean_bytes"]], linewidth=1.0, label=p["name"])
        ax_pause.plot(t_ms, p["pause_sent"], linewidth=1.0, label=p["name"] + " sent")
        if any(p["pause_received"]):
            ax_pause.plot(t_ms, p["pause_received"], linewidth=0.8, linestyle="--", label=p["name"] + " received")
    ax_queue.set_ylabel("queue (KB, interval mean)")
    ax_pause.set_ylabel("PFC pause frames\nper interval")
    ax_pause.set_xlabel("simulated time (ms)")
    for ax in (ax_rate, ax_queue, ax_pause):
        ax.grid(True, alpha=0.3)
    if ports[:a.ports]:
        ax_queue.legend(fontsize="x-small")
        ax_pause.legend(fontsize="x-small")
    run = doc.get("run", {})
    fig.suptitle(f"SIMULATED (ns-3): {run.get('name', '')}, seed {run.get('seed', '')}")
    fig.tight_layout()
    try:
        fig.savefig(a.out)
    except OSError as e:
        print(f"plot_sim.py: cannot write {a.out}: {e}", file=sys.stderr)
        return 9
    return 0


if __name__ == "__main__":
    sys.exit(main())

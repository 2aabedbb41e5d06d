#!/usr/bin/python3
"""railkit-sim against the HPCC simulator on the same scenarios (issue 29's cross-check).

For each scenario in sim/reference/scenarios/, reads railkit's run (railkit-sim's sim.json, run
here unless --railkit-runs names a directory that holds them) and the HPCC run stored in
sim/reference/hpcc/results/<scenario>/ (rates.csv, queue.csv, fct.txt where flows finish), and
computes on both: the steady (second half) per-flow DCQCN rate and goodput, the steady queue, the
start-up dip (lowest per-flow rate in the first millisecond) and, after a burst, the time the
survivor takes to regain 50/90/95% of the line rate. Prints a markdown table with the ratio of
each figure to the reference's and whether it meets the goal (steady rate and queue within 15%,
dip and recovery within 2x), and draws the curves side by side (--plot).

  python3 sim/reference/compare.py --railkit build/bin/railkit-sim [--plot out.png] [--check]

--check exits 1 naming the goals missed (the test sim.reference runs it on the goals the
VALIDATION.md table marks as met; --only-met). Every figure on either side is simulated.
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = ["incast2-100g", "incast16-100g", "incast16-100g-sonic", "incast4-400g", "burst-recovery-100g"]
LINE_GBPS = {"incast2-100g": 100, "incast16-100g": 100, "incast16-100g-sonic": 100, "incast4-400g": 400,
             "burst-recovery-100g": 100}
STARTUP_US = 1000.0


class Run:
    """Time series of one simulator on one scenario: per-flow DCQCN rate and goodput (Gb/s) and
    the bottleneck queue (bytes) at sample times (us), plus when each finite flow's last byte
    arrived, by source host."""

    def __init__(self):
        self.t_us = []
        self.rate = {}     # flow -> list aligned with t_us
        self.sent = {}
        self.q_t_us = []
        self.queue = []
        self.fct_end_us = {}  # source host -> time its flow's last byte arrived
        self.duration_us = 0.0


def load_hpcc(d):
    r = Run()
    rows = {}
    with open(os.path.join(d, "rates.csv")) as f:
        for row in csv.DictReader(f):
            t = float(row["time_us"])
            fl = int(row["flow"])
            rows.setdefault(t, {})[fl] = (float(row["rate_gbps"]), float(row["sent_gbps"]))
    r.t_us = sorted(rows)
    flows = sorted({fl for v in rows.values() for fl in v})
    for fl in flows:
        r.rate[fl] = [rows[t].get(fl, (math.nan, 0.0))[0] for t in r.t_us]
        r.sent[fl] = [rows[t].get(fl, (math.nan, 0.0))[1] for t in r.t_us]
    # queue_stats.csv: the mean over 1 us sub-samples of each interval, like railkit's interval
    # mean; queue.csv (the queue at the sample instant) when it is absent.
    stats = os.path.join(d, "queue_stats.csv")
    name, column = (stats, "qmean_bytes") if os.path.exists(stats) else (os.path.join(d, "queue.csv"), "queue_bytes")
    with open(name) as f:
        for row in csv.DictReader(f):
            r.q_t_us.append(float(row["time_us"]))
            r.queue.append(float(row[column]))
    fct = os.path.join(d, "fct.txt")
    if os.path.exists(fct):
        with open(fct) as f:
            for line in f:
                p = line.split()
                # HPCC's fct.txt: sip dip sport dport size start_ns fct_ns standalone_fct_ns
                if len(p) >= 7:
                    src_host = (int(p[0], 16) >> 8) & 0xFFFF  # 11.0.<host>.1 as HPCC numbers them
                    r.fct_end_us[src_host] = (float(p[5]) + float(p[6])) / 1000.0
    summary = os.path.join(d, "summary.json")
    if os.path.exists(summary):
        with open(summary) as f:
            r.duration_us = float(json.load(f).get("sim_end_us", 0.0))
    r.duration_us = r.duration_us or (r.t_us[-1] if r.t_us else 0.0)
    return r


def load_railkit(path):
    with open(path) as f:
        d = json.load(f)
    r = Run()
    s = d["series"]
    r.t_us = list(s["t_us"])
    for i, fl in enumerate(s["flows"]):
        r.rate[i] = list(fl["dcqcn_rate_Gbps"])
        r.sent[i] = list(fl["goodput_Gbps"])
    dst = d["flows"][0]["dst"]
    port = next(p for p in s["ports"] if p["name"].endswith("->" + dst))
    r.q_t_us = r.t_us
    r.queue = list(port["queue_mean_bytes"])
    for i, fl in enumerate(d["flows"]):
        if fl.get("fct_us") is not None:
            r.fct_end_us[int(fl["src"].lstrip("h"))] = fl["start_us"] + fl["fct_us"]
    r.duration_us = d["run"]["duration_us"]
    return r


def window_mean(t, v, lo, hi):
    xs = [x for tt, x in zip(t, v) if lo < tt <= hi and not math.isnan(x)]
    return statistics.fmean(xs) if xs else math.nan


def figures(r, scenario):
    """The compared figures of one run."""
    line = LINE_GBPS[scenario]
    out = {}
    if scenario.startswith("burst"):
        ends = [e for host, e in r.fct_end_us.items() if host != 0]  # h0 is the survivor
        end = max(ends) if len(ends) == len(r.rate) - 1 else math.nan
        out["burst_end_us"] = end
        out["dip_Gbps"] = min((x for tt, x in zip(r.t_us, r.rate[0]) if tt <= end), default=math.nan)
        for share in (0.5, 0.9, 0.95):
            hit = next((tt for tt, x in zip(r.t_us, r.rate[0]) if tt > end and x >= share * line), math.nan)
            out[f"recover{int(share * 100)}_ms"] = (hit - end) / 1000.0
        return out
    half = r.duration_us / 2
    per_flow_rate = [window_mean(r.t_us, v, half, r.duration_us) for v in r.rate.values()]
    per_flow_sent = [window_mean(r.t_us, v, half, r.duration_us) for v in r.sent.values()]
    out["rate_Gbps"] = statistics.fmean(per_flow_rate)
    out["rate_spread"] = (max(per_flow_rate) - min(per_flow_rate)) / out["rate_Gbps"]
    out["goodput_Gbps"] = statistics.fmean(per_flow_sent)
    out["queue_kB"] = window_mean(r.q_t_us, r.queue, half, r.duration_us) / 1000.0
    start = [(tt, min(v[k] for v in r.rate.values())) for k, tt in enumerate(r.t_us) if tt <= STARTUP_US]
    low = min(start, key=lambda x: x[1])
    out["dip_Gbps"], out["dip_at_us"] = low[1], low[0]
    return out


# figure -> (goal kind, bound): ratio within 15% or within a factor of 2
GOALS = {"rate_Gbps": ("rel", 0.15), "queue_kB": ("rel", 0.15), "dip_Gbps": ("factor", 2.0),
         "recover50_ms": ("factor", 2.0), "recover90_ms": ("factor", 2.0), "recover95_ms": ("factor", 2.0)}


def meets(name, ours, ref):
    kind, bound = GOALS.get(name, (None, None))
    if kind is None or math.isnan(ours) or math.isnan(ref) or ref == 0:
        return None
    if kind == "rel":
        return abs(ours / ref - 1) <= bound
    return 1 / bound <= ours / ref <= bound


def run_railkit(binary, scenario, outdir, seed):
    yaml = os.path.join(HERE, "scenarios", scenario + ".yaml")
    out = os.path.join(outdir, f"{scenario}-seed{seed}")
    subprocess.run([binary, yaml, "--set", f"seed={seed}", "--out", out, "-q"], check=True)
    return os.path.join(out, "sim.json")


def reference_runs(base, scenario):
    """HPCC's runs of a scenario: <scenario>/ (RngRun 1) and <scenario>-rngrunK/ when present."""
    dirs = [os.path.join(base, scenario)]
    dirs += sorted(os.path.join(base, d) for d in os.listdir(base) if d.startswith(scenario + "-rngrun"))
    return [load_hpcc(d) for d in dirs if os.path.isdir(d)]


def combine(runs, scenario):
    """Median and range over runs (seeds) of each figure."""
    per = [figures(r, scenario) for r in runs]
    out = {}
    for name in per[0]:
        xs = [f[name] for f in per if not math.isnan(f[name])]
        out[name] = (statistics.median(xs), min(xs), max(xs)) if xs else (math.nan, math.nan, math.nan)
    return out


def plot(pairs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(pairs), 2, figsize=(13, 3.2 * len(pairs)))
    for row, (scenario, ref, ours) in enumerate(pairs):
        ax_r, ax_q = axes[row]
        scale = 1000.0 if scenario.startswith("burst") else 1.0
        unit = "ms" if scale > 1 else "us"
        for name, run, style in (("HPCC", ref, "-"), ("railkit", ours, "--")):
            for k, fl in enumerate(list(run.rate)[:4]):
                ax_r.plot([t / scale for t in run.t_us], run.rate[fl], style, lw=0.9,
                          color=f"C{k}", label=f"{name} flow {fl}" if k < 2 else None)
            ax_q.plot([t / scale for t in run.q_t_us], [q / 1000 for q in run.queue], style, lw=0.9,
                      color="k" if name == "HPCC" else "C3", label=name)
        ax_r.set_title(f"{scenario}: DCQCN rate, seed 1 (solid HPCC, dashed railkit)", fontsize=9)
        ax_r.set_ylabel("Gb/s")
        ax_r.set_xlabel(unit)
        ax_r.legend(fontsize=7, loc="upper right")
        ax_q.set_title(f"{scenario}: bottleneck queue, seed 1", fontsize=9)
        ax_q.set_ylabel("kB")
        ax_q.set_xlabel(unit)
        ax_q.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=80)
    os.replace(tmp, path)


def fmt(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def fmt_range(v, n):
    med, lo, hi = v
    return fmt(med) if n == 1 or lo == hi else f"{fmt(med)} [{fmt(lo)}, {fmt(hi)}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--railkit", help="railkit-sim binary (runs the scenarios)")
    ap.add_argument("--railkit-runs", help="directory with <scenario>/sim.json already run (one seed)")
    ap.add_argument("--seeds", type=int, default=3, help="railkit seeds 1..N (with --railkit; default 3)")
    ap.add_argument("--reference", default=os.path.join(HERE, "hpcc", "results"))
    ap.add_argument("--plot", help="PNG to draw")
    ap.add_argument("--check", action="store_true", help="exit 1 when a judged goal is missed")
    ap.add_argument("--only", nargs="*", default=None, help="scenario:figure pairs --check judges (default: all)")
    a = ap.parse_args()
    if not a.railkit and not a.railkit_runs:
        ap.error("give --railkit or --railkit-runs")
    tmp = tempfile.mkdtemp(prefix="railkit-ref-")
    pairs, rows, missed = [], [], []
    for sc in SCENARIOS:
        refs = reference_runs(a.reference, sc)
        if not refs:
            print(f"compare.py: {a.reference}/{sc}: no reference run", file=sys.stderr)
            return 2
        if a.railkit_runs:
            ours = [load_railkit(os.path.join(a.railkit_runs, sc, "sim.json"))]
        else:
            ours = [load_railkit(run_railkit(a.railkit, sc, tmp, seed)) for seed in range(1, a.seeds + 1)]
        pairs.append((sc, refs[0], ours[0]))
        fr, fo = combine(refs, sc), combine(ours, sc)
        for name in fr:
            ok = meets(name, fo[name][0], fr[name][0])
            ratio = fo[name][0] / fr[name][0] if fr[name][0] and not math.isnan(fr[name][0]) else math.nan
            rows.append((sc, name, fmt_range(fr[name], len(refs)), fmt_range(fo[name], len(ours)), ratio, ok))
            judged = a.only is None or f"{sc}:{name}" in a.only
            if a.check and judged and ok is False:
                missed.append(f"{sc} {name}: railkit {fmt(fo[name][0])} against HPCC {fmt(fr[name][0])}")
    print(f"| scenario | figure | HPCC (median [range] of its seeds) | railkit (median [range] of {len(ours)} seeds) "
          "| railkit / HPCC | goal met |")
    print("|---|---|---|---|---|---|")
    for sc, name, r, o, ratio, ok in rows:
        goal = "-" if ok is None else ("yes" if ok else "**no**")
        print(f"| {sc} | {name} | {r} | {o} | {fmt(ratio)} | {goal} |")
    if a.plot:
        plot(pairs, a.plot)
    if missed:
        print("goals missed:\n  " + "\n  ".join(missed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

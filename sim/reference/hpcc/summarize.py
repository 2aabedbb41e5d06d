#!/usr/bin/env python3
"""Turn one HPCC run directory (the tracer's out/ files) into results/<scenario>/.

usage: summarize.py RUN_DIR RESULT_DIR SCENARIO [--wall SECONDS] [--rngrun N]

Writes RESULT_DIR/rates.csv, queue.csv (copied from the tracer, thinned if a
file would exceed ~2 MB), queue_stats.csv, counters.csv, fct.txt and
summary.json. All rates are in Gb/s; time in microseconds from the start of the
simulation (every flow of the long-lived scenarios starts at t = 0).

sent_gbps = payload bytes handed to the wire in the sample interval (snd_nxt
advance) * 8 / interval. One 1024-byte payload is a 1060-byte frame on the wire
(1024 + 6 SeqTs + 8 UDP + 20 IPv4 + 2 PPP), so wire throughput = sent * 1060/1024.
"""
import csv
import json
import os
import shutil
import sys
from collections import defaultdict

MAX_BYTES = 2_000_000
WIRE = 1060.0 / 1024.0


def read_csv(path):
    with open(path) as f:
        r = csv.reader(f)
        head = next(r)
        rows = [row for row in r if row]
    return head, rows


def thin_copy(src, dst, keep_every=None):
    size = os.path.getsize(src)
    if size <= MAX_BYTES:
        shutil.copyfile(src, dst)
        return 1
    head, rows = read_csv(src)
    times = sorted({float(r[0]) for r in rows})
    k = keep_every or int(size // MAX_BYTES) + 1
    keep = set(times[k - 1::k])
    with open(dst, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        for r in rows:
            if float(r[0]) in keep:
                w.writerow(r)
    return k


def jain(xs):
    xs = [x for x in xs]
    if not xs or sum(x * x for x in xs) == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def main():
    args = sys.argv[1:]
    run, res, name = args[0], args[1], args[2]
    wall = None
    rngrun = 1
    if "--wall" in args:
        wall = float(args[args.index("--wall") + 1])
    if "--rngrun" in args:
        rngrun = int(args[args.index("--rngrun") + 1])
    out = os.path.join(run, "out")
    os.makedirs(res, exist_ok=True)

    head, rrows = read_csv(os.path.join(out, "rates.csv"))
    _, qrows = read_csv(os.path.join(out, "queue.csv"))
    _, qsrows = read_csv(os.path.join(out, "queue_stats.csv"))
    _, crows = read_csv(os.path.join(out, "counters.csv"))

    per_flow = defaultdict(list)  # flow -> [(t, rate, target, alpha, sent)]
    for r in rrows:
        per_flow[int(r[1])].append((float(r[0]), float(r[2]), float(r[3]), float(r[4]), float(r[5])))
    t_end = max(float(r[0]) for r in qrows)

    # fct file: sip dip sport dport size start_ns fct_ns standalone_fct_ns
    fct = []
    fct_path = os.path.join(out, "fct.txt")
    if os.path.exists(fct_path):
        with open(fct_path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 8:
                    sid = (int(p[0], 16) >> 8) & 0xFFFF
                    fct.append(dict(flow=sid, size=int(p[4]), start_us=int(p[5]) / 1e3,
                                    fct_us=int(p[6]) / 1e3, end_us=(int(p[5]) + int(p[6])) / 1e3,
                                    standalone_fct_us=int(p[7]) / 1e3))

    pfc_lines = 0
    pfc_path = os.path.join(out, "pfc.txt")
    pfc_events = []
    if os.path.exists(pfc_path):
        with open(pfc_path) as f:
            for line in f:
                p = line.split()
                if len(p) == 5:
                    pfc_lines += 1
                    pfc_events.append(dict(time_us=int(p[0]) / 1e3, node=int(p[1]), node_type=int(p[2]),
                                           ifindex=int(p[3]), type=("pause" if p[4] == "1" else "resume")))

    counters = [dict(flow=int(c[0]), dst=int(c[1]), size_bytes=int(c[2]), sent_bytes=int(c[3]), acked_bytes=int(c[4]),
                     cnp_acks=int(c[5]), rate_cuts=int(c[6]), rate_inc_events=int(c[7]),
                     final_rate_gbps=float(c[8]), final_target_gbps=float(c[9]), final_alpha=float(c[10]))
                for c in crows]

    s = dict(scenario=name, simulator="HPCC ns-3.17 (alibaba-edu/High-Precision-Congestion-Control@9f4be2a), CC_MODE 1 (DCQCN mlx)",
             rng_run=rngrun, sim_end_us=t_end, wall_time_s=wall, n_flows=len(per_flow),
             units="rates Gb/s; sent_gbps = payload (1024 B per 1060 B frame); queue bytes = egress_bytes of queue 3 of the switch port toward the receiver, frames incl. headers")

    def window_stats(t0, t1, flows):
        out = {}
        for fl in flows:
            pts = [p for p in per_flow[fl] if t0 < p[0] <= t1]
            if not pts:
                continue
            out[fl] = dict(rate_gbps=sum(p[1] for p in pts) / len(pts),
                           target_gbps=sum(p[2] for p in pts) / len(pts),
                           alpha=sum(p[3] for p in pts) / len(pts),
                           sent_gbps=sum(p[4] for p in pts) / len(pts))
        return out

    def queue_stats(t0, t1):
        inst = [float(r[1]) for r in qrows if t0 < float(r[0]) <= t1]
        fine = [(float(r[1]), float(r[2])) for r in qsrows if t0 < float(r[0]) <= t1]
        d = {}
        if inst:
            d["mean_bytes_at_samples"] = sum(inst) / len(inst)
            d["max_bytes_at_samples"] = max(inst)
        if fine:
            d["mean_bytes_1us"] = sum(x[0] for x in fine) / len(fine)
            d["max_bytes_1us"] = max(x[1] for x in fine)
        return d

    flows = sorted(per_flow)
    if name.startswith("burst"):
        steady_t0, steady_t1 = t_end / 2, t_end
    else:
        steady_t0, steady_t1 = t_end / 2, t_end
    ws = window_stats(steady_t0, steady_t1, flows)
    rates = [ws[f]["rate_gbps"] for f in ws]
    sents = [ws[f]["sent_gbps"] for f in ws]
    s["steady_window_us"] = [steady_t0, steady_t1]
    s["steady_per_flow"] = {str(f): ws[f] for f in ws}
    if ws:
        s["steady_mean_rate_gbps"] = sum(rates) / len(rates)
        s["steady_mean_sent_gbps"] = sum(sents) / len(sents)
        s["steady_total_sent_gbps"] = sum(sents)
        s["steady_total_sent_wire_gbps"] = sum(sents) * WIRE
        s["steady_jain_rate"] = jain(rates)
        s["steady_jain_sent"] = jain(sents)
    s["steady_queue"] = queue_stats(steady_t0, steady_t1)
    s["whole_run_queue"] = queue_stats(-1, t_end)

    # start-up dip: minimum per-flow DCQCN rate in the first 1 ms (flows that start at 0)
    dip = {}
    for f in flows:
        pts = [p for p in per_flow[f] if p[0] <= 1000.0]
        if pts:
            m = min(pts, key=lambda p: p[1])
            dip[str(f)] = dict(min_rate_gbps=m[1], at_us=m[0])
    if dip:
        worst = min(dip.items(), key=lambda kv: kv[1]["min_rate_gbps"])
        s["startup_dip_first_1ms"] = dict(per_flow=dip, min_rate_gbps=worst[1]["min_rate_gbps"],
                                          flow=int(worst[0]), at_us=worst[1]["at_us"])

    s["counters"] = dict(total_cnp_acks=sum(c["cnp_acks"] for c in counters),
                         total_rate_cuts=sum(c["rate_cuts"] for c in counters),
                         total_rate_inc_events=sum(c["rate_inc_events"] for c in counters),
                         per_flow=counters)
    s["pfc"] = dict(events=pfc_lines, pauses=sum(1 for e in pfc_events if e["type"] == "pause"),
                    first_events=pfc_events[:20])
    s["flows_completed"] = fct

    if name.startswith("burst"):
        burst = [x for x in fct if x["flow"] != 0]
        if burst:
            b_end = max(x["end_us"] for x in burst)
            s["burst_start_us"] = min(x["start_us"] for x in burst)
            s["burst_end_us"] = b_end
            s["burst_fct_us"] = {str(x["flow"]): x["fct_us"] for x in burst}
            h0 = per_flow[0]
            rec = {}
            for thr in (50, 90, 95):
                for key, idx, mul in (("rate", 1, 1.0), ("sent", 4, 1.0), ("sent_wire", 4, WIRE)):
                    hit = next((p[0] for p in h0 if p[0] >= b_end and p[idx] * mul >= thr), None)
                    rec["%s_ge_%d" % (key, thr)] = None if hit is None else dict(at_us=hit, after_burst_end_us=hit - b_end)
            rec["note"] = ("first sample at or after burst_end_us where h0's DCQCN rate (m_rate) / payload throughput / "
                           "wire throughput (payload * 1060/1024) reaches the threshold; sample grid 10 us before 10 ms, 50 us after. "
                           "Payload throughput tops out at 97.5 Gb/s (84 ns per 1060-byte frame), so sent_ge_95 needs m_rate >= ~98.5.")
            s["h0_recovery"] = rec
            # h0 at the end of the burst
            after = [p for p in h0 if p[0] >= b_end]
            if after:
                s["h0_at_burst_end"] = dict(time_us=after[0][0], rate_gbps=after[0][1], target_gbps=after[0][2],
                                            alpha=after[0][3])
            s["h0_min_rate"] = min(((p[1], p[0]) for p in h0), default=None)
            s["queue_during_burst"] = queue_stats(s["burst_start_us"], b_end)

    k1 = thin_copy(os.path.join(out, "rates.csv"), os.path.join(res, "rates.csv"))
    k2 = thin_copy(os.path.join(out, "queue.csv"), os.path.join(res, "queue.csv"))
    k3 = thin_copy(os.path.join(out, "queue_stats.csv"), os.path.join(res, "queue_stats.csv"))
    s["csv_thinning"] = dict(rates_keep_every=k1, queue_keep_every=k2, queue_stats_keep_every=k3)
    shutil.copyfile(os.path.join(out, "counters.csv"), os.path.join(res, "counters.csv"))
    if os.path.exists(fct_path):
        shutil.copyfile(fct_path, os.path.join(res, "fct.txt"))
    with open(os.path.join(res, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
    print(json.dumps({k: v for k, v in s.items() if k not in ("steady_per_flow", "counters", "flows_completed", "pfc", "startup_dip_first_1ms")}, indent=1))


if __name__ == "__main__":
    main()

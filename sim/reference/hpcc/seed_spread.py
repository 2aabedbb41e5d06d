#!/usr/bin/env python3
"""Seed spread of a scenario run with several RngRun values.

usage: seed_spread.py OUT_JSON RESULT_DIR [RESULT_DIR ...]
"""
import json
import statistics
import sys

KEYS = [
    ("steady_mean_rate_gbps",), ("steady_mean_sent_gbps",), ("steady_total_sent_gbps",),
    ("steady_jain_rate",), ("steady_jain_sent",),
    ("steady_queue", "mean_bytes_1us"), ("steady_queue", "max_bytes_1us"),
    ("whole_run_queue", "max_bytes_1us"),
    ("startup_dip_first_1ms", "min_rate_gbps"), ("startup_dip_first_1ms", "at_us"),
    ("counters", "total_cnp_acks"), ("counters", "total_rate_cuts"), ("pfc", "events"),
]


def get(d, path):
    for k in path:
        d = d[k]
    return d


def main():
    out, dirs = sys.argv[1], sys.argv[2:]
    sums = [json.load(open(d + "/summary.json")) for d in dirs]
    res = {"runs": [dict(dir=d, rng_run=s["rng_run"]) for d, s in zip(dirs, sums)], "metrics": {}}
    for path in KEYS:
        vals = [get(s, path) for s in sums]
        res["metrics"][".".join(path)] = dict(values=vals, mean=statistics.mean(vals), min=min(vals), max=max(vals),
                                              stdev=statistics.stdev(vals) if len(vals) > 1 else 0.0)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res["metrics"], indent=1))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Write the HPCC-simulator (ns-3.17) input files of the railkit cross-check scenarios.

For each scenario, scenarios/<name>/ gets config.txt, topology.txt, flow.txt and
trace.txt. The config files use paths relative to the directory the simulator is
run in (build.sh copies the scenario directory into a run directory and runs
`third config.txt` there).

The DCQCN settings copy simulation/run.py's `--cc dcqcn` branch verbatim
(run.py is Python 2: `5 * bw / 25` etc. are integer divisions), except
PACKET_PAYLOAD_SIZE (1024 instead of 1000), the file names, the stop time,
ENABLE_TRACE 0, QLEN_MON_* (HPCC's own monitor is switched off: it starts after
the end of the run) and the RK_* keys of the railkit tracer (see third.patch).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

BIG = 4000000000  # bytes; FlowInput.maxPacketCount is uint32_t, so < 2^32


def config(bw, stop_s, rk, ecn=None):
    """run.py's --cc dcqcn config for NIC bandwidth bw (Gb/s); ecn = (kmin_kB, kmax_kB, pmax) on
    every port instead of run.py's maps (kB = 1000 B, as SwitchMmu::ConfigEcn reads them)."""
    ai = 5 * bw // 25
    hai = 50 * bw // 25
    bfsz = 16 * bw // 50
    kmax_map = "2 %d %d %d %d" % (bw * 1000000000, 400 * bw // 25, bw * 4 * 1000000000, 400 * bw * 4 // 25)
    kmin_map = "2 %d %d %d %d" % (bw * 1000000000, 100 * bw // 25, bw * 4 * 1000000000, 100 * bw * 4 // 25)
    pmax_map = "2 %d %.2f %d %.2f" % (bw * 1000000000, 0.2, bw * 4 * 1000000000, 0.2)
    if ecn:
        kmin_map = "1 %d %d" % (bw * 1000000000, ecn[0])
        kmax_map = "1 %d %d" % (bw * 1000000000, ecn[1])
        pmax_map = "1 %d %.2f" % (bw * 1000000000, ecn[2])
    lines = [
        "ENABLE_QCN 1",
        "USE_DYNAMIC_PFC_THRESHOLD 1",
        "",
        "PACKET_PAYLOAD_SIZE 1024",
        "",
        "TOPOLOGY_FILE topology.txt",
        "FLOW_FILE flow.txt",
        "TRACE_FILE trace.txt",
        "TRACE_OUTPUT_FILE out/mix.tr",
        "FCT_OUTPUT_FILE out/fct.txt",
        "PFC_OUTPUT_FILE out/pfc.txt",
        "",
        "SIMULATOR_STOP_TIME %.7f" % (stop_s + 0.0000005),  # +0.5 us so the sample at the end time is written
        "",
        "CC_MODE 1",
        "ALPHA_RESUME_INTERVAL 1",
        "RATE_DECREASE_INTERVAL 4",
        "CLAMP_TARGET_RATE 0",
        "RP_TIMER 300",
        "EWMA_GAIN 0.00390625",
        "FAST_RECOVERY_TIMES 1",
        "RATE_AI %dMb/s" % ai,
        "RATE_HAI %dMb/s" % hai,
        "MIN_RATE 1000Mb/s",
        "DCTCP_RATE_AI 1000Mb/s",
        "",
        "ERROR_RATE_PER_LINK 0.0000",
        "L2_CHUNK_SIZE 4000",
        "L2_ACK_INTERVAL 1",
        "L2_BACK_TO_ZERO 0",
        "",
        "HAS_WIN 0",
        "GLOBAL_T 1",
        "VAR_WIN 0",
        "FAST_REACT 0",
        "U_TARGET 0.95",
        "MI_THRESH 0",
        "INT_MULTI 1",
        "MULTI_RATE 0",
        "SAMPLE_FEEDBACK 0",
        "PINT_LOG_BASE 1.01",
        "PINT_PROB 1.0",
        "",
        "RATE_BOUND 1",
        "",
        "ACK_HIGH_PRIO 1",
        "",
        "LINK_DOWN 0 0 0",
        "",
        "ENABLE_TRACE 0",
        "",
        "KMAX_MAP " + kmax_map,
        "KMIN_MAP " + kmin_map,
        "PMAX_MAP " + pmax_map,
        "BUFFER_SIZE %d" % bfsz,
        "QLEN_MON_FILE out/qlen.txt",
        "QLEN_MON_START 2000000000",
        "QLEN_MON_END 3000000000",
        "",
        "RK_RATES_FILE out/rates.csv",
        "RK_QUEUE_FILE out/queue.csv",
        "RK_QSTATS_FILE out/queue_stats.csv",
        "RK_COUNTERS_FILE out/counters.csv",
        "RK_QIDX 3",
        "RK_QSUB_NS 1000",
    ]
    for k, v in rk:
        lines.append("%s %s" % (k, v))
    return "\n".join(lines) + "\n"


def topology(n_hosts, bw):
    sw = n_hosts
    out = ["%d 1 %d" % (n_hosts + 1, n_hosts), "%d" % sw]
    for h in range(n_hosts):
        out.append("%d %d %dGbps 0.001ms 0" % (h, sw, bw))
    return "\n".join(out) + "\n"


def flows(rows):
    # src dst pg dport size(bytes) start_time(s)
    out = ["%d" % len(rows)]
    for src, dst, size, start in rows:
        out.append("%d %d 3 100 %d %.9f" % (src, dst, size, start))
    return "\n".join(out) + "\n"


def scenarios():
    s = {}
    s["incast16-100g"] = dict(bw=100, hosts=17, stop=0.020,
                              flows=[(i, 16, BIG, 0.0) for i in range(16)],
                              rk=[("RK_SAMPLE_NS", 10000), ("RK_BOTTLENECK_DST", 16)])
    s["incast2-100g"] = dict(bw=100, hosts=3, stop=0.020,
                             flows=[(i, 2, BIG, 0.0) for i in range(2)],
                             rk=[("RK_SAMPLE_NS", 10000), ("RK_BOTTLENECK_DST", 2)])
    s["incast4-400g"] = dict(bw=400, hosts=5, stop=0.010,
                             flows=[(i, 4, BIG, 0.0) for i in range(4)],
                             rk=[("RK_SAMPLE_NS", 10000), ("RK_BOTTLENECK_DST", 4)])
    # SONiC's default lossless WRED profile (1 MiB, 2 MiB, 5%), issue 29's production-style case.
    s["incast16-100g-sonic"] = dict(bw=100, hosts=17, stop=0.020, ecn=(1049, 2097, 0.05),
                                    flows=[(i, 16, BIG, 0.0) for i in range(16)],
                                    rk=[("RK_SAMPLE_NS", 10000), ("RK_BOTTLENECK_DST", 16)])
    s["burst-recovery-100g"] = dict(bw=100, hosts=17, stop=0.300,
                                    flows=[(0, 16, BIG, 0.0)] + [(i, 16, 2097152, 0.001) for i in range(1, 16)],
                                    rk=[("RK_SAMPLE_NS", 50000), ("RK_SAMPLE_FINE_NS", 10000),
                                        ("RK_FINE_UNTIL_NS", 10000000), ("RK_BOTTLENECK_DST", 16),
                                        ("RK_RECOVER_SRC", 0), ("RK_RECOVER_GBPS", 95),
                                        ("RK_RECOVER_HOLD_NS", 5000000)])
    return s


def main():
    root = os.path.join(HERE, "scenarios")
    for name, sc in scenarios().items():
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.txt"), "w") as f:
            f.write(config(sc["bw"], sc["stop"], sc["rk"], sc.get("ecn")))
        with open(os.path.join(d, "topology.txt"), "w") as f:
            f.write(topology(sc["hosts"], sc["bw"]))
        with open(os.path.join(d, "flow.txt"), "w") as f:
            f.write(flows(sc["flows"]))
        with open(os.path.join(d, "trace.txt"), "w") as f:
            f.write("0\n")
        print("wrote", d)


if __name__ == "__main__":
    sys.exit(main())

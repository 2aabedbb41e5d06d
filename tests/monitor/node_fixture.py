#!/usr/bin/env python3
"""A fixture node for `railkit monitor node`: a sysfs tree (tests/fixtures/sysfs/gen_sysfs.py) with
4 ConnectX-7 RoCE ports (mlx5_0..mlx5_3, netdevs ens1np0..ens4np0, driver mlx5_core) and 2 H100 GPUs,
plus the counters the monitor reads: hw_counters/ and counters/ of each port, carrier_changes, AER
files of every NIC and GPU function, and `ethtool -S` text at <root>/ethtool/<netdev>.txt.
mlx5_3 trained at 16 GT/s of 32 (downtrained); GPU1 idles at 2.5 GT/s (a GPU's speed is not judged).

An Advancer thread moves chosen counters at known rates (value = start + rate x elapsed), rewriting
each file atomically every 10 ms. Standard library only.

    node_fixture.py --out DIR      (builds the tree at DIR)
"""
import argparse
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures", "sysfs"))
from gen_sysfs import Builder  # noqa: E402

NICS = [("mlx5_0", "0000:00:07.0", "ens1np0"), ("mlx5_1", "0000:00:08.0", "ens2np0"),
        ("mlx5_2", "0000:00:09.0", "ens3np0"), ("mlx5_3", "0000:00:0a.0", "ens4np0")]
GPUS = ["0000:00:05.0", "0000:00:06.0"]
HW_COUNTERS = ["np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored", "out_of_sequence",
               "packet_seq_err", "local_ack_timeout_err", "out_of_buffer", "rnr_nak_retry_err", "roce_adp_retrans"]
COUNTERS = ["port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "symbol_error", "link_downed"]
ETHTOOL = (["rx_packets", "tx_packets", "rx_discards_phy", "tx_pause_storm_warning_events"] +
           ["%s_prio%d_pause%s" % (d, p, s) for p in range(8) for d in ("rx", "tx") for s in ("", "_duration")])
AER = {"aer_dev_correctable": ["RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "NonFatalErr", "CorrIntErr",
                               "HeaderOF", "TOTAL_ERR_COR"],
       "aer_dev_nonfatal": ["Undefined", "DLP", "SDES", "TLP", "FCP", "CmpltTO", "TOTAL_ERR_NONFATAL"],
       "aer_dev_fatal": ["Undefined", "DLP", "SDES", "TLP", "FCP", "CmpltTO", "TOTAL_ERR_FATAL"]}


def machine():
    nics = []
    for name, bdf, nd in NICS:
        nic = {"nic": bdf, "name": name, "netdev": nd, "ip": "10.9.0.%d" % (len(nics) + 1)}
        if name == "mlx5_3":
            nic["link"] = [32, 16, 16, 16]
        nics.append(nic)
    return {
        "description": "monitor fixture: 2 H100 GPUs and 4 ConnectX-7 RoCE ports on one root bus",
        "hostname": "mon-node-01", "cpu": {"vendor": "GenuineIntel", "family": 6, "model": 143},
        "numa": [{"id": 0, "cpus": "0-7"}], "gdr_module": True,
        "defaults": {"gpu": {"device": "0x2330", "subsystem_device": "0x16c1", "link": [32, 16]},
                     "nic": {"device": "0x1021", "subsystem_device": "0x0041", "link": [32, 16]}},
        "host_bridges": [{"bus": "0000:00", "numa": 0, "devices": [
            {"gpu": GPUS[0]}, {"gpu": GPUS[1], "link": [32, 16, 2.5, 16]}] + nics}],
    }


def write_atomic(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def ethtool_text(values):
    return "NIC statistics:\n" + "".join("     %s: %d\n" % (k, v) for k, v in values.items())


class Node:
    """Paths of a fixture tree's counters."""

    def __init__(self, root):
        self.root = root

    def hw(self, dev, name):
        return os.path.join(self.root, "sys/class/infiniband", dev, "ports/1/hw_counters", name)

    def counter(self, dev, name):
        return os.path.join(self.root, "sys/class/infiniband", dev, "ports/1/counters", name)

    def carrier(self, netdev):
        return os.path.join(self.root, "sys/class/net", netdev, "carrier_changes")

    def ethtool(self, netdev):
        return os.path.join(self.root, "ethtool", netdev + ".txt")

    def aer(self, bdf, file):
        return os.path.join(self.root, "sys/bus/pci/devices", bdf, file)


def build(out):
    """Builds the fixture at `out` (replacing it); returns a Node."""
    Builder(machine(), out).build()
    node = Node(out)
    drivers = os.path.join(out, "sys/bus/pci/drivers/mlx5_core")
    os.makedirs(drivers, exist_ok=True)
    os.makedirs(os.path.join(out, "ethtool"), exist_ok=True)
    for dev, bdf, nd in NICS:
        fn = os.path.realpath(os.path.join(out, "sys/bus/pci/devices", bdf))
        os.symlink(os.path.relpath(drivers, fn), os.path.join(fn, "driver"))
        nd_dir = os.path.realpath(os.path.join(out, "sys/class/net", nd))
        os.symlink(os.path.relpath(fn, nd_dir), os.path.join(nd_dir, "device"))
        for c in HW_COUNTERS:
            write_atomic(node.hw(dev, c), "0\n")
        write_atomic(node.hw(dev, "lifespan"), "12\n")  # a setting, not a counter
        for c in COUNTERS:
            write_atomic(node.counter(dev, c), "0\n")
        write_atomic(node.carrier(nd), "2\n")
        write_atomic(node.ethtool(nd), ethtool_text({k: 0 for k in ETHTOOL}))
    for bdf in [b for _, b, _ in NICS] + GPUS:
        for f, names in AER.items():
            write_atomic(node.aer(bdf, f), "".join("%s 0\n" % n for n in names))
    return node


class Advancer(threading.Thread):
    """Moves counters at known rates while running: `sysfs` maps a file to a rate per second,
    `ethtool` maps (netdev, stat) to a rate per second. Files are rewritten every `period_s`."""

    def __init__(self, node, sysfs=None, ethtool=None, period_s=0.01):
        super().__init__(daemon=True)
        self.node, self.sysfs, self.eth, self.period_s = node, dict(sysfs or {}), dict(ethtool or {}), period_s
        self.stop_event = threading.Event()
        self.t0 = None

    def tick(self):
        dt = time.monotonic() - self.t0
        for path, rate in self.sysfs.items():
            write_atomic(path, "%d\n" % int(rate * dt))
        netdevs = {nd for nd, _ in self.eth}
        for nd in netdevs:
            values = {k: 0 for k in ETHTOOL}
            for (n, stat), rate in self.eth.items():
                if n == nd:
                    values[stat] = int(rate * dt)
            write_atomic(self.node.ethtool(nd), ethtool_text(values))

    def run(self):
        while not self.stop_event.is_set():
            self.tick()
            time.sleep(self.period_s)

    def __enter__(self):
        self.t0 = time.monotonic()
        self.tick()
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        self.join()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    build(ap.parse_args().out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

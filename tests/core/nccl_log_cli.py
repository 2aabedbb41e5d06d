#!/usr/bin/env python3
"""CLI tests of `railkit nccl-log` on the recorded-format logs in tests/fixtures/nccl-logs.

usage: nccl_log_cli.py [RAILKIT_BINARY [FIXTURES_DIR]]
(defaults: build/bin/railkit and tests/fixtures/nccl-logs under the repository root)
Fails loudly when the binary has no `nccl-log` subcommand: it must be registered in
apps/railkit/main.cpp's kSubcommands.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RK = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "railkit")
FIX = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests", "fixtures", "nccl-logs")
failures = []


def run(*args):
    p = subprocess.run([RK, "nccl-log", *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, "" if cond else ": " + detail))
    if not cond:
        failures.append(name)


def doc(*args, rc=0):
    code, out, err = run(*args)
    if code != rc:
        check("rc of nccl-log %s" % " ".join(args), False, "rc %d, expected %d; stderr: %s" % (code, rc, err.strip()))
        return None
    try:
        return json.loads(out)
    except ValueError as e:
        check("JSON of nccl-log %s" % " ".join(args), False, "%s; stdout starts %r" % (e, out[:200]))
        return None


def fx(name):
    return os.path.join(FIX, name)


def main():
    if not os.access(RK, os.X_OK):
        sys.exit("FAIL: no railkit binary at %s" % RK)
    code, out, err = run("--help")
    if code != 0 or "--env" not in out or "--check" not in out:
        sys.exit("FAIL: `railkit nccl-log` is not a subcommand of %s (register setup_nccl_log in "
                 "apps/railkit/main.cpp kSubcommands); rc %d, stderr: %s" % (RK, code, err.strip()))

    d = doc(fx("roce-2x8-pxn"))
    if d:
        for key in ("pxn", "pxn_relays", "direct_net_connections", "gdr", "nics_used", "net", "channels", "patterns",
                    "ring_pxn", "ring_gdr", "tuner_plugin", "nccl_version", "files", "lines", "warnings"):
            check("pxn: has key %s" % key, key in d)
        check("pxn: pxn true", d.get("pxn") is True)
        check("pxn: 256 relays", d.get("pxn_relays") == 256, str(d.get("pxn_relays")))
        check("pxn: gdr", d.get("gdr") is True)
        check("pxn: net IB", d.get("net") == "IB")
        check("pxn: 8 NICs by name", sorted(d.get("nics_used", [])) ==
              sorted(["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]), str(d.get("nics_used")))
        check("pxn: 16 channels", d.get("channels") == 16)
        check("pxn: ring pattern", any(p.get("name") == "ring" and p.get("type") == "NVL/PXN" and "crossNic" in p
                                       and "nChannels" in p and "sameChannels" in p for p in d.get("patterns", [])))
        check("pxn: 16 files", len(d.get("files", [])) == 16)
        check("pxn: no warnings", d.get("warnings") == [], str(d.get("warnings")))

    d = doc(fx("roce-2x8-pxn"), "--env", "NCCL_PXN_DISABLE=1", "--env", "NCCL_IB_HCA=mlx5_0,mlx5_3")
    if d:
        w = d.get("warnings", [])
        check("pxn+env: PXN contradiction", any("NCCL_PXN_DISABLE=1" in x for x in w), str(w))
        check("pxn+env: HCA contradiction", any("NCCL_IB_HCA" in x and "mlx5_11" in x for x in w), str(w))
    code, _, _ = run(fx("roce-2x8-pxn"), "--env", "NCCL_PXN_DISABLE=1", "--check")
    check("pxn+env --check exits 10", code == 10, "rc %d" % code)

    d = doc(fx("roce-2x8-nopxn"), "--env", "NCCL_PXN_DISABLE=1", "--check")
    if d:
        check("nopxn: pxn false", d.get("pxn") is False)
        check("nopxn: 0 relays", d.get("pxn_relays") == 0)
        check("nopxn: 288 direct", d.get("direct_net_connections") == 288)
        check("nopxn: no warnings", d.get("warnings") == [], str(d.get("warnings")))

    d = doc(fx("ib-2x4-nogdr-tuner"))
    if d:
        check("nogdr: gdr false", d.get("gdr") is False)
        check("nogdr: tuner railkit", d.get("tuner_plugin") == "railkit")
        check("nogdr: 4 NICs", d.get("nics_used") == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"], str(d.get("nics_used")))
        check("nogdr: env from log", d.get("env_from_log", {}).get("NCCL_NET_GDR_LEVEL") == "LOC")

    d = doc(fx("roce-2x8-pxn"), "--env", "NCCL_NET_GDR_LEVEL=LOC")
    if d:
        check("gdr contradiction", any("NCCL_NET_GDR_LEVEL" in x for x in d.get("warnings", [])), str(d.get("warnings")))

    d = doc(fx("socket-2x1"))
    if d:
        check("socket: net", d.get("net") == "Socket")
        check("socket: NICs", d.get("nics_used") == ["eth0", "eth1"], str(d.get("nics_used")))
        check("socket: no gdr/pxn", d.get("gdr") is False and d.get("pxn") is False)

    # Single files and several directories at once.
    d = doc(os.path.join(fx("socket-2x1"), "nccl.cpu-e01.9100.log"), fx("interleaved"))
    if d:
        check("mixed inputs: 2 files", len(d.get("files", [])) == 2, str(d.get("files")))

    d = doc(fx("garbled"))
    if d:
        check("garbled: warnings", len(d.get("warnings", [])) >= 2, str(d.get("warnings")))
        check("garbled: unmapped NIC kept by index", d.get("nics_used") == ["IB/1"], str(d.get("nics_used")))

    code, out, err = run(fx("no-such-file.log"))
    check("missing file exits 6", code == 6, "rc %d" % code)
    check("missing file is named", "no-such-file.log" in err, err.strip())
    code, _, err = run(fx("socket-2x1"), "--env", "NOEQUALS")
    check("bad --env exits 6", code == 6 and "--env" in err, "rc %d: %s" % (code, err.strip()))
    code, _, _ = run()
    check("no files exits 6", code == 6, "rc %d" % code)

    if failures:
        sys.exit("FAIL: %d check(s): %s" % (len(failures), ", ".join(failures)))
    print("all nccl-log CLI checks passed")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""CLI tests of `railkit nccl-log` on the recorded-format logs in tests/fixtures/nccl-logs.

usage: nccl_log_cli.py [RAILKIT_BINARY [FIXTURES_DIR]]
(defaults: build/bin/railkit and tests/fixtures/nccl-logs under the repository root)
Fails loudly when the binary has no `nccl-log` subcommand: it must be registered in
apps/railkit/main.cpp's kSubcommands.
"""
import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RK = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "railkit")
FIX = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests", "fixtures", "nccl-logs")
failures = []


def run(*args):
    try:
        p = subprocess.run([RK, "nccl-log", *args], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return -1, "", "timed out after 60 s"
    return p.returncode, p.stdout, p.stderr


def run_on_terminal(*args):
    """Runs nccl-log with stdout on a pseudo-terminal; returns (rc, stdout with "\n" line ends)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([RK, "nccl-log", *args], stdout=slave, stderr=subprocess.PIPE, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    p.communicate(timeout=60)
    os.close(master)
    return p.returncode, b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")


NATURAL = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]


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


def write_log(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def ib_list_line(entries):
    return "h1:1:1 [0] NCCL INFO NET/IB : Using %s [RO]; OOB eth0:10.0.0.1<0>" % " ".join(entries)


def send_line(dev):
    return "h1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/%d" % dev


def generated_logs():
    """Logs written here: a NIC list cut short by NCCL's 2047-character line limit, and one very
    long NIC list (each step linear; the 60 s timeout of run() is the bound, times are printed)."""
    tmp = tempfile.mkdtemp(prefix="nccl_log_cli.")
    try:
        cut = os.path.join(tmp, "truncated.log")
        write_log(cut, ["h1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5"]
                  + [send_line(d) for d in range(4)])
        code, out, err = run(cut, "--env", "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "--check")
        check("truncated NIC entry: no false contradiction (rc 0)", code == 0, "rc %d: %s %s" % (code, err.strip(), out[:600]))
        d = doc(cut)
        if d:
            check("truncated NIC entry: no phantom NIC mlx5", d.get("nics_available") == ["mlx5_0", "mlx5_1", "mlx5_2"],
                  str(d.get("nics_available")))
            check("truncated NIC entry: warning names it", any("'[3]mlx5'" in w for w in d.get("warnings", [])),
                  str(d.get("warnings")))

        empties = []
        for i in range(2000):
            empties.append(os.path.join(tmp, "empty-%d.log" % i))
            write_log(empties[-1], ["not an NCCL line"])
        code, out, err = run("--format", "text", *empties)
        lines = [l for l in out.splitlines() if "no NCCL log lines found" in l]
        check("2000 warnings of one kind: one line with the count", len(lines) == 1 and "1999 more like it" in lines[0],
              "rc %d, %d lines: %s" % (code, len(lines), lines[:3]))

        times = {}
        for n in (20000, 200000):
            big = os.path.join(tmp, "long-%d.log" % n)
            write_log(big, [ib_list_line("[%d]mlx5_%d:1/RoCE" % (i, i) for i in range(n))]
                      + [send_line(i) for i in range(0, n, 10)])
            start = time.monotonic()
            code, out, err = run(big, "--format", "text", "--env", "NCCL_IB_HCA=^mlx5_1", "--check")
            times[n] = time.monotonic() - start
            check("long NIC list (%d entries): read and checked in time (exit 10)" % n, code == 10,
                  "rc %d: %s" % (code, err.strip()))
            check("long NIC list (%d entries): every 10th NIC used" % n,
                  ("NICs used      %d: mlx5_0, mlx5_10, " % (n // 10)) in out, out[:300])
        print("info: long NIC list, 200k vs 20k entries: %.2f s vs %.2f s (ratio %.1f; linear is about 10)"
              % (times[200000], times[20000], times[200000] / max(times[20000], 1e-3)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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
        check("pxn: net IB (NCCL's net plugin)", d.get("net") == "IB", str(d.get("net")))
        check("pxn: transport RoCE (the lines say mlx5_0:1/RoCE)", d.get("transport") == "RoCE", str(d.get("transport")))
        check("pxn: 8 NICs used, natural order", d.get("nics_used") == NATURAL, str(d.get("nics_used")))
        check("pxn: 8 NICs listed, natural order", d.get("nics_available") == NATURAL, str(d.get("nics_available")))
        check("pxn: bootstrap interface eth0", d.get("bootstrap_interfaces") == ["eth0"], str(d.get("bootstrap_interfaces")))
        check("pxn: NET/IB OOB interface eth0", d.get("ib_oob_interfaces") == ["eth0"], str(d.get("ib_oob_interfaces")))
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
        check("nogdr: transport IB", d.get("net") == "IB" and d.get("transport") == "IB", str(d.get("transport")))
        check("nogdr: no Bootstrap line under INIT,NET,GRAPH", d.get("bootstrap_interfaces") == [],
              str(d.get("bootstrap_interfaces")))
        check("nogdr: NET/IB OOB interface ib0", d.get("ib_oob_interfaces") == ["ib0"], str(d.get("ib_oob_interfaces")))

    d = doc(fx("roce-2x8-pxn"), "--env", "NCCL_NET_GDR_LEVEL=LOC")
    if d:
        check("gdr contradiction", any("NCCL_NET_GDR_LEVEL" in x for x in d.get("warnings", [])), str(d.get("warnings")))

    d = doc(fx("socket-2x1"))
    if d:
        check("socket: net", d.get("net") == "Socket")
        check("socket: NICs", d.get("nics_used") == ["eth0", "eth1"], str(d.get("nics_used")))
        check("socket: no gdr/pxn", d.get("gdr") is False and d.get("pxn") is False)
        check("socket: transport Socket", d.get("transport") == "Socket", str(d.get("transport")))
        check("socket: bootstrap interface eth0", d.get("bootstrap_interfaces") == ["eth0"], str(d.get("bootstrap_interfaces")))

    d = doc(fx("roce-2x8-pxn"), "--env", "NCCL_IB_DISABLE=1")
    if d:
        check("IB_DISABLE contradiction names RoCE", any("NET/IB (RoCE)" in x for x in d.get("contradictions", [])),
              str(d.get("contradictions")))

    # Text: the default on a terminal, or asked for; JSON off a terminal (scripts) or asked for.
    code, out, err = run(fx("roce-2x8-pxn"), "--format", "text")
    check("text: rc 0", code == 0, "rc %d: %s" % (code, err.strip()))
    lines = out.splitlines()
    check("text: not JSON", not out.lstrip().startswith("{"), out[:200])
    check("text: network over RoCE", "network        NET/IB over RoCE" in lines, out)
    check("text: NICs in natural order", "NICs used      8: " + ", ".join(NATURAL) in lines, out)
    check("text: bootstrap eth0", "bootstrap      eth0" in lines, out)
    check("text: PXN", any(l.startswith("PXN            on: 256 relayed") for l in lines), out)
    check("text: no contradictions", "contradictions none found" in lines, out)
    check("text: short", len(lines) <= 12, "%d lines" % len(lines))
    code, out, _ = run(fx("ib-2x4-nogdr-tuner"), "--format", "text", "--env", "NCCL_IB_HCA=mlx5_0", "--check")
    check("text --check exits 10", code == 10, "rc %d" % code)
    check("text: contradiction line", "CONTRADICTION  NCCL_IB_HCA=mlx5_0 but NIC(s) outside it carried traffic: "
          "mlx5_1, mlx5_2, mlx5_3" in out.splitlines(), out)
    check("text: bootstrap not logged, OOB named", "bootstrap      not in the log" in out and "interface: ib0" in out, out)
    code, out = run_on_terminal(fx("roce-2x8-pxn"))
    check("terminal: text by default", code == 0 and "network        NET/IB over RoCE" in out.splitlines(), "rc %d: %r" % (code, out[:300]))
    code, out = run_on_terminal(fx("roce-2x8-pxn"), "--format", "json")
    try:
        tj = json.loads(out)
    except ValueError:
        tj = None
    check("terminal: --format json is JSON", code == 0 and tj is not None and tj.get("transport") == "RoCE", out[:200])
    d = doc(fx("roce-2x8-pxn"), "--format", "json")
    check("--format json off a terminal", d is not None and d.get("transport") == "RoCE")
    code, _, err = run(fx("roce-2x8-pxn"), "--format", "yaml")
    check("bad --format exits 6", code == 6 and "--format" in err, "rc %d: %s" % (code, err.strip()))

    # Single files and several directories at once.
    d = doc(os.path.join(fx("socket-2x1"), "nccl.cpu-e01.9100.log"), fx("interleaved"))
    if d:
        check("mixed inputs: 2 files", len(d.get("files", [])) == 2, str(d.get("files")))

    d = doc(fx("garbled"))
    if d:
        check("garbled: warnings", len(d.get("warnings", [])) >= 2, str(d.get("warnings")))
        check("garbled: unmapped NIC kept by index", d.get("nics_used") == ["IB/1"], str(d.get("nics_used")))

    generated_logs()

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

#!/usr/bin/env python3
"""Runs a railkit command for a CLI test and checks its exit code and output.

usage: run_cli.py --expect-rc N [--expect-out TEXT]... [--expect-not-out TEXT]... [--expect-err TEXT]... [--expect-first TEXT]
                  [--json] [--nccl-xml NGPU MINNET] [--compare-fixtures DIR NAME...] -- COMMAND...
--expect-first TEXT: the first line of the differences (the line after "Differences") holds TEXT.
--compare-fixtures probes each named fixture to JSON (as if captured on separate nodes named
node<i>-<fixture>) and appends `topo --compare <files>` to COMMAND.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("missing -- before the command")
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--expect-rc", type=int, required=True)
    ap.add_argument("--expect-out", action="append", default=[])
    ap.add_argument("--expect-not-out", action="append", default=[])
    ap.add_argument("--expect-err", action="append", default=[], help="stderr holds TEXT, on one line")
    ap.add_argument("--expect-first")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--nccl-xml", nargs=2, type=int)
    ap.add_argument("--compare-fixtures", nargs="+")
    args = ap.parse_args(argv[:cut])
    cmd = argv[cut + 1:]
    with tempfile.TemporaryDirectory() as tmp:
        if args.compare_fixtures:
            fixdir, names = args.compare_fixtures[0], args.compare_fixtures[1:]
            files = []
            for i, name in enumerate(names):
                out = subprocess.run(cmd + ["topo", "--root", os.path.join(fixdir, name), "--format", "json"],
                                     capture_output=True, text=True, check=True).stdout
                doc = json.loads(out)
                doc["host"] = "node%d-%s" % (i, name)
                path = os.path.join(tmp, "node%d.json" % i)
                with open(path, "w") as f:
                    json.dump(doc, f)
                files.append(path)
            cmd = cmd + ["topo", "--compare"] + files
        p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    ok = True
    if p.returncode != args.expect_rc:
        print("FAIL: exit code %d, expected %d" % (p.returncode, args.expect_rc))
        ok = False
    for text in args.expect_out:
        if text not in p.stdout:
            print("FAIL: output lacks %r" % text)
            ok = False
    err_lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    for text in args.expect_err:
        if text not in p.stderr or len(err_lines) != 1:
            print("FAIL: stderr is not one line holding %r" % text)
            ok = False
    for text in args.expect_not_out:
        if text in p.stdout:
            print("FAIL: output has %r" % text)
            ok = False
    if args.expect_first:
        lines = p.stdout.splitlines()
        heads = [i for i, l in enumerate(lines) if l.startswith("Differences")]
        first = lines[heads[0] + 1] if heads and heads[0] + 1 < len(lines) else ""
        if args.expect_first not in first:
            print("FAIL: first difference is %r, expected it to hold %r" % (first, args.expect_first))
            ok = False
    if args.json:
        try:
            json.loads(p.stdout)
        except ValueError as e:
            print("FAIL: output is not JSON: %s" % e)
            ok = False
    if args.nccl_xml:
        ngpu, min_net = args.nccl_xml
        try:
            root = ET.fromstring(p.stdout)
            gpus = root.findall(".//gpu")
            nets = root.findall(".//nic/net")
            if root.tag != "system" or root.get("version") != "1":
                print("FAIL: root element is %s version %s" % (root.tag, root.get("version")))
                ok = False
            if len(root.findall("cpu")) == 0:
                print("FAIL: no cpu element")
                ok = False
            if len(gpus) != ngpu or len(nets) < min_net:
                print("FAIL: %d gpu and %d net elements, expected %d and >= %d" % (len(gpus), len(nets), ngpu, min_net))
                ok = False
            for pci in root.iter("pci"):
                if not pci.get("busid"):
                    print("FAIL: pci element without busid")
                    ok = False
        except ET.ParseError as e:
            print("FAIL: XML does not parse: %s" % e)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The time budget of scripts/test.sh: prints the time of each phase and of each ctest run, and
fails (exit 1) when the growth it guards against happened, naming the offenders:
  - a case labelled `unit` took over --unit-limit-s (2 s): unit cases must stay fast, so a slow
    path (a quadratic parse, a sleep) shows up in the submission that adds it;
  - any other case took over --case-limit-s (60 s), but for the slow tier's (label slow: soak
    checks that run as long as they are told);
  - the whole run took over --total-limit-s (25 minutes).

A case over its limit in the parallel run is timed again alone (ctest -I N,N in its build, when
--build names that run's directory): these machines are shared and noisy, so it counts only when it
is over again; the table shows both times.

usage: test_budget.py --reports DIR --total-s SECONDS [--build RUN=BUILD_DIR]... [--unit-limit-s 2]
                      [--case-limit-s 60] [--total-limit-s 1500]
DIR holds what scripts/test.sh wrote: phases.txt ("NAME SECONDS" lines), and per ctest run NAME.xml
(ctest --output-junit) with NAME.tests.json (ctest --show-only=json-v1, for the labels and the
test numbers), and per build NAME.ninja_log (what it compiled in this run).
Exit 0 within budget, 1 over it, 2 on bad input.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def labels_of(tests_json):
    """test name -> (set of labels, ctest test number), from `ctest --show-only=json-v1` (tests in
    the order ctest numbers them)."""
    with open(tests_json) as f:
        doc = json.load(f)
    out = {}
    for number, t in enumerate(doc.get("tests", []), start=1):
        labels = set()
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                labels.update(p.get("value") or [])
        out[t["name"]] = (labels, number)
    return out


def time_alone(build_dir, number, name):
    """Runs test `number` of `build_dir` alone; its time in seconds, or None when it did not pass
    or another test ran."""
    with tempfile.TemporaryDirectory(prefix="railkit-budget-") as tmp:
        junit = os.path.join(tmp, "alone.xml")
        subprocess.run(["ctest", "--test-dir", build_dir, "-I", f"{number},{number}", "--output-junit", junit],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if not os.path.exists(junit):
            return None
        cases = cases_of(junit)
    if len(cases) != 1 or cases[0][0] != name or cases[0][2] == "fail":
        return None
    return cases[0][1]


def judge_run(a, run, build_dir):
    """Prints one ctest run's summary; returns its cases over their limit (also over when run alone)."""
    labels = labels_of(os.path.join(a.reports, run + ".tests.json"))
    cases = [c for c in cases_of(os.path.join(a.reports, run + ".xml")) if c[2] != "notrun"]
    by_label, over, excused = {}, [], []
    for name, secs, _ in cases:
        case_labels, number = labels.get(name, (set(), 0))
        for lab in case_labels or {"(none)"}:
            n, s = by_label.get(lab, (0, 0.0))
            by_label[lab] = (n + 1, s + secs)
        unit = "unit" in case_labels
        limit = a.unit_limit_s if unit else a.case_limit_s
        if secs <= limit or "slow" in case_labels:
            continue
        alone = time_alone(build_dir, number, name) if build_dir and number else None
        what = f"{run}: {name} took {secs:.1f} s" + (f", {alone:.1f} s alone" if alone is not None else "")
        what += f" (limit {limit:g} s for {'a unit case' if unit else 'a case'})"
        (excused if alone is not None and alone <= limit else over).append(what)
    failed = [name for name, _, status in cases if status == "fail"]
    print(f"ctest {run}: {len(cases)} cases, {len(failed)} failed, {sum(c[1] for c in cases):.0f} s of test time; "
          "by label " + ", ".join(f"{lab} {n} ({s:.0f} s)" for lab, (n, s) in sorted(by_label.items())))
    for name in failed:
        print(f"  FAILED {name}")
    for name, secs, _ in sorted(cases, key=lambda c: -c[1])[:5]:
        print(f"  {secs:6.1f} s  {name}")
    for e in excused:
        print(f"  over in the parallel run, within its limit alone (load, not counted): {e}")
    return over


def cases_of(junit_xml):
    """[(name, seconds, status)] of the cases ctest ran, from its JUnit file."""
    root = ET.parse(junit_xml).getroot()
    out = []
    for tc in root.iter("testcase"):
        status = tc.get("status", "run")
        out.append((tc.get("name"), float(tc.get("time") or 0.0), status))
    return out


def print_build(path, name):
    """What a build compiled in this run, in CPU seconds per target group (the top folder; tests/X
    for the tests), from the lines its .ninja_log gained (start ms, end ms, mtime, output, hash)."""
    groups = {}
    steps = 0
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 4:
                continue
            secs = (int(parts[1]) - int(parts[0])) / 1000.0
            out = parts[3].split("/")
            key = "/".join(out[:2]) if out[0] == "tests" else out[0]
            if key in ("bin", "lib"):
                key = "link"
            elif not out[0]:
                key = "custom commands"  # outputs named by absolute path (generated fixtures)
            groups[key] = groups.get(key, 0.0) + secs
            steps += 1
    top = [(k, v) for k, v in sorted(groups.items(), key=lambda kv: -kv[1]) if v >= 1]
    print(f"build {name}: {steps} steps, {sum(groups.values()):.0f} CPU-s" +
          (": " + ", ".join(f"{k} {v:.0f}" for k, v in top) if top else " (nothing compiled)"))


def fmt_s(s):
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%.1fs" % s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", required=True)
    ap.add_argument("--total-s", type=float, required=True)
    ap.add_argument("--unit-limit-s", type=float, default=2.0)
    ap.add_argument("--case-limit-s", type=float, default=60.0)
    ap.add_argument("--total-limit-s", type=float, default=1500.0)
    ap.add_argument("--build", action="append", default=[], metavar="RUN=BUILD_DIR",
                    help="the build directory of ctest run RUN, to time an offender again alone")
    a = ap.parse_args()
    if not os.path.isdir(a.reports):
        print(f"test_budget.py: {a.reports}: no such directory", file=sys.stderr)
        return 2

    print("test.sh phases:")
    phases = os.path.join(a.reports, "phases.txt")
    if os.path.exists(phases):
        with open(phases) as f:
            for line in f:
                name, _, secs = line.rstrip("\n").rpartition(" ")
                print(f"  {name:<40} {fmt_s(float(secs)):>8}")
    print(f"  {'total':<40} {fmt_s(a.total_s):>8}")

    for name in sorted(n for n in os.listdir(a.reports) if n.endswith(".ninja_log")):
        print_build(os.path.join(a.reports, name), name[:-len(".ninja_log")])

    builds = dict(b.split("=", 1) for b in a.build)
    over = []
    for run in sorted(n[:-4] for n in os.listdir(a.reports) if n.endswith(".xml")):
        over += judge_run(a, run, builds.get(run))
    if a.total_s > a.total_limit_s:
        over.append(f"the whole run took {fmt_s(a.total_s)} (limit {fmt_s(a.total_limit_s)})")
    if over:
        print("test.sh: OVER BUDGET:")
        for o in over:
            print("  " + o)
        return 1
    print(f"test.sh: within budget (unit case <= {a.unit_limit_s:g} s, case <= {a.case_limit_s:g} s, "
          f"run <= {fmt_s(a.total_limit_s)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

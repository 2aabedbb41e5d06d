#!/usr/bin/env python3
"""railkit's Prometheus rules under promtool (Debian's prometheus package): `promtool check rules`
on monitor/prometheus/railkit.rules.yml, `promtool test rules` on railkit.rules.test.yml (each alert
fires on its series and stays silent on the clean ones), every alert of the contract present with
`for:`, a severity and its annotations and tested both ways, and the tests failing when a rule is
broken (a pause storm threshold raised out of reach).

    promtool_rules.py --case NAME
    promtool_rules.py --list

Exit 0 pass, 1 fail, 77 skipped (no promtool). Standard library and PyYAML; ctest passes
--railkit, which is not used.
"""
import os
import shutil
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import metric_names as mn  # noqa: E402
from casekit import Cases, Skip, check, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add

# The alerts monitor/README.md section 4 promises, each for a signal or a verdict of sections 1-3.
CONTRACT_ALERTS = ["RailkitPauseStorm", "RailkitCnpSurge", "RailkitRetransmitSurge", "RailkitLinkFlap",
                   "RailkitPcieDowntrained", "RailkitRailRateOutlier", "RailkitGpuXid", "RailkitGpuEccUncorrected",
                   "RailkitStraggler", "RailkitNicLag", "RailkitCommHang", "RailkitCollectiveStalled",
                   "RailkitMonitorDown", "RailkitProfilerOff"]
SEVERITIES = {"critical", "warning", "info"}


def promtool():
    path = shutil.which("promtool")
    if not path:
        raise Skip("promtool is not installed (Debian's prometheus package)")
    return path


def run(argv, cwd):
    p = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=120)
    return p.returncode, p.stdout + p.stderr


def alert_rules(doc):
    return [r for g in doc["groups"] for r in g["rules"] if "alert" in r]


@case
def check_rules(ctx):
    rc, out = run([promtool(), "check", "rules", mn.RULES], os.path.dirname(mn.RULES))
    check(rc == 0 and "SUCCESS" in out, "promtool check rules: rc %d:\n%s" % (rc, out))
    print(out.strip())


@case
def test_rules(ctx):
    rc, out = run([promtool(), "test", "rules", os.path.basename(mn.RULES_TEST)], os.path.dirname(mn.RULES_TEST))
    check(rc == 0 and "SUCCESS" in out, "promtool test rules: rc %d:\n%s" % (rc, out))
    print(out.strip())


@case
def every_alert_annotated_and_tested_both_ways(ctx):
    """Each alert of the contract exists; each alert has for:, a severity and a summary and a
    description; the tests expect each to fire somewhere and to stay silent somewhere."""
    rules = yaml.safe_load(open(mn.RULES))
    tests = yaml.safe_load(open(mn.RULES_TEST))
    alerts = alert_rules(rules)
    names = {r["alert"] for r in alerts}
    missing = [a for a in CONTRACT_ALERTS if a not in names]
    check(not missing, "alerts of the contract missing from the rules: %s" % missing)
    for r in alerts:
        where = "%s (%s)" % (r["alert"], r["expr"].strip().splitlines()[0])
        check("for" in r, "%s: no for:" % where)
        check(r.get("labels", {}).get("severity") in SEVERITIES, "%s: severity %r" % (where, r.get("labels", {}).get("severity")))
        ann = r.get("annotations", {})
        check(ann.get("summary") and ann.get("description"), "%s: no summary or description" % where)
        check("{{ $labels." in ann["summary"], "%s: the summary names nothing from the labels: %r" % (where, ann["summary"]))
    fired, silent = set(), set()
    for t in tests["tests"]:
        for a in t.get("alert_rule_test", []):
            (fired if a.get("exp_alerts") else silent).add(a["alertname"])
    check(not names - fired, "alerts no test expects to fire: %s" % sorted(names - fired))
    check(not names - silent, "alerts no test expects to stay silent: %s" % sorted(names - silent))
    # Every rule of an alert with several rules (severities, causes) fires in some test.
    for r in alerts:
        labels = r.get("labels", {})
        check(any(all(e.get("exp_labels", {}).get(k) == v for k, v in labels.items())
                  for t in tests["tests"] for a in t.get("alert_rule_test", []) if a["alertname"] == r["alert"]
                  for e in a.get("exp_alerts") or []),
              "%s with labels %s: no test expects it to fire" % (r["alert"], labels))
    print("%d alert rules (%d alerts), each tested firing and silent" % (len(alerts), len(names)))


@case
def a_broken_pause_storm_rule_fails_the_tests(ctx):
    """The tests can fail: with the pause-storm thresholds raised out of reach (ratio 0.1 -> 0.9,
    10000 -> 1e9 frames/s), promtool test rules fails and names RailkitPauseStorm."""
    tool = promtool()
    text = open(mn.RULES).read()
    broken = text.replace("railkit_node_pause_duration_ratio > 0.1", "railkit_node_pause_duration_ratio > 0.9") \
                 .replace("railkit:node_pause_frames:rate2m > 10000", "railkit:node_pause_frames:rate2m > 1e9")
    check(broken.count("> 0.9") >= 1 and "> 1e9" in broken, "the pause storm expressions changed; update this case")
    with open(os.path.join(ctx.tmp, os.path.basename(mn.RULES)), "w") as f:
        f.write(broken)
    shutil.copy(mn.RULES_TEST, ctx.tmp)
    rc, out = run([tool, "test", "rules", os.path.basename(mn.RULES_TEST)], ctx.tmp)
    check(rc != 0, "promtool test rules passed with the pause storm thresholds out of reach:\n%s" % out)
    failing = {line.split("alertname:")[1].split(",")[0].strip() for line in out.splitlines() if "alertname:" in line}
    check(failing == {"RailkitPauseStorm"}, "expected only RailkitPauseStorm to fail, got %s:\n%s" % (sorted(failing), out))
    print("promtool test rules fails on the broken rule, naming RailkitPauseStorm only")


class Ctx:
    def __init__(self, railkit, bench, tmp):  # railkit: unused (ctest passes it to every case script)
        self.tmp = tmp


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-promtool-"))

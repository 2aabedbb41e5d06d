#!/usr/bin/env python3
"""Rewrites the exp_annotations of railkit.rules.test.yml from what promtool renders.

promtool compares an alert's annotations as well as its labels, so a change of wording in
railkit.rules.yml fails the tests until the expected annotations follow. After editing the rules:

    monitor/prometheus/refresh_test_annotations.py        # rewrites the test file in place
    git diff monitor/prometheus/railkit.rules.test.yml    # read every changed annotation

Only the annotations of expected alerts whose labels promtool found exactly are rewritten; an
expected alert that did not fire is left as it is and named on stderr (fix the rule or the test).
Needs promtool and PyYAML. Exit 0 when the file was rewritten and the tests pass, 1 otherwise.
"""
import json
import os
import re
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TEST = os.path.join(HERE, "railkit.rules.test.yml")
PAIR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def unquote(pairs):
    return {k: json.loads('"%s"' % v) for k, v in PAIR.findall(pairs)}


def got_alerts(text):
    """(test name, alertname, eval time) -> [(labels, annotations)] of promtool's failure report."""
    got, key, side = {}, None, None
    lines = text.splitlines()
    name = None
    for i, line in enumerate(lines):
        m = re.match(r"\s*name: (.*),$", line)
        if m:
            name = m.group(1)
        m = re.match(r"\s*alertname: (\w+), time: (\S+), $", line)
        if m:
            key, side = (name, m.group(1), m.group(2)), None
        if line.strip().startswith("got:["):
            side = "got"
        elif line.strip().startswith("exp:["):
            side = "exp"
        m = re.match(r"\s*Labels:\{(.*)\},?$", line)
        if m and side == "got":
            a = re.match(r"\s*Annotations:\{(.*)\},?$", lines[i + 1])
            got.setdefault(key, []).append((unquote(m.group(1)), unquote(a.group(1)) if a else {}))
    return got


def rewrite(text, got):
    """The test file with the annotations of the expected alerts promtool reported replaced by what
    it rendered; and the expected alerts of failing tests that promtool did not find."""
    out, missing = [], []
    name = alert = when = None
    skip_deeper_than = None
    replaced = False  # the last exp_labels line got new annotations: drop its old ones
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if skip_deeper_than is not None:
            if line.strip() and indent > skip_deeper_than:
                continue
            skip_deeper_than = None
        m = re.match(r"(\s*)exp_annotations:", line)
        if m and replaced:
            skip_deeper_than = len(m.group(1))
            replaced = False
            continue
        replaced = False
        out.append(line)
        m = re.match(r"\s*- name: (.*)$", line)
        if m:
            name = m.group(1)
        m = re.match(r"\s*- eval_time: (\S+)$", line)
        if m:
            when = m.group(1)
        m = re.match(r"\s*alertname: (\w+)$", line)
        if m:
            alert = m.group(1)
        m = re.match(r"(\s*)- exp_labels: (\{.*\})$", line)
        if m and (name, alert, when) in got:
            want = {k: str(v) for k, v in yaml.safe_load(m.group(2)).items()}
            want.setdefault("alertname", alert)
            found = [a for labels, a in got[(name, alert, when)] if labels == want]
            if len(found) != 1:
                missing.append("%s: %s at %s: %s" % (name, alert, when, want))
                continue
            pad = m.group(1) + "  "
            out.append(pad + "exp_annotations:")
            for k in sorted(found[0]):
                out.append(pad + "  %s: %s" % (k, json.dumps(found[0][k], ensure_ascii=False)))
            replaced = True
    return "\n".join(out) + "\n", missing


def main():
    p = subprocess.run(["promtool", "test", "rules", TEST], capture_output=True, text=True, cwd=HERE)
    if p.returncode == 0:
        print("railkit.rules.test.yml: the tests pass, nothing to refresh")
        return 0
    text, missing = rewrite(open(TEST).read(), got_alerts(p.stdout + p.stderr))
    with open(TEST, "w") as f:
        f.write(text)
    for m in missing:
        print("not found, left as it was: %s" % m, file=sys.stderr)
    p = subprocess.run(["promtool", "test", "rules", TEST], capture_output=True, text=True, cwd=HERE)
    sys.stdout.write(p.stdout + p.stderr)
    return 0 if p.returncode == 0 and not missing else 1


if __name__ == "__main__":
    sys.exit(main())

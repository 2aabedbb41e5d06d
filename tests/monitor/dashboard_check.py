#!/usr/bin/env python3
"""The Grafana dashboard (monitor/grafana/railkit.json) and the rules (monitor/prometheus/
railkit.rules.yml) read only metrics railkit exports: every query of every panel, every templating
query and every rule expression names at least one metric, and only names that the contract
(monitor/README.md sections 1-3) or monitor/'s sources export, or that the rules record
(tests/monitor/metric_names.py). The dashboard is valid JSON of the shape Grafana imports, and its
queries parse (promtool check rules on them, Grafana's variables substituted).

    dashboard_check.py --case NAME [--names contract|sources|both] [--exposition FILE]...
    dashboard_check.py --list
    dashboard_check.py --report            # which names each source gives, and what reads them

--names picks where the exported names come from (default both); --exposition adds the names of
a real exporter's output (textfile or /metrics); ctest passes --railkit, which is not used.
Exit 0 pass, 1 fail, 77 skipped. Standard library and PyYAML.
"""
import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import metric_names as mn  # noqa: E402
from casekit import SKIP, Cases, Skip, check, listing  # noqa: E402

CASES = Cases()
case = CASES.add

# Values Grafana gives its variables, for checking that the queries parse.
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__interval": "1m", "$__range": "1h", "${__range}": "1h",
                     "$job": ".*", "$host": ".*", "$device": ".*"}


class Ctx:
    def __init__(self, names_from, expositions, tmp):
        self.names_from = names_from
        self.expositions = expositions
        self.tmp = tmp

    def exported(self):
        names = mn.names(self.names_from)
        for path in self.expositions:
            names |= {n for n in mn.exposition_names(open(path).read()) if n.startswith("railkit_")}
        return names

    def allowed(self, rules_doc):
        return self.exported() | mn.recorded_names(rules_doc) | mn.PROMETHEUS_OWN


def load_dashboard(path=mn.DASHBOARD):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_rules(path=mn.RULES):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def all_panels(dash):
    """Every panel, rows' nested panels included."""
    out = []
    for p in dash.get("panels", []):
        out.append(p)
        out += p.get("panels", [])
    return out


def templating_expr(query):
    """The PromQL of a Grafana Prometheus variable query: label_values(EXPR, label) -> EXPR,
    query_result(EXPR) -> EXPR; label_values(label) (every series) has none."""
    q = query.get("query", "") if isinstance(query, dict) else (query or "")
    q = q.strip()
    m = re.match(r"label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)$", q, re.S)
    if m:
        return m.group(1)
    m = re.match(r"query_result\((.*)\)$", q, re.S)
    if m:
        return m.group(1)
    if re.match(r"label_values\(\s*[A-Za-z_][A-Za-z0-9_]*\s*\)$", q):
        return ""
    return q


def dashboard_exprs(dash):
    """(where, expr) of every panel target and every query variable."""
    out = []
    for p in all_panels(dash):
        for t in p.get("targets", []):
            out.append(("panel %r target %s" % (p.get("title"), t.get("refId")), t.get("expr", "")))
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            out.append(("variable $%s" % v.get("name"), templating_expr(v.get("query"))))
    return out


def rules_exprs(rules_doc):
    out = []
    for g in rules_doc.get("groups", []):
        for r in g.get("rules", []):
            out.append(("group %s rule %s" % (g.get("name"), r.get("alert") or r.get("record")), r.get("expr", "")))
    return out


def dashboard_shape_problems(dash):
    """What Grafana's import needs and what the issue asks for: a title, a uid, a schemaVersion near
    38, the variables job, host and device, the rows Job, Node and Rail, unique panel ids, and panels
    with a datasource, a grid position and targets with an expr and a refId."""
    problems = []
    for key in ("title", "uid", "schemaVersion", "panels", "templating"):
        if key not in dash:
            problems.append("no %s" % key)
    if not 36 <= dash.get("schemaVersion", 0) <= 41:
        problems.append("schemaVersion %r, expected about 38" % dash.get("schemaVersion"))
    variables = {v.get("name") for v in dash.get("templating", {}).get("list", [])}
    for v in ("job", "host", "device"):
        if v not in variables:
            problems.append("no templating variable %s" % v)
    rows = [p.get("title", "") for p in all_panels(dash) if p.get("type") == "row"]
    for r in ("Job", "Node", "Rail"):
        if not any(t.startswith(r) for t in rows):
            problems.append("no row %s (rows: %s)" % (r, rows))
    ids = [p.get("id") for p in all_panels(dash)]
    if len(ids) != len(set(ids)) or None in ids:
        problems.append("panel ids missing or repeated: %s" % ids)
    for p in all_panels(dash):
        if p.get("type") == "row":
            continue
        title = p.get("title")
        if not p.get("datasource"):
            problems.append("panel %r: no datasource" % title)
        if not all(k in p.get("gridPos", {}) for k in ("h", "w", "x", "y")):
            problems.append("panel %r: no gridPos" % title)
        if not p.get("targets"):
            problems.append("panel %r: no targets" % title)
        for t in p.get("targets", []):
            if not t.get("expr") or not t.get("refId"):
                problems.append("panel %r: a target without expr or refId" % title)
    return problems


def substitute(expr):
    for k in sorted(GRAFANA_VARIABLES, key=len, reverse=True):
        expr = expr.replace(k, GRAFANA_VARIABLES[k])
    return expr


@case
def dashboard_is_valid_json(ctx):
    try:
        dash = load_dashboard()
    except ValueError as e:
        raise AssertionError("monitor/grafana/railkit.json is not valid JSON: %s" % e)
    problems = dashboard_shape_problems(dash)
    check(not problems, "dashboard: " + "; ".join(problems))
    print("%d panels, variables %s" % (len(all_panels(dash)),
                                       [v["name"] for v in dash["templating"]["list"]]))


@case
def dashboard_queries_name_exported_metrics(ctx):
    dash = load_dashboard()
    exprs = dashboard_exprs(dash)
    problems = mn.check_expressions([(w, e) for w, e in exprs], ctx.allowed(load_rules()))
    check(not problems, "\n  ".join(["dashboard:"] + problems))
    used = sorted({m for _, e in exprs for m in mn.promql_metrics(e)})
    print("%d queries read %d metrics: %s" % (len(exprs), len(used), " ".join(used)))


@case
def rules_name_exported_metrics(ctx):
    rules = load_rules()
    exprs = rules_exprs(rules)
    problems = mn.check_expressions(exprs, ctx.allowed(rules))
    check(not problems, "\n  ".join(["rules:"] + problems))
    used = sorted({m for _, e in exprs for m in mn.promql_metrics(e)})
    print("%d rules read %d metrics: %s" % (len(exprs), len(used), " ".join(used)))


@case
def dashboard_queries_parse(ctx):
    """Every dashboard query, with Grafana's variables given values, as a recording rule that
    promtool checks: a query Prometheus would refuse fails here."""
    promtool = shutil.which("promtool")
    if not promtool:
        raise Skip("promtool is not installed (Debian's prometheus package)")
    rules = [{"record": "railkit_dashboard_query_%d" % i, "expr": substitute(e)}
             for i, (_, e) in enumerate(dashboard_exprs(load_dashboard())) if e]
    path = os.path.join(ctx.tmp, "dashboard-queries.rules.yml")
    with open(path, "w") as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f, width=1000)
    p = subprocess.run([promtool, "check", "rules", "--lint=none", path], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "promtool refuses dashboard queries:\n%s%s" % (p.stdout, p.stderr))
    print("%d queries parse" % len(rules))


@case
def an_unknown_metric_is_refused(ctx):
    """The checks can fail: a panel reading a metric nobody exports, a typo of a real name, a query
    naming no metric and a rule reading node_exporter's metric are each named."""
    dash = load_dashboard()
    rules = load_rules()
    bad = copy.deepcopy(dash)
    target = next(t for p in all_panels(bad) for t in p.get("targets", []))
    target["expr"] = 'rate(railkit_node_pause_frame_total{instance=~"$host"}[5m])'  # frames, not frame
    bad["panels"].append({"type": "timeseries", "title": "constant", "id": 999,
                          "targets": [{"refId": "A", "expr": "vector(1)"}]})
    problems = mn.check_expressions(dashboard_exprs(bad), ctx.allowed(rules))
    check(any("railkit_node_pause_frame_total is neither" in p for p in problems),
          "a misspelt metric was not named: %s" % problems)
    check(any("'constant'" in p and "names no metric" in p for p in problems),
          "a query naming no metric was not named: %s" % problems)
    bad_rules = copy.deepcopy(rules)
    bad_rules["groups"][0]["rules"].append({"record": "x:y", "expr": "rate(node_network_receive_bytes_total[1m])"})
    problems = mn.check_expressions(rules_exprs(bad_rules), ctx.allowed(bad_rules))
    check(any("node_network_receive_bytes_total is neither" in p for p in problems),
          "a foreign metric in the rules was not named: %s" % problems)
    # And the names really come from the contract: without it, the plugin's names are unknown
    # unless the sources export them.
    if not ({"railkit_nccl_busbw_gbps"} & mn.source_names()):
        problems = mn.check_expressions(dashboard_exprs(dash), mn.source_names() | mn.recorded_names(rules))
        check(any("railkit_nccl_busbw_gbps is neither" in p for p in problems),
              "without the contract and the plugin's sources, railkit_nccl_busbw_gbps passed: %s" % problems)


def report(ctx):
    contract, sources = mn.contract_names(), mn.source_names()
    rules = load_rules()
    used = {m for _, e in dashboard_exprs(load_dashboard()) + rules_exprs(rules) for m in mn.promql_metrics(e)}
    print("contract (monitor/README.md 1-3): %d names; sources (%d files): %d names"
          % (len(contract), len(mn.source_files()), len(sources)))
    for n in sorted(contract | sources | used):
        where = [w for w, s in (("contract", contract), ("sources", sources)) if n in s]
        print("  %-52s %-18s %s" % (n, "+".join(where) or "-", "read" if n in used else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--railkit", help="unused (ctest passes it to every case script)")
    ap.add_argument("--names", choices=["contract", "sources", "both"], default="both")
    ap.add_argument("--exposition", action="append", default=[], help="a Prometheus text exposition")
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args()
    if a.list:
        return listing(CASES)
    with tempfile.TemporaryDirectory(prefix="railkit-dashboard-") as tmp:
        ctx = Ctx(a.names, a.exposition, tmp)
        if a.report:
            report(ctx)
            return 0
        rcs = [CASES.run(n, ctx, also_failures=(AssertionError, KeyError, ValueError, subprocess.TimeoutExpired))
               for n in (a.case or list(CASES))]
    if any(rc == 1 for rc in rcs):
        return 1
    return SKIP if all(rc == SKIP for rc in rcs) else 0


if __name__ == "__main__":
    sys.exit(main())

"""The metric names railkit exports, and the metric names a PromQL expression reads.

Shared by dashboard_check.py (the Grafana dashboard and the rules) and promtool_rules.py.

Where the exported names come from (`names(source)`):
  contract  the backquoted `railkit_...` names of sections 1-3 of monitor/README.md (the plugin's,
            the judge's and the node's tables; section 4, which describes the rules, is not read);
  sources   the `railkit_...` string literals of the C/C++ sources of monitor/ and of
            apps/railkit/cmd_monitor*.cpp: what the code writes;
  both      either (the default while the parts are being built).
Names read from an exposition (`exposition_names`) are what a running exporter wrote.
"""
import glob
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
README = os.path.join(ROOT, "monitor", "README.md")
RULES = os.path.join(ROOT, "monitor", "prometheus", "railkit.rules.yml")
RULES_TEST = os.path.join(ROOT, "monitor", "prometheus", "railkit.rules.test.yml")
DASHBOARD = os.path.join(ROOT, "monitor", "grafana", "railkit.json")

# Prometheus' own series that the rules may read (the scrape health of a target).
PROMETHEUS_OWN = {"up"}

NAME = re.compile(r"\brailkit_[a-z0-9_]*[a-z0-9]\b")
STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
SOURCE_GLOBS = ["monitor/**/*.c", "monitor/**/*.cc", "monitor/**/*.cpp", "monitor/**/*.h",
                "monitor/**/*.hpp", "apps/railkit/cmd_monitor*.cpp"]


def contract_names(readme=README):
    """The metric names of sections 1-3 of monitor/README.md (backquoted, with or without labels)."""
    text = open(readme, encoding="utf-8").read()
    end = re.search(r"^## 4\.", text, re.M)
    text = text[:end.start()] if end else text
    return set(re.findall(r"`(railkit_[a-z0-9_]*[a-z0-9])(?:\{[^}`]*\})?`", text))


def contract_node_labels(readme=README):
    """metric -> its labels, from the table of section 3 of monitor/README.md (railkit monitor node):
    the rows `| `name` | type | labels | source |`."""
    text = open(readme, encoding="utf-8").read()
    start, end = re.search(r"^## 3\.", text, re.M), re.search(r"^## 4\.", text, re.M)
    labels = {}
    for line in text[start.start():end.start() if end else len(text)].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.match(r"`(railkit_node_[a-z0-9_]+)`$", cells[0]) if len(cells) >= 3 else None
        if m:
            labels[m.group(1)] = {x.strip() for x in re.sub(r"\([^)]*\)", "", cells[2]).split(",") if x.strip()}
    return labels


def source_files(root=ROOT):
    files = []
    for g in SOURCE_GLOBS:
        files += glob.glob(os.path.join(root, g), recursive=True)
    return sorted(set(files))


def source_names(root=ROOT):
    """The `railkit_...` names inside the string literals of monitor/'s C/C++ sources ("railkit_x",
    "# TYPE railkit_x gauge\\n", "railkit_x{"); a prefix the code completes ("railkit_node_") is not
    a name."""
    found = set()
    for path in source_files(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            for literal in STRING_LITERAL.findall(f.read()):
                found |= set(NAME.findall(literal))
    return found


def exposition_names(text):
    """The metric names of a Prometheus text exposition (its # TYPE / # HELP lines and samples)."""
    names = set()
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"#\s*(?:TYPE|HELP)\s+([A-Za-z_:][A-Za-z0-9_:]*)", line)
        if m:
            names.add(m.group(1))
        elif line and not line.startswith("#"):
            m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)", line)
            if m:
                names.add(m.group(1))
    return names


def names(source="both", root=ROOT, readme=README):
    """The exported names by `source` (contract, sources, both)."""
    if source == "contract":
        return contract_names(readme)
    if source == "sources":
        return source_names(root)
    if source == "both":
        return contract_names(readme) | source_names(root)
    raise ValueError("names: source is contract, sources or both, not %r" % source)


def recorded_names(rules_doc):
    """The names the rules record (`record:`)."""
    return {r["record"] for g in rules_doc.get("groups", []) for r in g.get("rules", []) if "record" in r}


KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
            "offset", "bool", "atan2", "inf", "nan", "Inf", "NaN"}


def promql_metrics(expr):
    """The metric names an expression (PromQL, Grafana's $variables allowed) reads: identifiers that
    are not functions, aggregations, keywords, label names, strings, numbers or durations."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)  # strings
    s = re.sub(r"\{[^{}]*\}", " ", s)  # label matchers (strings already emptied)
    s = re.sub(r"\[[^\[\]]*\]", " ", s)  # ranges and subqueries
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", " ", s)
    s = re.sub(r"\$\{[^}]*\}|\$\w+", " ", s)  # Grafana variables outside strings
    s = re.sub(r"(?<![A-Za-z0-9_:])(0x[0-9a-fA-F]+|\d+(\.\d*)?([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)"
               r"([smhdwy]|ms)*(?![A-Za-z0-9_:])", " ", s)  # numbers and durations
    found = []
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        word = m.group(0)
        rest = s[m.end():].lstrip()
        if word in KEYWORDS or rest.startswith("("):
            continue
        found.append(word)
    return found


def check_expressions(exprs, allowed):
    """Problems of (where, expr) pairs: an expression that reads no metric, or one that is not in
    `allowed`. Returns a list of strings (empty: all good)."""
    problems = []
    for where, expr in exprs:
        metrics = promql_metrics(expr)
        if not metrics:
            problems.append("%s: names no metric: %s" % (where, expr))
        for m in metrics:
            if m not in allowed:
                problems.append("%s: %s is neither exported by railkit nor recorded by the rules: %s"
                                % (where, m, " ".join(expr.split())))
    return problems

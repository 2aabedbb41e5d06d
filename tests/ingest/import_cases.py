#!/usr/bin/env python3
"""Tests of `railkit import`, run for real on the fixtures of tests/fixtures/import (written for
railkit in the tools' formats, numbers not from real runs; see its README): the source detected
or named by --from, one document per run written into --out, malformed input as one line
`FILE:LINE: ...` with exit 6, and `railkit report` over imported documents beside a real
railkit-bench run (one process, no launcher). Documents are checked against
results/railkit.results.schema.json when python3-jsonschema is installed.

    import_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    import_cases.py --list

Exit 0 pass, 1 fail, 77 skipped.
"""
import copy
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Skip, check, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add
FIX = os.path.join(ROOT, "tests", "fixtures", "import")
SCHEMA = os.path.join(ROOT, "results", "railkit.results.schema.json")


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit, self.tmp = railkit, tmp
        self.bench = bench or os.path.join(os.path.dirname(railkit), "railkit-bench")

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def run(self, *args, timeout=60):
        p = subprocess.run([self.railkit, *args], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    def ok(self, *args):
        rc, out, err = self.run(*args)
        check(rc == 0, f"railkit {' '.join(args)}: exit {rc}: {err.strip()}")
        return out


def fx(name):
    return os.path.join(FIX, name)


def validate(paths):
    try:
        from jsonschema import Draft202012Validator
    except ImportError:
        return
    v = Draft202012Validator(json.load(open(SCHEMA)))
    for p in paths:
        errs = ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in v.iter_errors(json.load(open(p)))]
        check(not errs, f"{p} does not validate: {errs[:3]}")


@case
def detects_each_source(ctx):
    """Every fixture without --from: the right tool, one document per run, nothing invented."""
    out = ctx.path("out")
    inputs = sorted(glob.glob(fx("*.log")) + glob.glob(fx("*.json")))
    text = ctx.ok("import", *inputs, "--out", out)
    docs = sorted(glob.glob(os.path.join(out, "*.json")))
    check(len(docs) == 14, f"14 documents expected, got {len(docs)}: {docs}\n{text}")
    validate(docs)
    backends = {os.path.basename(p): json.load(open(p))["run"]["backend"] for p in docs}
    check(backends["nccl-2.18_all_reduce_perf.json"] == "nccl-tests", str(backends))
    check(backends["imb-2021.3-collectives.Allgather.np4.json"] == "imb", str(backends))
    check(backends["osu-7.3_bw.json"] == "osu", str(backends))
    d = json.load(open(os.path.join(out, "nccl-2.18_all_reduce_perf.json")))
    for k in ("command", "env", "start_time", "railkit_version"):
        check(k not in d["run"], f"run.{k} invented for a nccl-tests text log")
    check(d["run"]["imported"]["file"].endswith("nccl-2.18_all_reduce_perf.log"), str(d["run"]["imported"]))
    check("p99" not in d["results"][0]["time_us"], "time_us.p99 invented")


@case
def from_overrides_and_single_file_out(ctx):
    """--from names the tool; --out FILE.json takes exactly one document."""
    target = ctx.path("one.json")
    ctx.ok("import", fx("osu-7.3_allreduce.log"), "--from", "osu", "--nranks", "8", "--out", target)
    d = json.load(open(target))
    check(d["run"]["nranks"] == 8 and d["run"]["imported"]["nranks_from"] == "--nranks", str(d["run"]))
    check("busbw_GBps" in d["results"][0], "with --nranks the all_reduce busbw is derived")
    validate([target])
    rc, _, err = ctx.run("import", fx("imb-2021.3-collectives.log"), "--out", ctx.path("many.json"))
    check(rc == 6 and "a file takes one" in err, f"exit {rc}: {err}")
    # A file named for the wrong tool: the parser says what it misses, with file and line.
    rc, _, err = ctx.run("import", fx("osu-7.3_bw.log"), "--from", "imb", "--out", ctx.path("x"))
    check(rc == 6 and "osu-7.3_bw.log:" in err, f"exit {rc}: {err}")


@case
def malformed_is_one_line(ctx):
    """Each malformed fixture: exit 6 and one line naming the file and the line."""
    want = {
        "nccl-truncated-row.log": ":27: ",
        "nccl-bad-number.log": ":20: ",
        "nccl-bad-json.json": ":3: ",
        "imb-bad-number.log": ":38: ",
        "osu-truncated.log": ":6: ",
        "unknown.log": ":1: cannot tell which tool wrote this",
    }
    for name, where in want.items():
        rc, out, err = ctx.run("import", fx(os.path.join("malformed", name)), "--out", ctx.path("bad"))
        lines = err.strip().splitlines()
        check(rc == 6, f"{name}: exit {rc}, expected 6: {err}")
        check(len(lines) == 1 and (name + where) in lines[0], f"{name}: {err!r}")
    check(not glob.glob(ctx.path("bad", "*.json")), "nothing is written for malformed input")


@case
def report_beside_a_real_run(ctx):
    """railkit report shows imported nccl-tests and IMB documents beside a real railkit-bench run."""
    if not os.access(ctx.bench, os.X_OK):
        raise Skip(f"no railkit-bench at {ctx.bench}")
    real = ctx.path("bench.json")
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    p = subprocess.run([ctx.bench, "-b", "1M", "-e", "4M", "-f", "2", "-n", "3", "-w", "1", "--label", "railkit-now",
                        "-J", real], capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    if p.returncode != 0 and not os.path.exists(real):
        raise Skip(f"railkit-bench as one process failed here (exit {p.returncode}): {p.stderr.strip()[:300]}")
    out = ctx.path("imp")
    ctx.ok("import", fx("nccl-2.18_all_reduce_perf.log"), fx("imb-2021.3-collectives.log"), "--out", out)
    docs = [os.path.join(out, "nccl-2.18_all_reduce_perf.json"), os.path.join(out, "imb-2021.3-collectives.Allreduce.np4.json")]
    text = ctx.ok("report", real, *docs)
    for name in ("railkit-now", "nccl-2.18_all_reduce_perf", "imb-2021.3-collectives.Allreduce.np4"):
        check(name in text, f"{name} missing from the report:\n{text}")
    # nccl-tests' float sum all_reduce at 1 MiB shares a table row with railkit-bench's.
    row = [l for l in text.splitlines() if l.strip().startswith("1 MiB")]
    check(row, f"no 1 MiB row:\n{text}")
    check("125.710" in row[0], f"the 2.18 log's 1 MiB out-of-place busbw (125.71) not in {row[0]!r}\n{text}")
    # Another tool's settings are not railkit's knobs: nothing is called inert, the ratios stay.
    check("inert" not in text, f"imported documents judged inert:\n{text}")
    check("TIMING METHODS DIFFER" in text, f"IMB's barrier-separated times not flagged:\n{text}")
    csv = ctx.ok("report", "--format", "csv", real, *docs)
    check("nccl-2.18_all_reduce_perf" in csv, csv[:500])


@case
def terminal_escapes_in_documents_are_not_printed_raw(ctx):
    """Issue 32: an ESC sequence in a host name or label of a results document reached the terminal
    raw through `railkit history show|check` and `railkit report` (it could retitle, recolour or clear
    the terminal); every such text is printed with its control characters as \\xNN."""
    out = ctx.path("esc")
    ctx.ok("import", fx("nccl-2.18_all_reduce_perf.log"), "--out", out)
    src = json.load(open(os.path.join(out, "nccl-2.18_all_reduce_perf.json")))
    docs = []
    for i, label in enumerate(["evil\x1b[2J\x1b]0;pwned\x07", "other\x1b[31m\u009b1m"]):
        d = copy.deepcopy(src)
        d["run"]["label"] = label
        d["run"]["hosts"] = ["node\x1b]0;title\x07a", "node-b\x1b[8m"]
        path = os.path.join(out, f"esc{i}.json")
        with open(path, "w") as f:
            json.dump(d, f)
        docs.append(path)
    db = ctx.path("esc.sqlite")
    ctx.ok("history", "add", "--db", db, *docs)
    outputs = {
        "history show": ctx.ok("history", "show", "--db", db, "--op", "all_reduce", "--bytes", "1M"),
        "history show csv": ctx.ok("history", "show", "--db", db, "--op", "all_reduce", "--bytes", "1M", "--format", "csv"),
        "report": ctx.ok("report", *docs),
        "report markdown": ctx.ok("report", "--format", "markdown", *docs),
    }
    rc, so, se = ctx.run("history", "check", "--db", db)
    check(rc in (0, 10), f"history check: exit {rc}: {se.strip()}")
    outputs["history check"] = so
    for what, text in outputs.items():
        bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
        check(not bad, f"{what}: control characters {bad!r} printed:\n{text!r}")
    check("node\\x1b]0;title\\x07a" in outputs["history show"], f"host not shown escaped:\n{outputs['history show']}")
    check("evil\\x1b[2J" in outputs["report"], f"label not shown escaped:\n{outputs['report']}")


@case
def html_page_script_runs_under_its_csp(ctx):
    """Issue 32: the HTML page's Content-Security-Policy allows its one inline script by SHA-256 (no
    'unsafe-inline'), with base-uri and form-action 'none'; in headless chromium the script still
    runs (a click on a column head sorts), so the hash is the script's."""
    out = ctx.path("csp")
    ctx.ok("import", fx("nccl-2.18_all_reduce_perf.log"), fx("nccl-2.28_all_reduce_perf.log"), "--out", out)
    page = ctx.path("csp.html")
    ctx.ok("report", "--html", page, *sorted(glob.glob(os.path.join(out, "*.json"))))
    html = open(page, encoding="utf-8").read()
    policy = html.split('http-equiv="Content-Security-Policy" content="', 1)[1].split('"', 1)[0]
    script = html.split("<script>", 1)[1].split("</script>", 1)[0]
    import base64
    import hashlib
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    check(f"script-src 'sha256-{digest}'" in policy and "unsafe-inline'" not in policy.split("script-src", 1)[1],
          f"script-src is not the script's hash: {policy}")
    check("base-uri 'none'" in policy and "form-action 'none'" in policy, policy)
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if not chromium:
        raise Skip("chromium is not installed: the policy was checked, the page not run")
    probe = ctx.path("csp.json")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "html_screenshot.py"), page, "--check", probe,
                        "--chromium", chromium], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"html_screenshot.py: exit {p.returncode}: {p.stderr.strip()[-500:]}")
    r = json.load(open(probe))
    check(r["sort_script"] is True, f"the sort script did not run under the page's policy: {r}")


@case
def large_logs_read_back_or_are_refused(ctx):
    """A log of 5000 rows imports into a document `railkit report` reads back; one whose document
    would pass the 64 MiB report and history read (100 000 rows, a 6 MB log) is refused with one
    line naming the limit, and nothing is written (it wrote 72.8 MB that report refused)."""
    make = os.path.join(HERE, "make_big_nccl_log.py")
    small, big = ctx.path("all_reduce_perf.log"), ctx.path("big_all_reduce_perf.log")
    subprocess.run([sys.executable, make, "5000", small], check=True)
    subprocess.run([sys.executable, make, "100000", big], check=True)
    out = ctx.path("large")
    ctx.ok("import", small, "--out", out)
    doc = os.path.join(out, "all_reduce_perf.json")
    check(len(json.load(open(doc))["results"]) == 10000, "5000 rows, two placements each")
    text = ctx.ok("report", "--format", "csv", doc)
    check(text.count("\n") >= 5000, f"report shows {text.count(chr(10))} lines")
    rc, _, err = ctx.run("import", big, "--out", ctx.path("huge"), timeout=120)
    lines = err.strip().splitlines()
    check(rc == 6 and len(lines) == 1, f"exit {rc}, expected 6 and one line: {err[:500]}")
    check("more than the 64 MiB railkit reads back" in lines[0] and "big_all_reduce_perf.log:" in lines[0], lines[0])
    check(not glob.glob(ctx.path("huge", "*")), "nothing is written for a refused import")


@case
def out_that_is_an_input_is_refused_and_imports_are_all_or_nothing(ctx):
    """--out naming an input, or a directory where a document would take an input's name, is
    refused with one line before anything is written (the log was replaced); when one document
    of several cannot be written, none is."""
    import shutil
    src = ctx.path("in.json")
    shutil.copy(fx("nccl-2.28_all_reduce_perf.json"), src)
    before = open(src, "rb").read()
    rc, _, err = ctx.run("import", src, "--out", src)
    check(rc == 6 and len(err.strip().splitlines()) == 1 and "is the input" in err, f"exit {rc}: {err}")
    check(open(src, "rb").read() == before, "the input was replaced")
    os.symlink(src, ctx.path("link.json"))  # written through to the input
    rc, _, err = ctx.run("import", src, "--out", ctx.path("link.json"))
    check(rc == 6 and "is the input" in err and open(src, "rb").read() == before, f"exit {rc}: {err}")
    log_out = ctx.path("plain.log")
    shutil.copy(fx("nccl-2.18_all_reduce_perf.log"), log_out)
    rc, _, err = ctx.run("import", log_out, "--out", log_out)
    check(rc == 6 and "that is the input" in err, f"exit {rc}: {err}")
    os.makedirs(ctx.path("d"))
    log = ctx.path("d", "run.json")  # a text log named .json: its document would be d/run.json
    shutil.copy(fx("nccl-2.18_all_reduce_perf.log"), log)
    before = open(log, "rb").read()
    rc, _, err = ctx.run("import", log, "--from", "nccl-tests", "--coll", "all_reduce", "--out", ctx.path("d"))
    check(rc == 6 and "is the input" in err, f"exit {rc}: {err}")
    check(open(log, "rb").read() == before, "the input was replaced")
    # The second document's target is a directory: the first is not written either.
    blk = ctx.path("blk")
    os.makedirs(os.path.join(blk, "imb-2021.3-collectives.Allreduce.np4.json"))
    rc, _, err = ctx.run("import", fx("nccl-2.18_all_reduce_perf.log"), fx("imb-2021.3-collectives.log"), "--out", blk)
    errors = [l for l in err.strip().splitlines() if not l.startswith("railkit import: note:")]  # IMB's Barrier skipped
    check(rc == 6 and len(errors) == 1 and "is a directory" in errors[0], f"exit {rc}: {err}")
    check(sorted(os.listdir(blk)) == ["imb-2021.3-collectives.Allreduce.np4.json"], f"written: {os.listdir(blk)}")
    # A malformed second input: nothing of the first is written.
    rc, _, err = ctx.run("import", fx("nccl-2.18_all_reduce_perf.log"), fx(os.path.join("malformed", "nccl-bad-number.log")),
                         "--out", ctx.path("half"))
    check(rc == 6 and not glob.glob(ctx.path("half", "*")), f"exit {rc}: {err}")


REAL = os.path.join(FIX, "real")


@case
def real_logs_import_exactly_or_are_refused(ctx):
    """Every real log of tests/fixtures/import/real as its expect.json says: imported, with each
    stored record equal to the figures of the line it cites and every table row stored once (read
    by real_log_reader.py, not by railkit), or refused with exit 6 and one line naming the line
    and the reason."""
    import real_log_reader as rr
    expect = json.load(open(os.path.join(REAL, "expect.json")))
    logs = sorted(f for f in os.listdir(REAL) if f.endswith(".log") or f.endswith(".json") and f != "expect.json")
    check(sorted(expect["files"]) == logs, f"expect.json and the folder differ: {sorted(set(logs) ^ set(expect['files']))}")
    runs = [(n, w) for n, w in sorted(expect["files"].items())] + [(n, w) for n, w in sorted(expect["with_args"].items())]
    for name, want in runs:
        out = ctx.path("real", name + "".join(want.get("args", [])))
        rc, stdout, err = ctx.run("import", os.path.join(REAL, name), "--out", out, *want.get("args", []))
        if "refused" in want:
            line = err.strip().splitlines()
            check(rc == 6 and len(line) == 1, f"{name}: exit {rc}, expected one line and 6: {err}")
            check(line[0].startswith(f"railkit: error: {os.path.join(REAL, name)}:{want['refused']['line']}: "), f"{name}: {line[0]}")
            check(want["refused"]["reason"] in line[0], f"{name}: {want['refused']['reason']!r} not in {line[0]!r}")
            continue
        check(rc == 0, f"{name}: exit {rc}: {err}")
        docs = [json.load(open(os.path.join(out, f))) for f in sorted(os.listdir(out))]
        check(len(docs) == len(want["docs"]), f"{name}: {len(docs)} documents, expected {len(want['docs'])}")
        validate([os.path.join(out, f) for f in sorted(os.listdir(out))])
        text = open(os.path.join(REAL, name), encoding="utf-8", errors="replace").read()
        lines = rr.log_lines(text, want.get("prefix"))
        tool = docs[0]["run"]["backend"]
        tables = rr.nccl_tables(lines) if tool == "nccl-tests" else None
        for doc, w in zip(sorted(docs, key=lambda d: d["run"]["imported"].get("first_line", 0)), want["docs"]):
            where = f"{name} ({doc['run']['label']})"
            for key, value in w.items():
                got = {"op": doc["results"][0]["op"], "nranks": doc["run"].get("nranks"), "records": len(doc["results"]),
                       "complete": doc["summary"]["complete"], "tool_version": doc["run"]["imported"].get("tool_version"),
                       "op_from": doc["run"]["imported"].get("op_from")}[key]
                check(got == value, f"{where}: {key} {got!r}, expected {value!r}")
            check(doc["run"]["imported"].get("line_prefix", [None])[0] == want.get("prefix"), f"{where}: line_prefix {doc['run']['imported'].get('line_prefix')}")
            if tool == "nccl-tests":
                cited = rr.check_nccl(doc, tables, where)
                rows = {ln for (_, _, rs) in tables for (ln, tok) in rs}
            else:
                cited = rr.check_table_rows(doc, tool, lines, where)
                rows = rr.data_rows(tool, lines)
            lo, hi = doc["run"]["imported"].get("first_line", 1), doc["run"]["imported"].get("last_line", len(lines))
            rows = {ln for ln in rows if lo <= ln <= hi}
            check(cited == rows, f"{where}: rows not stored {sorted(rows - cited)[:5]}, stored from no row {sorted(cited - rows)[:5]}")


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-import-"))

#!/usr/bin/env python3
"""Integration tests of `railkit report --html`, run for real: a railkit-bench --backend mpi run
on 4 local ranks, a sweep, a tune session and an emulated accept run (8 ranks as 4 nodes), each
turned into a page that Debian's chromium opens headless. Under ctest the runs are those other
cases made and checked (ctest fixtures: sweep_cases.py done_when, tune_cases.py done_when,
accept_cases.py slow_rank_fails_its_node); run by hand, each case makes its own. Checks that the page references
nothing outside itself, that every table and image the page holds was rendered (tables with
rows, images with a non-zero natural size), and keeps a screenshot per case under the build
tree: Testing/artifacts/report-html-CASE.png (or $RAILKIT_ARTIFACTS_DIR). ctest label `mpi`.

    html_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    html_cases.py --list

Exit 0 pass, 1 fail, 77 skipped (no chromium: the render check and screenshot need it).
"""
import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SHOT = os.path.join(ROOT, "scripts", "html_screenshot.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Skip, check, railkit_main, shared_run  # noqa: E402

CASES = Cases()
case = CASES.add

BENCH = ["--backend", "mpi", "--coll", "all_reduce", "-b", "4K", "-e", "256K", "-f", "4", "-n", "5", "-w", "2"]
INJECT = "<script>alert(1)</script>\"'&"  # a label that must arrive escaped


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit = railkit
        self.bench = bench or os.path.join(os.path.dirname(railkit), "railkit-bench")
        self.tmp = tmp

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def run(self, argv, timeout=300):
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    def railkit_run(self, *args, timeout=300):
        return self.run([self.railkit, *args], timeout)

    def mpirun(self, np, *argv):
        extra = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        return self.run(["mpirun", *extra, "-np", str(np), *argv])


class Page(HTMLParser):
    """What the page holds: tables, images, and any reference to something outside it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables = 0
        self.images = 0
        self.scripts = 0
        self.external = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables += 1
        if tag in ("img", "svg"):
            self.images += 1
        if tag == "script":
            self.scripts += 1
            if any(k == "src" for k, _ in attrs):
                self.external.append("script src")
        for k, v in attrs:
            if k in ("src", "href", "action", "srcset", "poster", "data", "formaction") and v is not None:
                if not v.startswith("data:"):
                    self.external.append(f"{tag} {k}={v[:60]}")
            if k == "style" and v and "url(" in v:
                self.external.append(f"{tag} style url()")

    def handle_data(self, data):
        self.text.append(data)


def artifacts_dir(railkit):
    d = os.environ.get("RAILKIT_ARTIFACTS_DIR") or os.path.join(os.path.dirname(os.path.dirname(railkit)),
                                                                "Testing", "artifacts")
    os.makedirs(d, exist_ok=True)
    return d


def chromium():
    for c in ("/usr/bin/chromium", shutil.which("chromium") or ""):
        if c and os.access(c, os.X_OK):
            return c
    return None


def matplotlib_ok():
    return subprocess.run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3", "-c",
                           "import matplotlib"], capture_output=True).returncode == 0


def report(ctx, name, inputs, want_text=(), plots=1):
    """Writes the page of `inputs`, checks it statically and in the browser, keeps a screenshot."""
    out = ctx.path(name + ".html")
    rc, so, se = ctx.railkit_run("report", "--html", out, *inputs)
    check(rc == 0, f"report --html: rc {rc}\n{so}\n{se}")
    check(os.path.isfile(out), "no page written")
    with open(out, encoding="utf-8") as f:
        html = f.read()
    page = Page()
    page.feed(html)
    check(not page.external, f"the page references something outside it: {page.external}")
    check("http://" not in html and "https://" not in html.replace("http://www.w3.org/2000/svg", ""),
          "an http(s) URL in the page")
    check(page.scripts == 1, f"{page.scripts} scripts; expected the sort script only")
    check(INJECT not in html, "an unescaped string from a document")
    text = "".join(page.text)
    for w in want_text:
        check(w in text, f"'{w}' not in the page")
    missing_plot = "plot not drawn" in text
    if matplotlib_ok():
        check(not missing_plot, "a plot was not drawn though matplotlib is installed")
        check(page.images >= plots, f"{page.images} images; expected at least {plots}")
    browser = chromium()
    if not browser:
        raise Skip("chromium not found (/usr/bin/chromium; scripts/setup.sh installs it): "
                   "the page was written and checked statically, not rendered")
    probe = ctx.path(name + ".render.json")
    png = os.path.join(artifacts_dir(ctx.railkit), f"report-html-{name}.png")
    rc, so, se = ctx.run([sys.executable, SHOT, out, png, "--check", probe, "--width", "1280", "--chromium", browser],
                         timeout=180)
    check(rc == 0, f"html_screenshot.py --check: rc {rc}\n{se}")
    with open(probe) as f:
        r = json.load(f)
    check(len(r["tables"]) == page.tables, f"{len(r['tables'])} tables rendered, the page has {page.tables}")
    empty = [t["id"] for t in r["tables"] if t["rows"] <= 0 or t["width"] <= 0]
    check(not empty, f"tables without rows or not laid out: {empty}")
    check(len(r["images"]) == page.images, f"{len(r['images'])} images rendered, the page has {page.images}")
    bad = [i for i in r["images"] if not (i["width"] > 0 and i["height"] > 0)]
    check(not bad, f"images not rendered (zero natural size): {bad}")
    check(os.path.getsize(png) > 0, "an empty screenshot")
    # Issue 32: the page's script runs by its hash under the page's Content-Security-Policy (no
    # 'unsafe-inline'); a wrong hash would block it and the columns would not sort.
    check("'unsafe-inline'" not in html.split("script-src", 1)[1].split(";", 1)[0], "script-src allows 'unsafe-inline'")
    if 'class="sortable' in html:
        check(r.get("sort_script") is True, f"the page's sort script did not run under its CSP: {r.get('sort_script')}")
    print(f"screenshot: {png} ({len(r['tables'])} tables, {len(r['images'])} images)")
    return html, text


def algo_sweep(ctx):
    """The sweep of sweep_cases.py's done_when (a ctest fixture), else one made here."""
    def make(out):
        rc, so, se = ctx.railkit_run("sweep", "--bench", ctx.bench, "--launcher", "mpirun", "--np", "4", "--out", out,
                                     "--rounds", "2", "--axis", "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
                                     "--axis", "OMPI_MCA_coll_tuned_allreduce_algorithm=1,4", "--", *BENCH)
        check(rc == 0, f"sweep: rc {rc}\n{se[-2000:]}")
    return shared_run("algo-sweep", ctx.tmp, make)


@case
def run(ctx):
    """One real railkit-bench --backend mpi run (a launch of the shared sweep): header, table, plot; an
    injected label arrives escaped."""
    sweep_dir = algo_sweep(ctx)
    with open(os.path.join(sweep_dir, "sweep.json")) as f:
        first = json.load(f)["launches"][0]
    with open(os.path.join(sweep_dir, first["results"])) as f:
        d = json.load(f)
    check(d["run"]["backend"] == "mpi" and d["run"]["nranks"] == 4, f"run {d['run']}")
    d["run"]["label"] = "label " + INJECT
    doc = ctx.path("run.json")
    with open(doc, "w") as f:
        json.dump(d, f)
    _, text = report(ctx, "run", [doc], want_text=["railkit report: run", "Open MPI", "label " + INJECT,
                                                   "all_reduce float sum"])
    check("SIMULATED" not in text, "a measured run marked SIMULATED")


@case
def sweep(ctx):
    """A sweep of two Open MPI allreduce algorithms over rounds: verdicts with their rules."""
    out = algo_sweep(ctx)
    report(ctx, "sweep", [out], want_text=["railkit report: sweep", "Verdicts", "rule", "intervals hold together",
                                           "OMPI_MCA_coll_tuned_allreduce_algorithm=4"])


@case
def tune(ctx):
    """A tune session (tune_cases.py's done_when, a ctest fixture, else 3 trials made here): settings,
    decisions with their rule, trials, validation, plot."""
    def make(out):
        rc, so, se = ctx.railkit_run("tune", "--bench", ctx.bench, "--space", "ompi-coll", "--strategy", "coordinate",
                                     "--budget", "3", "--launcher", "mpirun", "--np", "4", "--out", out, "--", *BENCH)
        check(rc == 0, f"tune: rc {rc}\n{se[-2000:]}")
    out = shared_run("tune-session", ctx.tmp, make)
    report(ctx, "tune", [out], want_text=["railkit report: tune session", "Trials", "Decisions", "validation rounds",
                                          "Validation"])


@case
def accept(ctx):
    """An emulated accept run (4 nodes of 2 ranks, one rank slowed: accept_cases.py's
    slow_rank_fails_its_node, a ctest fixture, else made here): the failing node first, rules, bars."""
    def make(out):
        rc, so, se = ctx.railkit_run("accept", "--launcher", "mpirun", "--np", "8", "--ranks-per-node", "2", "--out",
                                     out, "--bench", ctx.bench, "--bench-args", "--inject-delay-us 5:3000", timeout=300)
        check(rc in (0, 10), f"accept: rc {rc}\n{se[-2000:]}")
    out = shared_run("accept-slow-rank", ctx.tmp, make)
    with open(os.path.join(out, "accept.json")) as f:
        acc = json.load(f)
    failing = [n["name"] for n in acc["nodes"] if n["verdict"] == "fail"]
    html, text = report(ctx, "accept", [out], want_text=["railkit report: accept run", "Nodes (failing first)", "Rules"])
    if failing:
        nodes_at = html.find('id="nodes"')
        first_pass = min((html.find(n["name"], nodes_at) for n in acc["nodes"] if n["verdict"] == "pass"), default=-1)
        check(all(0 <= html.find(f, nodes_at) < first_pass for f in failing) or first_pass < 0,
              f"failing nodes {failing} not listed before the passing ones")


@case
def not_an_input(ctx):
    """A directory that is no sweep, tune session or accept run: one line, exit 6."""
    d = ctx.path("empty")
    os.makedirs(d)
    rc, so, se = ctx.railkit_run("report", "--html", ctx.path("x.html"), d)
    check(rc == 6, f"rc {rc}, expected 6\n{se}")
    lines = [line for line in se.splitlines() if line.strip()]
    check(len(lines) == 1 and "not a sweep (sweep.json), tune session (journal.jsonl) or accept run" in lines[0],
          f"stderr: {se!r}")
    check(not os.path.exists(ctx.path("x.html")), "a page was written")


def make_ctx(railkit, bench, tmp):
    return Ctx(railkit, bench, tmp)


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, make_ctx, "railkit-html-"))

#!/usr/bin/env python3
"""Golden tests of what `railkit report --plot` draws, and one image-level check (ctest label `unit`).

Real results documents in tests/fixtures/plot/ (a single railkit-bench --backend mpi run on 4 local
ranks with both placements, a 2-round sweep of two Open MPI allreduce algorithms with --split mod:2,
and a simulated run on sim/examples/cluster-4x8-1to1.yaml) go through `railkit report
--plot-series` (the C++ side) and scripts/plot_results.py --dump-plan (the plotting side); the plan
(panels, scales, ticks and their labels, series, colours, bands, reference lines, title lines) must
match tests/fixtures/plot/golden/NAME.plan.json. RAILKIT_UPDATE_GOLDEN=1 rewrites the golden files
instead (review the diff).

    plot_cases.py --railkit build/bin/railkit --case NAME
    plot_cases.py --list
Exit 0 pass, 1 fail, 77 skipped.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "plot")
GOLDEN = os.path.join(FIXTURES, "golden")
PLOT_SCRIPT = os.path.join(ROOT, "scripts", "plot_results.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from casekit import Cases, Skip, check, railkit_main  # noqa: E402
import plot_results  # noqa: E402

CASES = Cases()
case = CASES.add


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit = railkit
        self.tmp = tmp

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def run(self, *args):
        p = subprocess.run([self.railkit, *args], capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    def series(self, *inputs):
        """The railkit.plot-series/1 JSON railkit report writes for the fixture inputs."""
        out = self.path("series.json")
        rc, so, se = self.run("report", *[os.path.join(FIXTURES, i) for i in inputs], "--plot-series", out)
        check(rc == 0, f"railkit report --plot-series: rc {rc}\n{se}")
        with open(out) as f:
            return json.load(f)

    def plan(self, series, *args):
        """The plan scripts/plot_results.py --dump-plan writes (run as the command it is)."""
        src, out = self.path("in.json"), self.path("plan.json")
        with open(src, "w") as f:
            json.dump(series, f)
        p = subprocess.run([PYTHON, PLOT_SCRIPT, "--series", src, "--dump-plan", out, *args], capture_output=True,
                           text=True, timeout=120)
        check(p.returncode == 0, f"plot_results.py --dump-plan: rc {p.returncode}\n{p.stderr}")
        with open(out) as f:
            return json.load(f)


def golden(name, plan):
    path = os.path.join(GOLDEN, name + ".plan.json")
    text = json.dumps(plan, indent=1, sort_keys=True) + "\n"
    if os.environ.get("RAILKIT_UPDATE_GOLDEN") == "1":
        with open(path, "w") as f:
            f.write(text)
        return
    check(os.path.exists(path), f"{path}: no golden file (RAILKIT_UPDATE_GOLDEN=1 writes it)")
    with open(path) as f:
        want = f.read()
    if want != text:
        import difflib
        diff = "".join(list(difflib.unified_diff(want.splitlines(True), text.splitlines(True), path, "now"))[:60])
        check(False, f"the plan differs from {path}:\n{diff}")


def panels(plan, kind):
    return [p for p in plan["panels"] if p["kind"] == kind]


@case
def single_run(ctx):
    """A lone run: solid, labelled by its name (no "[1]", no baseline), in-place and out-of-place
    side by side on one y scale, ticks exactly at the measured sizes, a latency panel with the
    p50..p99 band, the title block from run (label, backend, ranks x nodes, host, date)."""
    series = ctx.series("single.json")
    check(series["schema"] == "railkit.plot-series/1", series.get("schema"))
    check(series["sizes"] == [8 * 4 ** k for k in range(10)], series["sizes"])
    check(series["line_rate"] is None, "a line rate the run does not know")
    plan = ctx.plan(series)
    golden("single", plan)
    metric, latency = panels(plan, "metric"), panels(plan, "latency")
    check([p["title"] for p in metric] == ["all_reduce float sum, out-of-place", "all_reduce float sum, in-place"],
          [p["title"] for p in metric])
    check(metric[0]["ylim"] == metric[1]["ylim"] and latency[0]["ylim"] == latency[1]["ylim"],
          "placements on different y scales")
    check(metric[0]["yscale"] == "log" and latency[0]["yscale"] == "log", "log y by default")
    check(metric[0]["xticks"] == series["sizes"], metric[0]["xticks"])
    check(metric[0]["xticklabels"][:4] == ["8 B", "32 B", "128 B", "512 B"] and
          metric[0]["xticklabels"][-1] == "2 MiB", metric[0]["xticklabels"])
    line = metric[0]["lines"][0]
    check(line["label"] == "allreduce-4ranks" and line["linestyle"] == "-", line)
    check(latency[0]["lines"][0]["band"]["what"] == "p50..p99", latency[0]["lines"][0]["band"])
    check(plan["title_lines"][0] == "allreduce-4ranks", plan["title_lines"])
    check("backend mpi" in plan["title_lines"][1] and "4 ranks x 1 node" in plan["title_lines"][1],
          plan["title_lines"])


@case
def split_groups(ctx):
    """A 2-round sweep with --split mod:2: one line per configuration and group (never averaged),
    the slowest group marked, the rounds' spread shaded; --yscale linear starts at 0."""
    series = ctx.series("split")
    plan = ctx.plan(series)
    golden("split", plan)
    labels = [ln["label"] for ln in panels(plan, "metric")[0]["lines"]]
    check(len(labels) == 4, labels)
    check(sum("(slowest group)" in x for x in labels) == 2, labels)  # one per configuration
    check(all(" mod2:" in x for x in labels), labels)
    check(sum("(baseline)" in x for x in labels) == 2, labels)
    check(all(ln["band"] for ln in panels(plan, "metric")[0]["lines"]), "no rounds band")
    check(len({ln["color"] for ln in panels(plan, "metric")[0]["lines"]}) == 4, "colours repeat")
    lin = ctx.plan(series, "--yscale", "linear")
    golden("split-linear", lin)
    m = panels(lin, "metric")[0]
    check(m["yscale"] == "linear" and m["ylim"][0] == 0, m["ylim"])
    check(panels(lin, "latency")[0]["yscale"] == "log", "latency stays log")


@case
def simulated_run(ctx):
    """A simulated run: SIMULATED in the title, y labels and across the panels; the simulated
    cluster's NICs per node (8 x 400 Gb/s = 400 GB/s, the bound of ring busbw across its 4 nodes) as
    a reference line on the busbw panel only."""
    series = ctx.series("sim.json")
    lr = series["line_rate"]
    check(lr["Gbps"] == 400 and lr["nics_per_node"] == 8 and lr["GBps"] == 400, lr)
    plan = ctx.plan(series)
    golden("sim", plan)
    check(plan["title_lines"][0].startswith("SIMULATED"), plan["title_lines"])
    for p in plan["panels"]:
        check(p["watermark"] == "SIMULATED" and p["ylabel"].startswith("SIMULATED"), p["ylabel"])
    m = panels(plan, "metric")[0]
    check([r["y"] for r in m["reflines"]] == [400] and "8 NICs x 400 Gb/s per node = 400 GB/s" in m["reflines"][0]["label"],
          m["reflines"])
    check(panels(plan, "latency")[0]["reflines"] == [], "line rate on the latency panel")
    check(m["ylim"][0] < 50 < m["ylim"][1], "the reference line outside the y range")


@case
def twelve_series_distinct(ctx):
    """Up to 12 series keep distinct (colour, marker, line style) triples; colours from Paul Tol's
    colour-blind-safe muted palette; sizes that are not powers of two keep exact binary labels."""
    sizes = [1536, 3072, 6144]
    doc = {"metric": "busbw", "ylabel": "busbw (GB/s)", "panels": [{"title": "t", "series": [
        {"name": f"[{k + 1}] c{k}", "config": f"c{k}", "bytes": sizes, "values": [1, 2, 3]} for k in range(12)]}]}
    plan = plot_results.build_plan(doc)
    styles = [(e["color"], e["marker"], e["linestyle"]) for e in plan["legend"]]
    check(len(set(styles)) == 12, styles)
    check(all(e["color"] in plot_results.PALETTE for e in plan["legend"]), styles)
    check(plan["panels"][0]["xticklabels"] == ["1.5 KiB", "3 KiB", "6 KiB"], plan["panels"][0]["xticklabels"])
    check(plot_results.size_label(4 << 20) == "4 MiB" and plot_results.size_label(8) == "8 B", "size labels")
    many = [8 << k for k in range(20)]
    t = plot_results.thin(many)
    check(len(t) <= 12 and t[-1] == many[-1] and set(t) <= set(many), t)


@case
def old_series_still_plot(ctx):
    """A series file written before these fields (no title, sizes, placement, time_us) still plans:
    metric panels only; bad input exits 6 with one line."""
    doc = {"panels": [{"title": "t", "series": [{"name": "a", "bytes": [8, 16], "busbw_GBps": [1, 2]}]}]}
    plan = ctx.plan(doc)
    check([p["kind"] for p in plan["panels"]] == ["metric"], plan["panels"])
    bad = ctx.path("bad.json")
    with open(bad, "w") as f:
        f.write("{\"panels\": []}")
    p = subprocess.run([PYTHON, PLOT_SCRIPT, "--series", bad, "--dump-plan", ctx.path("x.json")], capture_output=True,
                       text=True)
    check(p.returncode == 6 and len(p.stderr.strip().splitlines()) == 1, f"rc {p.returncode}: {p.stderr}")
    p = subprocess.run([PYTHON, PLOT_SCRIPT, "--series", bad, "--out", ctx.path("x.gif")], capture_output=True,
                       text=True)
    check(p.returncode == 6 and ".pdf" in p.stderr, f"rc {p.returncode}: {p.stderr}")


@case
def renders_png_svg_pdf(ctx):
    """The image-level check: railkit report --plot writes a PNG that decodes to a non-trivial
    picture with many colours, an SVG that parses with <path> elements, and a PDF."""
    try:
        import matplotlib.image as mpimg
    except ImportError:
        raise Skip("python3-matplotlib is not installed")
    split = os.path.join(FIXTURES, "split")
    outs = {ext: ctx.path("plot" + ext) for ext in (".png", ".svg", ".pdf")}
    for ext, out in outs.items():
        rc, so, se = ctx.run("report", split, "--plot", out, "--plot-yscale", "linear" if ext == ".pdf" else "log")
        check(rc == 0, f"--plot {ext}: rc {rc}\n{se}")
    img = mpimg.imread(outs[".png"])
    check(img.shape[0] > 400 and img.shape[1] > 400, img.shape)
    colours = {tuple(int(255 * c) for c in px[:3]) for px in img.reshape(-1, img.shape[2])[::7]}
    check(len(colours) > 20, f"{len(colours)} colours")
    import xml.etree.ElementTree as ET
    root = ET.parse(outs[".svg"]).getroot()
    check(root.tag.endswith("svg") and len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 50, "svg paths")
    with open(outs[".pdf"], "rb") as f:
        head = f.read(5)
    check(head == b"%PDF-" and os.path.getsize(outs[".pdf"]) > 5000, "not a PDF")
    rc, so, se = ctx.run("report", split, "--plot", ctx.path("p.png"), "--plot-yscale", "cubic")
    check(rc == 6, f"--plot-yscale cubic: rc {rc}")


@case
def absent_and_zero_values(ctx):
    """What a document does not hold is shown as absent, never as 0: an OSU allreduce imported
    without --nranks (no busbw) beside a real run gives '-' in the table, an empty CSV field, a note
    naming it and no series; a run whose busbw is all 0.00 (the 2.9.6 broadcast log) still plots on a
    log axis, its series named as not drawn instead of failing (issue 28, class 6)."""
    real = os.path.join(ROOT, "tests", "fixtures", "import", "real")
    imp = ctx.path("imp")
    for log in ("osu-5.6.2-allreduce-excalibur.log", "nccl-2.9.6-broadcast-error-col-i82.log"):
        rc, _, se = ctx.run("import", os.path.join(real, log), "--out", imp)
        check(rc == 0, f"import {log}: rc {rc}\n{se}")
    osu, zero = os.path.join(imp, "osu-5.6.2-allreduce-excalibur.json"), os.path.join(imp, "nccl-2.9.6-broadcast-error-col-i82.json")
    rc, text, se = ctx.run("report", osu, os.path.join(FIXTURES, "single.json"))
    check(rc == 0, f"report: rc {rc}\n{se}")
    check("19 of 19 records hold no busbw" in text, text[:800])
    row = [l for l in text.splitlines() if l.strip().startswith("1 MiB") and "osu" not in l]
    check(row and row[0].split()[2] == "-", f"the 1 MiB all_reduce row shows busbw as {row}")
    rc, csv, se = ctx.run("report", "--format", "csv", osu)
    first = csv.splitlines()[1].split(",")
    head = csv.splitlines()[0].split(",")
    check(first[head.index("busbw_GBps")] == "", f"absent busbw in the CSV as {first[head.index('busbw_GBps')]!r}")
    rc, _, se = ctx.run("report", osu, "--html", ctx.path("osu.html"))
    page = open(ctx.path("osu.html")).read()
    check(rc == 0 and '<td class="num" data-v="4">4 B</td><td class="num">-</td>' in page, f"rc {rc} {se}: the 4 B row of the page")
    series = ctx.series(osu, os.path.join(FIXTURES, "single.json"))
    names = [s["config"] for p in series["panels"] for s in p["series"]]
    check(not any("osu" in n for n in names), f"a series for a document without busbw: {names}")
    rc, _, se = ctx.run("report", zero, "--plot-series", ctx.path("zero.json"))
    check(rc == 0, se)
    plan = ctx.plan(json.load(open(ctx.path("zero.json"))))
    check(any(t.startswith("not drawn (no value above 0 on a log axis)") for t in plan["title_lines"]), plan["title_lines"])


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-plot-"))

#!/usr/bin/env python3
"""Integration tests of `railkit sweep` and `railkit report`, run for real: railkit-bench on
4 local ranks under mpirun (ctest label `mpi`). Standard library only.

    sweep_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    sweep_cases.py --list

railkit passes --allow-run-as-root (as root) and --oversubscribe (single host) to mpirun itself,
so these tests set no OMPI_* variables. Exit 0 pass, 1 fail, 77 skipped.
"""
import csv
import io
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PLOT_SCRIPT = os.path.join(ROOT, "scripts", "plot_results.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Failure, Skip, check, railkit_main, shared_run, shared_run_made, shared_run_path  # noqa: E402

CASES = Cases()
case = CASES.add


ALGO_AXES = ["--axis", "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
             "--axis", "OMPI_MCA_coll_tuned_allreduce_algorithm=1,4"]
SMALL = ["--backend", "mpi", "--coll", "all_reduce", "-b", "1K", "-e", "1M", "-f", "32"]


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit = railkit
        self.bench = bench
        self.tmp = tmp

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def cmd(self, *args):
        argv = [self.railkit, *args]
        if self.bench and args and args[0] == "sweep":
            argv[2:2] = ["--bench", self.bench]
        return argv

    def run(self, *args, timeout=240):
        p = subprocess.run(self.cmd(*args), capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    def sweep(self, out, *args, bench_args=SMALL, timeout=240):
        return self.run("sweep", "--launcher", "mpirun", "--np", "4", "--out", out, *args, "--", *bench_args,
                        timeout=timeout)

    def algo_sweep(self):
        """The sweep of two Open MPI allreduce algorithms that done_when makes and checks (a ctest
        fixture, tests/CMakeLists.txt) and other cases read (also html_cases.py)."""
        def make(out):
            rc, so, se = self.sweep(out, *ALGO_AXES)
            check(rc == 0, f"sweep rc {rc}\n{se}")
        return shared_run("algo-sweep", self.tmp, make)

    def matrix(self, name, configs):
        p = self.path(name)
        with open(p, "w") as f:
            json.dump({"schema": "railkit.sweep-matrix/1", "configs": configs}, f)
        return p


def load(path):
    with open(path) as f:
        return json.load(f)


def live_processes_mentioning(text):
    """Pids (not zombies) whose command line mentions `text`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmd and state != "Z":
            found.append((int(pid), cmd))
    return found


def wait_no_leftovers(text, within_s=10):
    deadline = time.time() + within_s
    while time.time() < deadline:
        left = live_processes_mentioning(text)
        if not left:
            return
        time.sleep(0.2)
    raise Failure(f"processes left running: {left}")


def launches(out):
    return load(os.path.join(out, "sweep.json"))["launches"]


def statuses(out):
    """(name, status) of every finished launch, each round's in planned order (rounds are shuffled)."""
    planned = [c["name"] for c in load(os.path.join(out, "sweep.json"))["planned"]]
    ls = sorted(launches(out), key=lambda l: (l["round"], planned.index(l["name"])))
    return [(l["name"], l["status"]) for l in ls]


@case
def done_when(ctx):
    """The issue's command: two results documents whose run.env differ as asked, and the comparison.
    The sweep is kept for the cases that read it (ctx.algo_sweep)."""
    out = shared_run_path("algo-sweep", ctx.tmp)
    rc, so, se = ctx.sweep(out, *ALGO_AXES)
    check(rc == 0, f"rc {rc}\n{se}")
    sweep = load(os.path.join(out, "sweep.json"))
    check(sweep["schema"] == "railkit.sweep/2", sweep["schema"])
    check(sweep["rounds"] == 3 and isinstance(sweep["seed"], int), f"rounds {sweep['rounds']} seed {sweep['seed']}")
    check(sweep["backend"]["expected"] == "mpi" and sweep["backend"]["seen"] == ["mpi"], sweep["backend"])
    cfgs = sweep["launches"]
    check([c["status"] for c in cfgs] == ["ok"] * 6, statuses(out))
    # Every configuration, the baseline included, once per round, in the order each round recorded.
    check(len(sweep["order"]) == 3 and all(sorted(o) == sorted(c["name"] for c in sweep["planned"]) for o in sweep["order"]),
          sweep["order"])
    check([[c["name"] for c in cfgs if c["round"] == r] for r in (1, 2, 3)] == sweep["order"], "launches not in the recorded order")
    want = {"OMPI_MCA_coll_tuned_allreduce_algorithm=1": "1", "OMPI_MCA_coll_tuned_allreduce_algorithm=4": "4"}
    for c in cfgs:
        check(c["name"] in want, c["name"])
        check(c["env"] == {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                           "OMPI_MCA_coll_tuned_allreduce_algorithm": want[c["name"]]}, c["env"])
        doc = load(os.path.join(out, c["results"]))
        env = doc["run"]["env"]
        check(env.get("OMPI_MCA_coll_tuned_allreduce_algorithm") == want[c["name"]], env)
        check(env.get("OMPI_MCA_coll_tuned_use_dynamic_rules") == "1", env)
        check(doc["run"]["nranks"] == 4, doc["run"]["nranks"])
        check(doc["run"]["label"] == c["name"], doc["run"]["label"])
        check(len(doc["results"]) == 6, len(doc["results"]))
        check(os.path.exists(os.path.join(out, c["stdout"])) and os.path.exists(os.path.join(out, c["stderr"])),
              "logs missing")
        check("-x" in c["command"] and "--oversubscribe" in c["command"], c["command"])
    for needle in ["# all_reduce float sum, out-of-place: busbw (GB/s), median of the rounds, ratio to [1]", "[2]/[1]",
                   "verdict", "geometric mean of busbw / [1]", "winner per size range:", "1 KiB", "32 KiB", "1 MiB",
                   "3 rounds", "seed"]:
        check(needle in so, f"missing {needle!r} in:\n{so}")
    check("[1/6] round 1/3" in se and "[6/6] round 3/3" in se and "ETA" in se, se)
    shared_run_made(out)


@case
def identical_configs_no_winner(ctx):
    """Two configurations with the same settings: whatever the noise, no winner is named."""
    m = ctx.matrix("m.json", [{"name": "a"}, {"name": "b"}])
    out = ctx.path("sweep")
    rc, so, se = ctx.sweep(out, "--matrix", m, "--rounds", "4")
    check(rc == 0, f"rc {rc}\n{se}")
    rc, text, se = ctx.run("report", out, "--format", "csv")
    check(rc == 0, se)
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r["config"] == "b"]
    check(len(rows) == 6 and all(r["rounds"] == "4" for r in rows), rows)
    check(all(r["winner"] == "0" and r["verdict"] == "no significant difference" for r in rows),
          "a winner between identical configurations:\n" + text)
    check("the baseline [1] stands" in so and "over the baseline" not in so, so)


@case
def failing_config_goes_on(ctx):
    """A configuration that fails is recorded with its stderr and the sweep goes on; exit 10."""
    m = ctx.matrix("m.json", [
        {"name": "base"},
        {"name": "bad-dtype", "args": ["-d", "nosuchtype"]},
        {"name": "after", "env": {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                                  "OMPI_MCA_coll_tuned_allreduce_algorithm": "4"}},
    ])
    out = ctx.path("sweep")
    rc, so, se = ctx.sweep(out, "--matrix", m, "--rounds", "1")
    check(rc == 10, f"rc {rc}\n{se}")
    check(statuses(out) == [("base", "ok"), ("bad-dtype", "failed"), ("after", "ok")], statuses(out))
    bad = [c for c in launches(out) if c["name"] == "bad-dtype"][0]
    check(bad["results"] is None, bad)
    check(bad["exit_code"] not in (0, None), bad)
    check((bad["error"] or "").startswith("exit code "), bad["error"])
    # mpirun may end rank 0 before its message is forwarded; when the message arrived, the
    # recorded error must carry it.
    with open(os.path.join(out, bad["stderr"])) as f:
        if "nosuchtype" in f.read():
            check("railkit-bench: error: -d/--datatype 'nosuchtype'" in bad["error"], bad["error"])
    check("1 of 3 launches failed" in se, se)
    check("bad-dtype  failed" in so and "[3]/[1]" in so, so)


@case
def timeout_config(ctx):
    """--timeout-s ends a hung configuration (the whole launch, ranks included) and goes on."""
    m = ctx.matrix("m.json", [
        {"name": "stall", "args": ["--inject-stall", "2", "-T", "120"]},
        {"name": "fine"},
    ])
    out = ctx.path("sweep")
    t0 = time.time()
    rc, so, se = ctx.sweep(out, "--matrix", m, "--rounds", "1", "--timeout-s", "4", "--kill-grace-s", "2")
    took = time.time() - t0
    check(rc == 10, f"rc {rc}\n{se}")
    check(statuses(out) == [("stall", "timeout"), ("fine", "ok")], statuses(out))
    check(took < 60, f"took {took:.0f} s")
    stall = [c for c in launches(out) if c["name"] == "stall"][0]
    check(stall["exit_code"] is None and "timed out" in stall["error"], stall)
    wait_no_leftovers(out)


@case
def interrupt_resume(ctx):
    """SIGINT mid-sweep keeps what finished; --resume runs only the rest."""
    axes = ["--axis", "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
            "--axis", "OMPI_MCA_coll_tuned_allreduce_algorithm=1,2,3,4"]
    bench_args = ["--backend", "mpi", "-b", "1K", "-e", "1M", "-f", "4", "-n", "60"]
    out = ctx.path("sweep")
    axes += ["--rounds", "1"]
    argv = ctx.cmd("sweep", "--launcher", "mpirun", "--np", "4", "--out", out, *axes, "--", *bench_args)
    err_path = ctx.path("first.stderr")
    with open(err_path, "w") as err:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        sweep_json = os.path.join(out, "sweep.json")
        deadline = time.time() + 120
        while time.time() < deadline and p.poll() is None:
            if os.path.exists(sweep_json) and len(load(sweep_json)["launches"]) >= 1:
                break
            time.sleep(0.05)
        check(p.poll() is None, "the sweep ended before it could be interrupted")
        time.sleep(0.3)  # into the next configuration
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=60)
    first_err = open(err_path).read()
    check(rc == 128 + signal.SIGINT, f"rc {rc}\n{first_err}")
    check("continue with --resume" in first_err, first_err)
    done = statuses(out)
    check(1 <= len(done) < 4 and all(s == "ok" for _, s in done), done)
    wait_no_leftovers(out)
    first = load(sweep_json)["launches"][0]
    first_doc = os.path.join(out, first["results"])
    mtime = os.stat(first_doc).st_mtime_ns

    rc, so, se = ctx.sweep(out, *axes, bench_args=bench_args)
    check(rc == 6 and "--resume" in se, f"without --resume: rc {rc}\n{se}")
    rc, so, se = ctx.sweep(out, "--resume", *axes, bench_args=bench_args)
    check(rc == 0, f"rc {rc}\n{se}")
    check([s for _, s in statuses(out)] == ["ok"] * 4, statuses(out))
    check(se.count("skipped (--resume)") == len(done), se)
    check(os.stat(first_doc).st_mtime_ns == mtime, "a finished configuration ran again")
    check("[4]/[1]" in so, so)


@case
def report_formats(ctx):
    """railkit report on a sweep directory and on loose documents, as table, markdown and csv."""
    out = ctx.algo_sweep()
    rc, table, se = ctx.run("report", out)
    check(rc == 0, f"rc {rc}\n{se}")
    check("geometric mean" in table and "[2]/[1]" in table, table)

    rc, md, se = ctx.run("report", out, "--format", "markdown")
    check(rc == 0 and "### all_reduce float sum, out-of-place" in md and "|---:|" in md, md + se)

    rc, text, se = ctx.run("report", out, "--format", "csv")
    check(rc == 0, se)
    rows = list(csv.DictReader(io.StringIO(text)))
    check(len(rows) == 3 * 2 * 2, f"{len(rows)} rows")  # sizes x placements x configurations
    base = [r for r in rows if r["baseline"] == "1"]
    check(len(base) == 6 and all(r["ratio_to_baseline"] == "1" for r in base), base)
    check({r["config"] for r in rows} == {"OMPI_MCA_coll_tuned_allreduce_algorithm=1",
                                          "OMPI_MCA_coll_tuned_allreduce_algorithm=4"}, rows)

    cfgs = sorted((c for c in launches(out) if c["round"] == 1), key=lambda c: c["name"])
    docs = [os.path.join(out, c["results"]) for c in cfgs]
    rc, so, se = ctx.run("report", *docs, "--baseline", "OMPI_MCA_coll_tuned_allreduce_algorithm=4")
    check(rc == 0 and "baseline [2] OMPI_MCA_coll_tuned_allreduce_algorithm=4" in so, so + se)

    # Bad input: exit 6 with one line naming it (CLI11's own parse errors add a --help hint).
    for args, what, one_line in [(["report", ctx.path("nope.json")], "missing file", True),
                                 (["report", ctx.tmp], "directory without sweep.json", True),
                                 (["report", out, "--baseline", "zzz"], "unknown baseline", True),
                                 (["report", out, "--plot", ctx.path("p.gif")], "bad plot extension", True),
                                 (["report", out, "--format", "yaml"], "bad format", False)]:
        rc, so, se = ctx.run(*args)
        check(rc == 6, f"{what}: rc {rc}\n{se}")
        check(not one_line or len(se.strip().splitlines()) == 1, f"{what}: not one line:\n{se}")


def have_matplotlib():
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"
    return subprocess.run([py, "-c", "import matplotlib"], capture_output=True).returncode == 0


@case
def report_plot(ctx):
    """--plot draws PNG and SVG with python3-matplotlib; without it, one line naming the package, exit 5."""
    # The script's own answer when matplotlib cannot be imported (simulated by blocking the import).
    series = ctx.path("series.json")
    with open(series, "w") as f:
        json.dump({"panels": [{"title": "t", "series": [{"name": "a", "bytes": [8, 16], "busbw_GBps": [1, 2]}]}]}, f)
    block = ("import sys; sys.modules['matplotlib'] = None; sys.argv = sys.argv[1:]; "
             "exec(compile(open(sys.argv[0]).read(), sys.argv[0], 'exec'))")
    p = subprocess.run([sys.executable, "-c", block, PLOT_SCRIPT, "--series", series, "--out", ctx.path("x.png")],
                       capture_output=True, text=True)
    check(p.returncode == 5 and "python3-matplotlib" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"rc {p.returncode}: {p.stderr}")

    if not have_matplotlib():
        raise Skip("python3-matplotlib is not installed: skipping the drawing")
    out = ctx.algo_sweep()
    png, svg = ctx.path("busbw.png"), ctx.path("busbw.svg")
    rc, so, se = ctx.run("report", out, "--plot", png)
    check(rc == 0, f"rc {rc}\n{se}")
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "not a PNG")
    rc, so, se = ctx.run("report", out, "--plot", svg, "--format", "csv")
    check(rc == 0, f"rc {rc}\n{se}")
    text = open(svg).read()
    check("<svg" in text and "all_reduce float sum, out-of-place" in text, "svg without the panel title")


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-sweep-"))

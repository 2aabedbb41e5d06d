#!/usr/bin/env python3
"""Integration tests of `railkit history` and `railkit sweep --prom`, run for real: railkit-bench
--backend mpi on local ranks under mpirun (ctest label `mpi`). Standard library only.

    history_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    history_cases.py --list

Exit 0 pass, 1 fail, 77 skipped.
"""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, check, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add

BENCH = ["--backend", "mpi", "--coll", "all_reduce", "-b", "256K", "-e", "1M", "-f", "2", "-n", "40", "-w", "5"]


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit = railkit
        self.bench = bench or os.path.join(os.path.dirname(railkit), "railkit-bench")
        self.tmp = tmp
        self.db = os.path.join(tmp, "data", "history.sqlite")

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def run(self, *args, timeout=240):
        env = dict(os.environ, XDG_DATA_HOME=self.path("xdg"))
        p = subprocess.run([self.railkit, *args], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, env=env)
        return p.returncode, p.stdout, p.stderr

    def hist(self, *args):
        return self.run("history", args[0], "--db", self.db, *args[1:])

    def bench_run(self, out, np=2):
        """One real railkit-bench run under mpirun, its document at `out`."""
        mpirun = shutil.which("mpirun")
        argv = [mpirun, "--oversubscribe", "-np", str(np)]
        if os.geteuid() == 0:
            argv.insert(1, "--allow-run-as-root")
        p = subprocess.run(argv + [self.bench, *BENCH, "-J", out], capture_output=True, text=True, timeout=240,
                           stdin=subprocess.DEVNULL)
        check(p.returncode == 0, f"railkit-bench rc {p.returncode}\n{p.stderr}")
        return out


@case
def history_add_show_check(ctx):
    """Real runs added (twice: idempotent), shown over time, checked; a synthetic regression flagged, exit 10."""
    docs = [ctx.bench_run(ctx.path(f"run{i}.json")) for i in range(5)]
    rc, so, se = ctx.hist("add", *docs)
    check(rc == 0 and "5 documents added (30 results), 0 already present" in so, f"rc {rc}\n{so}{se}")
    rc, so, se = ctx.hist("add", *docs)
    check(rc == 0 and "0 documents added (0 results), 5 already present" in so, f"rc {rc}\n{so}{se}")

    rc, so, se = ctx.hist("show", "--op", "all_reduce", "--bytes", "1M", "--format", "json")
    check(rc == 0, f"rc {rc}\n{se}")
    shown = [p for p in json.loads(so) if not p["in_place"]]
    check(len(shown) == 5, f"{len(shown)} out-of-place points, expected 5\n{so}")
    for p, path in zip(shown, docs):  # oldest first, each the document's figures
        d = json.load(open(path))
        rec = [r for r in d["results"] if r["bytes"] == 1048576 and not r["in_place"]][0]
        check(p["document"] == os.path.abspath(path), f"{p['document']} != {path}")
        check(abs(p["busbw_GBps"] - rec["busbw_GBps"]) < 1e-9, f"busbw {p['busbw_GBps']} != {rec['busbw_GBps']}")
        check(p["cluster"] == "hosts:" + ",".join(sorted(set(d["run"]["hosts"]))), p["cluster"])
        check(p["nranks"] == 2 and p["backend"] == "mpi" and p["timing_method"] == "back_to_back", str(p))
    rc, so, se = ctx.hist("show", "--op", "all_reduce", "--bytes", "1M", "--last", "2")
    check(rc == 0 and so.count("run3.json") == 2 and so.count("run4.json") == 2 and "run0.json" not in so,
          f"--last 2:\n{so}")
    check("all_reduce float sum 1 MiB out_of_place: hosts:" in so, f"table heading:\n{so}")

    # Too few comparable runs: said, never a pass.
    rc, so, se = ctx.hist("check", "--min-runs", "10")
    check(rc == 0 and "cannot judge" in so and "only 4 comparable runs (need 10)" in so, f"rc {rc}\n{so}")
    check(not any(line.startswith(("within band", "REGRESSION", "above band")) for line in so.splitlines()), so)
    check(so.startswith("rule: band = median +- max(3 x 1.4826 x MAD, 5% of the median)"), so)

    # A synthetic regression (made by this test, not measured): the newest real run with every
    # busbw and algbw cut to 1 % of the lowest of the real runs at its size and placement, and a
    # later start time. The run-to-run noise of local ranks on a shared machine is often wider
    # than the default band's reach (its low end below 0: nothing could be flagged), so the check
    # narrows the band with the rule's options: median +- 50 % of the median.
    lowest = {}
    for path in docs:
        for r in json.load(open(path))["results"]:
            k = (r["bytes"], r["in_place"])
            lowest[k] = min(lowest.get(k, float("inf")), r["busbw_GBps"])
    d = json.load(open(docs[-1]))
    d["run"]["label"] = "synthetic-regression"
    d["run"]["start_time"] = "2999-01-01T00:00:00Z"
    for r in d["results"]:
        factor = 0.01 * lowest[(r["bytes"], r["in_place"])] / r["busbw_GBps"]
        r["busbw_GBps"] *= factor
        r["algbw_GBps"] *= factor
    synthetic = ctx.path("synthetic-regression.json")
    with open(synthetic, "w") as f:
        json.dump(d, f)
    narrow = ("--k", "0", "--tolerance", "0.5")
    rc, so, se = ctx.hist("check", synthetic, *narrow)
    check(rc == 10, f"rc {rc}, expected 10 (regression)\n{so}{se}")
    flagged = [line for line in so.splitlines() if line.startswith("REGRESSION")]
    check(len(flagged) == 6 and all("synthetic-regression.json" in line for line in flagged), so)
    check("6 results: 6 regressions" in so and "50% of the median" in so, so)
    # The default rule judges it too, whatever the noise says: exit 10 exactly when it flags.
    rc, so, se = ctx.hist("check", synthetic)
    check(rc == (10 if any(line.startswith("REGRESSION") for line in so.splitlines()) else 0), f"rc {rc}\n{so}")
    check("0 not judged" in so, so)

    # Added, it is the newest run of its keys: the check without documents finds it too.
    rc, so, se = ctx.hist("add", synthetic)
    check(rc == 0, se)
    rc, so, se = ctx.hist("check", *narrow)
    check(rc == 10 and sum(line.startswith("REGRESSION") for line in so.splitlines()) == 6, f"rc {rc}\n{so}")

    # The documents are the truth: a rebuild from them gives the same rows.
    os.remove(ctx.db)
    for ext in ("-wal", "-shm"):
        if os.path.exists(ctx.db + ext):
            os.remove(ctx.db + ext)
    rc, so, se = ctx.hist("rebuild", "--from", ctx.tmp)
    check(rc == 0 and "rebuilt from 6 documents (36 results)" in so, f"rc {rc}\n{so}{se}")
    rc, so, se = ctx.hist("show", "--op", "all_reduce", "--bytes", "262144", "--format", "csv")
    check(rc == 0 and len(so.strip().splitlines()) == 1 + 2 * 6, so)


@case
def history_default_db_and_errors(ctx):
    """The default database under XDG_DATA_HOME; a newer schema and a bad document: one line, exit 6."""
    doc = ctx.bench_run(ctx.path("r.json"))
    for verb in (["show", "--op", "all_reduce", "--bytes", "1M"], ["check"]):  # nothing to read: no empty database made
        rc, so, se = ctx.run("history", *verb)
        check(rc == 6 and len(se.strip().splitlines()) == 1 and "no such file" in se, f"rc {rc}\n{se}")
        check(not os.path.exists(ctx.path("xdg", "railkit", "history.sqlite")), f"{verb[0]} created a database")
    rc, so, se = ctx.run("history", "add", doc)
    check(rc == 0 and os.path.exists(ctx.path("xdg", "railkit", "history.sqlite")), f"rc {rc}\n{so}{se}")
    import sqlite3
    con = sqlite3.connect(ctx.path("xdg", "railkit", "history.sqlite"))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    rc, so, se = ctx.run("history", "show", "--op", "all_reduce", "--bytes", "1M")
    check(rc == 6 and len(se.strip().splitlines()) == 1 and "newer than this railkit" in se, f"rc {rc}\n{se}")
    with open(ctx.path("junk.json"), "w") as f:
        f.write("{}")
    rc, so, se = ctx.hist("add", ctx.path("junk.json"))
    check(rc == 6 and len(se.strip().splitlines()) == 1 and "junk.json" in se, f"rc {rc}\n{se}")


def parse_textfile(text):
    """metric -> {labels text: value}, failing on what promtool would reject."""
    helps, types, series = {}, {}, {}
    sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
    label = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(?:,|$)')
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            name = line.split(" ")[2]
            seen = helps if line.startswith("# HELP ") else types
            check(name not in seen, f"repeated: {line}")
            check(name not in series, f"after samples: {line}")
            seen[name] = True
            continue
        m = sample.match(line)
        check(m, f"not a sample: {line!r}")
        name, body = m.group(1), m.group(2) or ""
        check(name in types and name in helps, f"no HELP/TYPE: {line}")
        pos, labels = 0, {}
        for lm in label.finditer(body):
            check(lm.start() == pos, f"junk in labels: {line}")
            pos = lm.end()
            check(lm.group(1) not in labels and " " not in lm.group(2), f"bad label: {line}")
            labels[lm.group(1)] = lm.group(2)
        check(pos == len(body), f"labels: {line}")
        check(body not in series.setdefault(name, {}), f"duplicate series: {line}")
        series[name][body] = (labels, float(m.group(3)))
    return series


@case
def sweep_prom_matches_documents(ctx):
    """railkit sweep --prom: one textfile for the sweep, every sample equal to its round's document;
    the sweep directory then goes into the history."""
    out, prom = ctx.path("sweep"), ctx.path("sweep.prom")
    bad = ctx.run("sweep", "--bench", ctx.bench, "--launcher", "mpirun", "--np", "2", "--out", out,
                  "--axis", "OMPI_MCA_coll_tuned_use_dynamic_rules=1", "--prom", ctx.path("nodir", "x.prom"),
                  "--", *BENCH)
    check(bad[0] == 6 and len(bad[2].strip().splitlines()) == 1 and not os.path.exists(out), f"{bad}")
    rc, so, se = ctx.run("sweep", "--bench", ctx.bench, "--launcher", "mpirun", "--np", "2", "--out", out,
                         "--axis", "OMPI_MCA_coll_tuned_allreduce_algorithm=1,4",
                         "--axis", "OMPI_MCA_coll_tuned_use_dynamic_rules=1", "--rounds", "2", "--prom", prom,
                         "--", *BENCH)
    check(rc == 0, f"sweep rc {rc}\n{se}")
    series = parse_textfile(open(prom).read())
    check(set(series) == {"railkit_sweep_busbw_gbps", "railkit_sweep_time_us",
                          "railkit_sweep_last_run_timestamp_seconds"}, str(series.keys()))
    sweep = json.load(open(os.path.join(out, "sweep.json")))
    n = 0
    for launch in sweep["launches"]:
        d = json.load(open(os.path.join(out, launch["results"])))
        for r in d["results"]:
            want = {"config": launch["name"], "round": str(launch["round"]), "op": r["op"], "bytes": str(r["bytes"]),
                    "placement": "in_place" if r["in_place"] else "out_of_place", "backend": "mpi",
                    "timing_method": "back_to_back"}
            hits = [v for labels, v in series["railkit_sweep_busbw_gbps"].values()
                    if all(labels.get(k) == x for k, x in want.items())]
            check(len(hits) == 1 and abs(hits[0] - r["busbw_GBps"]) < 1e-9, f"{want}: {hits} vs {r['busbw_GBps']}")
            n += 1
    check(n == len(series["railkit_sweep_busbw_gbps"]) == 2 * 2 * 6, f"{n} records")
    check(all("simulated" not in labels for labels, _ in series["railkit_sweep_time_us"].values()), "simulated?")

    rc, so, se = ctx.hist("add", out)
    check(rc == 0 and "4 documents added (24 results)" in so, f"rc {rc}\n{so}{se}")


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-history-"))

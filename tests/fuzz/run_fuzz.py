#!/usr/bin/env python3
"""Runs one libFuzzer target, as ctest's fuzz.<name> (replay) and fuzz.<name>.run (fuzzing) cases do.

--seconds 0 replays: every input of the seed corpus (tests/fuzz/corpus/<name>) runs once
(libFuzzer's -runs=0), the default tier's regression check. --seconds N fuzzes for N seconds with
-seed=$RAILKIT_FUZZ_SEED (default 1; 0 picks a new seed each run) from that corpus into a temporary
working corpus, then, with --merge, merges the inputs that reach new coverage back into the seed
corpus (libFuzzer's -merge=1), so that the next run starts further on (the slow tier; commit them).
A crash, a leak, a sanitizer report, an uncaught exception or a timeout of one input fails the case;
the input that did it is kept under --artifacts (add it to the seed corpus once the bug is fixed).
The last line says how many inputs ran, and a one-line summary is written to --summary for
scripts/sanitize.sh's table.

usage: run_fuzz.py --target BIN --corpus DIR --seconds N --artifacts DIR --summary FILE [--merge]
                   [--tree sysfs:NAME|dcqcn]   (generate that fixture tree; RAILKIT_FUZZ_TREE names it)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--tree")
    ap.add_argument("--max-len", type=int, default=8192)
    ap.add_argument("--merge", action="store_true", help="merge new coverage into --corpus")
    a = ap.parse_args()
    target_name = os.path.basename(a.target)
    os.makedirs(a.artifacts, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="railkit-fuzz-") as tmp:
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1:symbolize=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        env["TMPDIR"] = tmp
        fixtures = os.path.join(HERE, "..", "fixtures")
        if a.tree and a.tree.startswith("sysfs:"):
            name = a.tree.split(":", 1)[1]
            trees = os.path.join(tmp, "trees")
            subprocess.run([sys.executable, os.path.join(fixtures, "sysfs", "gen_sysfs.py"), "--out", trees, name],
                           check=True, stdout=subprocess.DEVNULL)
            env["RAILKIT_FUZZ_TREE"] = os.path.join(trees, name)
        elif a.tree == "dcqcn":
            tree = os.path.join(tmp, "dcqcn")
            subprocess.run([sys.executable, os.path.join(fixtures, "dcqcn", "gen_dcqcn.py"), tree],
                           check=True, stdout=subprocess.DEVNULL)
            env["RAILKIT_FUZZ_TREE"] = tree
        elif a.tree:
            ap.error(f"--tree {a.tree}: expected sysfs:NAME or dcqcn")
        work = os.path.join(tmp, "corpus")
        os.makedirs(work)
        seeds = len(os.listdir(a.corpus))
        common = ["-timeout=10", "-rss_limit_mb=2560", f"-max_len={a.max_len}",
                  "-artifact_prefix=" + os.path.join(a.artifacts, "")]
        if a.seconds == 0:
            cmd = [a.target, "-runs=0", *common, work, a.corpus]  # anything written goes to work
        else:
            # A fixed seed makes the run repeatable: the same build explores the same inputs in the
            # same order, so a shorter run is a prefix of a longer one that passed.
            seed = os.environ.get("RAILKIT_FUZZ_SEED", "1")
            cmd = [a.target, f"-seed={seed}", f"-max_total_time={a.seconds}", "-print_final_stats=1", *common,
                   work, a.corpus]
        print("+", " ".join(cmd), flush=True)
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
        if p.returncode != 0:
            print(p.stdout[-12000:])
            print(f"{target_name}: FAILED; the input is kept in {a.artifacts}: {sorted(os.listdir(a.artifacts))}")
            write_summary(a.summary, f"{target_name}: FAILED, exit {p.returncode}")
            return 1
        if a.seconds == 0:
            cov = re.search(r"INITED cov: (\d+)", p.stdout)
            line = f"{target_name}: replayed {seeds} saved inputs, {cov.group(1) if cov else '?'} coverage points, exit 0"
        else:
            execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", p.stdout)
            found = len(os.listdir(work))
            merged = merge(a, env, work, common) if a.merge else 0
            line = (f"{target_name}: {execs.group(1) if execs else '?'} executions in {a.seconds} s, "
                    f"{seeds} seeds, {found} new inputs" + (f", {merged} merged into {a.corpus}" if a.merge else "")
                    + ", exit 0")
        write_summary(a.summary, line)
        print(line)
        return 0


def merge(a, env, work, common):
    """Merges the working corpus's inputs that add coverage into the seed corpus; returns how many."""
    before = set(os.listdir(a.corpus))
    cmd = [a.target, "-merge=1", "-use_counters=0", *common, a.corpus, work]  # new edges, not new hit counts
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if p.returncode != 0:
        print(p.stdout[-4000:])
        raise SystemExit(f"{os.path.basename(a.target)}: merging into {a.corpus} failed (exit {p.returncode})")
    return len(set(os.listdir(a.corpus)) - before)


def write_summary(path, line):
    with open(path, "w") as f:
        f.write(line + "\n")


if __name__ == "__main__":
    sys.exit(main())

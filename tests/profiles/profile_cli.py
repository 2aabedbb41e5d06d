#!/usr/bin/env python3
"""`railkit profile` for real: refusal of profiles that set LD_PRELOAD or PATH by every command,
hostile values in nccl.conf, check and exec against generated sysfs roots (hostile values through
every shell format and the Kubernetes exports: hostile_cli.py).
Standard library only (PyYAML for the Kubernetes formats, zsh/fish/dash when installed; each
missing one is skipped with a printed reason).

    profile_cli.py --railkit build/bin/railkit [--case NAME]...
    profile_cli.py --list

Exit 0 pass, 1 fail, 77 when every case was skipped.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
VALID = os.path.join(ROOT, "tests", "fixtures", "profiles", "valid.json")
GEN_SYSFS = os.path.join(ROOT, "tests", "fixtures", "sysfs", "gen_sysfs.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import SKIP, Cases, check, listing  # noqa: E402

CASES = Cases()
case = CASES.add

KEY = "NCCL_SOCKET_IFNAME"  # allowed prefix, not in the tunables table: passed through unchanged

# Each must come back byte for byte and run nothing (PWNED must never appear).
HOSTILE = [
    "it's",
    '"double" quotes',
    "$(touch PWNED)",
    "`touch PWNED`",
    "x; touch PWNED",
    "x && touch PWNED #",
    "'; touch PWNED; '",
    "\"; touch PWNED; \"",
    "a\nb",
    "a\nexport LD_PRELOAD=/tmp/evil.so; touch PWNED",
    "a\n$(touch PWNED)\n",
    "back\\slash",
    "trailing\\",
    "\\'",
    "\\",
    "'",
    "100%",
    "%s%n%d",
    "\u00e9\u20ac\U0001f600 non-ASCII",
    "${PWNED:=x}$HOME",
    "*",
    "!!",
    " leading and trailing ",
    "-e",
    "tab\there",
    "cr\rhere",
    "",
]


class Ctx:
    def __init__(self, railkit, tmp):
        self.railkit = railkit
        self.tmp = tmp
        self._roots = {}
        self._facts = {}

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def run(self, *args, env=None, cwd=None, timeout=60):
        """`railkit profile ARGS` (`railkit topo ...` as given)."""
        argv = [self.railkit, *args] if args[0] == "topo" else [self.railkit, "profile", *args]
        p = subprocess.run(argv, capture_output=True, timeout=timeout, env=env, cwd=cwd,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

    def profile(self, name, mutate=None):
        with open(VALID) as f:
            doc = json.load(f)
        if mutate:
            mutate(doc)
        path = self.path(name + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def root(self, fixture):
        """A generated sysfs tree (tests/fixtures/sysfs) and its fingerprint."""
        if fixture not in self._roots:
            out = self.path("sysfs")
            subprocess.run([sys.executable, GEN_SYSFS, "--out", out, fixture], check=True, capture_output=True)
            r = os.path.join(out, fixture)
            rc, so, se = self.run("topo", "--root", r, "--format", "json")
            check(rc == 0, "railkit topo --root %s: rc %d: %s" % (r, rc, se))
            fp = json.loads(so)["fingerprint"]
            self._roots[fixture] = (r, fp["hash"])
            self._facts[fixture] = fp["facts"]
        return self._roots[fixture]

    def facts(self, fixture):
        """The fingerprint facts `railkit topo` gives the fixture."""
        self.root(fixture)
        return self._facts[fixture]


def with_env(key, value, where="settings"):
    def mutate(doc):
        if where == "settings":
            doc["settings"]["env"][key] = value
        elif where == "decision":
            doc["decisions"][1]["env"][key] = value
        else:
            doc["evidence"]["baseline_env"][key] = value
    return mutate


def every_command(ctx, path, root):
    """argv of every command and format, for one profile."""
    cmds = [["show", path], ["check", path, "--root", root], ["env", path]]
    cmds += [["env", path, "--shell", s] for s in ("bash", "zsh", "fish", "dotenv")]
    cmds += [["export", path, "--format", f]
             for f in ("k8s-configmap", "k8s-env", "slurm", "nccl-conf", "nccl-tuner-csv", "ompi-rules")]
    cmds += [["exec", path, "--root", root, "--force", "--", "touch", ctx.path("RAN")]]
    return cmds


@case
def refuses_disallowed_keys(ctx):
    root, _ = ctx.root("dgx-h100")
    for key in ("LD_PRELOAD", "PATH", "LD_LIBRARY_PATH", "nccl_debug", "NCCL_A=B"):
        for where in ("settings", "decision", "baseline"):
            path = ctx.profile("bad-%s-%s" % (key.replace("=", "_"), where), with_env(key, "/tmp/evil.so", where))
            for argv in every_command(ctx, path, root):
                rc, so, se = ctx.run(*argv)
                check(rc == 6, "%s: rc %d, expected 6 (usage)" % (argv, rc))
                check(key in se and "not an allowed environment variable" in se,
                      "%s: stderr does not name %s: %r" % (argv, key, se))
                check("evil" not in so, "%s: printed the value: %r" % (argv, so))
                check(not os.path.exists(ctx.path("RAN")), "%s: ran the command" % argv)


@case
def refuses_invalid_documents(ctx):
    root, _ = ctx.root("dgx-h100")

    def schema2(doc):
        doc["schema"] = "railkit.profile/2"

    def out_of_range(doc):
        doc["settings"]["env"]["NCCL_IB_TC"] = "300"

    def wrong_type(doc):
        doc["cluster"]["nodes"] = "two"

    for name, mutate, text in (("schema2", schema2, "unsupported schema"),
                               ("range", out_of_range, "NCCL_IB_TC=300: above the maximum 255"),
                               ("type", wrong_type, "cluster.nodes: expected an integer")):
        path = ctx.profile(name, mutate)
        for argv in every_command(ctx, path, root):
            rc, _, se = ctx.run(*argv)
            check(rc == 6 and text in se, "%s: rc %d, stderr %r (expected 6 and %r)" % (argv, rc, se, text))
    rc, _, se = ctx.run("show", ctx.path("missing.json"))
    check(rc == 9, "a missing file: rc %d, expected 9: %s" % (rc, se))


@case
def deep_nesting_is_one_line(ctx):
    """200 000 levels of nesting (once a segfault in every command): exit 6, one line naming the file."""
    root, _ = ctx.root("dgx-h100")
    good = ctx.profile("good")
    with open(good) as f:
        text = f.read()
    at = text.index('"extra": {') + len('"extra": {')
    path = ctx.path("deep.json")
    with open(path, "w") as f:
        f.write(text[:at] + '"deep": ' + "[" * 200000 + "]" * 200000 + ", " + text[at:])
    for argv in every_command(ctx, path, root):
        rc, so, se = ctx.run(*argv)
        check(rc == 6 and "nested deeper than 128 levels" in se and path in se and len(se.strip().splitlines()) == 1,
              "%s: rc %d, stderr %r" % (argv, rc, se[:300]))
        check(not os.path.exists(ctx.path("RAN")), "%s: ran the command" % argv)


@case
def export_never_overwrites_its_input(ctx):
    """`export P --out P` overwrote the profile it read: refused, the file left as it was."""
    path = ctx.profile("self")
    before = open(path).read()
    for argv in (["export", path, "--format", "slurm", "--out", path], ["env", path, "--out", path]):
        rc, so, se = ctx.run(*argv)
        check(rc == 6 and "the profile being read" in se, "%s: rc %d, stderr %r" % (argv, rc, se))
        check(open(path).read() == before, "%s: the profile changed" % argv)
    # A --root typo is bad input (exit 6), and exec does not run its command.
    for argv in (["check", path, "--root", ctx.path("typo")],
                 ["exec", path, "--root", ctx.path("typo"), "--force", "--", "touch", ctx.path("RAN")]):
        rc, so, se = ctx.run(*argv)
        check(rc == 6 and "--root" in se and "not a directory" in se, "%s: rc %d, stderr %r" % (argv, rc, se))
    check(not os.path.exists(ctx.path("RAN")), "exec ran with a --root that does not exist")
    link = ctx.path("link.json")
    os.symlink(path, link)
    rc, so, se = ctx.run("export", path, "--format", "slurm", "--out", link)
    check(rc == 6 and open(path).read() == before, "through a link: rc %d, stderr %r" % (rc, se))


@case
def warns_about_pass_through_keys(ctx):
    rc, so, se = ctx.run("env", VALID)
    check(rc == 0, "rc %d: %s" % (rc, se))
    check("railkit: warning: settings.env.NCCL_SOCKET_IFNAME: not in the tunables table; passed through unchanged\n"
          in se, "no pass-through warning: %r" % se)
    check("export NCCL_SOCKET_IFNAME='eth0'\n" in so, "value not exported as is: %r" % so)


@case
def many_warnings_of_one_kind_are_one_line(ctx):
    """10 000 pass-through keys printed 10 000 warning lines (issue 14): one line with a count."""
    def many(doc):
        for i in range(10000):
            doc["settings"]["env"]["NCCL_RAILKIT_TEST_%d" % i] = "1"
    rc, so, se = ctx.run("env", ctx.profile("many", many))
    check(rc == 0, "rc %d: %s" % (rc, se[-500:]))
    lines = [l for l in se.splitlines() if "not in the tunables table" in l]
    check(len(lines) == 1 and lines[0].endswith("passed through unchanged (and 10000 more like it)"),
          "want one line with a count: %d lines, first %r" % (len(lines), lines[:2]))
    check(so.count("export NCCL_RAILKIT_TEST_") == 10000, "every key still exported")


def nccl_conf_read(text):
    """NCCL's setEnvFile (src/misc/param.cc): NAME=value per line, verbatim."""
    env = {}
    for line in text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        env[k] = v
    return env


@case
def nccl_conf_carries_or_refuses(ctx):
    for i, value in enumerate(HOSTILE):
        path = ctx.profile("hostile-conf-%d" % i, with_env(KEY, value))
        rc, so, se = ctx.run("export", path, "--format", "nccl-conf")
        if "\n" in value or "\r" in value:
            check(rc == 6 and "settings.env.%s" % KEY in se and "line break" in se,
                  "nccl-conf %r: rc %d, stderr %r (expected 6 naming the key)" % (value, rc, se))
            check(so == "", "nccl-conf %r: printed something on refusal: %r" % (value, so))
            continue
        check(rc == 0, "nccl-conf %r: rc %d: %s" % (value, rc, se))
        env = nccl_conf_read(so)
        check(env.get(KEY) == value and env.get("NCCL_IB_TC") == "106", "nccl-conf: %r read back as %r" % (value, env))
        check(not any(k.startswith("OMPI_") for k in env), "nccl-conf holds a non-NCCL key")
        check("OMPI_MCA_coll_tuned_use_dynamic_rules: not an NCCL variable" in se, "no warning for the OMPI key: %r" % se)


@case
def exports_of_the_fixture(ctx):
    for fmt_name in ("k8s-configmap", "k8s-env", "slurm", "nccl-conf", "ompi-rules"):
        out = ctx.path("export." + fmt_name)
        rc, so, se = ctx.run("export", VALID, "--format", fmt_name, "--out", out)
        check(rc == 0 and so == "", "%s: rc %d, stdout %r: %s" % (fmt_name, rc, so, se))
        rc2, so2, _ = ctx.run("export", VALID, "--format", fmt_name)
        with open(out) as f:
            check(f.read() == so2, "%s: --out differs from stdout" % fmt_name)
        check(not [n for n in os.listdir(ctx.tmp) if n.startswith("export." + fmt_name) and n != "export." + fmt_name],
              "%s: a temporary file was left" % fmt_name)
    rc, so, _ = ctx.run("export", VALID, "--format", "ompi-rules")
    check("2 # collective id (allreduce)" in so and "65536 4 0 0" in so, "ompi-rules: %r" % so)
    rc, so, se = ctx.run("export", VALID, "--format", "yaml")
    check(rc == 6, "an unknown format: rc %d" % rc)
    # The fixture's decisions set Open MPI algorithms only: nothing for NCCL's tuner.
    rc, so, se = ctx.run("export", VALID, "--format", "nccl-tuner-csv")
    check(rc == 10 and so == "" and "nothing to export: no decision sets NCCL_ALGO or NCCL_PROTO" in se,
          "tuner csv of the fixture: rc %d, stdout %r, stderr %r" % (rc, so, se))

    def nccl_decision(doc):
        doc["decisions"][1]["env"] = {"NCCL_ALGO": "Tree", "NCCL_PROTO": "LL128", "NCCL_MAX_NCHANNELS": "8"}

    rc, so, se = ctx.run("export", ctx.profile("tuner", nccl_decision), "--format", "nccl-tuner-csv")
    check(rc == 0 and "\nallreduce,65536,1048576,tree,ll128,8,2,4\n" in so, "tuner csv: rc %d %r %s" % (rc, so, se))


@case
def empty_exports_say_so(ctx):
    """An export that would carry nothing exits 10 with the reason on stderr, and writes nothing."""
    def ompi_only(doc):
        doc["settings"]["env"] = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1"}

    def nothing(doc):
        doc["settings"]["env"] = {}
        for d in doc["decisions"]:
            d["env"] = {}

    cases = [
        ("ompi-only", ompi_only, "nccl-conf", "settings.env has no NCCL_* variable; nccl.conf would hold none"),
        ("ompi-only", ompi_only, "nccl-tuner-csv", "no decision sets NCCL_ALGO or NCCL_PROTO"),
        ("nothing", nothing, "nccl-conf", "settings.env is empty; nccl.conf would hold no variable"),
        ("nothing", nothing, "k8s-configmap", "settings.env is empty"),
        ("nothing", nothing, "k8s-env", "settings.env is empty"),
        ("nothing", nothing, "slurm", "settings.env is empty"),
        ("nothing", nothing, "ompi-rules", "no decision chooses an Open MPI algorithm"),
    ]
    for name, mutate, fmt_name, why in cases:
        path = ctx.profile("empty-" + name, mutate)
        rc, so, se = ctx.run("export", path, "--format", fmt_name)
        check(rc == 10, "%s %s: rc %d, expected 10: %r" % (name, fmt_name, rc, se))
        check(so == "", "%s %s: printed %r" % (name, fmt_name, so))
        check("--format %s: nothing to export: %s" % (fmt_name, why) in se and "nothing written" in se,
              "%s %s: stderr does not say why: %r" % (name, fmt_name, se))
        # --out: an existing file is left as it was, no file is created.
        out = ctx.path("kept." + fmt_name)
        with open(out, "w") as f:
            f.write("previous\n")
        rc, _, _ = ctx.run("export", path, "--format", fmt_name, "--out", out)
        with open(out) as f:
            check(rc == 10 and f.read() == "previous\n", "%s %s --out: rc %d, the file was replaced" % (name, fmt_name, rc))
        fresh = ctx.path("fresh." + name + "." + fmt_name)
        rc, _, _ = ctx.run("export", path, "--format", fmt_name, "--out", fresh)
        check(rc == 10 and not os.path.exists(fresh), "%s %s --out: rc %d, a file was created" % (name, fmt_name, rc))
    # The same profile still exports what it has.
    rc, so, se = ctx.run("export", ctx.profile("empty-ompi-only", ompi_only), "--format", "slurm")
    check(rc == 0 and "export OMPI_MCA_coll_tuned_use_dynamic_rules='1'" in so, "slurm: rc %d %r" % (rc, se))


def table_cells(text, section, first):
    """The cells (two or more spaces apart) of the line starting with `first` below `section`."""
    lines = text.split("\n")
    start = lines.index(section) if section in lines else len(lines)
    for line in lines[start + 1:]:
        if line.startswith("  " + first):
            return re.split(r" {2,}", line.strip())
    return None


@case
def show_numbers_come_from_the_same_rows(ctx):
    """A decision that kept the baseline (its own busbw 0.89 / 0.89, ratio 1.445) beside the A/B row of
    the candidate measured against it: show prints baseline, tuned and ratio from that row."""
    def kept_baseline(doc):
        doc["decisions"] = [{
            "coll": "all_gather", "min_bytes": 4096, "max_bytes": 16383, "env": {}, "config": "baseline",
            "busbw_GBps": 0.89, "baseline_busbw_GBps": 0.89, "ratio": 1.445, "ratio_lo": 0.9, "ratio_hi": 2.1,
            "significant": False}]
        doc["evidence"]["rows"] = [{
            "coll": "all_gather", "bytes": 4096, "baseline_busbw_GBps": [0.5, 2.0], "tuned_busbw_GBps": [1.0, 2.0],
            "ratio": 2 ** 0.5, "ratio_lo": 0.9, "ratio_hi": 2.1}]
        doc["expectations"] = [{"coll": "all_gather", "bytes": 4096, "busbw_GBps": 0.89, "tolerance": 0.19233557}]

    rc, so, se = ctx.run("show", ctx.profile("kept-baseline", kept_baseline))
    check(rc == 0, "rc %d: %s" % (rc, se))
    row = table_cells(so, "decisions (1)", "all_gather")
    check(row == ["all_gather", "4 KiB..<16 KiB", "baseline", "1.00", "1.41", "1.414 [0.900, 2.100]", "no", "(defaults)"],
          "decision row: %r\n%s" % (row, so))
    row = table_cells(so, "evidence rows (1)", "all_gather")
    check(row == ["all_gather", "4 KiB", "2", "1.00", "1.41", "1.414 [0.900, 2.100]"], "evidence row: %r\n%s" % (row, so))
    row = table_cells(so, "expectations (1)", "all_gather")
    check(row == ["all_gather", "4 KiB", "0.890", "19.2%", ">= 0.719", "settings.env"], "expectation row: %r\n%s" % (row, so))
    check("railkit: warning: decisions[0] (all_gather 4 KiB..<16 KiB): its ratio 1.445 is not its evidence row's "
          "(1.414); show prints the row's" in se, "no warning about the decision's own ratio: %r" % se)


@case
def show_prints_the_evidence_table(ctx):
    rc, so, se = ctx.run("show", VALID)
    check(rc == 0, "rc %d: %s" % (rc, se))
    for part in ("profile fixture-two-nodes", "decisions (2)", "expectations (1)", "evidence rows (1)",
                 "ratio [95% CI]", "2.000 [1.500, 2.500]", "validated     yes"):
        check(part in so, "show lacks %r:\n%s" % (part, so))


@case
def check_compares_with_the_node(ctx):
    root, fp = ctx.root("dgx-h100")
    other, other_fp = ctx.root("pcie-2socket")
    check(fp != other_fp, "the two fixtures have the same fingerprint")

    def recorded(doc, fingerprint=fp, nccl="2.21.5+cuda12.4"):
        doc["cluster"]["fingerprint"] = fingerprint
        doc["cluster"].pop("fingerprint_facts")  # the hash only, as profiles before fingerprint_facts
        doc["cluster"]["nic_models"] = ["ConnectX-7"]
        doc["cluster"]["extra"]["nccl_version"] = nccl

    same = ctx.profile("same", recorded)
    rc, so, se = ctx.run("check", same, "--root", root, "--nccl-version", "2.21")
    check(rc == 0 and "fingerprint: same (%s)" % fp in so and "NCCL: same (2.21)" in so and "NIC models: same" in so,
          "matching node: rc %d:\n%s%s" % (rc, so, se))
    rc, so, se = ctx.run("check", same, "--root", root)
    check(rc == 0 and "NCCL: unknown on this node" in so, "no NCCL on the fixture: rc %d:\n%s" % (rc, so))
    rc, so, se = ctx.run("check", same, "--root", root, "--nccl-version", "2.19.3")
    check(rc == 10 and "NCCL: differs: profile 2.21, this node 2.19" in so, "NCCL differs: rc %d:\n%s" % (rc, so))
    rc, so, se = ctx.run("check", same, "--root", other)
    check(rc == 10 and "fingerprint: differs: profile %s, this node %s" % (fp, other_fp) in so,
          "other node: rc %d:\n%s%s" % (rc, so, se))
    check("cannot be named" in so, "a profile with only the hash does not say it cannot name the facts:\n%s" % so)
    rc, so, se = ctx.run("check", ctx.profile("nofp", lambda d: recorded(d, "")), "--root", other, "--nccl-version", "2.21")
    check("fingerprint: not recorded" in so, "an empty fingerprint: %s" % so)
    # NCCL found from a library file name under the root
    lib = ctx.path("libroot")
    shutil.copytree(root, lib, symlinks=True)
    os.makedirs(os.path.join(lib, "usr/lib/x86_64-linux-gnu"))
    open(os.path.join(lib, "usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5"), "w").close()
    os.symlink("libnccl.so.2.21.5", os.path.join(lib, "usr/lib/x86_64-linux-gnu/libnccl.so.2"))
    rc, so, se = ctx.run("check", same, "--root", lib)
    check(rc == 0 and "NCCL: same (2.21)" in so and "libnccl.so.2.21.5" in so, "libnccl under the root: rc %d:\n%s" % (rc, so))
    rc, so, se = ctx.run("check", same, "--root", root, "--nccl-version", "two")
    check(rc == 6, "a bad --nccl-version: rc %d" % rc)


@case
def check_names_the_differing_fact(ctx):
    """A profile that stores the fingerprint's facts, made on dgx-h100, checked on the same machine
    whose mlx5_9 runs at 200 Gb/s: check names that fact with both values."""
    root, fp = ctx.root("dgx-h100")
    slow, slow_fp = ctx.root("dgx-rate-mismatch")
    check(fp != slow_fp, "the rate change does not change the fingerprint")

    def recorded(doc):
        doc["cluster"]["fingerprint"] = fp
        doc["cluster"]["fingerprint_facts"] = ctx.facts("dgx-h100")
        doc["cluster"]["nic_models"] = ["ConnectX-7"]

    path = ctx.profile("facts", recorded)
    rc, so, se = ctx.run("check", path, "--root", root, "--nccl-version", "2.21")
    check(rc == 0 and "fingerprint: same (%s)" % fp in so, "the profiled node: rc %d:\n%s%s" % (rc, so, se))
    rc, so, se = ctx.run("check", path, "--root", slow, "--nccl-version", "2.21")
    check(rc == 10, "the slow node: rc %d, expected 10:\n%s%s" % (rc, so, se))
    check("fingerprint: differs: profile %s, this node %s [" % (fp, slow_fp) in so, "no fingerprint line:\n%s" % so)
    check("\n  mlx5_9.rate_Gbps: profile 400, this node 200\n" in so, "the differing fact is not named:\n%s" % so)
    named = [l.split(":")[0].strip() for l in so.split("\n") if l.startswith("  ")]
    check(all(ctx.facts("dgx-h100").get(n) != ctx.facts("dgx-rate-mismatch").get(n) for n in named),
          "a fact that does not differ is listed: %s" % named)
    check(set(named) == {k for k in set(ctx.facts("dgx-h100")) | set(ctx.facts("dgx-rate-mismatch"))
                         if ctx.facts("dgx-h100").get(k) != ctx.facts("dgx-rate-mismatch").get(k)},
          "not every differing fact is named: %s" % named)
    # exec refuses and names the fact too.
    marker = ctx.path("RAN-facts")
    rc, so, se = ctx.run("exec", path, "--root", slow, "--nccl-version", "2.21", "--", "touch", marker)
    check(rc == 10 and "railkit:   mlx5_9.rate_Gbps: profile 400, this node 200\n" in se and not os.path.exists(marker),
          "exec on the slow node: rc %d: %r" % (rc, se))
    # show says how many facts the profile records.
    rc, so, se = ctx.run("show", path)
    check(rc == 0 and "(%d facts recorded)" % len(ctx.facts("dgx-h100")) in so, "show: rc %d:\n%s" % (rc, so))
    # A bad value of a fact is refused, naming it.
    bad = ctx.profile("facts-bad", lambda d: d["cluster"].update(fingerprint_facts={"nic.count": 8}))
    rc, so, se = ctx.run("check", bad, "--root", root)
    check(rc == 6 and "cluster.fingerprint_facts.nic.count: expected a string" in se, "a bad fact: rc %d %r" % (rc, se))


@case
def exec_runs_or_refuses(ctx):
    root, fp = ctx.root("dgx-h100")
    other, _ = ctx.root("pcie-2socket")
    value = "a'b\"$(touch PWNED)`touch PWNED`\n\\"

    def recorded(doc):
        doc["cluster"]["fingerprint"] = fp
        doc["cluster"]["fingerprint_facts"] = ctx.facts("dgx-h100")
        doc["cluster"]["nic_models"] = ["ConnectX-7"]
        doc["settings"]["env"][KEY] = value

    path = ctx.profile("exec", recorded)
    work = ctx.path("exec-work")
    os.makedirs(work)
    env = dict(os.environ, NCCL_SOCKET_IFNAME="inherited", RAILKIT_TEST_KEEP="kept")
    printer = ["python3", "-c", "import os,sys; sys.stdout.write(os.environ['%s'] + '|' + os.environ['NCCL_IB_TC'] + '|' "
               "+ os.environ['RAILKIT_TEST_KEEP'] + '|' + '|'.join(sys.argv[1:]))" % KEY, "$(touch PWNED)", "a b"]
    rc, so, se = ctx.run("exec", path, "--root", root, "--", *printer, env=env, cwd=work)
    check(rc == 0, "matching fingerprint: rc %d: %s" % (rc, se))
    check(so == value + "|106|kept|$(touch PWNED)|a b", "exec: got %r" % so)
    rc, so, se = ctx.run("exec", path, "--root", root, "--", "env", env=env, cwd=work)
    check(rc == 0 and "\nNCCL_IB_TC=106\n" in "\n" + so and "OMPI_MCA_coll_tuned_use_dynamic_rules=1" in so,
          "exec env: rc %d: %r" % (rc, so))
    rc, so, se = ctx.run("exec", path, "--root", root, "--", "python3", "-c", "import sys; sys.exit(3)", cwd=work)
    check(rc == 3, "the command's exit status: rc %d" % rc)
    marker = os.path.join(work, "RAN")
    rc, so, se = ctx.run("exec", path, "--root", other, "--", "touch", marker, cwd=work)
    check(rc == 10, "differing fingerprint: rc %d, expected 10: %s" % (rc, se))
    check("fingerprint: differs" in se and "--force" in se, "refusal does not show the difference: %r" % se)
    check(not os.path.exists(marker), "ran the command on a differing node")
    rc, so, se = ctx.run("exec", path, "--root", other, "--force", "--", "touch", marker, cwd=work)
    check(rc == 0 and os.path.exists(marker), "--force: rc %d: %s" % (rc, se))
    check("railkit: warning: fingerprint: differs" in se, "--force: no warning: %r" % se)
    os.remove(marker)
    rc, so, se = ctx.run("exec", path, "--root", root, "--", "railkit-no-such-command", cwd=work)
    check(rc == 127 and "command not found" in se, "a missing command: rc %d: %r" % (rc, se))
    rc, so, se = ctx.run("exec", path, "--root", root, cwd=work)
    check(rc == 6, "no command: rc %d" % rc)
    check(os.listdir(work) == [], "files appeared: %s" % os.listdir(work))


def main(cases=CASES):
    """The command line; hostile_cli.py runs its own cases through it."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--railkit")
    ap.add_argument("--case", action="append")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        return listing(cases)
    if not a.railkit:
        ap.error("--railkit is required")
    names = a.case or list(cases)
    rcs = []
    with tempfile.TemporaryDirectory(prefix="railkit-profile-cli-") as tmp:
        ctx = Ctx(os.path.abspath(a.railkit), tmp)
        for n in names:
            rcs.append(cases.run(n, ctx, also_failures=(subprocess.TimeoutExpired, KeyError, ValueError)))
    if any(rc == 1 for rc in rcs):
        return 1
    return SKIP if all(rc == SKIP for rc in rcs) else 0


if __name__ == "__main__":
    sys.exit(main())

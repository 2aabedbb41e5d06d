#!/usr/bin/env python3
"""Tests of `railkit job`, run for real: the batch scripts pass `bash -n` and, run by bash with a fake
srun/scontrol/railkit on PATH, hand railkit-bench (or railkit accept) exactly the arguments given; the
MPIJob manifests parse (python3-yaml) and match the MPIJob v2beta1 field schema written down from the
published CRD (mpijob-v2beta1.schema.json, python3-jsonschema), their ConfigMap carries the profile's
settings.env; bad flags are one line and exit 6; --out is written atomically.

    job_cases.py --railkit build/bin/railkit --case NAME
    job_cases.py --list

Exit 0 pass, 1 fail, 77 skipped.
"""
import copy
import json
import os
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Skip, check, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add

SCHEMA = os.path.join(HERE, "mpijob-v2beta1.schema.json")
PROFILE = os.path.join(ROOT, "tests", "fixtures", "profiles", "valid.json")
AWKWARD = ["--label", "it's $(touch pwned) `x` \"q\" \\ *", "", "-b", "8K", "a b", "~", "\u00e9"]

# A program that records its argv (and a few variables) as JSON in $ARGV_LOG, one line per call.
RECORDER = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["ARGV_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv, "name": os.path.basename(sys.argv[0])}) + "\\n")
if os.path.basename(sys.argv[0]) == "scontrol":
    print("node-a")
    print("node-b")
"""


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit, self.tmp = railkit, tmp

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def job(self, *args, timeout=60):
        p = subprocess.run([self.railkit, "job", *args], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    def ok(self, *args):
        rc, out, err = self.job(*args)
        check(rc == 0, f"railkit job {' '.join(args)}: exit {rc}: {err.strip()}")
        return out

    def fakes(self):
        """A directory with recording srun, scontrol and railkit; returns (bin dir, argv log)."""
        d = self.path("fakebin")
        if not os.path.isdir(d):
            os.makedirs(d)
            for name in ("srun", "scontrol", "railkit", "railkit-bench"):
                p = os.path.join(d, name)
                with open(p, "w") as f:
                    f.write(RECORDER)
                os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
        return d, self.path("argv.log")


def bash_n(script_path):
    p = subprocess.run(["bash", "-n", script_path], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, f"bash -n {script_path}: {p.stderr.strip()}")


def sbatch_lines(text):
    return [line for line in text.splitlines() if line.startswith("#SBATCH ")]


def run_script(ctx, script, job_id="42"):
    """Runs the batch script with bash as Slurm would (its environment), the fakes first on PATH;
    returns the recorded calls."""
    bindir, log = ctx.fakes()
    if os.path.exists(log):
        os.remove(log)
    work = ctx.path("submit-" + job_id)
    os.makedirs(work)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), ARGV_LOG=log,
               SLURM_JOB_NAME="jobname", SLURM_JOB_ID=job_id, SLURM_JOB_NODELIST="node-[a-b]")
    p = subprocess.run(["bash", script], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"bash {script}: exit {p.returncode}: {p.stderr.strip()}")
    check(os.path.isdir(os.path.join(work, "results", "jobname-" + job_id)), "the results directory was not made")
    with open(log) as f:
        return [json.loads(line) for line in f], work


@case
def sbatch_passes_bash_n_and_requests_what_was_asked(ctx):
    variants = [
        (["--nodes", "4"], ["--job-name=railkit-bench", "--nodes=4", "--ntasks-per-node=8", "--gpus-per-task=1",
                            "--exclusive", "--output=%x-%j.out"]),
        (["--gpus-per-node", "4", "--tasks-per-node", "2", "--gpu-request", "gres", "--no-exclusive", "--name", "g.x_1"],
         ["--job-name=g.x_1", "--nodes=1", "--ntasks-per-node=2", "--gres=gpu:4", "--output=%x-%j.out"]),
        (["--gpus-per-node", "0", "--tasks-per-node", "2"],
         ["--job-name=railkit-bench", "--nodes=1", "--ntasks-per-node=2", "--exclusive", "--output=%x-%j.out"]),
        (["--accept", "--nodes", "2", "--profile", PROFILE],
         ["--job-name=railkit-accept", "--nodes=2", "--ntasks-per-node=8", "--gpus-per-task=1", "--exclusive",
          "--output=%x-%j.out"]),
    ]
    for n, (flags, want) in enumerate(variants):
        out = ctx.path(f"job{n}.sbatch")
        ctx.ok("--format", "sbatch", *flags, "--out", out, "--", "-b", "8", "-e", "1M")
        bash_n(out)
        with open(out) as f:
            text = f.read()
        got = [line.split(" ", 1)[1] for line in sbatch_lines(text)]
        check(got == want, f"{flags}: #SBATCH lines {got}, expected {want}")
        check(text.startswith("#!/bin/bash\n"), f"{flags}: no bash shebang")


@case
def sbatch_hands_the_bench_its_arguments_exactly(ctx):
    out = ctx.path("awkward.sbatch")
    ctx.ok("--format", "sbatch", "--nodes", "2", "--gpus-per-node", "0", "--tasks-per-node", "3",
           "--bench", "/opt/rk bin/railkit-bench", "--out", out, "--", *AWKWARD)
    bash_n(out)
    calls, work = run_script(ctx, out)
    check([c["name"] for c in calls] == ["srun"], f"calls {[c['name'] for c in calls]}")
    argv = calls[0]["argv"][1:]
    want = ["--mpi=pmix", "--cpu-bind=cores", "/opt/rk bin/railkit-bench", "--backend", "mpi", *AWKWARD,
            "-J", "results/jobname-42/bench.json"]
    check(argv == want, f"srun got {argv}, expected {want}")
    check(not os.path.exists(os.path.join(work, "pwned")), "an argument was run by the shell")


@case
def sbatch_results_dir_is_inert_or_refused(ctx):
    """Issue 32: --results-dir reached the script's comment raw, so a newline in it ran the next line
    as a command. Printable values are quoted (the comment holds no newline); control characters
    are refused (bad_flags_are_one_line_and_exit_6)."""
    rc, out, err = ctx.job("--format", "sbatch", "--results-dir", "r\ntouch pwned #")
    check(rc == 6 and out == "" and "--results-dir" in err, f"newline: exit {rc}, stdout {out!r}, {err.strip()}")
    out = ctx.path("dir.sbatch")
    awkward = "it's $(touch pwned) `x` dir"
    ctx.ok("--format", "sbatch", "--gpus-per-node", "0", "--results-dir", awkward, "--out", out, "--", "-b", "8")
    bash_n(out)
    bindir, log = ctx.fakes()
    work = ctx.path("submit-dir")
    os.makedirs(work)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), ARGV_LOG=log,
               SLURM_JOB_NAME="jobname", SLURM_JOB_ID="7", SLURM_JOB_NODELIST="node-a")
    p = subprocess.run(["bash", out], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"bash {out}: exit {p.returncode}: {p.stderr.strip()}")
    check(os.path.isdir(os.path.join(work, awkward, "jobname-7")), f"no results directory: {os.listdir(work)}")
    check(not os.path.exists(os.path.join(work, "pwned")), "--results-dir was run by the shell")


@case
def sbatch_profile_goes_through_profile_exec(ctx):
    out = ctx.path("profile.sbatch")
    ctx.ok("--format", "sbatch", "--gpus-per-node", "2", "--profile", PROFILE, "--railkit", "/r/railkit",
           "--out", out, "--", "-b", "8")
    calls, _ = run_script(ctx, out)
    argv = calls[0]["argv"][1:]
    want = ["--mpi=pmix", "--cpu-bind=none", "/r/railkit", "profile", "exec", PROFILE, "--", "railkit-bench",
            "--backend", "nccl", "-b", "8", "--label", "jobname-42", "-J", "results/jobname-42/bench.json"]
    check(argv == want, f"srun got {argv}, expected {want}")
    rc, _, err = ctx.job("--format", "sbatch", "--profile", ctx.path("nowhere.json"), "--", "-b", "8")
    check(rc == 0 and "not found here" in err, f"a profile this machine lacks: exit {rc}, {err.strip()}")


@case
def sbatch_accept_runs_railkit_accept_over_the_job_nodes(ctx):
    out = ctx.path("accept.sbatch")
    bindir, _ = ctx.fakes()
    ctx.ok("--format", "sbatch", "--accept", "--nodes", "2", "--gpus-per-node", "4", "--profile", PROFILE,
           "--railkit", os.path.join(bindir, "railkit"), "--out", out, "--", "-b", "64M", "-e", "1G")
    bash_n(out)
    calls, work = run_script(ctx, out, job_id="7")
    check([c["name"] for c in calls] == ["scontrol", "railkit"], f"calls {[c['name'] for c in calls]}")
    check(calls[0]["argv"][1:] == ["show", "hostnames", "node-[a-b]"], f"scontrol got {calls[0]['argv']}")
    d = "results/jobname-7"
    want = ["accept", "--launcher", "srun", "--hostfile", d + "/hosts", "--ppn", "4", "--out", d + "/accept",
            "--junit", d + "/accept.xml", "--profile", PROFILE, "--bench-args=--backend nccl -b 64M -e 1G"]
    check(calls[1]["argv"][1:] == want, f"railkit got {calls[1]['argv'][1:]}, expected {want}")
    with open(os.path.join(work, d, "hosts")) as f:
        check(f.read() == "node-a\nnode-b\n", "the hostfile is not scontrol's host list")


def load_docs(text):
    import yaml
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    return [d for d in docs if d.get("kind") == "MPIJob"], [d for d in docs if d.get("kind") == "ConfigMap"]


def validator():
    try:
        import jsonschema
        import yaml  # noqa: F401
    except ImportError as e:
        raise Skip(f"python3-jsonschema / python3-yaml missing ({e}); run with /usr/bin/python3")
    with open(SCHEMA) as f:
        schema = json.load(f)
    return jsonschema.Draft202012Validator(schema)


def errors(v, doc):
    return [f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in v.iter_errors(doc)]


@case
def mpijob_matches_the_v2beta1_schema(ctx):
    v = validator()
    variants = [
        ["--nodes", "2"],
        ["--nodes", "16", "--gpus-per-node", "8", "--network", "default/rdma-net", "--clean-pod-policy", "All",
         "--rdma-resource", "rdma/hca_shared_devices_a", "--results-pvc", "bench-results", "--name", "nightly-16"],
        ["--gpus-per-node", "0", "--tasks-per-node", "4", "--rdma-resource", "none", "--ssh-auth-mount-path",
         "/home/mpiuser/.ssh"],
        ["--nodes", "2", "--profile", PROFILE],
        ["--accept", "--nodes", "4", "--profile", PROFILE, "--results-pvc", "shared"],
    ]
    for flags in variants:
        bench_args = ["-b", "8K", "-e", "\u00e9"] if "--accept" in flags else AWKWARD
        text = ctx.ok("--format", "mpijob", "--image", "registry.example/railkit:0.1", *flags, "--", *bench_args)
        jobs, maps = load_docs(text)
        check(len(jobs) == 1, f"{flags}: {len(jobs)} MPIJob documents")
        job = jobs[0]
        errs = errors(v, job)
        check(not errs, f"{flags}: not an MPIJob v2beta1: {errs[:5]}")
        spec = job["spec"]
        nodes = int(flags[flags.index("--nodes") + 1]) if "--nodes" in flags else 1
        gpus = int(flags[flags.index("--gpus-per-node") + 1]) if "--gpus-per-node" in flags else 8
        slots = int(flags[flags.index("--tasks-per-node") + 1]) if "--tasks-per-node" in flags else gpus
        check(spec["slotsPerWorker"] == slots, f"{flags}: slotsPerWorker {spec['slotsPerWorker']}")
        worker = spec["mpiReplicaSpecs"]["Worker"]
        check(worker["replicas"] == nodes, f"{flags}: Worker replicas {worker['replicas']}")
        wc = worker["template"]["spec"]["containers"][0]
        limits = wc.get("resources", {}).get("limits", {})
        check(limits.get("nvidia.com/gpu") == (gpus or None), f"{flags}: GPU limit {limits}")
        check("IPC_LOCK" in wc["securityContext"]["capabilities"]["add"], f"{flags}: no IPC_LOCK")
        shm = [m for m in wc["volumeMounts"] if m["mountPath"] == "/dev/shm"]
        vols = {x["name"]: x for x in worker["template"]["spec"]["volumes"]}
        check(shm and vols[shm[0]["name"]].get("emptyDir", {}).get("medium") == "Memory", f"{flags}: /dev/shm")
        launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
        cmd = launcher["command"]
        if "--accept" in flags:
            check(cmd[:6] == ["railkit", "accept", "--launcher", "mpirun", "--hostfile", "/etc/mpi/hostfile"],
                  f"{flags}: launcher {cmd}")
            check(cmd[-1] == "--bench-args=--backend nccl -b 8K -e \u00e9", f"{flags}: accept's bench arguments {cmd}")
        else:
            check(cmd[:4] == ["mpirun", "--allow-run-as-root", "-np", str(nodes * slots)], f"{flags}: launcher {cmd}")
            check(cmd[-2 - len(AWKWARD):-2] == AWKWARD, f"{flags}: bench arguments {cmd}")
        if "--profile" in flags:
            with open(PROFILE) as f:
                env = json.load(f)["settings"]["env"]
            cm = [m for m in maps if m["metadata"]["name"] == job["metadata"]["name"] + "-profile"]
            check(len(cm) == 1 and cm[0]["data"] == env, f"{flags}: the ConfigMap's data is not settings.env: {maps}")
            check(cm[0]["apiVersion"] == "v1", "ConfigMap apiVersion")
            check(wc["envFrom"] == [{"configMapRef": {"name": cm[0]["metadata"]["name"]}}], f"{flags}: envFrom {wc}")
            check(launcher["envFrom"] == wc["envFrom"], f"{flags}: the launcher has no envFrom")
            if "--accept" not in flags:
                forwarded = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-x"]
                check(sorted(forwarded) == sorted(env), f"{flags}: mpirun forwards {forwarded}, not {sorted(env)}")
            else:
                doc = [m for m in maps if m["metadata"]["name"].endswith("-doc")]
                with open(PROFILE) as f:
                    check(len(doc) == 1 and doc[0]["data"]["profile.json"] == f.read(), f"{flags}: the profile document")
                check("/etc/railkit/profile.json" in cmd, f"{flags}: accept is not given the profile: {cmd}")
        if "--network" in flags:
            ann = worker["template"]["metadata"]["annotations"]
            check(ann == {"k8s.v1.cni.cncf.io/networks": "default/rdma-net"}, f"{flags}: annotations {ann}")


@case
def the_schema_refuses_what_the_operator_refuses(ctx):
    v = validator()
    good = load_docs(ctx.ok("--format", "mpijob", "--image", "img", "--", "-b", "8"))[0][0]
    check(not errors(v, good), "the unmodified manifest should pass")

    def mutated(fn):
        d = copy.deepcopy(good)
        fn(d)
        return d

    bad = {
        "cleanPodPolicy running": lambda d: d["spec"]["runPolicy"].update(cleanPodPolicy="running"),
        "two launchers": lambda d: d["spec"]["mpiReplicaSpecs"]["Launcher"].update(replicas=2),
        "a third replica type": lambda d: d["spec"]["mpiReplicaSpecs"].update(Chief=d["spec"]["mpiReplicaSpecs"]["Worker"]),
        "unknown spec key": lambda d: d["spec"].update(slotsPerNode=1),
        "unknown container key": lambda d: d["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
        .update(gpus=8),
        "slots as a string": lambda d: d["spec"].update(slotsPerWorker="8"),
        "no image type": lambda d: d["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
        .update(image=["x"]),
        "restartPolicy Always": lambda d: d["spec"]["mpiReplicaSpecs"]["Worker"].update(restartPolicy="Always"),
        "v1 apiVersion": lambda d: d.update(apiVersion="kubeflow.org/v1"),
        "name with a capital": lambda d: d["metadata"].update(name="Railkit"),
        "no containers": lambda d: d["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"].update(containers=[]),
    }
    for what, fn in bad.items():
        check(errors(v, mutated(fn)), f"the schema accepted a manifest with {what}")


@case
def bad_flags_are_one_line_and_exit_6(ctx):
    bad = [
        (["--format", "slurm"], "--format"),
        (["--format", "mpijob"], "--image: required"),
        (["--format", "sbatch", "--image", "x"], "--image: applies to --format mpijob only"),
        (["--format", "mpijob", "--image", "x", "--gpu-request", "gres"], "--gpu-request: applies to --format sbatch"),
        (["--format", "sbatch", "--nodes", "0"], "--nodes"),
        (["--format", "sbatch", "--gpus-per-node", "-1"], "--gpus-per-node"),
        (["--format", "sbatch", "--", "-J", "x.json"], "-J/--output_file is set by railkit job"),
        (["--format", "sbatch", "--", "--backend=mpi"], "--backend is set by railkit job"),
        (["--format", "sbatch", "--accept", "--", "--ranks-per-node", "2"], "--ranks-per-node is set by railkit job"),
        (["--format", "sbatch", "--accept", "--", "--coll", "all_reduce all_gather"], "splits --bench-args at spaces"),
        (["--format", "sbatch", "--name", "a/b"], "--name a/b"),
        (["--format", "sbatch", "--tasks-per-node", "3"], "must equal --gpus-per-node 8"),
        (["--format", "mpijob", "--image", "x", "--name", "Railkit"], "not a Kubernetes name"),
        (["--format", "mpijob", "--image", "x", "--name", "a" * 60, "--nodes", "100"], "longer than 63"),
        (["--format", "mpijob", "--image", "x", "--clean-pod-policy", "Sometimes"], "--clean-pod-policy"),
        (["--format", "mpijob", "--image", "x", "--rdma-resource", "rdma"], "--rdma-resource rdma"),
        (["--format", "mpijob", "--image", "x", "--accept"], "needs --results-pvc"),
        (["--format", "mpijob", "--image", "x", "--profile",
          os.path.join(ROOT, "tests", "fixtures", "profiles", "invalid", "env-key-not-allowed.json")], "env"),
        (["--format", "mpijob", "--image", "x", "--", "\udcff"], "bench argument 1"),
        # issue 32: a newline would end the script's comment and run the next line as a command
        (["--format", "sbatch", "--results-dir", "r\ntouch pwned"], "--results-dir r\\x0atouch pwned: holds a control"),
        (["--format", "sbatch", "--profile", "p\r.json"], "--profile p\\x0d.json"),
        (["--format", "mpijob", "--image", "x", "--bench", "b\x1b[2J"], "--bench b\\x1b[2J"),
        (["--format", "sbatch", "--railkit", "r\x7f"], "--railkit r\\x7f"),
    ]
    for args, says in bad:
        rc, out, err = ctx.job(*args)
        lines = err.strip().splitlines()
        check(rc == 6, f"{args}: exit {rc}, expected 6 ({err.strip()})")
        check(len(lines) == 1 and says in lines[0], f"{args}: stderr {lines}, expected one line saying {says!r}")
        check(out == "", f"{args}: wrote to stdout")


@case
def out_is_written_atomically(ctx):
    args = ["--format", "mpijob", "--image", "img", "--profile", PROFILE]
    stdout = ctx.ok(*args)
    d = ctx.path("out")
    os.makedirs(d)
    target = os.path.join(d, "job.yaml")
    with open(target, "w") as f:
        f.write("old")
    rc, out, err = ctx.job(*args, "--out", target)
    check(rc == 0 and out == "" and f"wrote {target}" in err, f"--out: exit {rc}, {err.strip()}")
    with open(target) as f:
        check(f.read() == stdout, "--out differs from stdout")
    check(os.listdir(d) == ["job.yaml"], f"left behind: {os.listdir(d)}")
    rc, _, err = ctx.job(*args, "--out", d)
    check(rc == 6 and len(err.strip().splitlines()) == 1, f"--out a directory: exit {rc}, {err.strip()}")
    import shutil
    mine = ctx.path("profile.json")
    shutil.copy(PROFILE, mine)
    rc, _, err = ctx.job(*args[:4], "--profile", mine, "--out", mine)
    check(rc == 6 and "the profile being read" in err, f"--out the profile: exit {rc}, {err.strip()}")
    with open(PROFILE) as a, open(mine) as b:
        check(a.read() == b.read(), "the profile was overwritten")


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-job-"))

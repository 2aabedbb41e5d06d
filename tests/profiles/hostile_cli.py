#!/usr/bin/env python3
"""`railkit profile env` and `export` for real with hostile values (HOSTILE in profile_cli.py): every
shell format and reader (each result sourced, the value compared byte for byte, no command run)
and the Kubernetes exports (parsed). zsh, fish and dash are used when installed (each missing one
is skipped with a printed reason), PyYAML for the Kubernetes formats.

    hostile_cli.py --railkit build/bin/railkit [--case NAME]...
    hostile_cli.py --list

Exit 0 pass, 1 fail, 77 when every case was skipped.
"""
import os
import shutil
import subprocess
import sys

from profile_cli import HOSTILE, KEY, with_env
import profile_cli

sys.path.insert(0, os.path.join(profile_cli.ROOT, "tests", "lib"))
from casekit import Cases, Skip, check  # noqa: E402

CASES = Cases()
case = CASES.add


def source_and_read(shell_argv, file, cwd, home):
    """Runs a shell that sources `file`, then python3 printing the exported KEY as bytes."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "F": file}
    p = subprocess.run(shell_argv, capture_output=True, cwd=cwd, env=env, timeout=60, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


PRINT = "python3 -c 'import os,sys; sys.stdout.buffer.write(os.environb[b\"%s\"])'" % KEY

SHELLS = {
    # format -> [(reader name, argv)]
    "bash": [("bash", ["bash", "--norc", "--noprofile", "-c", '. "$F" && ' + PRINT]),
             ("dash", ["dash", "-c", '. "$F" && ' + PRINT])],
    "zsh": [("zsh", ["zsh", "-f", "-c", '. "$F" && ' + PRINT])],
    "fish": [("fish", ["fish", "--no-config", "-c", "source $F; and " + PRINT])],
    "dotenv": [("bash set -a", ["bash", "--norc", "--noprofile", "-c", 'set -a; . "$F" && set +a && ' + PRINT]),
               ("dash set -a", ["dash", "-c", 'set -a; . "$F" && set +a && ' + PRINT])],
    "slurm": [("bash", ["bash", "--norc", "--noprofile", "-c", '. "$F" && ' + PRINT])],
}


def print_all(keys):
    """A command printing each of `keys` from the environment, each value followed by a NUL."""
    return "python3 -c 'import os,sys; sys.stdout.buffer.write(b\"\".join(os.environb[os.fsencode(k)] + b\"\\0\" for k in sys.argv[1:]))' " + \
        " ".join(keys)


def write_env(ctx, path, fmt_name, name):
    """`railkit profile env --shell FMT` (export --format slurm) of `path` into a new working directory
    `name`; returns (directory, file written)."""
    work = ctx.path(name)
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "env.out")
    if fmt_name == "slurm":
        rc, _, se = ctx.run("export", path, "--format", "slurm", "--out", out, cwd=work)
    else:
        rc, _, se = ctx.run("env", path, "--shell", fmt_name, "--out", out, cwd=work)
    check(rc == 0, "%s (%s): rc %d: %s" % (fmt_name, os.path.basename(path), rc, se))
    return work, out


@case
def hostile_values_survive_every_shell_format(ctx):
    """Every hostile value at once (one variable each) through every format and every reader: each comes
    back byte for byte and nothing runs. The one-value-per-profile matrix is the slow tier's
    hostile_values_one_by_one_every_shell_format."""
    keys = ["%s_%02d" % (KEY, i) for i in range(len(HOSTILE))]

    def mutate(doc):
        for k, v in zip(keys, HOSTILE):
            doc["settings"]["env"][k] = v
    path = ctx.profile("hostile-all", mutate)
    want = b"".join(v.encode() + b"\0" for v in HOSTILE)
    for fmt_name, readers in SHELLS.items():
        work, out = write_env(ctx, path, fmt_name, "work-all-%s" % fmt_name)
        for reader, argv in readers:
            if shutil.which(argv[0]) is None:
                print("  skip %s: %s is not installed" % (reader, argv[0]))
                continue
            argv = argv[:-1] + [argv[-1].replace(PRINT, print_all(keys))]
            rc, so, se = source_and_read(argv, out, work, ctx.path("home"))
            check(rc == 0, "%s via %s: rc %d: %s" % (fmt_name, reader, rc, se.decode(errors="replace")))
            got = so.split(b"\0")[:-1]
            bad = [(v, g) for v, g in zip(HOSTILE, got) if g != v.encode()]
            check(so == want and not bad, "%s via %s: values changed (expected, got): %r" % (fmt_name, reader, bad or so))
            check(os.listdir(work) == ["env.out"], "%s via %s: files appeared: %s" % (fmt_name, reader, os.listdir(work)))


@case
def hostile_values_one_by_one_every_shell_format(ctx):
    """Each hostile value alone in its profile, through every format and reader (slow tier)."""
    skipped = set()
    for fmt_name, readers in SHELLS.items():
        for reader, argv in readers:
            if shutil.which(argv[0]) is None:
                if reader not in skipped:
                    print("  skip %s: %s is not installed" % (reader, argv[0]))
                    skipped.add(reader)
                continue
            for i, value in enumerate(HOSTILE):
                path = ctx.profile("hostile-%d" % i, with_env(KEY, value))
                work, out = write_env(ctx, path, fmt_name, "work-%s-%d" % (fmt_name, i))
                rc, so, se = source_and_read(argv, out, work, ctx.path("home"))
                check(rc == 0, "%s via %s, value %r: rc %d: %s" % (fmt_name, reader, value, rc, se.decode(errors="replace")))
                check(so == value.encode(), "%s via %s: got %r, expected %r" % (fmt_name, reader, so, value.encode()))
                check(os.listdir(work) == ["env.out"],
                      "%s via %s, value %r: files appeared: %s" % (fmt_name, reader, value, os.listdir(work)))


@case
def hostile_values_survive_kubernetes_yaml(ctx):
    try:
        import yaml
    except ImportError:
        raise Skip("PyYAML is not importable")
    for i, value in enumerate(HOSTILE):
        path = ctx.profile("hostile-k8s-%d" % i, with_env(KEY, value))
        rc, so, se = ctx.run("export", path, "--format", "k8s-configmap")
        check(rc == 0, "configmap %r: rc %d: %s" % (value, rc, se))
        doc = yaml.safe_load(so)
        check(doc["kind"] == "ConfigMap" and doc["data"][KEY] == value,
              "configmap: %r came back as %r" % (value, doc["data"].get(KEY)))
        check(all(isinstance(v, str) for v in doc["data"].values()), "configmap: a value is not a string")
        check("envFrom:" in so and "configMapRef:" in so, "configmap: no envFrom snippet")
        rc, so, se = ctx.run("export", path, "--format", "k8s-env")
        check(rc == 0, "k8s-env %r: rc %d: %s" % (value, rc, se))
        env = {e["name"]: e["value"] for e in yaml.safe_load(so)["env"]}
        check(env[KEY] == value and env["NCCL_IB_TC"] == "106", "k8s-env: %r came back as %r" % (value, env.get(KEY)))


if __name__ == "__main__":
    sys.exit(profile_cli.main(CASES))

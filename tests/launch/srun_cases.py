#!/usr/bin/env python3
"""railkit's srun path for real, through the private one-node Slurm of the ctest fixture `slurm`
(tests/lib/slurm.py; RAILKIT_TEST_SLURM names its state directory). A case skips when that Slurm
is not up (Slurm or munge not installed). Standard library only.

    srun_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    srun_cases.py --list

Exit 0 pass, 1 fail, 77 skipped.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Skip, check, railkit_main  # noqa: E402
import slurm  # noqa: E402

CASES = Cases()
case = CASES.add


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit, self.tmp = railkit, tmp
        self.bench = bench or os.path.join(os.path.dirname(railkit), "railkit-bench")

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def slurm_env(self):
        env = slurm.client_env()
        if env is None:
            raise Skip("no private Slurm is up (RAILKIT_TEST_SLURM=%s; tests/lib/slurm.py up DIR)"
                       % os.environ.get("RAILKIT_TEST_SLURM", ""))
        return env


@case
def slurm_runs(ctx):
    """The private Slurm runs a two-task job on its node."""
    env = ctx.slurm_env()
    p = subprocess.run(["srun", "--ntasks=2", "hostname"], env=env, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    check(p.returncode == 0, "srun --ntasks=2 hostname: exit %d: %s" % (p.returncode, p.stderr.strip()))
    lines = p.stdout.split()
    check(len(lines) == 2, "srun --ntasks=2 hostname printed %r, expected two lines" % p.stdout)


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-srun-"))

#!/usr/bin/env python3
"""A private one-node Slurm for the tests (and for trying railkit's srun path by hand).

Everything lives under one state directory DIR: its own munged (socket, key, seed, log, pid),
slurm.conf with free private ports, slurmctld's state, slurmd's spool, logs and pid files. The
daemons run as root, daemonised, with pid files; they are stopped by those pids (SIGTERM, a wait,
then SIGKILL), also when start-up fails half way.

    slurm.py up DIR      start it and wait until the node is idle; exit 0, 77 when the Slurm or
                         munge binaries are missing or this is not root (a skip for ctest), 1 with
                         the logs when it does not come up
    slurm.py down DIR    stop what `up DIR` started (nothing running is fine)
    slurm.py env DIR     print `export SLURM_CONF=...` for a shell

From python: `with PrivateSlurm(dir) as s: subprocess.run([...], env=s.env)`, or, in a test case
run under the ctest fixture, `client_env()` (the Slurm named by RAILKIT_TEST_SLURM; None when it is
not up).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

SKIP = 77
PROGRAMS = ("munged", "mungekey", "slurmctld", "slurmd", "sinfo", "srun", "scontrol")
DAEMONS = ("slurmd", "slurmctld", "munged")  # stopped in this order
PARTITION = "railkit"
MIN_CPUS = 8  # the CPUs the node claims at least (see _prepare)
UP_FILE = "up.json"  # written once the node is idle; names the conf, node and partition


class Unavailable(Exception):
    """Slurm or munge is not installed here (a skip, not a failure)."""


class StartFailed(Exception):
    """The private Slurm did not come up; the message holds the logs."""


def short_hostname():
    return socket.gethostname().split(".")[0]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def missing_programs():
    return [p for p in PROGRAMS if not shutil.which(p, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")]


def _program(name):
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") or name


def _clean_environ():
    """os.environ without the Slurm job variables of an enclosing allocation (SLURM_JOB_ID ...),
    which would make srun join that job instead of the private cluster."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") and not k.startswith("SRUN_")}


def _pid_alive(pid, needle):
    """Whether `pid` runs and its command line mentions `needle` (our state directory): a pid file
    left behind never makes us signal some other process that reuses the number."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    try:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
    except (OSError, IndexError):
        return False
    return needle in cmdline


def _read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _stop_pid(pid, needle, wait_s=10):
    if not _pid_alive(pid, needle):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        if not _pid_alive(pid, needle):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class PrivateSlurm:
    """A one-node Slurm under `workdir` (created; its previous daemons are stopped first).
    `.env`: os.environ (without an enclosing job's SLURM_* variables) plus SLURM_CONF;
    `.node`: the node name (this machine's short hostname); `.partition`: the default partition."""

    def __init__(self, workdir, timeout_s=30):
        self.dir = os.path.abspath(workdir)
        self.timeout_s = timeout_s
        self.node = short_hostname()
        self.partition = PARTITION
        self.conf = self.path("slurm.conf")
        self.env = dict(_clean_environ(), SLURM_CONF=self.conf)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- start ----------------------------------------------------------------------------------

    def start(self):
        """Starts munged, slurmctld and slurmd and waits until the node is idle. Raises Unavailable
        when a binary is missing or this is not root, StartFailed (with the logs) when it does not
        come up; whatever was started is stopped before raising."""
        if os.geteuid() != 0:
            raise Unavailable("the private Slurm runs munged, slurmctld and slurmd as root; this is uid %d"
                              % os.geteuid())
        missing = missing_programs()
        if missing:
            raise Unavailable("Slurm/munge not installed here (missing: %s; scripts/setup.sh installs slurm-wlm "
                              "and munge)" % ", ".join(missing))
        self.stop()
        try:
            self._prepare()
            self._start_munge()
            self._start_daemon("slurmctld", [_program("slurmctld"), "-f", self.conf])
            self._start_daemon("slurmd", [_program("slurmd"), "-f", self.conf, "-N", self.node])
            self._wait_idle()
            with open(self.path(UP_FILE), "w") as f:
                json.dump({"conf": self.conf, "node": self.node, "partition": self.partition}, f)
        except BaseException:
            self.stop()
            raise

    def _prepare(self):
        os.makedirs(self.dir, exist_ok=True)
        for sub in ("state", "spool"):
            shutil.rmtree(self.path(sub), ignore_errors=True)
            os.makedirs(self.path(sub))
        for name in ("munged.log", "slurmctld.log", "slurmd.log", "munge.key", "munge.seed", UP_FILE):
            if os.path.exists(self.path(name)):
                os.unlink(self.path(name))
        sock = self.path("munge.sock")
        if len(sock) > 100:
            raise StartFailed("state directory %s is too deep: the munge socket path %s is longer than a unix "
                              "socket allows; use a shorter directory" % (self.dir, sock))
        ctld_port, slurmd_port = free_port(), free_port()
        while slurmd_port == ctld_port:
            slurmd_port = free_port()
        # The node claims at least MIN_CPUS (config_overrides: slurmd does not drain it for having
        # fewer), so a job holds as many ranks as the mpirun cases start with --oversubscribe.
        cpus = max(os.cpu_count() or 1, MIN_CPUS)
        lines = [
            "# railkit tests: a private one-node Slurm (tests/lib/slurm.py); everything under " + self.dir,
            "ClusterName=railkit",
            "SlurmctldHost=" + self.node,
            "SlurmctldPort=%d" % ctld_port,
            "SlurmdPort=%d" % slurmd_port,
            "AuthType=auth/munge",
            "CredType=cred/munge",
            "AuthInfo=socket=" + sock,
            "SlurmUser=root",
            "SlurmdUser=root",
            "StateSaveLocation=" + self.path("state"),
            "SlurmdSpoolDir=" + self.path("spool"),
            "SlurmctldPidFile=" + self.path("slurmctld.pid"),
            "SlurmdPidFile=" + self.path("slurmd.pid"),
            "SlurmctldLogFile=" + self.path("slurmctld.log"),
            "SlurmdLogFile=" + self.path("slurmd.log"),
            "ProctrackType=proctrack/linuxproc",
            # task/affinity: srun can bind ranks (--cpu-bind=cores, which railkit passes for the
            # mpi backend); under task/none unbound busy-polling ranks share cores.
            "TaskPlugin=task/affinity",
            "MpiDefault=none",  # sites differ: railkit passes the MPI plugin itself
            "ReturnToService=2",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SlurmdParameters=config_overrides",
            "MessageTimeout=20",
            "KillWait=5",
            "InactiveLimit=0",
            "NodeName=%s CPUs=%d RealMemory=500 State=UNKNOWN" % (self.node, cpus),
            "PartitionName=%s Nodes=%s Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE"
            % (self.partition, self.node),
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _start_munge(self):
        key = self.path("munge.key")
        subprocess.run([_program("mungekey"), "--create", "--force", "--keyfile=" + key], check=True,
                       capture_output=True, timeout=30)
        os.chmod(key, 0o400)
        self._start_daemon("munged", [_program("munged"), "--force", "--socket=" + self.path("munge.sock"),
                                      "--key-file=" + key, "--pid-file=" + self.path("munged.pid"),
                                      "--log-file=" + self.path("munged.log"),
                                      "--seed-file=" + self.path("munge.seed")])

    def _start_daemon(self, name, argv):
        """Runs a daemon that forks itself and waits (bounded) for its pid file."""
        pidfile = self.path(name + ".pid")
        if os.path.exists(pidfile):
            os.unlink(pidfile)
        p = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=self.timeout_s)
        if p.returncode != 0:
            raise StartFailed("%s exited with %d: %s\n%s" % (name, p.returncode, (p.stdout + p.stderr).strip(),
                                                             self.logs()))
        end = time.monotonic() + self.timeout_s
        while time.monotonic() < end:
            pid = _read_pid(pidfile)
            if pid and _pid_alive(pid, self.dir):
                return
            time.sleep(0.1)
        raise StartFailed("%s did not write a live pid to %s within %g s\n%s" % (name, pidfile, self.timeout_s,
                                                                                 self.logs()))

    def _wait_idle(self):
        end = time.monotonic() + self.timeout_s
        state = ""
        while time.monotonic() < end:
            p = subprocess.run([_program("sinfo"), "-h", "-o", "%t", "-n", self.node], env=self.env,
                               capture_output=True, text=True, timeout=self.timeout_s)
            state = (p.stdout + p.stderr).strip()
            if p.returncode == 0 and state == "idle":
                return
            for name in ("slurmctld", "slurmd", "munged"):
                pid = _read_pid(self.path(name + ".pid"))
                if not pid or not _pid_alive(pid, self.dir):
                    raise StartFailed("%s is no longer running\n%s" % (name, self.logs()))
            time.sleep(0.5)
        raise StartFailed("node %s not idle within %g s (sinfo: %s)\n%s" % (self.node, self.timeout_s, state or "-",
                                                                           self.logs()))

    def logs(self):
        """The tails of the daemons' logs, for a failure message."""
        out = []
        for name in ("munged.log", "slurmctld.log", "slurmd.log"):
            try:
                with open(self.path(name), errors="replace") as f:
                    tail = f.read().splitlines()[-25:]
            except OSError:
                tail = ["(none)"]
            out.append("--- %s ---\n%s" % (self.path(name), "\n".join(tail)))
        return "\n".join(out)

    # -- stop -----------------------------------------------------------------------------------

    def stop(self):
        """Stops every daemon whose pid file in the directory names a live process of ours."""
        try:
            os.unlink(self.path(UP_FILE))
        except OSError:
            pass
        for name in DAEMONS:
            pid = _read_pid(self.path(name + ".pid"))
            if pid:
                _stop_pid(pid, self.dir)

    def is_up(self):
        return os.path.exists(self.path(UP_FILE)) and all(
            (_read_pid(self.path(n + ".pid")) or 0) > 0 and _pid_alive(_read_pid(self.path(n + ".pid")), self.dir)
            for n in DAEMONS)


def client_env(state_dir=None):
    """The environment for Slurm clients (srun, sbatch, sinfo) of the private Slurm in `state_dir`
    (default: the environment variable RAILKIT_TEST_SLURM, which the ctest fixture `slurm` sets):
    os.environ without an enclosing job's SLURM_* variables, plus SLURM_CONF. None when that Slurm
    is not up (the fixture was skipped: no Slurm here)."""
    state_dir = state_dir or os.environ.get("RAILKIT_TEST_SLURM")
    if not state_dir:
        return None
    s = PrivateSlurm(state_dir)
    return s.env if s.is_up() else None


class CaseCtx:
    """Context of the case scripts that run railkit against the fixture's Slurm (railkit_main's
    make_ctx): the railkit and railkit-bench binaries, a temporary directory, and the Slurm
    clients' environment (a case skips when that Slurm is not up)."""

    def __init__(self, railkit, bench, tmp):
        self.railkit, self.tmp = railkit, tmp
        self.bench = bench or os.path.join(os.path.dirname(railkit), "railkit-bench")

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def slurm_env(self):
        from casekit import Skip
        env = client_env()
        if env is None:
            raise Skip("no private Slurm is up (RAILKIT_TEST_SLURM=%s; tests/lib/slurm.py up DIR)"
                       % os.environ.get("RAILKIT_TEST_SLURM", ""))
        return env


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("up", "down", "env"))
    ap.add_argument("dir", help="state directory (created)")
    ap.add_argument("--timeout-s", type=float, default=30, help="limit of each start-up step (default 30)")
    a = ap.parse_args(argv)
    s = PrivateSlurm(a.dir, timeout_s=a.timeout_s)
    if a.action == "down":
        s.stop()
        print("slurm down: %s" % s.dir)
        return 0
    if a.action == "env":
        if not s.is_up():
            print("slurm.py env: no private Slurm is up in %s (run: slurm.py up %s)" % (s.dir, a.dir), file=sys.stderr)
            return 1
        print("export SLURM_CONF=%s" % s.conf)
        return 0
    try:
        s.start()
    except Unavailable as e:
        print("SKIP slurm up: %s" % e)
        return SKIP
    except (StartFailed, subprocess.SubprocessError, OSError) as e:
        print("FAIL slurm up in %s: %s" % (s.dir, e))
        return 1
    print("slurm up: node %s idle, partition %s; export SLURM_CONF=%s" % (s.node, s.partition, s.conf))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

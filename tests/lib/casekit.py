"""Shared by the python integration scripts (tests/*/..._cases.py): a registry of named cases,
their outcomes (pass, Failure, Skip -> exit 77, ctest's SKIP_RETURN_CODE) and checks."""
import sys

SKIP = 77


class Failure(Exception):
    """A case failed; the message says what was wrong."""


class Skip(Exception):
    """Not applicable here; the message says why."""


class Cases(dict):
    """name -> function(ctx). Use `@cases.add` to register."""

    def add(self, fn):
        self[fn.__name__] = fn
        return fn

    def run(self, name, ctx, also_failures=()):
        """Runs one case; returns its exit code (0 pass, 1 fail, 77 skipped) after printing one line.
        `also_failures`: further exception types that count as a failure (e.g. a subprocess timeout)."""
        try:
            self[name](ctx)
        except Skip as e:
            print("SKIP %s: %s" % (name, e))
            return SKIP
        except (Failure,) + tuple(also_failures) as e:
            print("FAIL %s: %s" % (name, e))
            return 1
        print("ok %s" % name)
        return 0


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def fnv1a64(data):
    """railkit's content hash of `data` (bytes), as documents record it: "fnv1a64:<16 hex>"."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "fnv1a64:%016x" % h


class SimCtx:
    """Context of the control-plane cases on railkit-bench's simulated backend: the railkit and
    railkit-bench binaries and a temporary directory."""

    def __init__(self, railkit, bench, tmp):
        import os
        self.railkit = railkit
        self.bench = bench or os.path.join(os.path.dirname(railkit), "railkit-bench")
        self.tmp = tmp

    def path(self, *parts):
        import os
        return os.path.join(self.tmp, *parts)

    def need_sim(self):
        import subprocess
        p = subprocess.run([self.bench, "--version"], capture_output=True, text=True, timeout=60)
        if "sim (" not in p.stdout:
            raise Skip("railkit-bench was built without the sim backend (no ns-3)")


# Runs that several cases read (a sweep, a tune session, an accept run) are made once: the case that
# makes and checks a run is a ctest fixture (FIXTURES_SETUP) that writes it to $RAILKIT_TEST_RUNS/NAME
# and marks it made when its checks passed; the cases that read it (FIXTURES_REQUIRED) find it there.
# Without RAILKIT_TEST_RUNS (a script run by hand) each case makes its own in its temporary directory.

def shared_run_path(name, tmp):
    """For the case that makes run `name`: where to write it (any earlier one removed)."""
    import os
    import shutil
    base = os.environ.get("RAILKIT_TEST_RUNS")
    if not base:
        return os.path.join(tmp, name)
    path = os.path.join(base, name)
    shutil.rmtree(path, ignore_errors=True)
    if os.path.exists(path + ".made"):
        os.remove(path + ".made")
    os.makedirs(base, exist_ok=True)
    return path


def shared_run_made(path):
    """Marks the run at `path` made: its checks passed, the cases that read it may."""
    with open(path + ".made", "w") as f:
        f.write("made\n")


def shared_run(name, tmp, make):
    """For a case that reads run `name`: its path, the fixture's when it was made, else made here by
    make(path)."""
    import os
    base = os.environ.get("RAILKIT_TEST_RUNS")
    if base and os.path.exists(os.path.join(base, name + ".made")):
        return os.path.join(base, name)
    path = os.path.join(tmp, "own-" + name)
    make(path)
    return path


def listing(cases):
    """The case names, ';'-separated, for CMake's foreach."""
    sys.stdout.write(";".join(cases) + "\n")
    return 0


def railkit_main(cases, doc, make_ctx, prefix, extra=()):
    """The command line of a railkit control-plane case script:
        SCRIPT --railkit PATH [--bench PATH] [EXTRA OPTIONS] --case NAME | --list
    Runs the case with make_ctx(railkit, bench_or_None, tmpdir, **extra_values) in a fresh
    temporary directory (named PREFIX...); `extra` lists (option, help) pairs of further string
    options. A subprocess timeout counts as a failure. Returns the exit code."""
    import argparse
    import os
    import subprocess
    import tempfile
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--railkit", help="the railkit binary")
    ap.add_argument("--bench", help="railkit-bench (default: the one next to railkit)")
    for option, help_text in extra:
        ap.add_argument(option, help=help_text)
    ap.add_argument("--case", choices=sorted(cases))
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        return listing(cases)
    if not a.railkit or not a.case:
        ap.error("--railkit and --case are required")
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        values = {option.lstrip("-").replace("-", "_"): getattr(a, option.lstrip("-").replace("-", "_"))
                  for option, _ in extra}
        ctx = make_ctx(os.path.abspath(a.railkit), os.path.abspath(a.bench) if a.bench else None, tmp, **values)
        return cases.run(a.case, ctx, also_failures=(subprocess.TimeoutExpired,))

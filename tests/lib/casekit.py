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


def listing(cases):
    """The case names, ';'-separated, for CMake's foreach."""
    sys.stdout.write(";".join(cases) + "\n")
    return 0

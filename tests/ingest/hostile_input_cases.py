#!/usr/bin/env python3
"""Hostile inputs of `railkit import` and `railkit history` (issue 32), run for real: a FIFO given
as an input is refused at once (it used to wait in open() for a writer forever), a symlink loop
named *.json in a directory given to `history add` is skipped and said, and a --db that is not a
railkit history (a text file, another application's SQLite file with a `meta` table) is refused
with one line, exit 6, and left as it was. Every command runs under a timeout, so a regression
fails rather than hangs. Standard library only.

    hostile_input_cases.py --railkit build/bin/railkit --case NAME
    hostile_input_cases.py --list

Exit 0 pass, 1 fail, 77 skipped.
"""
import os
import shutil
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, check, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add
# A railkit.results/1 document of a real sweep round (tests/fixtures/plot).
DOC = os.path.join(ROOT, "tests", "fixtures", "plot", "split", "r1-001-OMPI_MCA_coll_tuned_allreduce_algorithm=1.json")


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit, self.tmp = railkit, tmp

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def run(self, *args, timeout=30):
        """railkit ARGS under a timeout (subprocess.TimeoutExpired fails the case)."""
        env = dict(os.environ, XDG_DATA_HOME=self.path("xdg"))
        p = subprocess.run([self.railkit, *args], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, env=env)
        return p.returncode, p.stdout, p.stderr

    def fifo(self, name):
        p = self.path(name)
        os.mkfifo(p)
        return p


def one_line(rc, se, want_rc, *needles):
    lines = se.strip().splitlines()
    check(rc == want_rc and len(lines) == 1 and all(n in lines[0] for n in needles),
          f"rc {rc} (want {want_rc}), want one line with {needles}:\n{se}")


@case
def import_fifo_is_refused(ctx):
    """railkit import FIFO: one line naming it, exit 6, nothing written."""
    fifo = ctx.fifo("nccl.log")
    rc, so, se = ctx.run("import", fifo, "--out", ctx.path("out"))
    one_line(rc, se, 6, f"input '{fifo}': is a FIFO, not a regular file")
    check(not os.path.exists(ctx.path("out")), "import made --out for nothing")


@case
def history_add_fifo_is_refused(ctx):
    """railkit history add FIFO (and a FIFO as --db): one line, exit 6, no database made."""
    fifo, db = ctx.fifo("doc.json"), ctx.path("h.sqlite")
    rc, so, se = ctx.run("history", "add", fifo, "--db", db)
    one_line(rc, se, 6, f"input '{fifo}': is a FIFO, not a regular file")
    check(not os.path.exists(db), "history add made a database for nothing")
    dbfifo = ctx.fifo("db.sqlite")
    rc, so, se = ctx.run("history", "add", DOC, "--db", dbfifo)
    one_line(rc, se, 6, f"--db '{dbfifo}': is a FIFO, not a regular file")


@case
def history_add_skips_a_symlink_loop_in_a_directory(ctx):
    """A directory with a results document and a symlink loop named *.json: the document is added,
    the loop skipped with one line naming it (it was an internal error, exit 1)."""
    d = ctx.path("docs")
    os.makedirs(os.path.join(d, "sub"))
    shutil.copy(DOC, os.path.join(d, "run.json"))
    os.symlink("loop.json", os.path.join(d, "sub", "loop.json"))  # a link to itself
    db = ctx.path("h.sqlite")
    rc, so, se = ctx.run("history", "add", d, "--db", db)
    loop = os.path.join(d, "sub", "loop.json")
    one_line(rc, se, 0, f"railkit history: {loop}: skipped: ", "symbolic links")
    check("1 document added" in so, so)
    # Given by name, the loop is one line too (it cannot be read: exit 9).
    rc, so, se = ctx.run("history", "add", loop, "--db", db)
    one_line(rc, se, 9, loop)


@case
def history_db_that_is_a_text_file_is_refused_at_once(ctx):
    """--db naming a text file: one line, exit 6, at once (it took 10 s of retries), the file unchanged."""
    db = ctx.path("notes.txt")
    text = "these are my notes, not a database\n" * 20
    with open(db, "w") as f:
        f.write(text)
    for verb in (["add", DOC], ["show", "--op", "all_reduce", "--bytes", "1M"], ["check"], ["rebuild"]):
        rc, so, se = ctx.run("history", *verb, "--db", db, timeout=8)
        one_line(rc, se, 6, f"--db '{db}': not a railkit history (not an SQLite database)")
    check(open(db).read() == text, "the text file was changed")
    check(sorted(os.listdir(ctx.tmp)) == ["notes.txt"], f"files left beside it: {os.listdir(ctx.tmp)}")


@case
def history_db_of_another_application_is_refused(ctx):
    """An SQLite file with another application's `meta` table: one line "not a railkit history", exit 6,
    and the file left as it was (no tables added, its journal mode kept)."""
    cases = {
        "other-columns.sqlite": ("CREATE TABLE meta (name TEXT, version INTEGER);"
                                 "INSERT INTO meta VALUES ('schema', 3);",
                                 "its meta table has the columns name, version"),
        "key-value.sqlite": ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
                             "INSERT INTO meta VALUES ('owner', 'someone else');",
                             "its meta table holds no schema_version"),
        "same-version-key.sqlite": ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
                                    "INSERT INTO meta VALUES ('schema_version', '1');"
                                    "CREATE TABLE items (x);",
                                    "no documents table"),
    }
    for name, (sql, why) in cases.items():
        db = ctx.path(name)
        con = sqlite3.connect(db)
        con.executescript(sql)
        con.commit()
        con.close()
        before = open(db, "rb").read()
        for verb in (["add", DOC], ["show", "--op", "all_reduce", "--bytes", "1M"]):
            rc, so, se = ctx.run("history", *verb, "--db", db)
            one_line(rc, se, 6, f"--db '{db}': not a railkit history ({why}")
        check(open(db, "rb").read() == before, f"{name} was changed")
        check(not os.path.exists(db + "-wal"), f"{name} was switched to WAL")


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-hostile-input-"))

"""An independent reading of the real logs in tests/fixtures/import/real, for import_cases.py's
real_logs_import_exactly_or_are_refused: written apart from railkit's C++ readers, it finds each
log's table rows by its own simple rules and compares every stored record with the printed figures
of the line the record cites (observed.source_line), and the number of rows with the number of
records. It knows only what expect.json tells it about a file (its launcher prefix).
"""
import re

# What each launcher prefix looks like (expect.json names one per file).
PREFIXES = {
    "mpirun --tag-output": re.compile(r"^\[\d+,\d+\]<std(?:out|err)>: ?"),
    "srun --label": re.compile(r"^ *\d+: "),
    "-prepend-rank": re.compile(r"^\[\d+\] "),
    "time of day": re.compile(r"^\d\d:\d\d:\d\d +"),
}
# NCCL's own log text: "host:pid:tid [dev] NCCL INFO ..." to the end of the line.
NCCL_LOG = re.compile(r"\S+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE).*$")


def log_lines(text, prefix):
    """The log's lines (1-based list index + 1) without the named prefix."""
    pat = PREFIXES.get(prefix)
    raw = text.split("\n")
    if prefix == "indented block":  # a markdown indented block: the indentation all lines share
        cut = min(len(l) - len(l.lstrip()) for l in raw if l.strip())
        raw = [l[cut:] for l in raw]
    out = []
    for line in raw:
        line = line.rstrip("\r")
        if pat:
            line = pat.sub("", line, count=1)
        out.append(line)
    return out


def is_int(tok):
    return re.fullmatch(r"\d+", tok) is not None


def same(printed, value, what, where):
    """`value` (stored) equals the printed figure: same number as the text says."""
    if printed in ("N/A",):
        if value is not None:
            raise AssertionError(f"{where}: {what} printed N/A, stored {value!r}")
        return
    if value is None or abs(float(printed) - float(value)) > 1e-9 * max(1.0, abs(float(printed))):
        raise AssertionError(f"{where}: {what} printed {printed}, stored {value!r}")


def nccl_tables(lines):
    """[(header_line, columns, [(line, tokens)])] of nccl-tests tables: a '# size count type'
    header, then every line whose first word is an integer, until '# Avg bus bandwidth'."""
    tables = []
    cur = None
    for i, raw in enumerate(lines, 1):
        line = NCCL_LOG.sub("", raw)
        tok = line.split()
        if tok[:4] == ["#", "size", "count", "type"]:
            cur = (i, tok[1:], [])
            tables.append(cur)
        elif line.startswith("# Avg bus bandwidth") or line.startswith("# nThread"):
            cur = None
        elif cur and tok and is_int(tok[0]) and not line.startswith("#"):
            cur[2].append((i, tok))
    return tables


def check_nccl(doc, tables, where):
    """Each record against the row it cites, by the column names of that row's table."""
    rows = {ln: (cols, tok) for (_, cols, rs) in tables for (ln, tok) in rs}
    cited = set()
    for k, r in enumerate(doc["results"]):
        ln = r["observed"]["source_line"]
        cited.add(ln)
        w = f"{where} record {k} (line {ln})"
        if ln not in rows:
            raise AssertionError(f"{w}: the line is not a table row of the log")
        cols, tok = rows[ln]
        pre = [c for c in cols[:5] if c in ("size", "count", "type", "redop", "root")]
        if "redop" in pre and re.fullmatch(r"[-\d.e+]+", tok[3]):
            tok = tok[:3] + [""] + tok[3:]  # an empty redop (all_gather, alltoall before 2.13.1)
        group = cols[len(pre):]
        per = group.index("time", 1) if "time" in group[1:] else len(group)
        at = len(pre) + (per if r["in_place"] and len(tok) >= len(pre) + 2 * per else 0)
        if int(tok[0]) != r["bytes"] or int(tok[1]) != r["count"]:
            raise AssertionError(f"{w}: size/count {tok[0]}/{tok[1]} vs {r['bytes']}/{r['count']}")
        names = group[:per]
        for c, name in enumerate(names):
            t = tok[at + c]
            if name == "time":
                same(t, r["time_us"]["avg"], "time", w)
            elif name == "algbw":
                same(t, r.get("algbw_GBps"), "algbw", w)
            elif name == "busbw":
                same(t, r.get("busbw_GBps"), "busbw", w)
            elif name == "#wrong":
                same(t, r.get("wrong"), "#wrong", w)
            elif name == "error":
                if "wrong" in r:
                    raise AssertionError(f"{w}: an 'error' column (largest error) stored as wrong={r['wrong']}")
                if t != "N/A" and r["observed"].get("max_error") != t:
                    raise AssertionError(f"{w}: error {t} not kept as observed.max_error")
    return cited


def check_table_rows(doc, kind, lines, where):
    """IMB and OSU: each record against its line (#bytes or Size, the times, the repetitions)."""
    cited = set()
    for k, r in enumerate(doc["results"]):
        ln = r["observed"]["source_line"]
        cited.add(ln)
        w = f"{where} record {k} (line {ln})"
        tok = lines[ln - 1].split()
        header = None
        for back in range(ln - 1, 0, -1):
            h = lines[back - 1]
            if kind == "imb" and h.split()[:1] == ["#bytes"]:
                header = h.split()
                break
            if kind == "osu" and h.startswith("# Size"):
                header = [c.strip() for c in re.split(r"\s{2,}", h[1:].strip())]
                break
        if header is None or len(header) != len(tok):
            raise AssertionError(f"{w}: no header with {len(tok)} columns above the line")
        if int(tok[0]) != r["observed"]["source_bytes"]:
            raise AssertionError(f"{w}: bytes {tok[0]} vs source_bytes {r['observed']['source_bytes']}")
        for name, t in zip(header, tok):
            if name in ("t[usec]", "t_avg[usec]", "Avg Latency(us)", "Latency (us)"):
                same(t, r["time_us"]["avg"], name, w)
            elif name in ("t_min[usec]", "Min Latency(us)"):
                same(t, r["ranks"]["time_us_min"], name, w)
            elif name in ("t_max[usec]", "Max Latency(us)"):
                same(t, r["ranks"]["time_us_max"], name, w)
            elif name in ("#repetitions", "Iterations"):
                same(t, r["iters"], name, w)
            elif name == "Bandwidth (MB/s)":
                same(str(float(t) / 1000.0), r["algbw_GBps"], name, w)
    return cited


def data_rows(kind, lines):
    """Line numbers of every table row of an IMB or OSU log, by the simple rule: after a column
    header, the lines whose words are all numbers (as many as the header's columns)."""
    rows, width = set(), 0
    for i, line in enumerate(lines, 1):
        tok = line.split()
        if kind == "imb" and tok[:1] == ["#bytes"]:
            width = len(tok)
        elif kind == "osu" and line.startswith("# Size"):
            width = len(re.split(r"\s{2,}", line[1:].strip()))
        elif line.startswith("# Benchmarking") or line.startswith("# OSU"):
            width = 0
        elif width and len(tok) == width and all(re.fullmatch(r"[\d.]+", t) for t in tok):
            rows.add(i)
    return rows

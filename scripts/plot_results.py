#!/usr/bin/env python3
"""Plot a metric (busbw by default) and time_us against message size for `railkit report --plot FILE.png|svg|pdf`.

    plot_results.py --series SERIES.json --out FILE.png|FILE.svg|FILE.pdf [--yscale log|linear]
                    [--panels both|metric|latency] [--title T] [--dump-plan PLAN.json]

`railkit report|sweep --plot FILE` runs it with --yscale from their --plot-yscale (log | linear,
default log); the extension of FILE picks the format (PNG, SVG or PDF).

Input: a JSON file of series written by railkit (`railkit.plot-series/1`; `railkit report
--plot-series FILE` writes one):
  {"baseline": NAME, "metric": "busbw", "ylabel": "busbw (GB/s)", "simulated": "all"|"some"|"none",
   "sizes": [bytes...], "title": {"configs", "labels", "backends", "backend_versions", "nranks",
   "nnodes", "hosts", "dates", "timing_methods", "simulated"},
   "line_rate": null | {"Gbps": G (one NIC), "nics_per_node": N, "GBps": N x G/8, "source": S, "label": L},
   "panels": [{"title": T, "op", "dtype", "redop", "placement": "out-of-place"|"in-place", "sizes",
               "series": [{"name": N, "tag": "[k]", "config": C, "group": G, "baseline": bool,
                           "slowest": bool, "inert": bool, "simulated": bool, "bytes": [...],
                           "values": [...], "lo": [...], "hi": [...],
                           "time_us": {"p50": [...], "p99": [...]}}]}]}
Older series files (no title, sizes, placement or time_us) still plot: without a latency panel.

What it draws: a row per collective and panel kind, a column per placement (out-of-place,
in-place). Metric panels: one line per configuration and --split group (groups are never averaged;
the slowest group drawn thick and marked "slowest group"), the rounds' spread (lo..hi) shaded,
the NIC line rate as a dashed reference line when the series knows it (GB/s = Gb/s / 8; busbw and
algbw only), y axis log (default) or linear (--yscale). Latency panels: time_us p50 per series
with the p50..p99 band shaded, log y axis. Panels of one row share their y scale, so in-place and
out-of-place read on the same axis. x axis: log2, ticks only at the measured sizes in binary units
(8 B, 1 KiB, 4 MiB), thinned to at most 12 labels (every k-th size, the largest kept). A lone configuration is drawn solid and
labelled by its name; with several, the baseline is marked "(baseline)". Colours: Paul Tol's
colour-blind-safe "muted" palette (9) with markers and, past 9 series, line styles cycling, so up
to 12 series (and more) stay distinct; inert configurations are dotted. Title block: the label (or
the configurations and the baseline), backend, ranks x nodes, hosts, date, and SIMULATED when it
is. Simulated values (railkit-bench --backend sim): "all" puts SIMULATED in the title, every y
label and across every panel; "some" marks each simulated series (SIMULATED) in the legend and
says so in the title.

--dump-plan FILE writes what would be drawn (panels, scales, limits, ticks and their labels,
series, colours, markers, bands, reference lines, title lines) as JSON, without matplotlib;
with --dump-plan, --out may be left out. The golden tests (tests/report/plot_cases.py) compare it.
Exit codes: 0 written, 5 matplotlib is missing (Debian: python3-matplotlib), 6 bad input, 9 write error.
"""
import argparse
import json
import math
import os
import sys
import textwrap

# Paul Tol's "muted" qualitative scheme (https://personal.sron.nl/~pault/), colour-blind safe, in his order.
PALETTE = ["#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933", "#AA4499"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*"]
LINESTYLES = ["-", "--", "-."]  # one cycle of the palette each
REFERENCE_COLOR = "#555555"
MAX_XLABELS = 12
FORMATS = (".png", ".svg", ".pdf")
PLACEMENTS = ["out-of-place", "in-place"]


class BadInput(Exception):
    pass


def size_label(b):
    """Binary units: 8 B, 1 KiB, 1.5 KiB, 4 MiB."""
    b = int(b)
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div:
            if b % div == 0:
                return f"{b // div} {unit}"
            return f"{b / div:.3g} {unit}"
    return f"{b} B"


def thin(sizes, most=MAX_XLABELS):
    """At most `most` of the measured sizes: every k-th, evenly spaced by index, the largest kept."""
    n = len(sizes)
    if n <= most:
        return list(sizes)
    k = -(-n // most)
    return list(sizes[(n - 1) % k::k])


def sig(v, digits=5):
    """A float rounded to `digits` significant digits (plans compare stably across platforms)."""
    if v is None:
        return None
    if v == 0 or not math.isfinite(v):
        return v
    return float(f"{v:.{digits}g}")


def distinct_text(values, noun, most=3):
    values = [str(v) for v in values]
    if not values:
        return ""
    if len(values) <= most:
        return f"{noun} " + ", ".join(values)
    return f"{noun} " + ", ".join(values[:most]) + f" +{len(values) - most} more"


def ranks_text(t):
    nranks, nnodes = t.get("nranks") or [], t.get("nnodes") or []
    if len(nranks) == 1 and len(nnodes) == 1:
        r, n = nranks[0], nnodes[0]
        if n == 1:
            return f"{r} ranks x 1 node"
        if r % n == 0:
            return f"{r} ranks = {r // n} x {n} nodes"
        return f"{r} ranks on {n} nodes"
    parts = []
    if nranks:
        parts.append("ranks " + ", ".join(map(str, nranks)))
    if nnodes:
        parts.append("nodes " + ", ".join(map(str, nnodes)))
    return "; ".join(parts)


def title_lines(doc, given, configs, any_band, any_latency, panels_mode):
    simulated = doc.get("simulated", "none")
    t = doc.get("title") or {}
    lines = []
    if given:
        lines.append(given)
    if simulated == "all":
        lines.append("SIMULATED (railkit-bench --backend sim): a model of a cluster, not a measurement")
    elif simulated == "some":
        lines.append("Series marked (SIMULATED) are simulated (railkit-bench --backend sim); the others measured")
    if len(configs) == 1:
        labels = t.get("labels") or []
        lines.append(labels[0] if len(labels) == 1 else configs[0])
    elif configs:
        lines.append(f"{len(configs)} configurations, baseline {doc.get('baseline', configs[0])}")
    run = []
    backends = t.get("backends") or []
    if backends:
        b = "backend " + ", ".join(backends)
        versions = t.get("backend_versions") or []
        if len(versions) == 1:
            b += f" ({versions[0]})"
        if simulated == "all" and not any("simulated" in v for v in versions):
            b += ", simulated"
        run.append(b)
    if ranks_text(t):
        run.append(ranks_text(t))
    if t.get("hosts"):
        run.append(distinct_text(t["hosts"], "host" if len(t["hosts"]) == 1 else "hosts"))
    dates = t.get("dates") or []
    if dates:
        run.append(dates[0] if len(dates) == 1 else f"{dates[0]} .. {dates[-1]}")
    methods = [m for m in t.get("timing_methods") or [] if m != "back_to_back"]
    if methods:
        run.append("timing " + ", ".join(t["timing_methods"]))
    if run:
        lines.append(" | ".join(run))
    notes = []
    if panels_mode != "latency" and any_band:
        notes.append(f"{doc.get('metric', 'busbw')}: median of the rounds, shaded min..max of the rounds")
    if panels_mode != "metric" and any_latency:
        notes.append("time: p50 line, shaded p50..p99")
    if notes:
        lines.append("; ".join(notes))
    return lines


def positive_pairs(xs, ys, log):
    """(x, y) pairs with both set (and positive on a log axis); x always positive (log2 axis)."""
    out = []
    for x, y in zip(xs, ys):
        if x is None or y is None or x <= 0 or (log and y <= 0):
            continue
        out.append((x, y))
    return out


def ylimits(values, log):
    values = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
    if not values:
        return [1, 10] if log else [0, 1]
    if log:
        lo, hi = math.log10(min(values)), math.log10(max(values))
        span = max(hi - lo, 0.5)
        pad = 0.06 * span
        return [sig(10 ** (lo - pad)), sig(10 ** (hi + pad))]
    top = max(values)
    return [0, sig(top * 1.08 if top > 0 else 1)]


def build_plan(doc, yscale="log", panels_mode="both", given_title=""):
    """What to draw, as plain data: see --dump-plan."""
    if not isinstance(doc, dict) or not isinstance(doc.get("panels"), list):
        raise BadInput("no panels")
    if yscale not in ("log", "linear"):
        raise BadInput(f"--yscale {yscale}: expected log or linear")
    simulated = doc.get("simulated", "none")
    metric = doc.get("metric", "busbw")
    ylabel = doc.get("ylabel", "busbw (GB/s)")
    panels = [p for p in doc["panels"] if isinstance(p, dict) and p.get("series")]
    if not panels:
        raise BadInput("nothing to plot: no series holds a value of the metric (imported logs leave out what their "
                       "tool did not print; another --metric may have values)")

    # Series identity across panels: (config, group) in order of first appearance.
    keys, configs = [], []
    for p in panels:
        for s in p["series"]:
            if not isinstance(s, dict) or "bytes" not in s:
                raise BadInput("a series without bytes")
            cfg = s.get("config", s.get("name", "?"))
            key = (cfg, s.get("group", ""), s.get("name", cfg))
            if (key[0], key[1]) not in [(k[0], k[1]) for k in keys]:
                keys.append(key)
            if cfg not in configs:
                configs.append(cfg)
    lone = len(configs) == 1
    style = {}
    for k, (cfg, group, name) in enumerate(keys):
        style[(cfg, group)] = {"color": PALETTE[k % len(PALETTE)], "marker": MARKERS[k % len(MARKERS)],
                               "linestyle": LINESTYLES[(k // len(PALETTE)) % len(LINESTYLES)]}

    def label_of(s):
        cfg = s.get("config", s.get("name", "?"))
        if lone:
            label = cfg + (" " + s["group"] if s.get("group") else "")
        else:
            label = s.get("name", cfg)
            if s.get("baseline"):
                label += " (baseline)"
        if s.get("slowest"):
            label += " (slowest group)"
        if s.get("inert"):
            label += " (inert)"
        if simulated == "some" and s.get("simulated"):
            label += " (SIMULATED)"
        return label

    def look(s):
        st = dict(style[(s.get("config", s.get("name", "?")), s.get("group", ""))])
        if s.get("inert"):
            st["linestyle"] = ":"
        st["linewidth"] = 2.8 if s.get("slowest") else 2.0 if (s.get("baseline") and not lone) else 1.5
        st["markersize"] = 6.5 if s.get("slowest") else 4
        return st

    # Grid: a row per collective (and kind), a column per placement.
    colls = []
    for p in panels:
        ck = (p.get("op"), p.get("dtype"), p.get("redop")) if p.get("placement") else ("title", p.get("title", ""))
        if ck not in colls:
            colls.append(ck)
    placements = [pl for pl in PLACEMENTS if any(p.get("placement") == pl for p in panels)] or [None]
    cols = len(placements)
    any_latency = any(any(v is not None for v in (s.get("time_us") or {}).get("p50") or [])
                      for p in panels for s in p["series"])
    kinds = {"both": ["metric", "latency"] if any_latency else ["metric"], "metric": ["metric"],
             "latency": ["latency"]}[panels_mode]
    if kinds == ["latency"] and not any_latency:
        raise BadInput("--panels latency: the series carry no time_us (written by an older railkit)")

    line_rate = doc.get("line_rate")
    ref = None
    if isinstance(line_rate, dict) and line_rate.get("GBps") and metric == "busbw":
        src = f" ({line_rate['source']})" if line_rate.get("source") else ""
        text = line_rate.get("label") or (f"NIC line rate {sig(line_rate['Gbps']):g} Gb/s = "
                                          f"{sig(line_rate['GBps']):g} GB/s")
        ref = {"y": sig(line_rate["GBps"]), "label": text + src,
               "color": REFERENCE_COLOR, "linestyle": (0, (6, 3)), "linewidth": 1.2}

    out_panels, any_band, row, undrawn = [], False, 0, []
    for ck in colls:
        members = [p for p in panels if ((p.get("op"), p.get("dtype"), p.get("redop")) if p.get("placement")
                                         else ("title", p.get("title", ""))) == ck]
        sizes = sorted({int(b) for p in members for b in (p.get("sizes") or
                                                            [x for s in p["series"] for x in s["bytes"]]) if b > 0})
        if not sizes:
            continue
        xlim = [sig(sizes[0] / 1.25), sig(sizes[-1] * 1.25)]
        for kind in kinds:
            row_panels = []
            for p in members:
                col = placements.index(p.get("placement")) if p.get("placement") in placements else 0
                log = kind == "latency" or yscale == "log"
                psizes = sorted({int(b) for b in (p.get("sizes") or [x for s in p["series"] for x in s["bytes"]])
                                 if b > 0})
                ticks = thin(psizes)
                lines = []
                for s in p["series"]:
                    st = look(s)
                    if kind == "metric":
                        ys = s.get("values", s.get("busbw_GBps"))  # busbw_GBps: series written before --metric
                        if ys is None:
                            raise BadInput(f"series {s.get('name')}: no values")
                        pts = positive_pairs(s["bytes"], ys, log)
                        band = None
                        if s.get("lo") and s.get("hi"):
                            bp = [(x, lo_, hi_) for x, lo_, hi_ in zip(s["bytes"], s["lo"], s["hi"])
                                  if x > 0 and lo_ is not None and hi_ is not None and (not log or lo_ > 0)]
                            if bp:
                                band = {"x": [b[0] for b in bp], "lo": [sig(b[1]) for b in bp],
                                        "hi": [sig(b[2]) for b in bp], "alpha": 0.15, "what": "rounds min..max"}
                                any_band = True
                    else:
                        tu = s.get("time_us") or {}
                        p50, p99 = tu.get("p50") or [], tu.get("p99") or []
                        if not p50:
                            continue
                        pts = positive_pairs(s["bytes"], p50, True)
                        bp = [(x, a, b) for x, a, b in zip(s["bytes"], p50, p99 or [None] * len(p50))
                              if x > 0 and a is not None and b is not None and a > 0 and b > 0]
                        band = {"x": [b[0] for b in bp], "lo": [sig(b[1]) for b in bp],
                                "hi": [sig(b[2]) for b in bp], "alpha": 0.18, "what": "p50..p99"} if bp else None
                    if not pts:
                        undrawn.append(label_of(s))
                        continue
                    lines.append({"label": label_of(s), "x": [x for x, _ in pts], "y": [sig(y) for _, y in pts],
                                  "dropped": len(s["bytes"]) - len(pts), "band": band, **st})
                if kind == "metric":
                    yl = ("SIMULATED " if simulated == "all" else "") + ylabel
                else:
                    yl = ("SIMULATED " if simulated == "all" else "") + "time (us), p50 and p50..p99"
                row_panels.append({"row": row, "col": col, "kind": kind,
                                   "title": p.get("title", "") + ("" if kind == "metric" else ": time"),
                                   "xscale": "log2", "xlim": xlim, "xticks": ticks,
                                   "xticklabels": [size_label(b) for b in ticks], "xminor": psizes,
                                   "xlabel": "message size (bytes per rank)",
                                   "yscale": "log" if log else "linear", "ylabel": yl,
                                   "watermark": "SIMULATED" if simulated == "all" else None,
                                   "lines": lines,
                                   "reflines": [ref] if (ref and kind == "metric") else []})
            # One y scale per row: in-place and out-of-place on the same axis.
            vals = []
            for rp in row_panels:
                for ln in rp["lines"]:
                    vals += ln["y"]
                    if ln["band"]:
                        vals += ln["band"]["lo"] + ln["band"]["hi"]
                vals += [r["y"] for r in rp["reflines"]]
            if row_panels:
                lim = ylimits(vals, row_panels[0]["yscale"] == "log")
                for rp in row_panels:
                    rp["ylim"] = lim
                out_panels += row_panels
                row += 1
    if not out_panels:
        raise BadInput("nothing to plot")
    legend, seen = [], set()
    for rp in out_panels:
        for ln in rp["lines"]:
            if ln["label"] not in seen:
                seen.add(ln["label"])
                legend.append({k: ln[k] for k in ("label", "color", "marker", "linestyle", "linewidth", "markersize")})
    if ref:
        legend.append({"label": ref["label"], "color": ref["color"], "marker": None, "linestyle": ref["linestyle"],
                       "linewidth": ref["linewidth"], "markersize": 0})
    tl = [w for line in title_lines(doc, given_title, configs, any_band, any_latency and "latency" in kinds,
                                    panels_mode)
          for w in textwrap.wrap(line, int(cols * 7.5 * 11))]
    if undrawn:  # all values 0 (or absent) where a log axis cannot show them: said, not failed
        names = sorted(set(undrawn))
        tl.append("not drawn (no value above 0%s): %s" % (" on a log axis" if yscale == "log" else "", ", ".join(names)))
    longest = max((len(e["label"]) for e in legend), default=0)
    fit = int(cols * 7.5 * 13 // max(longest + 6, 1))  # about 13 small characters per inch
    ncol = max(1, min(4, fit, len(legend)))
    return {"schema": "railkit.plot-plan/1", "simulated": simulated,
            "figure": {"rows": row, "cols": cols, "size_in": [7.5 * cols, 4.2 * row + 0.19 * len(tl) +
                                                             0.2 * math.ceil(len(legend) / ncol) + 0.3]},
            "title_lines": tl, "legend": legend, "legend_ncol": ncol, "panels": out_panels}


def to_mpl_linestyle(ls):
    return tuple(ls) if isinstance(ls, list) else ls


def render(plan, out):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "railkit"  # stable SVG ids
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FixedFormatter, NullFormatter

    fig_w, fig_h = plan["figure"]["size_in"]
    rows, cols = plan["figure"]["rows"], plan["figure"]["cols"]
    fig, axes = plt.subplots(rows, cols, figsize=(fig_w, fig_h), squeeze=False)
    used = set()
    for p in plan["panels"]:
        ax = axes[p["row"]][p["col"]]
        used.add((p["row"], p["col"]))
        for ln in p["lines"]:
            ls = to_mpl_linestyle(ln["linestyle"])
            ax.plot(ln["x"], ln["y"], color=ln["color"], marker=ln["marker"], markersize=ln["markersize"],
                    linestyle=ls, linewidth=ln["linewidth"], zorder=3)
            if ln["band"]:
                ax.fill_between(ln["band"]["x"], ln["band"]["lo"], ln["band"]["hi"], color=ln["color"],
                                alpha=ln["band"]["alpha"], linewidth=0, zorder=2)
        for r in p["reflines"]:
            ax.axhline(r["y"], color=r["color"], linestyle=to_mpl_linestyle(r["linestyle"]),
                       linewidth=r["linewidth"], zorder=1)
        ax.set_xscale("log", base=2)
        ax.set_xlim(*p["xlim"])
        ax.xaxis.set_major_locator(FixedLocator(p["xticks"]))
        ax.xaxis.set_major_formatter(FixedFormatter(p["xticklabels"]))
        ax.xaxis.set_minor_locator(FixedLocator(p["xminor"]))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_yscale(p["yscale"])
        ax.set_ylim(*p["ylim"])
        ax.set_xlabel(p["xlabel"])
        ax.set_ylabel(p["ylabel"])
        ax.set_title(p["title"], fontsize="medium")
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", axis="y", alpha=0.12)
        if p["watermark"]:
            ax.text(0.5, 0.5, p["watermark"], transform=ax.transAxes, ha="center", va="center", fontsize=40,
                    color="grey", alpha=0.15, rotation=20, zorder=0)
        for label in ax.get_xticklabels():
            label.set_rotation(30)
    for r in range(rows):
        for c in range(cols):
            if (r, c) not in used:
                axes[r][c].set_visible(False)
    handles = [Line2D([], [], color=e["color"], marker=e["marker"] or None, markersize=e["markersize"],
                      linestyle=to_mpl_linestyle(e["linestyle"]), linewidth=e["linewidth"]) for e in plan["legend"]]
    ncol = plan["legend_ncol"]
    legend_rows = math.ceil(len(handles) / ncol)
    fig.legend(handles, [e["label"] for e in plan["legend"]], loc="lower center", ncol=ncol, fontsize="small",
               frameon=False)
    title = "\n".join(plan["title_lines"])
    if title:
        fig.suptitle(title, fontsize="medium")
    bottom = (0.2 * legend_rows + 0.12) / fig_h
    fig.tight_layout(rect=(0, bottom, 1, 1))  # tight_layout leaves the suptitle its room
    ext = os.path.splitext(out)[1].lower()
    meta = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[ext[1:]]
    fig.savefig(out, metadata=meta, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", required=True, help="JSON series written by railkit report (railkit.plot-series/1)")
    ap.add_argument("--out", help="output image: .png, .svg or .pdf")
    ap.add_argument("--title", default="", help="a first title line")
    ap.add_argument("--yscale", default="log", choices=["log", "linear"], help="y axis of the metric panels")
    ap.add_argument("--panels", default="both", choices=["both", "metric", "latency"],
                    help="metric (busbw ...) panels, latency (time_us) panels, or both")
    ap.add_argument("--dump-plan", help="write what would be drawn as JSON (no matplotlib needed)")
    a = ap.parse_args()
    if not a.out and not a.dump_plan:
        print("plot_results.py: give --out FILE.png|svg|pdf or --dump-plan FILE", file=sys.stderr)
        return 6
    if a.out and os.path.splitext(a.out)[1].lower() not in FORMATS:
        print(f"plot_results.py: --out {a.out}: the file must end in .png, .svg or .pdf", file=sys.stderr)
        return 6

    if a.out:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("plot_results.py: matplotlib is not installed (Debian package: python3-matplotlib)",
                  file=sys.stderr)
            return 5

    try:
        with open(a.series) as f:
            doc = json.load(f)
        plan = build_plan(doc, a.yscale, a.panels, a.title)
    except (OSError, ValueError, KeyError, TypeError, BadInput) as e:
        print(f"plot_results.py: {a.series}: cannot plot the series: {e}", file=sys.stderr)
        return 6
    try:
        if a.dump_plan:
            with open(a.dump_plan, "w") as f:
                json.dump(plan, f, indent=1, sort_keys=True)
                f.write("\n")
        if a.out:
            render(plan, a.out)
    except OSError as e:
        print(f"plot_results.py: cannot write: {e}", file=sys.stderr)
        return 9
    return 0


if __name__ == "__main__":
    sys.exit(main())

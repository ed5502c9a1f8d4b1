"""scorecard: time and harm of the module's default against the baselines
an operator would pick instead, per cell of the grids.

Reads the restart grid (one grid per profile: chan2m, modern50m) and the
keepalive grid (the bench server's cells) from the result directories in
SOURCES: for each cell, the rows of the last directory listed that ran the
default there, so that a cell's policies always come from one run, in
which they were interleaved.  Those directories hold the runs made with
the module's current default; the cells of the full grids
(`bench/run restart` and `bench/run keepalive` without `--quick`) that
none of them ran with it are counted as incomplete, so the report says
how much of each grid it covers.  `--only restart=DIR,keepalive=DIR`
reads other result directories instead (several of each, in that order;
`none`: leave that grid out) and scores the cells they hold,
`--only candidate=POLICY` scores a policy of the rows in the default's
place, `--only baseline=POLICY` (repeatable) scores it against policies
of the rows instead of the three baselines (e.g. against a second copy
of the default run beside it: what chance alone makes of the counts).
It writes bench/results/scorecard/: table.md (counts per grid and
overall, every cell), cells.csv (the numbers behind it) and pareto.png
(time against harm, a panel per grid).  The arithmetic and its
definitions: bench/lib/scorecard.py.  Runs on the host (it measures
nothing): `bench/run scorecard`.

Rows without a `cross` column (written before the bench recorded it)
read as the cross traffic they ran with: restart's UDP sources, and
keepalive's CUBIC bulk flow where `compete` is 1.
"""
import json
from pathlib import Path

from bench.lib import only as check, plot, scorecard as sc, stats, table

REPO = Path(__file__).resolve().parents[2]
# nothing to resume: the registry's tests ask every scenario for a key
RESUME_KEY = ("grid",)
# the runs made with the module's current default, oldest first: a cell
# is read from the last of them that ran the default there
SOURCES = {"restart": ["bench/results/restart-chan2m-clamp",
                       "bench/results/restart-chan2m-red-default",
                       "bench/results/restart-chan2m-200-default",
                       "bench/results/restart-chan2m-500-default",
                       "bench/results/restart-modern50m-default",
                       "bench/results/restart-chan2m-wndcap",
                       "bench/results/restart-chan2m-wndcap-long",
                       "bench/results/restart-chan2m-short-default",
                       "bench/results/restart-chan2m-long-cubic",
                       "bench/results/restart-modern50m-cubic"],
           "keepalive": ["bench/results/keepalive-quiet-cubic",
                         "bench/results/keepalive-probe-seen",
                         "bench/results/keepalive-rest-default",
                         "bench/results/keepalive-think3-default",
                         "bench/results/keepalive-bulk-cubic",
                         "bench/results/keepalive-bulk-burst",
                         "bench/results/keepalive-bulk-srtt"]}
RESTART_KEY = ("queue", "delay_ms", "burst", "cross")
KEEPALIVE_KEY = ("kind", "rtt_ms", "compete", "size_kb", "think_s", "cross")
LABEL = {"linux-default": "CUBIC+SSR (Linux default)",
         "cubic-nossai": "CUBIC, SSAI=0", "bbr": "BBR"}


def restart_cross(r):
    return r.get("cross") or "udp"


def keepalive_cross(r):
    return r.get("cross") or ("tcp" if r.get("compete") else "none")


class Grid:
    """One grid's rows, from one or more result directories, and how to
    read them.  SOURCES: [(directory, rows)] in the order listed; a
    cell's rows are those of the last directory that ran the default
    there (else of the last that ran the cell at all).  UNIVERSE: the
    cell keys of the full grid, counted even where no directory ran
    them (None: the cells the directories hold)."""

    def __init__(self, name, sources, key, retrans, cross_of,
                 universe=None):
        self.name, self.sources = name, sources
        self.rows = [r for _, rows in sources for r in rows]
        self.key, self.retrans, self.cross_of = key, retrans, cross_of
        self.universe = universe
        self.default = sc.default_policy(self.rows)
        self.baselines = sc.BASELINES
        self._cell_rows = (None, None)   # (default, cell_rows())

    def cell_key(self, r):
        return tuple(self.cross_of(r) if k == "cross" else r.get(k)
                     for k in self.key)

    def ran_default(self, rows):
        """Whether ROWS hold a run of the default."""
        return any(r.get("policy") == self.default for r in rows)

    def cell_rows(self):
        """{cell key: (directory, rows)}: each cell's rows from one run
        (computed once per default: a candidate may replace it)."""
        if self._cell_rows[0] == self.default:
            return self._cell_rows[1]
        per = {}
        for d, rows in self.sources:
            by = {}
            for r in rows:
                by.setdefault(self.cell_key(r), []).append(r)
            for k, rs in by.items():
                if self.ran_default(rs) or \
                        not self.ran_default(per.get(k, (None, []))[1]):
                    per[k] = (d, rs)
        self._cell_rows = (self.default, per)
        return per

    def cell_sources(self):
        """{directory: cells read from it}, in the order listed."""
        n = {d: 0 for d, _ in self.sources}
        for d, _ in self.cell_rows().values():
            n[d] += 1
        return n

    def cells(self, **kw):
        """{cell key: {policy: cell_values}} for the default and the
        baselines; a cell of the universe that no directory ran is {}."""
        want = set(self.baselines) | {self.default}
        acc = {k: {} for k in self.universe or ()}
        for k, (_, rs) in self.cell_rows().items():
            for r in rs:
                if r.get("policy") in want:
                    acc.setdefault(k, {}).setdefault(
                        r["policy"], []).append(r)
            acc.setdefault(k, {})
        return {k: {p: sc.cell_values(rs, self.retrans, self.cross_of, **kw)
                    for p, rs in v.items()}
                for k, v in sorted(acc.items(), key=lambda kv: tuple(
                    (0, x, "") if isinstance(x, (int, float)) else
                    (1, 0, str(x)) for x in kv[0]))}


def restart_universe():
    """{profile: [cell key]} of `bench/run restart`'s full grid (the
    values as table.read_csv() reads them from the rows)."""
    from bench.scenarios import restart
    out = {}
    for g in restart.FULL:
        out[g["profile"]] = [
            (q, d, b, c) for q in g["queues"]
            for d in g["delays"] for b in g["bursts"] for c in g["crosses"]]
    return out


def keepalive_universe():
    """[cell key] of `bench/run keepalive`'s full grid."""
    from bench.scenarios import keepalive
    return [(kind, rtt, comp, size, think,
             keepalive_cross({"compete": comp}))
            for rtt, comp, size, think, kind in
            keepalive.cells(keepalive.FULL)]


def load(only=None):
    """The grids, from the result directories (ONLY may name others, and
    `candidate`: a policy of the rows to score in the default's place,
    e.g. a setting proposed as the new default; `baseline`: policies of
    the rows to score it against instead of sc.BASELINES).  With SOURCES
    the full grids' cells are counted, run or not; with directories named
    in ONLY the cells those hold."""
    only = only or {}
    check.keys("scorecard", only, tuple(SOURCES) + ("candidate", "baseline"))
    grids = []
    for src, dirs in SOURCES.items():
        named = only.get(src)
        if named == ["none"]:
            continue
        sources = []
        for d in named or dirs:
            path = REPO / d / "runs.csv"
            if not path.exists():
                if named:
                    raise SystemExit("scorecard: %s=%s: no runs.csv there"
                                     % (src, d))
                continue
            sources.append((REPO / d, [r for r in table.read_csv(path)
                                       if r.get("policy")]))
        if not sources:
            continue
        if src == "restart":
            full = {} if named else restart_universe()
            profs = dict.fromkeys(r["profile"] for _, rows in sources
                                  for r in rows)
            for prof in dict.fromkeys(list(full) + list(profs)):
                grids.append(Grid(prof, [
                    (d, [r for r in rows if r["profile"] == prof])
                    for d, rows in sources], RESTART_KEY, "burst_retrans",
                    restart_cross, full.get(prof)))
        else:
            grids.append(Grid("keepalive", [
                (d, [r for r in rows if (r.get("server") or "bench") ==
                     "bench"]) for d, rows in sources],
                KEEPALIVE_KEY, "retrans", keepalive_cross,
                None if named else keepalive_universe()))
    cand = (only.get("candidate") or [None])[0]
    if cand:
        for g in grids:
            if not any(r.get("policy") == cand for r in g.rows):
                raise SystemExit("scorecard: no rows of candidate %s in %s"
                                 % (cand, ", ".join(
                                     str(_rel(d)) for d, _ in g.sources)))
            g.default = cand
    base = tuple(only.get("baseline") or ())
    if base:
        for g in grids:
            have = {r.get("policy") for r in g.rows}
            miss = [b for b in base if b not in have or b == g.default]
            if miss:
                raise SystemExit(
                    "scorecard: baseline %s: no rows of it in %s, or it is "
                    "the default scored" % (", ".join(miss), g.name))
            g.baselines = base
    return grids


def run(ctx):
    """Nothing to measure: the grids' rows, scored by report()."""
    grids = load(ctx.only)
    if not grids:
        raise SystemExit("scorecard: no runs.csv in %s" % ", ".join(
            d for dirs in SOURCES.values() for d in dirs))
    ctx.extra["sources"] = {}
    for g in grids:
        ctx.extra["sources"][g.name] = {
            "default": g.default, "rows": len(g.rows), "dirs": [
                {"dir": str(_rel(d)), "cells": n,
                 "git_commit": _meta(d).get("git_commit"),
                 "date_utc": _meta(d).get("date_utc")}
                for d, n in g.cell_sources().items()]}
    ctx.grids = grids
    return []


def _rel(p):
    try:
        return Path(p).resolve().relative_to(REPO)
    except ValueError:
        return Path(p)


def _meta(d):
    try:
        return json.loads((Path(d) / "meta.json").read_text())
    except (OSError, ValueError):
        return {}


def missing_cells(g):
    """The cells of G's universe that no directory ran with the default."""
    ran = g.cell_rows()
    return [k for k in g.universe or ()
            if not g.ran_default(ran.get(k, (None, []))[1])]


def describe_cells(key, cells):
    """CELLS (keys over the axes KEY) in words: the values of each axis
    that varies, when the cells are every combination of them (a
    `--only` that reruns them), else their number alone."""
    if not cells:
        return "none"
    axes = [list(dict.fromkeys(k[i] for k in cells))
            for i in range(len(key))]
    n = 1
    for a in axes:
        n *= len(a)
    if n != len(set(cells)):
        return "%d cells" % len(cells)
    return "%d cells: %s" % (len(cells), ", ".join(
        "%s=%s" % (name, "/".join(map(str, a)))
        for name, a in zip(key, axes)))


def _sources_md(grids):
    """Where each grid's cells were read from, and which of the full
    grid's cells no directory ran with the default."""
    parts = []
    for g in grids:
        used = ["`%s/runs.csv` (%d cells, commit %s)" % (
            _rel(d), n, (_meta(d).get("git_commit") or "?")[:12])
            for d, n in g.cell_sources().items() if n]
        line = "%s: %s" % (g.name, ", ".join(used) or "no rows")
        if g.universe is not None:
            miss = missing_cells(g)
            line += "; %d of the full grid's %d cells not run with `%s`" % (
                len(miss), len(g.universe), g.default)
            if miss:
                line += " (%s)" % describe_cells(g.key, miss)
        parts.append(line)
    return "Sources:\n\n%s\n" % "".join("- %s.\n" % x for x in parts)


def _fmt_key(g, k):
    return ", ".join("%s=%s" % kv for kv in zip(g.key, k))


def score(grids, **kw):
    """{grid name: [(cell key, cell, verdict)]}."""
    out = {}
    for g in grids:
        cs = g.cells(**kw)
        out[g.name] = [(k, c, sc.classify(c, g.default, g.baselines))
                       for k, c in cs.items()]
    return out


def busy_baseline(g):
    """The baseline the busy goal compares G's default with: Linux's
    default, or the first baseline scored when it is not one."""
    return "linux-default" if "linux-default" in g.baselines \
        else g.baselines[0]


def _counts_md(grids, scored):
    md = ["\n| grid | default | cells | dominated | of them p ≤ %.2f | won "
          "| neither | incomplete | cross loss in harm |\n|---|---|---|---|"
          "---|---|---|---|---|\n" % sc.ALPHA]
    total = sc.tally([])
    total["significant"] = 0
    for g in grids:
        t = sc.tally(v for _, _, v in scored[g.name])
        t["significant"] = sum(sc.significant(v)
                               for _, _, v in scored[g.name])
        known = sum(1 for _, c, _ in scored[g.name]
                    if c.get(g.default, {}).get("cross_known"))
        for k in total:
            total[k] += t[k]
        md.append("| %s | %s | %d | %d | %d | %d | %d | %d | %d of %d "
                  "cells |\n" % (g.name, g.default, t["cells"],
                                 t["dominated"], t["significant"], t["won"],
                                 t["neither"], t["incomplete"], known,
                                 t["cells"]))
    md.append("| **all** | | %d | **%d** | %d | **%d** | %d | %d | |\n" % (
        total["cells"], total["dominated"], total["significant"],
        total["won"], total["neither"], total["incomplete"]))
    md.append("\n*p*: a one-sided Mann–Whitney test over the repetitions' "
              "times (exact) that a dominating baseline was more than "
              "%d%% faster; a cell counts when one of its dominators has "
              "p ≤ %.2f. With 5 repetitions each the smallest p is "
              "1/252 (0.004); a domination by medians with a larger p "
              "rests on repetitions whose times overlap.\n"
              % (round(sc.TOL * 100), sc.ALPHA))
    return md, total


def _ratios_md(grids, scored):
    """Median over cells of the default's time / each baseline's, the
    cells each baseline dominates, and harm summed over cells."""
    md = ["\n## The default against each baseline\n\nPer grid: the median "
          "over cells of the default's time / the baseline's, the cells "
          "the baseline dominates (all, and those with p ≤ %.2f), and each "
          "policy's harm summed over the cells (segments).\n\n| grid | "
          "baseline | default / baseline (median time) | dominates in | "
          "of them p ≤ %.2f | harm baseline | harm default |\n"
          "|---|---|---|---|---|---|---|\n" % (sc.ALPHA, sc.ALPHA)]
    for g in grids:
        for b in g.baselines:
            rs, dom, sig, hb, hd = [], 0, 0, 0.0, 0.0
            for _, c, v in scored[g.name]:
                d, x = c.get(g.default), c.get(b)
                if not (d and x) or d["time"] is None or not x["time"]:
                    continue
                rs.append(d["time"] / x["time"])
                dom += b in v["dominators"]
                sig += sc.beyond_chance(v["p"].get(b))
                hb += x["harm"] or 0
                hd += d["harm"] or 0
            if rs:
                md.append("| %s | %s | %.2f | %d | %d | %s | %s |\n" % (
                    g.name, b, stats.median(rs), dom, sig, table.fmt(hb),
                    table.fmt(hd)))
    return md


def _goals_md(grids, scored):
    """The goals per grid: quiet paths (no cross traffic) within 1.10x
    the ideal with harm no higher than any baseline's; paths with cross
    traffic faster than linux-default with no more harm."""
    md = ["\n## Goals\n\nQuiet: cells without cross traffic where the "
          "default took at most %.2f× the ideal (the grid's `ideal_s`) "
          "with harm no higher than any baseline's. Busy: cells with "
          "cross traffic (restart: it starts during the idle period; "
          "keepalive: a bulk flow throughout) where the default was "
          "faster than `%s` with no more harm.\n\n"
          "| grid | quiet cells | quiet: goal met | busy cells | busy: goal "
          "met | busy, missed: slower, no more harm | faster, more harm | "
          "slower, more harm |\n|---|---|---|---|---|---|---|---|\n"
          % (sc.QUIET_IDEAL, "`, `".join(dict.fromkeys(
              busy_baseline(g) for g in grids)))]
    for g in grids:
        cross_at = g.key.index("cross")
        o = sc.goals([(k[cross_at], c) for k, c, _ in scored[g.name]],
                     g.default, busy_baseline(g), g.baselines)
        md.append("| %s | %d | %d | %d | %d | %d | %d | %d |\n" % (
            g.name, o["quiet"], o["quiet_met"], o["busy"], o["busy_met"],
            o["busy_slower_less_harm"], o["busy_faster_more_harm"],
            o["busy_slower_more_harm"]))
    return md


def _drops_harm(r):
    v = r.get("bottleneck_drops")
    return None if v in (None, "") else float(v)


def _sensitivity_md(grids):
    """The counts under other definitions of a cell's harm."""
    variants = [
        ("this report: mean over repetitions of retransmissions + cross "
         "loss", {}),
        ("median over repetitions instead of mean", {"harm_agg": "median"}),
        ("retransmissions only (no cross loss)",
         {"harm_fn": None, "_rtx": True}),
        ("restart: all drops at the bottleneck queue (burst and cross "
         "traffic, idle period and burst)", {"harm_fn": _drops_harm,
                                             "_restart": True}),
    ]
    md = ["\n## The counts under other definitions of harm\n\nDominated / "
          "won cells per grid when a cell's harm is defined otherwise "
          "(time is always the median over repetitions).\n\n| harm | " +
          " | ".join(g.name for g in grids) + " | all |\n|---|" +
          "---|" * (len(grids) + 1) + "\n"]
    for label, kw in variants:
        kw = dict(kw)
        rtx_only = kw.pop("_rtx", False)
        restart_only = kw.pop("_restart", False)
        line, td, tw = [], 0, 0
        for g in grids:
            if restart_only and g.retrans != "burst_retrans":
                line.append("—")
                continue
            if rtx_only:
                kw["harm_fn"] = (lambda r, f=g.retrans:
                                 None if r.get(f) in (None, "")
                                 else float(r[f]))
            t = sc.tally(v for _, _, v in score([g], **kw)[g.name])
            td, tw = td + t["dominated"], tw + t["won"]
            line.append("%d / %d of %d" % (t["dominated"], t["won"],
                                            t["cells"]))
        md.append("| %s | %s | %d / %d |\n" % (label, " | ".join(line),
                                               td, tw))
    return md


def _cells_md(g, scored):
    md = ["\n### %s\n\nDefault: `%s`. Time: median seconds; ×fastest: "
          "the default's time / the fastest baseline's; harm: segments "
          "(mean over repetitions).\n\n| cell | default s | fastest "
          "baseline | ×fastest | harm default | %s | status |\n|---|---|"
          "---|---|---|%s---|\n" % (g.name, g.default, " | ".join(
              "harm " + b for b in g.baselines), "---|" * len(g.baselines))]
    for k, c, v in scored:
        d = c.get(g.default) or {}
        st = v["status"]
        if st == "dominated":
            st += " by " + ", ".join(
                b if v["p"].get(b) is None else
                "%s (p %.3f)" % (b, v["p"][b]) for b in v["dominators"])
        md.append("| %s | %s | %s | %s | %s | %s | %s |\n" % (
            _fmt_key(g, k), table.fmt(d.get("time")),
            "%s (%s s)" % (v["fastest"], table.fmt(c[v["fastest"]]["time"]))
            if v["fastest"] else "—",
            table.fmt(v["ratio"]), table.fmt(d.get("harm")),
            " | ".join(table.fmt((c.get(b) or {}).get("harm"))
                       for b in g.baselines), st))
    return md


def _csv_rows(grids, scored):
    out = []
    for g in grids:
        for k, c, v in scored[g.name]:
            for p in list(g.baselines) + [g.default]:
                x = c.get(p)
                if x is None:
                    continue
                row = {"grid": g.name, "cell": _fmt_key(g, k), "policy": p,
                       "role": "default" if p == g.default else "baseline",
                       "seconds": x["time"], "harm": x["harm"],
                       "reps": x["reps"], "cross_known": int(x["cross_known"]),
                       "status": v["status"],
                       "p": v["p"].get(p, "")}
                out.append(row)
    return out


def pareto_points(grids, scored):
    """{grid: {label: [(harm, time / fastest baseline's)]}} per cell."""
    panels = {}
    for g in grids:
        pts = panels.setdefault(g.name, {})
        for _, c, v in scored[g.name]:
            if not v["fastest"]:
                continue
            best = c[v["fastest"]]["time"]
            for p in list(g.baselines) + [g.default]:
                x = c.get(p)
                if x and x["time"] is not None and x["harm"] is not None \
                        and best:
                    lab = LABEL.get(p, p + (" (default)"
                                            if p == g.default else ""))
                    pts.setdefault(lab, []).append((x["harm"],
                                                    x["time"] / best))
    return panels


def report(ctx, rows):
    grids = getattr(ctx, "grids", None) or load(ctx.only)
    scored = score(grids)
    counts, total = _counts_md(grids, scored)
    used = sorted({g.default for g in grids})
    md = ["# scorecard: time and harm of the module's default, per cell\n\n",
          "The module's default is `%s`%s. A cell is *dominated* when a "
          "baseline (%s) is more than %d%% faster with no more harm; *won* "
          "when the default is within %d%% of the fastest baseline with "
          "harm no higher than any baseline's. Time: the median of the "
          "cell's runs (keepalive: of its requests). Harm, in segments: "
          "the burst's retransmissions (keepalive: the connection's, "
          "summed over its requests) plus what the cross traffic lost at "
          "the bottleneck where the rows record it (UDP: datagrams "
          "dropped; TCP: the bulk flow's goodput during the burst against "
          "before, times the burst's duration), averaged over "
          "repetitions. Definitions: `bench/lib/scorecard.py`.\n\n" % (
              "`, `".join(used),
              " (the rows predate `cocktail-default`: restart=auto was the "
              "default they ran)" if used == [sc.FALLBACK] else "",
              ", ".join("`%s`" % b for b in dict.fromkeys(
                  b for g in grids for b in g.baselines)),
              round(100 * sc.TOL), round(100 * sc.TOL))]
    md.append(_sources_md(grids))
    md.append("\n## Counts\n")
    md += counts
    legacy = [g.name for g in grids if any(
        not c.get(g.default, {}).get("cross_known", True)
        for _, c, _ in scored[g.name])]
    if legacy:
        md.append("\nIn %s the rows do not record what the cross traffic "
                  "lost (they predate the `cross_*` columns): there harm is "
                  "the retransmissions alone.\n" % ", ".join(legacy))
    md += _goals_md(grids, scored)
    md += _ratios_md(grids, scored)
    md += _sensitivity_md(grids)
    md.append("\n## Every cell\n")
    for g in grids:
        md += _cells_md(g, scored[g.name])
    (ctx.outdir / "table.md").write_text("".join(md))
    table.write_csv(ctx.outdir / "cells.csv", _csv_rows(grids, scored))
    plot.pareto(ctx.outdir / "pareto.png", "time against harm per cell "
                "(large markers: medians over the grid's cells)",
                pareto_points(grids, scored))
    ctx.log("scorecard: %d cells, %d dominated, %d won" % (
        total["cells"], total["dominated"], total["won"]))

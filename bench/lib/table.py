"""CSV in/out and markdown tables for bench results.

A result row is a flat dict.  The restart-style table groups rows into one
table per GROUP key tuple, one line per ROW key value, one column per
policy; each cell is

    median (min-max) seconds, xI ratio to the ideal, xB ratio to the
    baseline policy, and the median burst retransmissions

followed by the cell's winner (fastest median) with its margin over the
runner-up, and, when an `auto` policy is present, how far `auto` is from the
fastest policy and whether its retransmissions exceed SSR's.
"""
import csv
import io

from . import stats


def write_csv(path, rows, fields=None):
    if fields is None:
        fields = []
        for r in rows:
            for k in r:
                if k not in fields:
                    fields.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="raise")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})


def _num(v):
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v


def read_csv(path):
    with open(path, newline="") as f:
        return [{k: _num(v) for k, v in r.items()} for r in csv.DictReader(f)]


def fmt(v, digits=3):
    if v is None:
        return "n/a"
    if abs(v) >= 100:
        return "%.0f" % v
    return ("%%.%dg" % digits) % v if abs(v) < 1 else ("%%.%df" % (digits - 1)) % v


def fmt_range(s, digits=3):
    """'median (min–max)' from a stats.summarize() dict."""
    if not s or s["n"] == 0:
        return "n/a"
    if s["n"] == 1:
        return fmt(s["median"], digits)
    return "%s (%s–%s)" % (fmt(s["median"], digits), fmt(s["min"], digits),
                           fmt(s["max"], digits))


def _key(row, keys):
    return tuple(row.get(k) for k in keys)


def _order(values):
    """Stable order: numbers ascending, others by first appearance."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    if all(isinstance(v, (int, float)) for v in seen):
        return sorted(seen)
    return seen


def cells(rows, group, row_key, policy_key="policy", value="seconds",
          ideal="ideal_s", retrans="burst_retrans", rtx_total=False):
    """{(group tuple, row value, policy): summary dict} over ROWS; rows whose
    VALUE is missing (failed runs) count in 'failed'.  A cell's 'rtx' is
    the median of RETRANS over its rows, or with RTX_TOTAL their sum (for
    rows that are requests of one run, as in keepalive)."""
    acc = {}
    for r in rows:
        k = (_key(r, group), r.get(row_key), r.get(policy_key))
        a = acc.setdefault(k, {"v": [], "ideal": [], "rtx": [], "failed": 0})
        if r.get(value) in (None, ""):
            a["failed"] += 1
            continue
        a["v"].append(r[value])
        if r.get(ideal) not in (None, ""):
            a["ideal"].append(r[ideal])
        if r.get(retrans) not in (None, ""):
            a["rtx"].append(r[retrans])
    out = {}
    for k, a in acc.items():
        s = stats.summarize(a["v"])
        s["ideal"] = stats.median(a["ideal"])
        s["rtx"] = (sum(a["rtx"]) if rtx_total else
                    stats.median(a["rtx"]))
        s["rtx_max"] = max(a["rtx"]) if a["rtx"] else None
        s["failed"] = a["failed"]
        out[k] = s
    return out


def verdict(percell, policies, auto="cocktail-auto", ssr="cocktail-ssr"):
    """Winner and auto's standing for one table line: dict with keys
    winner, margin (runner-up/winner - 1), auto_gap (auto/winner - 1),
    auto_rtx_ok (auto's median retrans <= SSR's), and the same against the
    fastest policy whose median retransmissions are no higher than SSR's
    (speed bought with loss is not a win): fair_winner, auto_gap_fair; or
    None entries."""
    meds = [(percell[p]["median"], p) for p in policies
            if p in percell and percell[p]["median"] is not None]
    meds.sort()
    v = {"winner": None, "margin": None, "auto_gap": None,
         "auto_rtx_ok": None, "fair_winner": None, "auto_gap_fair": None}
    if not meds:
        return v
    v["winner"] = meds[0][1]
    if len(meds) > 1 and meds[0][0] > 0:
        v["margin"] = meds[1][0] / meds[0][0] - 1
    s = percell.get(ssr)
    s_rtx = s["rtx"] if s and s["median"] is not None else None
    fair = [(m, p) for m, p in meds if s_rtx is not None and
            percell[p]["rtx"] is not None and percell[p]["rtx"] <= s_rtx]
    if fair:
        v["fair_winner"] = fair[0][1]
    a = percell.get(auto)
    if a and a["median"] is not None and meds[0][0] > 0:
        v["auto_gap"] = a["median"] / meds[0][0] - 1
        if fair and fair[0][0] > 0:
            v["auto_gap_fair"] = a["median"] / fair[0][0] - 1
        if s_rtx is not None and a["rtx"] is not None:
            v["auto_rtx_ok"] = a["rtx"] <= s_rtx
    return v


def pct(x):
    return "n/a" if x is None else "%+.0f%%" % (100 * x)


def markdown(rows, group, row_key, policies, baseline, title_fmt,
             row_label, published=None, published_cols=(), value="seconds",
             auto="cocktail-auto", ssr="cocktail-ssr"):
    """Markdown text: one table per group.  PUBLISHED maps
    (group tuple, row value, column) -> number for the published columns."""
    cs = cells(rows, group, row_key, value=value)
    groups = _order([_key(r, group) for r in rows])
    present = [p for p in policies if any(k[2] == p for k in cs)]
    out = io.StringIO()
    for g in groups:
        out.write("\n### %s\n\n" % title_fmt.format(**dict(zip(group, g))))
        head = [row_label, "ideal s"] + present + ["fastest (margin)"]
        if auto in present:
            head += ["auto vs fastest", "auto vs fastest at rtx ≤ SSR"]
        head += ["published %s" % c for c in published_cols]
        out.write("| " + " | ".join(head) + " |\n")
        out.write("|" + "---|" * len(head) + "\n")
        rvals = _order([r.get(row_key) for r in rows if _key(r, group) == g])
        for rv in rvals:
            percell = {p: cs[(g, rv, p)] for p in present if (g, rv, p) in cs}
            ideal = stats.median([c["ideal"] for c in percell.values()])
            base = percell.get(baseline, {}).get("median")
            line = [fmt(rv) if isinstance(rv, float) else str(rv), fmt(ideal)]
            for p in present:
                c = percell.get(p)
                if c is None or c["n"] == 0:
                    line.append("failed" if c and c["failed"] else "—")
                    continue
                bits = [fmt_range(c)]
                if ideal:
                    bits.append("×%.2f ideal" % (c["median"] / ideal))
                if base and p != baseline:
                    bits.append("×%.2f base" % (c["median"] / base))
                if c["rtx"] is not None:
                    bits.append("%g rtx" % c["rtx"])
                if c["failed"]:
                    bits.append("%d failed" % c["failed"])
                line.append("<br>".join(bits))
            v = verdict(percell, present, auto=auto, ssr=ssr)
            line.append("%s (%s)" % (v["winner"], pct(v["margin"]))
                        if v["winner"] else "n/a")
            if auto in present:
                ok = {True: "rtx ≤ SSR", False: "rtx > SSR",
                      None: "rtx n/a"}[v["auto_rtx_ok"]]
                line.append("%s, %s" % (pct(v["auto_gap"]), ok))
                line.append("%s (%s)" % (pct(v["auto_gap_fair"]),
                                         v["fair_winner"])
                            if v["fair_winner"] else "n/a")
            for c in published_cols:
                pv = (published or {}).get((g, rv, c))
                line.append(fmt(pv, 4) if pv is not None else "—")
            out.write("| " + " | ".join(line) + " |\n")
    return out.getvalue()


def auto_summary(rows, group, row_key, policies, auto="cocktail-auto",
                 ssr="cocktail-ssr", goal=0.10, cell_kw=None):
    """Lines saying, per table line, where `auto` misses the goal (within
    GOAL of the fastest median, retransmissions no higher than SSR's).
    CELL_KW (here and below) goes to cells()."""
    cs = cells(rows, group, row_key, **(cell_kw or {}))
    lines, n, ok, ok_fair = [], 0, 0, 0
    for (g, rv) in _order([(k[0], k[1]) for k in cs]):
        percell = {p: cs[(g, rv, p)] for p in policies if (g, rv, p) in cs}
        if auto not in percell:
            continue
        v = verdict(percell, policies, auto=auto, ssr=ssr)
        if v["auto_gap"] is None:
            continue
        n += 1
        rtx_ok = v["auto_rtx_ok"] is not False
        good = v["auto_gap"] <= goal and rtx_ok
        ok += good
        fair = v["auto_gap_fair"] is not None and \
            v["auto_gap_fair"] <= goal and rtx_ok
        ok_fair += fair
        if not good:
            lines.append("- %s %s=%s: auto %s vs fastest (%s), %s vs the "
                         "fastest at rtx ≤ SSR (%s)%s" % (
                             "/".join(str(x) for x in g), row_key, rv,
                             pct(v["auto_gap"]), v["winner"],
                             pct(v["auto_gap_fair"]), v["fair_winner"],
                             "" if rtx_ok else ", retransmits more than SSR"))
    head = ("auto met the goal in %d of %d cells; against the fastest policy "
            "that retransmitted no more than SSR, in %d" % (ok, n, ok_fair))
    return head, lines


def policy_summary(rows, group, row_key, policies, ssr="cocktail-ssr",
                   cell_kw=None):
    """One dict per policy over every table line (cell) that has it: cells,
    wins (fastest median), ratio_fastest and ratio_ideal (medians over
    cells of its median time / the fastest median, / the ideal), rtx_le_ssr
    (cells where its median retransmissions are no higher than SSR's) and
    rtx_sum (sum over cells of its median retransmissions)."""
    cs = cells(rows, group, row_key, **(cell_kw or {}))
    lines = _order([(k[0], k[1]) for k in cs])
    acc = {p: {"policy": p, "cells": 0, "wins": 0, "rf": [], "ri": [],
               "rtx_le_ssr": 0, "rtx_sum": 0} for p in policies}
    for g, rv in lines:
        percell = {p: cs[(g, rv, p)] for p in policies
                   if (g, rv, p) in cs and cs[(g, rv, p)]["median"]
                   is not None}
        if not percell:
            continue
        best = min(c["median"] for c in percell.values())
        v = verdict(percell, policies, ssr=ssr)
        s_rtx = percell[ssr]["rtx"] if ssr in percell else None
        for p, c in percell.items():
            a = acc[p]
            a["cells"] += 1
            a["wins"] += v["winner"] == p
            if best > 0:
                a["rf"].append(c["median"] / best)
            if c["ideal"]:
                a["ri"].append(c["median"] / c["ideal"])
            if c["rtx"] is not None:
                a["rtx_sum"] += c["rtx"]
                if s_rtx is not None and c["rtx"] <= s_rtx:
                    a["rtx_le_ssr"] += 1
    out = []
    for p in policies:
        a = acc[p]
        if not a["cells"]:
            continue
        out.append({"policy": p, "cells": a["cells"], "wins": a["wins"],
                    "ratio_fastest": stats.median(a["rf"]),
                    "ratio_ideal": stats.median(a["ri"]),
                    "rtx_le_ssr": a["rtx_le_ssr"], "rtx_sum": a["rtx_sum"]})
    return out


def policy_summary_md(title, summ, rtx_label):
    """A markdown table of policy_summary() output under heading TITLE."""
    md = ["\n### %s\n\n| policy | cells | fastest in | median ×fastest | "
          "median ×ideal | rtx ≤ SSR in | %s (sum) |\n"
          "|---|---|---|---|---|---|---|\n" % (title, rtx_label)]
    for d in summ:
        md.append("| %s | %d | %d | %s | %s | %d | %g |\n" % (
            d["policy"], d["cells"], d["wins"], fmt(d["ratio_fastest"]),
            fmt(d["ratio_ideal"]), d["rtx_le_ssr"], d["rtx_sum"]))
    return md


def crossover(rows, group, row_key, a="cocktail-ssr", b="cocktail-pace"):
    """Policy B against policy A at each value of ROW_KEY, over every
    table (GROUP value) that has both: a list of dicts with keys value,
    cells, b_faster (cells where B's median time is lower), ratio (median
    over cells of B's median / A's median) and b_rtx_le (cells where B's
    median retransmissions are no higher than A's)."""
    cs = cells(rows, group, row_key)
    out = []
    for rv in _order([k[1] for k in cs]):
        pairs = [(cs[(g, rv, a)], cs[(g, rv, b)])
                 for g in _order([k[0] for k in cs])
                 if (g, rv, a) in cs and (g, rv, b) in cs
                 and cs[(g, rv, a)]["median"] and
                 cs[(g, rv, b)]["median"] is not None]
        if not pairs:
            continue
        out.append({
            "value": rv, "cells": len(pairs),
            "b_faster": sum(y["median"] < x["median"] for x, y in pairs),
            "ratio": stats.median([y["median"] / x["median"]
                                   for x, y in pairs]),
            "b_rtx_le": sum(x["rtx"] is not None and y["rtx"] is not None
                            and y["rtx"] <= x["rtx"] for x, y in pairs)})
    return out


def rule_scores(rows, group, row_key, policies, rules, ssr="cocktail-ssr",
                goal=0.10, cell_kw=None, extra=()):
    """Score restart rules on measured cells. RULES maps a name to a
    function (group tuple, row value) -> the policy that rule would run in
    that cell; the rule is scored with that policy's measured runs there.
    Against each cell's fastest policy whose median retransmissions are
    no higher than SSR's (verdict()'s fair winner), one dict per rule:
    rule, cells, goal_met (within GOAL of it and retransmissions no higher
    than SSR's), rtx_le_ssr, gap_median, gap_p90, gap_max (its median time
    / the fair winner's - 1), picks ({policy: cells}).  A rule may also
    pick one of EXTRA, policies that ran in some cells but do not compete
    for the fair winner (a new policy measured against the grid)."""
    cs = cells(rows, group, row_key, **(cell_kw or {}))
    # per cell, once: its policies' summaries and the fair winner's median
    scored = []
    for g, rv in _order([(k[0], k[1]) for k in cs]):
        percell = {p: cs[(g, rv, p)] for p in list(policies) + list(extra)
                   if (g, rv, p) in cs and cs[(g, rv, p)]["median"]
                   is not None}
        fair = verdict(percell, policies, ssr=ssr)["fair_winner"]
        if fair and percell[fair]["median"]:
            scored.append((g, rv, percell, percell[fair]["median"]))
    out = []
    for name, rule in rules.items():
        s = {"rule": name, "cells": 0, "goal_met": 0, "rtx_le_ssr": 0,
             "picks": {}}
        gaps = []
        for g, rv, percell, fair in scored:
            pick = rule(g, rv)
            c = percell.get(pick)
            if c is None or c["rtx"] is None:
                continue
            gap = c["median"] / fair - 1
            rtx_ok = c["rtx"] <= percell[ssr]["rtx"]
            s["cells"] += 1
            gaps.append(gap)
            s["rtx_le_ssr"] += rtx_ok
            s["goal_met"] += rtx_ok and gap <= goal
            s["picks"][pick] = s["picks"].get(pick, 0) + 1
        if not s["cells"]:
            continue
        gaps.sort()
        s.update(gap_median=stats.median(gaps),
                 gap_p90=stats.percentile(gaps, 90), gap_max=gaps[-1])
        out.append(s)
    return out


def switch_point(lines):
    """(last value where B is not faster in most cells, first value from
    which B is faster in most cells at it and at every larger value), from
    crossover() output; None for a side that does not exist."""
    wins = [ln["b_faster"] * 2 > ln["cells"] for ln in lines]
    k = len(wins)
    while k > 0 and wins[k - 1]:
        k -= 1
    below = lines[k - 1]["value"] if k > 0 else None
    above = lines[k]["value"] if k < len(lines) else None
    return below, above


def notes(ctx):
    """The run's notes: CTX's, or (--report-only) the ones meta.json
    kept from the run that produced runs.csv."""
    if ctx.notes:
        return list(ctx.notes)
    import json
    path = ctx.outdir / "meta.json"
    try:
        return list(json.loads(path.read_text()).get("notes") or [])
    except (OSError, ValueError):
        return []

"""The scorecard's arithmetic: time and harm per cell, and whether a
baseline dominates the module's default there (stdlib only; the report
is bench/scenarios/scorecard.py).

A *cell* is one point of a grid (restart: profile, queue, delay, burst,
cross traffic; keepalive: kind, RTT, bulk, object, think time, cross
traffic) for one policy.  Its *time* is the median of `seconds` over the
cell's rows (restart: one row a repetition; keepalive: one row a request,
every repetition's requests together).  Its *harm* is the mean over
repetitions of what one repetition cost, in segments:

    the burst's retransmissions (restart: burst_retrans; keepalive: the
    sum of `retrans` over the connection's requests)
  + what the cross traffic lost at the bottleneck, when the row records
    it: UDP, the datagrams dropped (cross_udp_dropped); TCP, the
    goodput the bulk flow lost during the burst against before it,
    (cross_tcp_kbit_before - cross_tcp_kbit_burst) x the burst's seconds,
    in segments of the row's MSS (nothing when it gained).

The TCP part counts every byte the burst took from the bulk flow, so
every policy pays about the burst's own size there; what separates the
policies is what they cost beyond it (the bulk flow's losses and backing
off).

Rows written before the bench recorded the cross traffic's loss carry
retransmissions only; such a cell says so (cross_known False).  The mean,
not the median, over repetitions: a burst that loses a window in one
repetition of three costs the network that window whatever the others
did.

A cell is *dominated* when some baseline is more than TOL faster (the
default's time > (1 + TOL) x the baseline's) with no more harm than the
default; *won* when the default's time is within TOL of the fastest
baseline's (<= (1 + TOL) x it) and its harm is no higher than any
baseline's.  The two exclude each other.  A cell lacking the default's
time or harm, or (for *won*) a baseline's, is *incomplete* unless a
baseline that is there dominates it.

Medians of five repetitions can dominate by chance where a cell's
times are bimodal (a burst that meets a competitor's slow-start
overshoot or does not).  So each dominating baseline also gets a
p-value: a one-sided Mann-Whitney test over the repetitions' times that
the baseline's, raised by TOL, are lower than the default's (with 5
repetitions each the smallest possible p is 1/252, about 0.004).  The
report counts the dominated cells with p <= ALPHA beside all of them.
"""
from . import stats

# the baselines an operator would pick instead: Linux's default (CUBIC
# with slow-start restart), CUBIC without it, BBR (bench/lib/policies.py)
BASELINES = ("linux-default", "cubic-nossai", "bbr")
DEFAULT = "cocktail-default"
# the default before the bench ran the module's defaults as a policy
FALLBACK = "cocktail-auto"
# "faster": by more than this fraction; "as fast": within it
TOL = 0.05
# a domination by medians counts as beyond chance at this one-sided
# Mann-Whitney p over the repetitions (dominance_p())
ALPHA = 0.05
# float slack so that a time exactly 5% over counts as within 5%
_EPS = 1e-9
CROSS_KINDS = ("none", "udp", "tcp")


def default_policy(rows):
    """The policy that stands for the module's default in ROWS."""
    return DEFAULT if any(r.get("policy") == DEFAULT for r in rows) \
        else FALLBACK


def _num(v):
    return None if v is None or v == "" else float(v)


def cross_harm(row, cross, seconds=None):
    """What the cross traffic of ROW (of kind CROSS) lost, in segments, or
    None when the row does not record it.  SECONDS: the burst's duration
    (default row["seconds"])."""
    if cross == "none":
        return 0.0
    if cross == "udp":
        return _num(row.get("cross_udp_dropped"))
    if cross == "tcp":
        before = _num(row.get("cross_tcp_kbit_before"))
        during = _num(row.get("cross_tcp_kbit_burst"))
        secs = _num(row.get("seconds") if seconds is None else seconds)
        mss = _num(row.get("mss")) or 1448.0
        if before is None or during is None or secs is None:
            return None
        return max(0.0, before - during) * 1000.0 / 8.0 * secs / mss
    raise ValueError("unknown cross traffic %r" % (cross,))


def row_harm(row, retrans, cross):
    """(retransmissions + cross harm, whether the cross part was known);
    (None, False) without retransmissions."""
    rtx = _num(row.get(retrans))
    if rtx is None:
        return None, False
    c = cross_harm(row, cross)
    return rtx + (c or 0.0), c is not None


def cell_values(rows, retrans, cross_of, harm_agg="mean",
                harm_fn=None):
    """One policy's rows of one cell -> {time, harm, reps, rep_times,
    cross_known}; rep_times: each repetition's median time.
    CROSS_OF(row) names its cross traffic; HARM_AGG how repetitions
    combine ("mean", or "median" for the report's sensitivity check);
    HARM_FN(row) replaces the per-row harm (the sensitivity checks)."""
    times = [r["seconds"] for r in rows if r.get("seconds") not in
             (None, "")]
    per_rep, by_rep, known = {}, {}, True
    for r in rows:
        if r.get("seconds") in (None, ""):
            continue                        # a failed run: no time, no harm
        if harm_fn is not None:
            h, k = harm_fn(r), True
        else:
            h, k = row_harm(r, retrans, cross_of(r))
        known = known and k
        rep = r.get("rep")
        by_rep.setdefault(rep, []).append(r["seconds"])
        if h is None:
            per_rep[rep] = None
        elif per_rep.get(rep, 0.0) is not None:
            per_rep[rep] = per_rep.get(rep, 0.0) + h
    vals = list(per_rep.values())
    if not vals or any(v is None for v in vals):
        harm = None
    else:
        harm = stats.median(vals) if harm_agg == "median" else \
            stats.mean(vals)
    return {"time": stats.median(times), "harm": harm, "reps": len(per_rep),
            "rep_times": [stats.median(v) for v in by_rep.values()],
            "cross_known": known and harm is not None,
            "ideal": stats.median(r.get("ideal_s") for r in rows
                                  if r.get("ideal_s") not in (None, ""))}


def _ok(c):
    return c is not None and c.get("time") is not None and \
        c.get("harm") is not None


def dominance_p(cell, baseline, default=DEFAULT, tol=TOL):
    """One-sided Mann-Whitney p that BASELINE's repetitions were more
    than TOL faster than DEFAULT's in CELL (None without both sides'
    repetition times)."""
    b, d = cell.get(baseline) or {}, cell.get(default) or {}
    bt, dt = b.get("rep_times"), d.get("rep_times")
    if not bt or not dt:
        return None
    return stats.mann_whitney_less([t * (1 + tol) for t in
                                    stats.clean(bt)], dt)[1]


def classify(cell, default=DEFAULT, baselines=BASELINES, tol=TOL):
    """CELL: {policy: {time, harm}}.  Returns {status, dominators (the
    baselines that dominate), p ({dominator: dominance_p()}), fastest
    (the fastest baseline), ratio (the default's time / the fastest
    baseline's)} with status one of dominated, won, neither,
    incomplete."""
    d = cell.get(default)
    out = {"status": "incomplete", "dominators": [], "p": {},
           "fastest": None, "ratio": None}
    have = [b for b in baselines if _ok(cell.get(b))]
    if have:
        out["fastest"] = min(have, key=lambda b: cell[b]["time"])
    if not _ok(d):
        return out
    t, h = d["time"], d["harm"]
    if out["fastest"] and cell[out["fastest"]]["time"] > 0:
        out["ratio"] = t / cell[out["fastest"]]["time"]
    out["dominators"] = [b for b in have if
                         t > (1 + tol) * cell[b]["time"] * (1 + _EPS) and
                         cell[b]["harm"] <= h]
    out["p"] = {b: dominance_p(cell, b, default, tol)
                for b in out["dominators"]}
    if out["dominators"]:
        out["status"] = "dominated"
    elif len(have) < len(baselines):
        out["status"] = "incomplete"
    elif t <= (1 + tol) * cell[out["fastest"]]["time"] * (1 + _EPS) and \
            all(h <= cell[b]["harm"] for b in baselines):
        out["status"] = "won"
    else:
        out["status"] = "neither"
    return out


def beyond_chance(p, alpha=None):
    """Whether a dominance_p() P is at most ALPHA (default ALPHA)."""
    return p is not None and p <= (ALPHA if alpha is None else alpha)


def significant(verdict, alpha=None):
    """Whether a dominated VERDICT (classify()) has a dominator with
    p <= ALPHA (default ALPHA)."""
    return verdict["status"] == "dominated" and any(
        beyond_chance(p, alpha) for p in verdict["p"].values())


# the goals: on a path the idle period did not change, the
# default within this factor of the ideal
QUIET_IDEAL = 1.10


def goals(cells, default=DEFAULT, baseline="linux-default",
          baselines=BASELINES):
    """The goals over CELLS ([(cross kind, {policy: cell_values})]):
    quiet (cross "none": cells, and those where the default is within
    QUIET_IDEAL of the ideal with harm no higher than any of BASELINES')
    and busy (cross traffic: cells, and those where the default is
    faster than BASELINE with no more harm; the others split by which
    of the two it missed: slower with no more harm, faster with more,
    slower with more)."""
    out = {"quiet": 0, "quiet_met": 0, "busy": 0, "busy_met": 0,
           "busy_slower_less_harm": 0, "busy_faster_more_harm": 0,
           "busy_slower_more_harm": 0}
    for cross, c in cells:
        d = c.get(default)
        if not _ok(d):
            continue
        if cross == "none":
            if not d.get("ideal") or not all(_ok(c.get(b))
                                             for b in baselines):
                continue
            out["quiet"] += 1
            out["quiet_met"] += d["time"] <= QUIET_IDEAL * d["ideal"] * \
                (1 + _EPS) and all(d["harm"] <= c[b]["harm"]
                                   for b in baselines)
        elif _ok(c.get(baseline)):
            out["busy"] += 1
            faster = d["time"] < c[baseline]["time"]
            less = d["harm"] <= c[baseline]["harm"]
            out["busy_met"] += faster and less
            out["busy_slower_less_harm"] += not faster and less
            out["busy_faster_more_harm"] += faster and not less
            out["busy_slower_more_harm"] += not faster and not less
    return out


def tally(verdicts):
    """{status: count} over an iterable of classify() results, every
    status present."""
    out = {"cells": 0, "dominated": 0, "won": 0, "neither": 0,
           "incomplete": 0}
    for v in verdicts:
        out["cells"] += 1
        out[v["status"]] += 1
    return out

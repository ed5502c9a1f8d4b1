"""Rules the `auto` policy could follow, for table.rule_scores: each maps a
table cell to the policy it would run there, and is scored with the
measured runs of that policy in that cell.  Only "auto as measured" is a
policy that ran as such; the others reuse the runs of the policies they
pick, so they carry the same noise."""
from . import stats, table

AUTO = "auto as measured (ssr below auto_rtt_us, else pace)"
# a rule on the queue the connection had built before the idle period:
# the module knows srtt and the minimum RTT when it restarts
QUEUE_RATIO = 1.2
# the ratios scored, to choose queue_pct from the grids
QUEUE_SWEEP = (1.1, 1.2, 1.5, 2.0)


def queue_name(ratio):
    """The rule's name for a srtt / min RTT threshold."""
    return "ssr if srtt > %g × min RTT before the idle, else pace" % ratio


QUEUE = queue_name(QUEUE_RATIO)
# the module's restart=queue (queue_pct=120), when it ran
QUEUE_POLICY = "cocktail-queue"
QUEUE_MEASURED = "queue as measured (restart=queue, queue_pct=%d)" % round(
    QUEUE_RATIO * 100)


def candidates(path_rtt_ms):
    """{rule name: rule(group, row value) -> policy name}.  PATH_RTT_MS
    turns a cell's row value (restart: one-way delay, keepalive: RTT) into
    the path RTT in ms, which `auto` compares with auto_rtt_us."""
    def always(policy):
        return lambda g, v: policy

    def threshold(below, above, rtt_ms):
        return lambda g, v: below if path_rtt_ms(v) < rtt_ms else above

    out = {AUTO: always("cocktail-auto")}
    out.update(("always " + p, always("cocktail-" + p))
               for p in ("ssr", "decay", "keep", "pace"))
    out.update(("ssr below %d ms path RTT, else pace" % t,
                threshold("cocktail-ssr", "cocktail-pace", t))
               for t in (40, 100, 200))
    out["decay below 100 ms path RTT, else pace"] = threshold(
        "cocktail-decay", "cocktail-pace", 100)
    return out


def queue_ratios(rows, key):
    """{KEY(row): the median srtt / minimum RTT just before the idle period
    over the cocktail runs' rows with that key} (tcp_info's srtt_ms and
    min_rtt_ms; the kernel policies' rows do not count)."""
    q = {}
    for r in rows:
        if str(r.get("policy")).startswith("cocktail-") and \
                r.get("srtt_ms") and r.get("min_rtt_ms"):
            q.setdefault(key(r), []).append(r["srtt_ms"] / r["min_rtt_ms"])
    return {k: stats.median(v) for k, v in q.items()}


def queue_rule(ratios, cell_key, below="cocktail-pace",
               above="cocktail-ssr", ratio=QUEUE_RATIO):
    """A rule: ABOVE in the cells whose pre-idle srtt / minimum RTT
    (RATIOS, from queue_ratios) exceeded RATIO, else BELOW (also where
    nothing was measured).  CELL_KEY(group, row value) gives the cell's
    key in RATIOS."""
    return lambda g, v: above if ratios.get(cell_key(g, v), 0) > ratio \
        else below


def add_queue_sweep(rule_set, make_rule):
    """Add to the dict RULE_SET the queue rule at every QUEUE_SWEEP ratio;
    MAKE_RULE(ratio) builds one (the scenario knows its cells' keys)."""
    for ratio in QUEUE_SWEEP:
        rule_set[queue_name(ratio)] = make_rule(ratio)


def add_measured_queue(rows, rule_set):
    """When restart=queue ran among ROWS, add it "as measured" to the dict
    RULE_SET; returns the policies to pass to rule_scores as extra."""
    if not any(r.get("policy") == QUEUE_POLICY for r in rows):
        return []
    rule_set[QUEUE_MEASURED] = lambda g, v: QUEUE_POLICY
    return [QUEUE_POLICY]


def markdown(title, scores):
    """A markdown table of rule_scores() output under heading TITLE."""
    if not scores:
        return []
    md = ["\n### %s\n\n| rule | cells | goal met | rtx ≤ ssr | gap median | "
          "gap p90 | gap max |\n|---|---|---|---|---|---|---|\n" % title]
    for s in scores:
        md.append("| %s | %d | %d | %d | %s | %s | %s |\n" % (
            s["rule"], s["cells"], s["goal_met"], s["rtx_le_ssr"],
            table.pct(s["gap_median"]), table.pct(s["gap_p90"]),
            table.pct(s["gap_max"])))
    return md

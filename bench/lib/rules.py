"""Rules the `auto` policy could follow, for table.rule_scores: each maps a
table cell to the policy it would run there, and is scored with the
measured runs of that policy in that cell.  Only "auto as measured" is a
policy that ran as such; the others reuse the runs of the policies they
pick, so they carry the same noise."""
from . import table

AUTO = "auto as measured (ssr below auto_rtt_us, else pace)"


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

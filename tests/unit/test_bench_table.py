"""Host tests of bench/lib/table.py and plot.py: a fixed CSV gives the
expected markdown table, winners and auto verdicts; plots are PNGs."""
from pathlib import Path

from bench.lib import plot, published, table

DATA = Path(__file__).resolve().parent / "data" / "bench"
POLICIES = ["linux-default", "cubic-nossai", "cocktail-ssr", "cocktail-auto"]
GROUP = ["profile", "queue", "burst"]


def _rows():
    return table.read_csv(DATA / "restart_runs.csv")


def test_markdown_matches_expected():
    pub = {(("chan2m", "droptail", 100), 10, "SSR"): 2.498,
           (("chan2m", "droptail", 100), 300, "SSR"): 10.596}
    md = table.markdown(_rows(), GROUP, "delay_ms", POLICIES,
                        "linux-default", "{profile}, {queue}, burst {burst} "
                        "segments", "one-way delay ms", published=pub,
                        published_cols=("SSR",))
    assert md == (DATA / "restart_table.md").read_text()


def test_failed_run_is_counted_not_zero():
    cs = table.cells(_rows(), GROUP, "delay_ms")
    auto = cs[(("chan2m", "droptail", 100), 10, "cocktail-auto")]
    assert auto["n"] == 2 and auto["failed"] == 1 and auto["median"] == 3.2


def test_verdict_and_auto_summary():
    cs = table.cells(_rows(), GROUP, "delay_ms")
    g = ("chan2m", "droptail", 100)
    v = table.verdict({p: cs[(g, 300, p)] for p in POLICIES
                       if (g, 300, p) in cs}, POLICIES)
    assert v["winner"] == "cocktail-auto"
    assert v["auto_gap"] == 0 and v["auto_rtx_ok"] is False
    # Linux default and SSR tie at 8.0 s with rtx <= 1: auto (4.0 s) beats
    # the fastest policy that did not buy speed with loss by 50%
    assert v["fair_winner"] == "cocktail-ssr" and v["auto_gap_fair"] == -0.5
    head, lines = table.auto_summary(_rows(), GROUP, "delay_ms", POLICIES)
    assert head == ("auto met the goal in 1 of 2 cells; against the fastest "
                    "policy that retransmitted no more than SSR, in 1")
    assert len(lines) == 1 and "delay_ms=300" in lines[0]
    assert "retransmits more than SSR" in lines[0]


def test_csv_roundtrip(tmp_path):
    rows = [{"a": 1, "b": "x"}, {"a": 2.5, "c": ""}]
    table.write_csv(tmp_path / "r.csv", rows)
    back = table.read_csv(tmp_path / "r.csv")
    assert back == [{"a": 1, "b": "x", "c": None},
                    {"a": 2.5, "b": None, "c": None}]


def test_fmt():
    assert table.fmt(None) == "n/a"
    assert table.fmt(2.498) == "2.50"
    assert table.fmt(0.01234) == "0.0123"
    assert table.fmt(1234.5) == "1234" or table.fmt(1234.5) == "1235"


def test_plots_are_png(tmp_path):
    p = plot.lines(tmp_path / "l.png", "t", "x", "y",
                   {"a": [(10, [1, 2, 3]), (20, [2, None])], "empty": []},
                   {"pub": [(10, 1.5)]})
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    b = plot.bars(tmp_path / "b.png", "t", "y",
                  {"g1": {"x": [1, 2], "y": [3]}, "g2": {"x": [2]}})
    assert b.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_published_chan_transcription():
    chan = published.chan()
    # spot checks against Chan's tables 3.1 and 5.4
    assert chan[("droptail", 100, 10, "SSR")] == 2.498
    assert chan[("red", 100, 10, "SSR")] == 2.991
    assert chan[("droptail", 1000, 300, "Cocktail")] == 53.736
    assert chan[("red", 200, 300, "RBP")] == 5.7111
    assert len(chan) == 8 * 4 * 2 * 4      # delays x bursts x queues x pols
    heid = published.load("heidemann1997_table1.csv")
    assert [r["mean_ms"] for r in heid] == [43, 605, 195, 26]


def _xrows():
    """ssr vs pace at 3 delays in 2 tables: pace loses at 10 ms in both,
    wins one of two at 50 ms, wins both at 100 ms."""
    rows = []
    times = {10: [(2.0, 3.0), (2.0, 2.5)], 50: [(3.0, 2.0), (3.0, 3.3)],
             100: [(4.0, 3.0), (5.0, 2.5)]}
    for d, per_table in times.items():
        for q, (ssr, pace) in zip(("droptail", "red"), per_table):
            for pol, v, rtx in (("cocktail-ssr", ssr, 5),
                                ("cocktail-pace", pace, 4 if d == 100
                                 else 6)):
                rows.append({"profile": "p", "queue": q, "burst": 100,
                             "delay_ms": d, "policy": pol, "seconds": v,
                             "burst_retrans": rtx})
    return rows


def test_crossover_counts_and_ratio():
    lines = table.crossover(_xrows(), GROUP, "delay_ms")
    assert [ln["value"] for ln in lines] == [10, 50, 100]
    assert [ln["cells"] for ln in lines] == [2, 2, 2]
    assert [ln["b_faster"] for ln in lines] == [0, 1, 2]
    assert abs(lines[0]["ratio"] - (1.5 + 1.25) / 2) < 1e-9
    assert abs(lines[2]["ratio"] - (0.75 + 0.5) / 2) < 1e-9
    assert [ln["b_rtx_le"] for ln in lines] == [0, 0, 2]


def test_switch_point():
    lines = table.crossover(_xrows(), GROUP, "delay_ms")
    assert table.switch_point(lines) == (50, 100)
    # pace faster everywhere: no lower side; nowhere: no upper side
    assert table.switch_point([{"value": 1, "cells": 1, "b_faster": 1}]) \
        == (None, 1)
    assert table.switch_point([{"value": 1, "cells": 2, "b_faster": 1}]) \
        == (1, None)
    # a win below a loss does not count: the switch is above the loss
    assert table.switch_point([
        {"value": 1, "cells": 1, "b_faster": 1},
        {"value": 2, "cells": 1, "b_faster": 0},
        {"value": 3, "cells": 1, "b_faster": 1}]) == (2, 3)


TRACE = """\
# tracer: nop
#
# entries-in-buffer/entries-written: 6/8   #P:2
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
          python-301     [001] .....   812.000100: tracing_mark_write: bench policy=cocktail-keep
          python-301     [000] ..s1.   815.250000: cocktail_restart: sport=5003 dport=40100 requested=keep policy=keep idle_us=1002000 rto_us=204000 srtt_us=4100 path_rtt_us=20310 cwnd_before=40 cwnd_after=40 ssthresh=2147483647 pacing_rate=0
          python-301     [001] .....   820.000100: tracing_mark_write: bench policy=cocktail-auto
          <idle>-0       [000] ..s1.   823.500000: cocktail_restart: sport=5003 dport=40102 requested=auto policy=pace idle_us=1001000 rto_us=420000 srtt_us=220000 path_rtt_us=201000 cwnd_before=30 cwnd_after=30 ssthresh=25 pacing_rate=199000
          <idle>-0       [000] ..s1.   823.700000: cocktail_pace_end: sport=5003 dport=40102 reason=ack segs=30 duration_us=198000 pacing_rate=199000
          <idle>-0       [000] ..s1.   830.100000: cocktail_check: sport=5003 dport=40104 verdict=rtt segs=4 elapsed_us=900 send_us=850 sent_rate=2500000 ack_rate=0 rtt_us=25600 min_rtt_us=20100 cwnd=12 ssthresh=36 misses=1
"""


def test_ktrace_parse_attributes_events_to_the_marked_policy():
    from bench.lib import ktrace
    rows = ktrace.parse(TRACE)
    assert [(r["event"], r["bench_policy"]) for r in rows] == [
        ("cocktail_restart", "cocktail-keep"),
        ("cocktail_restart", "cocktail-auto"),
        ("cocktail_pace_end", "cocktail-auto"),
        ("cocktail_check", "cocktail-auto")]
    assert rows[0]["applied"] == "keep" and rows[0]["cwnd_after"] == 40
    assert rows[1]["requested"] == "auto" and rows[1]["applied"] == "pace"
    assert rows[1]["path_rtt_us"] == 201000 and rows[1]["t"] == 823.5
    assert rows[2]["reason"] == "ack" and rows[2]["duration_us"] == 198000
    assert rows[3]["verdict"] == "rtt" and rows[3]["misses"] == 1
    assert rows[3]["rtt_us"] == 25600 and rows[3]["send_us"] == 850


def test_ktrace_stop_writes_files_and_counts_lost(tmp_path):
    from bench.lib import ktrace
    from cocktail_lab.capture import Trace
    fake = tmp_path / "tracing"
    for e in ktrace.EVENTS:
        (fake / "events" / "tcp_cocktail" / e).mkdir(parents=True)
        (fake / "events" / "tcp_cocktail" / e / "enable").write_text("1\n")
    trace = Trace(*("tcp_cocktail/" + e for e in ktrace.EVENTS))
    trace.dir = str(fake)
    (fake / "trace").write_text(TRACE)
    out = tmp_path / "out"
    out.mkdir()
    assert ktrace.stop(out, trace) == {"events": 4, "lost": 2}
    enable = fake / "events/tcp_cocktail/cocktail_restart/enable"
    assert enable.read_text() == "0\n"
    assert (out / "trace.txt").read_text() == TRACE
    rows = table.read_csv(out / "restarts.csv")
    assert [r["applied"] for r in rows] == ["keep", "pace", None, None]


def test_policy_summary():
    out = {d["policy"]: d for d in table.policy_summary(
        _rows(), GROUP, "delay_ms", POLICIES)}
    assert set(out) == {"linux-default", "cocktail-ssr", "cocktail-auto"}
    d, s, a = out["linux-default"], out["cocktail-ssr"], out["cocktail-auto"]
    assert (d["cells"], s["cells"], a["cells"]) == (2, 2, 2)
    # fastest: ssr at 10 ms (3.0), auto at 300 ms (4.0)
    assert (d["wins"], s["wins"], a["wins"]) == (0, 1, 1)
    assert abs(s["ratio_fastest"] - (1.0 + 2.0) / 2) < 1e-9
    assert abs(a["ratio_fastest"] - (3.2 / 3.0 + 1.0) / 2) < 1e-9
    assert abs(d["ratio_ideal"] - (2.5 + 8.0 / 2.3) / 2) < 1e-9
    # retransmissions: default 12 and 0 against SSR's 5 and 1
    assert d["rtx_le_ssr"] == 1 and d["rtx_sum"] == 12
    assert s["rtx_le_ssr"] == 2 and a["rtx_le_ssr"] == 1
    assert a["rtx_sum"] == 8


def test_restart_auto_choices_from_batch_counters():
    from bench.scenarios import restart
    cnt = "auto_pace=1 auto_ssr=2 iw=3 pace=1 ssr=2"
    rows = [{"policy": "cocktail-auto", "order": 7, "min_rtt_ms": m,
             "module_counters": cnt} for m in (300.0, 21.0, 61.0)]
    # a batch whose counters do not add up to its cells is left out
    rows.append({"policy": "cocktail-auto", "order": 8, "min_rtt_ms": 20.0,
                 "module_counters": "auto_ssr=2 ssr=2"})
    rows.append({"policy": "cocktail-ssr", "order": 9, "min_rtt_ms": 20.0,
                 "module_counters": "ssr=1"})
    ch = restart.auto_choices(rows)
    assert [ch.get(id(r)) for r in rows] == ["pace", "ssr", "ssr", None,
                                             None]


def test_restart_bpf_beside_the_module():
    """bpf_md: decisions summed once per batch, auto's choice per cell,
    the median of the cell ratios, retransmissions per build."""
    from bench.scenarios import restart

    def cell(pol, order, delay, rtt, secs, rtx, cnt):
        return {"profile": "p", "queue": "droptail", "burst": 100,
                "delay_ms": delay, "cross": "udp", "policy": pol,
                "order": order, "min_rtt_ms": rtt, "seconds": secs,
                "ideal_s": 1.0, "burst_retrans": rtx,
                "module_counters": cnt}
    both = "auto_pace=1 auto_ssr=1 iw=2 pace=1 ssr=1"
    rows = [cell("cocktail-auto", 1, 10, 21.0, 1.0, 0, both),
            cell("cocktail-auto", 1, 100, 201.0, 2.0, 1, both),
            cell("bpf-auto", 2, 10, 21.0, 1.1, 0, both),
            cell("bpf-auto", 2, 100, 201.0, 2.4, 2, both)]
    md = "".join(restart.bpf_md(rows))
    line = [ln for ln in md.splitlines() if ln.startswith("| auto |")]
    assert line == ["| auto | 2 | auto_pace=1 auto_ssr=1 pace=1 ssr=1 | "
                    "auto_pace=1 auto_ssr=1 pace=1 ssr=1 | yes (auto: same "
                    "choice in 2 of 2 cells) | 1.15 | 1.00 | 2.00 |"], md
    # a different decision shows, and no bpf-* rows give no section
    rows[2]["module_counters"] = rows[3]["module_counters"] = \
        "auto_ssr=2 ssr=2"
    assert "| no (auto: same choice in 1 of 2 cells) |" in \
        "".join(restart.bpf_md(rows))
    assert restart.bpf_md(rows[:2]) == []


def _cell_rows(delay, spec):
    """rows for one (queue, burst) line at DELAY: {policy: (secs, rtx)}."""
    return [{"profile": "p", "queue": "droptail", "burst": 100,
             "delay_ms": delay, "policy": pol, "seconds": s,
             "ideal_s": 1.0, "burst_retrans": x}
            for pol, (s, x) in spec.items()]


def test_rule_scores_against_the_fair_winner():
    rows = (_cell_rows(10, {"bbr": (0.5, 9), "cocktail-ssr": (1.0, 2),
                            "cocktail-pace": (1.05, 2)}) +
            _cell_rows(100, {"bbr": (0.5, 9), "cocktail-ssr": (2.0, 1),
                             "cocktail-pace": (1.0, 3)}))
    names = ["bbr", "cocktail-ssr", "cocktail-pace"]
    rules = {"ssr": lambda g, d: "cocktail-ssr",
             "pace": lambda g, d: "cocktail-pace",
             "split": lambda g, d: ("cocktail-ssr" if d < 50
                                    else "cocktail-pace"),
             "absent": lambda g, d: "cocktail-keep"}
    sc = {s["rule"]: s for s in table.rule_scores(rows, ["queue", "burst"],
                                                  "delay_ms", names, rules)}
    # the fair winner: ssr at 10 ms (bbr loses more), ssr at 100 ms (pace
    # retransmits more than ssr there), so ssr meets the goal in both
    assert sc["ssr"]["goal_met"] == 2 and sc["ssr"]["rtx_le_ssr"] == 2
    assert sc["ssr"]["gap_max"] == 0
    # pace: +5% at 10 ms (met), -50% at 100 ms but with more retransmissions
    p = sc["pace"]
    assert (p["cells"], p["goal_met"], p["rtx_le_ssr"]) == (2, 1, 1)
    assert abs(p["gap_max"] - 0.05) < 1e-9
    assert abs(p["gap_median"] - (0.05 - 0.5) / 2) < 1e-9
    assert sc["split"]["picks"] == {"cocktail-ssr": 1, "cocktail-pace": 1}
    assert sc["split"]["goal_met"] == 1
    assert "absent" not in sc     # a policy that never ran scores nothing
    # a new policy (EXTRA) is scored against the grid's fair winner but
    # does not become it: faster than ssr at 10 ms, it is still +0% there
    rows += _cell_rows(10, {"cocktail-new": (0.9, 1)})
    new = {"new": lambda g, d: "cocktail-new"}
    sc = table.rule_scores(rows, ["queue", "burst"], "delay_ms", names, new,
                           extra=["cocktail-new"])
    assert (sc[0]["cells"], sc[0]["goal_met"]) == (1, 1)
    assert abs(sc[0]["gap_max"] + 0.1) < 1e-9
    assert table.rule_scores(rows, ["queue", "burst"], "delay_ms", names,
                             new) == []


def test_cells_rtx_total_sums_requests_and_reaches_rule_scores():
    # keepalive: rows are requests; a cell's retransmissions are their sum
    rows = []
    for pol, secs, rtx in (("cocktail-ssr", 2.0, [0, 1, 0]),
                           ("cocktail-pace", 1.0, [0, 0, 2])):
        rows += [{"kind": "web", "rtt_ms": 20, "policy": pol,
                  "seconds": secs, "ideal_s": 1.0, "retrans": r}
                 for r in rtx]
    kw = {"retrans": "retrans", "rtx_total": True}
    cs = table.cells(rows, ["kind"], "rtt_ms", **kw)
    assert cs[(("web",), 20, "cocktail-ssr")]["rtx"] == 1
    assert cs[(("web",), 20, "cocktail-pace")]["rtx"] == 2
    # by median both retransmit nothing, and pace would be the fair winner
    assert table.cells(rows, ["kind"], "rtt_ms",
                       retrans="retrans")[(("web",), 20,
                                           "cocktail-pace")]["rtx"] == 0
    names = ["cocktail-ssr", "cocktail-pace"]
    sc = table.rule_scores(rows, ["kind"], "rtt_ms", names,
                           {"pace": lambda g, v: "cocktail-pace"},
                           cell_kw=kw)
    assert (sc[0]["goal_met"], sc[0]["rtx_le_ssr"]) == (0, 0)
    summ = table.policy_summary(rows, ["kind"], "rtt_ms", names, cell_kw=kw)
    assert [d["rtx_sum"] for d in summ] == [1, 2]
    md = "".join(table.policy_summary_md("t", summ, "rtx"))
    assert "| cocktail-pace | 1 | 1 | 1.00 | 1.00 | 0 | 2 |" in md


def test_restart_queue_rule_uses_the_cells_pre_idle_queue():
    from bench.scenarios import restart
    rows = [{"policy": "cocktail-ssr", "queue": "droptail", "burst": 100,
             "delay_ms": d, "srtt_ms": srtt, "min_rtt_ms": 2 * d}
            for d, srtt in ((10, 50.0), (10, 60.0), (150, 305.0))]
    # kernel policies' warm-ups do not count
    rows.append({"policy": "bbr", "queue": "droptail", "burst": 100,
                 "delay_ms": 150, "srtt_ms": 900.0, "min_rtt_ms": 300.0})
    rule = restart.queue_rule(rows, "cocktail-pace", "cocktail-ssr")
    assert rule(("droptail", 100), 10) == "cocktail-ssr"     # 2.75x
    assert rule(("droptail", 100), 150) == "cocktail-pace"   # 1.02x
    assert rule(("red", 100), 10) == "cocktail-pace"          # no data


def test_keepalive_queue_rule_is_scored_where_srtt_was_recorded():
    from bench.lib import rules
    from bench.scenarios import keepalive
    names = ["cocktail-ssr", "cocktail-pace"]

    def req(pol, rtt, secs, srtt, think=1):
        return {"policy": pol, "kind": "web", "compete": 0, "size_kb": 64,
                "think_s": think, "rtt_ms": rtt, "server": "bench",
                "seconds": secs, "ideal_s": rtt / 1000.0, "retrans": 0,
                "srtt_ms": srtt, "min_rtt_ms": rtt}
    rows = []
    for i in range(3):
        # 20 ms: no queue before the idle (srtt = min RTT): pace, faster
        rows += [req("cocktail-ssr", 20, 0.040, 20.0),
                 req("cocktail-pace", 20, 0.025, 20.0)]
        # 100 ms: a queue (srtt 1.5 x): ssr, and ssr is the faster here
        rows += [req("cocktail-ssr", 100, 0.150, 150.0),
                 req("cocktail-pace", 100, 0.200, 150.0)]
    ratios = rules.queue_ratios(rows, keepalive._queue_key)
    assert ratios == {("web", 0, 64, 20): 1.0, ("web", 0, 64, 100): 1.5}
    md = "".join(keepalive._summaries_md(
        rows + [dict(r, policy="cocktail-auto") for r in rows[:2]], names))
    line = [ln for ln in md.splitlines() if ln.startswith("| " +
                                                          rules.QUEUE)]
    assert line and line[0].split(" | ")[1:3] == ["2", "2"], md
    # at 2.0 the 100 ms cell (1.5) reads as no queue: pace, the slower
    line = [ln for ln in md.splitlines() if ln.startswith(
        "| " + rules.queue_name(2.0))]
    assert line and line[0].split(" | ")[1:3] == ["2", "1"], md
    assert len([ln for ln in md.splitlines() if ln.startswith(
        "| ssr if srtt >")]) == len(rules.QUEUE_SWEEP)
    assert "| web | 100 | no | 64 | 1.50 |" in md
    # without srtt (older runs) the rule is not scored
    old = [{k: v for k, v in r.items() if k != "srtt_ms"} for r in rows]
    assert rules.QUEUE not in "".join(keepalive._summaries_md(
        old + [dict(r, policy="cocktail-auto") for r in old[:2]], names))


def test_keepalive_cwv_variants_get_their_own_section(tmp_path):
    from bench.scenarios import keepalive

    def req(pol, secs):
        return {"policy": pol, "kind": "web", "compete": 0, "size_kb": 64,
                "think_s": 1, "rtt_ms": 20, "server": "bench",
                "seconds": secs, "ideal_s": 0.02, "retrans": 1}
    rows = [req("cocktail-auto", 0.04), req("cocktail-keep", 0.022)]
    assert keepalive._cwv_md(rows) == []
    rows += [req("cocktail-keep-cwv0", 0.03), req("cocktail-auto-cwv2", 0.05)]
    md = "".join(keepalive._cwv_md(rows))
    assert "## Congestion window validation" in md
    assert "| cocktail-auto-cwv0 | cocktail-auto | cocktail-auto-cwv2 | " \
        "cocktail-keep-cwv0 | cocktail-keep |" not in md   # only those run
    assert "| web | 20 | no | 1 | ×2.00, 1 rtx | ×2.50, 1 rtx | ×1.50, " \
        "1 rtx | ×1.10, 1 rtx |" in md, md


def test_meta_earlier_keeps_the_history_of_appended_runs(tmp_path):
    import json
    from bench.lib import meta
    p = tmp_path / "meta.json"
    assert meta.earlier(p) == []
    p.write_text(json.dumps({"date": "a"}))
    first = meta.earlier(p)
    assert first == [{"date": "a"}]
    p.write_text(json.dumps({"date": "b", "earlier_runs": first}))
    assert meta.earlier(p) == [{"date": "a"}, {"date": "b"}]


def test_keepalive_scores_the_queue_policy_as_measured():
    from bench.lib import rules
    from bench.scenarios import keepalive

    def req(pol, secs):
        return {"policy": pol, "kind": "web", "compete": 0, "size_kb": 64,
                "think_s": 1, "rtt_ms": 20, "server": "bench",
                "seconds": secs, "ideal_s": 0.02, "retrans": 0}
    rows = [req("cocktail-ssr", 0.04), req("cocktail-pace", 0.025),
            req("cocktail-auto", 0.04), req("cocktail-queue", 0.026)]
    names = ["cocktail-ssr", "cocktail-pace", "cocktail-auto"]
    md = "".join(keepalive._summaries_md(rows, names))
    line = [ln for ln in md.splitlines()
            if ln.startswith("| " + rules.QUEUE_MEASURED)]
    # +4% from pace, the fastest: goal met in the one cell
    assert line and line[0].split(" | ")[1:5] == ["1", "1", "1", "+4%"], md
    assert rules.QUEUE_MEASURED not in "".join(
        keepalive._summaries_md(rows[:3], names))


def test_restart_queue_vs_auto_compares_the_cells_both_ran():
    from bench.scenarios import restart

    def run(pol, d, secs, rtx):
        return {"policy": pol, "profile": "chan2m", "queue": "red",
                "burst": 100, "delay_ms": d, "seconds": secs,
                "burst_retrans": rtx}
    rows = [run("cocktail-auto", 10, 2.0, 3), run("cocktail-queue", 10, 1.0, 1),
            run("cocktail-auto", 50, 1.0, 0), run("cocktail-queue", 50, 1.5, 2),
            run("cocktail-auto", 100, 1.0, 0)]     # queue did not run here
    md = "".join(restart._queue_vs_auto_md(rows))
    assert "| chan2m | 2 | 1.00 (0.50–1.50) | 1 | 3 | 3 |" in md, md
    assert restart._queue_vs_auto_md(rows[:1]) == []

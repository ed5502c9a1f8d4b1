"""The scorecard's classification (bench/lib/scorecard.py) on hand-made
cells and rows, and its report on the committed grids (host, no VM)."""
import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.lib import scorecard as sc
from bench.scenarios import scorecard as scen

D = sc.DEFAULT


def cell(default, **base):
    """{policy: {time, harm}}: DEFAULT and the baselines as (time, harm)."""
    c = {D: {"time": default[0], "harm": default[1]}}
    names = {"ssr": "linux-default", "nossai": "cubic-nossai", "bbr": "bbr"}
    for k, (t, h) in base.items():
        c[names[k]] = {"time": t, "harm": h}
    return c


def status(c):
    return sc.classify(c)["status"]


def test_a_faster_baseline_with_no_more_harm_dominates():
    v = sc.classify(cell((2.0, 5), ssr=(2.1, 5), nossai=(1.5, 5),
                         bbr=(1.0, 9)))
    assert v["status"] == "dominated"
    # bbr is faster but harms more: it does not dominate
    assert v["dominators"] == ["cubic-nossai"]
    assert v["fastest"] == "bbr" and v["ratio"] == 2.0


def test_a_domination_gets_a_p_value_over_the_repetitions():
    def reps(times, harm=0):
        return {"time": sorted(times)[len(times) // 2], "harm": harm,
                "rep_times": times}
    # every repetition of cubic-nossai more than 5% faster: p = 1/252
    c = {D: reps([2.0, 2.1, 2.2, 2.3, 2.4]),
         "linux-default": reps([3.0] * 5),
         "cubic-nossai": reps([1.0, 1.1, 1.2, 1.3, 1.4]),
         "bbr": reps([2.5] * 5)}
    v = sc.classify(c)
    assert v["dominators"] == ["cubic-nossai"]
    assert v["p"]["cubic-nossai"] == pytest.approx(1 / 252)
    assert sc.significant(v)
    # bimodal: the medians differ, the repetitions overlap
    c["cubic-nossai"] = reps([0.5, 0.6, 1.0, 4.0, 5.0])
    c[D] = reps([0.55, 2.0, 2.1, 2.2, 2.3])
    v = sc.classify(c)
    assert v["dominators"] == ["cubic-nossai"]
    assert v["p"]["cubic-nossai"] > sc.ALPHA and not sc.significant(v)
    # the test is of "more than 5% faster": within 5% is no evidence
    c["cubic-nossai"] = reps([t / 1.05 for t in c[D]["rep_times"]])
    assert sc.dominance_p(c, "cubic-nossai") > 0.5
    # no repetition times (a hand-made cell): no p, not significant
    v = sc.classify(cell((2.0, 5), ssr=(2.1, 5), nossai=(1.5, 5),
                         bbr=(1.0, 9)))
    assert v["p"] == {"cubic-nossai": None} and not sc.significant(v)
    assert not sc.significant(sc.classify(cell((1.0, 0), ssr=(1.0, 0),
                                                nossai=(1.0, 0),
                                                bbr=(1.0, 0))))


def test_faster_but_more_harm_is_neither():
    # every baseline faster by more than 5%, each with more harm
    assert status(cell((2.0, 5), ssr=(1.5, 6), nossai=(1.5, 7),
                       bbr=(1.0, 30))) == "neither"


def test_within_five_percent_with_least_harm_wins():
    assert status(cell((1.04, 3), ssr=(1.2, 3), nossai=(1.0, 4),
                       bbr=(1.1, 10))) == "won"
    # faster than every baseline
    assert status(cell((0.5, 0), ssr=(1.0, 0), nossai=(1.0, 0),
                       bbr=(1.0, 0))) == "won"


def test_within_five_percent_but_more_harm_than_one_baseline_is_neither():
    # harm 4 > linux-default's 3: not won; and no baseline is >5% faster
    assert status(cell((1.04, 4), ssr=(1.2, 3), nossai=(1.0, 4),
                       bbr=(1.1, 10))) == "neither"


def test_ties_at_the_boundaries():
    # exactly 5% slower than the fastest: within 5% (won), not "more
    # than 5% faster" (not dominated), equal harm counts as no more
    assert status(cell((1.05, 2), ssr=(1.0, 2), nossai=(1.0, 2),
                       bbr=(1.0, 2))) == "won"
    # a hair over 5% slower, equal harm: dominated by all three
    v = sc.classify(cell((1.0501, 2), ssr=(1.0, 2), nossai=(1.0, 2),
                         bbr=(1.0, 2)))
    assert v["status"] == "dominated" and len(v["dominators"]) == 3
    # equal times, equal harm: won
    assert status(cell((1.0, 0), ssr=(1.0, 0), nossai=(1.0, 0),
                       bbr=(1.0, 0))) == "won"


def test_dominated_and_won_exclude_each_other():
    import itertools
    times, harms = (0.9, 1.0, 1.04, 1.05, 1.06, 2.0), (0, 1, 2)
    for td, hd, t1, h1, t2, h2 in itertools.product(times, harms, times,
                                                    harms, times, harms):
        v = sc.classify(cell((td, hd), ssr=(t1, h1), nossai=(t2, h2),
                             bbr=(1.0, 1)))
        assert v["status"] in ("dominated", "won", "neither")
        if v["status"] == "won":
            assert not v["dominators"]


def test_missing_harm_or_policy_is_incomplete_unless_dominated():
    # the default's harm unknown: nothing can be said
    assert status(cell((1.0, None), ssr=(2.0, 0), nossai=(2.0, 0),
                       bbr=(2.0, 0))) == "incomplete"
    # a baseline's harm unknown: the default cannot be said to have won
    assert status(cell((1.0, 0), ssr=(2.0, None), nossai=(1.0, 0),
                       bbr=(1.0, 0))) == "incomplete"
    # a baseline missing, another one dominates: dominated all the same
    assert status(cell((2.0, 3), ssr=(1.0, 3), bbr=(3.0, 0))) == \
        "dominated"
    # no default at all
    assert status({"bbr": {"time": 1.0, "harm": 0}}) == "incomplete"


def test_tally_counts_every_status():
    vs = [{"status": s} for s in ("won", "won", "dominated", "neither",
                                  "incomplete")]
    assert sc.tally(vs) == {"cells": 5, "won": 2, "dominated": 1,
                            "neither": 1, "incomplete": 1}


def test_harm_adds_what_the_cross_traffic_lost():
    # UDP: datagrams dropped
    assert sc.row_harm({"burst_retrans": 4, "cross_udp_dropped": 6},
                       "burst_retrans", "udp") == (10.0, True)
    # an old row without the column: retransmissions only, and it says so
    assert sc.row_harm({"burst_retrans": 4}, "burst_retrans", "udp") == \
        (4.0, False)
    # TCP: 8000 kbit/s before, 4000 during a 2 s burst: 1 MB lost, in
    # segments of 1000 bytes
    r = {"burst_retrans": 1, "seconds": 2.0, "mss": 1000,
         "cross_tcp_kbit_before": 8000, "cross_tcp_kbit_burst": 4000}
    assert sc.row_harm(r, "burst_retrans", "tcp") == (1001.0, True)
    # the bulk flow gained during the burst: no loss
    r["cross_tcp_kbit_burst"] = 9000
    assert sc.row_harm(r, "burst_retrans", "tcp") == (1.0, True)
    assert sc.row_harm({"retrans": 2}, "retrans", "none") == (2.0, True)
    assert sc.row_harm({"retrans": ""}, "retrans", "none") == (None, False)
    with pytest.raises(ValueError):
        sc.cross_harm({}, "icmp")


def test_cell_values_median_time_and_mean_harm_per_repetition():
    # restart-like: one row a repetition
    rows = [{"rep": i, "seconds": s, "burst_retrans": h}
            for i, (s, h) in enumerate(((1.0, 0), (3.0, 0), (2.0, 9)))]
    v = sc.cell_values(rows, "burst_retrans", lambda r: "none")
    assert (v["time"], v["harm"], v["reps"]) == (2.0, 3.0, 3)
    assert sc.cell_values(rows, "burst_retrans", lambda r: "none",
                          harm_agg="median")["harm"] == 0
    # keepalive-like: a repetition's requests sum, then the mean over
    # repetitions; time is the median over every request
    rows = [{"rep": rep, "seconds": 0.1 * (i + 1), "retrans": rep}
            for rep in (0, 1) for i in range(3)]
    v = sc.cell_values(rows, "retrans", lambda r: "none")
    assert v["harm"] == (0 + 3) / 2 and v["time"] == pytest.approx(0.2)
    # each repetition's median time, for the test over repetitions
    assert v["rep_times"] == pytest.approx([0.2, 0.2])
    # a failed run (no time) is neither a time nor a harm
    rows.append({"rep": 2, "seconds": None, "retrans": 99})
    assert sc.cell_values(rows, "retrans", lambda r: "none")["harm"] == 1.5


def test_default_policy_is_cocktail_default_when_present():
    assert sc.default_policy([{"policy": "cocktail-auto"}]) == \
        "cocktail-auto"
    assert sc.default_policy([{"policy": "cocktail-auto"},
                              {"policy": "cocktail-default"}]) == \
        "cocktail-default"


def test_old_rows_read_as_the_cross_traffic_they_ran_with():
    assert scen.restart_cross({}) == "udp"
    assert scen.restart_cross({"cross": "tcp"}) == "tcp"
    assert scen.keepalive_cross({"compete": 1}) == "tcp"
    assert scen.keepalive_cross({"compete": 0}) == "none"
    assert scen.keepalive_cross({"compete": 0, "cross": "udp"}) == "udp"


# the full grids the issue's figures were computed from: they predate
# cocktail-default (restart=auto was the default they ran)
ISSUE_GRIDS = {"restart": ["bench/results/restart"],
               "keepalive": ["bench/results/keepalive"]}


def test_committed_grids_give_the_issue_counts():
    """The full grids committed before cocktail-default: the scorecard
    scores cocktail-auto and finds 51 of 127 cells dominated."""
    grids = scen.load(ISSUE_GRIDS)
    scored = scen.score(grids)
    got = {g.name: sc.tally(v for _, _, v in scored[g.name]) for g in grids}
    assert {g.default for g in grids} == {"cocktail-auto"}
    assert {k: (t["dominated"], t["cells"]) for k, t in got.items()} == {
        "chan2m": (19, 64), "modern50m": (6, 8), "keepalive": (26, 55)}
    assert sum(t["won"] for t in got.values()) == 21


def test_report_writes_table_csv_and_plot(tmp_path):
    class Ctx:
        only, outdir, notes, extra = ISSUE_GRIDS, tmp_path, [], {}

        def log(self, msg):
            pass
    ctx = Ctx()
    scen.run(ctx)
    scen.report(ctx, [])
    md = (tmp_path / "table.md").read_text()
    # 51 dominated by medians, 7 of them with p <= 0.05
    assert "| **all** | | 127 | **51** | 7 | **21** |" in md
    assert "(p 0.050)" in md      # 3 repetitions each: p >= 1/20
    assert "`cocktail-auto`" in md
    assert (tmp_path / "pareto.png").read_bytes()[:4] == b"\x89PNG"
    rows = list(csv.DictReader(open(tmp_path / "cells.csv")))
    assert any(r["status"] == "dominated" for r in rows)
    # a dominating baseline's row carries its p, the default's none
    assert any(r["p"] and float(r["p"]) <= sc.ALPHA for r in rows
               if r["role"] == "baseline")
    assert all(r["p"] == "" for r in rows if r["role"] == "default")


def test_cocktail_default_runs_the_declared_defaults(tmp_path):
    """cocktail-default is one of the grids' policies; its parameters are
    the module's declared defaults ("(default X)" / "(RANGE, default X)"
    in the parameter descriptions, read from the .ko's modinfo)."""
    from bench.lib import policies
    d = policies.BY_NAME["cocktail-default"]
    assert d in policies.ALL and d.defaults and d.cocktail == {}
    assert "tcp_cocktail." not in policies.profile_text(d)
    ko = tmp_path / "m.ko"
    ko.write_bytes(
        b"\x7fELF junk\0parm=restart:after idle: ssr | auto (default auto)"
        b"\0parmtype=restart:charp\0parm=auto_rtt_us:threshold "
        b"(1..10000000, default 100000)\0parm=stats:read-only counters\0"
        b"parm=iw:initial window (default 10); a route's initcwnd wins\0")
    assert policies.declared_defaults(ko) == {
        "restart": "auto", "auto_rtt_us": "100000", "iw": "10"}


def test_every_writable_parameter_declares_its_default():
    """cocktail-default refuses to run when a writable parameter of the
    module declares no default in its description: every 0644 parameter
    of kmod/tcp_cocktail.c says "(..., default X)" in a form
    declared_default() reads (the VM suite checks X against the value the
    loaded module shows)."""
    import re
    from bench.lib import policies
    src = (Path(__file__).resolve().parents[2] / "kmod" /
           "tcp_cocktail.c").read_text()
    descs = dict(re.findall(r'MODULE_PARM_DESC\((\w+),\s*"((?:[^"\\]|\\.)*)"\)',
                            src))
    modes = dict(re.findall(r"module_param_cb\((\w+),[^;]*?(0\d{3})\);",
                            src, re.S))
    writable = sorted(n for n, m in modes.items() if m == "0644")
    assert writable and sorted(descs) == sorted(modes)
    got = {n: policies.declared_default(descs[n]) for n in writable}
    assert None not in got.values(), got
    assert got["nvp_s"] == "300" and got["restart"] == "measure", got
    # what tripped it once: a note after the default inside the brackets
    assert policies.declared_default("x (1..9, default 3, RFC 1)") is None
    assert policies.declared_default("x (RFC 1) (1..9, default 3)") == "3"


def test_restart_grid_has_both_cross_kinds_and_filters_them():
    from bench.scenarios import restart

    class Ctx:
        quick, only = True, {}
    cells = list(restart._grid(Ctx))
    assert all(c[4] == ["udp", "tcp"] for c in cells)
    Ctx.only = {"cross": ["tcp"], "delay_ms": ["20"]}
    assert list(restart._grid(Ctx)) == [("chan2m", "droptail", 20, [100],
                                         ["tcp"])]
    assert "cross" in restart.RESUME_KEY
    # old rows (no cross column) are UDP rows; tcp rows get a profile of
    # their own in the restart report
    rows = restart.by_cross([{"profile": "chan2m"},
                             {"profile": "chan2m", "cross": "udp"},
                             {"profile": "chan2m", "cross": "tcp"}])
    assert [r["profile"] for r in rows] == ["chan2m", "chan2m",
                                            "chan2m+tcp"]
    p = restart.PROFILES["chan2m"]
    # tcp: the burst's fair share is half the link
    assert restart.ideal_s(p, 0, 100, 1460, "tcp") < \
        restart.ideal_s(p, 0, 100, 1460, "udp")


def test_fleet_jain_cells_and_summary():
    from bench.scenarios import fleet
    assert fleet.jain([1, 1, 1, 1]) == 1.0
    assert fleet.jain([1, 0, 0, 0]) == 0.25
    assert fleet.jain([]) is None and fleet.jain([0, 0]) is None
    assert list(fleet.cells(fleet.QUICK)) == [(100, "sync", 64),
                                              (100, "random", 64)]
    assert list(fleet.cells(fleet.FULL, {"mode": ["random"],
                                         "rtt_ms": ["20"]})) == \
        [(20, "random", 64)]
    assert fleet.QUICK["conns"] >= 20 and fleet.QUICK["servers"] > 1
    # servers=N: one host per connection at most, one number, 1..32
    assert fleet.grid() == fleet.FULL and fleet.grid() is not fleet.FULL
    assert fleet.grid(True, {"servers": ["20"]})["servers"] == 20
    assert fleet.grid(False, {"servers": ["24"]})["servers"] == 24
    assert fleet.FULL["servers"] == 4
    for bad in (["0"], ["25"], ["x"], ["4", "8"], ["-1"], [""]):
        with pytest.raises(SystemExit, match="servers="):
            fleet.grid(False, {"servers": bad})
    with pytest.raises(SystemExit, match="servers="):
        fleet.grid(True, {"servers": ["21"]})
    assert fleet.spread([{"conns": 24, "servers": 24}]) == \
        "24 connections over 24 server hosts"
    rows = []
    for conn, lat in ((0, 0.1), (1, 0.1), (2, 0.4)):
        for req in range(2):
            rows.append({"rtt_ms": 100, "mode": "sync", "size_kb": 64,
                         "policy": "bbr", "rep": 0, "conn": conn, "req": req,
                         "seconds": lat, "retrans": conn, "cell_drops": 7})
    rows.append({"rtt_ms": 100, "mode": "sync", "size_kb": 64,
                 "policy": "bbr", "rep": 0, "error": "x"})
    s = fleet.summary(rows)[(100, "sync", 64)]["bbr"]
    assert (s["p50"], s["rtx"], s["drops"], s["n"], s["conns"]) == \
        (0.1, 6, 7, 6, 3)
    # goodputs 1 : 1 : 1/4
    assert s["jain"] == pytest.approx(2.25 ** 2 / (3 * 2.0625))


def test_goals_quiet_against_the_ideal_busy_against_linux_default():
    def c(d, ideal=1.0, ssr=(1.0, 0), nossai=(1.0, 0), bbr=(1.0, 0)):
        x = cell(d, ssr=ssr, nossai=nossai, bbr=bbr)
        x[D]["ideal"] = ideal
        return x
    cells = [
        ("none", c((1.10, 0))),                 # quiet, met (boundary)
        ("none", c((1.11, 0))),                 # quiet, too slow
        ("none", c((1.0, 1))),                  # quiet, more harm
        ("udp", c((0.9, 5), ssr=(1.0, 5))),     # busy, met
        ("tcp", c((0.9, 6), ssr=(1.0, 5))),     # busy, more harm
        ("tcp", c((1.0, 0), ssr=(1.0, 5))),     # busy, not faster
        ("udp", c((1.2, 7), ssr=(1.0, 5))),     # busy, slower and more harm
        ("udp", {D: {"time": 1.0, "harm": None}}),   # no harm: not counted
    ]
    assert sc.goals(cells) == {"quiet": 3, "quiet_met": 1, "busy": 4,
                               "busy_met": 1, "busy_slower_less_harm": 1,
                               "busy_faster_more_harm": 1,
                               "busy_slower_more_harm": 1}


def run_scorecard(tmp_path, *args, ok=True):
    """bench/run scorecard ARGS on the host, as bench/run runs it; fails
    the test on a non-zero exit (OK=False: on a zero one); the process."""
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, MPLCONFIGDIR=str(tmp_path / "mpl"),
               PYTHONPATH=os.pathsep.join([str(repo / "lab"),
                                           str(repo / "scripts")]))
    p = subprocess.run([sys.executable, "-m", "bench.lib.runner",
                        "scorecard"] + list(args), cwd=repo, text=True,
                       capture_output=True, timeout=300, env=env)
    assert (p.returncode == 0) == ok, p.stdout[-3000:] + p.stderr[-3000:]
    return p


def test_scorecard_refuses_a_named_source_without_runs(tmp_path):
    """A result directory named with --only that holds no runs.csv is an
    error naming it, not a grid silently left out."""
    p = run_scorecard(tmp_path, "--only", "restart=%s,keepalive=none" %
                      (tmp_path / "nothing"), "--out", str(tmp_path / "sc"),
                      ok=False)
    assert "restart=%s: no runs.csv there" % (tmp_path / "nothing") in \
        p.stderr, p.stderr
    assert not (tmp_path / "sc" / "README.md").exists()


def test_scorecard_scores_the_committed_grids(tmp_path):
    """bench/run scorecard (a host scenario: it reads the committed runs
    of the current default) writes a row for every cell of the full
    grids, run or not, its counts and the Pareto plot, and says where
    each grid's cells came from."""
    out = tmp_path / "scorecard"
    run_scorecard(tmp_path, "--quick", "--reps", "1", "--out", str(out))
    with open(out / "cells.csv", newline="") as f:
        cells = list(csv.DictReader(f))
    full = {"chan2m": 128, "modern50m": 16, "keepalive": 55}
    md = (out / "table.md").read_text()
    for g, n in full.items():
        assert "| %s | cocktail-default | %d |" % (g, n) in md, md[:3000]
    assert {c["policy"] for c in cells if c["role"] == "default"} == \
        {"cocktail-default"}
    assert "restart-modern50m-cubic/runs.csv` (16 cells" in md
    assert "dominated" in md and "\n|" in md
    assert (out / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "bench/run scorecard" in (out / "README.md").read_text()


def _rows(d, policy, seconds, **cell):
    base = dict(profile="p", queue="droptail", delay_ms="10", burst="100",
                cross="udp", burst_retrans="0", cross_udp_dropped="0")
    base.update(cell)
    return [dict(base, policy=policy, seconds=str(seconds), rep=str(i))
            for i in range(2)]


def _write(d, rows):
    d.mkdir()
    with open(d / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_a_cell_is_read_from_the_last_run_of_the_default(tmp_path):
    """Several directories of one grid: each cell's policies come from
    one run, the last listed that ran the default there; a cell only an
    earlier directory ran with the default is read from that one, and
    one no directory ran with it is incomplete."""
    old, new = tmp_path / "old", tmp_path / "new"
    rows = []
    for d in ("10", "20", "30"):
        for p, t in (("cocktail-default", 2.0), ("linux-default", 1.0),
                     ("cubic-nossai", 1.0), ("bbr", 1.0)):
            rows += _rows(old, p, t, delay_ms=d)
    _write(old, rows)
    rows = []
    for p, t in (("cocktail-default", 1.0), ("linux-default", 2.0),
                 ("cubic-nossai", 2.0), ("bbr", 2.0)):
        rows += _rows(new, p, t, delay_ms="10")
    # the new run has 30 ms without the default: the old run's cell stays
    rows += _rows(new, "bbr", 9.0, delay_ms="30")
    _write(new, rows)
    grids = scen.load({"restart": [str(old), str(new)],
                       "keepalive": ["none"]})
    assert [g.name for g in grids] == ["p"]
    g = grids[0]
    v = {k[1]: sc.classify(c)["status"] for k, c in g.cells().items()}
    assert v == {10: "won", 20: "dominated", 30: "dominated"}
    src = {k[1]: d.name for k, (d, _) in g.cell_rows().items()}
    assert src == {10: "new", 20: "old", 30: "old"}
    assert {d.name: n for d, n in g.cell_sources().items()} == \
        {"old": 2, "new": 1}
    # the full grid's cells no directory ran are incomplete, not absent
    g.universe = [("droptail", 10, 100, "udp"),
                  ("droptail", 40, 100, "udp")]
    cs = g.cells()
    assert ("droptail", 40, 100, "udp") in cs
    assert sc.classify(cs[("droptail", 40, 100, "udp")])["status"] == \
        "incomplete"
    assert "1 of the full grid's 2 cells not run" in scen._sources_md([g])
    assert scen.missing_cells(g) == [("droptail", 40, 100, "udp")]


def test_missing_cells_in_words_when_they_are_a_whole_grid():
    key = ("queue", "burst", "cross")
    whole = [(q, b, c) for q in ("droptail", "red") for b in ("200", "500")
             for c in ("udp", "tcp")]
    assert scen.describe_cells(key, whole) == (
        "8 cells: queue=droptail/red, burst=200/500, cross=udp/tcp")
    assert scen.describe_cells(key, whole[:3]) == "3 cells"
    assert scen.describe_cells(key, []) == "none"


def test_full_grids_name_their_cells_as_the_rows_do():
    """The full grids' cells, from the scenarios' definitions, have the
    keys of the rows table.read_csv() reads: every cell a committed run
    of the current default holds is one of them."""
    full = scen.restart_universe()
    assert len(full["chan2m"]) == 128 and len(full["modern50m"]) == 16
    assert ("red", 300, 1000, "tcp") in full["chan2m"]
    ka = scen.keepalive_universe()
    assert len(ka) == 55 and ("grpc", 200, 0, 20, 1, "none") in ka
    assert ("web", 20, 1, 256, 3, "tcp") in ka
    for g in scen.load():
        want = set(g.universe)
        assert want and set(g.cell_rows()) <= want, g.name


def test_candidate_scores_in_the_defaults_place_and_none_leaves_a_grid_out():
    """--only candidate=POLICY scores that policy of the rows as the
    default; restart=none reads the keepalive grid alone; a candidate the
    rows lack is refused in one sentence."""
    grids = scen.load({"restart": ["none"],
                       "keepalive": ISSUE_GRIDS["keepalive"],
                       "candidate": ["cocktail-auto"]})
    assert [g.name for g in grids] == ["keepalive"]
    assert grids[0].default == "cocktail-auto"
    assert any("cocktail-auto" in c for c in grids[0].cells().values())
    with pytest.raises(SystemExit, match="no rows of candidate nope in"):
        scen.load({"restart": ["none"], "candidate": ["nope"],
                   "keepalive": ISSUE_GRIDS["keepalive"]})
    assert {g.name for g in scen.load({})} == {"chan2m", "modern50m",
                                                "keepalive"}


def test_baseline_scores_against_policies_of_the_rows():
    """--only baseline=POLICY scores the default against that policy of
    the rows alone: on the committed run of two copies of the same
    restart, one copy against the other is dominated by medians in some
    cells and in none beyond chance; a baseline the rows lack, the
    default itself, or an unknown --only key is refused in one sentence."""
    repeat = ["bench/results/restart-modern50m-repeat"]
    grids = scen.load({"restart": repeat, "keepalive": ["none"],
                       "candidate": ["cocktail-measure-noburst"],
                       "baseline": ["cocktail-default"]})
    assert [g.name for g in grids] == ["modern50m"]
    g = grids[0]
    assert g.baselines == ("cocktail-default",)
    scored = scen.score(grids)["modern50m"]
    assert len(scored) == 16
    for _, c, v in scored:
        assert set(c) == {"cocktail-default", "cocktail-measure-noburst"}
        assert v["dominators"] in ([], ["cocktail-default"])
    t = sc.tally(v for _, _, v in scored)
    assert 0 < t["dominated"] < 16
    assert not any(sc.significant(v) for _, _, v in scored)
    md, total = scen._counts_md(grids, scen.score(grids))
    assert total["dominated"] == t["dominated"]
    for bad in ({"baseline": ["nope"]},
                {"baseline": ["cocktail-measure-noburst"]}):
        with pytest.raises(SystemExit, match="scorecard: baseline"):
            scen.load(dict({"restart": repeat, "keepalive": ["none"],
                            "candidate": ["cocktail-measure-noburst"]},
                           **bad))
    with pytest.raises(SystemExit, match="unknown --only key basline"):
        scen.load({"basline": ["bbr"]})


def test_report_only_reads_the_sources_of_the_earlier_run(tmp_path):
    """bench/run scorecard --report-only on a directory an earlier
    `--only restart=none,...` run wrote scores what that run read (its
    meta.json's --only), not the committed grids."""
    out = tmp_path / "scorecard"

    def run(*extra):
        run_scorecard(tmp_path, "--out", str(out), *extra)
        with open(out / "cells.csv", newline="") as f:
            return {c["grid"] for c in csv.DictReader(f)}
    assert run("--only", "restart=none,keepalive=bench/results/keepalive,"
               "candidate=cocktail-auto") == {"keepalive"}
    assert run("--report-only") == {"keepalive"}
    assert "restart=none" in (out / "README.md").read_text()

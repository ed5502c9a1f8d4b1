"""Host tests of the ooo scenario's statistics and table generation
(bench/scenarios/ooo.py): a fixed runs.csv gives the expected markdown,
oooprobed's summary text parses, the statistics recomputed from JSON
events follow the daemon's definitions, a disagreement is reported, and
the hold-time CDF is a PNG."""
import json
from pathlib import Path

import pytest

from bench.lib import published, table
from bench.scenarios import ooo

DATA = Path(__file__).resolve().parent / "data" / "bench"

SUMMARY = """oooprobed: listening to tcp_oooprobe events
== oooprobed final summary after 16 s
flows: 150
flows with reordering: 23 (153.3 per thousand)
data packets: 6224
reordered packets: 1065 (171.1 per thousand)
mean data packets per flow: 167.3 with reordering, 18.7 without
hold time (1065 segments): median 33.284 ms, p80 51.044 ms, p90 54.887 ms, \
p97 60.855 ms, max 71.066 ms
hold time histogram (upper bound: segments):
  <= 100 us           5
events lost: 0 (sequence gaps), socket overruns (ENOBUFS): 2
kernel: events sent 1215, dropped 3, flows tracked 0, flow overflows 0, \
range overflows 0, ranges recorded 1065 released 1065
"""


def test_markdown_matches_expected():
    rows = table.read_csv(DATA / "ooo_runs.csv")
    md = ooo.markdown(rows, ["a note"])
    assert md == (DATA / "ooo_table.md").read_text()


def test_markdown_shows_failures_settings_and_published():
    md = (DATA / "ooo_table.md").read_text()
    assert "run rtt200-loss3 rep 1 failed: RuntimeError" in md
    assert "`tc qdisc add dev to-c0 root handle 1: netem delay 25000us " \
        "loss 1% limit 100000`" in md
    assert "| hold time median, ms | 29.5 (28.5–30.5) | 250 | 293 |" in md
    assert "| hold time max, ms | 115 (110–120) | 3200 | 150000 |" in md
    assert "2 of 3 runs agree" in md


def test_parse_summary():
    s = ooo.parse_summary(SUMMARY)
    assert s == {"flows": 150, "flows_reordered": 23,
                 "flows_reordered_permille": 153.3, "data_pkts": 6224,
                 "reordered_pkts": 1065, "reordered_pkts_permille": 171.1,
                 "mean_pkts_reordered_flow": 167.3,
                 "mean_pkts_clean_flow": 18.7, "segments": 1065,
                 "hold_median_ms": 33.284, "hold_p80_ms": 51.044,
                 "hold_p90_ms": 54.887, "hold_p97_ms": 60.855,
                 "hold_max_ms": 71.066, "daemon_gaps": 0,
                 "daemon_enobufs": 2, "kernel_dropped": 3}


def test_parse_summary_without_holds_and_refuses_garbage():
    s = ooo.parse_summary("== oooprobed final summary after 1 s\nflows: 0\n"
                          "hold time: no out-of-order segment released "
                          "yet\n")
    assert s == {"flows": 0}
    with pytest.raises(ValueError):
        ooo.parse_summary("flows: 3\n")
    with pytest.raises(ValueError):
        ooo.parse_summary("== oooprobed final summary after 1 s\n")


def _events():
    ev = []
    for data, ooo_segs in ((10, 0), (20, 0), (300, 4)):
        ev.append({"type": "flow", "data_segs_in": data,
                   "ooo_segs": ooo_segs})
    for hold_ms, ln in ((5, 1448), (50, 1448), (20, 1000), (80, 1448)):
        ev.append({"type": "segment", "hold_ns": hold_ms * 1000000,
                   "len": ln})
    return ev


def test_from_events_follows_the_daemon():
    s, holds, lens = ooo.from_events(_events())
    assert holds == [5, 20, 50, 80] and sorted(lens) == [1000, 1448,
                                                         1448, 1448]
    assert s["flows"] == 3 and s["flows_reordered"] == 1
    assert s["flows_reordered_permille"] == pytest.approx(333.333, 1e-4)
    assert s["data_pkts"] == 330 and s["reordered_pkts"] == 4
    assert s["mean_pkts_reordered_flow"] == 300
    assert s["mean_pkts_clean_flow"] == 15
    assert s["mean_ooo_reordered_flow"] == 4
    assert s["mean_held_len"] == pytest.approx(1336)
    # nearest rank, as daemon/stats.c: 50% of 4 -> 2nd, 80% -> 4th
    assert s["hold_median_ms"] == 20 and s["hold_p80_ms"] == 80
    assert s["hold_max_ms"] == 80


def test_nearest_rank():
    v = list(range(1, 101))
    assert ooo.nearest_rank(v, 50) == 50
    assert ooo.nearest_rank(v, 97) == 97
    assert ooo.nearest_rank(v, 100) == 100
    assert ooo.nearest_rank([7], 80) == 7
    assert ooo.nearest_rank([], 50) is None


def test_disagreements():
    s, _, _ = ooo.from_events(_events())
    printed = {"flows": 3, "flows_reordered_permille": 333.3,
               "hold_median_ms": 20.0, "mean_pkts_clean_flow": 15.0}
    assert ooo.disagreements(printed, s) == []
    printed["flows"] = 4
    printed["hold_median_ms"] = 20.002
    bad = ooo.disagreements(printed, s)
    assert len(bad) == 2 and bad[0].startswith("flows:")


def test_cdf_plot_is_png(tmp_path):
    holds = table.read_csv(DATA / "ooo_holds.csv")
    p = ooo.cdf_plot(tmp_path / "cdf.png", holds,
                     published.load("ooo2010_stats.csv"))
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    empty = ooo.cdf_plot(tmp_path / "e.png", [], [])
    assert empty.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_only_uses_meta_notes(tmp_path):
    """report() (as --report-only runs it) writes table.md with the notes
    meta.json kept, and the CDF."""
    import shutil
    shutil.copy(DATA / "ooo_holds.csv", tmp_path / "holds.csv")
    (tmp_path / "meta.json").write_text(json.dumps({"notes": ["a note"]}))

    class Ctx:
        outdir = tmp_path
        notes = []
    ooo.report(Ctx, table.read_csv(DATA / "ooo_runs.csv"))
    assert (tmp_path / "table.md").read_text() == \
        (DATA / "ooo_table.md").read_text()
    assert (tmp_path / "hold-cdf.png").read_bytes()[:4] == b"\x89PNG"

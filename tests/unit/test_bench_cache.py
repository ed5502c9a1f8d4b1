"""Host tests of the cache scenario's pure parts: the objects' sizes, the
study's bins and statistics, the report's verdicts from rows, the
configurations written for squid and what is read from its cache
manager."""
import math

import pytest

from bench.lib import squid
from bench.scenarios import cache


def test_sizes_are_fixed_and_a_web_mix():
    s = cache.sizes()
    assert s == cache.sizes() and len(s) == cache.N_URLS == 93
    assert min(s) >= 200 and max(s) <= 100000
    med = sorted(s)[len(s) // 2]
    assert 2000 <= med <= 8000          # median of a few KB
    assert max(s) >= 5 * med            # and a heavy tail


def test_bins_and_summary():
    ts = [0.3, 0.6, 0.7, 0.8, 1.1, 6.0, 9.0, 0.74999]
    b = cache.bins(ts)
    assert len(b) == len(cache.EDGES) - 1
    assert b[0] == pytest.approx(100 / 8)           # < 0.5
    assert b[1] == pytest.approx(300 / 8)           # 0.5-0.75
    assert b[-1] == pytest.approx(200 / 8)          # > 5
    assert sum(b) == pytest.approx(100)
    s = cache.summary(ts)
    short = [t for t in ts if t < 5]
    assert s["trunc_mean"] == pytest.approx(sum(short) / len(short))
    assert s["trunc_pct"] == pytest.approx(75)
    assert s["tail_mean"] == pytest.approx(7.5) and s["tail_n"] == 2
    assert cache.median_bin(ts) == (0.75, 1)
    assert cache.median_bin([7.0]) == (5, math.inf)


def rows_for(variant, times, pass_s, retrans=0, conns=1, icp=93,
             rep=0):
    return [dict(variant=variant, rep=rep, req=i, seconds=t, error="",
                 pass_s=pass_s, pass_retrans=retrans, parent_conns=conns,
                 icp_sent=icp, icp_acked=icp, icp_rtt_ms=280)
            for i, t in enumerate(times)]


class Ctx:
    def __init__(self, outdir):
        self.outdir = outdir


def test_report_verdicts(tmp_path):
    """Persistent saves one RTT, ICP costs one: both confirmed; a
    persistent pass longer in total while its median is lower: the
    study's 'totals mislead' confirmed."""
    rtt = cache.RTT_MS / 1000
    p = [0.7] * 90 + [30.0] * 3
    n = [0.7 + rtt] * 92 + [6.0]
    rows = rows_for("persistent-icp-linux-default", p, sum(p))
    rows += rows_for("nonpersistent-icp-linux-default", n, sum(n),
                     conns=93)
    rows += rows_for("persistent-noicp-linux-default",
                     [0.7 - rtt] * 93, 40.0, icp=0)
    rows += rows_for("nonpersistent-noicp-linux-default", [0.7] * 93,
                     70.0, conns=93, icp=0)
    rows.append(dict(variant="persistent-icp-linux-default", rep=1,
                     error="TimeoutError: x"))
    cache.report(Ctx(tmp_path), rows)
    md = (tmp_path / "table.md").read_text()
    assert md.startswith("# cache")
    assert "| published, persistent |  | 29% | 30% | 10% |" in md
    assert md.count("**Confirmed.**") == 3, md
    assert "Confirmed: totals and medians disagree" in md
    assert "1 requests failed" in md and "TimeoutError: x" in md
    assert (tmp_path / "cache.png").read_bytes()[:4] == b"\x89PNG"


def test_report_says_not_confirmed(tmp_path):
    rows = rows_for("persistent-icp-linux-default", [1.0] * 10, 10.0)
    rows += rows_for("nonpersistent-icp-linux-default", [1.0] * 10, 10.0)
    cache.report(Ctx(tmp_path), rows)
    md = (tmp_path / "table.md").read_text()
    assert "Not confirmed: 0.00 RTT" in md
    assert "Not seen here" in md


def test_chosen_refuses_unknown_variants_and_keys():
    class C:
        quick, only = False, {"variant": ["nope"]}
    with pytest.raises(SystemExit, match="unknown variant nope"):
        cache.chosen(C)
    C.only = {"rtt": ["1"]}
    with pytest.raises(SystemExit, match="unknown --only key rtt"):
        cache.chosen(C)
    C.only = {"variant": ["persistent-noicp-linux-default"]}
    assert cache.chosen(C) == [(True, False, "linux-default")]


def test_squid_configs(tmp_path):
    """The child asks its one parent over ICP only when told to, caches
    nothing and never goes direct; both sides' persistence follows the
    variant. (Needs Debian's squid package for its user: dev/deps.)"""
    assert squid.available()[0], squid.available()[1]
    c = squid.Squid("ns", "child", "127.0.0.1", 3128, False,
                    parent="198.18.16.2", parent_port=3128, icp_port=3130,
                    icp=True)
    q = squid.Squid("ns", "child", "127.0.0.1", 3128, True,
                    parent="198.18.16.2", parent_port=3128, icp_port=3130,
                    icp=False)
    p = squid.Squid("ns", "parent", "198.18.16.2", 3128, False,
                    icp_port=3130)
    try:
        ct, qt, pt = (s.conf.read_text() for s in (c, q, p))
        assert "cache_peer 198.18.16.2 parent 3128 3130 no-digest \n" in ct
        assert "icp_port 3130\n" in ct and "never_direct allow all" in ct
        assert "cache deny all" in ct
        assert "server_persistent_connections off" in ct
        assert "no-query" in qt and "icp_port 0\n" in qt
        assert "server_persistent_connections on" in qt
        assert "client_persistent_connections off" in pt
        assert "icp_port 3130\n" in pt
        with pytest.raises(ValueError):
            squid.Squid("ns", "sibling", "127.0.0.1", 3128, True)
    finally:
        for s in (c, q, p):
            s.stop(None)


def test_peer_stats():
    text = ("Parent     : 198.18.16.2\nStatus     : Up\nFETCHES    : 93\n"
            "AVG RTT    : 281 msec\nPINGS SENT :       93\n"
            "PINGS ACKED:       92  99%\n")
    assert squid.peer_stats(text) == {"pings_sent": 93, "pings_acked": 92,
                                      "icp_rtt_ms": 281}
    assert squid.peer_stats("") == {"pings_sent": None, "pings_acked": None,
                                    "icp_rtt_ms": None}


def test_window_section_and_verdict(tmp_path):
    """The objects of 16 KB and more give each variant's link share; the
    study's window at a quarter of the unclamped share is confirmed."""
    rtt = cache.RTT_MS / 1000
    rate = 1.168e6 / 8

    def rows(variant, share, win):
        out = []
        for i, n in enumerate((2000, 20000, 40000)):
            t = 2 * rtt + n / rate / share
            out.append(dict(variant=variant, rep=0, req=i, seconds=t,
                            bytes=n, icp=1, error="", pass_s=10,
                            child_max_win=win))
        return out
    ref = rows("persistent-icp-linux-default", 0.8, 60000)
    win = rows("persistent-icp-linux-default-win8760", 0.2, 8760)
    assert cache.utilisation(win[1]) == pytest.approx(0.2)
    md = "".join(cache._window_md(ref + win, cache._passes(ref + win)))
    assert "| persistent-icp-linux-default-win8760 | 8760 (8760-8760) | 2 |" \
        in md
    assert "| persistent-icp-linux-default | 60000 (60000-60000) | 2 |" in md
    # 8,760 of the link's 40,588 bytes: a ceiling of 0.22 (0.24 with the
    # measurement's 10%)
    assert cache.pipe_bytes() == 40588
    assert "Confirmed: the study's window held its transfers to 0.20 " \
        "of the link (its ceiling, 8760 / 40588 bytes: 0.22; the study's " \
        "estimate: about 1/3), 0.80 without it (4.0x)" in md
    assert cache.window_verdict(0.6, 0.7).startswith("Not confirmed")
    assert cache.window_verdict(0.2, 0.25).startswith("Not confirmed")
    assert cache.window_verdict(0.2, 0.31).startswith("Confirmed")
    # no large object measured: no section
    assert cache._window_md(ref[:1], cache._passes(ref[:1])) == []


def test_child_config_sets_the_receive_buffer_only_when_asked(tmp_path):
    kw = dict(parent="198.18.1.1", parent_port=3128, icp_port=3130,
              icp=True)
    plain = squid.Squid("ns", "child", "127.0.0.1", 3128, True, **kw)
    small = squid.Squid("ns", "child", "127.0.0.1", 3128, True,
                        rcvbuf=8760, **kw)
    try:
        assert "tcp_recv_bufsize" not in plain.conf.read_text()
        assert "\ntcp_recv_bufsize 8760 bytes\n" in small.conf.read_text()
    finally:
        for s in (plain, small):
            s.stop(None)
    # the variant's name says it
    assert cache._variant(True, True, "linux-default", 8760) == \
        "persistent-icp-linux-default-win8760"

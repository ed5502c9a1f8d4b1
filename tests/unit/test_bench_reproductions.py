"""Host tests of the computations that set the bench's measurements beside
the published ones: restart's RED / drop-tail ratio (against Chan's
tables), phttp's table 1 pairing and its waits read from a capture."""
import pytest

from bench.lib import published
from bench.scenarios import phttp, restart
from cocktail_lab.capture import ACK, PSH, SYN, Pkt

S, C = "198.18.1.1", "198.18.2.1"


def test_red_over_droptail_medians_over_bursts_and_high_delays():
    m = {("droptail", 100, 10, "p"): 2.0, ("red", 100, 10, "p"): 1.0,
         ("droptail", 200, 10, "p"): 4.0, ("red", 200, 10, "p"): 4.0,
         ("droptail", 100, 150, "p"): 2.0, ("red", 100, 150, "p"): 3.0,
         ("droptail", 100, 300, "p"): 1.0, ("red", 100, 300, "p"): 2.0,
         ("droptail", 200, 300, "p"): 1.0, ("red", 200, 300, "p"): 1.6,
         # a cell with one queue only is left out
         ("red", 500, 300, "p"): 99.0, ("droptail", 500, 10, "q"): 1.0}
    r = restart.red_over_droptail(m)
    assert set(r) == {"p"}
    assert r["p"][10] == 0.75 and r["p"][150] == 1.5
    assert abs(r["p"][300] - 1.8) < 1e-9
    # 150-300 ms: the median of 1.5, 2.0 and 1.6
    assert r["p"]["high"] == 1.6


def test_red_over_droptail_of_chans_tables():
    """Chan's own numbers: RED lowers SSR's time at 150-300 ms (0.87)."""
    r = restart.red_over_droptail(published.chan())
    assert set(r) == {"SSR", "RBP", "CWV", "Cocktail"}
    assert round(r["SSR"]["high"], 2) == 0.87
    assert all(r[p]["high"] < 1 for p in r)
    assert restart.red_faster(published.chan()) == (41, 48)


def _rows(red, droptail):
    return [{"profile": "chan2m", "queue": q, "burst": b, "delay_ms": d,
             "policy": pol, "seconds": s, "burst_retrans": 3,
             "bottleneck_drops": 5 if q == "red" else 4}
            for q, k in (("red", red), ("droptail", droptail))
            for b in (100, 1000) for d in (10, 200)
            for pol, s in k.items()]


def test_red_md_sets_measured_beside_published_and_says_which_way():
    md = "".join(restart.red_md(_rows({"cocktail-ssr": 3.0},
                                      {"cocktail-ssr": 2.0})))
    assert "| cocktail-ssr | 1.50 | 1.50 | 1.50 | 3 → 3 | 4 → 5 |" in md
    assert "| Chan SSR (ns-2) |" in md
    assert ("cocktail-ssr 1.50 against Chan's SSR 0.87 (RED slower here, "
            "faster in Chan's)") in md
    assert "at 150–300 ms in 0 of 2 cells" in md and "Chan's tables, " \
        "in 41 of 48." in md
    # rows of another profile only: no section
    assert restart.red_md(_rows({"x": 1.0}, {"x": 1.0}), "modern50m") == []


def test_chan_cocktail_of_chans_tables():
    """His own claim about tables 5.1-5.4: Cocktail the fastest of the
    four in 35 of 64 cells, 24 of the 32 at 10-50 ms."""
    c = restart.chan_cocktail(published.chan())
    assert (c["fastest"], c["cells"]) == (35, 64)
    assert (c["fastest_low"], c["cells_low"]) == (24, 32)
    assert c["ratio_low"] < 1


def test_chan_cocktail_md_measured_beside_published():
    rows = _rows({"cocktail-ssr": 2.0, "cocktail-chan": 1.5},
                 {"cocktail-ssr": 2.0, "cocktail-chan": 3.0})
    md = "".join(restart.chan_cocktail_md(rows))
    # two of the four policies ran: no "fastest" count, the ratios
    assert "| measured | n/a (not all four ran) | n/a | 1.12 | 1.12 | " \
        "1.50 |" in md, md
    assert "| Chan (ns-2) | 35 of 64 | 24 of 32 |" in md
    rows += _rows({"cocktail-pace": 2.5, "cocktail-decay": 2.5},
                  {"cocktail-pace": 3.5, "cocktail-decay": 3.5})
    md = "".join(restart.chan_cocktail_md(rows))
    assert "| measured | 4 of 8 | 2 of 4 |" in md, md
    assert "6.2.1" not in md
    rows += _rows({"cocktail-auto": 1.0}, {"cocktail-auto": 1.0})
    md = "".join(restart.chan_cocktail_md(rows))
    assert "| measured | 4 of 8 | 2 of 4 |" in md, md
    assert "| measured, cocktail-auto in Cocktail's place (his 6.2.1 RTT " \
        "hybrid) | 8 of 8 | 4 of 4 | 0.50 | 0.50 | 0.50 |" in md, md
    # no cocktail-chan rows: no section
    assert restart.chan_cocktail_md(_rows({"cocktail-ssr": 1.0},
                                          {"cocktail-ssr": 1.0})) == []


def test_table1_pairs_every_published_row_with_a_measured_variant():
    pub = {p["server"] for p in published.load("heidemann1997_table1.csv")}
    assert [row for row, _ in phttp.TABLE1] == [
        "HTTP 1.1b4", "P-HTTP 1.1b4", "P-HTTP 1.1b4 (w/first fix)",
        "P-HTTP 1.1b4 (w/both fixes)"]
    assert {row for row, _ in phttp.TABLE1} == pub
    labels = {phttp._label(v) for v in phttp.VARIANTS}
    for _, variants in phttp.TABLE1:
        assert variants and set(variants) <= labels
    # both fixes: headers with the body, Nagle off
    both = [v for v in phttp.VARIANTS if v[0] == "phttp-together-nodelay"]
    assert both and both[0][1:4] == (True, False, False)
    md = "".join(phttp._table1_md({"lan": {"http1.0 linux-default":
                                           [20.0, 30.0]}}))
    assert "| HTTP 1.1b4 | 43 | http1.0 linux-default | 25.00 |" in md
    assert "| P-HTTP 1.1b4 (w/both fixes) | 26 | phttp-together-nodelay " \
        "linux-default | not measured |" in md


class Sock:
    def __init__(self):
        self.sent = []

    def sendall(self, b):
        self.sent.append(len(b))


def test_chunked_server_writes_like_apache():
    s = Sock()
    phttp._write(s, b"x" * 9000, 4096)
    assert s.sent == [4096, 4096, 808]
    s = Sock()
    phttp._write(s, b"x" * 9000, None)
    assert s.sent == [9000]


def test_apache_header_leaves_the_papers_13_byte_final_write():
    assert len(phttp.header(3883)) == 198
    h = phttp.header(3883, phttp.APACHE_HEADER)
    assert len(h) == 226 and h.endswith(b"\r\n\r\n")
    assert b"Content-Length: 3883\r\n" in h
    s = Sock()
    phttp._write(s, h + b"d" * 3883, phttp.CHUNKED["phttp-4k-together"])
    assert s.sent == [4096, 13]


def seg(ts, src, seq, plen, ack=1, flags=ACK, cport=40000):
    p = Pkt()
    p.ts, p.src, p.ipver, p.win, p.opts = ts, src, 4, 1000, None
    p.dst = C if src == S else S
    p.sport = phttp.PORT if src == S else cport
    p.dport = cport if src == S else phttp.PORT
    p.seq, p.ack, p.flags, p.plen = seq, ack, flags, plen
    return p


def capture():
    """A handshake and two responses: the first's short final segment
    waits 90 ms for the ACK of the header segment (sent 90.5 ms after
    it), the second has no wait."""
    return [
        seg(0.000, C, 1000, 0, ack=0, flags=SYN),
        seg(0.0001, S, 5000, 0, ack=1001, flags=SYN | ACK),
        seg(0.0002, C, 1001, 0, ack=5001),
        seg(0.001, C, 1001, 50, ack=5001, flags=ACK | PSH),       # request
        seg(0.002, S, 5001, 230, ack=1051, flags=ACK | PSH),      # header
        seg(0.0021, S, 5231, 1460, ack=1051),
        seg(0.0922, C, 1051, 0, ack=5231),                        # its ACK
        seg(0.0925, S, 6691, 811, ack=1051, flags=ACK | PSH),     # held
        seg(0.100, C, 1051, 50, ack=7502, flags=ACK | PSH),       # request
        seg(0.101, S, 7502, 1460, ack=1101),
        seg(0.1012, S, 8962, 500, ack=1101, flags=ACK | PSH),
    ]


def test_waits_finds_the_held_segment_and_the_ack_that_freed_it():
    w = phttp.waits(capture(), phttp.PORT)
    assert [r["doc"] for r in w] == [0, 1]
    a, b = w
    assert a["segs"] == 3 and abs(a["ms"] - 91.5) < 1e-6
    assert abs(a["wait_ms"] - 90.4) < 1e-6 and a["held"] == 811
    assert abs(a["ack_ms"] - 90.2) < 1e-6
    assert b["segs"] == 2 and b["wait_ms"] is None and b["ack_ms"] is None


def test_waits_without_an_ack_in_the_gap():
    pk = capture()
    del pk[6]                   # the ACK: the wait has no ACK before it
    a = phttp.waits(pk, phttp.PORT)[0]
    assert a["wait_ms"] is not None and a["ack_ms"] is None


def test_listing_is_relative_to_each_side_syn():
    text = phttp.listing(capture(), phttp.PORT).splitlines()
    assert len(text) == 11
    assert text[0].split() == ["0.000", "ms", "client>", "40000", "S",
                               "0:0(0)"]
    assert text[4].split()[2:] == ["server>", "40000", "P", "1:231(230)",
                                   "ack", "51"]
    assert text[6].split()[2:] == ["client>", "40000", ".", "51:51(0)",
                                   "ack", "231"]


def test_sndbuf_link_holds_the_fixed_buffers_and_their_reference():
    on = {phttp._label(v) for v in phttp.VARIANTS
          if phttp.on_link(phttp.SNDBUF_LINK, v)}
    assert on == {n + " linux-default" for n, _, _ in phttp.SNDBUF_SERVERS}
    for link in ("lan", "wan90"):
        names = {v[0] for v in phttp.VARIANTS if phttp.on_link(link, v)}
        assert not names & set(phttp.SNDBUF_ONLY)
        assert "phttp-together-nodelay" in names
    # every server is "both fixes" (together, Nagle off); the 4 KB
    # writers compare with the autotuned 4 KB writer, the one-write
    # server with the autotuned one-write server
    for v in phttp.VARIANTS:
        if v[0] in phttp.SNDBUF_REF:
            assert v[1:4] == (True, False, False)
    for n, size, ref in phttp.SNDBUF_SERVERS:
        assert (ref is None) == (size == 0)
        assert ref is None or (n in phttp.CHUNKED) == (ref in phttp.CHUNKED)
    assert phttp.sndbuf_asked(4096) == 2048
    # the path is the paper's example: its BDP just under 12 KB
    assert 11000 < phttp.SNDBUF_RATE_BPS / 8 * phttp.SNDBUF_RTT_S < 12288


def test_sndbuf_ideal_and_verdict():
    # three documents with 198-byte headers: 5 + 3 + 2 frames of 66 B
    # overhead, three round trips of 90 ms, all at 1 Mbit/s
    body = sum(phttp.DOCS) + 3 * 198
    want = 3 * 0.09 + (body + 10 * 66) * 8 / 1e6
    assert phttp.sndbuf_ideal_s() == pytest.approx(want)
    m = {"phttp-4k-nodelay": 400.0, "phttp-4k-sndbuf-4k": 600.0,
         "phttp-4k-sndbuf-12k": 410.0, "phttp-4k-sndbuf-16k": 400.0}
    v = phttp.sndbuf_verdict(m)
    assert v.startswith("confirmed for a server writing 4 KB pieces: a "
                        "4 KB buffer 1.50x") and "12 KB 1.02x" in v
    assert "at once" not in v
    v = phttp.sndbuf_verdict(dict(m, **{"phttp-4k-sndbuf-4k": 420.0,
                                        "phttp-together-nodelay": 500.0,
                                        "phttp-sndbuf-4k": 505.0}))
    assert v.startswith("refuted for a server writing 4 KB pieces: a 4 KB "
                        "buffer 1.05x")
    assert v.endswith("writing each response at once, a 4 KB buffer 1.01x.")
    assert phttp.sndbuf_verdict({"phttp-4k-nodelay": 400.0}) is None

"""Host tests of the parallel scenario's arithmetic: the page's ideal
time, each variant's credit, the burst read from a capture and the
verdict on "60 is too many"."""
import pytest

from bench.scenarios import parallel as par
from cocktail_lab.capture import ACK, Pkt

S, C = "198.18.1.1", "198.18.2.1"


def seg(ts, src, seq, plen=1448, ack=1, sport=None, dport=None):
    p = Pkt()
    p.ts, p.src, p.ipver, p.win, p.opts = ts, src, 4, 1000, None
    p.dst = C if src == S else S
    p.sport = sport or (par.PORT if src == S else 40000)
    p.dport = dport or (40000 if src == S else par.PORT)
    p.seq, p.ack, p.flags, p.plen = seq, ack, ACK, plen
    return p


def test_ideal_and_credit():
    # six objects of ten full segments: 60 frames of MSS + 66 bytes at
    # 10 Mbit/s, after two round trips
    assert par.ideal_s(100) == pytest.approx(0.2 + 60 * 1514 * 8 / 10e6)
    by = {v.name: v for v in par.VARIANTS}
    assert par.credit(by["linux-6x"]) == 60
    assert par.credit(by["linux-1x-pipelined"]) == 10
    assert par.credit(by["cocktail-6x-iw4"]) == 24
    # the page is the same bytes whichever way it is fetched
    assert {v.conns * (par.CONNS * par.OBJECT // v.conns)
            for v in par.VARIANTS} == {6 * 14480}


def test_burst_counts_until_the_first_ack_of_data():
    pk = []
    for port in (40001, 40002):
        pk += [seg(0.001 * i, S, 1000 + 1448 * i, dport=port)
               for i in range(10)]
    # the client's handshake ACK (ack = the server's ISN + 1, before any
    # data) and the request carry no news of data; another connection's
    # data does not count
    pk += [seg(0.02, C, 1, plen=4, ack=1000, sport=40001),
           seg(0.021, S, 7, dport=40009),
           seg(0.10, C, 5, plen=0, ack=1000 + 2896, sport=40002),
           seg(0.11, S, 1000 + 14480, dport=40001)]
    assert par.burst(pk, S, {40001, 40002}) == 20
    # 40002's ACK is not the page's when the page is 40001 alone: its
    # next segment still belongs to the burst
    assert par.burst(pk, S, {40001}) == 11
    assert par.burst([], S, {40001}) == 0


def test_verdict():
    def cell(drops, retrans=0, seconds=1.0):
        return {"drops": drops, "retrans": retrans, "seconds": seconds}
    good = {(100, 20): {"linux-6x": cell(30, 28), "linux-1x-pipelined":
                        cell(0)},
            (100, 100): {"linux-6x": cell(0), "linux-1x-pipelined":
                         cell(0)}}
    v = par.verdict(good)
    assert v.startswith("confirmed (medians per page): 100 ms, 20-packet "
                        "queue: 6x IW10 30 drops, 28 retrans; pipelined "
                        "0 drops")
    bad = {**good, (100, 20): {"linux-6x": cell(0),
                               "linux-1x-pipelined": cell(0)}}
    assert par.verdict(bad).startswith("refuted")
    assert par.verdict({(100, 100): good[(100, 100)]}) is None

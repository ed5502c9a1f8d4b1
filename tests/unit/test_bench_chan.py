"""Host tests of the chan scenario's pure parts: what it reads from a
capture (handshake RTT, the client's ACK delays, the longest wait, the
sequence/time points) and the published-against-measured ratios."""
from bench.scenarios import chan
from cocktail_lab import capture
from cocktail_lab.capture import ACK, PSH, SYN, Pkt

S, C = "198.18.1.1", "198.18.2.1"
PORT = chan.PORT
ISN_S, ISN_C = 1000, 5000


def seg(ts, src, seq, plen=0, ack=0, flags=ACK):
    p = Pkt()
    p.ts, p.src, p.ipver, p.win, p.opts = ts, src, 4, 1000, None
    p.dst = C if src == S else S
    p.sport = PORT if src == S else 40000
    p.dport = 40000 if src == S else PORT
    p.seq, p.ack, p.flags, p.plen = seq, ack, flags, plen
    return p


def handshake(t=0.0, rtt=0.2):
    """The server side's view: SYN in, SYN-ACK out, the client's ACK one
    RTT later."""
    return [seg(t, C, ISN_C, flags=SYN),
            seg(t + 0.001, S, ISN_S, ack=ISN_C + 1, flags=SYN | ACK),
            seg(t + 0.001 + rtt, C, ISN_C + 1, ack=ISN_S + 1)]


def data(ts, n, size=1460):
    """Segment N (0-based) of the server's data."""
    return seg(ts, S, ISN_S + 1 + n * 1460, plen=size, ack=ISN_C + 1,
               flags=ACK | PSH)


def ack_of(ts, end_seg):
    return seg(ts, C, ISN_C + 1, ack=ISN_S + 1 + end_seg * 1460)


def test_handshake_rtt_is_synack_to_the_clients_ack():
    pk = handshake(rtt=0.2)
    assert abs(chan.handshake_rtt(pk, S, PORT) - 0.2) < 1e-9
    assert chan.handshake_rtt(pk[:2], S, PORT) is None


def test_ack_delays_take_the_rtt_off_and_count_segments():
    # segment 0 acked at once (quick ACK), segments 1-2 together at once
    # (a second full segment), segment 3 alone after a 40 ms delayed ACK
    pk = handshake(rtt=0.2) + [
        data(1.0, 0), ack_of(1.2, 1),
        data(1.2, 1), data(1.21, 2), ack_of(1.41, 3),
        data(1.41, 3), ack_of(1.65, 4)]
    got = chan.ack_delays(sorted(pk, key=lambda p: p.ts), S, PORT, 0.2)
    assert [a["segs"] for a in got] == [1, 2, 1]
    assert [round(a["delay"], 3) for a in got] == [0.0, 0.0, 0.04]
    assert round(got[2]["t"], 3) == 0.65


def test_ack_delays_skip_duplicates_and_acks_inside_a_segment():
    pk = handshake() + [data(1.0, 0), data(1.0, 1), ack_of(1.2, 2),
                        ack_of(1.25, 2),
                        seg(1.3, C, ISN_C + 1, ack=ISN_S + 1 + 2 * 1460 + 7)]
    got = chan.ack_delays(pk, S, PORT, 0.2)
    assert len(got) == 1 and got[0]["segs"] == 2
    assert chan.ack_delays(handshake(), S, PORT, 0.2) == []


def test_ack_delay_after_a_loss_runs_from_the_retransmission():
    # segment 1 lost, segments 2-3 arrive (SACKs, not boundaries of new
    # data), the retransmission of 1 fills the hole: the ACK to the end
    # of 3 is released by it, not held since segment 3 passed
    pk = handshake() + [data(1.0, 0), data(1.0, 1), data(1.01, 2),
                        data(1.02, 3), ack_of(1.2, 1),
                        seg(1.22, C, ISN_C + 1, ack=ISN_S + 1 + 1460),
                        data(1.4, 1), ack_of(1.6, 4)]
    got = chan.ack_delays(pk, S, PORT, 0.2)
    assert [a["segs"] for a in got] == [1, 3]
    assert round(got[1]["delay"], 3) == 0.0


def test_longest_wait_is_the_gap_before_the_held_segment():
    pk = [data(1.0, 0), data(1.01, 1), data(1.02, 2, size=740),
          seg(1.3, S, ISN_S + 1 + 2 * 1460 + 740, plen=5)]
    wait, held = chan.longest_wait(pk, S, PORT)
    assert round(wait, 3) == 0.28 and held == 5
    # only segments from AFTER on
    assert chan.longest_wait(pk, S, PORT, after=1.25) == (None, None)


def test_seq_points_mark_retransmissions():
    pk = [data(1.0, 0), data(1.1, 1), data(1.2, 2), data(1.5, 1)]
    pts = capture.seq_points(pk, S, PORT, chan.MSS)
    assert [(round(t, 3), s, r) for t, s, r in pts] == [
        (0.0, 1.0, False), (0.1, 2.0, False), (0.2, 3.0, False),
        (0.5, 2.0, True)]
    assert capture.seq_points(pk, S, PORT, chan.MSS,
                              after=1.15)[0][:2] == (0.0, 1.0)
    assert capture.seq_points([], S, PORT, chan.MSS) == []


def test_published_rows_cover_every_comparison():
    pub = chan.published_seconds()
    # cwv: the burst's own duration, not the time it ended
    assert pub[("cwv", "cwv1")] == 0.5 and pub[("cwv", "cwv0")] == 2.3
    names = {v.name for v in chan.VARIANTS}
    for r in chan.ratios([], pub=pub):
        assert r["variant"] in names and r["baseline"] in names
        assert r["published_ratio"] is not None, r["what"]
        assert r["measured_ratio"] is None


def test_ratios_are_variant_over_baseline_medians():
    rows = [{"experiment": "nagle", "variant": "nagle", "seconds": s}
            for s in (0.4, 0.5, 0.6)] + \
        [{"experiment": "nagle", "variant": "nodelay", "seconds": s}
         for s in (0.2, 0.25, 9.0)] + \
        [{"experiment": "iw", "variant": "nagle", "seconds": 100.0}]
    pub = chan.published_seconds()
    r = [x for x in chan.ratios(rows, pub=pub) if x["experiment"] ==
         "nagle"][0]
    assert r["measured_variant"] == 0.25 and r["measured_baseline"] == 0.5
    assert r["measured_ratio"] == 0.5
    assert round(r["published_ratio"], 3) == round(0.69 / 1.29, 3)
    # figure 3.11's own IW1 numbers stand for the IW1 rows there
    f311 = [x for x in chan.ratios([], pub=pub) if "3.11" in x["what"]][0]
    assert (f311["published_variant"], f311["published_baseline"]) == (
        1.01, 1.44)

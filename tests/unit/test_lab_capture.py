"""cocktail_lab.capture on the host: read_pcap on captures written by dpkt
here (Ethernet, cooked SLL and raw IP; IPv4 and IPv6; a snap length that
cuts the payload), and the flight analysis on hand-built packets."""
import os
import socket

import dpkt
import pytest

from cocktail_lab import capture as cap
from cocktail_lab.capture import ACK, FIN, PSH, SYN, Pkt

S, C = "198.18.16.2", "198.19.16.2"
S6, C6 = "fd00:cc:1:0::2", "fd00:cc:2:0::2"


def tcp(sport, dport, seq, ack, flags, payload=b"", opts=b""):
    t = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq, ack=ack,
                     flags=flags, win=502, opts=opts, data=payload)
    t.off = (20 + len(opts)) // 4
    return t


def ip4(src, dst, seg):
    ip = dpkt.ip.IP(src=socket.inet_aton(src), dst=socket.inet_aton(dst),
                    p=dpkt.ip.IP_PROTO_TCP, data=seg)
    ip.len = 20 + len(bytes(seg))
    return ip


def ip6(src, dst, seg):
    return dpkt.ip6.IP6(src=socket.inet_pton(socket.AF_INET6, src),
                        dst=socket.inet_pton(socket.AF_INET6, dst),
                        nxt=dpkt.ip.IP_PROTO_TCP, hlim=64,
                        plen=len(bytes(seg)), data=seg)


def eth(net):
    etype = dpkt.ethernet.ETH_TYPE_IP6 if isinstance(net, dpkt.ip6.IP6) \
        else dpkt.ethernet.ETH_TYPE_IP
    return dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6,
                                  type=etype, data=net)


def write(path, frames, linktype=dpkt.pcap.DLT_EN10MB, snaplen=128):
    with open(path, "wb") as f:
        w = dpkt.pcap.Writer(f, snaplen=snaplen, linktype=linktype)
        for ts, frame in frames:
            w.writepkt(bytes(frame)[:snaplen], ts=ts)


# MSS, NOP, NOP, timestamps, end of options, then bytes that are not options
MSS_TS = bytes([2, 4, 0x05, 0xa8, 1, 1, 8, 10]) + bytes(range(8)) + \
    bytes([0, 3, 3, 7])


def test_read_pcap_ethernet_v4_v6_snaplen_and_options(tmp_path):
    p = tmp_path / "x.pcap"
    write(p, [
        (1.0, eth(ip4(C, S, tcp(40000, 8000, 100, 0, SYN, opts=MSS_TS)))),
        (1.5, eth(ip4(S, C, tcp(8000, 40000, 7, 101, ACK | PSH,
                                b"x" * 1448)))),
        (2.25, eth(ip6(S6, C6, tcp(8000, 40001, 0xFFFFFFF0, 5, ACK | FIN,
                                   b"y" * 100)))),
    ])
    pkts = cap.read_pcap(p, want_opts=True)
    assert [(x.src, x.dst, x.sport, x.dport, x.ipver) for x in pkts] == [
        (C, S, 40000, 8000, 4), (S, C, 8000, 40000, 4),
        ("fd00:cc:1::2", "fd00:cc:2::2", 8000, 40001, 6)]
    syn, data, fin = pkts
    assert syn.ts == pytest.approx(1.0) and data.ts == pytest.approx(1.5)
    assert syn.flags == SYN and syn.plen == 0 and syn.end == 101
    # the options without NOPs, the end-of-options mark ends them
    assert syn.opts == [(2, b"\x05\xa8"), (8, bytes(range(8)))]
    # the payload length comes from the IP header: the capture kept 128
    # bytes of a 1514-byte frame
    assert data.plen == 1448 and data.seq == 7 and data.ack == 101
    assert data.flags == ACK | PSH and data.win == 502
    assert fin.plen == 100 and fin.end == (0xFFFFFFF0 + 101) & 0xFFFFFFFF
    assert cap.read_pcap(p)[0].opts is None


def test_read_pcap_sll_and_raw_ip(tmp_path):
    seg = ip4(S, C, tcp(8000, 1, 1, 1, ACK, b"z" * 10))
    sll = dpkt.sll.SLL(type=0, hrd=1, hlen=6, hdr=b"\x02" * 6 + b"\0\0",
                       ethtype=dpkt.ethernet.ETH_TYPE_IP, data=seg)
    write(tmp_path / "sll.pcap", [(3.0, sll)], linktype=113)
    write(tmp_path / "raw.pcap", [(4.0, seg)], linktype=101)
    for name, ts in (("sll.pcap", 3.0), ("raw.pcap", 4.0)):
        (p,) = cap.read_pcap(tmp_path / name)
        assert (p.src, p.dst, p.plen, p.ts) == (S, C, 10, ts)


def test_read_pcap_skips_other_traffic_and_refuses_non_pcap(tmp_path):
    udp = dpkt.ip.IP(src=socket.inet_aton(S), dst=socket.inet_aton(C),
                     p=dpkt.ip.IP_PROTO_UDP,
                     data=dpkt.udp.UDP(sport=1, dport=2, data=b"q"))
    frag = ip4(S, C, tcp(8000, 1, 1, 1, ACK, b"z" * 10))
    frag.offset = 800   # a later fragment: no TCP header in it
    arp = dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_ARP,
                                 data=b"\0" * 28)
    write(tmp_path / "o.pcap", [(1, eth(udp)), (2, eth(frag)), (3, arp),
                                (4, b"\0" * 6)])
    assert cap.read_pcap(tmp_path / "o.pcap") == []
    (tmp_path / "n.pcap").write_bytes(b"not a pcap file at all, no")
    with pytest.raises(ValueError, match="not a classic pcap"):
        cap.read_pcap(tmp_path / "n.pcap")


def seg(ts, src, seq, plen=1000, ack=1, flags=ACK, sport=None, dport=None):
    p = Pkt()
    p.ts, p.src, p.ipver, p.win, p.opts = ts, src, 4, 1000, None
    p.dst = C if src == S else S
    p.sport = sport or (8000 if src == S else 40000)
    p.dport = dport or (40000 if src == S else 8000)
    p.seq, p.ack, p.flags, p.plen = seq, ack, flags, plen
    return p


def ack(ts, n, **kw):
    return seg(ts, C, 1, plen=0, ack=n, **kw)


def conversation():
    """Two flights of the server, 2 s apart, each ended by the client's
    ACK; the second has a retransmission and a request before it."""
    base = 1000
    pk = [seg(0.00, S, base), seg(0.01, S, base + 1000),
          seg(0.02, S, base + 2000), ack(0.10, base + 1000),
          seg(0.11, S, base + 3000), ack(0.12, base + 4000),
          seg(2.00, C, 1, plen=100), ack(2.00, base + 4000),
          seg(2.05, S, base + 4000), seg(2.07, S, base + 5000),
          seg(2.08, S, base + 4000),   # retransmission
          ack(2.20, base + 6000)]
    return pk


def test_flights_and_first_flight():
    pk = conversation()
    fl = cap.flights(pk, S)
    assert [[p.ts for p in f] for f in fl] == [[0.0, 0.01, 0.02],
                                              [2.05, 2.07, 2.08]]
    assert cap.first_flight(pk, S, after=1.0)[0].ts == 2.05
    assert cap.first_flight(pk, S, after=3.0) == []
    # a shorter idle threshold: 0.11 follows 0.02 by 90 ms
    assert len(cap.flights(pk, S, idle=0.05)) == 3
    assert cap.flights(pk, S, sport=9999) == []


def test_flight_after_and_idle_before():
    pk = conversation()
    fl = cap.flight_after(pk, S, 2.0)
    assert [p.ts for p in fl] == [2.05, 2.07, 2.08]
    assert cap.idle_before(pk, S, fl) == pytest.approx(2.05 - 0.11)
    with pytest.raises(ValueError, match="ends before an ACK"):
        cap.flight_after(pk[:-1], S, 2.0)
    assert cap.idle_before(pk, S, cap.flights(pk, S)[0]) is None


def test_retransmissions_and_data_segments():
    pk = conversation()
    assert cap.retransmissions(pk, S) == 1
    assert cap.retransmissions(pk, C) == 0
    assert cap.retransmissions(pk, S, sport=1) == 0
    assert len(cap.data_segments(pk, S)) == 7
    assert len(cap.data_segments(pk, C, 40000)) == 1


def test_resent():
    """The segments of a flight that were sent again later: overlapping
    retransmissions count each segment once; a retransmission on another
    connection or before the segment was first sent does not count."""
    pk = conversation()
    assert cap.resent(pk, cap.flights(pk, S)[0]) == 0
    assert cap.resent(pk, cap.flight_after(pk, S, 2.0)) == 1
    assert cap.resent(pk, []) == 0
    base = 1000
    fl = [seg(0.01 * i, S, base + 1000 * i) for i in range(4)]
    pk = fl + [seg(0.05, S, base + 3000, sport=1, dport=40000),
               ack(0.20, base + 1000),
               seg(0.21, S, base + 1000, plen=2000),   # resends 1 and 2
               seg(0.22, S, base + 1500, plen=500),    # inside 1 again
               seg(0.23, S, base + 3000, sport=1, dport=40000)]
    assert cap.resent(pk, fl) == 2
    assert cap.resent(pk, fl[3:]) == 0


def test_loss_episodes():
    """Retransmissions within GAP of each other are one episode; a later
    one starts the next; other senders and ports are not counted."""
    base = 1000
    pk = [seg(0.00 + 0.01 * i, S, base + 1000 * i) for i in range(8)]
    pk += [seg(0.30, S, base + 1000), seg(0.35, S, base + 3000),
           seg(0.70, S, base + 4000),        # 0.35 s later: same episode
           seg(2.00, S, base + 5000),        # 1.3 s later: a new one
           seg(2.10, S, base + 2000, sport=1, dport=40000),
           seg(2.20, C, 1), seg(2.30, C, 1)]
    assert cap.loss_episodes(pk, S, 0.4) == [(0.30, 0.70, 3),
                                             (2.00, 2.00, 1)]
    assert cap.loss_episodes(pk, S, 0.2) == [(0.30, 0.35, 2),
                                             (0.70, 0.70, 1),
                                             (2.00, 2.00, 1)]
    assert cap.loss_episodes(pk, S, 0.4, sport=1) == []
    assert cap.loss_episodes(pk, C, 0.4) == [(2.30, 2.30, 1)]
    assert cap.retransmissions(pk, S) == 4


def test_max_in_flight():
    """Sent minus acknowledged, at its largest, per connection: an ACK
    opens room, a retransmission adds nothing, another connection and
    the peer's own data are apart."""
    base = 1000
    pk = [seg(0.00, S, base), seg(0.01, S, base + 1000),
          seg(0.02, S, base + 2000),                 # 3000 out
          ack(0.10, base + 2000),                    # 1000 out
          seg(0.11, S, base + 3000), seg(0.12, S, base + 4000),
          seg(0.13, S, base + 5000),                 # 4000 out
          seg(0.14, S, base + 3000),                 # retransmission
          ack(0.20, base + 6000),
          seg(0.30, S, 9000, sport=1, dport=40001),  # another: 1000
          seg(0.40, C, 1, plen=5000)]
    assert cap.max_in_flight(pk, S) == 4000
    assert cap.max_in_flight(pk, S, sport=1) == 1000
    assert cap.max_in_flight(pk, C) == 5000
    assert cap.max_in_flight([], S) == 0


def test_advertised_window():
    """Scaled by the SYN's shift when both SYNs carry one; unscaled when
    only one side does; SYNs and other senders are apart."""
    def syn(ts, src, ws, **kw):
        p = seg(ts, src, 0, plen=0, flags=SYN | (ACK if src == S else 0),
                **kw)
        p.opts = [(2, b"\x05\xb4")] + ([(3, bytes([ws]))]
                                          if ws is not None else [])
        return p
    pk = [syn(0.0, C, 2), syn(0.01, S, 7), ack(0.02, 1)]
    pk[-1].win = 5000
    pk[0].win = 64240
    assert cap.advertised_window(pk, C) == 20000
    assert cap.advertised_window(pk, C, dport=1) == 0
    # the server never announced a shift: the client's windows are bytes
    pk2 = [syn(0.0, C, 2), syn(0.01, S, None), ack(0.02, 1)]
    pk2[-1].win = 5000
    assert cap.advertised_window(pk2, C) == 5000
    assert cap.advertised_window([], C) == 0


def test_spacing_helpers():
    segs = [seg(t, S, 0) for t in (0.0, 0.001, 0.004, 0.005, 0.008)]
    assert cap.gaps(segs) == pytest.approx([0.001, 0.003, 0.001, 0.003])
    assert cap.pair_gaps(segs) == pytest.approx([0.002, 0.002, 0.002])
    assert cap.mean_spacing(segs) == pytest.approx(0.002)
    assert cap.median([3, 1, 2]) == 2 and cap.median([4, 1, 2, 3]) == 2.5
    with pytest.raises(ValueError):
        cap.mean_spacing(segs[:1])
    with pytest.raises(ValueError):
        cap.median([])


def test_ack_rate_windowed_max():
    # a response of 20 segments ACKed 1000 bytes every 10 ms, then a stall:
    # the best window of two RTTs (20 ms) saw 2000 bytes
    pk = [seg(0.0, C, 1, plen=50)]
    pk += [seg(0.001 + i * 0.001, S, i * 1000) for i in range(20)]
    pk += [ack(0.05 + i * 0.01, (i + 1) * 1000) for i in range(10)]
    pk += [ack(0.5, 12000)]
    assert cap.ack_rate(pk, S, before=1.0, rtt=0.01) == \
        pytest.approx(2000 / 0.02)
    with pytest.raises(ValueError, match="too few ACKs"):
        cap.ack_rate(pk[:23], S, before=1.0, rtt=0.01)


def test_seq_after_wraps():
    assert cap.seq_after(5, 0xFFFFFFF0) and not cap.seq_after(0xFFFFFFF0, 5)
    assert not cap.seq_after(7, 7)


def _fake_tracefs(tmp_path, enabled="0"):
    d = tmp_path / "tracing"
    ev = d / "events" / "tcp_cocktail" / "cocktail_restart"
    ev.mkdir(parents=True)
    (ev / "enable").write_text(enabled + "\n")
    (d / "options").mkdir()
    (d / "options" / "record-cmd").write_text("1\n")
    for f in ("trace", "tracing_on", "trace_marker"):
        (d / f).write_text("")
    return d, ev / "enable"


def test_trace_disables_its_events_and_task_names(tmp_path):
    from cocktail_lab.capture import Trace
    d, enable = _fake_tracefs(tmp_path)
    t = Trace("tcp_cocktail/cocktail_restart")
    t.dir = str(d)
    with t:
        assert enable.read_text() == "1\n"
        assert (d / "tracing_on").read_text() == "1\n"
    assert enable.read_text() == "0\n"
    assert (d / "options" / "record-cmd").read_text() == "0\n"


def test_trace_keep_leaves_events_enabled_and_untouched(tmp_path):
    from cocktail_lab.capture import Trace
    d, enable = _fake_tracefs(tmp_path, enabled="1")
    os.utime(enable, ns=(1, 1))     # a write would move its mtime
    t = Trace("tcp_cocktail/cocktail_restart", keep=True)
    t.dir = str(d)
    with t:
        pass
    assert enable.read_text() == "1\n"
    assert enable.stat().st_mtime_ns == 1

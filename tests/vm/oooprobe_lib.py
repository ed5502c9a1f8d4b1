"""Helpers for the tcp_oooprobe VM tests: the out-of-order hold times
computed from a capture (the truth the probe's events are compared with).
The family's generic netlink client is cocktail_lab.genl, the probe tests'
link cocktail_lab.topo.Link; namespaces, captures and the pcap reader are
the lab's (cocktail_lab.proc, cocktail_lab.capture).

Standard library only; runs inside the VM as root.
"""
import socket
import struct
from pathlib import Path

from cocktail_lab.capture import SYN, seq_after

REPO = Path(__file__).resolve().parents[2]


def capture_holds(pkts, src, sport, dst, dport, pending=False):
    """From a capture at the receiver (capture.read_pcap): for every data
    segment that arrived beyond the next expected byte, the time from its
    arrival until the in-order point passed its end. Returns (held,
    data_segs, ooo_segs): held is a list of dicts seq, len, t_in, t_out
    (capture clock, ns); a segment partly covered by earlier data keeps only
    its new bytes, as the probe does. Retransmissions of bytes already held
    count once. With pending=True a fourth item lists the ranges still
    held at the end of the capture (dicts seq, len, t_in)."""
    rcv_nxt = None
    ranges = []  # [seq, end, t_in], sorted, disjoint
    held = []
    data_segs = ooo_segs = 0
    for p in pkts:
        if (p.src, p.sport, p.dst, p.dport) != (src, sport, dst, dport):
            continue
        ts = int(round(p.ts * 1e9))
        if p.flags & SYN:
            rcv_nxt = (p.seq + 1) & 0xffffffff
            continue
        if rcv_nxt is None or p.plen <= 0:
            continue
        data_segs += 1
        seq, end = p.seq, (p.seq + p.plen) & 0xffffffff
        if seq_after(seq, rcv_nxt):
            # record the uncovered parts
            new = [(seq, end)]
            for r in ranges:
                nxt = []
                for s, e in new:
                    if not seq_after(e, r[0]) or not seq_after(r[1], s):
                        nxt.append((s, e))
                        continue
                    if seq_after(r[0], s):
                        nxt.append((s, r[0]))
                    if seq_after(e, r[1]):
                        nxt.append((r[1], e))
                new = nxt
            if new:
                ooo_segs += 1
            for s, e in new:
                ranges.append([s, e, ts])
            ranges.sort(key=lambda r: (r[0] - rcv_nxt) & 0xffffffff)
            continue
        if seq_after(end, rcv_nxt):
            rcv_nxt = end
            # pull in contiguous held data
            moved = True
            while moved:
                moved = False
                for r in ranges:
                    if not seq_after(r[0], rcv_nxt) and \
                            seq_after(r[1], rcv_nxt):
                        rcv_nxt = r[1]
                        moved = True
            keep = []
            for r in ranges:
                if not seq_after(r[1], rcv_nxt):
                    held.append(dict(seq=r[0], len=(r[1] - r[0]) & 0xffffffff,
                                     t_in=r[2], t_out=ts))
                else:
                    keep.append(r)
            ranges = keep
    if pending:
        return held, data_segs, ooo_segs, [
            dict(seq=r[0], len=(r[1] - r[0]) & 0xffffffff, t_in=r[2])
            for r in ranges]
    return held, data_segs, ooo_segs


def tcp_repair_write_seq(sock):
    """The next sequence number the socket will send (TCP_REPAIR needs
    CAP_NET_ADMIN): used to pick the exact segment a filter drops."""
    TCP_REPAIR, TCP_REPAIR_QUEUE, TCP_QUEUE_SEQ, TCP_SEND_QUEUE = 19, 20, 21, 2
    sock.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR, 1)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE)
        seq = struct.unpack("=I", sock.getsockopt(socket.IPPROTO_TCP,
                                                  TCP_QUEUE_SEQ, 4))[0]
    finally:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR, 0)
    return seq

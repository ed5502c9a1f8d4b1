"""Helpers for the tcp_oooprobe VM tests: the out-of-order hold times
computed from a capture (the truth the probe's events are compared with).
The family's generic netlink client is cocktail_lab.genl, the probe tests'
link cocktail_lab.topo.Link; namespaces, captures and the pcap reader are
the lab's (cocktail_lab.proc, cocktail_lab.capture).

Standard library only; runs inside the VM as root.
"""
import os
import socket
import struct
import time
from pathlib import Path

from cocktail_lab.capture import SYN, seq_after

REPO = Path(__file__).resolve().parents[2]


def quiet_stats(g, timeout=30, polls=4, every=0.25):
    """The probe's GET_STATS once it stops changing: `polls` answers in a
    row equal, `every` seconds apart (the receiver's softirq caught up,
    timers fired, every numbered event counted as sent or dropped); after
    `timeout` seconds the last answer, changing or not."""
    prev, same, end = g.stats(), 0, time.monotonic() + timeout
    while same < polls and time.monotonic() < end:
        time.sleep(every)
        cur = g.stats()
        same = same + 1 if cur == prev else 0
        prev = cur
    return prev


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



def slab():
    """Objects in use and object size of the probe's slab caches, after
    flushing every CPU's slabs into the node lists (SLUB counts the free
    objects of those as in use otherwise)."""
    names = [ln.split()[0] for ln in open("/proc/slabinfo")
             if ln.startswith("oooprobe_")]
    for n in names:
        with open("/sys/kernel/slab/%s/shrink" % n, "w") as f:
            f.write("1")
    out = {}
    for ln in open("/proc/slabinfo"):
        w = ln.split()
        if w and w[0] in names:
            out[w[0]] = (int(w[1]), int(w[3]))  # active_objs, objsize
    return out


def slab_range_bytes(s):
    """Bytes of range arrays in use by the slab counts: oooprobe_ranges_N
    holds arrays of N ranges of 16 bytes (the slab's own object size is
    larger by its free pointer: a cache with a constructor keeps it
    outside the object)."""
    return sum(n * int(name.rsplit("_", 1)[1]) * 16
               for name, (n, _) in s.items()
               if name.startswith("oooprobe_ranges_"))


def _csum(data):
    """The Internet checksum of data (even length)."""
    n = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    n = (n & 0xffff) + (n >> 16)
    n = (n & 0xffff) + (n >> 16)
    return ~n & 0xffff


TH_FIN, TH_SYN, TH_RST, TH_PUSH, TH_ACK = 0x01, 0x02, 0x04, 0x08, 0x10


class RawPeer:
    """A TCP peer with no socket: hand-made IPv4 segments sent on a raw
    socket from addresses the sending namespace does not have (`srcs`,
    routed back to it by the caller), and the answers read on a packet
    socket on `dev`. The namespace drops those answers itself without a
    reply (the addresses are not its own and it does not forward, so no
    RST), which leaves the peer free to open connections and then send
    whatever segments it likes: the hostile sender of the probe's memory
    tests, and a cheap way to open many connections (one socket each, at
    the receiver only). A connection is (source address, source port)."""

    ETH_P_IP = 0x0800
    SO_RCVBUFFORCE = 33

    def __init__(self, ns, dev, srcs, dst, dport):
        from cocktail_lab.proc import in_netns
        self.srcs = [socket.inet_aton(a) for a in srcs]
        self.dst, self.dport = dst, dport
        self._dst = socket.inet_aton(dst)
        with in_netns(ns):
            self.tx = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                                    socket.IPPROTO_RAW)
            self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                    socket.htons(self.ETH_P_IP))
            self.rx.bind((dev, self.ETH_P_IP))
        self.rx.setsockopt(socket.SOL_SOCKET, self.SO_RCVBUFFORCE, 32 << 20)
        self.rx.settimeout(0.2)
        self.conns = {}  # (src index, sport) -> [our next seq, their next]

    def close(self):
        self.tx.close()
        self.rx.close()

    def send(self, conn, seq, ack, flags, payload=b"", opts=b""):
        src = self.srcs[conn[0]]
        if len(payload) % 2:
            pad = b"\0"
        else:
            pad = b""
        thl = 20 + len(opts)
        tcp = struct.pack("!HHIIBBHHH", conn[1], self.dport,
                          seq & 0xffffffff, ack & 0xffffffff, (thl // 4) << 4,
                          flags, 65535, 0, 0) + opts
        pseudo = src + self._dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP,
                                               thl + len(payload))
        c = _csum(pseudo + tcp + payload + pad)
        tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + thl + len(payload),
                         0, 0x4000, 64, socket.IPPROTO_TCP, 0, src, self._dst)
        self.tx.sendto(ip + tcp + payload, (self.dst, 0))

    def _answers(self):
        """(conn, flags, seq, ack) of the segments read so far."""
        while True:
            try:
                f = self.rx.recv(128)
            except (socket.timeout, BlockingIOError):
                return
            if len(f) < 54 or f[23] != socket.IPPROTO_TCP:
                continue
            ihl = (f[14] & 0xf) * 4
            t = 14 + ihl
            sport, dport, seq, ack, _, flags = struct.unpack(
                "!HHIIBB", f[t:t + 14])
            try:
                i = self.srcs.index(f[30:34])
            except ValueError:
                continue
            if sport == self.dport:
                yield (i, dport), flags, seq, ack

    def connect(self, conns, batch=256, timeout=10):
        """Three-way handshakes for every (source index, port) of `conns`,
        `batch` at a time; returns the connections that are up (SYN-ACK
        answered)."""
        import time
        mss = b"\x02\x04\x05\xb4"  # MSS 1460, nothing else offered
        up = []
        conns = list(conns)
        for b in range(0, len(conns), batch):
            isn = {}
            for c in conns[b:b + batch]:
                isn[c] = int.from_bytes(os.urandom(4), "big")
                self.send(c, isn[c], 0, TH_SYN, opts=mss)
            end = time.time() + timeout
            while isn and time.time() < end:
                for c, flags, seq, ack in self._answers():
                    if c not in isn or flags & (TH_SYN | TH_ACK) != \
                            TH_SYN | TH_ACK or \
                            ack != (isn[c] + 1) & 0xffffffff:
                        continue
                    self.conns[c] = [isn[c] + 1, seq + 1]
                    self.send(c, isn[c] + 1, seq + 1, TH_ACK)
                    up.append(c)
                    del isn[c]
        return up

    def data(self, conn, off, payload):
        """A data segment `off` bytes past the first byte the receiver
        expects (never sent: a hole at the start)."""
        seq, ack = self.conns[conn]
        self.send(conn, seq + off, ack, TH_ACK | TH_PUSH, payload)

    def drain(self):
        """Forget the answers read so far (duplicate ACKs)."""
        self.rx.settimeout(0)
        try:
            for _ in self._answers():
                pass
        finally:
            self.rx.settimeout(0.2)

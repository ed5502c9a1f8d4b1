"""Helpers for the tcp_oooprobe VM tests (the family's generic netlink
client is cocktail_lab.genl): the probe tests' link (a netlab.Pair with
addresses of either family and a drop filter for a chosen segment), and the
out-of-order hold times computed from a capture (the truth the probe's
events are compared with). Namespaces, captures and the pcap reader are
netlab's (tests/vm/netlab.py).

Standard library only; runs inside the VM as root.
"""
import ipaddress
import os
import socket
import struct
from pathlib import Path

from netlab import SYN, Capture, Pair, read_pcap, seq_after  # noqa: F401

REPO = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ links

class Link(Pair):
    """The probe tests' link: netlab.Pair (server and client namespaces
    joined by one veth pair, one MSS per skb, netem delay RTT/2 on each
    side's egress, srv_netem/rate on the server's). The receiver must get
    the sender's own skbs: through a forwarding hop (netem-topo's router)
    they arrive uncloned (ip_forward's skb_cow), the receiver's socket
    backlog coalesces consecutive segments into one skb, and the probe,
    which sees skbs, reports merged ranges where a capture shows segments.
    The client's receive processing runs on one CPU (RPS, steer_rx): with
    two, a segment tapped on one CPU can reach TCP after a later one
    tapped on the other (a descheduled vCPU in between), and the capture,
    whose order is the taps', calls held what TCP took in order and the
    other way round.
    Attributes after entering: srv/cli (namespaces), SRV/CLI (addresses:
    IPv6 with v6=True, canonical text), family, rtt (ms)."""

    def __init__(self, tag="", rtt_ms=50, srv_netem="", cli_netem="",
                 rate=None, v6=False):
        super().__init__(rtt=rtt_ms, rate=rate, server_netem=srv_netem,
                         client_netem=cli_netem)
        self.tag, self.v6 = tag, v6
        self._clsact = set()

    def up(self):
        super().up()
        self.srv, self.cli = self.server, self.client
        try:
            self.steer_rx(0)
        except BaseException:
            self.down()
            raise
        if self.v6:
            addrs = (self.server_addr6, self.client_addr6)
        else:
            addrs = (self.server_addr, self.client_addr)
        self.SRV, self.CLI = (str(ipaddress.ip_address(a)) for a in addrs)
        self.family = socket.AF_INET6 if self.v6 else socket.AF_INET
        return self

    def steer_rx(self, cpu):
        """Process every packet the client's device receives on `cpu`:
        veth hands them to netif_rx, which with an RPS mask queues them on
        that CPU's backlog, in order."""
        path = "/sys/class/net/%s/queues/rx-0/rps_cpus" % self.client_dev
        self.run(self.cli, "echo %x > %s" % (1 << cpu, path))
        got = int(self.run(self.cli, ["cat", path]).stdout.replace(",", ""),
                  16)
        if got != 1 << cpu:
            raise RuntimeError("%s: %x, wanted %x" % (path, got, 1 << cpu))

    @staticmethod
    def ns_inode(ns):
        return os.stat("/run/netns/%s" % ns).st_ino

    def drop_seq(self, seq, times=1, toward="client"):
        """Drop, on the server's egress (toward the client; or the
        client's, toward the server), the first `times` packets whose TCP
        sequence number is seq and pass the next one (gact determ);
        times=None drops them all (a hole that never fills). The action is
        "trap": the packet is consumed but TCP is told it was sent
        (TC_ACT_SHOT would make TCP resend it at once). Matches IPv4 or
        IPv6 (no extension headers) by the link's family."""
        ns, dev = ((self.srv, self.server_dev) if toward == "client" else
                   (self.cli, self.client_dev))
        if (ns, dev) not in self._clsact:
            self.run(ns, ["tc", "qdisc", "add", "dev", dev, "clsact"])
            self._clsact.add((ns, dev))
        if self.v6:
            match = ("protocol ipv6 prio 2 u32 match ip6 protocol 6 0xff "
                     "match u32 0x%08x 0xffffffff at 44" % seq)
        else:
            match = ("protocol ip prio 1 u32 match ip protocol 6 0xff "
                     "match u32 0x%08x 0xffffffff at 24" % seq)
        act = "action trap"
        if times is not None:
            act += " random determ pass %d" % (times + 1)
        self.run(ns, "tc filter add dev %s egress %s %s" % (dev, match, act))

    def undrop(self):
        """Remove every drop filter."""
        for ns, dev in self._clsact:
            self.run(ns, ["tc", "qdisc", "del", "dev", dev, "clsact"])
        self._clsact = set()

    def capture(self, path):
        """netlab.Capture of TCP at the receiver (the client's interface),
        without --immediate-mode (see netlab.Capture)."""
        return Capture(self.cli, self.client_dev, path, "tcp",
                       immediate=False, buffer_kib=32768)


def in_netns(ns):
    """Context: switch this thread into namespace ns (setns) and back."""
    class _C:
        def __enter__(self):
            self.old = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
            fd = os.open("/run/netns/%s" % ns, os.O_RDONLY)
            _setns(fd)
            os.close(fd)

        def __exit__(self, *a):
            _setns(self.old)
            os.close(self.old)
    return _C()


# The receiver's own drops of data it had queued out of order: a capture
# sees those segments arrive and counts them held, the kernel (and the
# probe, which discards the range) does not.
OFO_DROPS = ("TCPOFODrop", "OfoPruned", "TCPRcvQDrop", "PruneCalled",
             "RcvPruned", "TCPZeroWindowDrop", "TCPBacklogDrop")


def tcp_ext(ns):
    """The TcpExt counters (/proc/net/netstat) of namespace ns."""
    with in_netns(ns):
        lines = open("/proc/thread-self/net/netstat").read().splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            return dict(zip(names.split()[1:], map(int, values.split()[1:])))
    raise RuntimeError("no TcpExt line in /proc/net/netstat")


def ofo_drops(before, after):
    """The nonzero OFO_DROPS deltas between two tcp_ext() readings."""
    return {k: after.get(k, 0) - before.get(k, 0) for k in OFO_DROPS
            if after.get(k, 0) != before.get(k, 0)}


def _setns(fd):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def capture_holds(pkts, src, sport, dst, dport, pending=False):
    """From a capture at the receiver (netlab.read_pcap): for every data
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

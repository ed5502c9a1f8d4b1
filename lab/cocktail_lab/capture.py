"""Packet captures and kernel traces, and their analysis.

    from cocktail_lab.capture import Capture, read_pcap, first_flight

    with Capture(t.router, t.capture_dev, "/tmp/x.pcap", "tcp port 80") as cap:
        ...
    pkts = read_pcap(cap.path)
    fl = first_flight(pkts, t.server_addr, after=start - 1)

Capture runs tcpdump inside a namespace; read_pcap (dpkt) turns a capture
into Pkt objects (one per TCP segment); the analysis functions work on
lists of Pkt: flights after idle, spacing, retransmissions, delivery
rate. Trace enables tracefs events for the length of a with block.
"""
import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import dpkt

# tcpdump writes here (tmpfs) and the file is copied to its path at the end
TMP = "/run/cocktail_lab"


# ------------------------------------------------------------------ capture

class Capture:
    """tcpdump -s 128 -w PATH on DEV in namespace NS with a BPF filter.
    Entering waits until tcpdump is really capturing ("listening on" on its
    stderr); leaving stops it (SIGINT) and records `dropped` (packets the
    kernel dropped) and `count`. immediate=False leaves out tcpdump's
    --immediate-mode (one wakeup per packet): the probe's truth tests saw
    hold times of a few segments off by 4-8 ms with it under TCG, and
    none without. buffer_kib: tcpdump -B (its ring buffer size)."""

    def __init__(self, ns, dev, path, bpf="", snaplen=128, timeout=30,
                 immediate=True, buffer_kib=None):
        self.immediate, self.buffer_kib = immediate, buffer_kib
        self.ns, self.dev, self.path = ns, dev, str(path)
        self.bpf, self.snaplen, self.timeout = bpf, snaplen, timeout
        self.dropped = None
        self.count = None
        self.err = []

    def __enter__(self):
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        if os.path.exists(self.path):
            os.unlink(self.path)
        # tcpdump writes to a local tmpfs file, copied to self.path at the
        # end: writes straight into the VM's shared checkout were seen to
        # lose the tail of the capture.
        os.makedirs(TMP, exist_ok=True)
        self.tmp = "%s/%d-%s" % (TMP, os.getpid(),
                                    os.path.basename(self.path))
        if os.path.exists(self.tmp):
            os.unlink(self.tmp)
        # --immediate-mode: without it packets wait in a TPACKET_V3 ring
        # block until it retires, and the last block is lost at SIGINT.
        cmd = ["ip", "netns", "exec", self.ns, "tcpdump", "-n", "-U"] + \
            (["--immediate-mode"] if self.immediate else []) + \
            (["-B", str(self.buffer_kib)] if self.buffer_kib else []) + \
            ["-Z", "root", "-i", self.dev, "-s", str(self.snaplen), "-w",
             self.tmp]
        if self.bpf:
            cmd.append(self.bpf)
        self.p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        ready = threading.Event()

        def pump():
            for line in self.p.stderr:
                self.err.append(line)
                if "listening on" in line:
                    ready.set()
            ready.set()
        self._t = threading.Thread(target=pump, daemon=True)
        self._t.start()
        if not ready.wait(self.timeout) or self.p.poll() is not None:
            self.p.kill()
            raise RuntimeError("tcpdump did not start: %s" % "".join(self.err))
        # "listening on" is printed after the socket is bound; the pcap
        # header is written once the first packet or the flush comes. Poll
        # briefly for the file too (it is created at open).
        end = time.monotonic() + self.timeout
        while not os.path.exists(self.tmp) and time.monotonic() < end:
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        # let the last packets reach the socket; without --immediate-mode
        # they sit in a ring block that the kernel retires only after
        # tcpdump's 1 s timeout, and a block not retired at SIGINT is lost
        # without counting as dropped (the probe's truth tests saw the
        # flow's last 30-60 segments missing)
        time.sleep(0.2 if self.immediate else 1.5)
        self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self._t.join(5)
        text = "".join(self.err)
        m = re.search(r"(\d+) packets? dropped by kernel", text)
        self.dropped = int(m.group(1)) if m else None
        m = re.search(r"(\d+) packets? captured", text)
        self.count = int(m.group(1)) if m else None
        shutil.copyfile(self.tmp, self.path)
        os.unlink(self.tmp)
        if exc[0] is None and self.count is not None:
            n = len(read_pcap(self.path))
            if n < self.count:
                raise RuntimeError("capture %s incomplete: tcpdump captured "
                                   "%d packets, the file holds %d" %
                                   (self.path, self.count, n))

    def packets(self):
        return read_pcap(self.path)


# ------------------------------------------------------------------ pcap

class Pkt:
    """One TCP segment from a capture. seq/ack are raw 32-bit values;
    flags is the TCP flag byte (see FIN/SYN/RST/PSH/ACK); plen the TCP
    payload length (from the IP length, so right even with -s 128); opts
    the TCP options as (kind, bytes) pairs (with read_pcap's want_opts,
    else None); ipver 4 or 6."""
    __slots__ = ("ts", "src", "dst", "sport", "dport", "seq", "ack", "flags",
                 "win", "plen", "opts", "ipver")

    def __repr__(self):
        return "Pkt(%.6f %s:%d>%s:%d seq=%d ack=%d f=%#x len=%d)" % (
            self.ts, self.src, self.sport, self.dst, self.dport, self.seq,
            self.ack, self.flags, self.plen)

    @property
    def end(self):
        """Sequence number after this segment (32-bit wrap)."""
        return (self.seq + self.plen + (1 if self.flags & (SYN | FIN) else 0)
                ) & 0xFFFFFFFF


FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

# IPv6 extension headers a TCP segment may follow (hop-by-hop, routing,
# destination options); anything else (a fragment, AH, ESP) is skipped
_IP6_EXT_OK = {0, 43, 60}
_RAW_IP = (101, 12, 228, 229)


def tcp_opts(raw):
    """TCP options as a list of (kind, bytes): no NOPs, nothing after the
    end-of-options mark or a malformed option."""
    out = []
    for o in dpkt.tcp.parse_opts(bytes(raw)):
        if o is None or o[0] == dpkt.tcp.TCP_OPT_EOL:
            break
        if o[0] != dpkt.tcp.TCP_OPT_NOP:
            out.append((o[0], bytes(o[1])))
    return out


def _network(linktype, frame):
    """The IP/IP6 packet of a frame (None for anything else)."""
    try:
        if linktype == 1:
            net = dpkt.ethernet.Ethernet(frame).data
        elif linktype == 113:
            net = dpkt.sll.SLL(frame).data
        elif linktype == 276:
            net = dpkt.sll2.SLL2(frame).data
        elif linktype in _RAW_IP:
            if not frame:
                return None
            net = (dpkt.ip.IP if frame[0] >> 4 == 4 else dpkt.ip6.IP6)(frame)
        else:
            raise ValueError("unsupported link type %d" % linktype)
    except dpkt.UnpackError:
        return None
    return net if isinstance(net, (dpkt.ip.IP, dpkt.ip6.IP6)) else None


def _pkt(ts, net, want_opts):
    """A Pkt for a TCP segment in NET, or None."""
    tcp = net.data
    if not isinstance(tcp, dpkt.tcp.TCP):
        return None
    if isinstance(net, dpkt.ip.IP):
        if net.p != 6 or net.offset:
            return None
        src, dst = socket.inet_ntoa(net.src), socket.inet_ntoa(net.dst)
        l4len, ver = net.len - net.hl * 4, 4
    else:
        exts = net.all_extension_headers
        if net.p != 6 or any(e.__class__ not in _ip6_ext_classes()
                             for e in exts):
            return None
        src = str(ipaddress.IPv6Address(net.src))
        dst = str(ipaddress.IPv6Address(net.dst))
        l4len, ver = net.plen - sum(e.length for e in exts), 6
    p = Pkt()
    p.ts, p.src, p.dst, p.sport, p.dport = ts, src, dst, tcp.sport, tcp.dport
    p.seq, p.ack, p.flags, p.win = tcp.seq, tcp.ack, tcp.flags & 0xFF, tcp.win
    p.plen = max(0, l4len - tcp.off * 4)
    p.ipver = ver
    p.opts = tcp_opts(tcp.opts) if want_opts else None
    return p


def _ip6_ext_classes():
    return tuple(dpkt.ip6.EXT_HDRS_CLS[k] for k in _IP6_EXT_OK)


def read_pcap(path, want_opts=False):
    """Read a classic pcap file (any byte order, µs or ns timestamps; link
    types Ethernet, raw IP and Linux cooked SLL/SLL2) and return the TCP
    segments over IPv4/IPv6 as Pkt objects, in file order (with
    want_opts, each with its TCP options)."""
    out = []
    with open(path, "rb") as f:
        try:
            r = dpkt.pcap.Reader(f)
        except (ValueError, dpkt.UnpackError) as e:
            raise ValueError("%s: not a classic pcap file (%s)" % (path, e))
        linktype = r.datalink() & 0x0FFFFFFF
        if linktype not in (1, 113, 276) + _RAW_IP:
            raise ValueError("%s: unsupported link type %d" % (path, linktype))
        try:
            for ts, frame in r:
                net = _network(linktype, frame)
                p = _pkt(float(ts), net, want_opts) if net is not None \
                    else None
                if p is not None:
                    out.append(p)
        except dpkt.NeedData:
            pass    # a record cut short at the end of the file
    return out


# ------------------------------------------------------------------ analysis

def seq_after(a, b):
    """a > b in 32-bit sequence space (False when a == b)."""
    return 0 < ((a - b) & 0xFFFFFFFF) < 0x80000000


def seq_points(pkts, server, port, mss, after=0.0):
    """The server's data segments sent at or after time AFTER, for a
    sequence/time plot: (seconds since the first, end of the segment in
    segments of MSS from the first's start, retransmitted: its bytes all
    sent before)."""
    data = [p for p in pkts if p.src == server and p.sport == port and
            p.plen > 0 and p.ts >= after]
    if not data:
        return []
    t0, base = data[0].ts, data[0].seq
    high = None
    out = []
    for p in data:
        rtx = high is not None and not seq_after(p.end, high)
        if not rtx:
            high = p.end
        out.append((p.ts - t0, ((p.end - base) & 0xFFFFFFFF) / float(mss),
                    rtx))
    return out


def data_segments(pkts, src, sport=None):
    """Segments with payload sent by address src (and port sport)."""
    return [p for p in pkts if p.src == src and p.plen > 0 and
            (sport is None or p.sport == sport)]


def flights(pkts, sender, idle=0.3, sport=None, dport=None):
    """Every first flight after idle: a run of the sender's data segments
    that starts after at least `idle` seconds without data from it (or
    with the first data segment of a connection) and ends before the first
    ACK from the peer (same connection) that covers any of them (ack beyond
    the flight's first sequence number). The capture must see both
    directions on the sender's side of the shaping (router interface
    toward the sender), where ACKs appear when the sender gets them.
    Returns a list of lists of Pkt."""
    out = []
    last_data = {}
    cur = None
    for p in sorted(pkts, key=lambda q: q.ts):
        if (sport is not None and p.sport != sport and p.dport != sport) or \
                (dport is not None and p.dport != dport and p.sport != dport):
            continue
        if p.src == sender and p.plen > 0:
            key = (p.sport, p.dst, p.dport)
            prev = last_data.get(key)
            last_data[key] = p.ts
            if cur is not None and cur["key"] == key:
                cur["segs"].append(p)
                continue
            if prev is None or p.ts - prev >= idle:
                cur = {"key": key, "first": p.seq, "segs": [p]}
                out.append(cur["segs"])
            continue
        if cur is not None and p.dst == sender and p.flags & ACK and \
                (p.dport, p.src, p.sport) == cur["key"] and \
                seq_after(p.ack, cur["first"]):
            cur = None
    return out


def first_flight(pkts, sender, after=None, idle=0.3, sport=None, dport=None):
    """The first flight (see flights) that starts at or after time
    `after` (a pcap timestamp, i.e. time.time() of the VM), or the first of
    the capture."""
    for f in flights(pkts, sender, idle, sport, dport):
        if after is None or f[0].ts >= after:
            return f
    return []


def flight_after(pkts, sender, after, sport=None, dport=None):
    """The first flight after a pause, not split by gaps: the sender's data
    segments (of the connection sport/dport) seen at or after time `after`
    (e.g. when the peer sent its request), up to the first ACK from the
    peer that covers any of them. Raises ValueError when the capture holds
    no such ACK (a flight cut short by the end of the capture)."""
    segs = []
    for p in sorted(pkts, key=lambda q: q.ts):
        if p.ts < after or \
                (sport is not None and sport not in (p.sport, p.dport)) or \
                (dport is not None and dport not in (p.sport, p.dport)):
            continue
        if p.src == sender and p.plen > 0:
            if not segs or (p.sport, p.dst, p.dport) == key:
                key = (p.sport, p.dst, p.dport)
                segs.append(p)
            continue
        if segs and p.dst == sender and p.flags & ACK and \
                (p.dport, p.src, p.sport) == key and \
                seq_after(p.ack, segs[0].seq):
            return segs
    if segs:
        raise ValueError("the capture ends before an ACK for the flight of "
                         "%d segments" % len(segs))
    return segs


def idle_before(pkts, sender, flight):
    """Seconds between the sender's last data segment (same connection)
    before `flight` and the flight's first segment, as seen at the
    capture point (None when the capture has none before it)."""
    f0 = flight[0]
    key = (f0.sport, f0.dst, f0.dport)
    last = None
    for p in pkts:
        if p.src == sender and p.plen > 0 and p.ts < f0.ts and \
                (p.sport, p.dst, p.dport) == key:
            last = p.ts if last is None else max(last, p.ts)
    return None if last is None else f0.ts - last


def ack_rate(pkts, sender, before, rtt, sport=None, dport=None):
    """Pre-idle delivery rate (bytes/s) seen at the capture point, from the
    sender's last response before time `before` (its data sent after the
    peer's last request): the most data bytes the peer ACKed in any
    window of two round trips (`rtt` seconds each) of that response,
    divided by the window (the whole response when it is shorter). A
    windowed max, like the rate the sender keeps: a loss or a guest stall
    near the end of the response does not drag it down, and a window of
    fixed length does not inflate it when a stalled peer bunches ACKs."""
    mine = lambda p: ((sport is None or sport in (p.sport, p.dport)) and
                      (dport is None or dport in (p.sport, p.dport)))
    pkts = sorted((p for p in pkts if p.ts < before and mine(p)),
                  key=lambda q: q.ts)
    data = [p for p in pkts if p.src == sender and p.plen > 0]
    if not data:
        raise ValueError("no data from %s before %.3f" % (sender, before))
    reqs = [p for p in pkts if p.dst == sender and p.plen > 0 and
            p.ts < data[-1].ts]
    start = data[0]
    if reqs:
        start = next(p for p in data if p.ts > reqs[-1].ts)
    adv = []
    for p in pkts:
        if p.dst == sender and p.flags & ACK and p.ts > start.ts and \
                seq_after(p.ack, start.seq) and \
                (not adv or seq_after(p.ack, adv[-1].ack)):
            adv.append(p)
    if len(adv) < 3 or adv[-1].ts - adv[0].ts <= 0:
        raise ValueError("too few ACKs for a delivery rate (%d)" % len(adv))
    win = 2 * rtt
    if adv[-1].ts - adv[0].ts <= win:
        return ((adv[-1].ack - adv[0].ack) & 0xFFFFFFFF) / \
            (adv[-1].ts - adv[0].ts)
    best, j = 0, 0
    for i, a in enumerate(adv):
        if a.ts + win > adv[-1].ts:
            break
        j = max(j, i)
        while j + 1 < len(adv) and adv[j + 1].ts <= a.ts + win:
            j += 1
        best = max(best, (adv[j].ack - a.ack) & 0xFFFFFFFF)
    return best / win


def mean_spacing(segs):
    """(t_last - t_first) / (n - 1): the mean time per segment of a flight
    (immune to segments released in pairs)."""
    if len(segs) < 2:
        raise ValueError("spacing of fewer than 2 segments")
    return (segs[-1].ts - segs[0].ts) / (len(segs) - 1)


def gaps(segs):
    """Time between consecutive segments (seconds)."""
    return [b.ts - a.ts for a, b in zip(segs, segs[1:])]


def pair_gaps(segs):
    """Half the time between segments i and i+2: the per-segment spacing
    measured over two segments. Internal pacing under a slow (TCG) guest
    emits segments in pairs (the pacing hrtimer fires late and
    tcp_update_skb_after_send() credits up to half a slot), which makes
    single gaps alternate between ~0 and ~2x the pacing interval; this
    measure is immune to that and equal to gaps() for an even spacing."""
    return [(c.ts - a.ts) / 2 for a, c in zip(segs, segs[2:])]


def median(xs):
    xs = sorted(xs)
    if not xs:
        raise ValueError("median of nothing")
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _retransmitted(pkts, sender, sport=None):
    """Data segments from sender whose bytes were all sent before (per
    connection), in time order."""
    high = {}
    for p in sorted(pkts, key=lambda q: q.ts):
        if p.src != sender or p.plen == 0 or (sport is not None and
                                               p.sport != sport):
            continue
        key = (p.sport, p.dst, p.dport)
        end = p.end
        h = high.get(key)
        if h is not None and not seq_after(end, h):
            yield p
            continue
        high[key] = end


def retransmissions(pkts, sender, sport=None):
    """Data segments from sender whose bytes were all sent before (per
    connection), i.e. retransmissions seen on the wire."""
    return sum(1 for _ in _retransmitted(pkts, sender, sport))


def resent(pkts, segs):
    """How many of SEGS (data segments of one connection, e.g. a flight)
    the sender sent again later in PKTS: a segment counts when a later
    retransmission (capture: bytes all sent before) overlaps its bytes.
    On a path whose only loss is at a bottleneck queue, the segments of
    SEGS that queue dropped."""
    if not segs:
        return 0
    key = (segs[0].sport, segs[0].dst, segs[0].dport)
    later = [p for p in _retransmitted(pkts, segs[0].src, segs[0].sport)
             if (p.sport, p.dst, p.dport) == key and p.ts > segs[0].ts]
    return sum(1 for s in segs
               if any(seq_after(p.end, s.seq) and seq_after(s.end, p.seq)
                      and p.ts > s.ts for p in later))


def max_in_flight(pkts, sender, sport=None):
    """The most bytes SENDER had sent and not yet seen acknowledged at
    once, per connection, as the capture shows them: the highest data
    sequence end sent minus the highest ACK from the peer before it.
    The capture must see both directions on the sender's side of the
    shaping (where ACKs appear when the sender gets them). A
    connection's first ACK for data counts from its first data segment
    (before it, nothing was acknowledged). Returns the largest over the
    connections, 0 without data."""
    high, acked, most = {}, {}, 0
    for p in sorted(pkts, key=lambda q: q.ts):
        if p.src == sender and p.plen > 0:
            if sport is not None and p.sport != sport:
                continue
            key = (p.sport, p.dst, p.dport)
            if key not in high or seq_after(p.end, high[key]):
                high[key] = p.end
            acked.setdefault(key, p.seq)
            most = max(most, (high[key] - acked[key]) & 0xFFFFFFFF)
        elif p.dst == sender and p.flags & ACK:
            key = (p.dport, p.src, p.sport)
            if key in acked and seq_after(p.ack, acked[key]):
                acked[key] = p.ack
    return most


def advertised_window(pkts, src, dport=None):
    """The largest receive window SRC advertised (bytes), per connection
    scaled by the shift its SYN announced when the peer's SYN announced
    one too (RFC 7323); SYNs themselves are never scaled.  The packets
    must carry their options (read_pcap(want_opts=True)); with DPORT,
    only SRC's segments to that port.  0 without any."""
    shift, peer_ws, most = {}, set(), 0
    for p in sorted(pkts, key=lambda q: q.ts):
        if p.flags & SYN:
            ws = [o[1][0] for o in (p.opts or ()) if o[0] == 3 and o[1]]
            if p.src == src:
                shift[(p.sport, p.dst, p.dport)] = min(ws[0], 14) \
                    if ws else None
            elif ws:
                peer_ws.add((p.dport, p.src, p.sport))
            continue
        if p.src != src or (dport is not None and p.dport != dport):
            continue
        key = (p.sport, p.dst, p.dport)
        sh = shift.get(key) if key in peer_ws else None
        most = max(most, p.win << (sh or 0))
    return most


def loss_episodes(pkts, sender, gap, sport=None):
    """Retransmissions from sender grouped into loss episodes: a
    retransmission more than GAP seconds after the previous one starts a
    new episode (a recovery repairs its losses within about a round trip,
    so GAP of two round trips separates one congestion event from the
    next). Returns [(first ts, last ts, retransmissions)]."""
    eps = []
    for p in _retransmitted(pkts, sender, sport):
        if eps and p.ts - eps[-1][1] <= gap:
            eps[-1] = (eps[-1][0], p.ts, eps[-1][2] + 1)
        else:
            eps.append((p.ts, p.ts, 1))
    return eps


# ------------------------------------------------------------------ tracefs

def tracefs():
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.isdir(d + "/events"):
            return d
    subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
                   check=False)
    return "/sys/kernel/tracing"


class Trace:
    """Enable tracepoint events (e.g. "tcp_cocktail/cocktail_restart") for the
    duration of a with block, in a buffer of BUFFER_KB per CPU when given;
    mark() writes a line into the trace.  Afterwards .text holds the trace
    buffer as read and .lines its event lines.

    Enabling or disabling an event patches kernel text on every CPU (a
    static call, text_poke_bp's IPIs), and so does the scheduler hook that
    records task names (the record-cmd option), which is therefore turned
    off: lines then name tasks by pid only.  With KEEP the events stay
    enabled after the block (and one already enabled is not touched), so a
    test session patches text once per event rather than twice per block:
    under TCG, a guest whose second vCPU missed an IPI has hung exactly
    there."""

    def __init__(self, *events, buffer_kb=None, keep=False):
        self.events = events
        self.buffer_kb = buffer_kb
        self.keep = keep
        self.dir = None
        self.text, self.lines = "", []

    def _enable(self, e, on):
        f = Path(self.dir, "events", e, "enable")
        if f.read_text().strip() != ("1" if on else "0"):
            f.write_text("1\n" if on else "0\n")

    def __enter__(self):
        self.dir = self.dir or tracefs()
        opt = Path(self.dir, "options", "record-cmd")
        if opt.exists() and opt.read_text().strip() != "0":
            opt.write_text("0\n")
        if self.buffer_kb:
            Path(self.dir, "buffer_size_kb").write_text("%d\n" %
                                                        self.buffer_kb)
        Path(self.dir, "trace").write_text("")
        for e in self.events:
            self._enable(e, True)
        Path(self.dir, "tracing_on").write_text("1\n")
        return self

    def mark(self, text):
        Path(self.dir, "trace_marker").write_text(text)

    def __exit__(self, *exc):
        if not self.keep:
            for e in self.events:
                self._enable(e, False)
        self.text = Path(self.dir, "trace").read_text()
        self.lines = [ln for ln in self.text.splitlines()
                      if ln and not ln.startswith("#")]

"""netlab: shaped namespace topologies, packet captures and their analysis
for the VM tests and the bench (stdlib only; run as root inside the VM).

    from netlab import Topo, Capture, read_pcap, first_flight

    with Topo(rtt=100, rate="10mbit") as t:
        srv = t.start(t.server, ["python3", KACONN, "server", "--cc", "cubic"],
                      ready=r"^listening")
        with Capture(t.router, t.capture_dev, "/tmp/x.pcap",
                     "tcp port 8000") as cap:
            res = t.ka_client(segments=60, warm_cwnd=30, idle=2)
        pkts = read_pcap(cap.path)
        fl = first_flight(pkts, t.server_addr, after=res["request_time"] - 1)

Pair(...) is the simplest topology: two namespaces joined by one veth pair
(no router), netem on each side's egress; same interface as Topo.

Topo(...) wraps scripts/netem-topo (keyword arguments map to its options:
rtt, rate, limit, red, loss, loss_dir, reorder, reorder_corr, reorder_gap,
reorder_dir, senders, dumbbell, mtu). Attributes: name, info (the JSON of
`netem-topo up`), server/client/router (namespace names of pair 0),
server_addr/client_addr (IPv4), server_addr6/client_addr6, capture_ns and
capture_dev (router interface toward server 0: sender timing), pairs.
"""
import json
import os
import queue
import re
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NETEM_TOPO = str(REPO / "scripts" / "netem-topo")
KACONN = str(REPO / "lab" / "cocktail_lab" / "traffic.py")


# ------------------------------------------------------------------ topology

class Bg:
    """A background process in a namespace (see Topo.start)."""

    def __init__(self, popen, name):
        self.p = popen
        self.name = name
        self.lines = queue.Queue()
        self.out = []
        self._t = threading.Thread(target=self._pump, daemon=True)
        self._t.start()

    def _pump(self):
        for line in self.p.stdout:
            self.out.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def wait_line(self, pattern, timeout=30):
        rx = re.compile(pattern)
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("%s: no line matching %r within %ss; "
                                   "output: %r" % (self.name, pattern,
                                                   timeout, self.out))
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError("%s exited (%s) before printing %r; "
                                   "output: %r" % (self.name, self.p.wait(),
                                                   pattern, self.out))
            if rx.search(line):
                return line

    def stop(self, timeout=5):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        return self.p.returncode


class Topo:
    """Context manager around `scripts/netem-topo up/down`."""

    def __init__(self, **opts):
        self.opts = opts
        self.info = None
        self.procs = []

    # -- lifecycle
    def args(self):
        a = []
        for k, v in self.opts.items():
            if v is None or v is False:
                continue
            flag = "--" + k.replace("_", "-")
            if v is True:
                a.append(flag)
            else:
                a += [flag, str(v)]
        return a

    def up(self):
        p = subprocess.run([NETEM_TOPO, "up"] + self.args(), text=True,
                           capture_output=True)
        if p.returncode:
            raise RuntimeError("netem-topo up %s failed (%d): %s" %
                               (" ".join(self.args()), p.returncode,
                                p.stderr.strip()))
        self.info = json.loads(p.stdout)
        self.name = self.info["name"]
        self.pairs = self.info["pairs"]
        p0 = self.pairs[0]
        self.server, self.client = p0["server_ns"], p0["client_ns"]
        self.router = self.info["routers"][0]
        self.server_addr, self.client_addr = p0["server_addr"], p0["client_addr"]
        self.server_addr6 = p0["server_addr6"]
        self.client_addr6 = p0["client_addr6"]
        self.capture_ns, self.capture_dev = p0["capture_ns"], p0["capture_dev"]
        return self

    def down(self):
        for b in self.procs:
            b.stop()
        self.procs = []
        if self.info:
            subprocess.run([NETEM_TOPO, "down", self.name], check=True)
            self.info = None

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()

    # -- commands in namespaces
    @staticmethod
    def nscmd(ns, cmd):
        if isinstance(cmd, str):
            cmd = ["sh", "-c", cmd]
        return ["ip", "netns", "exec", ns] + list(cmd)

    def run(self, ns, cmd, check=True, timeout=600, **kw):
        """Run cmd (list, or str for sh -c) in namespace ns; return the
        CompletedProcess (text). Raises with stderr on failure if check."""
        p = subprocess.run(self.nscmd(ns, cmd), text=True, capture_output=True,
                           timeout=timeout, **kw)
        if check and p.returncode:
            raise RuntimeError("in %s: %s -> %d\n%s%s" % (
                ns, cmd, p.returncode, p.stdout, p.stderr))
        return p

    def start(self, ns, cmd, ready=None, timeout=30):
        """Start cmd in ns in the background (stdout+stderr captured). With
        ready (a regex), wait until it prints a matching line."""
        p = subprocess.Popen(self.nscmd(ns, cmd), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        b = Bg(p, "%s:%s" % (ns, cmd))
        self.procs.append(b)
        if ready:
            b.wait_line(ready, timeout)
        return b

    def stop(self, bg):
        bg.stop()
        if bg in self.procs:
            self.procs.remove(bg)

    def sysctl(self, ns, key, value=None):
        if value is None:
            return self.run(ns, ["sysctl", "-n", key]).stdout.strip()
        self.run(ns, ["sysctl", "-qw", "%s=%s" % (key, value)])
        return str(value)

    def qdiscs(self, ns, dev):
        return json.loads(self.run(ns, ["tc", "-j", "qdisc", "show", "dev",
                                        dev]).stdout)

    # -- keep-alive traffic (tests/vm/kaconn.py)
    def ka_server(self, port=8000, cc=None, clamp=0, pair=0, sndbuf=None):
        cmd = [sys.executable, KACONN, "server", "--port", str(port)]
        if cc:
            cmd += ["--cc", cc]
        if clamp:
            cmd += ["--clamp", str(clamp)]
        if sndbuf is not None:
            cmd += ["--sndbuf", str(sndbuf)]
        return self.start(self.pairs[pair]["server_ns"], cmd,
                          ready=r"^listening", timeout=60)

    def ka_client(self, port=8000, pair=0, timeout=600, **kw):
        """Run kaconn.py client against pair's server; keyword arguments
        map to its options (segments=60, warm_cwnd=30, idle=2, idle_rto=1.5,
        rounds, rcvbuf, clamp, warm_segs, warm_max). Returns its JSON."""
        p = self.pairs[pair]
        cmd = [sys.executable, KACONN, "client", "--host", p["server_addr"],
               "--port", str(port)]
        for k, v in kw.items():
            if v is None or v is False:
                continue
            cmd.append("--" + k.replace("_", "-"))
            if v is not True:
                cmd.append(str(v))
        r = self.run(p["client_ns"], cmd, check=False, timeout=timeout)
        if r.returncode not in (0, 3):
            raise RuntimeError("kaconn client failed (%d): %s" %
                               (r.returncode, r.stderr))
        return json.loads(r.stdout)


class Pair(Topo):
    """Two namespaces joined by one veth pair, no router: the receiver gets
    the sender's own skbs (TCP's clones: the receive side's backlog cannot
    coalesce them, and no forwarding hop copies or merges anything). Veth
    offloads off and gso_max_segs 1 (TCP builds GSO skbs whatever ethtool
    says, and splits them only after clsact and the qdisc: with one MSS per
    skb, netem and a clsact filter act on single segments). Netem on each
    side's egress: delay RTT/2, plus `rate` and `server_netem` (any netem
    words, e.g. "loss 1%", "reorder 100% gap 10", "1ms" for jitter) toward
    the client and `client_netem` toward the server; no qdisc at all when
    there is nothing to shape. Same interface as Topo (run, start, sysctl,
    server/client, server_addr/client_addr 198.18.100.1/.2,
    server_addr6/client_addr6 fd00:cc:100::1/::2 (nodad), server_dev
    "vs", client_dev "vc", capture_ns/capture_dev = the client's side)."""

    def __init__(self, rtt=50, rate=None, server_netem="", client_netem="",
                 limit=10000, name=None):
        super().__init__()
        self.rtt, self.rate, self.limit = rtt, rate, limit
        self.server_netem, self.client_netem = server_netem, client_netem
        self.want_name = name

    def up(self):
        name = self.want_name or "np" + os.urandom(3).hex()
        self.server, self.client = name + "-s", name + "-c"
        self.router = None
        self.server_addr, self.client_addr = "198.18.100.1", "198.18.100.2"
        self.server_addr6, self.client_addr6 = "fd00:cc:100::1", \
            "fd00:cc:100::2"
        self.server_dev, self.client_dev = "vs", "vc"
        self.capture_ns, self.capture_dev = self.client, "vc"
        self.info = {"name": name, "namespaces": [self.server, self.client]}
        self.name = name
        self.pairs = [{"server_ns": self.server, "client_ns": self.client,
                       "server_addr": self.server_addr,
                       "client_addr": self.client_addr,
                       "server_addr6": self.server_addr6,
                       "client_addr6": self.client_addr6,
                       "server_dev": "vs", "client_dev": "vc",
                       "receiver_ns": self.client, "receiver_dev": "vc"}]
        try:
            self._build()
        except BaseException:
            self.down()
            raise
        return self

    def _ip(self, *args):
        p = subprocess.run(["ip"] + list(args), text=True,
                           capture_output=True)
        if p.returncode:
            raise RuntimeError("ip %s: %s" % (" ".join(args),
                                              p.stderr.strip()))

    def _build(self):
        for ns in (self.server, self.client):
            self._ip("netns", "add", ns)
            self._ip("-n", ns, "link", "set", "lo", "up")
            self.sysctl(ns, "net.ipv6.conf.all.accept_dad", 0)
            self.sysctl(ns, "net.ipv6.conf.default.accept_dad", 0)
        self._ip("link", "add", "vs", "netns", self.server, "gso_max_segs",
                 "1", "type", "veth", "peer", "name", "vc", "netns",
                 self.client, "gso_max_segs", "1")
        for ns, dev, a4, a6 in ((self.server, "vs", self.server_addr,
                                 self.server_addr6),
                                (self.client, "vc", self.client_addr,
                                 self.client_addr6)):
            self._ip("-n", ns, "addr", "add", a4 + "/24", "dev", dev)
            self._ip("-n", ns, "-6", "addr", "add", a6 + "/64", "dev", dev,
                     "nodad")
            self._ip("-n", ns, "link", "set", dev, "up")
            self.run(ns, ["ethtool", "-K", dev, "tso", "off", "gso", "off",
                          "gro", "off"])
        if not (self.rtt or self.rate or self.server_netem or
                self.client_netem):
            return
        half = "%.3fms" % (self.rtt / 2.0)
        rate = "rate %s" % self.rate if self.rate else ""
        self.run(self.server, "tc qdisc add dev vs root netem limit %d delay "
                 "%s %s %s" % (self.limit, half, rate, self.server_netem))
        self.run(self.client, "tc qdisc add dev vc root netem limit %d delay "
                 "%s %s" % (self.limit, half, self.client_netem))

    def down(self):
        for b in self.procs:
            b.stop()
        self.procs = []
        if self.info:
            for ns in self.info["namespaces"]:
                subprocess.run(["ip", "netns", "del", ns],
                               capture_output=True)
            self.info = None


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
        os.makedirs("/run/netlab", exist_ok=True)
        self.tmp = "/run/netlab/%d-%s" % (os.getpid(),
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
        import shutil
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
    payload length (from the IP length, so right even with -s 128)."""
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


def _ip6(b):
    import ipaddress
    return str(ipaddress.IPv6Address(b))


def _tcp_opts(raw):
    """TCP options as a list of (kind, bytes)."""
    out, i = [], 0
    while i < len(raw):
        kind = raw[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(raw):
            break
        ln = raw[i + 1]
        if ln < 2:
            break
        out.append((kind, bytes(raw[i + 2:i + ln])))
        i += ln
    return out


def read_pcap(path, want_opts=False):
    """Parse a classic pcap file (any byte order, µs or ns timestamps;
    link types Ethernet, raw IP and Linux cooked SLL/SLL2) and return the
    TCP segments over IPv4/IPv6 as Pkt objects, in file order."""
    data = Path(path).read_bytes()
    if len(data) < 24:
        raise ValueError("%s: not a pcap file (too short)" % path)
    magic = data[:4]
    table = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
             b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}
    if magic not in table:
        raise ValueError("%s: not a classic pcap file (magic %r)" %
                         (path, magic))
    end, scale = table[magic]
    linktype = struct.unpack(end + "I", data[20:24])[0] & 0x0FFFFFFF
    rec = struct.Struct(end + "IIII")
    off, out = 24, []
    while off + 16 <= len(data):
        sec, frac, incl, _orig = rec.unpack_from(data, off)
        off += 16
        frame = memoryview(data)[off:off + incl]
        off += incl
        if len(frame) < incl:
            break
        ts = sec + frac * scale
        # link layer -> (ethertype, offset of the network header)
        if linktype == 1:  # Ethernet
            if len(frame) < 14:
                continue
            etype, l3 = struct.unpack_from("!H", frame, 12)[0], 14
            while etype in (0x8100, 0x88A8) and len(frame) >= l3 + 4:
                etype = struct.unpack_from("!H", frame, l3 + 2)[0]
                l3 += 4
        elif linktype == 113:  # Linux SLL
            if len(frame) < 16:
                continue
            etype, l3 = struct.unpack_from("!H", frame, 14)[0], 16
        elif linktype == 276:  # Linux SLL2
            if len(frame) < 20:
                continue
            etype, l3 = struct.unpack_from("!H", frame, 0)[0], 20
        elif linktype in (101, 12, 228, 229):  # raw IP
            if not len(frame):
                continue
            v = frame[0] >> 4
            etype, l3 = (0x0800 if v == 4 else 0x86DD), 0
        else:
            raise ValueError("%s: unsupported link type %d" % (path, linktype))
        if etype == 0x0800:
            if len(frame) < l3 + 20:
                continue
            ihl = (frame[l3] & 15) * 4
            tot = struct.unpack_from("!H", frame, l3 + 2)[0]
            if frame[l3 + 9] != 6:
                continue
            frag = struct.unpack_from("!H", frame, l3 + 6)[0]
            if frag & 0x1FFF:
                continue
            src = "%d.%d.%d.%d" % tuple(frame[l3 + 12:l3 + 16])
            dst = "%d.%d.%d.%d" % tuple(frame[l3 + 16:l3 + 20])
            l4, l4len, ver = l3 + ihl, tot - ihl, 4
        elif etype == 0x86DD:
            if len(frame) < l3 + 40:
                continue
            nxt = frame[l3 + 6]
            plen6 = struct.unpack_from("!H", frame, l3 + 4)[0]
            src, dst = _ip6(bytes(frame[l3 + 8:l3 + 24])), _ip6(
                bytes(frame[l3 + 24:l3 + 40]))
            l4, l4len, ver = l3 + 40, plen6, 6
            # skip hop-by-hop, routing, destination options
            while nxt in (0, 43, 60) and len(frame) >= l4 + 8:
                hlen = (frame[l4 + 1] + 1) * 8
                nxt = frame[l4]
                l4 += hlen
                l4len -= hlen
            if nxt != 6:
                continue
        else:
            continue
        if len(frame) < l4 + 20:
            continue
        sport, dport, seq, ack, offx, flags, win = struct.unpack_from(
            "!HHIIBBH", frame, l4)
        doff = (offx >> 4) * 4
        p = Pkt()
        p.ts, p.src, p.dst, p.sport, p.dport = ts, src, dst, sport, dport
        p.seq, p.ack, p.flags, p.win, p.ipver = seq, ack, flags, win, ver
        p.plen = max(0, l4len - doff)
        p.opts = _tcp_opts(frame[l4 + 20:l4 + doff]) if want_opts else None
        out.append(p)
    return out


# ------------------------------------------------------------------ analysis

def seq_after(a, b):
    """a > b in 32-bit sequence space (False when a == b)."""
    return 0 < ((a - b) & 0xFFFFFFFF) < 0x80000000


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


def retransmissions(pkts, sender, sport=None):
    """Data segments from sender whose bytes were all sent before (per
    connection), i.e. retransmissions seen on the wire."""
    high = {}
    n = 0
    for p in sorted(pkts, key=lambda q: q.ts):
        if p.src != sender or p.plen == 0 or (sport is not None and
                                               p.sport != sport):
            continue
        key = (p.sport, p.dst, p.dport)
        end = p.end
        h = high.get(key)
        if h is not None and not seq_after(end, h):
            n += 1
            continue
        high[key] = end
    return n


def tracefs():
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.isdir(d + "/events"):
            return d
    subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
                   check=False)
    return "/sys/kernel/tracing"


class Trace:
    """Enable tracepoint events (e.g. "tcp_cocktail/restart") for the
    duration of a with block, in a buffer of BUFFER_KB per CPU when given;
    mark() writes a line into the trace.  Afterwards .text holds the trace
    buffer as read and .lines its event lines."""

    def __init__(self, *events, buffer_kb=None):
        self.events = events
        self.buffer_kb = buffer_kb
        self.dir = None
        self.text, self.lines = "", []

    def __enter__(self):
        self.dir = self.dir or tracefs()
        if self.buffer_kb:
            Path(self.dir, "buffer_size_kb").write_text("%d\n" %
                                                        self.buffer_kb)
        Path(self.dir, "trace").write_text("")
        for e in self.events:
            Path(self.dir, "events", e, "enable").write_text("1\n")
        Path(self.dir, "tracing_on").write_text("1\n")
        return self

    def mark(self, text):
        Path(self.dir, "trace_marker").write_text(text)

    def __exit__(self, *exc):
        for e in self.events:
            Path(self.dir, "events", e, "enable").write_text("0\n")
        self.text = Path(self.dir, "trace").read_text()
        self.lines = [ln for ln in self.text.splitlines()
                      if ln and not ln.startswith("#")]

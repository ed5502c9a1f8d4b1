"""Helpers for the tcp_oooprobe VM tests: a small generic netlink client for
the tcp_oooprobe family, a two-namespace shaped link, a pcap reader, and the
out-of-order hold times computed from a capture (the truth the probe's
events are compared with).

Standard library only; runs inside the VM as root.
"""
import os
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UAPI = REPO / "kmod" / "uapi" / "tcp_oooprobe.h"

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP = 1
NETLINK_EXT_ACK = 11
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
CTRL_ATTR_MCAST_GROUPS = 7
CTRL_ATTR_MCAST_GRP_NAME = 1
CTRL_ATTR_MCAST_GRP_ID = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2
NLMSG_DONE = 3


def _uapi_enums():
    """Command and attribute numbers, read from the shared uapi header so
    the tests follow it instead of restating it."""
    import re
    text = UAPI.read_text()
    out = {}
    for enum in ("tcp_oooprobe_cmd", "tcp_oooprobe_attr",
                 "tcp_oooprobe_flows"):
        body = re.search(r"enum %s \{(.*?)\};" % enum, text, re.S).group(1)
        n = 0
        for line in body.splitlines():
            m = re.match(r"\s*(TCP_OOOPROBE_\w+)(\s*=\s*(\d+))?,", line)
            if m:
                if m.group(3):
                    n = int(m.group(3))
                out[m.group(1)] = n
                n += 1
    out["NAME"] = re.search(r'TCP_OOOPROBE_GENL_NAME\s+"(\w+)"',
                            text).group(1)
    out["MCGRP"] = re.search(r'TCP_OOOPROBE_MCGRP_EVENTS\s+"(\w+)"',
                             text).group(1)
    return out


U = _uapi_enums()
A = {k[len("TCP_OOOPROBE_A_"):]: v for k, v in U.items()
     if k.startswith("TCP_OOOPROBE_A_")}
A_NAME = {v: k for k, v in A.items()}
CMD = {k[len("TCP_OOOPROBE_CMD_"):]: v for k, v in U.items()
       if k.startswith("TCP_OOOPROBE_CMD_")}
U64 = {"EVENT_SEQ", "NETNS_COOKIE", "TIME_IN", "TIME_OUT", "BYTES_RECEIVED",
       "LIFETIME_NS", "FILTER_NETNS"} | {k for k in A if k.startswith("STAT_")
                                         and k not in ("STAT_FLOWS_TRACKED",
                                                       "STAT_HOOK")}
U32 = {"SEQ", "LEN", "DATA_SEGS_IN", "OOO_SEGS", "FLOW_FLAGS",
       "STAT_FLOWS_TRACKED"}
U16 = {"LOCAL_PORT", "REMOTE_PORT"}
U8 = {"FAMILY", "FILTER_FLOWS"}


def nla(atype, payload):
    ln = 4 + len(payload)
    return struct.pack("=HH", ln, atype) + payload + b"\0" * ((4 - ln % 4) % 4)


def parse_attrs(buf):
    out = {}
    off = 0
    while off + 4 <= len(buf):
        ln, t = struct.unpack_from("=HH", buf, off)
        if ln < 4:
            break
        out.setdefault(t & 0x3fff, []).append(buf[off + 4:off + ln])
        off += (ln + 3) & ~3
    return out


def decode(attrs):
    ev = {}
    for t, vals in attrs.items():
        name = A_NAME.get(t, str(t))
        v = vals[0]
        if name in U64:
            ev[name] = struct.unpack("=Q", v[:8])[0]
        elif name in U32:
            ev[name] = struct.unpack("=I", v[:4])[0]
        elif name in U16:
            ev[name] = struct.unpack("=H", v[:2])[0]
        elif name in U8:
            ev[name] = v[0]
        elif name in ("LOCAL_ADDR", "REMOTE_ADDR"):
            fam = socket.AF_INET if len(v) == 4 else socket.AF_INET6
            ev[name] = socket.inet_ntop(fam, v)
        elif name == "STAT_HOOK":
            ev[name] = v.rstrip(b"\0").decode()
        elif name == "FILTER_PORTS":
            ev[name] = list(struct.unpack("=%dH" % (len(v) // 2), v))
        else:
            ev[name] = v
    return ev


class NetlinkError(OSError):
    pass


class Genl:
    """One generic netlink socket talking to the tcp_oooprobe family."""

    def __init__(self, rcvbuf=None):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                  NETLINK_GENERIC)
        self.sock.bind((0, 0))
        if rcvbuf:
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, 33, rcvbuf)  # FORCE
            except PermissionError:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                                     rcvbuf)
        self.seq = 1
        self.family, self.groups = self.resolve(U["NAME"])

    def close(self):
        self.sock.close()

    def raw(self, msg_type, cmd, payload=b"", flags=NLM_F_REQUEST | NLM_F_ACK,
            version=1, reserved=0, length=None):
        """Send one message (lengths may be wrong on purpose); return the
        replies up to and including the ack/error as (type, payload)."""
        self.seq += 1
        body = struct.pack("=BBH", cmd, version, reserved) + payload
        ln = 16 + len(body) if length is None else length
        hdr = struct.pack("=IHHII", ln, msg_type, flags, self.seq, 0)
        self.sock.send(hdr + body)
        return self._replies(self.seq)

    def _replies(self, seq):
        out = []
        while True:
            data = self.sock.recv(65536)
            off = 0
            while off + 16 <= len(data):
                ln, typ, flg, sq, pid = struct.unpack_from("=IHHII", data, off)
                payload = data[off + 16:off + ln]
                off += (ln + 3) & ~3
                if sq != seq:
                    continue
                out.append((typ, payload))
                if typ == NLMSG_ERROR or typ == NLMSG_DONE:
                    return out

    def request(self, msg_type, cmd, payload=b""):
        """Returns decoded attributes of the reply; raises on error."""
        attrs = None
        for typ, payload_ in self.raw(msg_type, cmd, payload):
            if typ == NLMSG_ERROR:
                err = struct.unpack_from("=i", payload_)[0]
                if err:
                    raise NetlinkError(-err, os.strerror(-err))
            else:
                attrs = parse_attrs(payload_[4:])
        return attrs

    def resolve(self, name):
        try:
            attrs = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                                 nla(CTRL_ATTR_FAMILY_NAME,
                                     name.encode() + b"\0"))
        except NetlinkError:
            return None, {}
        fam = struct.unpack("=H", attrs[CTRL_ATTR_FAMILY_ID][0][:2])[0]
        groups = {}
        for grp in parse_attrs(attrs.get(CTRL_ATTR_MCAST_GROUPS, [b""])[0]
                               ).values():
            g = parse_attrs(grp[0])
            groups[g[CTRL_ATTR_MCAST_GRP_NAME][0].rstrip(b"\0").decode()] = \
                struct.unpack("=I", g[CTRL_ATTR_MCAST_GRP_ID][0])[0]
        return fam, groups

    def stats(self):
        return decode(self.request(self.family, CMD["GET_STATS"]))

    def get_filter(self):
        return decode(self.request(self.family, CMD["GET_FILTER"]))

    def set_filter(self, ports=None, netns=None, flows=None):
        p = b""
        if ports is not None:
            p += nla(A["FILTER_PORTS"], struct.pack("=%dH" % len(ports),
                                                    *ports))
        if netns is not None:
            p += nla(A["FILTER_NETNS"], struct.pack("=Q", netns))
        if flows is not None:
            p += nla(A["FILTER_FLOWS"], bytes([flows]))
        self.request(self.family, CMD["SET_FILTER"], p)

    def subscribe(self):
        self.sock.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
                             self.groups[U["MCGRP"]])


class EventCollector:
    """Subscribes and collects events in a thread until stop()."""

    def __init__(self, rcvbuf=64 << 20):
        self.g = Genl(rcvbuf=rcvbuf)
        self.g.subscribe()
        self.g.sock.settimeout(0.2)
        self.events = []
        self.enobufs = 0
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop:
            try:
                data = self.g.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except OSError as e:
                if e.errno == 105:  # ENOBUFS
                    self.enobufs += 1
                    continue
                raise
            off = 0
            while off + 16 <= len(data):
                ln, typ = struct.unpack_from("=IH", data, off)
                if typ == self.g.family:
                    cmd = data[off + 16]
                    ev = decode(parse_attrs(data[off + 20:off + ln]))
                    ev["cmd"] = cmd
                    self.events.append(ev)
                off += (ln + 3) & ~3

    def stop(self, settle=0.5):
        time.sleep(settle)
        self._stop = True
        self._t.join()
        self.g.close()
        return self.events

    def segments(self):
        return [e for e in self.events if e["cmd"] == CMD["SEGMENT"]]

    def flows(self):
        return [e for e in self.events if e["cmd"] == CMD["FLOW"]]


# ------------------------------------------------------------------ links

def sh(cmd, check=True):
    return subprocess.run(cmd, shell=True, check=check, text=True,
                          capture_output=True)


class Link:
    """Two namespaces srv/cli joined by one veth pair, offloads off, netem
    delay (and optional extra netem options) on each side's egress.
    Server 198.18.100.1, client 198.18.100.2."""

    SRV = "198.18.100.1"
    CLI = "198.18.100.2"

    def __init__(self, tag, rtt_ms=50, srv_netem="", cli_netem="",
                 rate=None):
        self.srv = "ooo%s-s" % tag
        self.cli = "ooo%s-c" % tag
        self.rtt = rtt_ms
        half = rtt_ms / 2.0
        for ns in (self.srv, self.cli):
            sh("ip netns del %s" % ns, check=False)
            sh("ip netns add %s" % ns)
            sh("ip -n %s link set lo up" % ns)
        # TCP always builds GSO skbs (sk_setup_caps adds NETIF_F_GSO) and
        # they are split only after clsact and the qdisc: gso_max_segs 1
        # makes every skb one MSS, so netem and the drop filter act on
        # single segments (ethtool gso off alone does not).
        sh("ip link add vs netns %s gso_max_segs 1 type veth peer name vc "
           "netns %s gso_max_segs 1" % (self.srv, self.cli))
        for ns, dev, addr in ((self.srv, "vs", self.SRV),
                              (self.cli, "vc", self.CLI)):
            sh("ip -n %s addr add %s/24 dev %s" % (ns, addr, dev))
            sh("ip -n %s link set %s up" % (ns, dev))
            sh("ip netns exec %s ethtool -K %s tso off gso off gro off" %
               (ns, dev))
        rate_s = " rate %s" % rate if rate else ""
        if not (rtt_ms or srv_netem or cli_netem or rate):
            return  # a plain link: no qdisc at all
        sh("ip netns exec %s tc qdisc add dev vs root netem limit 10000 "
           "delay %.3fms%s %s" % (self.srv, half, rate_s, srv_netem))
        sh("ip netns exec %s tc qdisc add dev vc root netem limit 10000 "
           "delay %.3fms %s" % (self.cli, half, cli_netem))

    def ns_inode(self, ns):
        return os.stat("/run/netns/%s" % ns).st_ino

    def close(self):
        for ns in (self.srv, self.cli):
            sh("ip netns del %s" % ns, check=False)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


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


def _setns(fd):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class Capture:
    """tcpdump on an interface in a namespace, to a pcap file."""

    def __init__(self, ns, dev, path, filt="tcp"):
        self.path = path
        self.p = subprocess.Popen(
            ["ip", "netns", "exec", ns, "tcpdump", "-i", dev, "-n", "-s",
             "96", "-U", "-w", str(path), "--time-stamp-precision=nano",
             filt], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # tcpdump prints "listening on" once the socket is ready
        line = self.p.stderr.readline()
        assert b"listening" in line, line

    def stop(self):
        time.sleep(0.2)
        self.p.terminate()
        self.p.wait(timeout=10)


def read_pcap(path):
    """Yield (ts_ns, ipv4 bytes...) records: dicts with src, dst, sport,
    dport, seq, ack, flags, plen."""
    data = Path(path).read_bytes()
    magic = struct.unpack_from("<I", data)[0]
    if magic == 0xa1b23c4d:
        scale = 1
    elif magic == 0xa1b2c3d4:
        scale = 1000
    else:
        raise ValueError("not a little-endian pcap: %x" % magic)
    linktype = struct.unpack_from("<I", data, 20)[0]
    off = 24
    out = []
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack_from("<IIII", data, off)
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if linktype == 1:
            eth = struct.unpack_from("!H", pkt, 12)[0]
            if eth != 0x0800:
                continue
            ip = pkt[14:]
        elif linktype == 113:  # Linux cooked
            ip = pkt[16:]
        else:
            raise ValueError("linktype %d" % linktype)
        if (ip[0] >> 4) != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        tot = struct.unpack_from("!H", ip, 2)[0]
        tcp = ip[ihl:]
        sport, dport, seq, ack, offf = struct.unpack_from("!HHIIB", tcp)
        flags = tcp[13]
        doff = (offf >> 4) * 4
        out.append(dict(ts=sec * 1000000000 + frac * scale,
                        src=socket.inet_ntoa(ip[12:16]),
                        dst=socket.inet_ntoa(ip[16:20]),
                        sport=sport, dport=dport, seq=seq, ack=ack,
                        flags=flags, plen=tot - ihl - doff))
    return out


def _after(a, b):
    return ((a - b) & 0xffffffff) != 0 and ((a - b) & 0xffffffff) < (1 << 31)


def capture_holds(pkts, src, sport, dst, dport):
    """From a capture at the receiver: for every data segment that arrived
    beyond the next expected byte, the time from its arrival until the
    in-order point passed its end. Returns (held, data_segs, ooo_segs):
    held is a list of dicts seq, len, t_in, t_out (capture clock, ns); a
    segment partly covered by earlier data keeps only its new bytes, as the
    probe does. Retransmissions of bytes already held count once."""
    rcv_nxt = None
    ranges = []  # [seq, end, t_in], sorted, disjoint
    held = []
    data_segs = ooo_segs = 0
    for p in pkts:
        if (p["src"], p["sport"], p["dst"], p["dport"]) != (src, sport, dst,
                                                            dport):
            continue
        if p["flags"] & 0x02:  # SYN
            rcv_nxt = (p["seq"] + 1) & 0xffffffff
            continue
        if rcv_nxt is None or p["plen"] <= 0:
            continue
        data_segs += 1
        seq, end = p["seq"], (p["seq"] + p["plen"]) & 0xffffffff
        if _after(seq, rcv_nxt):
            # record the uncovered parts
            new = [(seq, end)]
            for r in ranges:
                nxt = []
                for s, e in new:
                    if not _after(e, r[0]) or not _after(r[1], s):
                        nxt.append((s, e))
                        continue
                    if _after(r[0], s):
                        nxt.append((s, r[0]))
                    if _after(e, r[1]):
                        nxt.append((r[1], e))
                new = nxt
            if new:
                ooo_segs += 1
            for s, e in new:
                ranges.append([s, e, p["ts"]])
            ranges.sort(key=lambda r: (r[0] - rcv_nxt) & 0xffffffff)
            continue
        if _after(end, rcv_nxt):
            rcv_nxt = end
            # pull in contiguous held data
            moved = True
            while moved:
                moved = False
                for r in ranges:
                    if not _after(r[0], rcv_nxt) and _after(r[1], rcv_nxt):
                        rcv_nxt = r[1]
                        moved = True
            keep = []
            for r in ranges:
                if not _after(r[1], rcv_nxt):
                    held.append(dict(seq=r[0], len=(r[1] - r[0]) & 0xffffffff,
                                     t_in=r[2], t_out=p["ts"]))
                else:
                    keep.append(r)
            ranges = keep
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

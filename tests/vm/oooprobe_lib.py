"""Helpers for the tcp_oooprobe VM tests: a small generic netlink client for
the tcp_oooprobe family and the out-of-order hold times computed from a
capture (the truth the probe's events are compared with). The probe
tests' link is cocktail_lab.topo.Link; namespaces, captures and the pcap
reader are the lab's (cocktail_lab.proc, cocktail_lab.capture).

Standard library only; runs inside the VM as root.
"""
import os
import socket
import struct
import threading
import time
from pathlib import Path

from cocktail_lab.capture import SYN, seq_after

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

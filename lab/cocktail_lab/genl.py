"""Client of the tcp_oooprobe generic netlink family (kmod/uapi/
tcp_oooprobe.h) on pyroute2's generic netlink: GenericNetlinkSocket
resolves the family and its multicast groups, a genlmsg subclass whose
nla_map is built from the uapi header's enums encodes the commands and
decodes replies and events.

Decoded messages are dicts keyed by attribute name without the
TCP_OOOPROBE_A_ prefix ("EVENT_SEQ", "STAT_HOOK", "FILTER_PORTS"...);
events also carry "cmd" (CMD["SEGMENT"] or CMD["FLOW"]).
"""
import errno
import os
import re
import socket
import struct
import threading
import time
from pathlib import Path

from pyroute2.netlink import NLM_F_ACK, NLM_F_REQUEST, genlmsg
from pyroute2.netlink.exceptions import NetlinkError as _Pyroute2Error
from pyroute2.netlink.generic import GenericNetlinkSocket

REPO = Path(__file__).resolve().parents[2]
UAPI = REPO / "kmod" / "uapi" / "tcp_oooprobe.h"

NLMSG_ERROR = 2
NLMSG_DONE = 3
SO_RCVBUFFORCE = 33


def _uapi_enums():
    """Command and attribute numbers, read from the shared uapi header so
    the lab follows it instead of restating it."""
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

# Attribute types, by the comments of the uapi header.
U64 = {"EVENT_SEQ", "NETNS_COOKIE", "TIME_IN", "TIME_OUT", "BYTES_RECEIVED",
       "LIFETIME_NS", "FILTER_NETNS"} | {k for k in A if k.startswith("STAT_")
                                         and k not in ("STAT_FLOWS_TRACKED",
                                                       "STAT_HOOK")}
U32 = {"SEQ", "LEN", "DATA_SEGS_IN", "OOO_SEGS", "FLOW_FLAGS",
       "STAT_FLOWS_TRACKED"}
U16 = {"LOCAL_PORT", "REMOTE_PORT"}
U8 = {"FAMILY", "FILTER_FLOWS"}


def _nla_type(name):
    if name in U64:
        return "uint64"
    if name in U32:
        return "uint32"
    if name in U16:
        return "uint16"
    if name in U8:
        return "uint8"
    if name == "STAT_HOOK":
        return "asciiz"
    if name == "FILTER_PORTS":
        return "array(uint16)"     # host byte order, like every integer
    if name in ("UNSPEC", "PAD") or name.startswith("__"):
        return "none"
    return "cdata"                 # addresses: raw, 4 or 16 bytes


class oooprobemsg(genlmsg):
    """A tcp_oooprobe message: genlmsghdr and TCP_OOOPROBE_A_* attributes."""
    nla_map = tuple((v, "TCP_OOOPROBE_A_" + k, _nla_type(k))
                    for k, v in sorted(A.items(), key=lambda kv: kv[1])
                    if not k.startswith("_"))


def decode(msg):
    """The attributes of a parsed oooprobemsg as a dict."""
    ev = {}
    for nla in msg["attrs"]:
        name, v = nla[0][len("TCP_OOOPROBE_A_"):], nla[1]
        if name in ("LOCAL_ADDR", "REMOTE_ADDR"):
            fam = socket.AF_INET if len(v) == 4 else socket.AF_INET6
            v = socket.inet_ntop(fam, v)
        elif name == "FILTER_PORTS":
            v = list(v)
        ev.setdefault(name, v)
    return ev


def nla(atype, payload):
    """One attribute, by hand: raw() sends deliberately malformed messages
    (wrong sizes, lengths that lie), which pyroute2's encoder, writing
    each attribute from its nla_map type, cannot produce."""
    ln = 4 + len(payload)
    return struct.pack("=HH", ln, atype) + payload + b"\0" * ((4 - ln % 4) % 4)


class NetlinkError(OSError):
    pass


class Genl:
    """One generic netlink socket talking to the tcp_oooprobe family;
    .family is None when the module is not loaded."""

    def __init__(self, rcvbuf=None):
        self.nl = GenericNetlinkSocket()
        # the socket itself, for setsockopt, timeouts and event reads
        self.sock = self.nl.asyncore.socket
        if rcvbuf:
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE,
                                     rcvbuf)
            except PermissionError:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                                     rcvbuf)
        self.seq = 1 << 20          # raw()'s, apart from pyroute2's
        try:
            self.nl.bind(U["NAME"], oooprobemsg)
        except _Pyroute2Error:
            self.family, self.groups = None, {}
        else:
            self.family, self.groups = self.nl.prid, dict(self.nl.mcast_groups)

    def close(self):
        self.nl.close()

    def raw(self, msg_type, cmd, payload=b"", flags=NLM_F_REQUEST | NLM_F_ACK,
            version=1, reserved=0, length=None):
        """Send one message (lengths may be wrong on purpose); return the
        replies up to and including the ack/error as (type, payload).
        Written by hand on the socket: pyroute2 always writes true lengths
        and hides the error message's bytes."""
        self.seq += 1
        body = struct.pack("=BBH", cmd, version, reserved) + payload
        ln = 16 + len(body) if length is None else length
        hdr = struct.pack("=IHHII", ln, msg_type, flags, self.seq, 0)
        timeout = self.sock.gettimeout()
        self.sock.settimeout(30)
        try:
            self.sock.send(hdr + body)
            out = []
            while True:
                data = self.sock.recv(65536)
                off = 0
                while off + 16 <= len(data):
                    ln, typ, _, sq, _ = struct.unpack_from("=IHHII", data,
                                                           off)
                    payload_ = data[off + 16:off + ln]
                    off += (ln + 3) & ~3
                    if sq != self.seq:
                        continue
                    out.append((typ, payload_))
                    if typ in (NLMSG_ERROR, NLMSG_DONE):
                        return out
        finally:
            self.sock.settimeout(timeout)

    def request(self, cmd, attrs=()):
        """Send CMD with ATTRS ([(name, value)], names without prefix);
        the decoded reply ({} for a bare ack). Raises NetlinkError."""
        msg = oooprobemsg()
        msg["cmd"] = cmd
        msg["version"] = 1
        msg["attrs"] = [("TCP_OOOPROBE_A_" + k, v) for k, v in attrs]
        try:
            replies = self.nl.nlm_request(msg, msg_type=self.family,
                                          msg_flags=NLM_F_REQUEST |
                                          NLM_F_ACK)
            replies = list(replies)
        except _Pyroute2Error as e:
            raise NetlinkError(e.code, os.strerror(e.code)) from None
        out = {}
        for r in replies:
            if isinstance(r, oooprobemsg):
                out.update(decode(r))
        return out

    def stats(self):
        return self.request(CMD["GET_STATS"])

    def get_filter(self):
        return self.request(CMD["GET_FILTER"])

    def set_filter(self, ports=None, netns=None, flows=None):
        attrs = []
        if ports is not None:
            attrs.append(("FILTER_PORTS", list(ports)))
        if netns is not None:
            attrs.append(("FILTER_NETNS", netns))
        if flows is not None:
            attrs.append(("FILTER_FLOWS", flows))
        self.request(CMD["SET_FILTER"], attrs)

    def subscribe(self):
        self.nl.add_membership(U["MCGRP"])

    def recv_events(self, bufsize=1 << 20):
        """Read one datagram of events from the socket: [decoded event].
        Raises socket.timeout (see .sock.settimeout) and OSError ENOBUFS
        when the kernel dropped events for a full receive buffer.

        Read from the socket and parsed with pyroute2's marshal rather than
        through pyroute2's receive path: its asyncio transport takes
        ENOBUFS as the socket's end (every later call raises it), where a
        subscriber counts the loss and reads on."""
        data = self.sock.recv(bufsize)
        out = []
        for msg in self.nl.marshal.parse(data):
            if msg["header"]["type"] == self.family:
                ev = decode(msg)
                ev["cmd"] = msg["cmd"]
                out.append(ev)
        return out


class EventCollector:
    """Subscribes and collects events in a thread until stop()."""

    def __init__(self, rcvbuf=64 << 20):
        self.g = Genl(rcvbuf=rcvbuf)
        self.g.subscribe()
        self.g.sock.settimeout(0.2)
        self.events = []
        self.enobufs = 0
        self._stop = 0  # the drain's deadline once stop() was asked for
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        # Reads until stop() was asked for and the socket stayed empty for
        # a whole timeout: the kernel queued every event before stop(), but
        # a thread the GIL and busy vCPUs held back may still be far
        # behind, and leaving then would lose the queue's tail unseen.
        # Events that keep coming (traffic still running) end it at the
        # deadline stop() set.
        while not self._stop or time.monotonic() < self._stop:
            try:
                self.events.extend(self.g.recv_events())
            except socket.timeout:
                if self._stop:
                    return
                continue
            except OSError as e:
                if e.errno == errno.ENOBUFS:
                    self.enobufs += 1
                    continue
                raise

    def stop(self, settle=0.5, drain=10.0):
        """Events until now: waits SETTLE seconds for late ones, then
        reads what is queued, for at most DRAIN seconds."""
        time.sleep(settle)
        self._stop = time.monotonic() + drain
        self._t.join()
        self.g.close()
        return self.events

    def segments(self):
        return [e for e in self.events if e["cmd"] == CMD["SEGMENT"]]

    def flows(self):
        return [e for e in self.events if e["cmd"] == CMD["FLOW"]]

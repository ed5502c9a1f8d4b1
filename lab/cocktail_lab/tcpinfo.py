"""struct tcp_info, decoded one way for every source: getsockopt(TCP_INFO)
on a socket in hand, and INET_DIAG_INFO of a sock_diag dump (a socket
another process owns, such as nginx's).

The layout is Linux 6.1's (include/uapi/linux/tcp.h), 232 bytes; field
names are the header's without the tcpi_ prefix. A shorter buffer (an
older kernel, or a caller asking for fewer bytes) is zero-padded; bytes
past the end (a newer kernel) are ignored.
"""
import socket
import struct
import time

TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_WINDOW_CLAMP = getattr(socket, "TCP_WINDOW_CLAMP", 10)

# tcp_states.h: tcpi_state values
TCP_ESTABLISHED = 1

# (name, struct code) in the order of struct tcp_info; "bits" is the byte
# holding tcpi_snd_wscale:4 and tcpi_rcv_wscale:4, "flags" the one holding
# tcpi_delivery_rate_app_limited:1 and tcpi_fastopen_client_fail:2 (C
# bitfields fill a byte from its least significant bit on x86).
LAYOUT = (
    ("state", "B"), ("ca_state", "B"), ("retransmits", "B"),
    ("probes", "B"), ("backoff", "B"), ("options", "B"),
    ("bits", "B"), ("flags", "B"),
    ("rto", "I"), ("ato", "I"), ("snd_mss", "I"), ("rcv_mss", "I"),
    ("unacked", "I"), ("sacked", "I"), ("lost", "I"), ("retrans", "I"),
    ("fackets", "I"),
    ("last_data_sent", "I"), ("last_ack_sent", "I"),
    ("last_data_recv", "I"), ("last_ack_recv", "I"),
    ("pmtu", "I"), ("rcv_ssthresh", "I"), ("rtt", "I"), ("rttvar", "I"),
    ("snd_ssthresh", "I"), ("snd_cwnd", "I"), ("advmss", "I"),
    ("reordering", "I"),
    ("rcv_rtt", "I"), ("rcv_space", "I"),
    ("total_retrans", "I"),
    ("pacing_rate", "Q"), ("max_pacing_rate", "Q"),
    ("bytes_acked", "Q"), ("bytes_received", "Q"),
    ("segs_out", "I"), ("segs_in", "I"),
    ("notsent_bytes", "I"), ("min_rtt", "I"),
    ("data_segs_in", "I"), ("data_segs_out", "I"),
    ("delivery_rate", "Q"),
    ("busy_time", "Q"), ("rwnd_limited", "Q"), ("sndbuf_limited", "Q"),
    ("delivered", "I"), ("delivered_ce", "I"),
    ("bytes_sent", "Q"), ("bytes_retrans", "Q"),
    ("dsack_dups", "I"), ("reord_seen", "I"),
    ("rcv_ooopack", "I"),
    ("snd_wnd", "I"),
)
FORMAT = "<" + "".join(code for _, code in LAYOUT)
SIZE = struct.calcsize(FORMAT)       # 232: no padding, every field aligned
_NAMES = [name for name, _ in LAYOUT]


def decode(raw):
    """struct tcp_info bytes as a dict (rto, rtt, min_rtt... in
    microseconds, rates in bytes per second)."""
    raw = bytes(raw[:SIZE]).ljust(SIZE, b"\0")
    d = dict(zip(_NAMES, struct.unpack(FORMAT, raw)))
    bits, flags = d.pop("bits"), d.pop("flags")
    d["snd_wscale"] = bits & 15
    d["rcv_wscale"] = bits >> 4
    d["delivery_rate_app_limited"] = flags & 1
    d["fastopen_client_fail"] = (flags >> 1) & 3
    return d


def encode(**fields):
    """struct tcp_info bytes with the given fields set (the others zero):
    the inverse of decode(), for tests of code that reads tcp_info."""
    d = dict.fromkeys(_NAMES, 0)
    d["bits"] = fields.pop("snd_wscale", 0) | fields.pop("rcv_wscale", 0) << 4
    d["flags"] = (fields.pop("delivery_rate_app_limited", 0) |
                  fields.pop("fastopen_client_fail", 0) << 1)
    unknown = set(fields) - set(_NAMES)
    if unknown:
        raise KeyError("not in struct tcp_info: %s" % sorted(unknown))
    d.update(fields)
    return struct.pack(FORMAT, *(d[n] for n in _NAMES))


def congestion(sock):
    """The congestion control algorithm of SOCK."""
    return sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION,
                           16).split(b"\0")[0].decode()


def set_congestion(sock, name):
    sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, name.encode())


def get(sock):
    """getsockopt(TCP_INFO) of SOCK, decoded."""
    return decode(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, SIZE))


def info(sock):
    """get(SOCK) plus "ca" (its congestion control, None if unreadable)
    and "time" (wall clock of the reading)."""
    d = get(sock)
    try:
        d["ca"] = congestion(sock)
    except OSError:
        d["ca"] = None
    d["time"] = time.time()
    return d


# ------------------------------------------------------------ sock_diag

# Full sockets only: ESTABLISHED, FIN_WAIT1/2, CLOSE_WAIT, LAST_ACK,
# CLOSING (a request socket or a TIME_WAIT one carries no tcp_info).
FULL_STATES = sum(1 << s for s in (1, 4, 5, 8, 9, 11))
NETLINK_SOCK_DIAG = 4
INET_DIAG_INFO, INET_DIAG_CONG = 2, 4      # inet_diag.h attribute types


def diag_socket():
    """A bound NETLINK_SOCK_DIAG socket: it answers for the sockets of the
    network namespace it was created in (create it in a thread that entered
    that namespace)."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG)
    s.bind((0, 0))
    return s


_DIAG = None


def _diag_classes():
    """pyroute2's sock_diag classes with INET_DIAG_INFO taken as raw
    bytes: pyroute2's inet_diag_msg decodes it itself but swaps the
    window-scale bitfields (tcpi_snd_wscale gets the low nibble masked
    twice, tcpi_rcv_wscale the sender's), so decode() reads it like
    getsockopt's. Imported on first use: the traffic tool, which imports
    this module, starts without pyroute2."""
    global _DIAG
    if _DIAG is None:
        from pyroute2.netlink.diag import DiagSocket, MarshalDiag, \
            inet_diag_msg
        from pyroute2.netlink.nlsocket import NetlinkSocket

        class Msg(inet_diag_msg):
            nla_map = tuple((n, "cdata" if n == "INET_DIAG_INFO" else t)
                            for n, t in inet_diag_msg.nla_map)

        class Marshal(MarshalDiag):
            msg_map = {socket.AF_INET: Msg, socket.AF_INET6: Msg}

        class Sock(DiagSocket):
            # DiagSocket drops its fileno argument; the socket must be the
            # one made in the target namespace.
            def __init__(self, fileno):
                NetlinkSocket.__init__(self, NETLINK_SOCK_DIAG, fileno=fileno)
                self.set_marshal(Marshal())
        _DIAG = Marshal, Sock
    return _DIAG


def _entry(msg):
    out = {}
    raw = msg.get_attr("INET_DIAG_INFO")
    if raw is not None:
        out.update(decode(raw))
    ca = msg.get_attr("INET_DIAG_CONG")
    if ca is not None:
        out["ca"] = ca
    return out


def parse_diag(data):
    """[(local port, remote port, tcp_info)] of the inet_diag messages in
    DATA (sock_diag reply bytes); tcp_info is decode()d INET_DIAG_INFO plus
    "ca" (INET_DIAG_CONG), each when present."""
    marshal = _diag_classes()[0]()
    return [(m["idiag_sport"], m["idiag_dport"], _entry(m))
            for m in marshal.parse(data)]


class Diag:
    """inet_diag queries through pyroute2's DiagSocket over SOCK, a socket
    from diag_socket() (this namespace's when None). Use it from the
    thread that made it (pyroute2 keeps its event loop per thread)."""

    def __init__(self, sock=None):
        own = sock is None
        sock = sock or diag_socket()
        self.ds = _diag_classes()[1](sock.detach())
        if own:
            sock.close()

    def close(self):
        self.ds.close()

    def tcp(self, lport, rport, family=socket.AF_INET):
        """decode()d tcp_info plus "ca" of the full TCP socket with local
        port LPORT and remote port RPORT, or None (also while the
        handshake's last ACK is on its way: the server side is still a
        request socket then)."""
        ext = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_CONG - 1))
        for msg in self.ds.get_sock_stats(family=family, states=FULL_STATES,
                                          extensions=ext):
            if (msg["idiag_sport"], msg["idiag_dport"]) == (lport, rport):
                return _entry(msg)
        return None

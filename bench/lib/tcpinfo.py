"""struct tcp_info (include/uapi/linux/tcp.h, Linux 6.1) from a socket."""
import socket
import struct

TCP_CONGESTION = 13
TCP_INFO = 11
TCP_WINDOW_CLAMP = 10

# (name, struct format) in kernel order after the 8 leading u8 bytes.
_FIELDS = [
    ("rto", "I"), ("ato", "I"), ("snd_mss", "I"), ("rcv_mss", "I"),
    ("unacked", "I"), ("sacked", "I"), ("lost", "I"), ("retrans", "I"),
    ("fackets", "I"), ("last_data_sent", "I"), ("last_ack_sent", "I"),
    ("last_data_recv", "I"), ("last_ack_recv", "I"), ("pmtu", "I"),
    ("rcv_ssthresh", "I"), ("rtt", "I"), ("rttvar", "I"),
    ("snd_ssthresh", "I"), ("snd_cwnd", "I"), ("advmss", "I"),
    ("reordering", "I"), ("rcv_rtt", "I"), ("rcv_space", "I"),
    ("total_retrans", "I"), ("pacing_rate", "Q"), ("max_pacing_rate", "Q"),
    ("bytes_acked", "Q"), ("bytes_received", "Q"), ("segs_out", "I"),
    ("segs_in", "I"), ("notsent_bytes", "I"), ("min_rtt", "I"),
    ("data_segs_in", "I"), ("data_segs_out", "I"), ("delivery_rate", "Q"),
    ("busy_time", "Q"), ("rwnd_limited", "Q"), ("sndbuf_limited", "Q"),
    ("delivered", "I"), ("delivered_ce", "I"), ("bytes_sent", "Q"),
    ("bytes_retrans", "Q"), ("dsack_dups", "I"), ("reord_seen", "I"),
]
_FMT = "=8B" + "".join(f for _, f in _FIELDS)
SIZE = struct.calcsize(_FMT)


def parse(buf):
    buf = buf[:SIZE].ljust(SIZE, b"\0")
    vals = struct.unpack(_FMT, buf)
    d = {"state": vals[0], "ca_state": vals[1], "retransmits": vals[2],
         "backoff": vals[4]}
    for (name, _), v in zip(_FIELDS, vals[8:]):
        d[name] = v
    return d


def info(sock):
    return parse(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 256))


def congestion(sock):
    return sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION,
                           16).split(b"\0")[0].decode()


def set_congestion(sock, name):
    sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, name.encode())

"""Host tests of cocktail_lab.tcpinfo: the struct tcp_info decoder on bytes
laid out by hand at the uapi offsets, and on real sockets (a loopback
connection, through getsockopt and through sock_diag)."""
import socket
import struct

from cocktail_lab import tcpinfo


def test_layout_is_6_1_uapi():
    assert tcpinfo.SIZE == 232
    # offsets of include/uapi/linux/tcp.h (6.1), by field
    off = {}
    pos = 0
    for name, code in tcpinfo.LAYOUT:
        off[name] = pos
        pos += struct.calcsize("<" + code)
    assert (off["rto"], off["snd_cwnd"], off["total_retrans"]) == (8, 80, 100)
    assert (off["pacing_rate"], off["segs_out"], off["delivery_rate"]) == \
        (104, 136, 160)
    assert (off["delivered"], off["bytes_sent"], off["snd_wnd"]) == \
        (192, 200, 228)


def test_decode_hand_built_bytes():
    raw = bytearray(232)
    raw[0] = 1                      # state
    raw[6] = 7 | 9 << 4             # snd_wscale 7, rcv_wscale 9
    raw[7] = 1 | 2 << 1             # app limited, fastopen_client_fail 2
    struct.pack_into("<I", raw, 8, 204000)      # rto
    struct.pack_into("<I", raw, 16, 1448)       # snd_mss
    struct.pack_into("<I", raw, 68, 25000)      # rtt
    struct.pack_into("<I", raw, 80, 10)         # snd_cwnd
    struct.pack_into("<I", raw, 100, 3)         # total_retrans
    struct.pack_into("<Q", raw, 160, 1 << 40)   # delivery_rate
    struct.pack_into("<I", raw, 148, 20000)     # min_rtt
    struct.pack_into("<I", raw, 228, 65535)     # snd_wnd
    d = tcpinfo.decode(bytes(raw))
    assert d["state"] == tcpinfo.TCP_ESTABLISHED
    assert (d["snd_wscale"], d["rcv_wscale"]) == (7, 9)
    assert (d["delivery_rate_app_limited"], d["fastopen_client_fail"]) == \
        (1, 2)
    assert (d["rto"], d["snd_mss"], d["rtt"], d["snd_cwnd"]) == \
        (204000, 1448, 25000, 10)
    assert (d["total_retrans"], d["delivery_rate"], d["min_rtt"],
            d["snd_wnd"]) == (3, 1 << 40, 20000, 65535)
    assert sum(v for k, v in d.items()) == (
        1 + 7 + 9 + 1 + 2 + 204000 + 1448 + 25000 + 10 + 3 + (1 << 40) +
        20000 + 65535)
    assert tcpinfo.encode(**d) == bytes(raw)


def test_decode_short_and_long_buffers():
    raw = tcpinfo.encode(snd_cwnd=42, snd_wnd=5)
    assert tcpinfo.decode(raw[:104])["snd_cwnd"] == 42
    assert tcpinfo.decode(raw[:104])["snd_wnd"] == 0
    assert tcpinfo.decode(raw + b"\xff" * 16)["snd_wnd"] == 5


def _loopback():
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen()
    c = socket.create_connection(ls.getsockname())
    s, _ = ls.accept()
    c.sendall(b"x" * 200000)
    got = 0
    while got < 200000:
        got += len(s.recv(65536))
    return ls, c, s


def test_getsockopt_on_a_loopback_connection():
    ls, c, s = _loopback()
    try:
        i = tcpinfo.info(c)
        assert i["state"] == tcpinfo.TCP_ESTABLISHED
        assert 0 < i["snd_mss"] <= 65535
        assert i["rtt"] > 0 and i["min_rtt"] > 0 and i["rto"] >= 200000
        assert i["snd_cwnd"] >= 1
        assert i["bytes_acked"] == 200001        # + the SYN
        assert i["ca"] == tcpinfo.congestion(c)
        assert tcpinfo.decode(c.getsockopt(
            socket.IPPROTO_TCP, tcpinfo.TCP_INFO, 232))["bytes_acked"] == \
            200001
        tcpinfo.set_congestion(c, "reno")
        assert tcpinfo.congestion(c) == "reno"
    finally:
        for x in (c, s, ls):
            x.close()


def test_sock_diag_agrees_with_getsockopt():
    ls, c, s = _loopback()
    d = tcpinfo.Diag()
    try:
        lport, rport = c.getsockname()[1], ls.getsockname()[1]
        via_diag = d.tcp(lport, rport)
        own = tcpinfo.get(c)
        assert via_diag["state"] == tcpinfo.TCP_ESTABLISHED
        for k in ("snd_mss", "snd_wscale", "rcv_wscale", "bytes_acked",
                  "bytes_sent", "segs_out", "snd_cwnd"):
            assert via_diag[k] == own[k], k
        assert via_diag["ca"] == tcpinfo.congestion(c)
        assert d.tcp(rport, 1) is None
    finally:
        d.close()
        for x in (c, s, ls):
            x.close()


def test_parse_diag_message():
    """An inet_diag reply built by hand: header, inet_diag_msg (family,
    state, ports in network order...), INET_DIAG_INFO and INET_DIAG_CONG."""
    info = tcpinfo.encode(unacked=4, total_retrans=23, snd_wscale=7,
                          rcv_wscale=9)

    def rta(t, p):
        ln = 4 + len(p)
        return struct.pack("=HH", ln, t) + p + b"\0" * ((4 - ln % 4) % 4)
    body = (struct.pack("=BBBB", socket.AF_INET, 1, 0, 0) +
            struct.pack("!HH", 8080, 40000) + bytes(32) +
            struct.pack("=IQIIIII", 0, 0, 0, 0, 0, 0, 0) +
            rta(tcpinfo.INET_DIAG_INFO, info) +
            rta(tcpinfo.INET_DIAG_CONG, b"cocktail\0"))
    msg = struct.pack("=IHHII", 16 + len(body), 20, 2, 1, 0) + body
    [(sport, dport, d)] = tcpinfo.parse_diag(msg)
    assert (sport, dport) == (8080, 40000)
    assert d["ca"] == "cocktail"
    assert d["rto"] == 0 and d["unacked"] == 4 and d["total_retrans"] == 23
    assert (d["snd_wscale"], d["rcv_wscale"]) == (7, 9)
    nothing = body[:72]
    msg = struct.pack("=IHHII", 16 + len(nothing), 20, 2, 1, 0) + nothing
    assert tcpinfo.parse_diag(msg) == [(8080, 40000, {})]

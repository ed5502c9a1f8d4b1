#!/usr/bin/env python3
"""Persistent-connection (keep-alive) traffic tool: server and client.

  kaconn.py server [--bind ADDR] [--port P] [--cc NAME] [--clamp BYTES]
                   [--sndbuf BYTES]
  kaconn.py client --host ADDR [--port P] [--segments N]
                   [--warm-cwnd C] [--warm-segs W] [--warm-max K]
                   [--idle SECONDS | --idle-rto K] [--rounds R]
                   [--rcvbuf BYTES] [--clamp BYTES] [--cc NAME]

Protocol on one TCP connection (Nagle off on both ends), one request per line:
  "N\\n"   the server answers with exactly N * MSS bytes (MSS = the server's
          tcpi_snd_mss when the request arrives). The first 16 bytes of the
          answer are its total length in ASCII ("%15d\\n"), so the segment
          count on the wire is exactly N.
  "I\\n"   one JSON line: the server socket's TCP_INFO (cwnd, rto, rtt,
          delivery rate, total retransmissions, ...) and its congestion
          control name.
  "I PORT\\n"  the same for the server's connection with the same client
          address and client port PORT: a side channel, so that asking for
          tcp_info sends nothing on the measured connection.
  "Q\\n"   close.
The server prints "listening PORT" once it accepts connections.

The client connects, warms up (fetches of --warm-segs segments until the
server's cwnd reaches --warm-cwnd, at most --warm-max fetches), asks for the
server's tcp_info ("before"), stays idle, fetches --segments segments, asks
for tcp_info again ("after") and prints one JSON object. --idle-rto K sleeps
K * tcpi_rto - tcpi_rtt (of "before"), so the server's own idle time (from its
last send to the request's arrival, one RTT more than the client's sleep) is
about K RTOs. --rounds R repeats idle + fetch R times on the same connection.
"""
import argparse
import json
import os
import socket
import struct
import sys
import threading
import time

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_WINDOW_CLAMP = getattr(socket, "TCP_WINDOW_CLAMP", 10)
TCP_INFO = getattr(socket, "TCP_INFO", 11)

# struct tcp_info of Linux 6.1 (include/uapi/linux/tcp.h), 232 bytes.
_TI_FMT = "<8B24I4Q6IQ3Q2I2Q4I"
_TI_U32 = ("rto ato snd_mss rcv_mss unacked sacked lost retrans fackets "
           "last_data_sent last_ack_sent last_data_recv last_ack_recv pmtu "
           "rcv_ssthresh rtt rttvar snd_ssthresh snd_cwnd advmss reordering "
           "rcv_rtt rcv_space total_retrans").split()
_TI_REST = ("pacing_rate max_pacing_rate bytes_acked bytes_received segs_out "
            "segs_in notsent_bytes min_rtt data_segs_in data_segs_out "
            "delivery_rate busy_time rwnd_limited sndbuf_limited delivered "
            "delivered_ce bytes_sent bytes_retrans dsack_dups reord_seen "
            "rcv_ooopack snd_wnd").split()


def tcp_info(sock):
    """TCP_INFO of a socket as a dict (names without the tcpi_ prefix;
    rto/rtt in microseconds, rates in bytes per second)."""
    size = struct.calcsize(_TI_FMT)
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, size)
    raw = raw.ljust(size, b"\0")
    v = struct.unpack(_TI_FMT, raw)
    d = {"state": v[0], "ca_state": v[1], "retransmits": v[2],
         "probes": v[3], "backoff": v[4], "options": v[5],
         "snd_wscale": v[6] & 15, "rcv_wscale": v[6] >> 4,
         "delivery_rate_app_limited": v[7] & 1}
    d.update(zip(_TI_U32, v[8:32]))
    d.update(zip(_TI_REST, v[32:]))
    try:
        d["ca"] = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION,
                                  16).split(b"\0")[0].decode()
    except OSError:
        d["ca"] = None
    d["time"] = time.time()
    return d


def _readline(sock, buf):
    while b"\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None, buf
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    return line, rest


# ------------------------------------------------------------------ server

CONNS = {}  # (client address, client port) -> server socket
CONNS_LOCK = threading.Lock()


def serve_conn(conn, args):
    try:
        peer = conn.getpeername()[:2]
    except OSError:
        conn.close()
        return
    with CONNS_LOCK:
        CONNS[peer] = conn
    try:
        _serve_conn(conn, args, peer)
    finally:
        with CONNS_LOCK:
            CONNS.pop(peer, None)


def _serve_conn(conn, args, peer):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if args.clamp:
        conn.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, args.clamp)
    buf = b""
    try:
        while True:
            line, buf = _readline(conn, buf)
            if line is None:
                return
            line = line.strip()
            if line == b"Q":
                return
            if line == b"I":
                conn.sendall(json.dumps(tcp_info(conn)).encode() + b"\n")
                continue
            if line.startswith(b"I "):
                try:
                    key = (peer[0], int(line[2:]))
                except ValueError:
                    key = None
                with CONNS_LOCK:
                    other = CONNS.get(key)
                try:
                    info = tcp_info(other) if other else None
                except OSError:
                    info = None
                if info is None:
                    conn.sendall(b"ERR no such connection\n")
                else:
                    conn.sendall(json.dumps(info).encode() + b"\n")
                continue
            try:
                n = int(line)
                if n < 1 or n > 1000000:
                    raise ValueError
            except ValueError:
                conn.sendall(b"ERR bad request\n")
                return
            mss = tcp_info(conn)["snd_mss"]
            total = n * mss
            if total < 16:
                conn.sendall(b"ERR too small\n")
                return
            payload = b"%15d\n" % total + b"x" * (total - 16)
            conn.sendall(payload)
    except (ConnectionError, OSError):
        return
    finally:
        conn.close()


def server(args):
    fam = socket.AF_INET6 if ":" in args.bind else socket.AF_INET
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.cc:
        # Set on the listener: accepted sockets inherit it, so the
        # algorithm (and its initial window) applies from the handshake on.
        ls.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, args.cc.encode())
    if args.sndbuf:
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, args.sndbuf)
    ls.bind((args.bind, args.port))
    ls.listen(256)
    print("listening %d" % ls.getsockname()[1], flush=True)
    while True:
        conn, _ = ls.accept()
        threading.Thread(target=serve_conn, args=(conn, args),
                         daemon=True).start()


# ------------------------------------------------------------------ client

class Conn:
    def __init__(self, host, port, rcvbuf=0, clamp=0, cc=None, timeout=120):
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.s = socket.socket(fam, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if cc:
            self.s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if clamp:
            self.s.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, clamp)
        self.s.connect((host, port))
        self.buf = b""

    def _recv_exact(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def fetch(self, nseg):
        """Request nseg segments; return (bytes, seconds from request to
        last byte)."""
        t0 = time.monotonic()
        self.s.sendall(b"%d\n" % nseg)
        head = self._recv_exact(16)
        if head.startswith(b"ERR"):
            raise RuntimeError("server: %r" % head)
        total = int(head)
        self._recv_exact(total - 16)
        return total, time.monotonic() - t0

    def info(self, port=None):
        self.s.sendall(b"I\n" if port is None else b"I %d\n" % port)
        line, self.buf = _readline(self.s, self.buf)
        if line is None:
            raise ConnectionError("server closed the connection")
        if line.startswith(b"ERR"):
            raise RuntimeError("server: %r" % line)
        return json.loads(line)

    def close(self):
        try:
            self.s.sendall(b"Q\n")
        except OSError:
            pass
        self.s.close()


def client(args):
    data = Conn(args.host, args.port, args.rcvbuf, args.clamp, args.cc)
    # tcp_info of the data connection comes over a second connection, so
    # the measured connection carries nothing but requests and responses
    # (an in-band answer would be a send that ends or starts an idle period).
    ctl = Conn(args.host, args.port)
    dport = data.s.getsockname()[1]

    class C:
        fetch = data.fetch

        @staticmethod
        def info():
            return ctl.info(dport)
    c = C()
    res = {"host": args.host, "port": args.port, "segments": args.segments,
           "warm_cwnd": args.warm_cwnd, "warmup": []}
    if args.warm_fetches:
        for _ in range(args.warm_fetches):
            nbytes, secs = c.fetch(args.warm_segs)
            info = c.info()
            res["warmup"].append({"bytes": nbytes, "seconds": secs,
                                  "cwnd": info["snd_cwnd"], "info": info})
    elif args.warm_cwnd:
        for _ in range(args.warm_max):
            nbytes, secs = c.fetch(args.warm_segs)
            info = c.info()
            res["warmup"].append({"bytes": nbytes, "seconds": secs,
                                  "cwnd": info["snd_cwnd"], "info": info})
            if info["snd_cwnd"] >= args.warm_cwnd:
                break
    for w in res["warmup"][:-1]:
        w.pop("info")
    res["warm_reached"] = bool(
        not args.warm_cwnd or
        (res["warmup"] and res["warmup"][-1]["cwnd"] >= args.warm_cwnd))
    last_info = None
    if res["warmup"]:
        last_info = res["warmup"][-1].pop("info")
    rounds = []
    for i in range(args.rounds):
        if args.fresh:
            before = None
        elif i == 0 and last_info is not None:
            before = last_info  # taken right after the last warm-up fetch
        else:
            before = c.info()
        if before is None:
            idle = 0.0
        elif args.idle_rto is not None:
            # The server idles from its last data segment to the request's
            # arrival: the client sleeps after the data reached it (1/2 RTT)
            # and the side-channel tcp_info round trip (1 RTT), and the
            # request takes 1/2 RTT: about 2 (minimum) RTTs more than the
            # sleep.
            idle = max(0.0, args.idle_rto * before["rto"] / 1e6 -
                       2 * before["min_rtt"] / 1e6)
        else:
            idle = args.idle
        time.sleep(idle)
        t_req = time.time()
        nbytes, secs = c.fetch(args.segments)
        after = c.info()
        rounds.append({"idle_s": idle, "request_time": t_req,
                       "bytes": nbytes, "completion_s": secs,
                       "mss": after["snd_mss"], "before": before,
                       "after": after,
                       "burst_retrans": after["total_retrans"] -
                       (before["total_retrans"] if before else 0)})
    data.close()
    ctl.close()
    res["client_port"] = dport
    res["rounds"] = rounds
    # The single-round fields, for convenience.
    r = rounds[0]
    for k in ("idle_s", "request_time", "bytes", "completion_s", "mss",
              "before", "after", "burst_retrans"):
        res[k] = r[k]
    json.dump(res, sys.stdout)
    sys.stdout.write("\n")
    return 0 if res["warm_reached"] else 3


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--bind", default="0.0.0.0")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--cc", help="TCP_CONGESTION for every connection")
    s.add_argument("--clamp", type=int, default=0,
                   help="TCP_WINDOW_CLAMP (bytes) on accepted sockets")
    s.add_argument("--sndbuf", type=int, default=4 << 20,
                   help="SO_SNDBUF of the listener (0: autotuning)")
    c = sub.add_parser("client")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, default=8000)
    c.add_argument("--segments", type=int, default=60)
    c.add_argument("--warm-cwnd", type=int, default=0,
                   help="warm up until the server's cwnd reaches this")
    c.add_argument("--warm-segs", type=int, default=60)
    c.add_argument("--warm-max", type=int, default=20)
    c.add_argument("--warm-fetches", type=int, default=0,
                   help="warm up with exactly this many fetches instead")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--idle", type=float, default=0.0)
    g.add_argument("--idle-rto", type=float)
    c.add_argument("--rounds", type=int, default=1)
    c.add_argument("--fresh", action="store_true",
                   help="fetch at once after connecting (no warm-up, no idle, "
                   "no tcp_info before): the first flight of a new connection")
    c.add_argument("--rcvbuf", type=int, default=0)
    c.add_argument("--clamp", type=int, default=0)
    c.add_argument("--cc")
    args = p.parse_args(argv)
    if args.cmd == "server":
        return server(args)
    if args.fresh and (args.warm_cwnd or args.warm_fetches or
                       args.rounds != 1):
        p.error("--fresh excludes --warm-cwnd and --rounds")
    if args.segments < 1 or args.rounds < 1:
        p.error("--segments and --rounds must be >= 1")
    return client(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)

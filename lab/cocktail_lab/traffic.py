#!/usr/bin/env python3
"""Traffic for the VM tests and the bench: the keep-alive request/response
tool (server and client processes, started in namespaces), the echo load
of many flows checked end to end by SHA-256, and in-process traffic for the
bench (connections, responder, bulk flows, UDP cross traffic).

  python3 -m cocktail_lab.traffic server [--bind ADDR] [--port P] [--cc NAME]
                   [--clamp BYTES] [--sndbuf BYTES]
  python3 -m cocktail_lab.traffic client --host ADDR [--port P] [--segments N]
                   [--warm-cwnd C] [--warm-segs W] [--warm-max K]
                   [--idle SECONDS | --idle-rto K] [--rounds R]
                   [--rcvbuf BYTES] [--clamp BYTES] [--cc NAME]
  python3 -m cocktail_lab.traffic echo-server PORT CC
  python3 -m cocktail_lab.traffic echo-hold HOST PORT CC
  python3 -m cocktail_lab.traffic echo-load HOST4 HOST6 PORT CC CONNS SECONDS
  python3 -m cocktail_lab.traffic echo-client
  python3 -m cocktail_lab.traffic switch HOST PORT
  python3 -m cocktail_lab.traffic cwnd HOST PORT
(with lab/ on PYTHONPATH: cocktail_lab.topo.TRAFFIC is this command as the
lab and the tests start it in a namespace).

Keep-alive protocol on one TCP connection (Nagle off on both ends), one
request per line:
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
  "P PORT RATE\\n"  on that connection, setsockopt(SO_MAX_PACING_RATE,
          RATE B/s; "max" for no cap), as an application would while a
          response is in flight; answers "OK".
  "Q\\n"   close.
The server prints "listening PORT" once it accepts connections.

The keep-alive client connects, warms up (fetches of --warm-segs segments
until the server's cwnd reaches --warm-cwnd, at most --warm-max fetches),
asks for the server's tcp_info ("before"), stays idle, fetches --segments
segments, asks for tcp_info again ("after") and prints one JSON object.
--idle-rto K sleeps K * tcpi_rto - tcpi_rtt (of "before"), so the server's
own idle time (from its last send to the request's arrival, one RTT more
than the client's sleep) is about K RTOs. --rounds R repeats idle + fetch
R times on the same connection.
"""
import argparse
import hashlib
import json
import os
import random
import selectors
import socket
import sys
import threading
import time

try:
    from . import proc, tcpinfo
except ImportError:     # run by path: this directory is sys.path[0]
    import proc
    import tcpinfo


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
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)
TCP_FASTOPEN = getattr(socket, "TCP_FASTOPEN", 23)
MSG_FASTOPEN = getattr(socket, "MSG_FASTOPEN", 0x20000000)
TCPI_OPT_SYN_DATA = 32      # tcp_info.options: data in SYN acked
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
                conn.sendall(json.dumps(tcpinfo.info(conn)).encode() + b"\n")
                continue
            if line.startswith(b"P "):
                conn.sendall(_set_max_pacing(peer[0], line[2:]) + b"\n")
                continue
            if line.startswith(b"I "):
                try:
                    key = (peer[0], int(line[2:]))
                except ValueError:
                    key = None
                with CONNS_LOCK:
                    other = CONNS.get(key)
                try:
                    info = tcpinfo.info(other) if other else None
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
            mss = tcpinfo.info(conn)["snd_mss"]
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


def _set_max_pacing(addr, words):
    """SO_MAX_PACING_RATE on the server's connection from (addr, PORT), as
    the side-channel request "P PORT RATE" asks; the answer line."""
    try:
        port, rate = words.split()
        key = (addr, int(port))
        rate = -1 if rate == b"max" else int(rate)  # -1: ~0U, no cap
        if not -1 <= rate < 2 ** 32:
            raise ValueError
    except ValueError:
        return b"ERR bad request"
    with CONNS_LOCK:
        other = CONNS.get(key)
    if other is None:
        return b"ERR no such connection"
    try:
        other.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, rate)
    except OSError as e:
        return b"ERR %s" % e.strerror.encode()
    return b"OK"


def server(args):
    fam = socket.AF_INET6 if ":" in args.bind else socket.AF_INET
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.cc:
        # Set on the listener: accepted sockets inherit it, so the
        # algorithm (and its initial window) applies from the handshake on.
        tcpinfo.set_congestion(ls, args.cc)
    if args.sndbuf:
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, args.sndbuf)
    if args.clamp:
        # on the listener too: accepted sockets inherit the buffer, its
        # lock and the window clamp, and the handshake's window scale
        clamp_window(ls, args.clamp)
    ls.bind((args.bind, args.port))
    ls.listen(256)
    print("listening %d" % ls.getsockname()[1], flush=True)
    while True:
        conn, _ = ls.accept()
        threading.Thread(target=serve_conn, args=(conn, args),
                         daemon=True).start()


# ------------------------------------------------------------------ client

# setsockopt(SO_RCVBUFFORCE): SO_RCVBUF without the net.core.rmem_max cap,
# for CAP_NET_ADMIN (include/uapi/asm-generic/socket.h).
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def clamp_window(sock, clamp, rcvbuf=0):
    """Clamp the receive window SOCK advertises to CLAMP bytes, and make
    it hold. TCP_WINDOW_CLAMP alone does not: receive-buffer autotuning
    (tcp_rcv_space_adjust) sets the window clamp from every larger buffer
    it picks, so after a few round trips of a bulk transfer the window is
    the autotuned one. A buffer set by the application turns autotuning
    off, so the buffer is set too: RCVBUF bytes or, by default, 2 x CLAMP
    (the kernel doubles it for overhead and advertises half of what it
    holds, so there is room for a full window queued out of order).
    SO_RCVBUFFORCE passes net.core.rmem_max, which would cap the buffer of
    a clamp above about 100 KB; without CAP_NET_ADMIN SO_RCVBUF is used,
    and a buffer too small for the window is an error (an RCVBUF below
    CLAMP before the socket is touched). Call it before connect() or
    listen(): the window scale is chosen from the buffer at the
    handshake."""
    if rcvbuf and rcvbuf < clamp:
        raise ValueError("a receive buffer of %d bytes cannot hold a "
                         "%d-byte window" % (rcvbuf, clamp))
    want = rcvbuf or 2 * clamp
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, want)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, want)
    got = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    if got < 2 * clamp:
        raise ValueError("receive buffer of %d bytes cannot hold a %d-byte "
                         "window (net.core.rmem_max?)" % (got, clamp))
    sock.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_WINDOW_CLAMP, clamp)


class Conn:
    """A keep-alive connection to the server above; SOURCE binds it to one
    of the client's addresses first (a host of many clients); with
    connect=False the caller connects self.s itself (many at once)."""
    def __init__(self, host, port, rcvbuf=0, clamp=0, cc=None, timeout=120,
                 source=None, connect=True):
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.s = socket.socket(fam, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        if source:
            self.s.bind((source, 0))
        if clamp:
            clamp_window(self.s, clamp, rcvbuf)
        elif rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if cc:
            tcpinfo.set_congestion(self.s, cc)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if connect:
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

    def request(self, nseg):
        """Ask for nseg segments, without waiting for them (response())."""
        self.s.sendall(b"%d\n" % nseg)

    def response(self):
        """Read the answer to a request; return its length in bytes."""
        head = self._recv_exact(16)
        if head.startswith(b"ERR"):
            raise RuntimeError("server: %r" % head)
        total = int(head)
        self._recv_exact(total - 16)
        return total

    def fetch(self, nseg):
        """Request nseg segments; return (bytes, seconds from request to
        last byte)."""
        t0 = time.monotonic()
        self.request(nseg)
        total = self.response()
        return total, time.monotonic() - t0

    def _answer(self):
        line, self.buf = _readline(self.s, self.buf)
        if line is None:
            raise ConnectionError("server closed the connection")
        if line.startswith(b"ERR"):
            raise RuntimeError("server: %r" % line)
        return line

    def info(self, port=None):
        self.s.sendall(b"I\n" if port is None else b"I %d\n" % port)
        return json.loads(self._answer())

    def set_max_pacing(self, port, rate):
        """The server sets SO_MAX_PACING_RATE = rate B/s (None: no cap) on
        its connection with this client's port `port`."""
        self.s.sendall(b"P %d %s\n" % (port, b"max" if rate is None
                                         else b"%d" % rate))
        self._answer()

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
    # a fixed number of warm-up fetches, or fetches until the server's cwnd
    # reaches --warm-cwnd (at most --warm-max)
    until_cwnd = not args.warm_fetches and args.warm_cwnd
    for _ in range(args.warm_fetches or (args.warm_max if until_cwnd else 0)):
        nbytes, secs = c.fetch(args.warm_segs)
        info = c.info()
        res["warmup"].append({"bytes": nbytes, "seconds": secs,
                              "cwnd": info["snd_cwnd"], "info": info})
        if until_cwnd and info["snd_cwnd"] >= args.warm_cwnd:
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


# ------------------------------------------------- echo traffic (many flows)
# Connections that send random bursts with idle pauses through an echo
# server, both ends hashing what they send and receive: every byte must
# arrive intact while restart policies change under them.

def _key(addr):
    """Peer/local address as 'ip|port' (v4-mapped IPv6 shown as IPv4)."""
    host = addr[0]
    if host.startswith("::ffff:"):
        host = host[7:]
    return "%s|%d" % (host, addr[1])



def _recv_ready(sock):
    """Up to 64 KiB from non-blocking SOCK: bytes, b"" at end of stream,
    or None when nothing is ready after all."""
    try:
        return sock.recv(1 << 16)
    except (BlockingIOError, InterruptedError):
        return None


def echo_server(port, cc):
    """Echo server on [::]:port (v4 and v6); the listener uses cc.

    Every connection's received bytes are hashed; on SIGTERM or when stdin
    closes, prints one JSON object {peer_port: [bytes, sha256]}."""
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    tcpinfo.set_congestion(ls, cc)
    # accepts TCP Fast Open where the namespace's net.ipv4.tcp_fastopen
    # enables the server side
    ls.setsockopt(socket.IPPROTO_TCP, TCP_FASTOPEN, 16)
    ls.bind(("::", port))
    ls.listen(1024)
    ls.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, None)
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    conns, done = {}, {}
    print("ready", flush=True)
    while True:
        for key, ev in sel.select(1.0):
            if key.data == "stdin":
                line = sys.stdin.readline()
                if line.strip() == "report":
                    # connections finished so far, then forget them
                    print(json.dumps(done), flush=True)
                    done = {}
                    continue
                if not line:
                    print(json.dumps({**done, **{
                        str(c["port"]): [c["n"], c["h"].hexdigest()]
                        for c in conns.values()}}), flush=True)
                    return
                continue
            if key.data is None:
                try:
                    s, addr = ls.accept()
                except BlockingIOError:
                    continue
                s.setblocking(False)
                conns[s] = {"port": _key(addr), "n": 0, "out": bytearray(),
                            "h": hashlib.sha256(), "eof": False}
                if tcpinfo.congestion(s) != cc:
                    print("accepted socket has cc %s" % tcpinfo.congestion(s),
                          file=sys.stderr, flush=True)
                    os._exit(3)
                sel.register(s, selectors.EVENT_READ, "c")
                continue
            s = key.fileobj
            c = conns[s]
            if ev & selectors.EVENT_READ and len(c["out"]) < (1 << 20):
                d = _recv_ready(s)
                if d == b"":
                    c["eof"] = True
                elif d:
                    c["n"] += len(d)
                    c["h"].update(d)
                    c["out"] += d
            if c["out"]:
                try:
                    k = s.send(c["out"])
                    del c["out"][:k]
                except (BlockingIOError, InterruptedError):
                    pass
            if c["eof"] and not c["out"]:
                sel.unregister(s)
                s.shutdown(socket.SHUT_WR)
                s.close()
                done[str(c["port"])] = [c["n"], c["h"].hexdigest()]
                del conns[s]
                continue
            want = selectors.EVENT_READ if len(c["out"]) < (1 << 20) else 0
            if c["out"]:
                want |= selectors.EVENT_WRITE
            sel.modify(s, want or selectors.EVENT_WRITE, "c")


def echo_hold(host, port, cc):
    """Connect with cc, echo 1 MB, print 'held CC', keep the socket open
    until stdin closes."""
    s = socket.create_connection((host, port))
    tcpinfo.set_congestion(s, cc)
    data = random.Random(1).randbytes(1 << 20)
    s.sendall(data)
    got = bytearray()
    while len(got) < len(data):
        d = s.recv(1 << 16)
        assert d, "server closed early"
        got += d
    assert bytes(got) == data, "echo differs"
    print("held %s" % tcpinfo.congestion(s), flush=True)
    sys.stdin.readline()
    s.shutdown(socket.SHUT_WR)
    while s.recv(1 << 16):
        pass
    s.close()


def echo_load(host4, host6, port, cc, nconn, seconds):
    """nconn connections (half IPv6), each sending bursts of random data
    with idle pauses for `seconds`, reading the echo back.  Prints one JSON
    object {local_port: [bytes_sent, sha256_sent, bytes_echoed,
    sha256_echoed, stall_s, drain_s]}: stall_s is the longest time the
    connection had echo outstanding (sent > echoed) and received nothing,
    drain_s the time from its shutdown to the server's FIN."""
    sel = selectors.DefaultSelector()
    rnd = random.Random(7)
    pool = rnd.randbytes(1 << 20)
    conns = []
    for i in range(nconn):
        fam, host = ((socket.AF_INET6, host6) if i % 2 else
                     (socket.AF_INET, host4))
        s = socket.socket(fam, socket.SOCK_STREAM)
        tcpinfo.set_congestion(s, cc)
        s.connect((host, port))
        s.setblocking(False)
        c = {"s": s, "port": _key(s.getsockname()), "sent": 0, "got": 0,
             "hs": hashlib.sha256(), "hr": hashlib.sha256(),
             "left": 0, "next": 0.0, "closed": False, "eof": False,
             "last": 0.0, "stall": 0.0, "shut": 0.0, "drain": 0.0,
             "mask": selectors.EVENT_READ | selectors.EVENT_WRITE}
        conns.append(c)
        sel.register(s, c["mask"], c)
    end = time.monotonic() + seconds
    while True:
        now = time.monotonic()
        if now >= end:
            for c in conns:
                if not c["closed"]:
                    c["s"].shutdown(socket.SHUT_WR)
                    c["closed"] = True
                    c["shut"] = now
                    if not c["eof"]:
                        sel.modify(c["s"], selectors.EVENT_READ, c)
        if all(c["eof"] for c in conns):
            break
        if now > end + 120:
            print("echo did not complete", file=sys.stderr, flush=True)
            os._exit(4)
        for key, ev in sel.select(0.05):
            c = key.data
            s = c["s"]
            if ev & selectors.EVENT_READ:
                d = _recv_ready(s)
                if d == b"":
                    c["eof"] = True
                    c["drain"] = now - c["shut"]
                    sel.unregister(s)
                    continue
                if d:
                    if c["got"] < c["sent"]:    # echo was outstanding
                        c["stall"] = max(c["stall"], now - c["last"])
                    c["got"] += len(d)
                    c["hr"].update(d)
                    c["last"] = now
            if c["closed"] or not ev & selectors.EVENT_WRITE:
                continue
            if c["left"] == 0:
                if now < c["next"]:
                    continue
                c["left"] = rnd.randint(1000, 256 * 1024)
            off = rnd.randrange(0, len(pool) - c["left"])
            chunk = pool[off:off + min(c["left"], 65536)]
            try:
                k = s.send(chunk)
            except (BlockingIOError, InterruptedError):
                continue
            c["hs"].update(chunk[:k])
            if c["got"] == c["sent"]:   # echo outstanding from now on
                c["last"] = now
            c["sent"] += k
            c["left"] -= k
            if c["left"] == 0 and rnd.random() < 0.4:
                # idle long enough for a restart (RTO >= 200 ms)
                c["next"] = now + rnd.uniform(0.3, 0.9)
        # connections waiting for their pause to end need no EVENT_WRITE
        for c in conns:
            if c["closed"]:
                continue
            want = selectors.EVENT_READ
            if c["left"] or now >= c["next"]:
                want |= selectors.EVENT_WRITE
            if want != c["mask"]:
                c["mask"] = want
                sel.modify(c["s"], want, c)
    out = {}
    for c in conns:
        out[str(c["port"])] = [c["sent"], c["hs"].hexdigest(),
                               c["got"], c["hr"].hexdigest(),
                               round(c["stall"], 3), round(c["drain"], 3)]
        c["s"].close()
    return out


def cwnd_at_connect(host, port, fastopen=False):
    """Connect with cocktail; return cwnd right after the handshake.
    fastopen: connect twice with TCP Fast Open, 100 bytes in the SYN (the
    first connection fetches the cookie, the second carries the data in
    its SYN); return [cwnd, True if the SYN's data was acknowledged]."""
    if not fastopen:
        s = socket.socket()
        tcpinfo.set_congestion(s, "cocktail")
        s.connect((host, port))
        cwnd = tcpinfo.get(s)["snd_cwnd"]
        s.close()
        return cwnd
    for _ in range(2):
        s = socket.socket()
        tcpinfo.set_congestion(s, "cocktail")
        s.sendto(b"f" * 100, MSG_FASTOPEN, (host, port))
        info = tcpinfo.get(s)
        s.shutdown(socket.SHUT_WR)
        while s.recv(4096):     # the echo, then the server's FIN
            pass
        s.close()
    return [info["snd_cwnd"], bool(info["options"] & TCPI_OPT_SYN_DATA)]


def echo_client():
    """Long-lived traffic client: one JSON command per stdin line
    (["load", host4, host6, port, cc, conns, seconds] or
    ["cwnd", host, port, fastopen]); one JSON answer per line ({"ok": result} or
    {"error": text}).  Saves a Python start-up (seconds under TCG) per
    transfer."""
    import traceback
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            if cmd[0] == "load":
                res = echo_load(cmd[1], cmd[2], int(cmd[3]), cmd[4],
                                int(cmd[5]), float(cmd[6]))
            elif cmd[0] == "cwnd":
                res = cwnd_at_connect(cmd[1], int(cmd[2]), *cmd[3:])
            else:
                raise ValueError("unknown command %r" % cmd[0])
            ans = {"ok": res}
        except Exception:  # reported to the test, which fails on it
            ans = {"error": traceback.format_exc()}
        print(json.dumps(ans), flush=True)


def switch(host, port):
    """Echo 4 MB with reno, switch the busy socket to cocktail; print cwnd
    before, cwnd after and the algorithm now in use."""
    s = socket.create_connection((host, port))
    tcpinfo.set_congestion(s, "reno")
    data = b"x" * (4 << 20)
    # The echo is read while the data is written: a client that wrote all
    # 4 MB before reading can deadlock with the echo server (its receive
    # buffer does not grow while nothing reads it, and the server stops
    # reading once its own buffers are full).
    writer = threading.Thread(target=s.sendall, args=(data,))
    writer.start()
    got = 0
    while got < len(data):
        b = s.recv(1 << 16)
        if not b:
            raise RuntimeError("echo ended after %d of %d bytes" %
                               (got, len(data)))
        got += len(b)
    writer.join()
    before = tcpinfo.get(s)["snd_cwnd"]
    tcpinfo.set_congestion(s, "cocktail")
    print(before, tcpinfo.get(s)["snd_cwnd"], tcpinfo.congestion(s),
          flush=True)
    s.close()


# -------------------------------------------------- in-process traffic
# Sockets created by threads that entered the right network namespace; once
# created they work from any thread, so sender, receiver and cross traffic
# share one monotonic clock and no process start-up (2+ s under TCG) sits
# inside a measurement: a TCP connection whose sender writes N bytes on
# command, a request/response responder, bulk flows and constant-bit-rate
# UDP cross traffic.

def _listen(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(8)
    return s


def _connect(addr, port, clamp, timeout):
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if clamp:
        clamp_window(c, clamp)
    c.settimeout(timeout)
    c.connect((addr, port))
    return c


class Listener:
    """A listening socket created inside netns NS."""

    def __init__(self, ns, addr, port):
        self.sock = proc.in_ns(ns, _listen, addr, port)
        self.addr, self.port = addr, port

    def close(self):
        self.sock.close()


def tcp_pair(listener, client_ns, cc, clamp=0, nodelay=True, timeout=60):
    """(server side, client side) of a new connection from CLIENT_NS to
    LISTENER.  The server side gets congestion control CC and TCP_NODELAY
    (Nagle off) before any data; CLAMP (bytes) is the client's receive
    window (clamp_window()), set before connect."""
    t = proc.NsThread(client_ns, _connect, listener.addr, listener.port,
                      clamp, timeout)
    t.start()
    listener.sock.settimeout(timeout)
    srv, _ = listener.sock.accept()
    cli = t.join_result(timeout)
    tcpinfo.set_congestion(srv, cc)
    if nodelay:
        srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    srv.settimeout(timeout)
    return srv, cli


class Writer(threading.Thread):
    """sendall(NBYTES) on SOCK in the background; .t0 is the monotonic time
    just before the write started."""

    def __init__(self, sock, nbytes):
        super().__init__(daemon=True)
        self.sock, self.nbytes = sock, nbytes
        self.t0 = None
        self.error = None

    def run(self):
        buf = b"x" * self.nbytes
        self.t0 = time.monotonic()
        try:
            self.sock.sendall(buf)
        except OSError as e:
            self.error = e


def recv_exact(sock, n, deadline):
    """Read exactly N bytes; return the monotonic time of the last byte."""
    got = 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("received %d of %d bytes" % (got, n))
        sock.settimeout(left)
        b = sock.recv(min(1 << 20, n - got))
        if not b:
            raise ConnectionError("peer closed after %d of %d bytes" %
                                  (got, n))
        got += len(b)
    return time.monotonic()


def send_and_time(srv, cli, nbytes, timeout):
    """Write NBYTES on SRV, read them on CLI: (t0, t_last)."""
    w = Writer(srv, nbytes)
    w.start()
    t_last = recv_exact(cli, nbytes, time.monotonic() + timeout)
    w.join(timeout)
    if w.error:
        raise w.error
    return w.t0, t_last


def wait_acked(sock, timeout):
    """Wait until SOCK has no unacknowledged data; its tcp_info then."""
    return wait_acked_by(lambda: tcpinfo.info(sock), timeout)


def wait_acked_by(info, timeout):
    """Poll INFO() (a tcp_info dict) until nothing is unacknowledged or
    TIMEOUT passes; the last tcp_info."""
    end = time.monotonic() + timeout
    while True:
        i = info()
        if i["unacked"] == 0 or time.monotonic() > end:
            return i
        time.sleep(0.005)


def _udp(bind=None):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if bind:
        u.bind(bind)
    return u


# How far a cross-traffic sender may fall behind its schedule before it
# gives up the datagrams it owes: a sender the host stalled (a loaded or
# emulated guest) would otherwise send the whole stall's worth back to
# back, a burst of its own that overflows the bottleneck whatever the
# measured flow does, and the drops would count as the flow's harm.  10 ms
# of the aggregate rate is 32 frames at 38.4 Mbit/s (a sixth of a
# 206-packet queue) and one or two at 1.5 Mbit/s.
CBR_MAX_LAG_S = 0.010


def cbr_schedule(nxt, now, step, max_lag=CBR_MAX_LAG_S):
    """A constant-bit-rate sender's next send time after one datagram
    went out: NXT (when that datagram was due) + STEP, or, when NOW is
    already more than MAX_LAG past that, NOW (the datagrams owed since
    are dropped at the source).  Returns (next due time, datagrams
    skipped)."""
    nxt += step
    behind = now - nxt
    if behind <= max_lag:
        return nxt, 0
    return now, int(behind / step)


class CrossTraffic:
    """Constant-bit-rate UDP from each (sender ns, receiver ns, receiver
    addr) flow at RATE_KBIT, in frames of FRAME bytes on the wire
    (payload = FRAME - 42), never faster than that rate for longer than
    CBR_MAX_LAG_S (see cbr_schedule: SKIPPED counts what a stalled sender
    gave up).  Sinks are bound so no ICMP comes back; the data is never
    read (the receivers' buffers drop it, after the bottleneck)."""

    def __init__(self, flows, rate_kbit, frame=1514, port=9000):
        self.rate_kbit, self.frame = rate_kbit, frame
        self.socks = []
        self.sinks = []
        for sns, rns, raddr in flows:
            self.sinks.append(proc.in_ns(rns, _udp, (raddr, port)))
            self.socks.append((proc.in_ns(sns, _udp), (raddr, port)))
        self._stop = threading.Event()
        self._thread = None
        self.sent = 0
        self.skipped = 0

    def start(self):
        if not self.socks or self.rate_kbit <= 0:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        payload = b"c" * (self.frame - 42)
        n = len(self.socks)
        step = self.frame * 8 / (self.rate_kbit * 1000.0) / n
        nxt = time.monotonic()
        i = 0
        while not self._stop.is_set():
            s, dst = self.socks[i % n]
            try:
                s.sendto(payload, dst)
                self.sent += 1
            except OSError:
                pass
            i += 1
            nxt, skipped = cbr_schedule(nxt, time.monotonic(), step)
            self.skipped += skipped
            d = nxt - time.monotonic()
            if d > 0:
                self._stop.wait(d)

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(5)
            self._thread = None

    def close(self):
        self.stop()
        for s, _ in self.socks:
            s.close()
        for s in self.sinks:
            s.close()


class Responder(threading.Thread):
    """Server side of a persistent request/response connection: each
    request is a 4-byte big-endian length; the answer is that many bytes
    (written with one sendall)."""

    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock = sock
        self.error = None

    def run(self):
        buf = b""
        try:
            while True:
                while len(buf) < 4:
                    b = self.sock.recv(4 - len(buf))
                    if not b:
                        return
                    buf += b
                n = int.from_bytes(buf[:4], "big")
                buf = b""
                if n == 0:
                    return
                self.sock.sendall(b"r" * n)
        except OSError as e:
            self.error = e


def request(cli, nbytes, timeout):
    """One request on a Responder connection: (t0, t_last)."""
    t0 = time.monotonic()
    cli.sendall(int(nbytes).to_bytes(4, "big"))
    return t0, recv_exact(cli, nbytes, t0 + timeout)


class Bulk:
    """A long-running bulk TCP transfer (competing traffic): a writer
    thread on SRV and a reader thread draining CLI until stop()."""

    def __init__(self, srv, cli):
        self.srv, self.cli = srv, cli
        self._stop = threading.Event()
        self.received = 0

    def start(self):
        threading.Thread(target=self._write, daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()

    def _write(self):
        chunk = b"b" * 65536
        try:
            while not self._stop.is_set():
                self.srv.sendall(chunk)
        except OSError:
            pass

    def _read(self):
        try:
            while not self._stop.is_set():
                b = self.cli.recv(1 << 20)
                if not b:
                    return
                self.received += len(b)
        except OSError:
            pass

    def stop(self):
        self._stop.set()
        for s in (self.srv, self.cli):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


def serve(lst, cc, handler, stop, nagle=False, sndbuf=0):
    """Accept connections on LISTENER until STOP is set; each gets
    congestion control CC, Nagle on/off and, with SNDBUF (bytes), that
    SO_SNDBUF (the kernel doubles it and no longer autotunes), then
    HANDLER(conn) runs and the connection is closed.  Errors of one
    connection end only it."""
    lst.sock.settimeout(0.5)
    while not stop.is_set():
        try:
            c, _ = lst.sock.accept()
        except socket.timeout:
            continue
        except OSError:
            return
        try:
            tcpinfo.set_congestion(c, cc)
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,
                         0 if nagle else 1)
            if sndbuf:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
            c.settimeout(30)
            handler(c)
        except (OSError, ValueError, IndexError):
            pass
        finally:
            c.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--bind", default="0.0.0.0")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--cc", help="TCP_CONGESTION for every connection")
    s.add_argument("--clamp", type=int, default=0,
                   help="receive window clamp (bytes) of accepted "
                   "sockets")
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
    e = sub.add_parser("echo-server", help="echo_server()")
    e.add_argument("port", type=int)
    e.add_argument("cc")
    e = sub.add_parser("echo-hold", help="echo_hold()")
    e.add_argument("host")
    e.add_argument("port", type=int)
    e.add_argument("cc")
    e = sub.add_parser("echo-load", help="echo_load(), printed as JSON")
    e.add_argument("host4")
    e.add_argument("host6")
    e.add_argument("port", type=int)
    e.add_argument("cc")
    e.add_argument("conns", type=int)
    e.add_argument("seconds", type=float)
    sub.add_parser("echo-client", help="echo_client()")
    for name in ("switch", "cwnd"):
        e = sub.add_parser(name, help="%s()" % name)
        e.add_argument("host")
        e.add_argument("port", type=int)
    args = p.parse_args(argv)
    if args.cmd == "server":
        return server(args)
    if args.cmd == "echo-server":
        return echo_server(args.port, args.cc)
    if args.cmd == "echo-hold":
        return echo_hold(args.host, args.port, args.cc)
    if args.cmd == "echo-load":
        print(json.dumps(echo_load(args.host4, args.host6, args.port, args.cc,
                                   args.conns, args.seconds)), flush=True)
        return 0
    if args.cmd == "echo-client":
        return echo_client()
    if args.cmd == "switch":
        return switch(args.host, args.port)
    if args.cmd == "cwnd":
        print(cwnd_at_connect(args.host, args.port), flush=True)
        return 0
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

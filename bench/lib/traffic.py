"""Traffic for the bench, in one Python process: sockets are created by
threads that entered the right network namespace (proc.NsThread); once
created they work from any thread, so sender, receiver and cross traffic
share one monotonic clock and no process start-up (2+ s under TCG) sits
inside a measurement.

This is the bench's own minimal traffic (a TCP connection whose sender
writes N segments on command, and constant-bit-rate UDP cross traffic).
"""
import socket
import threading
import time

from cocktail_lab import proc

from . import tcpinfo


def _listen(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(8)
    return s


def _connect(addr, port, clamp, timeout):
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if clamp:
        c.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_WINDOW_CLAMP, clamp)
    c.settimeout(timeout)
    c.connect((addr, port))
    return c


class Listener:
    """A listening socket created inside netns NS."""

    def __init__(self, ns, addr, port):
        t = proc.NsThread(ns, _listen, addr, port)
        t.start()
        self.sock = t.join_result(30)
        self.addr, self.port = addr, port

    def close(self):
        self.sock.close()


def tcp_pair(listener, client_ns, cc, clamp=0, nodelay=True, timeout=60):
    """(server side, client side) of a new connection from CLIENT_NS to
    LISTENER.  The server side gets congestion control CC and TCP_NODELAY
    (Nagle off) before any data; CLAMP (bytes) is the client's
    TCP_WINDOW_CLAMP, set before connect."""
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


class CrossTraffic:
    """Constant-bit-rate UDP from each (sender ns, receiver ns, receiver
    addr) flow at RATE_KBIT, in frames of FRAME bytes on the wire
    (payload = FRAME - 42).  Sinks are bound so no ICMP comes back; the
    data is never read (the receivers' buffers drop it, after the
    bottleneck)."""

    def __init__(self, flows, rate_kbit, frame=1514, port=9000):
        self.rate_kbit, self.frame = rate_kbit, frame
        self.socks = []
        self.sinks = []
        for sns, rns, raddr in flows:
            t = proc.NsThread(rns, _udp, (raddr, port))
            t.start()
            self.sinks.append(t.join_result(30))
            t = proc.NsThread(sns, _udp)
            t.start()
            self.socks.append((t.join_result(30), (raddr, port)))
        self._stop = threading.Event()
        self._thread = None
        self.sent = 0

    def start(self):
        if not self.socks or self.rate_kbit <= 0:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        payload = b"c" * (self.frame - 42)
        interval = self.frame * 8 / (self.rate_kbit * 1000.0)
        n = len(self.socks)
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
            nxt += interval / n
            d = nxt - time.monotonic()
            if d > 0:
                self._stop.wait(d)
            elif d < -1.0:          # fell far behind (loaded host): resync
                nxt = time.monotonic()

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


def serve(lst, cc, handler, stop, nagle=False):
    """Accept connections on LISTENER until STOP is set; each gets
    congestion control CC and Nagle on/off, then HANDLER(conn) runs and
    the connection is closed.  Errors of one connection end only it."""
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
            c.settimeout(30)
            handler(c)
        except (OSError, ValueError, IndexError):
            pass
        finally:
            c.close()

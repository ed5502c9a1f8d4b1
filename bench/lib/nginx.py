"""nginx (Debian's, /usr/sbin/nginx) as the bench's reference server: a
foreground process in a namespace with its own config, pid, logs and
document root under a temporary directory; keep-alive, `sendfile on`,
`tcp_nodelay on`.  The congestion control of its connections is the
namespace's default (`net.ipv4.tcp_congestion_control`, which the
policy's tcp-tune profile sets); `Diag` reads it back per connection
through sock_diag, together with struct tcp_info (cocktail_lab.tcpinfo).

Also the bench's HTTP/1.1 client side: `get()` on a keep-alive
connection, timed from the request write to the last body byte.
"""
import shutil
import socket
import tempfile
import time
from pathlib import Path

from cocktail_lab import proc, tcpinfo, traffic

BINARY = "/usr/sbin/nginx"

CONF = """\
daemon off;
master_process on;
worker_processes 1;
user root;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush off;
    tcp_nodelay on;
    keepalive_timeout 120s;
    keepalive_requests 100000;
    server {{
        listen {addr}:{port} reuseport;
        root {d}/www;
        location / {{ }}
    }}
}}
"""


def available():
    """(usable, reason)."""
    if not Path(BINARY).exists():
        return False, "%s not found (dev/deps installs Debian's nginx)" \
            % BINARY
    return True, "found"


def version():
    r = proc.sh("%s -v 2>&1" % BINARY, check=False)
    return r.strip()


class Nginx:
    """nginx serving FILES ({url path: size in bytes}) on ADDR:PORT in
    namespace NS.  start() waits until it accepts connections."""

    def __init__(self, ns, addr, port, files):
        self.ns, self.addr, self.port = ns, addr, port
        self.dir = Path(tempfile.mkdtemp(prefix="bench-nginx-"))
        www = self.dir / "www"
        www.mkdir()
        for name, size in files.items():
            (www / name.lstrip("/")).write_bytes(b"n" * size)
        self.conf = self.dir / "nginx.conf"
        self.conf.write_text(CONF.format(d=self.dir, addr=addr, port=port))
        self.proc = None

    def start(self, topo, timeout=60):
        self.proc = topo.start(self.ns, [BINARY, "-p", str(self.dir), "-e",
                                         str(self.dir / "error.log"), "-c",
                                         str(self.conf)])
        end = time.monotonic() + timeout
        while True:
            if self.proc.p.poll() is not None:
                raise RuntimeError("nginx exited %s: %s %s" % (
                    self.proc.p.returncode, "".join(self.proc.out),
                    self.errors()))
            t = proc.NsThread(self.ns, accepts, self.addr, self.port)
            t.start()
            if t.join_result(30):
                return self
            if time.monotonic() > end:
                raise TimeoutError("nginx did not accept on %s:%d in %ss: %s"
                                   % (self.addr, self.port, timeout,
                                      self.errors()))
            time.sleep(0.2)

    def errors(self):
        p = self.dir / "error.log"
        return p.read_text()[-2000:] if p.exists() else ""

    def stop(self, topo):
        if self.proc is not None:
            topo.stop(self.proc)
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


def accepts(addr, port):
    """Whether ADDR:PORT accepts a TCP connection (within 2 s)."""
    try:
        socket.create_connection((addr, port), timeout=2).close()
        return True
    except OSError:
        return False


# ------------------------------------------------------------ HTTP client

def read_response(c, deadline):
    """Read one HTTP/1.x response with Content-Length from C before
    DEADLINE (monotonic); returns (header bytes, body length, monotonic
    time of the last byte)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        c.settimeout(max(0.001, deadline - time.monotonic()))
        b = c.recv(65536)
        if not b:
            raise ConnectionError("closed in headers")
        buf += b
    head, body = buf.split(b"\r\n\r\n", 1)
    status = head.split(b"\r\n", 1)[0]
    if b" 200 " not in status + b" ":
        raise ConnectionError("HTTP status %r" % status.decode(
            errors="replace"))
    n = None
    for ln in head.split(b"\r\n")[1:]:
        k, _, v = ln.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    if n is None:
        raise ConnectionError("response without Content-Length")
    if len(body) >= n:
        return head, n, time.monotonic()
    return head, n, traffic.recv_exact(c, n - len(body), deadline)


def request_bytes(path, close=False):
    return ("GET %s HTTP/1.1\r\nHost: bench\r\nConnection: %s\r\n\r\n" % (
        path, "close" if close else "keep-alive")).encode()


def get(c, path, timeout):
    """One GET on keep-alive connection C: (t0, t_last, body bytes)."""
    t0 = time.monotonic()
    c.sendall(request_bytes(path))
    _, n, t1 = read_response(c, t0 + timeout)
    return t0, t1, n


# ------------------------------------------------------------ sock_diag

class Diag(tcpinfo.Diag):
    """cocktail_lab.tcpinfo.Diag answering for namespace NS's sockets: its
    netlink socket is made by a thread inside NS."""

    def __init__(self, ns):
        t = proc.NsThread(ns, tcpinfo.diag_socket)
        t.start()
        super().__init__(t.join_result(30))

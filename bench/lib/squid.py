"""Squid (Debian's, /usr/sbin/squid) as the bench's web caches: a
foreground process (`squid -N`) in a namespace with its own config, pid,
logs and service name under a temporary directory, memory cache only.

Two roles, the cache hierarchy of the Waikato trace study:
  child   the client's local cache: caches nothing, forwards every request
          to its one parent (never_direct), asking it over ICP first
          unless told not to (cache_peer ... no-query)
  parent  the remote cache: answers ICP, fetches from the origin servers
          and keeps what they send (memory cache)
Persistent connections between the two are on or off on both sides
(the child's server_persistent_connections, the parent's
client_persistent_connections); the client's connections to the child
are not persistent, as the study's client's were not.

`manager()` reads a cache manager page (squid-internal-mgr) over the
cache's HTTP port; `peer_stats()` picks the child's ICP counters and the
parent's ICP round-trip time out of `server_list`.
"""
import pwd
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path

from cocktail_lab import proc

from . import nginx

BINARY = "/usr/sbin/squid"
USER = "proxy"           # Debian's squid user: the cache drops root for it

COMMON = """\
pid_filename {d}/squid.pid
cache_log {d}/cache.log
access_log stdio:{d}/access.log
logfile_rotate 0
coredump_dir {d}
cache_effective_user {user}
visible_hostname {name}
shutdown_lifetime 0 seconds
# memory only (no cache_dir): nothing survives a restart
cache_mem 64 MB
maximum_object_size_in_memory 4 MB
http_access allow all
# no ICMP pinger, no cache digests: only ICP and HTTP cross the link
pinger_enable off
"""

CHILD = COMMON + """\
http_port 127.0.0.1:{port}
# a cache sends ICP queries from its ICP socket: open when it asks
icp_port {own_icp}
icp_access deny all
htcp_port 0
cache_peer {parent} parent {parent_port} {icp_port} no-digest {query}
never_direct allow all
cache deny all
server_persistent_connections {persistent}
client_persistent_connections off
{rcvbuf}"""

PARENT = COMMON + """\
http_port {addr}:{port}
icp_port {icp_port}
udp_incoming_address {addr}
htcp_port 0
icp_access allow all
digest_generation off
client_persistent_connections {persistent}
server_persistent_connections on
# objects from the origin are kept whatever their headers say
refresh_pattern . 60 100% 1440
"""


def available():
    """(usable, reason)."""
    if not Path(BINARY).exists():
        return False, "%s not found (dev/deps installs Debian's squid)" \
            % BINARY
    try:
        pwd.getpwnam(USER)
    except KeyError:
        return False, "no user %s (Debian's squid package creates it)" % USER
    return True, "found"


def version():
    r = proc.sh("%s -v 2>&1" % BINARY, check=False)
    return r.splitlines()[0].strip() if r else "?"


class Squid:
    """One cache in namespace NS, listening on ADDR:PORT. ROLE is "child"
    (with parent=ADDR, parent_port, icp_port, icp=True/False, and
    optionally rcvbuf=BYTES: squid's tcp_recv_bufsize, the SO_RCVBUF of
    the sockets it opens, so of its connections to the parent) or
    "parent" (with icp_port); persistent=True/False for the connections
    between the caches."""

    def __init__(self, ns, role, addr, port, persistent, **kw):
        self.ns, self.role, self.addr, self.port = ns, role, addr, port
        self.dir = Path(tempfile.mkdtemp(prefix="bench-squid-%s-" % role))
        onoff = "on" if persistent else "off"
        args = dict(d=self.dir, user=USER, name="bench-%s" % role,
                    port=port, persistent=onoff)
        if role == "child":
            text = CHILD.format(parent=kw["parent"],
                                parent_port=kw["parent_port"],
                                icp_port=kw["icp_port"],
                                own_icp=kw["icp_port"] if kw["icp"] else 0,
                                query="" if kw["icp"] else "no-query",
                                rcvbuf="tcp_recv_bufsize %d bytes\n" %
                                kw["rcvbuf"] if kw.get("rcvbuf") else "",
                                **args)
        elif role == "parent":
            text = PARENT.format(addr=addr, icp_port=kw["icp_port"], **args)
        else:
            raise ValueError("squid role %r: child or parent" % role)
        self.conf = self.dir / "squid.conf"
        self.conf.write_text(text)
        u = pwd.getpwnam(USER)
        shutil.chown(self.dir, u.pw_uid, u.pw_gid)
        self.proc = None

    def start(self, topo, timeout=90):
        """Start it and wait until its HTTP port accepts connections."""
        self.proc = topo.start(self.ns, [
            BINARY, "-N", "-n", "bench%s" % self.role, "-f",
            str(self.conf)])
        end = time.monotonic() + timeout
        while True:
            if self.proc.p.poll() is not None:
                raise RuntimeError("squid (%s) exited %s: %s %s" % (
                    self.role, self.proc.p.returncode,
                    "".join(self.proc.out)[-2000:], self.log()))
            if proc.in_ns(self.ns, nginx.accepts, self.addr, self.port):
                return self
            if time.monotonic() > end:
                raise TimeoutError("squid (%s) did not accept on %s:%d in "
                                   "%ss: %s" % (self.role, self.addr,
                                                self.port, timeout,
                                                self.log()))
            time.sleep(0.3)

    def wait_peer_up(self, timeout=60):
        """A child: wait until its parent is usable. Squid configures a
        peer's addresses a moment after it starts accepting (even for an
        IP literal) and until then refuses to forward (502) when it may
        not go direct."""
        end = time.monotonic() + timeout
        while True:
            text = self.manager("server_list")
            if re.search(r"^Status\s*:\s*Up", text, re.M) and \
                    re.search(r"^Address\[0\]\s*:", text, re.M):
                return self
            if time.monotonic() > end:
                raise TimeoutError("squid (%s): parent not up in %ss: %s"
                                   % (self.role, timeout, text[-500:]))
            time.sleep(0.5)

    def save_logs(self, dest):
        """Copy cache.log to DEST (a file path)."""
        p = self.dir / "cache.log"
        if p.exists():
            Path(dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dest)

    def log(self):
        p = self.dir / "cache.log"
        return p.read_text(errors="replace")[-2000:] if p.exists() else ""

    def manager(self, page, timeout=30):
        """A cache manager page's text (squid-internal-mgr over HTTP)."""
        return proc.in_ns(self.ns, _get_text, self.addr, self.port,
                          "/squid-internal-mgr/%s" % page, timeout,
                          timeout=timeout + 5)

    def stop(self, topo):
        if self.proc is not None:
            topo.stop(self.proc)
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


def peer_stats(server_list):
    """From a child's `server_list` page: {"pings_sent", "pings_acked",
    "icp_rtt_ms"} of its (first) parent; the RTT is squid's running
    average of ICP replies, 0 when none came."""
    def num(label):
        m = re.search(r"^%s\s*:\s*(\d+)" % re.escape(label), server_list,
                      re.M)
        return int(m.group(1)) if m else None
    return {"pings_sent": num("PINGS SENT"),
            "pings_acked": num("PINGS ACKED"),
            "icp_rtt_ms": num("AVG RTT")}


def _get_text(addr, port, path, timeout):
    c = socket.create_connection((addr, port), timeout=timeout)
    try:
        c.sendall(("GET %s HTTP/1.0\r\nHost: %s:%d\r\n\r\n" % (
            path, addr, port)).encode())
        buf = b""
        while True:
            b = c.recv(65536)
            if not b:
                break
            buf += b
    finally:
        c.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    if b" 200 " not in head.split(b"\r\n", 1)[0] + b" ":
        raise RuntimeError("%s: %r" % (path, head[:200]))
    return body.decode(errors="replace")

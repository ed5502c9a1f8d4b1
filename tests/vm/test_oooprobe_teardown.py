"""tcp_oooprobe frees a flow's state however its socket goes away, also
for sockets that are destroyed without a normal close. Flows with
out-of-order data pending (one segment black-holed by the router, so the
hole never fills and nothing is ever released) and clean ones are torn
down by
  (a) an RST: SO_LINGER 0 close at the receiver; an RST from the peer,
  (b) an orphan killed: close with unread data (RST); an orphan in
      FIN-WAIT-1 killed with `ss -K`; an orphan timed out
      (tcp_orphan_retries 1 in the namespace),
  (c) namespace deletion with live connections: the namespaces are
      deleted while a process in the client namespace and this one hold
      connections (and a listener holds unaccepted children with
      out-of-order data); then the process is killed and the sockets
      closed with no path left (orphans time out).
Afterwards GET_STATS shows no flow tracked, nothing released and every
recorded range discarded (recorded == discarded > 0), a FLOW event for
every socket (the close was seen), rmmod works and dmesg is clean (the
conftest fixture)."""
import errno
import socket
import struct
import subprocess
import sys
import time

import pytest

from conftest import insmod, module_loaded, rmmod
from cocktail_lab.genl import CMD, EventCollector, Genl
from cocktail_lab.proc import in_netns
from cocktail_lab.topo import Link
from oooprobe_lib import quiet_stats, tcp_repair_write_seq

MOD = "tcp_oooprobe"
HOLE = 2        # index of the black-holed segment
SEGS = 20       # segments sent after the connection is up
LINGER0 = struct.pack("ii", 1, 0)


@pytest.fixture
def probe():
    rmmod(MOD)
    insmod(MOD, flows="all")
    col = EventCollector()
    yield col
    col.stop(settle=0)
    rmmod(MOD)
    assert not module_loaded(MOD)


def wait_untracked(g, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        st = g.stats()
        if st["STAT_FLOWS_TRACKED"] == 0:
            return st
        time.sleep(0.25)
    return g.stats()


class Conns:
    """Connections server -> client over link, listener in the server
    namespace; with ooo, segment HOLE of the server's data never reaches
    the client."""

    def __init__(self, link, port):
        self.link, self.port = link, port
        with in_netns(link.srv):
            self.ls = socket.socket(link.family)
            self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.ls.bind((link.SRV, port))
            self.ls.listen(16)
        self.pairs = []

    def open(self, ooo):
        with in_netns(self.link.cli):
            c = socket.socket(self.link.family)
            c.connect((self.link.SRV, self.port))
        s, _ = self.ls.accept()
        mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
        if ooo:
            seq = (tcp_repair_write_seq(s) + HOLE * mss) & 0xffffffff
            self.link.drop_seq(seq, None)
        s.sendall(bytes(SEGS * mss))
        self.pairs.append((c.getsockname()[1], ooo))
        return s, c

    def ports(self):
        """(local, remote) port pairs of both ends of every connection."""
        out = set()
        for cp, _ in self.pairs:
            out |= {(self.port, cp), (cp, self.port)}
        return out

    def ooo_clients(self):
        """(local, remote) ports of the receiving ends with a hole."""
        return [(cp, self.port) for cp, ooo in self.pairs if ooo]


def check_teardown(col, g, st0, expect_ports, ooo_clients):
    st = wait_untracked(g)
    st = quiet_stats(g)
    events = list(col.events)
    flows = {(e["LOCAL_PORT"], e["REMOTE_PORT"]): e for e in events
             if e["cmd"] == CMD["FLOW"]}
    d = {k: st[k] - st0.get(k, 0) for k in st if isinstance(st[k], int)}
    print("after teardown: %s" % {k: v for k, v in d.items() if v})
    assert st["STAT_FLOWS_TRACKED"] == 0, st
    assert d["STAT_RANGES_RECORDED"] > 0, "no out-of-order data was pending"
    # the holes never filled: nothing released, everything discarded
    assert d["STAT_RANGES_RELEASED"] == 0, d
    assert d["STAT_RANGES_DISCARDED"] == d["STAT_RANGES_RECORDED"], d
    assert d["STAT_RANGE_OVERFLOWS"] == 0 and d["STAT_FLOW_OVERFLOWS"] == 0
    # every full socket passes TCP_CLOSE before it is destroyed, and the
    # tracepoint that sees it is never skipped (unlike a kprobe): one FLOW
    # event per socket, however it went away
    missing = expect_ports - set(flows)
    assert not missing, ("no FLOW event for %s" % sorted(missing), st)
    for cp in ooo_clients:
        if cp in flows:
            assert flows[cp]["OOO_SEGS"] > 0, flows[cp]
    return flows


def link_for(tag, orphan_retries=None):
    link = Link(tag, rtt_ms=20).up()
    if orphan_retries is not None:
        for ns in (link.srv, link.cli):
            link.sysctl(ns, "net.ipv4.tcp_orphan_retries", orphan_retries)
    return link


def settle(g):
    """Let the data in flight arrive (ranges recorded)."""
    return quiet_stats(g)


def test_rst(probe):
    """(a) SO_LINGER 0 close at the receiver, and an RST from the peer
    (checked while the receiver still holds its descriptor: the state goes
    at the RST, not at close)."""
    g = Genl()
    st0 = g.stats()
    link = link_for("rst")
    try:
        cs = Conns(link, 6001)
        s1, c1 = cs.open(ooo=True)      # receiver aborts
        s2, c2 = cs.open(ooo=True)      # peer aborts
        s3, c3 = cs.open(ooo=False)     # clean, receiver aborts
        settle(g)
        for c in (c1, c3):
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
            c.close()
        s2.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
        s2.close()
        cp2 = (c2.getsockname()[1], 6001)
        end = time.time() + 30
        while time.time() < end and not any(
                e["cmd"] == CMD["FLOW"] and
                (e["LOCAL_PORT"], e["REMOTE_PORT"]) == cp2
                for e in list(probe.events)):
            time.sleep(0.2)
        # the RST was taken (and the flow reported) before close
        assert c2.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == \
            errno.ECONNRESET
        assert any(e["cmd"] == CMD["FLOW"] and
                   (e["LOCAL_PORT"], e["REMOTE_PORT"]) == cp2
                   for e in list(probe.events)), "no FLOW event at the RST"
        c2.close()
        for s in (s1, s3):
            s.close()
        cs.ls.close()
        check_teardown(probe, g, st0, cs.ports(), cs.ooo_clients())
    finally:
        link.down()
        g.close()


def test_orphans(probe):
    """(b) close with unread data (RST at once), an orphan in FIN-WAIT-1
    (its FIN black-holed) killed by `ss -K`, and orphans left to time out
    (tcp_orphan_retries 1 in a second pair of namespaces)."""
    g = Genl()
    st0 = g.stats()
    link = link_for("orph")
    link2 = link_for("orpt", orphan_retries=1)
    try:
        cs = Conns(link, 6101)
        s1, c1 = cs.open(ooo=True)      # closed with unread data
        s2, c2 = cs.open(ooo=True)      # orphan, killed by ss -K
        s3, c3 = cs.open(ooo=False)     # clean, closed with unread data
        ct = Conns(link2, 6102)
        s4, c4 = ct.open(ooo=True)      # orphan, times out
        s5, c5 = ct.open(ooo=False)     # clean orphan, times out
        settle(g)
        c1.close()
        c3.close()
        # read what is in order, then close: FIN-WAIT-1 with the FIN lost
        for lk, c in ((link, c2), (link2, c4), (link2, c5)):
            c.setblocking(False)
            try:
                while c.recv(1 << 20):
                    pass
            except BlockingIOError:
                pass
            lk.drop_seq(tcp_repair_write_seq(c), None, toward="server")
        for c in (c2, c4, c5):
            c.close()
        time.sleep(0.5)
        fw1 = link.run(link.cli, ["ss", "-tnH", "state", "fin-wait-1",
                                  "dport", "= :6101"]).stdout.strip()
        assert fw1, "no orphan in FIN-WAIT-1"
        kill = link.run(link.cli, ["ss", "-tnK", "state", "fin-wait-1",
                                   "dport", "= :6101"], check=False)
        assert kill.returncode == 0, kill.stderr
        assert not link.run(link.cli, ["ss", "-tnH", "state", "fin-wait-1",
                                       "dport", "= :6101"]).stdout.strip()
        # the servers go away cleanly-ish: abort them
        for s in (s1, s2, s3, s4, s5):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
            s.close()
        cs.ls.close()
        ct.ls.close()
        check_teardown(probe, g, st0, cs.ports() | ct.ports(),
                       cs.ooo_clients() + ct.ooo_clients())
    finally:
        link.down()
        link2.down()
        g.close()


CLIENT = r'''
import socket, struct, sys, time
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
n, hole = int(sys.argv[3]), int(sys.argv[4])
socks = []
for _ in range(n):
    c = socket.socket(fam)
    c.connect((sys.argv[1], int(sys.argv[2])))
    socks.append(c)
for c in socks:
    c.setsockopt(socket.IPPROTO_TCP, 19, 1)        # TCP_REPAIR
    c.setsockopt(socket.IPPROTO_TCP, 20, 2)        # TCP_SEND_QUEUE
    seq = struct.unpack("=I", c.getsockopt(socket.IPPROTO_TCP, 21, 4))[0]
    c.setsockopt(socket.IPPROTO_TCP, 19, 0)
    mss = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
    print(c.getsockname()[1], (seq + hole * mss) & 0xffffffff, mss,
          flush=True)
sys.stdin.readline()
for c in socks:
    c.sendall(bytes(%d * c.getsockopt(socket.IPPROTO_TCP,
                                      socket.TCP_MAXSEG)))
print("sent", flush=True)
time.sleep(3600)
''' % SEGS


def test_netns_deletion(probe):
    """(c) namespaces deleted under live connections, both directions with
    holes, and a listener with unaccepted children holding out-of-order
    data; then the client process is killed and this one closes its
    sockets: every flow is freed once its socket dies."""
    g = Genl()
    st0 = g.stats()
    link = link_for("nsd", orphan_retries=1)
    proc = None
    try:
        cs = Conns(link, 6201)
        proc = subprocess.Popen(
            ["ip", "netns", "exec", link.cli, sys.executable, "-c", CLIENT,
             link.SRV, "6201", "4", str(HOLE)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        lines = [proc.stdout.readline().split() for _ in range(4)]
        assert all(len(x) == 3 for x in lines), lines
        accepted = []
        for _ in range(2):              # two accepted, two left queued
            s, peer = cs.ls.accept()
            accepted.append(s)
        for cport, seq, _ in lines:
            link.drop_seq(int(seq), None, toward="server")
        for s in accepted:              # server -> client, with holes
            mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
            link.drop_seq((tcp_repair_write_seq(s) + HOLE * mss) &
                          0xffffffff, None)
            s.sendall(bytes(SEGS * mss))
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "sent"
        settle(g)
        ports = set()
        for cport, _, _ in lines:
            ports |= {(int(cport), 6201), (6201, int(cport))}
        tracked = g.stats()["STAT_FLOWS_TRACKED"]
        assert tracked >= 8, "both ends of 4 connections: %d" % tracked
        link.down()                     # ip netns del, connections live
        proc.kill()
        proc.wait()
        cs.ls.close()                   # unaccepted children forgotten
        for s in accepted:              # orphans with no path: time out
            s.close()
        check_teardown(probe, g, st0, ports, [])
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        if link.info:
            link.down()
        g.close()

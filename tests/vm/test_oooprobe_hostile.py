"""tcp_oooprobe against a hostile sender: a peer that opens connections and
keeps holes open with 1-byte segments at every other sequence number inside
the receive window (RawPeer: hand-made segments on a raw socket from an
address the receiver routes back to the peer's namespace, which drops the
answers without a reset).

- Only what the kernel queued is recorded: the ranges the probe holds never
  outnumber the skbs the receive buffers can hold (the rest of the
  segments were dropped or pruned by the kernel, and are counted as not
  queued or discarded).
- The global byte budget (max_range_bytes) holds: the probe's range bytes
  never exceed it, the refusals are counted, and the module's counters
  agree with the slab caches the ranges and flows come from
  (/proc/slabinfo, after flushing the per-CPU slabs).
- A flow's ranges are capped by its receive buffer: a peer that turns
  many held 1-byte segments into ranges with one covering segment (the
  queue then holds one skb for them) hits the cap, counted as an overflow.
Every flow and array is freed when the connections go (the counters return
to zero, rmmod destroys the caches, which reports any object left), and
dmesg stays clean (the conftest fixture)."""
import re
import socket
import threading
import time

import pytest

from conftest import insmod, rmmod
from cocktail_lab.genl import Genl
from cocktail_lab.proc import in_netns
from cocktail_lab.topo import Pair
from oooprobe_lib import REPO, RawPeer, quiet_stats, slab, slab_range_bytes

MOD = "tcp_oooprobe"
PORT = 7100
SPOOF_NET = "10.66.0.0/16"
SPOOF = "10.66.0.1"
# No skb is charged less than this to a receive buffer: sk_buff and
# skb_shared_info alone take more (SKB_TRUESIZE(1) is 640 bytes on x86-64).
MIN_TRUESIZE = 512


def held(st):
    return (st["STAT_RANGES_RECORDED"] - st["STAT_RANGES_RELEASED"] -
            st["STAT_RANGES_DISCARDED"])


def check_slab(g):
    """The module's range bytes and flow count equal what its caches hold
    (retried: a segment still in flight may allocate in between)."""
    for _ in range(10):
        st, s, st2 = g.stats(), slab(), g.stats()
        if st == st2 and slab_range_bytes(s) == st["STAT_RANGE_BYTES"] and \
                s["oooprobe_flow"][0] == st["STAT_FLOWS_TRACKED"]:
            return st, s
        time.sleep(0.5)
    pytest.fail("slab caches %s disagree with the counters %s" % (s, st))


def rmem(p):
    """Receive memory of the listener's connections (ss skmem r)."""
    out = p.run(p.server, ["ss", "-tmnH", "state", "established",
                           "( sport = :%d )" % PORT]).stdout
    return [int(m) for m in re.findall(r"skmem:\(r(\d+),", out)]


def netstat(p):
    """The server namespace's TcpExt counters."""
    lines = p.run(p.server, ["cat", "/proc/net/netstat"]).stdout.splitlines()
    for names, vals in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            return dict(zip(names.split()[1:], map(int, vals.split()[1:])))
    return {}


@pytest.fixture
def victim():
    """A listener in the server namespace; the peer's spoofed network is
    routed to the client namespace, where RawPeer sends and listens."""
    with Pair(rtt=0, name="hz%s" % int(time.time() * 1000 % 1e6)) as p:
        p.run(p.server, ["ip", "route", "add", SPOOF_NET, "via",
                         p.client_addr])
        with in_netns(p.server):
            ls = socket.socket()
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        p.ls = ls
        peer = RawPeer(p.client, p.client_dev, [SPOOF], p.server_addr, PORT)
        try:
            yield p, peer
        finally:
            peer.close()
            ls.close()


def record(line):
    """A figure for the documentation: printed, and appended to
    build/vm/oooprobe_hostile.txt."""
    print(line)
    out = REPO / "build" / "vm" / "oooprobe_hostile.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a") as f:
        f.write(line + "\n")


def conns(lo, hi):
    return [(0, port) for port in range(lo, hi)]


def listen(p, rcvbuf=None):
    if rcvbuf:
        p.ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    p.ls.bind((p.server_addr, PORT))
    p.ls.listen(4096)


def attack(peer, ports, segs):
    """1-byte segments at every other sequence number, from offset 1 on
    (offset 0, the first byte expected, is never sent)."""
    for i in range(segs):
        for sp in ports:
            peer.data(sp, 1 + 2 * i, b"x")
        if i % 64 == 63:
            peer.drain()


def teardown_check(g, p):
    """Connections gone (the listener closed, which resets its unaccepted
    children, and the namespaces deleted): no flow, no array left."""
    p.ls.close()
    p.down()
    end = time.time() + 60
    while time.time() < end:
        st = g.stats()
        if st["STAT_FLOWS_TRACKED"] == 0 and st["STAT_RANGE_BYTES"] == 0:
            break
        time.sleep(0.25)
    assert st["STAT_FLOWS_TRACKED"] == 0, st
    assert st["STAT_RANGE_BYTES"] == 0, st
    assert held(st) == 0, st


def test_only_queued_ranges(victim):
    """1000 one-byte segments on each of 8 connections, far more than the
    receive buffers hold (SO_RCVBUF 64 KiB: sk_rcvbuf 128 KiB, locked, so
    the kernel does not grow it to make room): the ranges held stay within
    what the buffers hold, and the rest is counted (not queued, or
    discarded when the kernel pruned it)."""
    p, peer = victim
    rmmod(MOD)
    insmod(MOD, flows="all")
    g = Genl()
    listen(p, rcvbuf=64 << 10)
    ports = peer.connect(conns(20000, 20008))
    assert len(ports) == 8
    ns0 = netstat(p)
    attack(peer, ports, 1000)
    st = quiet_stats(g)
    ns1 = netstat(p)
    r = rmem(p)
    assert len(r) == 8, r
    dropped = (ns1.get("TCPOFODrop", 0) - ns0.get("TCPOFODrop", 0) +
               ns1.get("OfoPruned", 0) - ns0.get("OfoPruned", 0))
    # the kernel did not keep everything: the buffers filled
    assert dropped > 0, (ns0, ns1)
    assert st["STAT_SEGS_NOT_QUEUED"] + st["STAT_RANGES_DISCARDED"] > 0, st
    # what the probe holds, the buffers hold (one skb per range at least)
    assert 0 < held(st) <= sum(r) // MIN_TRUESIZE, (held(st), r, st)
    assert st["STAT_RANGE_BUDGET_REFUSED"] == 0, st
    check_slab(g)
    record("8 flows, 8000 one-byte segments: %d ranges held in %d bytes of "
          "receive buffers; kernel dropped or pruned %d times; %d not queued,"
          " %d discarded" % (held(st), sum(r), dropped,
                             st["STAT_SEGS_NOT_QUEUED"],
                             st["STAT_RANGES_DISCARDED"]))
    teardown_check(g, p)
    g.close()
    rmmod(MOD)


def test_budget(victim):
    """40 connections that could take 4 KiB of ranges each against a 64 KiB
    budget: the bytes never exceed it (sampled while the segments arrive),
    growths are refused and counted, and the slab caches agree."""
    budget = 64 << 10
    p, peer = victim
    rmmod(MOD)
    insmod(MOD, flows="all", max_range_bytes=budget)
    g = Genl()
    assert g.stats()["STAT_MAX_RANGE_BYTES"] == budget
    listen(p)
    ports = peer.connect(conns(21000, 21040))
    assert len(ports) == 40
    peaks, stop = [], threading.Event()

    def sample():
        gs = Genl()
        while not stop.is_set():
            peaks.append(gs.stats()["STAT_RANGE_BYTES"])
            time.sleep(0.05)
        gs.close()

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        attack(peer, ports, 300)
        st = quiet_stats(g)
    finally:
        stop.set()
        t.join()
    assert len(peaks) > 5 and max(peaks) <= budget, (len(peaks), max(peaks))
    assert st["STAT_RANGE_BYTES"] <= budget, st
    # the budget is nearly used: less than one largest array left
    assert st["STAT_RANGE_BYTES"] > budget - 4096, st
    assert st["STAT_RANGE_BUDGET_REFUSED"] > 0, st
    assert st["STAT_RANGE_OVERFLOWS"] >= st["STAT_RANGE_BUDGET_REFUSED"], st
    st, s = check_slab(g)
    assert st["STAT_FLOWS_TRACKED"] == 40, st
    record("budget %d: %d bytes of ranges in %d flows, %d growths refused; "
          "flow object %d bytes; caches %s" %
          (budget, st["STAT_RANGE_BYTES"], st["STAT_FLOWS_TRACKED"],
           st["STAT_RANGE_BUDGET_REFUSED"], s["oooprobe_flow"][1], s))
    teardown_check(g, p)
    g.close()
    rmmod(MOD)


def test_rcvbuf_cap(victim):
    """A small receive buffer (SO_RCVBUF 4096: sk_rcvbuf 8192, room for
    14 of the smallest skbs, SKB_TRUESIZE(1)) and a peer that sends five
    1-byte segments, then one segment covering them and their holes (the
    queue keeps that one skb, the probe 9 ranges), three times: the flow's
    ranges stop at its cap (at most 16 ranges, one 256-byte array),
    counted as overflows, with budget to spare."""
    p, peer = victim
    rmmod(MOD)
    insmod(MOD, flows="all")
    g = Genl()
    listen(p, rcvbuf=4096)
    ports = peer.connect(conns(22000, 22004))
    assert len(ports) == 4
    for rnd in range(3):
        base = 20 * rnd
        for sp in ports:
            for i in range(5):
                peer.data(sp, base + 1 + 2 * i, b"x")
            peer.data(sp, base + 1, b"y" * 9)
        peer.drain()
    st = quiet_stats(g)
    assert st["STAT_RANGE_OVERFLOWS"] >= 4, st
    assert st["STAT_RANGE_BUDGET_REFUSED"] == 0, st
    assert st["STAT_RANGE_BYTES"] <= 4 * 16 * 16, st
    assert 4 * 9 <= held(st) <= 4 * 16, st
    check_slab(g)
    teardown_check(g, p)
    g.close()
    rmmod(MOD)


def test_filter_changes_are_not_lost():
    """The ports parameter and SET_FILTER (netns) change the same filter
    at once, 2 x 1500 times: each is a read-modify-write of the whole
    filter, under one lock, so neither ever undoes the other (read back
    after each write, the value written is there)."""
    rmmod(MOD)
    insmod(MOD)
    path = "/sys/module/%s/parameters/ports" % MOD
    lost, stop = [], threading.Event()

    def netns_writer():
        gs = Genl()
        i = 0
        while not stop.is_set():
            i += 1
            gs.set_filter(netns=1000 + i % 7)
            if gs.get_filter()["FILTER_NETNS"] != 1000 + i % 7:
                lost.append(("netns", i))
        gs.close()

    t = threading.Thread(target=netns_writer, daemon=True)
    t.start()
    try:
        for i in range(1500):
            want = "%d" % (1 + i % 50000)
            with open(path, "w") as f:
                f.write(want)
            with open(path) as f:
                got = f.read().strip()
            if got != want:
                lost.append(("ports", want, got))
    finally:
        stop.set()
        t.join()
    g = Genl()
    g.set_filter(ports=[], netns=0)
    g.close()
    assert not lost, lost[:10]
    rmmod(MOD)

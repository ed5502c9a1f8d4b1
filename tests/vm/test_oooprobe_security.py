"""tcp_oooprobe: unprivileged callers get EPERM, malformed
netlink messages are rejected without changing anything, and a slow reader
loses events only with matching drop counts on both sides."""
import errno
import socket
import struct
import sys
import time
from pathlib import Path

from conftest import sh
from cocktail_lab.genl import (A, CMD, NLMSG_ERROR, EventCollector, Genl,
                               nla)
from cocktail_lab.topo import Link
from oooprobe_lib import REPO, quiet_stats
from test_oooprobe import probe, transfer  # noqa: F401 (probe: fixture)

NOBODY = ("setpriv --reuid=65534 --regid=65534 --clear-groups "
          "--inh-caps=-all --bounding-set=-all")


UNPRIV = r'''
import errno, sys
sys.path.insert(0, "%s/lab")
from cocktail_lab.genl import Genl
g = Genl()
for name, call in (("stats", g.stats), ("getfilter", g.get_filter),
                   ("subscribe", g.subscribe),
                   ("setfilter", lambda: g.set_filter(ports=[1]))):
    try:
        call()
        print(name + "-ALLOWED")
    except OSError as e:
        print(name + "-" + errno.errorcode[e.errno])
''' % REPO


def test_unprivileged_eperm(probe):
    script = Path("/tmp/oooprobe_unpriv.py")
    script.write_text(UNPRIV)
    script.chmod(0o644)
    r = sh("%s %s %s" % (NOBODY, sys.executable, script), check=False)
    out = r.stdout.split()
    assert r.returncode == 0, r.stderr
    assert out == ["stats-EPERM", "getfilter-EPERM", "subscribe-EPERM",
                   "setfilter-EPERM"], out
    g = Genl()
    assert g.get_filter()["FILTER_PORTS"] == []
    g.close()
    # the daemon says so clearly
    r = sh("%s %s/daemon/oooprobed --report --duration 1" % (NOBODY, REPO),
           check=False)
    assert r.returncode == 1
    assert "needs CAP_NET_ADMIN" in r.stderr, r.stderr


def _err(replies):
    for typ, payload in replies:
        if typ == NLMSG_ERROR:
            return -struct.unpack_from("=i", payload)[0]
    return None


def test_malformed_messages(probe):
    g = Genl()
    g.set_filter(ports=[80, 443], netns=0, flows=0)
    before = g.get_filter()
    fam, sf = g.family, CMD["SET_FILTER"]
    cases = {
        # FILTER_FLOWS is a u8: a u32 is the wrong size
        "wrong size": (sf, nla(A["FILTER_FLOWS"], struct.pack("=I", 1))),
        "out of range": (sf, nla(A["FILTER_FLOWS"], bytes([7]))),
        "odd ports": (sf, nla(A["FILTER_PORTS"], b"\x50\x00\x01")),
        "too many ports": (sf, nla(A["FILTER_PORTS"], bytes(2 * 17))),
        "port 0": (sf, nla(A["FILTER_PORTS"], struct.pack("=HH", 80, 0))),
        "unknown attr": (sf, nla(200, b"\0\0\0\0")),
        "netns too short": (sf, nla(A["FILTER_NETNS"], b"\1\0")),
        # attribute header says 40 bytes, 8 follow
        "truncated attr": (sf, struct.pack("=HH", 40, A["FILTER_NETNS"]) +
                           b"\0" * 8),
        "stray bytes": (sf, b"\x01\x02"),
        # a valid attribute followed by a bad one: nothing is applied
        "good then bad": (sf, nla(A["FILTER_NETNS"], struct.pack("=Q", 9)) +
                          nla(A["FILTER_FLOWS"], bytes([9]))),
    }
    for name, (cmd, payload) in cases.items():
        err = _err(g.raw(fam, cmd, payload))
        assert err == errno.EINVAL, "%s: %s" % (name, err)
    # unknown commands, including the event commands sent as requests
    for cmd in (0, CMD["SEGMENT"], CMD["FLOW"], 99):
        err = _err(g.raw(fam, cmd))
        assert err in (errno.EOPNOTSUPP, errno.EINVAL), (cmd, err)
    # header lies: reserved field set, and a message length past the end
    assert _err(g.raw(fam, CMD["GET_STATS"], reserved=1)) == errno.EINVAL
    assert g.get_filter() == before
    # still working: a real filter change and events
    g.set_filter(ports=[], flows=0)
    assert g.get_filter()["FILTER_PORTS"] == []
    g.close()
    with Link("mf", rtt_ms=20) as link:
        col = EventCollector()
        transfer(link, 150_000, drop_index=10, port=5401)
        events = col.stop()
    assert [e for e in events if e["cmd"] == CMD["SEGMENT"]]


FLOOD_TARGET = 100_000   # events: more than any receive buffer holds
FLOOD_BUDGET = 85        # seconds: stop earlier on a slow TCG host


def test_slow_reader_drop_accounting(probe):
    """A subscriber with a tiny buffer that does not read while events
    flood in: it sees ENOBUFS, the gaps in event numbers equal the kernel's
    dropped count, and received + lost equals what the kernel numbered."""
    g0 = Genl()
    s0 = g0.stats()
    slow = Genl()
    slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.subscribe()
    t0 = time.time()
    transfers = 0
    # jitter far above the packet spacing: netem's time-sorted queue
    # reorders most segments, so most arrive out of order (one SEGMENT
    # event each); loop until the target or the time budget is reached
    with Link("fd", rtt_ms=2, srv_netem="1ms") as link:
        while (g0.stats()["EVENT_SEQ"] - s0["EVENT_SEQ"] < FLOOD_TARGET and
               time.time() - t0 < FLOOD_BUDGET):
            transfer(link, 4_000_000, port=5410 + transfers % 50)
            transfers += 1
    flood_s = time.time() - t0
    s1 = quiet_stats(g0, timeout=120, polls=3, every=0.5)
    # now read everything that was kept
    slow.sock.settimeout(0.5)
    seqs = []
    enobufs = 0
    while True:
        try:
            events = slow.recv_events()
        except socket.timeout:
            break
        except OSError as e:
            assert e.errno == errno.ENOBUFS
            enobufs += 1
            continue
        seqs.extend(e["EVENT_SEQ"] for e in events)
    numbered = s1["EVENT_SEQ"] - s0["EVENT_SEQ"]
    dropped = s1["STAT_EVENTS_DROPPED"] - s0["STAT_EVENTS_DROPPED"]
    sent = s1["STAT_EVENTS_SENT"] - s0["STAT_EVENTS_SENT"]
    lo, hi = s0["EVENT_SEQ"] + 1, s1["EVENT_SEQ"]
    got = [s for s in seqs if lo <= s <= hi]
    # the reader's view of the loss: gaps in the event numbers
    gaps = sum(b - a - 1 for a, b in zip([lo - 1] + got, got + [hi + 1]))
    line = ("flood: %d transfers in %.0f s; numbered %d sent %d dropped %d "
            "received %d gaps %d enobufs %d" %
            (transfers, flood_s, numbered, sent, dropped, len(got), gaps,
             enobufs))
    print(line)
    (REPO / "build" / "vm").mkdir(parents=True, exist_ok=True)
    (REPO / "build" / "vm" / "oooprobe_flood.txt").write_text(line + "\n")
    assert numbered >= 10_000, "flood too small to mean anything"
    assert enobufs >= 1 and dropped > 0
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert sent + dropped == numbered
    assert len(got) == sent
    assert gaps == dropped
    slow.close()
    g0.close()

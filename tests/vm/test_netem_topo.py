"""scripts/netem-topo (and cocktail_lab.topo, its engine) does what it
says: RTT, bottleneck rate, MSS-sized segments, loss/reorder/RED in tc,
clean teardown, clean failures."""
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from cocktail_lab import tcpinfo, traffic
from cocktail_lab.capture import Capture, data_segments, median, read_pcap
from cocktail_lab.topo import REPO, Topo

NETEM_TOPO = str(REPO / "scripts" / "netem-topo")
OUT = REPO / "build" / "vm" / "netem_topo"
STATE = Path("/run/netem-topo")


def netns_names():
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True,
                         text=True, check=True).stdout
    return sorted(n["name"] for n in json.loads(out or "[]"))


def state_files():
    return sorted(os.listdir(STATE)) if STATE.is_dir() else []


def topo_cmd(*args, env=None):
    return subprocess.run([NETEM_TOPO] + list(args), text=True,
                          capture_output=True, env=env)


@pytest.fixture(scope="module")
def topo():
    with Topo(rtt=100, rate="10mbit", limit=100) as t:
        yield t


def busybox_ping(t, ns, dst, count=6):
    out = t.run(ns, ["busybox", "ping", "-c", str(count), "-i", "0.25",
                     dst]).stdout
    rtts = [float(x) for x in re.findall(r"time=([0-9.]+) ms", out)]
    assert len(rtts) == count, out
    return rtts[1:]  # the first one includes neighbour resolution


def test_description(topo):
    info = topo.info
    assert info["name"] == topo.name and re.fullmatch(r"[a-z0-9]{2,8}",
                                                      topo.name)
    assert set(info["namespaces"]) <= set(netns_names())
    for ns in info["namespaces"]:
        assert ns.startswith(topo.name + "-")
    assert topo.server_addr.startswith("198.18.")
    assert topo.client_addr.startswith("198.19.")
    assert info["tc"] and all("tc qdisc add" in c for c in info["tc"])
    # The JSON says which tc commands built it: they match the kernel's view.
    fwd = topo.qdiscs(info["bottleneck"]["ns"], info["bottleneck"]["dev"])
    kinds = [q["kind"] for q in fwd]
    assert kinds == ["netem", "netem"], fwd
    assert fwd[0]["options"]["delay"]["delay"] == pytest.approx(0.05)
    assert fwd[1]["options"]["rate"]["rate"] == 1250000
    assert fwd[1]["options"]["limit"] == 100
    rev = topo.qdiscs(info["reverse"]["ns"], info["reverse"]["dev"])
    assert rev[0]["kind"] == "netem"
    assert rev[0]["options"]["delay"]["delay"] == pytest.approx(0.05)
    # Offloads are off on every veth, both ends.
    for ns, dev in ((topo.server, "to-r"), (topo.router, "to-s0"),
                    (topo.router, "to-c0"), (topo.client, "to-r")):
        feats = topo.run(ns, ["ethtool", "-k", dev]).stdout
        for f in ("tcp-segmentation-offload", "generic-segmentation-offload",
                  "generic-receive-offload"):
            assert re.search(r"^%s: off" % f, feats, re.M), (ns, dev, feats)


def test_ping_rtt(topo):
    rtts = busybox_ping(topo, topo.server, topo.client_addr)
    assert min(rtts) >= 100.0, rtts
    # TCG adds a few ms; the netem delay must dominate.
    assert median(rtts) < 100 * 1.3, rtts
    rtts6 = busybox_ping(topo, topo.client, topo.server_addr6, count=4)
    assert min(rtts6) >= 100.0 and median(rtts6) < 130, rtts6


def test_ping_rtt_20ms():
    with Topo(rtt=20) as t:
        rtts = busybox_ping(t, t.server, t.client_addr, count=5)
        assert min(rtts) >= 20.0 and median(rtts) < 20 * 1.5 + 5, rtts


def test_bulk_rate_and_mss(topo):
    """A 600-segment fetch: never faster than the bottleneck at the
    receiver, and every data segment the server sends is at most one MSS
    (most exactly one)."""
    srv = topo.ka_server(port=8101, cc="cubic")
    try:
        with Capture(topo.client, "to-r", OUT / "bulk_client.pcap",
                     "tcp port 8101") as ccap, \
                Capture(topo.capture_ns, topo.capture_dev,
                        OUT / "bulk_router.pcap", "tcp port 8101") as rcap:
            res = topo.ka_client(port=8101, segments=600, fresh=True)
    finally:
        topo.stop(srv)
    assert ccap.dropped == 0 and rcap.dropped == 0
    mss = res["mss"]
    assert mss == 1448  # 1500 MTU, IPv4, timestamps
    at_client = data_segments(read_pcap(ccap.path), topo.server_addr)
    at_router = data_segments(read_pcap(rcap.path), topo.server_addr)
    assert sum(p.plen for p in at_client) >= 600 * mss
    # Rate at the receiver over the transfer, counting Ethernet frames
    # (payload + 66 bytes of headers with timestamps).
    t = at_client[-1].ts - at_client[0].ts
    wire_bits = sum((p.plen + 66) * 8 for p in at_client[1:])
    assert wire_bits / t <= 10e6 * 1.03, (wire_bits / t, t)
    # End-to-end goodput cannot beat the bottleneck either.
    assert res["bytes"] * 8 / res["completion_s"] < 10e6
    sizes = [p.plen for p in at_router]
    assert max(sizes) == mss, sorted(set(sizes))
    # Nagle is off, so a send that waits for buffer space may push a short
    # segment; nearly all are full-sized.
    assert sum(1 for s in sizes if s == mss) >= 0.95 * len(sizes), sorted(sizes)


def test_window_clamp_holds():
    """The receive window the bench clamps (Chan's 22 segments) holds for
    the whole of a bulk transfer. TCP_WINDOW_CLAMP alone is lifted by
    receive-buffer autotuning within seconds (to several times the clamp
    on this path); traffic.clamp_window() locks the buffer too. On a
    100 ms, 2 Mbit/s path with a 100-packet queue (so no loss limits the
    window), 20 s of bulk data: the bytes in flight reach the clamp and
    never pass it by more than a segment, and the peer's advertised window
    never passes it by more than the window scale's rounding."""
    clamp = 22 * 1448
    with Topo(rtt=100, rate="2mbit", limit=100) as t:
        lst = traffic.Listener(t.server, t.server_addr, 8102)
        srv, cli = traffic.tcp_pair(lst, t.client, "cubic", clamp=clamp)
        bulk = traffic.Bulk(srv, cli)
        bulk.start()
        flight, wnd = [], []
        try:
            end = time.monotonic() + 20
            while time.monotonic() < end:
                i = tcpinfo.get(srv)
                flight.append(i["bytes_sent"] - i["bytes_retrans"] -
                              i["bytes_acked"])
                wnd.append(i["snd_wnd"])
                time.sleep(0.02)
        finally:
            bulk.stop()
            srv.close()
            cli.close()
            lst.close()
    assert bulk.received > 0
    wscale = i["snd_wscale"]
    assert max(flight) >= clamp - 2 * 1448, (max(flight), clamp)
    assert max(flight) <= clamp + 1448, (max(flight), clamp)
    assert max(wnd) <= clamp + (1 << wscale), (max(wnd), clamp, wscale)


def test_impairments_in_tc():
    with Topo(rtt=40, loss=1.5, reorder=10, reorder_corr=25,
              reorder_dir="rev", limit=50) as t:
        bn, rv = t.info["bottleneck"], t.info["reverse"]
        fwd = t.qdiscs(bn["ns"], bn["dev"])
        rev = t.qdiscs(rv["ns"], rv["dev"])
        fo, ro = fwd[0]["options"], rev[0]["options"]
        assert fo["loss-random"]["loss"] == pytest.approx(0.015), fo
        assert "reorder" not in fo or not fo["reorder"]["reorder"], fo
        assert ro["reorder"]["reorder"] == pytest.approx(0.10), ro
        assert ro["reorder"]["correlation"] == pytest.approx(0.25), ro
        assert "loss-random" not in ro, ro
        assert fwd[1]["options"]["limit"] == 50
        assert any("loss 1.5%" in c for c in t.info["tc"])
        assert any("reorder 10% 25%" in c for c in t.info["tc"])


def test_red():
    with Topo(rtt=40, red=True, rate="20mbit", limit=80) as t:
        bn = t.info["bottleneck"]
        kinds = [q["kind"] for q in t.qdiscs(bn["ns"], bn["dev"])]
        assert kinds == ["netem", "tbf", "red"], kinds
        tbf = t.qdiscs(bn["ns"], bn["dev"])[1]["options"]
        assert tbf["rate"] == 2500000


def test_dumbbell():
    with Topo(rtt=40, senders=3) as t:
        assert len(t.pairs) == 3 and t.info["dumbbell"]
        assert len(t.info["routers"]) == 2
        assert len(set(p["server_addr"] for p in t.pairs)) == 3
        for p in t.pairs:
            out = t.run(p["server_ns"], ["busybox", "ping", "-c", "2", "-i",
                                         "0.2", p["client_addr"]]).stdout
            rtts = [float(x) for x in re.findall(r"time=([0-9.]+) ms", out)]
            assert len(rtts) == 2 and min(rtts) >= 40.0, out
        # Server 0 cannot see client 1's traffic: capture points differ.
        assert t.pairs[0]["capture_dev"] != t.pairs[1]["capture_dev"]
        bn = t.info["bottleneck"]
        assert bn["dev"] == "to-rr" and bn["ns"] == t.info["routers"][0]


def test_dumbbell_most_senders():
    """The most server hosts netem-topo allows (32): every pair reaches
    its peer both ways, over IPv4 and IPv6, also those past the 16th
    (their subnets 198.18.32-47.0/24)."""
    with Topo(rtt=10, senders=32) as t:
        assert len(t.pairs) == 32
        for p in (t.pairs[0], t.pairs[15], t.pairs[16], t.pairs[31]):
            for ns, dst in ((p["server_ns"], p["client_addr"]),
                            (p["client_ns"], p["server_addr"]),
                            (p["client_ns"], p["server_addr6"])):
                r = t.run(ns, ["busybox", "ping", "-c", "1", "-W", "2",
                               dst], check=False)
                assert r.returncode == 0, (p["index"], ns, dst, r.stdout,
                                           r.stderr)


def test_down_removes_everything():
    before_ns, before_state = netns_names(), state_files()
    t = Topo(rtt=10, senders=2).up()
    assert len(netns_names()) == len(before_ns) + 6
    listed = json.loads(topo_cmd("list").stdout)
    assert t.name in [x["name"] for x in listed]
    t.down()
    assert netns_names() == before_ns
    assert state_files() == before_state
    assert t.name not in [x["name"] for x in json.loads(topo_cmd("list").stdout)]
    r = topo_cmd("down", t.name)
    assert r.returncode != 0 and "no topology" in r.stderr


@pytest.mark.parametrize("args", [
    ["--rate", "fast"], ["--rate", "10mbps"], ["--rtt", "-5"], ["--rtt", "x"],
    ["--limit", "0"], ["--loss", "150"], ["--loss", "0"], ["--senders", "0"],
    ["--senders", "33"], ["--bogus"], ["--rtt"], ["--id", "Bad!"],
    ["--loss-dir", "up", "--loss", "1"], ["--reorder", "5", "--rtt", "0"],
    ["--mtu", "100"], ["--reorder-gap", "3"], ["--red", "--limit", "2"],
])
def test_bad_options(args):
    before_ns, before_state = netns_names(), state_files()
    r = topo_cmd("up", *args)
    assert r.returncode != 0
    assert r.stderr.startswith("netem-topo: "), r.stderr
    assert r.stdout == ""
    assert netns_names() == before_ns
    assert state_files() == before_state


def test_failure_half_way_leaves_nothing():
    before_ns, before_state = netns_names(), state_files()
    env = dict(os.environ, NETEM_TOPO_TEST_FAIL="late")
    r = topo_cmd("up", "--senders", "2", "--red", env=env)
    assert r.returncode != 0 and "removing what was made" in r.stderr
    assert netns_names() == before_ns
    assert state_files() == before_state


def test_unique_names_and_existing_name():
    with Topo(rtt=10) as a, Topo(rtt=10) as b:
        assert a.name != b.name
        r = topo_cmd("up", "--id", a.name)
        assert r.returncode != 0 and "already exists" in r.stderr
        assert set(a.info["namespaces"]) <= set(netns_names())

"""scripts/tcp-tune seen on the wire, end to end.

Topology: server -- router -- client (cocktail_lab.topo), 100 ms
RTT, 10 Mbit/s. tcp-tune acts inside the server namespace (--netns); the
capture is on the router's interface toward the server, so the server's
segments appear as it sent them and its ACKs as it got them. The "first
flight" is cocktail_lab.capture.first_flight: the server's data segments after an idle gap
(or the connection's first data) up to the first ACK covering any of them.
"""
import subprocess

import pytest

from cocktail_lab.capture import Capture, first_flight, read_pcap
from cocktail_lab.topo import REPO, Topo

TOOL = str(REPO / "scripts" / "tcp-tune")
OUT = REPO / "build" / "vm" / "tcp_tune_wire"
PORT = 8300


def tune(t, state, *args, check=0):
    p = subprocess.run([TOOL, "--netns", t.server, "--state-dir", str(state)] +
                       [str(a) for a in args], capture_output=True, text=True)
    assert p.returncode == check, "%s -> %d\n%s%s" % (args, p.returncode,
                                                      p.stdout, p.stderr)
    return p


@pytest.fixture(scope="module")
def topo():
    OUT.mkdir(parents=True, exist_ok=True)
    with Topo(rtt=100, rate="10mbit", limit=100) as t:
        t.srv = t.ka_server(port=PORT)        # namespace default cc (cubic)
        yield t


def flight(t, name, **client):
    pcap = OUT / (name + ".pcap")
    with Capture(t.capture_ns, t.capture_dev, pcap, "tcp port %d" % PORT) as cap:
        res = t.ka_client(port=PORT, **client)
    assert cap.dropped == 0, "tcpdump dropped packets"
    after = None if client.get("fresh") else res["request_time"]
    fl = first_flight(read_pcap(pcap), t.server_addr, after=after)
    assert fl, "no first flight in %s" % pcap
    return res, fl


def test_route_initcwnd_4_then_revert_10(topo, tmp_path):
    state = tmp_path / "state"
    tune(topo, state, "route", "--default", "initcwnd", "4")
    try:
        res, fl = flight(topo, "initcwnd4", fresh=True, segments=30)
        assert res["mss"] == 1448
        assert len(fl) == 4, "first flight %d segments with initcwnd 4" % len(fl)
    finally:
        tune(topo, state, "revert")
    res, fl = flight(topo, "initcwnd_reverted", fresh=True, segments=30)
    assert len(fl) == 10, "first flight %d segments after revert" % len(fl)


def test_no_ssr_keeps_the_pre_idle_window(topo, tmp_path):
    state = tmp_path / "state"
    warm = dict(warm_cwnd=30, warm_segs=60, warm_max=10, segments=60, idle=2.0)
    ssai = ["ip", "netns", "exec", topo.server, "sysctl", "-n",
            "net.ipv4.tcp_slow_start_after_idle"]
    assert subprocess.run(ssai, capture_output=True, text=True).stdout.strip() == "1"
    # stock behaviour first: slow-start restart after 2 s idle (> RTO)
    res, fl = flight(topo, "ssr_on", **warm)
    assert res["warm_reached"] and res["before"]["snd_cwnd"] >= 30, res["before"]
    assert len(fl) <= 10, "SSR on: first flight after idle %d segments" % len(fl)
    tune(topo, state, "apply", "no-ssr")
    try:
        res, fl = flight(topo, "ssr_off", **warm)
        cwnd = res["before"]["snd_cwnd"]
        assert res["warm_reached"] and cwnd >= 30, res["before"]
        want = min(cwnd, 60)
        assert want - 2 <= len(fl) <= want, \
            "no-ssr: first flight after idle %d segments, pre-idle cwnd %d" % (
                len(fl), cwnd)
    finally:
        tune(topo, state, "revert")
    assert subprocess.run(ssai, capture_output=True, text=True).stdout.strip() == "1"

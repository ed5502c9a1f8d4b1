"""cocktail's behaviour seen on the wire, for both builds: every test runs
against the module (algorithm "cocktail") and against the BPF build
("cocktail_bpf"), the same body and the same checks (cocktail_builds:
parameters, counters and events of either); pytest runs all the tests of
one build, then all of the other. Outside the parity run (make
vmcheck-parity) the BPF build leaves the tests of the logic both builds
share to the module (markers core_on_module, ssai_on_module:
tests/vm/conftest.py).

Topology: server -- router -- client (cocktail_lab.topo), 100 ms RTT,
10 Mbit/s bottleneck unless a test says otherwise. Every capture is taken on
the router's interface toward the server: the server's segments appear there
as it emitted them (no shaping before), its ACKs when the server gets them.
The "first flight" after a pause is every server data segment of the
connection seen after the client sent its request, up to the first ACK that
covers any of them (capture.flight_after; a stall inside the flight does not
split it); for a new connection, the first data up to the first ACK
(capture.first_flight). References come from the wire, not from the build:
the pause is measured between the server's last data segment before it and
the first after, the pre-idle delivery rate as data bytes ACKed per second
over the last two round trips of the last warm-up response (capture.ack_rate).

Restart tests run with cwv=0 so that what is measured is the restart policy
alone (cwv=1/2 add their own decay after application-limited idle). The
initial-window and restart tests run under both growths on the module
(growth=reno and growth=cubic: what they check does not depend on how the
window grew; cubic with tcp_slow_start_after_idle=1, reno with 0 and 1)
and under reno on the BPF build;
the growth tests at the end check CUBIC's and HyStart++'s own behaviour
on a two-namespace link (cocktail_lab.topo.Link) whose server can drop
one chosen segment.
"""
import contextlib
import os
import re
import select
import socket
import threading
import time

import pytest

from cocktail_builds import BUILDS
from cocktail_lab import tcpinfo, traffic
from cocktail_lab.capture import (ACK, Capture, ack_rate, data_segments,
                                  first_flight, flight_after, gaps, idle_before,
                                  loss_episodes, max_in_flight, mean_spacing,
                                  median, pair_gaps, read_pcap,
                                  resent, retransmissions, seq_after)
from cocktail_lab.proc import in_ns
from cocktail_lab.topo import (REPO, Link, Pair, PreparedTc, Topo,
                               bottleneck_drops, qdisc_drops, tc)
from cocktail_lab.traffic import Conn
from oooprobe_lib import tcp_repair_write_seq

OUT = REPO / "build" / "vm" / "cocktail_wire"
PORT = 8200
# Decay needs a moderate window (cwnd >> k distinguishable for k = 1..3):
# one 60-segment fetch ends near 70. Pacing needs a pre-idle delivery rate
# measured at the bottleneck: a 300-segment fetch (over 3 BDPs) gets there.
WARM = dict(warm_cwnd=30, warm_segs=60, warm_max=10)
WARM_BULK = dict(warm_cwnd=30, warm_segs=300, warm_max=3)


# The build under test (cocktail_builds.Build), set by the cocktail
# fixture: module-scoped and parametrised, so pytest groups the tests by
# build and brings each build up once.
B = None


# How many times a run whose premise a stalled TCG guest broke is done
# again (a timer firing while the ACK path stalled, a client that
# overslept, ACKs bunched into a shallow queue). A stall is random and
# three in a row are rare; a build that breaks the behaviour fails every
# attempt.
ATTEMPTS = 3


def until_premise(run, holds, attempts=ATTEMPTS):
    """Call RUN() until HOLDS(its result) or ATTEMPTS calls were made.
    Returns the last result and the list of every attempt's result, for
    the failure message; the caller asserts the premise on the last, so
    a premise broken in every attempt fails the test."""
    tries = []
    for _ in range(attempts):
        tries.append(run())
        if holds(tries[-1]):
            break
    return tries[-1], tries


@pytest.fixture(scope="module", params=list(BUILDS))
def cocktail(request):
    global B
    b = BUILDS[request.param].up()
    B = b
    yield b
    B = None
    b.down()


@pytest.fixture(scope="module")
def topo(cocktail):
    with Topo(rtt=100, rate="10mbit", limit=100) as t:
        t.srv = t.ka_server(port=PORT, cc=cocktail.ca)
        yield t


def params(**kw):
    """Set the build's parameters and check they read back; a test that
    does not name growth, nvp_s, pace_burst, queue_pct, check_rate_miss,
    probe_pct, wnd_cap, pace_floor, ssr_floor or quiet_pct runs with
    growth=reno, nvp_s=300, pace_burst=0 (flights paced from their first
    segment), queue_pct=120, check_rate_miss=0, probe_pct=100, wnd_cap=1,
    pace_floor=0, ssr_floor=0 and quiet_pct=100, whatever the test before
    set."""
    kw.setdefault("growth", "reno")
    kw.setdefault("queue_pct", 120)
    kw.setdefault("nvp_s", 300)
    kw.setdefault("pace_burst", 0)
    kw.setdefault("check_rate_miss", 0)
    kw.setdefault("probe_pct", 100)
    kw.setdefault("wnd_cap", 1)
    kw.setdefault("pace_floor", 0)
    kw.setdefault("ssr_floor", 0)
    kw.setdefault("quiet_pct", 100)
    B.params(**kw)


def restart_events(lines, port=PORT, dport=None):
    """Parsed tcp_cocktail:cocktail_restart events of the server port (and of the
    client port dport)."""
    out = []
    for ln in lines:
        if "cocktail_restart:" not in ln or "sport=%d " % port not in ln:
            continue
        ev = dict(re.findall(r"(\w+)=(\S+)",
                             ln.split("cocktail_restart:", 1)[1]))
        if dport is None or ev.get("dport") == str(dport):
            out.append(ev)
    return out


def case(t, name, **client):
    """One client run with a capture at the router (toward the server) and
    the restart tracepoint on. Returns (client JSON, first flight, events);
    res["wire"] holds what the capture says about the pause: "idle" (s,
    server's last data segment before the pause to the first after) and
    "rate" (B/s, data ACKed per second over the last two round trips
    of the last warm-up response, capture.ack_rate)."""
    pcap = OUT / ("%s_%s.pcap" % (B.name, name))
    with B.events("cocktail_restart") as tr, \
            Capture(t.capture_ns, t.capture_dev, pcap,
                    "tcp port %d" % PORT) as cap:
        res = t.ka_client(port=PORT, **client)
    assert cap.dropped == 0, "tcpdump dropped packets"
    pkts = read_pcap(pcap)
    port = res["client_port"]
    if client.get("fresh"):
        fl = first_flight(pkts, t.server_addr, dport=port)
    else:
        # Everything the server sends after the request left the client,
        # up to the first ACK for it: a stall inside the flight cannot
        # split it.
        fl = flight_after(pkts, t.server_addr, res["request_time"],
                          dport=port)
        res["wire"] = {
            "idle": idle_before(pkts, t.server_addr, fl) if fl else None,
            "rate": ack_rate(pkts, t.server_addr, fl[0].ts if fl else
                             res["request_time"],
                             t.opts["rtt"] / 1e3, dport=port)}
    assert fl, "no first flight found in %s" % pcap
    assert res["after"]["ca"] == B.ca, res["after"]["ca"]
    return res, fl, restart_events(tr.lines, dport=port)


def describe(res, fl, ev):
    b = res.get("before") or {}
    return ("flight=%d segs, gaps(ms)=%s, cwnd before=%s after=%s rto=%s "
            "delivery_rate=%s wire=%s events=%s" % (
                len(fl), [round(g * 1e3, 2) for g in gaps(fl)][:60],
                b.get("snd_cwnd"), res["after"]["snd_cwnd"], b.get("rto"),
                b.get("delivery_rate"), res.get("wire"), ev))


# the window growths the initial-window, restart and window-validation
# tests run under (on
# the module, cubic with tcp_slow_start_after_idle=1 only:
# growth_on_module, tests/vm/conftest.py)
GROWTHS = ("reno", "cubic")


# ---------------------------------------------------------------- test 1: IW

@pytest.mark.parametrize("iw,expect", [("2", 2), ("4", 4), ("10", 10),
                                       ("rfc3390", 3)])
@pytest.mark.growth_on_module
@pytest.mark.parametrize("growth", GROWTHS)
def test_iw(topo, iw, expect, growth):
    params(iw=iw, cwv=0, pace_iw=0, growth=growth)
    res, fl, _ = case(topo, "iw_%s" % iw, fresh=True, segments=30)
    assert res["mss"] == 1448
    assert len(fl) == expect, describe(res, fl, [])


def test_iw_route_initcwnd_wins(topo):
    """A route's initcwnd beats the build's iw; the algorithm is selected
    per namespace here (tcp_congestion_control in the server namespace)."""
    params(iw=10, cwv=0, pace_iw=0)
    gw = topo.pairs[0]["server_gw"]
    port = PORT + 1
    old = topo.sysctl(topo.server, "net.ipv4.tcp_congestion_control")
    topo.sysctl(topo.server, "net.ipv4.tcp_congestion_control", B.ca)
    topo.run(topo.server, ["ip", "route", "replace", "default", "via", gw,
                           "dev", "to-r", "initcwnd", "6"])
    srv = topo.ka_server(port=port)  # no TCP_CONGESTION: the netns default
    try:
        pcap = OUT / ("%s_iw_route6.pcap" % B.name)
        with Capture(topo.capture_ns, topo.capture_dev, pcap,
                     "tcp port %d" % port):
            res = topo.ka_client(port=port, fresh=True, segments=30)
        fl = first_flight(read_pcap(pcap), topo.server_addr)
    finally:
        topo.stop(srv)
        topo.run(topo.server, ["ip", "route", "replace", "default", "via",
                               gw, "dev", "to-r"])
        topo.sysctl(topo.server, "net.ipv4.tcp_congestion_control", old)
    assert res["after"]["ca"] == B.ca
    assert len(fl) == 6, describe(res, fl, [])


# ---------------------------------------------------------- test 2: restart

def ref_gap(res):
    """MSS / pre-idle delivery rate measured on the wire (seconds)."""
    rate = res["wire"]["rate"]
    assert rate > 0, res["wire"]
    return res["before"]["snd_mss"] / rate


# IW for the tests that expect slow-start restart: the kernel's own restart
# (tcp_slow_start_after_idle=1) goes back to min(10, cwnd) without a route
# initcwnd, so a flight of exactly SSR_IW segments is the build's.
SSR_IW = 4


def check_ssr(res, fl, info):
    """The flight after slow-start restart is exactly min(IW, pre-idle
    cwnd) segments (tcp_info snd_cwnd before the pause)."""
    want = min(SSR_IW, res["before"]["snd_cwnd"])
    assert len(fl) == want, "flight %d segments, min(IW, cwnd) = %d; %s" % (
        len(fl), want, info)


def check_event(res, ev, info):
    """The restart event's path facts agree with the kernel's own tcp_info
    taken before the pause (the client's last ACKs may still move srtt and
    cwnd after it): srtt within 25%, the minimum RTT within 5%, cwnd_before
    within 25% (cwv=0: nothing decays during the pause)."""
    b, e = res["before"], ev[-1]
    for key, ref, tol in (("srtt_us", b["rtt"], 0.25),
                          ("path_rtt_us", b["min_rtt"], 0.05),
                          ("cwnd_before", b["snd_cwnd"], 0.25)):
        got = int(e[key])
        assert abs(got - ref) <= tol * ref, \
            "event %s=%d, tcp_info %d; %s" % (key, got, ref, info)


def check_paced(res, fl, ev, info):
    """The flight is paced at the pre-idle delivery rate seen on the wire
    (ref = MSS / rate). Internal pacing under TCG releases segments in
    pairs, and a late pacing timer (a busy host) only ever adds time, so:
    the median spacing measured over two segments (pair_gaps) within
    +-50% of ref, and the mean spacing (t_last - t_first) / (n - 1) at
    least half of ref (no burst) and at most 2.5 x ref (late timers
    tolerated, a flight paced at a fraction of the rate is not). The rate
    the build reports in its event agrees with the wire within a
    factor 2."""
    ref = ref_gap(res)
    assert len(fl) >= 30, info
    med = median(pair_gaps(fl))
    m = mean_spacing(fl)
    assert 0.5 * ref <= med <= 1.5 * ref and 0.5 * ref <= m <= 2.5 * ref, \
        "median pair spacing %.3f ms, mean spacing %.3f ms, ref gap " \
        "%.3f ms; %s" % (med * 1e3, m * 1e3, ref * 1e3, info)
    rate = int(ev[-1]["pacing_rate"])
    wire = res["wire"]["rate"]
    assert 0.5 * wire <= rate <= 2 * wire, \
        "tracepoint pacing_rate %d B/s, wire rate %d B/s; %s" % (
            rate, wire, info)


@pytest.mark.parametrize("ssai", [0, 1])
@pytest.mark.parametrize("policy", ["ssr", "keep", "pace"])
@pytest.mark.growth_on_module
@pytest.mark.parametrize("growth", GROWTHS)
@pytest.mark.ssai_on_module
def test_restart(topo, policy, ssai, growth):
    # pace at the delivery rate, the one the wire shows (test_pace_rate
    # covers the other pace_rate modes)
    params(iw=SSR_IW if policy == "ssr" else 10, restart=policy, cwv=0,
           pace_iw=0, pace_rate="delivery", growth=growth)
    topo.sysctl(topo.server, "net.ipv4.tcp_slow_start_after_idle", ssai)
    res, fl, ev = case(topo, "restart_%s_ssai%d_%s" % (policy, ssai, growth),
                       segments=60, idle=2.0, **WARM_BULK)
    info = describe(res, fl, ev)
    assert res["warm_reached"] and res["before"]["snd_cwnd"] >= 30, info
    # The restart of the measured fetch is the last event of the connection
    # (a loaded host can stall the client for more than an RTO in the
    # warm-up too; those restarts are real but not the one measured).
    assert ev and ev[-1]["policy"] == policy, info
    assert ev[-1]["requested"] == policy, info
    check_event(res, ev, info)
    if policy == "ssr":
        check_ssr(res, fl, info)
    elif policy == "keep":
        ref = ref_gap(res)
        assert len(fl) >= 30, info
        assert median(pair_gaps(fl)) < 0.2 * ref, "ref gap %.3f ms; %s" % (
            ref * 1e3, info)
    else:
        check_paced(res, fl, ev, info)


def burst_spread(segs):
    """How long a run of segments took to leave, less its longest gap:
    about 0 for a burst, even when the TCG guest held one of its
    segments at the router for a few ms (the capture stamps segments as
    the router takes them in), and most of the run's time when paced
    (internal pacing releases pairs: half the gaps are a pair's time)."""
    g = sorted(gaps(segs))
    return sum(g[:-1])


@pytest.mark.parametrize("ssai", [0, 1])
def test_pace_burst(topo, ssai):
    """pace_burst=1: a paced restart sends the restart window, min(IW,
    cwnd before the pause) = 10 segments, in one burst, and paces the
    rest of the flight at the pre-idle rate (check_paced on segments 11
    on); with tcp_slow_start_after_idle 0 and 1 alike (with 1 the kernel
    has cut cwnd to 10 before the module is asked, and one TSO packet
    may carry only half of cwnd: the module puts the window back first).
    A burst: the ten segments' gaps, all but the longest (burst_spread),
    add up to less than 1.5 times one MSS's time at the rate seen on the
    wire (paced, four or more of them would be two MSS's time each). The
    wait after it is not checked: under TCG sending the burst itself
    takes most of the time pacing gives it. A TCG guest that stalls more
    than once inside the burst spreads it (gaps of 2-4 ms between its
    first segments, the rest back to back): such a run is done again
    (until_premise); a flight paced from its first segment is spread in
    every attempt and fails."""
    params(iw=10, restart="pace", cwv=0, pace_iw=0, pace_rate="delivery",
           pace_burst=1)
    topo.sysctl(topo.server, "net.ipv4.tcp_slow_start_after_idle", ssai)

    def run():
        res, fl, ev = case(topo, "pace_burst_ssai%d" % ssai, segments=60,
                           idle=2.0, **WARM_BULK)
        burst = min(10, res["before"]["snd_cwnd"])
        return res, fl, ev, burst_spread(fl[:burst]) / ref_gap(res)
    (res, fl, ev, spread), tries = until_premise(run, lambda r: r[3] < 1.5)
    info = describe(res, fl, ev) + "; burst spread per attempt (MSS " \
        "times) %s" % [round(r[3], 2) for r in tries]
    assert res["warm_reached"] and res["before"]["snd_cwnd"] >= 30, info
    assert ev and ev[-1]["policy"] == "pace", info
    check_event(res, ev, info)
    burst = min(10, res["before"]["snd_cwnd"])
    assert len(fl) >= burst + 30, info
    assert spread < 1.5, \
        "first %d segments over %.2f MSS times at the rate besides their " \
        "longest gap; %s" % (burst, spread, info)
    check_paced(res, fl[burst:], ev, info)


@contextlib.contextmanager
def warm_pair(t, port, timeout=300):
    """A connection from T's client to a listener on PORT in its server
    namespace, the build's algorithm on the server side, its window grown
    by a 300-segment transfer: yields (server socket, client socket, MSS,
    the server's tcp_info once all of it is acknowledged)."""
    lst = traffic.Listener(t.server, t.server_addr, port)
    try:
        srv, cli = traffic.tcp_pair(lst, t.client, B.ca, timeout=timeout)
        try:
            mss = tcpinfo.info(srv)["snd_mss"]
            traffic.send_and_time(srv, cli, 300 * mss, timeout)
            yield srv, cli, mss, traffic.wait_acked(srv, 60)
        finally:
            srv.close()
            cli.close()
    finally:
        lst.close()


BURST_PORT = 8231


def test_pace_burst_two_writes(cocktail):
    """pace_burst=1 with a response written as headers (200 bytes, alone
    on the wire: Nagle off) and then a 59-segment body, as web servers
    write: the body's first packet carries what is left of the restart
    window, so the headers and the next 9 segments leave as one burst
    (burst_spread under 1.5 times one MSS's time at the flight's rate,
    the restart event's), and the rest is paced at that rate (mean
    spacing at least half an MSS's time). 100 ms, 10 Mbit/s,
    a 300-segment warm-up, 2 s idle, tcp_slow_start_after_idle=1."""
    params(iw=10, restart="pace", cwv=0, pace_iw=0, pace_rate="delivery",
           pace_burst=1)
    with Topo(rtt=100, rate="10mbit", limit=100) as t, \
            warm_pair(t, BURST_PORT, timeout=120) as (srv, cli, mss, before):
        time.sleep(2.0)
        pcap = OUT / ("%s_pace_burst_two_writes.pcap" % B.name)
        with B.events("cocktail_restart") as tr, \
                Capture(t.capture_ns, t.capture_dev, pcap,
                        "tcp port %d" % BURST_PORT) as cap:
            t0 = time.time()
            srv.sendall(b"h" * 200)
            srv.sendall(b"b" * (59 * mss))
            traffic.recv_exact(cli, 200 + 59 * mss, time.monotonic() + 60)
            traffic.wait_acked(srv, 60)
    assert cap.dropped == 0, "tcpdump dropped packets"
    ev = restart_events(tr.lines, port=BURST_PORT)
    fl = flight_after(read_pcap(pcap), t.server_addr, t0, sport=BURST_PORT)
    info = "cwnd before %d; flight %d segs, gaps(ms)=%s; events=%s" % (
        before["snd_cwnd"], len(fl),
        [round(g * 1e3, 2) for g in gaps(fl)][:40], ev)
    assert before["snd_cwnd"] >= 30, info
    assert ev and ev[-1]["policy"] == "pace", info
    assert fl and fl[0].plen == 200 and len(fl) >= 40, info
    ref = mss / int(ev[-1]["pacing_rate"])
    spread = burst_spread(fl[:10])
    assert spread < 1.5 * ref, \
        "headers and 9 segments over %.3f ms besides their longest gap, " \
        "MSS at the rate %.3f ms; %s" % (spread * 1e3, ref * 1e3, info)
    rest = mean_spacing(fl[10:])
    assert rest >= 0.5 * ref, \
        "after the burst: mean spacing %.3f ms, MSS at the rate %.3f ms; " \
        "%s" % (rest * 1e3, ref * 1e3, info)


@pytest.mark.parametrize("ssai", [0, 1])
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.growth_on_module
@pytest.mark.parametrize("growth", GROWTHS)
@pytest.mark.ssai_on_module
def test_restart_decay(topo, k, ssai, growth):
    """An idle of k RTOs gives a first flight of max(IW, cwnd >> k) (at
    most the 60 requested). The client aims at (k + 0.5) RTOs, but a
    loaded host may oversleep: k is computed from the idle measured on the
    wire and tcpi_rto before the pause. An idle within 10% of a k boundary
    (or a k other than the one aimed at) is tried again (until_premise);
    the last try is judged by its measured k."""
    params(iw=10, restart="decay", cwv=0, pace_iw=0, growth=growth)
    topo.sysctl(topo.server, "net.ipv4.tcp_slow_start_after_idle", ssai)
    def run():
        res, fl, ev = case(topo, "decay_k%d_ssai%d_%s" % (k, ssai, growth),
                           segments=60, idle_rto=k + 0.5, **WARM)
        assert res["wire"]["idle"] is not None, describe(res, fl, ev)
        return res, fl, ev, res["wire"]["idle"] / (res["before"]["rto"] / 1e6)

    def clear(r):
        return abs(r[3] - round(r[3])) >= 0.1 and int(r[3]) == k
    (res, fl, ev, ratio), tries = until_premise(run, clear)
    info = describe(res, fl, ev) + "; idle in RTOs per attempt %s" % [
        round(r[3], 2) for r in tries]
    assert abs(ratio - round(ratio)) >= 0.1, \
        "idle within 10%% of an RTO boundary in every attempt; %s" % info
    got_k = int(ratio)
    cwnd = res["before"]["snd_cwnd"]
    assert res["warm_reached"] and cwnd >= 30, info
    assert ev and ev[-1]["policy"] == "decay", info
    expect = min(60, max(10, cwnd >> got_k))
    assert len(fl) == expect, "expected %d (k=%d from the wire); %s" % (
        expect, got_k, info)


# ------------------------------------------------------------- test 3: auto

@pytest.mark.parametrize("rtt,policy", [(20, "ssr"), (200, "pace")])
@pytest.mark.growth_on_module
@pytest.mark.parametrize("growth", GROWTHS)
@pytest.mark.core_on_module
def test_auto(cocktail, rtt, policy, growth):
    thr = int(B.get("auto_rtt_us"))
    assert 20000 < thr < 200000, "auto_rtt_us default %d not between" % thr
    params(iw=SSR_IW if policy == "ssr" else 10, restart="auto", cwv=0,
           pace_iw=0, pace_rate="delivery", growth=growth)
    with Topo(rtt=rtt, rate="10mbit", limit=100) as t:
        t.ka_server(port=PORT, cc=B.ca)
        res, fl, ev = case(t, "auto_%dms_%s" % (rtt, growth), segments=60,
                           idle=2.0,
                           **WARM_BULK)
    info = describe(res, fl, ev)
    assert res["before"]["snd_cwnd"] >= 30, info
    assert ev and ev[-1]["requested"] == "auto", info
    assert ev[-1]["policy"] == policy, info
    if policy == "ssr":
        check_ssr(res, fl, info)
    else:
        check_paced(res, fl, ev, info)


# ------------------------------------------------------------ test 3b: queue

def counters():
    """The build's counters as {name: int}."""
    return B.counters()


def counters_since(c0, c1):
    """How far each counter of reading C1 moved since reading C0."""
    return {k: c1[k] - c0.get(k, 0) for k in c1}


# link options, warm-up, the policy restart=queue must apply. Both paths
# have 100 ms of RTT: only the queue before the idle period differs.
QUEUE_LINKS = {
    # a 60-segment fetch over 1 Gbit/s: a round trip's burst (at most 30
    # segments from IW 10) drains in 0.4 ms, so srtt stays at the minimum
    # RTT
    "quiet": (dict(rtt=100, rate="1gbit", limit=1000), WARM, "pace"),
    # a 300-segment fetch in slow start over 10 Mbit/s (BDP about 83
    # packets) into a 200-packet queue: the last round trips wait behind
    # tens of packets, srtt ends well above the minimum RTT, nothing drops
    "queued": (dict(rtt=100, rate="10mbit", limit=200), WARM_BULK, "ssr"),
}


@pytest.mark.parametrize("link", ["quiet", "queued"])
@pytest.mark.core_on_module
def test_queue(cocktail, link):
    """restart=queue (queue_pct=120): ssr when the connection had built a
    queue before the idle period (srtt > 1.2 x the minimum RTT), else
    pace. auto_rtt_us is set so that auto would choose the other policy on
    each link: a queue rule resolved like auto fails both cases. The
    premise (the kernel's tcp_info before the pause: srtt / minimum RTT on
    the expected side of 1.2) is checked first, with its own message, and
    the event's srtt and minimum RTT against it (check_event);
    then the applied policy, the counters (every restart of the run was
    requested as queue: queue_ssr = ssr, queue_pace = pace, nothing else)
    and the flight on the wire: at most IW segments after ssr; after pace
    the whole 60-segment request, spaced at the rate the event reports
    (mean spacing 0.5..2.5 x MSS / rate, as test_pace_rate); after ssr
    exactly min(IW, cwnd) segments."""
    topo_opts, warm, policy = QUEUE_LINKS[link]
    thr = B.get("auto_rtt_us")
    # the queued link's premise is slow start overshooting the BDP into
    # the queue, which Hoe's ssthresh estimate would prevent
    params(iw=SSR_IW if policy == "ssr" else 10, restart="queue",
           queue_pct=120, cwv=0, pace_iw=0, ssthresh_est=0,
           pace_rate="max",
           auto_rtt_us=10000000 if policy == "pace" else 1)
    try:
        with Topo(**topo_opts) as t:
            t.ka_server(port=PORT, cc=B.ca)
            before = counters()
            res, fl, ev = case(t, "queue_%s" % link, segments=60, idle=2.0,
                               **warm)
            after = counters()
    finally:
        params(auto_rtt_us=thr, ssthresh_est=1)
    info = describe(res, fl, ev)
    delta = {k: v - before.get(k, 0) for k, v in after.items()
             if v != before.get(k, 0)}
    assert res["before"]["snd_cwnd"] >= 30, info
    assert ev and ev[-1]["requested"] == "queue", info
    e = ev[-1]
    srtt, min_rtt = res["before"]["rtt"], max(1, res["before"]["min_rtt"])
    queued = srtt * 100 > min_rtt * 120
    assert queued == (policy == "ssr"), \
        "premise: the %s link should %s a queue before the idle period, " \
        "but srtt %d us / min RTT %d us = %.2f; %s" % (
            link, "build" if policy == "ssr" else "not build", srtt,
            min_rtt, srtt / min_rtt, info)
    check_event(res, ev, info)
    assert e["policy"] == policy, "srtt / min RTT %.2f; %s" % (
        srtt / min_rtt, info)
    assert delta.get("queue_" + policy, 0) >= 1, (delta, info)
    assert delta.get("queue_ssr", 0) == delta.get("ssr", 0) and \
        delta.get("queue_pace", 0) == delta.get("pace", 0), (delta, info)
    assert not any(delta.get(k) for k in ("decay", "keep", "auto_ssr",
                                          "auto_pace")), (delta, info)
    if policy == "ssr":
        check_ssr(res, fl, info)
        return
    rate = int(e["pacing_rate"])
    assert rate > 0 and len(fl) >= 30, info
    ref = res["before"]["snd_mss"] / rate
    m = mean_spacing(fl)
    assert 0.5 * ref <= m <= 2.5 * ref, \
        "mean spacing %.3f ms, MSS / event rate %.3f ms; %s" % (
            m * 1e3, ref * 1e3, info)


@pytest.mark.parametrize("mode", ["delivery", "window", "max"])
def test_pace_rate(topo, mode):
    """pace_rate chooses the paced flight's rate. After an
    application-limited warm-up (60-segment responses below cwnd):
    window paces at exactly cwnd * mss / srtt from the restart event's own
    cwnd_before and srtt_us (integer division, as the build), which agree
    with the kernel's tcp_info before the pause (check_event), and within
    25% of the same rate computed from that tcp_info; max at no less than
    that; every mode's flight carries at least 3/4 of what the event's
    rate sends in one path RTT (up to 30 segments) and leaves the server
    spaced at that rate (mean spacing 0.5..2.5 x MSS / rate: TCG
    releases paced segments in pairs and late timers only add time)."""
    params(iw=10, restart="pace", cwv=0, pace_iw=0, pace_rate=mode)
    try:
        res, fl, ev = case(topo, "pace_rate_%s" % mode, segments=60,
                           idle=2.0, **WARM)
    finally:
        params(pace_rate="max")
    info = describe(res, fl, ev)
    assert res["before"]["snd_cwnd"] >= 30, info
    assert ev and ev[-1]["policy"] == "pace", info
    e = ev[-1]
    check_event(res, ev, info)
    rate = int(e["pacing_rate"])
    mss = res["before"]["snd_mss"]
    window = int(e["cwnd_before"]) * mss * 1000000 // int(e["srtt_us"])
    b = res["before"]
    window_info = b["snd_cwnd"] * mss * 1e6 / b["rtt"]
    assert rate > 0, info
    if mode == "window":
        assert abs(rate - window) <= 1, "rate %d, cwnd*mss/srtt %d; %s" % (
            rate, window, info)
        assert abs(rate - window_info) <= 0.25 * window_info, \
            "rate %d, tcp_info cwnd*mss/srtt %d; %s" % (rate, window_info,
                                                       info)
    elif mode == "max":
        assert rate >= window - 1, "rate %d < cwnd*mss/srtt %d; %s" % (
            rate, window, info)
    # The flight ends at the first ACK: it holds what the event's rate
    # sends in one path RTT (delivery can be below cwnd / srtt), less
    # TCG's timer slack, and at most 30 are needed for the spacing.
    per_rtt = rate * int(e["path_rtt_us"]) / 1e6 / mss
    assert len(fl) >= max(10, min(30, 0.75 * per_rtt)), \
        "flight %d segments, %.1f per path RTT at the event's rate; %s" % (
            len(fl), per_rtt, info)
    ref = mss / rate
    m = mean_spacing(fl)
    assert 0.5 * ref <= m <= 2.5 * ref, \
        "mean spacing %.3f ms, MSS / event rate %.3f ms; %s" % (
            m * 1e3, ref * 1e3, info)


def _cap_during_flight(t, cap, trace):
    """In the client's namespace: warm up a keep-alive connection, pause
    2 s, request 60 segments and, while the paced restart flight is out,
    have the server set SO_MAX_PACING_RATE = cap on it (None: ~0, no cap);
    then fetch 40 segments at once. Returns the times of both requests,
    the client port and the server's tcp_info after."""
    data, ctl = Conn(t.server_addr, PORT), Conn(t.server_addr, PORT)
    try:
        port = data.s.getsockname()[1]
        for _ in range(WARM_BULK["warm_max"]):
            data.fetch(WARM_BULK["warm_segs"])
        time.sleep(2.0)
        t_req = time.time()
        data.request(60)
        time.sleep(0.01)
        ctl.set_max_pacing(port, cap)
        trace.mark("cap set")
        data.response()
        t_next = time.time()
        data.fetch(40)
        return t_req, t_next, port, ctl.info(port)
    finally:
        data.close()
        ctl.close()


@pytest.mark.parametrize("cap", [200000, None], ids=["rate", "none"])
def test_pace_end_leaves_application_cap(topo, cap):
    """The application sets SO_MAX_PACING_RATE while a paced restart
    flight is out (the cap arrives before the flight's first ACK: the
    trace shows the marker before the flight's pace_end). At the end of
    the flight the application's value stays (tcp_info max_pacing_rate),
    and so does what it asked for on the wire: with a cap of 200 kB/s the
    next response leaves spaced at that rate; with ~0 (no cap) unpaced,
    its segments faster than a quarter of the spacing the kernel's own
    pacing rate (tcp_info pacing_rate) would give."""
    params(iw=10, restart="pace", cwv=0, pace_iw=0, pace_rate="max")
    pcap = OUT / ("%s_app_cap_%s.pcap" % (B.name,
                                          "none" if cap is None else cap))
    with B.events("cocktail_restart", "cocktail_pace_end") as tr, \
            Capture(topo.capture_ns, topo.capture_dev, pcap,
                    "tcp port %d" % PORT) as capt:
        t_req, t_next, port, after = in_ns(topo.client, _cap_during_flight,
                                           topo, cap, tr, timeout=300)
    assert capt.dropped == 0, "tcpdump dropped packets"
    ends = [i for i, ln in enumerate(tr.lines)
            if "cocktail_pace_end:" in ln and "dport=%d " % port in ln]
    marks = [i for i, ln in enumerate(tr.lines) if "cap set" in ln]
    ev = restart_events(tr.lines, dport=port)
    info = "events=%s after=%s" % (tr.lines[-6:], after)
    assert ev and ev[0]["policy"] == "pace", info
    assert ends and marks and marks[0] < ends[0], info
    want = 2 ** 64 - 1 if cap is None else cap
    assert after["max_pacing_rate"] == want, info
    pkts = read_pcap(pcap)
    # the 40-segment response: the server's data segments after the request
    fl = [p for p in data_segments(pkts, topo.server_addr, PORT)
          if p.dport == port and p.ts >= t_next][:40]
    assert len(fl) == 40, info
    m = mean_spacing(fl)
    mss = after["snd_mss"]
    if cap is None:
        paced = mss / after["pacing_rate"]
        assert m < paced / 4, "mean spacing %.3f ms, paced %.3f ms; %s" % (
            m * 1e3, paced * 1e3, info)
    else:
        ref = mss / cap
        assert 0.5 * ref <= m <= 2.5 * ref, \
            "mean spacing %.3f ms, MSS / cap %.3f ms; %s" % (
                m * 1e3, ref * 1e3, info)


# ------------------------------------------------ test 4: gap below the RTO

@pytest.mark.parametrize("ssai", [0, 1])
@pytest.mark.parametrize("policy", ["ssr", "decay", "pace"])
@pytest.mark.growth_on_module
@pytest.mark.parametrize("growth", GROWTHS)
@pytest.mark.core_on_module
def test_no_restart_below_rto(topo, policy, ssai, growth):
    """A pause shorter than the RTO changes nothing: no restart event, the
    whole window goes out at once. The server's route gets rto_min 1 s, so
    that the pause (about 0.6 of an RTO as the server sees it) stays well
    below the RTO even when a loaded host delays the client."""
    params(iw=10, restart=policy, cwv=0, pace_iw=0, growth=growth)
    topo.sysctl(topo.server, "net.ipv4.tcp_slow_start_after_idle", ssai)
    gw = topo.pairs[0]["server_gw"]
    topo.run(topo.server, ["ip", "route", "replace", "default", "via", gw,
                           "dev", "to-r", "rto_min", "1000ms"])
    # the premise: a pause (on the wire) well below the RTO; a client
    # that overslept that much is tried again

    def below(r):
        idle = r[0]["wire"]["idle"]
        return idle is not None and idle < 0.9 * r[0]["before"]["rto"] / 1e6
    try:
        (res, fl, ev), tries = until_premise(
            lambda: case(topo, "short_%s_ssai%d_%s" % (policy, ssai, growth),
                         segments=60, idle_rto=0.5, **WARM), below)
    finally:
        topo.run(topo.server, ["ip", "route", "replace", "default", "via",
                               gw, "dev", "to-r"])
    info = describe(res, fl, ev) + "; (idle s, rto us) per attempt %s" % [
        (r[0]["wire"]["idle"], r[0]["before"]["rto"]) for r in tries]
    assert res["before"]["rto"] >= 1000000, info
    assert below((res, fl, ev)), "pause not below the RTO in any " \
        "attempt; %s" % info
    assert res["before"]["snd_cwnd"] >= 30, info
    assert ev == [], info
    assert len(fl) >= min(60, res["before"]["snd_cwnd"]) - 1, info
    # A 60-segment warm-up response is too short for ack_rate to see the
    # bottleneck (it then averages over slow start): the link's own
    # MSS / rate is the stricter reference
    link_gap = res["before"]["snd_mss"] * 8 / 10e6
    assert median(pair_gaps(fl)) < 0.2 * min(ref_gap(res), link_gap), info


# ------------------------------------------------ test 5: restart=measure

MEASURE_PORT = 8210


def events(lines, name, dport):
    """(timestamp s, fields) of the NAME events of connection DPORT."""
    out = []
    for ln in lines:
        m = re.search(r"(?:^|\s)(\d+\.\d+): %s: (.*)" % name, ln)
        if not m or "dport=%d " % dport not in m.group(2) + " ":
            continue
        out.append((float(m.group(1)),
                    dict(re.findall(r"(\w+)=(\S+)", m.group(2)))))
    return out


def burst_after_idle(t, name, warm_segs, idle, burst, competitor=None,
                     between=None, clamp=0):
    """In-process: connect from pair 0's client to its server (cocktail),
    the client's receive window clamped to CLAMP bytes if given
    (traffic.clamp_window), send WARM_SEGS segments, call BETWEEN() if
    given, then start the idle period (COMPETITOR() is called at its
    start), sleep IDLE seconds and write BURST segments. Captures at the
    router toward the server and traces the restart and check events.
    Returns a dict: the server's
    tcp_info before the pause and after the burst, the client port, the
    wall time of the burst's write, its seconds, the bottleneck's drops
    during the burst, the packets, both event lists and the build's
    counters' change over the call (counters, {name: delta})."""
    c0 = counters()
    lst = traffic.Listener(t.server, t.server_addr, MEASURE_PORT)
    pcap = OUT / ("%s_%s.pcap" % (B.name, name))
    r = {}
    try:
        with B.events("cocktail_restart", "cocktail_check") as tr, \
                Capture(t.capture_ns, t.capture_dev, pcap,
                        "tcp port %d" % MEASURE_PORT) as cap:
            srv, cli = traffic.tcp_pair(lst, t.client, B.ca, clamp=clamp,
                                        timeout=300)
            try:
                mss = tcpinfo.info(srv)["snd_mss"]
                traffic.send_and_time(srv, cli, warm_segs * mss, 300)
                if between:
                    between(srv, cli, mss)
                r["before"] = traffic.wait_acked(srv, 60)
                t_idle = time.monotonic()
                if competitor:
                    competitor()
                time.sleep(max(0.0, idle - (time.monotonic() - t_idle)))
                drops0 = bottleneck_drops(t)
                r["wall"] = time.time()
                t0, t1 = traffic.send_and_time(srv, cli, burst * mss, 300)
                r["seconds"] = t1 - t0
                r["after"] = traffic.wait_acked(srv, 60)
                r["drops"] = bottleneck_drops(t) - drops0
                r["port"] = cli.getsockname()[1]
            finally:
                srv.close()
                cli.close()
    finally:
        lst.close()
    assert cap.dropped == 0, "tcpdump dropped packets"
    r["pkts"] = read_pcap(pcap)
    r["restart"] = events(tr.lines, "cocktail_restart", r["port"])
    r["check"] = events(tr.lines, "cocktail_check", r["port"])
    r["retrans"] = r["after"]["total_retrans"] - \
        r["before"]["total_retrans"]
    r["burst_pkts"] = [p for p in r["pkts"] if p.ts >= r["wall"]]
    c1 = counters()
    r["counters"] = counters_since(c0, c1)
    return r


def other_restart(t, lst, other):
    """Another connection from T's client to LST (a listener at the
    server's address) warms up (30 segments), stays idle past its RTO and
    restarts (10 segments): a restart toward the same destination, for a
    burst_after_idle() COMPETITOR. OTHER gets its sockets ("socks", for
    the caller to close) and the wall time of its restart ("wall")."""
    srv, cli = traffic.tcp_pair(lst, t.client, B.ca, timeout=300)
    other["socks"] = (srv, cli)
    mss = tcpinfo.info(srv)["snd_mss"]
    traffic.send_and_time(srv, cli, 30 * mss, 300)
    rto = traffic.wait_acked(srv, 60)["rto"] / 1e6
    time.sleep(rto + 0.1)
    other["wall"] = time.time()
    traffic.send_and_time(srv, cli, 10 * mss, 300)
    traffic.wait_acked(srv, 60)


def idle_then_send(srv, cli, mss, segs, idle=1.5):
    """Wait until the server's data is ACKed, stay idle IDLE seconds and
    send SEGS segments of MSS bytes (a restart after idle, as the burst
    of burst_after_idle()); returns the wall time of the write."""
    traffic.wait_acked(srv, 60)
    time.sleep(idle)
    wall = time.time()
    traffic.send_and_time(srv, cli, segs * mss, 300)
    return wall


def measure_info(r):
    b = r["before"]
    return ("cwnd before=%s ssthresh=%s srtt=%s min_rtt=%s rto=%s; "
            "seconds=%.3f retrans=%s drops=%s; restart=%s check=%s" % (
                b["snd_cwnd"], b["snd_ssthresh"], b["rtt"], b["min_rtt"],
                b["rto"], r["seconds"], r["retrans"], r["drops"],
                [e for _, e in r["restart"]], [e for _, e in r["check"]]))


def check_on_wire(pkts, server, port, wall, mss, segs, rate):
    """What the capture shows of a measured restart's check that ended
    SEGS segments after the flight's first ACK: (ACK span, send span,
    lowest RTT, bunched), in microseconds. The ACK span runs from the
    flight's first ACK to the one that delivered the SEGS-th segment after
    it; the send span between the sending of the last segments those two
    ACKs covered; the RTTs are each of those ACKs' time less that of the
    data segment ending at its ACK number (the capture point's own view).

    bunched is how much of the send span the hop to the capture took out:
    segments paced at RATE (payload bytes/s) one MSS's time apart that the
    capture saw less than a quarter of that apart were held on the way (a
    vCPU the host descheduled, under TCG) and caught up; each such gap
    counts the time it lost. The kernel stamps a segment when it leaves
    TCP, so its span is the capture's plus what was bunched."""
    data = sorted((p for p in pkts if p.ts >= wall and p.src == server and
                   p.plen > 0 and port in (p.sport, p.dport)),
                  key=lambda q: q.ts)
    acks = sorted((p for p in pkts if p.ts >= wall and p.dst == server and
                   p.flags & ACK and port in (p.sport, p.dport)),
                  key=lambda q: q.ts)
    acks = [a for a in acks if seq_after(a.ack, data[0].seq)]

    def sent(ack):
        # the index in data of the first transmission of the byte before ACK
        return next(i for i, p in enumerate(data)
                    if not seq_after(p.seq, (ack - 1) & 0xFFFFFFFF) and
                    seq_after(p.end, (ack - 1) & 0xFFFFFFFF))
    first = acks[0]
    want = (first.ack + segs * mss) & 0xFFFFFFFF
    last = next(a for a in acks if not seq_after(want, a.ack))
    checked = [a for a in acks if first.ts <= a.ts <= last.ts]
    rtt = min(a.ts - data[sent(a.ack)].ts for a in checked)
    lo, hi = sent(first.ack), sent(last.ack)
    gap = mss / rate if rate else 0
    bunched = sum(gap - (b.ts - a.ts) for a, b in
                  zip(data[lo:hi], data[lo + 1:hi + 1])
                  if b.ts - a.ts < gap / 4)
    return ((last.ts - first.ts) * 1e6, (data[hi].ts - data[lo].ts) * 1e6,
            rtt * 1e6, bunched * 1e6)


# Attempts at a warm-up whose only loss episode is the slow-start exit's:
# under TCG a second one is common enough (more with the BPF build, whose
# ACK processing costs more) that one attempt would make the test flaky;
# four that all miss are rare.
WARMUP_ATTEMPTS = 4


@pytest.mark.growth_on_module
@pytest.mark.parametrize("growth", GROWTHS)
def test_measure_quiet_path(cocktail, growth):
    """A quiet path that a shallow buffer keeps Reno's window below its
    BDP (200 ms, 10 Mbit/s: BDP 173 segments; 15-packet queue): after a
    600-segment warm-up and 1.5 s idle, restart=measure sends as its
    first flight, before any ACK for it, the window of the rate it
    measured: more than the old cwnd, and at least min(burst, BDP/2) of
    the 100-segment response, paced at a rate between half and
    1.25x the bottleneck's (frames of MSS + 66 bytes at 10 Mbit/s: the
    restart event's rate, and on the wire; under load the ACK-train
    estimate has come out between 0.48x and 0.66x under TCG, where ACKs
    wait for the vCPUs), with no retransmission and no drop at the
    bottleneck; the check finds the path unchanged (verdict full,
    counted in check_full), and ssthresh is then at least the flight's
    window (no queue stood before the idle period), whatever the loss of
    the warm-up left it at.

    The premise is a warm-up that showed the path: one loss episode, the
    slow-start exit's. A second one in congestion avoidance (ACKs
    compressed by a busy TCG guest burst into the 15-packet queue) halves
    the window, and the rounds after it, ACK-clocked at a small window,
    may be all that is left in the rate filter when the idle period
    begins. So may a warm-up whose ACKs the guest delivered late: the
    kernel's delivery-rate samples span the longer of a packet's send
    and ACK intervals, which ACKs held by busy vCPUs stretch (the
    restart's rate has come out at 0.48x the link in such runs). Such a
    warm-up, seen in the capture or in a restart rate below half the
    link's, is run again (up to WARMUP_ATTEMPTS times); a build that
    does not size the flight from the path fails every attempt. So is a
    run whose check did not find the path unchanged: ACKs the guest held
    a few milliseconds read as a rate below check_rate_pct of the
    sending rate over the check's first segments (seen once: 75% over
    17 segments); a build whose check fails on a quiet path fails every
    attempt.

    What the check event reports it measured is held to the capture:
    the span of the check's ACKs, the span over which their segments were
    sent (the kernel's send times) and the lowest RTT of those ACKs.

    Under both growths: the restart sizes its flight from the rate,
    whichever growth filled the path before the idle period. With
    ssr_floor=1 on: a flight that sends the restart window well within the
    RTT stays paced and checked (measure_ssr does not count)."""
    params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="max",
           ssthresh_est=1, check_rtt_pct=125, check_rate_pct=75,
           growth=growth, ssr_floor=1)

    def run():
        with Topo(rtt=200, rate="10mbit", limit=15) as t:
            r = burst_after_idle(t, "measure_quiet_" + growth, 600, 1.5, 100)
        eps = loss_episodes([p for p in r["pkts"] if p.ts < r["wall"]],
                            t.server_addr, 0.4, sport=MEASURE_PORT)
        # the rate the build chose (payload bytes/s, as frames on the
        # link, bits/s)
        mss = r["before"]["snd_mss"]
        rate = int(r["restart"][-1][1]["pacing_rate"]) if r["restart"] \
            else 0
        return t, r, len(eps), rate * (mss + 66) / mss * 8

    def verdict(r):
        return [e["verdict"] for _, e in r["check"]][-1:]

    def showed_path(a):
        return a[2] <= 1 and a[3] >= 0.5 * 10e6 and \
            verdict(a[1]) == ["full"]
    (t, r, n_eps, chosen_bps), tries = until_premise(
        run, showed_path, WARMUP_ATTEMPTS)
    warmups = [(a[2], round(a[3] / 1e6, 2), verdict(a[1])) for a in tries]
    assert n_eps <= 1, "no warm-up showed the path: (loss episodes, " \
        "restart Mbit/s, verdict) per attempt %s" % warmups
    info = measure_info(r) + "; warm-up (loss episodes, restart Mbit/s, " \
        "verdict) per attempt %s" % warmups
    assert r["restart"] and r["restart"][-1][1]["policy"] == "measure", info
    ev = r["restart"][-1][1]
    assert int(ev["pacing_rate"]) > 0, info
    fl = flight_after(r["pkts"], t.server_addr, r["wall"], dport=r["port"])
    mss = r["before"]["snd_mss"]
    bdp = 10e6 / 8 * 0.2 / (mss + 66)
    # sized from the path, not from the window before the idle period:
    # the BDP at a rate of at least half the link's (the bound the rate
    # itself is held to below), more than the old cwnd allowed
    want = min(100, int(0.5 * bdp))
    assert len(fl) >= want and len(fl) > r["before"]["snd_cwnd"], \
        "first flight %d segments, want at least min(burst, BDP/2) = %d " \
        "and more than cwnd; %s" % (len(fl), want, info)
    # the rate the build chose and the flight on the wire: paced (not
    # above 1.25x the link), and at least half the link's rate (a late
    # TCG pacing timer only adds time)
    assert 0.5 * 10e6 <= chosen_bps <= 1.25 * 10e6, \
        "paced at %.2f Mbit/s; %s" % (chosen_bps / 1e6, info)
    wire_bps = (len(fl) - 1) * (mss + 66) * 8 / (fl[-1].ts - fl[0].ts)
    assert 0.5 * 10e6 <= wire_bps <= 1.25 * 10e6, \
        "flight sent at %.2f Mbit/s on the wire; %s" % (wire_bps / 1e6, info)
    assert r["retrans"] == 0 and r["drops"] == 0, info
    assert retransmissions(r["burst_pkts"], t.server_addr) == 0, info
    assert verdict(r) == ["full"], info
    assert r["counters"]["check_full"] >= 1, (r["counters"], info)
    # ssr_floor: a window that leaves within the RTT stays paced
    assert r["counters"]["measure_ssr"] == 0, (r["counters"], info)
    assert r["counters"]["measure"] >= 1, (r["counters"], info)
    # the pass lets slow start go on to the flight's window (the restart's
    # rate times its path RTT, plus 2): ssthresh after the response (no
    # loss) is at least that, less one segment for a minimum RTT the
    # check's ACKs lowered, however low the restart left it. No queue
    # stood (a 15-packet queue is 18 ms of a 200 ms RTT), which would
    # keep ssthresh
    assert not queue_stood(r), info
    want = bdp_segs(int(ev["pacing_rate"]), int(ev["path_rtt_us"]), mss) + 2
    assert r["after"]["snd_ssthresh"] >= max(int(ev["ssthresh"]),
                                             want - 1), \
        "ssthresh %d after a passed check, want >= %d; %s" % (
            r["after"]["snd_ssthresh"], want - 1, info)
    # what the check measured, against the capture: the ACKs' span, the
    # span of their segments' sending and the lowest RTT, each within
    # 3 ms + 10 % (the capture sits one hop from the server, whose ACK
    # processing under TCG adds to its own samples); the send span also
    # may be longer than the capture's by what that hop bunched
    chk = r["check"][-1][1]
    ack_us, send_us, rtt_us, bunched_us = check_on_wire(
        r["pkts"], t.server_addr, r["port"], r["wall"], mss,
        int(chk["segs"]), int(chk["sent_rate"]))
    for key, wire, held in (("elapsed_us", ack_us, 0),
                            ("send_us", send_us, bunched_us),
                            ("rtt_us", rtt_us, 0)):
        assert -3000 - 0.1 * wire <= int(chk[key]) - wire <= \
            3000 + 0.1 * wire + held, \
            "check %s=%s, on the wire %.0f us (%.0f us bunched on the " \
            "way); %s" % (key, chk[key], wire, held, info)


def new_data_segments(pkts, sender, t0, t1):
    """Data segments SENDER sent in [T0, T1) that carried bytes never sent
    before (retransmissions excluded)."""
    high = None
    n = 0
    for p in sorted(pkts, key=lambda q: q.ts):
        if p.src != sender or p.plen == 0:
            continue
        if high is None or seq_after(p.end, high):
            high = p.end
            n += t0 <= p.ts < t1
    return n


def wait_competing(sock, rate, rtt_s, timeout=60.0):
    """Wait until the paced bulk sender SOCK has no loss recovery under way
    and delivers at least RATE bytes/s, in two tcp_info readings RTT_S
    apart (a window short of the path's pipe cannot deliver that rate, so
    this also says its window has grown back after any loss). Returns
    (steady, the last reading): not steady after TIMEOUT seconds."""
    deadline = time.monotonic() + timeout
    ok, last = 0, None
    while ok < 2:
        last = tcpinfo.get(sock)
        steady = (last["ca_state"] == CA_OPEN and
                  last["delivery_rate"] >= rate)
        ok = ok + 1 if steady else 0
        if time.monotonic() >= deadline:
            return False, last
        time.sleep(rtt_s)
    return True, last


@pytest.mark.core_on_module
def test_measure_competitor_arrives(cocktail):
    """A CUBIC bulk flow starts on the same bottleneck (200 ms, 10 Mbit/s,
    15-packet queue) during the 3 s idle period. restart=measure paces its
    flight at the old rate, and its check leaves it (verdict rtt, rate or
    loss) within two round trips of the restart: in the tracepoints, the
    check's verdict comes at most 2 x the path's RTT (plus the queue) after
    the restart. On the wire the flight's rate is left: in the third round
    trip after the burst's first segment (of a 1000-segment burst, so
    there is data left to send) the server sends less than 3/4 of the
    flight's window of new data.

    The competitor must fill the link when the flight goes out. Left to
    itself, CUBIC overflows a 15-packet queue by its own growth, and after
    each loss its window is 0.7 of the path's for seconds: a flight that
    fits beside it then is rightly judged `full`. So the competitor is
    paced (SO_MAX_PACING_RATE) at 9.36 Mbit/s of payload, 98% of what a
    10 Mbit/s link carries in 1448-byte segments: it fills the link but
    keeps no queue of its own, so neither its slow start nor the bursts
    a guest's stalled ACK clock would make overflow the queue; only a
    flight sent beside it does. Its receiver clamps the window to the
    path's pipe (165 packets of 1514 bytes at 10 Mbit/s over 200 ms) plus
    11 packets, which bounds what it has in flight. The idle period lasts
    until the competitor has no loss recovery under way and delivers at
    least 9 Mbit/s of payload, in two readings one RTT apart, or for 30 s.
    Under a loaded host the guest's stalls cost the competitor a loss now
    and then, and it may not reach two such readings in a row; then the
    flight goes out beside a competitor a little short of the link, and
    the premise below says whether the two together still overflowed the
    queue.

    The premise, observed on the wire, not in the module: the flight and
    the competitor together overflowed the queue within the flight's
    first round trip, i.e. the server later sent again some of the
    segments it sent before the first ACK for the flight (the capture is
    on the server's side of the bottleneck). The check lasts until the
    ACKs of that round trip are back, so it cannot find that round trip
    delivered in full. Whether the competitor filled the link when the
    flight went out depends on how steadily the guest ran its threads; a
    run whose premise a stalled guest broke is done again."""
    params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="max",
           ssthresh_est=1, check_rtt_pct=125, check_rate_pct=75)
    pipe = int(0.2 * 10e6 / (1514 * 8))
    clamp = (pipe + 11) * 1448

    def run():
        with Topo(rtt=200, rate="10mbit", limit=15, senders=2) as t:
            q = t.pairs[1]
            blst = traffic.Listener(q["server_ns"], q["server_addr"], 8211)
            bulk, steady = [], []

            def competitor():
                bs, bc = traffic.tcp_pair(blst, q["client_ns"], "cubic",
                                          clamp=clamp, timeout=300)
                bs.setsockopt(socket.SOL_SOCKET, traffic.SO_MAX_PACING_RATE,
                              int(9.36e6 / 8))
                b = traffic.Bulk(bs, bc)
                b.start()
                bulk.append(b)
                steady.extend(wait_competing(bs, 9e6 / 8, 0.2, 30.0))
            try:
                r = burst_after_idle(t, "measure_competitor", 600, 3.0, 1000,
                                     competitor=competitor)
            finally:
                for b in bulk:
                    b.stop()
                blst.close()
        r["competitor_bytes"] = bulk[0].received if bulk else 0
        r["steady"] = steady[0] if steady else False
        r["competitor"] = steady[1] if steady else None
        round1 = flight_after(r["pkts"], t.server_addr, r["wall"])
        r["round1"] = (len(round1), resent(r["pkts"], round1))
        return t, r

    def premise(a):
        return a[1]["competitor_bytes"] > 0 and a[1]["drops"] > 0 and \
            a[1]["round1"][1] > 0

    (t, r), tries = until_premise(run, premise)
    info = measure_info(r) + ("; per attempt (competitor steady, drops, "
                              "first round trip's segments, of them sent "
                              "again) %s" % [
                                  (a[1]["steady"], a[1]["drops"]) +
                                  a[1]["round1"] for a in tries])
    info += "; the competitor's last reading before the flight %s" % (
        r["competitor"],)
    assert r["competitor_bytes"] > 0, info
    assert r["drops"] > 0, "the flight met no full queue; " + info
    assert r["round1"][1] > 0, \
        "nothing of the flight's first round trip was lost; " + info
    assert r["restart"] and r["restart"][-1][1]["policy"] == "measure", info
    t_restart, ev = r["restart"][-1]
    verdicts = [(ts, e) for ts, e in r["check"] if ts >= t_restart]
    assert verdicts, info
    t_check, chk = verdicts[0]
    assert chk["verdict"] in ("rtt", "rate", "loss"), info
    rtt_s = r["before"]["min_rtt"] / 1e6 + 15 * 1514 * 8 / 10e6
    assert t_check - t_restart <= 2 * rtt_s + 0.05, \
        "check verdict %.3f s after the restart, 2 RTTs = %.3f s; %s" % (
            t_check - t_restart, 2 * rtt_s, info)
    assert r["counters"]["check_" + chk["verdict"]] > 0, \
        (r["counters"], info)
    first = [p for p in r["burst_pkts"]
             if p.src == t.server_addr and p.plen > 0][0]
    flight_w = int(ev["cwnd_after"])
    sent = new_data_segments(r["burst_pkts"], t.server_addr,
                             first.ts + 2 * rtt_s, first.ts + 3 * rtt_s)
    assert sent < 0.75 * flight_w, \
        "%d new segments in the third round trip, flight window %d; %s" % (
            sent, flight_w, info)


@pytest.mark.parametrize("miss", [1, 0])
@pytest.mark.core_on_module
def test_measure_rate_exit_memory(cocktail, miss):
    """A slower path after the idle period, without an RTT rise or a
    loss: warm up at 10 Mbit/s on a 100 ms path with a queue deep enough
    for the whole flight (200 packets), reshape the bottleneck to
    4 Mbit/s, idle 1.5 s and restart (100 segments): the flight paced at
    the old rate is delivered at 4/10 of it, and the check leaves on
    `rate` (its premise; the first ACKs saw no queue, so the check's
    lowest RTT stays at the minimum). Then idle 1.5 s again and restart
    (100 segments).

    With check_rate_miss=1 the exit is remembered: the check event shows
    one miss and the second restart's first flight on the wire (the
    segments before the first ACK for it) is at most 0.6 of the first
    restart's (halved). With check_rate_miss=0 it is not: no miss, and
    the second flight is at least 0.85 of the first, sized as the first
    was. The queue rule is off (queue_pct=1000): the first response,
    ACK-clocked behind its own queue at the slower rate, would otherwise
    halve the second flight whatever the check's memory."""
    params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="max",
           ssthresh_est=1, check_rtt_pct=125, check_rate_pct=75,
           check_rate_miss=miss, queue_pct=1000)
    first = {}

    def run():
        with Topo(rtt=100, rate="10mbit", limit=200) as t:
            def slower(srv, cli, mss):
                bottleneck_rate(t, "4mbit", 200)
                first["wall"] = idle_then_send(srv, cli, mss, 100)
            r = burst_after_idle(t, "rate_memory_%d" % miss, 600, 1.5, 100,
                                 between=slower)
        r["wall1"] = first["wall"]
        return t, r

    def first_check(a):
        # the first restart's: the warm-up has none (no restart)
        return a[1]["check"][0][1] if a[1]["check"] else None

    # two restarts, the measured ones: a slow guest that started a send
    # of the warm-up an RTO after the last restarted there too
    (t, r), tries = until_premise(
        run, lambda a: (first_check(a) or {}).get("verdict") == "rate" and
        len(a[1]["restart"]) == 2)
    info = measure_info(r) + "; first checks per attempt %s" % [
        first_check(a) for a in tries]
    chk = first_check((t, r))
    assert chk and chk["verdict"] == "rate", info
    assert [e["policy"] for _, e in r["restart"]] == ["measure"] * 2, info
    assert r["counters"]["check_rate"] > 0, (r["counters"], info)
    assert int(chk["misses"]) == miss, info
    assert r["retrans"] == 0 and r["drops"] == 0, info
    fl1 = flight_after(r["pkts"], t.server_addr, r["wall1"],
                       dport=r["port"])
    fl2 = flight_after(r["pkts"], t.server_addr, r["wall"],
                       dport=r["port"])
    if miss:
        assert len(fl2) <= 0.6 * len(fl1), \
            "second flight %d segments, first %d: not halved; %s" % (
                len(fl2), len(fl1), info)
    else:
        assert len(fl2) >= 0.85 * len(fl1), \
            "second flight %d segments, first %d: cut; %s" % (
                len(fl2), len(fl1), info)


@pytest.mark.core_on_module
def test_measure_probe(cocktail):
    """Probing behind a queue others kept. A 100 ms, 10 Mbit/s path
    (queue 200 packets): warm up (300 segments), raise the bottleneck's
    one-way delay to 400 ms (a standing queue someone else keeps, as far
    as the RTT samples tell) and send 300 segments there, idle 1.5 s,
    restart (100 segments), idle 1.5 s, restart (100 segments); once with
    probe_pct=100 and once with 150; with 150 also without the added
    delay (quiet), and with the delay back at the minimum for 20 segments
    (one round trip) between the first restart's response and the second
    idle period (drained: the probe's gate is the passed check's own
    lowest RTT, not the queue before the idle period). Premises: the
    first restart's check passes and there are two restarts; behind the
    queue both restarts are counted in measure_queued (the queue stood,
    the window does not explain it) and that check's lowest RTT is above
    1.2 times the minimum; drained, the same but only the first restart
    is counted; on the quiet path neither restart is counted and that
    RTT is at most 1.2 times the minimum (an attempt where a premise does
    not hold runs again; so does one whose first restart behind the
    queue sized its flight above 1/1.3 of the response, from an ACK train
    the guest bunched that read above the link, and one where a flight
    stopped on the wire before its first ACK came, short of its window
    and the response, a stall of the guest). With 100 the second
    restart's flight on the wire (the
    segments before the first ACK for them) is 0.85..1.15 of the
    first's (at most 1.15 when it took a round trip to send: its first
    ACK cut it). With 150 behind the queue the first restart does not probe
    (a connection's first measured restart) and the second, after a
    check that passed behind the queue, does: its flight is 1.3..1.7
    times the first's and its segments leave at most 0.85 of the first's
    spacing (the capture is before the bottleneck). With 150 on the
    quiet path the passed check saw no queue and the second flight is
    0.85..1.15 of the first's again. measure_probed counts the probed
    restarts: the second behind the queue and drained, none otherwise.
    No retransmission. pace_rate=
    delivery: the window rate of a warm-up whose slow start overshot the
    path would size the flights past the responses; check_rate_pct=1:
    half of the first checks left on the ACKs' rate in the guest, which
    breaks the premise, not what is tested."""
    def cut_by_ack(f, r):
        """The flight F took about a round trip to send: its own first
        ACK ended it on the wire."""
        return f[-1].ts - f[0].ts >= 0.9 * int(r["before"]["min_rtt"]) / 1e6

    runs = {}
    for pct, case in ((100, "queue"), (150, "queue"), (150, "quiet"),
                      (150, "drained")):
        params(iw=10, restart="measure", cwv=1, pace_iw=0,
               pace_rate="delivery", ssthresh_est=1, check_rtt_pct=125,
               check_rate_pct=1, probe_pct=pct)
        first = {}
        name = "probe_%d%s" % (pct, "" if case == "queue" else "_" + case)
        queue = case != "quiet"

        def run():
            with Topo(rtt=100, rate="10mbit", limit=200) as t, \
                    delay_later(t, 400) as slow, delay_later(t, 50) as back:
                def standing_then_restart(srv, cli, mss):
                    if queue:
                        slow.run()
                    traffic.send_and_time(srv, cli, 300 * mss, 300)
                    first["wall"] = idle_then_send(srv, cli, mss, 100)
                    if case == "drained":
                        traffic.wait_acked(srv, 60)
                        back.run()
                        traffic.send_and_time(srv, cli, 20 * mss, 300)
                r = burst_after_idle(t, name, 300, 1.5, 100,
                                     between=standing_then_restart)
            r["wall1"] = first["wall"]
            r["flights"] = [flight_after(r["pkts"], t.server_addr, w,
                                         dport=r["port"])
                            for w in (r["wall1"], r["wall"])]
            return r

        def premises(r):
            chk = [e for _, e in r["check"]][:1]
            if [e["verdict"] for e in chk] != ["full"] or \
                    len(r["restart"]) != 2:
                return False
            # an ACK train the guest bunched reads above the link; behind
            # the queue a first flight sized from it can leave no room in
            # the 100-segment response to see a probe of 1.3 times it
            if queue and int(r["restart"][0][1]["cwnd_after"]) * 13 > 1000:
                return False
            # a flight the guest stopped sending before its first ACK
            # came: fewer segments than its window and the response
            # allow, all sent within less than a round trip
            for f, (_, e) in zip(r["flights"], r["restart"]):
                if len(f) < 0.85 * min(int(e["cwnd_after"]), 100) and \
                        not cut_by_ack(f, r):
                    return False
            seen = check_saw_queue(chk[0])
            return r["counters"]["measure_queued"] == \
                {"queue": 2, "drained": 1}.get(case, 0) \
                and seen == queue

        r, tries = until_premise(run, premises)
        r["tries"] = [(a["counters"]["measure_queued"],
                       [(e["verdict"], e["rtt_us"], e["min_rtt_us"])
                        for _, e in a["check"]])
                      for a in tries]
        r["ok"] = premises(r)
        runs[name] = r
    info = "; ".join(
        "%s: flights %s segments, spacing %s us, (queued, "
        "checks) per attempt %s, %s" % (
            name, [len(f) for f in r["flights"]],
            ["%.0f" % (mean_spacing(f) * 1e6) for f in r["flights"]],
            r["tries"], measure_info(r))
        for name, r in runs.items())
    for r in runs.values():
        assert r["ok"], info
        assert [e["policy"] for _, e in r["restart"]] == ["measure"] * 2, \
            info
        assert r["retrans"] == 0, info
    assert {n: r["counters"]["measure_probed"]
            for n, r in runs.items()} == {
        "probe_100": 0, "probe_150": 1, "probe_150_quiet": 0,
        "probe_150_drained": 1}, info
    # each run against itself: the rate estimate (and so the unprobed
    # flight) differs from one connection to the next in the guest. A
    # flight paced over a round trip or more (the quiet path's, sized at
    # its BDP) is cut on the wire by its own first ACK: there the count
    # is the RTT over the guest's pacing, and only the upper bound (no
    # probe) tells anything.
    for name in ("probe_100", "probe_150_quiet"):
        r = runs[name]
        f1, f2 = r["flights"]
        a1, a2 = len(f1), len(f2)
        assert a2 <= 1.15 * a1, info
        assert cut_by_ack(f2, r) or a2 >= 0.85 * a1, info
    b1, b2 = (len(f) for f in runs["probe_150"]["flights"])
    assert 1.3 * b1 <= b2 <= 1.7 * b1, info
    s1, s2 = (mean_spacing(f) for f in runs["probe_150"]["flights"])
    assert s2 <= 0.85 * s1, info


@pytest.mark.core_on_module
@pytest.mark.parametrize("pct,others", [(100, False), (150, False),
                                        (150, True)],
                         ids=["100", "150", "150-others"])
def test_measure_quiet_gain(cocktail, pct, others):
    """A flight a little above its rate once a check found the path quiet.
    A 100 ms, 10 Mbit/s path (queue 200 packets, nothing else on it): warm
    up (300 segments), idle 1.5 s, restart (100 segments), idle, restart
    (100 segments), with quiet_pct=PCT. The premise: the first
    restart's check passes with its lowest RTT within 1.2 times the
    minimum (queue_pct), and a first flight that reached the bottleneck
    paced (an attempt where either does not hold runs again). The first
    restart is the connection's first measured one: its segments before
    the first ACK for them leave at no more than 1.15 times the rate its
    restart event reports (the capture is before the bottleneck; the
    guest's late pacing timers only slow them). With 150 the second
    restart's leave at least 1.2 times its own event's rate (1.5 times
    asked), counted in measure_quiet, and its check still passes: the
    ACKs are judged against the rate, which the link delivers. With 100
    the second flight is paced as the first and nothing is counted.

    With OTHERS, during the second idle period (2.5 s) another connection
    from the same server toward the same client warms up (30 segments),
    stays idle past its RTO and restarts (10 segments), more than an RTT
    before the second restart, so no ensemble divides either: the second
    restart then finds another's restart toward its destination within
    its idle period, keeps its flight at the rate (as with 100) and
    counts measure_quiet_others instead of measure_quiet.

    No retransmission and no drop at the bottleneck. pace_rate=delivery
    and check_rate_pct=1 as in test_measure_probe: a window rate of an
    overshooting slow start, or ACKs the guest held, break the premise,
    not what is tested."""
    params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="delivery",
           ssthresh_est=1, check_rtt_pct=125, check_rate_pct=1,
           quiet_pct=pct)
    first = {}
    name = "measure_quiet_gain_%d%s" % (pct, "_others" if others else "")

    def run():
        with Topo(rtt=100, rate="10mbit", limit=200) as t:
            lst = traffic.Listener(t.server, t.server_addr, MEASURE_PORT + 1)
            other = {}

            def restart_then_idle(srv, cli, mss):
                first["wall"] = idle_then_send(srv, cli, mss, 100)

            try:
                r = burst_after_idle(
                    t, name, 300, 2.5 if others else 1.5, 100,
                    between=restart_then_idle,
                    competitor=(lambda: other_restart(t, lst, other))
                    if others else None)
            finally:
                for sk in other.get("socks", ()):
                    sk.close()
                lst.close()
            r["flights"] = [flight_after(r["pkts"], t.server_addr, w,
                                         dport=r["port"])
                            for w in (first["wall"], r["wall"])]
            # seconds between the other's restart and this one's
            r["apart"] = r["wall"] - other["wall"] if others else None
        mss = r["before"]["snd_mss"]
        # each flight's payload rate on the wire over the rate its
        # restart event reports (the check's rate)
        r["ratios"] = [mss / mean_spacing(f) / int(e["pacing_rate"])
                       if len(f) > 1 and int(e["pacing_rate"]) else 0.0
                       for f, (_, e) in zip(r["flights"], r["restart"])]
        return r

    def premises(r):
        chk = [e for _, e in r["check"]]
        return len(r["restart"]) == 2 and len(chk) == 2 and \
            chk[0]["verdict"] == "full" and not check_saw_queue(chk[0]) \
            and r["ratios"][0] <= 1.15 and \
            (not others or r["apart"] > 0.2)

    r, tries = until_premise(run, premises)
    info = "flights %s segments, wire rate / event rate %s, the other's " \
        "restart %s s before, per attempt %s; %s" % (
            [len(f) for f in r["flights"]],
            ["%.2f" % x for x in r["ratios"]], r["apart"],
            [(["%.2f" % x for x in a["ratios"]],
              [(e["verdict"], e["rtt_us"], e["min_rtt_us"])
               for _, e in a["check"]], a["apart"]) for a in tries],
            measure_info(r))
    assert premises(r), info
    assert [e["policy"] for _, e in r["restart"]] == ["measure"] * 2, info
    assert r["retrans"] == 0 and r["drops"] == 0, info
    gained = pct > 100 and not others
    assert r["counters"]["measure_quiet"] == (1 if gained else 0), info
    assert r["counters"]["measure_quiet_others"] == (1 if others else 0), \
        info
    assert r["counters"]["measure_ensemble"] == 0, info
    assert [e["verdict"] for _, e in r["check"]] == ["full"] * 2, info
    if gained:
        assert r["ratios"][1] >= 1.2, info
    else:
        assert r["ratios"][1] <= 1.15, info


# The receiver's window in test_measure_window_cap: 22 segments of 1448
# bytes, the window of Chan's 2 Mbit/s bench profile
WND_BYTES = 22 * 1448


@pytest.mark.core_on_module
@pytest.mark.parametrize("cap", [1, 0])
def test_measure_window_cap(cocktail, cap):
    """A receiver whose window is clamped to 22 segments on a 200 ms,
    10 Mbit/s path (100-packet queue): the window carries about
    1.3 Mbit/s, an eighth of the link, and holds the 300-segment warm-up
    back; the ACK trains of its windows still show the link's rate.
    After 1.5 s idle, a 100-segment response. With wnd_cap=1 the
    restart's rate (the restart event's pacing_rate) is at most the
    window per minimum RTT (+5 %), counted in measure_wnd, and on the
    wire the first flight (the segments before the first ACK for them)
    spreads over at least half the minimum RTT; with wnd_cap=0 the rate
    is the path's, at least twice the window's, measure_wnd does not
    count, and the same flight leaves within half the minimum RTT. No
    retransmission either way. Premise (run again otherwise): the
    restart is measured and paced (pacing_rate > 0)."""
    params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="max",
           ssthresh_est=1, check_rtt_pct=125, check_rate_pct=75,
           wnd_cap=cap)

    def run():
        with Topo(rtt=200, rate="10mbit", limit=100) as t:
            r = burst_after_idle(t, "measure_wnd_cap%d" % cap, 300, 1.5,
                                 100, clamp=WND_BYTES)
        return t, r

    def paced(a):
        ev = a[1]["restart"][-1:]
        return [e["policy"] for _, e in ev] == ["measure"] and \
            int(ev[0][1]["pacing_rate"]) > 0

    (t, r), tries = until_premise(run, paced)
    info = measure_info(r) + "; attempts %d" % len(tries)
    assert paced((t, r)), info
    ev = r["restart"][-1][1]
    rate = int(ev["pacing_rate"])
    min_rtt = r["before"]["min_rtt"]
    wnd_rate = WND_BYTES * 1e6 / min_rtt
    fl = flight_after(r["pkts"], t.server_addr, r["wall"], dport=r["port"])
    spread = fl[-1].ts - fl[0].ts
    info += "; window rate %.0f B/s, first flight %d segments over " \
        "%.0f ms" % (wnd_rate, len(fl), spread * 1e3)
    if cap:
        assert rate <= 1.05 * wnd_rate, info
        assert r["counters"]["measure_wnd"] == 1, info
        assert spread >= 0.5 * min_rtt / 1e6, info
    else:
        assert rate >= 2 * wnd_rate, info
        assert r["counters"]["measure_wnd"] == 0, info
        assert spread < 0.5 * min_rtt / 1e6, info
    assert r["retrans"] == 0, info


def test_rate_filter_ages(cocktail):
    """Warm up at 10 Mbit/s (600 segments), reshape the bottleneck to
    2 Mbit/s, transfer there (1200 segments: with the 20-packet queue's
    120 ms over 50 ms, about 40 round trips, more than the rate filters'
    20), idle 1.5 s and restart: the restart's rate
    (restart event pacing_rate) is at most 2.5 Mbit/s, not the 10 Mbit/s
    of the warm-up that the kernel's saved sample still held."""
    params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="max",
           ssthresh_est=1)
    with Topo(rtt=50, rate="10mbit", limit=20) as t:
        def reshape(srv, cli, mss):
            bottleneck_rate(t, "2mbit", 20)
            traffic.send_and_time(srv, cli, 1200 * mss, 300)
        r = burst_after_idle(t, "measure_aging", 600, 1.5, 100,
                             between=reshape)
    info = measure_info(r)
    assert r["restart"], info
    rate = int(r["restart"][-1][1]["pacing_rate"])
    assert 0 < rate <= 2.5e6 / 8, \
        "restart rate %.2f Mbit/s after the link went to 2 Mbit/s; %s" % (
            rate * 8 / 1e6, info)



@pytest.mark.core_on_module
@pytest.mark.parametrize("floor", [0, 1])
def test_measure_check_holds_restart_window(cocktail, floor):
    """A rate read on a slower link, restarted on a faster one: warm up at 1
    Mbit/s on a 20 ms path (200 segments), reshape the bottleneck to 20 Mbit/s,
    idle 1.5 s and restart (100 segments). At the old rate the flight's BDP is
    3 segments, so its window is the restart window (iw=10), checked at that
    rate (the restart event's pacing_rate). With pace_floor=0 it is paced at
    that rate: a segment every 12 ms on a path whose ACKs now come back within
    21 ms, so the check passes with a few segments in flight. Its full verdict
    keeps the window at the restart window (the check event's cwnd is 10,
    check_held counts it) instead of cutting it to what is in flight + 2; a
    flight paced at the path's rate has its window in flight and is cut as
    before (test_measure_quiet_path); an attempt whose check ended with nothing
    or the window in flight (nothing to hold: whether the next segment left
    before the last ACK came, the guest's timing) runs again. On the wire (the
    capture is before the bottleneck) at most 4 of the flight's segments leave
    before the first ACK for them, which comes back after about 22 ms (the
    first two packets of two segments; the next leaves 23 ms after the one
    before at the old rate), and measure_floor does not count. With
    pace_floor=1 the same flight leaves, until its first ACK, at the restart
    window per minimum RTT (the warm-up's, 22-34 ms): at least 6 of its 10
    segments before that ACK, counted in measure_floor; the verdict and window
    are the same. No retransmission either way. With ssr_floor=1 too the
    same: the connection is alone toward its destination
    (test_ssr_floor_others)."""
    params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="max",
           ssthresh_est=1, check_rtt_pct=125, check_rate_pct=75,
           pace_floor=floor, ssr_floor=1)

    def run():
        with Topo(rtt=20, rate="1mbit", limit=30) as t:
            def faster(srv, cli, mss):
                bottleneck_rate(t, "20mbit", 30)
            r = burst_after_idle(t, "measure_hold_%d" % floor, 200, 1.5,
                                 100, between=faster)
            r["flight"] = flight_after(r["pkts"], t.server_addr, r["wall"],
                                       dport=r["port"])
        return r

    # about one attempt in two or three: up to ten
    r, _ = until_premise(
        run, lambda a: floor or a["counters"]["check_held"] == 1, 10)
    fl = r["flight"]
    info = "flight %d segments; %s" % (len(fl), measure_info(r))
    assert [e["policy"] for _, e in r["restart"]] == ["measure"], info
    ev = r["restart"][-1][1]
    assert r["counters"]["measure_ssr"] == 0, info
    # the premise: the restart window, checked at the old link's rate
    assert int(ev["cwnd_after"]) == 10, info
    assert 0 < int(ev["pacing_rate"]) <= 1.5e6 / 8, info
    chk = r["check"][0][1] if r["check"] else None
    assert chk and chk["verdict"] == "full", info
    assert int(chk["cwnd"]) == 10, info
    assert r["counters"]["measure_floor"] == floor, info
    if floor:
        assert len(fl) >= 6, info
    else:
        assert r["counters"]["check_held"] == 1, info
        assert len(fl) <= 4, info
    assert r["retrans"] == 0, info


def _cap_pacing(t, conns, cap):
    """Have the server cap the pacing of each of CONNS (client sockets
    to topology T's server) at CAP B/s (SO_MAX_PACING_RATE), asked over a
    control connection of its own."""
    ctl = Conn(t.server_addr, PORT)
    try:
        for c in conns:
            ctl.set_max_pacing(c.s.getsockname()[1], cap)
    finally:
        ctl.close()


def _restart_together(t, n, segs, sources=None, idle=2.0, gap=0.0,
                      cap=None):
    """In the client's namespace: N keep-alive connections to the
    server (from the client's addresses SOURCES, one each, and a
    20-segment warm-up on all at once; else all from its own address,
    a warm-up of WARM_BULK on each in turn, each alone on the path),
    IDLE seconds idle, then a request of SEGS segments on every one, sent
    back to back (or GAP seconds apart), and the answers read. With CAP
    (B/s) the server sets SO_MAX_PACING_RATE = CAP on each connection
    before its warm-up. Returns the client ports and the wall-clock time
    before the requests."""
    conns = []
    try:
        if sources:
            # connected at once: one after the other takes N round trips
            for a in sources:
                conns.append(Conn(t.server_addr, PORT, source=a,
                                  connect=False))
                conns[-1].s.setblocking(False)
                conns[-1].s.connect_ex((t.server_addr, PORT))
            for c in conns:
                select.select([], [c.s], [], 60)
                c.s.settimeout(120)
                err = c.s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                assert err == 0, os.strerror(err)
            for c in conns:
                c.request(20)
            for c in conns:
                c.response()
        else:
            for _ in range(n):
                conns.append(Conn(t.server_addr, PORT))
            if cap is not None:
                _cap_pacing(t, conns, cap)
            for c in conns:
                for _ in range(WARM_BULK["warm_max"]):
                    c.fetch(WARM_BULK["warm_segs"])
        time.sleep(idle)
        t_req = time.time()
        for i, c in enumerate(conns):
            if gap and i:
                time.sleep(gap)
            c.request(segs)
        for c in conns:
            c.response()
        return [c.s.getsockname()[1] for c in conns], t_req
    finally:
        for c in conns:
            c.close()


ENSEMBLE = 4
# the ensemble test's pacing cap, in units of the link's rate
ENSEMBLE_CAP = 1.5


@pytest.mark.parametrize("ensemble,gap_ms", [
    pytest.param(1, 5, id="together"), pytest.param(0, 5, id="off"),
    pytest.param(1, 50, id="apart")])
def test_ensemble(topo, ensemble, gap_ms):
    """Four connections from one client (one destination), each warmed
    up alone on the 100 ms, 10 Mbit/s path, restart together after 2 s
    idle (60-segment responses, requested 5 ms apart). The server caps
    each connection's pacing at 1.5 L, L the link's rate
    (SO_MAX_PACING_RATE, as an application may): a delivery-rate sample
    is at most its data over the time it took to send, so no sample and
    no estimate reads above the cap even when an ACK train comes back
    compressed (uncapped, a loaded guest has shown estimates near 3 L).
    Each one's rate estimate reads about L, within 0.5 .. 1.5 L. With
    ensemble=1 the k-th restart paces and sizes its flight at 1/k of its
    estimate, so the k-th fastest of the four flights has a pacing_rate
    within 0.5 L / k .. 1.5 L / k, measure_ensemble counts the three
    after the first, and on the wire that flight (the segments before
    the first ACK for them) leaves no faster than 1.5 L / k (mean spacing
    at least 0.8 k mss / 1.5 L: 0.8 for the bunching of a TCG guest).
    The flights are ranked by rate, not by the order they reach the
    router: neither the order of the requests nor that of the printed
    events is the order in which the server's threads restarted, and a
    thread descheduled between its restart and its first segment lets
    the next restart's flight reach the router first. With ensemble=0
    every flight goes at its own rate, at least 0.8 L, its mean spacing
    at most twice mss / 0.8 L, and nothing is counted. Requested 50 ms
    apart (more than the quarter RTT that keeps a run of restarts one
    ensemble), the restarts are independent: with ensemble=1 each goes
    at its own rate, as with 0. The premise (run again otherwise): four
    measured, paced restarts whose flights reached the router each
    within 20 ms of the one before (requested 5 ms apart), or each 30 ms
    or more after it (50 ms apart): a guest that scheduled the server's
    threads later than that made another experiment. Every flight
    carries at least 10 segments."""
    params(iw=10, restart="measure", cwv=0, pace_iw=0, pace_rate="max",
           ssthresh_est=1, ensemble=ensemble)
    pcap = OUT / ("%s_ensemble%d_gap%d.pcap" % (B.name, ensemble, gap_ms))
    link, mss = 10e6 / 8, 1448

    together = gap_ms < 25  # within RTT / 4 of the last

    def run():
        c0 = B.counters()
        with B.events("cocktail_restart") as tr, \
                Capture(topo.capture_ns, topo.capture_dev, pcap,
                        "tcp port %d" % PORT) as capt:
            ports, t_req = in_ns(topo.client, _restart_together, topo,
                                 ENSEMBLE, 60, gap=gap_ms / 1e3,
                                 cap=int(ENSEMBLE_CAP * link),
                                 timeout=300)
        assert capt.dropped == 0, "tcpdump dropped packets"
        c1 = B.counters()
        ev = [e for e in restart_events(tr.lines)
              if int(e["dport"]) in ports]
        pkts = read_pcap(pcap)
        flights = []
        for e in ev:
            fl = flight_after(pkts, topo.server_addr, t_req,
                              dport=int(e["dport"]))
            flights.append((fl[0].ts if fl else 0.0, len(fl),
                            int(e["pacing_rate"]),
                            mean_spacing(fl) if len(fl) > 1 else 0.0))
        # in the order the restarts went out
        flights.sort()
        return {"events": ev, "flights": flights,
                "counters": counters_since(c0, c1)}

    def premise(r):
        ev, fl = r["events"], r["flights"]
        if len(ev) != ENSEMBLE or \
                not all(e["policy"] == "measure" and
                        int(e["pacing_rate"]) > 0 for e in ev):
            return False
        gaps = [b[0] - a[0] for a, b in zip(fl, fl[1:])]
        return max(gaps) <= 0.020 if together else min(gaps) >= 0.030

    r, tries = until_premise(run, premise)
    info = "events=%s counters=%s attempts %d; flights (start, segments, " \
        "rate, mean spacing) %s" % (
            r["events"], {k: v for k, v in r["counters"].items() if v},
            len(tries), r["flights"])
    assert premise(r), info
    assert all(f[1] >= 10 for f in r["flights"]), info
    rates = [f[2] for f in r["flights"]]
    spacing = [f[3] for f in r["flights"]]
    top = ENSEMBLE_CAP * link
    if ensemble and together:
        ranked = sorted(zip(rates, spacing), reverse=True)
        for k in range(1, ENSEMBLE + 1):
            rate, gap = ranked[k - 1]
            assert 0.5 * link / k <= rate <= top / k, info
            assert gap >= 0.8 * k * mss / top, info
        assert r["counters"]["measure_ensemble"] == ENSEMBLE - 1, info
    else:
        for k in range(1, ENSEMBLE + 1):
            assert rates[k - 1] >= 0.8 * link, info
            assert spacing[k - 1] <= 2 * mss / (0.8 * link), info
        assert r["counters"]["measure_ensemble"] == 0, info
    assert r["counters"]["ensemble_evict"] == 0, info


def _ssr_floor_steps(t, cap, counters, gap):
    """In the client's namespace: two keep-alive connections to the
    server, their pacing capped at CAP B/s by the server, each warmed up
    alone (two 30-segment responses); then, 2 s idle before each, a
    20-segment response on the first, on the second, on the first, on
    the first again, and on both, the second requested GAP s after the
    first. Returns the second's client port, COUNTERS() before the steps
    and after each, and the wall-clock time before each step's first
    request."""
    conns = [Conn(t.server_addr, PORT) for _ in range(2)]
    try:
        _cap_pacing(t, conns, cap)
        for c in conns:
            c.fetch(30)
            c.fetch(30)
        snaps, times = [counters()], []
        for step in ([0], [1], [0], [0], [0, 1]):
            time.sleep(2.0)
            times.append(time.time())
            for k, i in enumerate(step):
                if k:
                    time.sleep(gap)
                conns[i].request(20)
            for i in step:
                conns[i].response()
            snaps.append(counters())
        return conns[1].s.getsockname()[1], snaps, times
    finally:
        for c in conns:
            c.close()


def test_ssr_floor_others(topo):
    """ssr_floor=1: a flight that would take longer than the minimum RTT
    to send the restart window at its rate restarts as ssr (measure_ssr)
    when another connection restarted toward the destination during its
    idle period, and stays paced when none did. The server caps each
    connection's pacing at 100 kB/s (SO_MAX_PACING_RATE), so no rate
    estimate reads above it and 10 segments at that rate take 145 ms on
    the 100 ms path. Two connections from one client, restarting one at
    a time, 2 s apart: the first's restart (none other since its
    warm-up) is paced; the second's, after the first's, is ssr: its
    restart event has the window 10 and no rate, and it sends those 10
    segments at once, before the first ACK; the first's next restart,
    after the second's, is ssr; its one after that, alone again, is
    paced; then both, the second requested 40 ms after the first (more
    than the quarter RTT that keeps a run of restarts one ensemble, less
    than the RTT): the second's restart came within an RTT of the
    first's, one event, and stays paced (and, if the guest's threads
    made the two one ensemble, divided). Every restart is measured."""
    params(iw=10, restart="measure", cwv=0, pace_iw=0, pace_rate="max",
           ssthresh_est=1, ensemble=1, ssr_floor=1)
    pcap = OUT / ("%s_ssr_floor_others.pcap" % B.name)
    with B.events("cocktail_restart") as tr, \
            Capture(topo.capture_ns, topo.capture_dev, pcap,
                    "tcp port %d" % PORT) as capt:
        port, snaps, times = in_ns(topo.client, _ssr_floor_steps, topo,
                                   100000, B.counters, 0.040, timeout=300)
    assert capt.dropped == 0, "tcpdump dropped packets"
    d = [counters_since(a, b) for a, b in zip(snaps, snaps[1:])]
    ev = [e for e in restart_events(tr.lines) if int(e["dport"]) == port]
    info = "per step %s; the second's restarts %s" % (
        [{k: v for k, v in x.items() if v and k.startswith("measure")}
         for x in d], ev)
    assert [x["measure"] for x in d] == [1, 1, 1, 1, 2], info
    assert [x["measure_ssr"] for x in d] == [0, 1, 1, 0, 0], info
    assert sum(x["measure_ensemble"] for x in d[:4]) == 0, info
    assert len(ev) == 2, info
    assert ev[0]["policy"] == "measure", info
    assert int(ev[0]["cwnd_after"]) == 10, info
    assert int(ev[0]["pacing_rate"]) == 0, info
    # on the wire: the second's 10-segment window before its first ACK
    fl = flight_after(read_pcap(pcap), topo.server_addr, times[1],
                      dport=port)
    assert len(fl) >= 10, info


# destinations restarting within one RTT: 200 of them in the table's 256
# slots share one with near certainty (the chance that none do is below
# 1e-30), and so do the 40 or more of any 400 ms if the restarts spread
# over seconds (1 - e^(-40 * 39 / 512) each)
DESTINATIONS = 200


def test_ensemble_table_bound(cocktail):
    """The ensembles' table is fixed (256 slots), and a peer that opens
    connections from many addresses cannot grow it: 200 clients, each
    one address of the client namespace with one connection, restart
    together after 3 s idle on a 400 ms path (requests sent back to
    back). Restarts toward another destination take live slots over
    (ensemble_evict counts them), and no restart is slowed for another
    destination's (measure_ensemble stays 0; test_ensemble shows it
    counts the restarts of one destination). Every restart is
    measured."""
    params(iw=10, restart="measure", cwv=0, pace_iw=0, pace_rate="max",
           ssthresh_est=1, ensemble=1)
    with Pair(rtt=400, subnet=210) as p:
        base = p.client_addr.rsplit(".", 1)[0]
        sources = ["%s.%d" % (base, 10 + i) for i in range(DESTINATIONS)]
        p.run(p.client, "ip -batch - <<'EOF'\n%s\nEOF" % "\n".join(
            "addr add %s/32 dev %s" % (a, p.client_dev) for a in sources))
        p.ka_server(port=PORT, cc=B.ca)
        c0 = B.counters()
        with B.events("cocktail_restart") as tr:
            ports, _ = in_ns(p.client, _restart_together, p, DESTINATIONS,
                             4, sources, 3.0, timeout=600)
        c1 = B.counters()
    d = counters_since(c0, c1)
    ev = [e for e in restart_events(tr.lines) if int(e["dport"]) in ports]
    info = "counters=%s, %d restart events, policies %s" % (
        {k: v for k, v in d.items() if v}, len(ev),
        sorted({e["policy"] for e in ev}))
    assert len(ev) == DESTINATIONS, info
    assert all(e["policy"] == "measure" for e in ev), info
    assert d["measure_ensemble"] == 0, info
    assert d["ensemble_evict"] > 0, info


def bottleneck_rate(t, rate, limit):
    """Reshape topology T's bottleneck to RATE (a tc rate, "4mbit") with
    a queue of LIMIT packets: its netem, under the rate class 1:1."""
    bn = t.info["bottleneck"]
    tc(bn["ns"], ["qdisc", "change", "dev", bn["dev"], "parent", "1:1",
                  "handle", "10:", "netem", "rate", rate, "limit",
                  str(limit)])


def _delay_words(t, ms, loss_pct):
    bn = t.info["bottleneck"]
    return bn["ns"], ["qdisc", "change", "dev", bn["dev"], "root", "handle",
                      "1:", "netem", "delay", "%dus" % (ms * 1000), "limit",
                      "100000", "loss", "%d%%" % loss_pct]


def bottleneck_delay(t, ms, loss_pct=0):
    """Set the one-way delay of topology T's bottleneck netem to MS
    milliseconds (a standing queue someone else keeps, without its
    losses, as far as the connection's RTT samples tell), and with
    LOSS_PCT its random loss (0: none)."""
    tc(*_delay_words(t, ms, loss_pct))


def delay_later(t, ms, loss_pct=0):
    """bottleneck_delay(T, MS, LOSS_PCT) prepared now, set by run(): for
    a change between two sends, which must take less than an RTO
    (topo.PreparedTc). A context manager."""
    return PreparedTc(*_delay_words(t, ms, loss_pct))


@pytest.mark.core_on_module
def test_measure_queue_it_lived_with(cocktail):
    """A queue that stood before the idle period and still stands is no
    rise. A 20 ms, 20 Mbit/s path; after a 300-segment warm-up (the
    minimum RTT: about 20 ms) the bottleneck's one-way delay grows from
    10 to 120 ms (a standing queue someone else keeps, without its
    losses) and 300 more segments bring srtt to about 130 ms (premises,
    from tcp_info: srtt above queue_pct = 120 % of min_rtt, a window
    less than 3/4 of the restart's rate times srtt, so not its own queue,
    and the restart counted in measure_queued; an attempt whose premises
    do not hold is run again, until_premise). After 1.5 s idle, 100
    segments: every RTT sample of the check is about 130 ms, six times
    the minimum, but no more than the connection lived with, so the check
    does not leave on an RTT rise (verdict full or rate; check_rtt not
    counted), with no retransmission. The halved flight (less than cwnd
    before the idle period) keeps ssthresh = max(ssthresh, 3/4 cwnd), as
    Linux's slow-start restart does. With the one-way delay raised to
    240 ms during the idle period (RTT about 250 ms, 1.9 times srtt) the
    same check leaves on the RTT (verdict rtt, counted)."""
    params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="max",
           ssthresh_est=1, check_rtt_pct=125, check_rate_pct=75,
           queue_pct=120)

    def once(name, idle_delay_ms):
        with Topo(rtt=20, rate="20mbit", limit=170) as t, \
                delay_later(t, 120) as slow:
            def standing(srv, cli, mss):
                slow.run()
                traffic.send_and_time(srv, cli, 300 * mss, 300)
            return burst_after_idle(
                t, name, 300, 1.5, 100, between=standing,
                competitor=(lambda: bottleneck_delay(t, idle_delay_ms))
                if idle_delay_ms else None)

    def standing_queue(r):
        return r["before"]["min_rtt"] < 30000 and queue_stood(r)

    def halved(r):
        # the flight less than the window before the idle period: not
        # when ACKs the guest bunched made the train's rate above the link
        ev = r["restart"][-1][1] if r["restart"] else None
        return ev is not None and \
            int(ev["cwnd_after"]) < r["before"]["snd_cwnd"]

    def run(name, idle_delay_ms, more=lambda r: True):
        # A premise broken in every attempt fails: in the TCG guest the
        # window (and ssthresh) has been seen at the rate times the
        # standing RTT (own_queue()), likely from Hoe's estimate read
        # from ACKs the guest bunched.
        # One restart, the measured one: a slow guest that started a
        # send of the warm-up an RTO after the last restarted there too,
        # and that check's verdict would count in check_rtt.
        r, tries = until_premise(
            lambda: once(name, idle_delay_ms),
            lambda a: standing_queue(a) and len(a["restart"]) == 1 and
            not own_queue(a) and more(a))
        info = "%s; (cwnd before, srtt, min_rtt) per attempt %s" % (
            measure_info(r), [(a["before"]["snd_cwnd"],
                               a["before"]["rtt"],
                               a["before"]["min_rtt"]) for a in tries])
        assert standing_queue(r), \
            "premise: a standing queue before the idle period; " + info
        assert len(r["restart"]) == 1, \
            "premise: one restart, the measured one; " + info
        assert r["restart"][-1][1]["policy"] == "measure", info
        assert not own_queue(r), "premise: the window does not explain " \
            "the queue; " + info
        assert r["counters"]["measure_queued"] > 0, (r["counters"], info)
        t_restart = r["restart"][-1][0]
        verdicts = [e for ts, e in r["check"] if ts >= t_restart]
        assert verdicts, info
        return verdicts[0], r, info

    chk, r, info = run("measure_lived_with", 0, halved)
    assert chk["verdict"] in ("full", "rate"), info
    # the check saw the queue: without it the RTT verdict would have come
    assert int(chk["rtt_us"]) * 100 > int(chk["min_rtt_us"]) * 125, info
    assert r["counters"]["check_rtt"] == 0, (r["counters"], info)
    assert r["retrans"] == 0, info
    # the halved flight remembers the old window as a slow-start restart
    # does: ssthresh = max(ssthresh, 3/4 cwnd) of tcp_info before the idle
    # period, so a passed check slow-starts back to it
    b, ev = r["before"], r["restart"][-1][1]
    assert int(ev["cwnd_before"]) == b["snd_cwnd"], info
    assert halved(r), "premise: the flight was halved below the window; " + \
        info
    assert int(ev["ssthresh"]) == max(
        b["snd_ssthresh"], (b["snd_cwnd"] >> 1) + (b["snd_cwnd"] >> 2)), info

    chk, r, info = run("measure_lived_with_rise", 240)
    assert chk["verdict"] == "rtt", info
    assert r["counters"]["check_rtt"] > 0, (r["counters"], info)


def bdp_segs(rate, rtt_us, mss):
    """Segments of MSS bytes in RATE B/s over RTT_US, rounded up (the
    module's cp_bdp_segs())."""
    nbytes = -(-rate * rtt_us // 1000000)
    return -(-nbytes // mss)


def queue_stood(r):
    """Did srtt before the idle period stand above 120 % of min_rtt (the
    module's cp_queue_stood() at queue_pct=120, which these tests set)?
    From tcp_info before the pause."""
    b = r["before"]
    return b["rtt"] * 100 > b["min_rtt"] * 120


def check_saw_queue(chk):
    """Did the check event CHK's lowest RTT stand above 120 % of its
    minimum (cp_queue_stood() at queue_pct=120, as the module judges a
    passed check for probe_pct and quiet_pct)?"""
    return int(chk["rtt_us"]) * 100 > int(chk["min_rtt_us"]) * 120


def own_queue(r):
    """Did the window before the idle period explain the queue srtt
    showed (the module's cp_queue_own())?  The restart event's
    cwnd_before at least 3/4 of its pacing rate times tcp_info's srtt,
    in segments of the connection's MSS."""
    b, ev = r["before"], r["restart"][-1][1]
    bdp = bdp_segs(int(ev["pacing_rate"]), b["rtt"], b["snd_mss"])
    return int(ev["cwnd_before"]) * 4 >= bdp * 3


# test_measure_queue_halves: the cases run with shared_burst=1, with
# shared_rtt=1, and those with a restart before the measured one whose
# check finds the queue still standing (kept)
SHARED_BURST = ("others", "burst", "restarted")
SHARED_RTT = ("others", "srtt", "restarted")
KEPT = ("burst", "srtt", "restarted")


def restarts(case):
    """How many restarts test_measure_queue_halves's CASE makes on its
    connection: the measured one, and one before it in the KEPT cases."""
    return 2 if case in KEPT else 1


@pytest.mark.core_on_module
def test_measure_queue_halves(cocktail):
    """A queue others kept before the idle period halves measure's bet;
    the connection's own does not. A 100 ms, 10 Mbit/s path (BDP 86
    segments) with a deep 200-packet queue and queue_pct=120; 1.5 s idle,
    then 300 segments. The first flight on the wire is the segments sent
    before the first ACK; the BDP is the restart event's pacing rate
    times tcp_info's min_rtt.

    own: alone, with Hoe's estimate off, a 300-segment warm-up's last
    slow-start round (150 segments in flight) leaves a queue of about 60
    packets: srtt well above 120 % of min_rtt, and a window of about the
    rate times srtt (premises, from tcp_info and the restart event). The
    flight is not halved: at least 0.6 of the BDP + 2 (a full flight is
    paced over about one round trip, and a pacing timer the TCG guest
    fires late leaves its last segments after the first ACK), and
    measure_queued does not count it.

    The TCG guest's bunched ACKs have read the ACK-train rate at 1.9
    times the link's, and that flight of 175 segments left no faster
    than the link (92 before the first ACK, the link's BDP + 2 being
    91), so an unhalved flight is asserted in the kernel, the restart
    event's window within 2 of the BDP + 2, and on the wire as at least
    0.6 of that window or of the link's BDP + 2, whichever is less.

    others: with Hoe's estimate the warm-up's window stays near the BDP;
    then the bottleneck's one-way delay grows from 50 to 150 ms (a queue
    someone else keeps, without its losses) and 300 more segments bring
    srtt to about 200 ms, twice the window's worth (premises). The flight
    is half the BDP plus 2 (+-2), and measure_queued counts it. The path
    takes it: the check's verdict is full (a premise). The rate verdict
    is not what this test is about (test_measure_competitor_arrives
    checks it), so its threshold is 30 % here rather than 75 %: in the
    TCG guest the sender has been seen to take the flight's ACKs up to
    45 ms late while the capture showed them at the flight's rate, which
    over the halved flight's ~55 ms reads as 55 % of its rate. Its
    segments after the restart window (IW 10, which pace_burst sends at
    once) leave paced: at least 0.8 of an MSS's time at the restart
    event's pacing rate apart on average (the capture is before the
    bottleneck), and measure_burst does not count it. shared_burst=1 and
    shared_rtt=1 are set and change nothing: this is the connection's
    first restart, and no check has yet found the queue outliving an
    idle period (kept).

    burst: as others with shared_burst=1 alone and a restart before the
    measured one (30 segments after an idle period past the RTO), whose
    check finds the longer delay, the queue, still there: the same
    halved flight, sent at once: its segments after the restart window
    leave at most 0.25 of that time apart on average, and measure_burst
    counts it (measure_queued both restarts). The empty 200-packet
    buffer holds it.

    srtt: as burst with shared_rtt=1 instead: the flight's window (the
    restart event's cwnd_after) is the restart's rate times srtt (the
    event's srtt_us, about twice the minimum) plus 2 (+-2), not halved;
    at least 0.6 of it leaves before the first ACK (the flight meets the
    RTT it was sized over), measure_srtt counts it and measure_queued
    only the restart before.

    restarted: as burst with both parameters, the idle period 3.5 s, in
    which another connection from the client (other_restart()) restarts
    more than 0.2 s before this one (a premise): neither parameter acts,
    the queue possibly being the restarting connections' own; the flight
    is halved and paced as in others, measure_srtt and measure_burst
    count nothing, and measure_queued counts both of this connection's
    restarts (the other's too if it found a queue). Every restart is
    measured (measure counts all three).

    cut: as others with 2 % random loss at the bottleneck during the 300
    segments (none after them), which leaves ssthresh below the halved
    flight (premise, from the restart event). Held at the halved flight
    until the check passed, the window would then grow one segment a
    round trip; at the check's full verdict it grows back to the BDP and
    is paced out in the round after it: at least 0.8 of the BDP in flight
    at once (others too, where ssthresh allows slow start anyway).

    drained: as others with a one-way delay of 250 ms, then, once all is
    acked, back to 50 ms for 10 more segments (one round trip at the
    minimum RTT, about 5 ACKs, each taking 1/8 of srtt's distance to the
    minimum; after 20 segments srtt had come down to where the window
    explained it in all three attempts of a run): srtt is still well
    above 120 % of min_rtt and the window's worth (premises), but the
    last round's samples are at the minimum: the queue is gone, and the
    flight is not halved (as own), nothing counted."""
    def run(case):
        params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="max",
               ssthresh_est=int(case != "own"), check_rtt_pct=125,
               check_rate_pct=30, queue_pct=120,
               shared_burst=int(case in SHARED_BURST),
               shared_rtt=int(case in SHARED_RTT))
        other = {}
        with Topo(rtt=100, rate="10mbit", limit=200) as t, \
                delay_later(t, 250 if case == "drained" else 150,
                            2 if case == "cut" else 0) as slow, \
                delay_later(t, 50) as back:
            lst = traffic.Listener(t.server, t.server_addr,
                                   MEASURE_PORT + 1)
            def standing(srv, cli, mss):
                slow.run()
                traffic.send_and_time(srv, cli, 300 * mss, 300)
                if case == "cut":
                    bottleneck_delay(t, 150)
                if case == "drained":
                    # nothing in flight when the delay drops: a segment or
                    # ACK sent at the shorter delay would overtake those
                    # still queued at the longer one, and their ACKs would
                    # come back bunched, a train far above the link
                    traffic.wait_acked(srv, 60)
                    back.run()
                    traffic.send_and_time(srv, cli, 10 * mss, 300)
                if case in KEPT:
                    # a restart whose check finds the queue still there
                    rto = traffic.wait_acked(srv, 60)["rto"] / 1e6
                    idle_then_send(srv, cli, mss, 30,
                                   idle=max(1.5, rto + 0.3))
            try:
                r = burst_after_idle(
                    t, "measure_queue_" + case, 300,
                    3.5 if case == "restarted" else 1.5, 300,
                    between=None if case == "own" else standing,
                    competitor=(lambda: other_restart(t, lst, other))
                    if case == "restarted" else None)
            finally:
                for sk in other.get("socks", ()):
                    sk.close()
                lst.close()
            r["apart"] = r["wall"] - other["wall"] if other else None
        fl = flight_after(r["pkts"], t.server_addr, r["wall"],
                          dport=r["port"])
        r["most"] = max_in_flight(
            [p for p in r["burst_pkts"] if r["port"] in (p.sport, p.dport)],
            t.server_addr) / r["before"]["snd_mss"]
        rate = int(r["restart"][-1][1]["pacing_rate"]) if r["restart"] \
            else 0
        bdp = bdp_segs(rate, r["before"]["min_rtt"],
                       r["before"]["snd_mss"])
        # after the restart window, and an MSS's time at the rate
        r["spacing"] = mean_spacing(fl[10:]) if len(fl) > 11 else None
        r["ref"] = r["before"]["snd_mss"] / rate if rate else None
        return r, len(fl), bdp

    def premise(case):
        def holds(a):
            # one restart, the measured one (KEPT: two, the one before
            # it found the queue kept): a send of the warm-up that a
            # slow guest started an RTO after the last would restart
            # too, and its check's verdict would count a miss
            return queue_stood(a[0]) and \
                len(a[0]["restart"]) == restarts(case) and \
                len(a[0]["check"]) >= restarts(case) - 1 and \
                own_queue(a[0]) == (case == "own") and \
                (case != "cut" or int(a[0]["restart"][-1][1]["ssthresh"]) <
                 a[2] // 2 + 2) and \
                (case not in ("others", "burst", "srtt", "cut",
                              "restarted") or
                 [e["verdict"] for _, e in a[0]["check"]][-1:] ==
                 ["full"]) and \
                (case != "restarted" or (a[0]["apart"] > 0.2 and
                                         a[0]["counters"]["measure"] == 3))
        return holds

    def describe(tries):
        return "(srtt, min_rtt, flight, BDP, s after the other's " \
            "restart) per attempt %s; %s" % (
                [(a[0]["before"]["rtt"], a[0]["before"]["min_rtt"], a[1],
                  a[2], a[0]["apart"]) for a in tries],
                measure_info(tries[-1][0]))
    for case in ("own", "others", "burst", "srtt", "cut", "drained",
                 "restarted"):
        (r, n, bdp), tries = until_premise(lambda: run(case), premise(case))
        info = "%s: %s" % (case, describe(tries))
        assert premise(case)((r, n, bdp)), info
        assert bdp, info
        assert r["restart"][-1][1]["policy"] == "measure", info
        assert r["counters"]["measure_burst"] == int(case == "burst"), \
            (r["counters"], info)
        assert r["counters"]["measure_srtt"] == int(case == "srtt"), \
            (r["counters"], info)
        if case == "srtt":
            ev = r["restart"][-1][1]
            want = bdp_segs(int(ev["pacing_rate"]), int(ev["srtt_us"]),
                            r["before"]["snd_mss"]) + 2
            assert abs(int(ev["cwnd_after"]) - want) <= 2, \
                "%s; window %s, rate x srtt + 2 = %d" % (
                    info, ev["cwnd_after"], want)
            assert n >= 0.6 * want, "%s; want %d" % (info, want)
            # the restart before it, not this one
            assert r["counters"]["measure_queued"] == 1, info
        elif case in ("others", "burst", "cut", "restarted"):
            assert abs(n - (bdp // 2 + 2)) <= 2, info
            if case == "restarted":
                assert r["counters"]["measure_queued"] >= 2, info
            else:
                assert r["counters"]["measure_queued"] == \
                    restarts(case), info
            assert r["most"] >= 0.8 * bdp, \
                "%s; most in flight %.1f segments" % (info, r["most"])
        else:
            mss = r["before"]["snd_mss"]
            link = bdp_segs(1250000, r["before"]["min_rtt"], mss) + 2
            win = int(r["restart"][-1][1]["cwnd_after"])
            assert abs(win - (bdp + 2)) <= 2, "%s; window %d" % (info, win)
            assert n >= 0.6 * min(win, link), \
                "%s; window %d, link's BDP + 2 %d" % (info, win, link)
            assert r["counters"]["measure_queued"] == 0, info
        if case in ("others", "burst", "restarted"):
            assert r["spacing"] is not None, info
            info += "; after the first 10 %.3f ms apart, MSS at the rate " \
                "%.3f ms" % (r["spacing"] * 1e3, r["ref"] * 1e3)
            if case == "burst":
                assert r["spacing"] <= 0.25 * r["ref"], info
            else:
                assert r["spacing"] >= 0.8 * r["ref"], info


@pytest.mark.parametrize("room", [1, 0])
def test_measure_queue_room(cocktail, room):
    """The room a connection's own queue showed before the idle period. A
    100 ms, 10 Mbit/s path (BDP 86 segments) with a 200-packet queue;
    with Hoe's estimate off, the 1000-segment warm-up's slow start
    overflows the queue, and Reno's window after the loss, about half of
    BDP + queue, keeps a queue of its own (premises, from tcp_info and
    the restart event: srtt above 120 % of min_rtt, a window that
    explains it (own_queue()), one restart, the measured one). After 1.5 s
    idle, 100 segments. The reference is one MSS's time at the restart's rate
    (the restart event's pacing_rate, what the flight is sized and
    checked at). With queue_room=1 measure_room counts the restart and
    the flight's segments after the restart window (IW 10, which
    pace_burst sends at once) leave at most 0.75 of the reference apart
    on average until the first ACK (a room of about 50 segments over a
    flight of 88 paces it at about twice the rate; the capture is before
    the bottleneck); with queue_room=0 nothing counts and they leave at
    least 0.8 of it apart. Either way the buffer holds the faster flight:
    nothing is retransmitted, and the check does not leave on an RTT rise
    (its lowest RTT is the first ACK's, before the queue the flight
    builds) or a loss. It may leave on the ACKs' rate, which it compares
    with the rate estimate, not the faster sending: in the TCG guest that
    estimate has come out at 1.24 times the link's (bunched ACKs),
    whatever the room. An attempt whose check left on an RTT rise that
    the capture did not see (its lowest RTT of the check's ACKs within
    125 % of the minimum: the guest held the ACKs before TCP took them)
    runs again, as does one whose burst was retransmitted while the
    bottleneck dropped nothing: seen once on the BPF build (a
    loss verdict 5 ms into the check, 2 segments retransmitted, no drop),
    a segment lost or held outside the bottleneck in the guest, not the
    buffer this test is about; a build whose flight the buffer does not
    hold drops at the bottleneck and fails."""
    params(iw=10, restart="measure", cwv=1, pace_iw=0, pace_rate="max",
           ssthresh_est=0, check_rtt_pct=125, check_rate_pct=75,
           queue_pct=120, queue_room=room)

    def run():
        with Topo(rtt=100, rate="10mbit", limit=200) as t:
            r = burst_after_idle(t, "measure_queue_room%d" % room, 1000,
                                 1.5, 100)
        r["flight"] = flight_after(r["pkts"], t.server_addr, r["wall"],
                                   dport=r["port"])
        # the lowest RTT of the check's ACKs at the capture, us
        chk = r["check"][-1][1] if r["check"] else None
        r["wire_rtt"] = check_on_wire(
            r["pkts"], t.server_addr, r["port"], r["wall"],
            r["before"]["snd_mss"], int(chk["segs"]),
            int(chk["sent_rate"]))[2] if chk else None
        return r

    def held_rtt(r):
        # an RTT exit the wire does not show: the check's lowest RTT
        # above check_rtt_pct while the capture saw one within it
        chk = r["check"][-1][1] if r["check"] else None
        return chk is not None and chk["verdict"] == "rtt" and \
            r["wire_rtt"] * 100 <= int(chk["min_rtt_us"]) * 125

    def holds(r):
        return queue_stood(r) and len(r["restart"]) == 1 and \
            r["restart"][-1][1]["policy"] == "measure" and \
            int(r["restart"][-1][1]["pacing_rate"]) > 0 and own_queue(r) \
            and not (r["retrans"] and not r["drops"]) and not held_rtt(r)

    r, tries = until_premise(run, holds)
    info = "%s; (cwnd before, srtt, min_rtt, verdict, the check's " \
        "lowest RTT on the wire) per attempt %s" % (
            measure_info(r), [(a["before"]["snd_cwnd"], a["before"]["rtt"],
                               a["before"]["min_rtt"],
                               [e["verdict"] for _, e in a["check"]],
                               a["wire_rtt"]) for a in tries])
    assert holds(r), "premise: a queue of the connection's own before " \
        "the idle period, one measured restart, no retransmission " \
        "without a drop at the bottleneck, no RTT exit the capture did " \
        "not see; " + info
    fl = r["flight"]
    ref = r["before"]["snd_mss"] / int(r["restart"][-1][1]["pacing_rate"])
    assert len(fl) >= 30, info
    spacing = mean_spacing(fl[10:])
    info += "; flight %d segments, after the first 10 %.3f ms apart, " \
        "MSS at the rate %.3f ms" % (len(fl), spacing * 1e3, ref * 1e3)
    if room:
        assert r["counters"]["measure_room"] == 1, (r["counters"], info)
        assert spacing <= 0.75 * ref, info
    else:
        assert r["counters"]["measure_room"] == 0, (r["counters"], info)
        assert spacing >= 0.8 * ref, info
    assert [e["verdict"] for _, e in r["check"]][-1:] in (["full"],
                                                          ["rate"]), info
    assert r["retrans"] == 0, info



def ssthresh_run(t, lst, est):
    """One 300-segment transfer on a fresh connection with ssthresh_est=EST:
    tcp_info once everything is acked, with "counted" (the module's
    ssthresh_est counter over the run) and "drops" (the bottleneck's)."""
    params(ssthresh_est=est)
    c0 = counters()
    drops0 = bottleneck_drops(t)
    srv, cli = traffic.tcp_pair(lst, t.client, B.ca, timeout=300)
    try:
        mss = tcpinfo.info(srv)["snd_mss"]
        traffic.send_and_time(srv, cli, 300 * mss, 300)
        got = traffic.wait_acked(srv, 60)
    finally:
        srv.close()
        cli.close()
    got["counted"] = counters()["ssthresh_est"] - c0["ssthresh_est"]
    got["drops"] = bottleneck_drops(t) - drops0
    got["mss"] = mss
    return got


@pytest.mark.parametrize("rtt,rate", [(40, 10), (100, 10), (200, 5)])
@pytest.mark.core_on_module
def test_ssthresh_estimate(cocktail, rtt, rate):
    """Hoe's estimate: a new connection's ssthresh (tcp_info after a
    300-segment transfer on a path whose queue holds more than any
    overshoot, so nothing is lost) is within a factor of two of the
    path's BDP (rate in frames of MSS + 66 bytes, times the RTT), and
    ssthresh_est counts it; with ssthresh_est=0 ssthresh stays the
    kernel's infinity.

    The premise "nothing is lost" is checked at the bottleneck: it must
    drop nothing. A run that retransmitted although nothing was dropped
    (a probe or timeout while the guest stalled) is run again
    (until_premise); a retransmission in every one fails. So is a run
    whose estimate is out of range: the estimate reads the spacing of the
    first ACKs, which a stalled TCG guest delivers bunched (it read 2-5x
    the BDP at 200 ms in such runs); one wrong estimate in every attempt
    fails."""
    params(iw=10, restart="measure", ssthresh_est=1)

    def bdp_of(r):
        return rate * 1e6 / 8 * rtt / 1e3 / (r["mss"] + 66)
    with Topo(rtt=rtt, rate="%dmbit" % rate, limit=2000) as t:
        lst = traffic.Listener(t.server, t.server_addr, MEASURE_PORT)
        try:
            on, tries = until_premise(
                lambda: ssthresh_run(t, lst, 1),
                lambda r: r["drops"] > 0 or (
                    r["total_retrans"] == 0 and
                    bdp_of(r) / 2 <= r["snd_ssthresh"] <= 2 * bdp_of(r)))
            off = ssthresh_run(t, lst, 0)
        finally:
            params(ssthresh_est=1)
            lst.close()
    bdp = bdp_of(on)
    info = "BDP %.1f segments; on: ssthresh %d cwnd %d; off: ssthresh %d; " \
        "(retransmissions, drops, ssthresh) per attempt %s" % (
            bdp, on["snd_ssthresh"], on["snd_cwnd"], off["snd_ssthresh"],
            [(r["total_retrans"], r["drops"], r["snd_ssthresh"])
             for r in tries])
    assert on["drops"] == 0 and off["drops"] == 0, \
        "premise: the bottleneck dropped; " + info
    assert on["total_retrans"] == 0, info
    assert bdp / 2 <= on["snd_ssthresh"] <= 2 * bdp, info
    assert on["counted"] == 1 and off["counted"] == 0, info
    assert off["snd_ssthresh"] >= 0x7fffffff, info


# ---------------------------------------------------------- test 6: growth

GROWTH_PORT = 8220
CA_OPEN, CA_DISORDER, CA_RECOVERY = 0, 1, 3
INFINITE_SSTHRESH = 0x7fffffff


class Poll(threading.Thread):
    """tcp_info of SOCK every PERIOD seconds until stop(): .rows of
    (monotonic time, snd_cwnd, snd_ssthresh, ca_state, total_retrans)."""

    def __init__(self, sock, period=0.005):
        super().__init__(daemon=True)
        self.sock, self.period = sock, period
        self.rows = []
        self._halt = threading.Event()

    def run(self):
        while not self._halt.is_set():
            try:
                i = tcpinfo.info(self.sock)
            except OSError:
                return
            self.rows.append((time.monotonic(), i["snd_cwnd"],
                              i["snd_ssthresh"], i["ca_state"],
                              i["total_retrans"]))
            time.sleep(self.period)

    def stop(self):
        self._halt.set()
        self.join(10)


def cwnd_at(rows, t):
    """snd_cwnd of the last row at or before monotonic time T."""
    c = rows[0][1]
    for r in rows:
        if r[0] > t:
            break
        c = r[1]
    return c


def loss_reduction(rows, info):
    """The first loss response in Poll ROWS: (index of the first poll in
    Recovery, the cwnd of the last poll in Open or Disorder before it,
    the ssthresh of that first Recovery poll); asserts both polls exist
    (INFO: the failure's context)."""
    rec = [i for i, x in enumerate(rows) if x[3] == CA_RECOVERY]
    assert rec, "no poll in Recovery; %s" % info
    pre = [x for x in rows[:rec[0]] if x[3] in (CA_OPEN, CA_DISORDER)]
    assert pre, info
    return rec[0], pre[-1][1], rows[rec[0]][2]


def growth_run(link, segs, drop_index=None, warm=0, idle=0.0):
    """On LINK, a new connection from the client to a cocktail server
    (the build's parameters as set) sends SEGS segments while its
    tcp_info is polled (Poll); DROP_INDEX: the segment (counted from the
    first data byte) the server's egress drops once. With WARM, that many
    segments and IDLE seconds of silence come first. Returns a dict:
    rows, before (tcp_info after the warm-up), after (once all is
    acknowledged), t0 (monotonic time the SEGS write began), mss, port."""
    lst = traffic.Listener(link.srv, link.server_addr, GROWTH_PORT)
    r = {}
    try:
        srv, cli = traffic.tcp_pair(lst, link.cli, B.ca, timeout=300)
        try:
            mss = tcpinfo.info(srv)["snd_mss"]
            r["mss"], r["port"] = mss, cli.getsockname()[1]
            if drop_index is not None:
                link.drop_seq((tcp_repair_write_seq(srv) +
                               drop_index * mss) & 0xffffffff)
            if warm:
                traffic.send_and_time(srv, cli, warm * mss, 300)
                r["before"] = traffic.wait_acked(srv, 60)
                time.sleep(idle)
            poll = Poll(srv)
            poll.start()
            try:
                r["t0"], _ = traffic.send_and_time(srv, cli, segs * mss, 600)
                r["after"] = traffic.wait_acked(srv, 60)
            finally:
                poll.stop()
            r["rows"] = poll.rows
        finally:
            srv.close()
            cli.close()
    finally:
        lst.close()
    return r


@pytest.mark.parametrize("growth,beta", [("reno", 0.5), ("cubic", 0.7)])
def test_loss_response(cocktail, growth, beta):
    """One segment of a bulk transfer is dropped (100 ms, 10 Mbit/s, a
    10000-packet queue that never overflows: the drop is the only loss).
    In tcp_info, the ssthresh the loss sets (first poll in Recovery) is
    beta x the cwnd just before it (last poll in Open or Disorder): 0.7
    under cubic (RFC 9438's beta_cubic), 0.5 under reno, +-0.05. Under
    cubic the window then follows the cubic curve, seen in tcp_info over
    time from the end of the recovery: it grows fast in the first third of
    K = cbrt(W_max (1 - 0.7) / 0.4) s (W_max = the cwnd at the loss),
    little around K, where it is back near W_max (within 15%), and fast
    again past 1.5 K: concave, then convex."""
    params(growth=growth, cwv=1, iw=10, pace_iw=0, ssthresh_est=1)
    # cubic: long enough for 1.9 K after the recovery whatever the window
    # at the drop; slow start, if nothing ended it, holds about 750
    # segments by the 1500th (K 8.3 s, 13,000 segments at 10 Mbit/s)
    segs = 16500 if growth == "cubic" else 3000
    with Link("gl", rtt_ms=100, rate="10mbit") as link:
        r = growth_run(link, segs, drop_index=1500)
    rows = r["rows"]
    info = "after=%s rows=%d first=%s" % (
        {k: r["after"][k] for k in ("snd_cwnd", "snd_ssthresh",
                                    "total_retrans")}, len(rows), rows[:3])
    i0, w, ss = loss_reduction(rows, info)
    info = "cwnd before the loss %d, ssthresh %d (%.3f); %s" % (
        w, ss, ss / w, info)
    assert r["after"]["total_retrans"] >= 1, info
    assert abs(ss / w - beta) <= 0.05, info
    if growth != "cubic":
        return
    end = [x for x in rows[i0:] if x[3] == CA_OPEN]
    assert end, "recovery never ended; %s" % info
    t_rec = end[0][0]
    k = (w * 0.3 / 0.4) ** (1 / 3)
    assert rows[-1][0] >= t_rec + 1.9 * k, \
        "premise: the transfer ended %.1f s after the recovery, K = " \
        "%.2f s; %s" % (rows[-1][0] - t_rec, k, info)

    def grew(a, b):
        return cwnd_at(rows, t_rec + b * k) - cwnd_at(rows, t_rec + a * k)
    early, mid, late = grew(0, 1 / 3), grew(5 / 6, 7 / 6), grew(1.5, 11 / 6)
    at_k = cwnd_at(rows, t_rec + k)
    info = "K %.2f s, growth early %d, around K %d, past 1.5 K %d, " \
        "cwnd at K %d; %s" % (k, early, mid, late, at_k, info)
    assert early > mid + 2 and late > mid + 2, info
    assert abs(at_k - w) <= 0.15 * w, info


@pytest.mark.core_on_module
@pytest.mark.parametrize("growth,beta", [("reno", 0.5), ("cubic", 0.7)])
def test_measure_loss_exit(cocktail, growth, beta):
    """A measured restart's check that ends on a loss the ACKs showed no
    rate for answers as the growth does. On a 20 ms, 2 Mbit/s path (a
    queue that never overflows) the restart window, 10 segments, is above
    the path's BDP (3.5 segments): warm up (300 segments), idle 1.5 s,
    and the server's egress drops the flight's first segment once. The
    check event says `loss`; in tcp_info the ssthresh the loss sets
    (first poll in Recovery) is beta x the cwnd just before it (last poll
    in Open or Disorder): 0.5 under reno, 0.7 under cubic, +-0.05, where
    halving the flight's rate and taking its window at the minimum RTT
    would leave 2 segments. The queue rule is off (queue_pct=1000): the
    warm-up's own queue would otherwise halve the flight first."""
    params(growth=growth, iw=10, restart="measure", cwv=0, pace_iw=0,
           pace_rate="max", ssthresh_est=1, pace_burst=1, queue_pct=1000)
    warm = 300

    def run():
        with Link("lx", rtt_ms=20, rate="2mbit") as link, \
                B.events("cocktail_restart", "cocktail_check") as tr:
            r = growth_run(link, 40, drop_index=warm, warm=warm, idle=1.5)
        return (r, events(tr.lines, "cocktail_restart", r["port"]),
                events(tr.lines, "cocktail_check", r["port"]))

    def bdp_of(r, ev):
        """The restart's rate times its path RTT, in segments."""
        return int(ev["pacing_rate"]) * int(ev["path_rtt_us"]) / 1e6 / \
            r["mss"]

    def flight_above_bdp(a):
        # a guest whose timing raised the minimum RTT or the rate
        # estimate reads a BDP above the path's: run again
        r, restart = a[0], a[1]
        return bool(restart) and \
            int(restart[0][1]["cwnd_after"]) >= 10 > 2 * bdp_of(
                r, restart[0][1])

    (r, restart, check), tries = until_premise(run, flight_above_bdp)
    rows = r["rows"]
    info = "restart=%s check=%s after=%s rows=%d first=%s" % (
        [e for _, e in restart], [e for _, e in check],
        {k: r["after"][k] for k in ("snd_cwnd", "snd_ssthresh",
                                    "total_retrans")}, len(rows), rows[:3])
    assert [e["policy"] for _, e in restart] == ["measure"], info
    ev = restart[0][1]
    bdp = bdp_of(r, ev)
    assert int(ev["cwnd_after"]) >= 10 > 2 * bdp, \
        "premise: a flight of at least the restart window, above twice " \
        "the rate's BDP (%.1f), in %d attempts; %s" % (bdp, len(tries), info)
    assert check and check[0][1]["verdict"] == "loss", info
    assert int(check[0][1]["ack_rate"]) == 0, info
    _, w, ss = loss_reduction(rows, info)
    info = "cwnd before the loss %d, ssthresh %d (%.3f), the rate's BDP " \
        "%.1f; %s" % (w, ss, ss / w, bdp, info)
    assert r["after"]["total_retrans"] >= 1, info
    assert abs(ss / w - beta) <= 0.05, info


@pytest.mark.parametrize("growth", ["cubic", "reno"])
def test_hystart_ends_slow_start(cocktail, growth):
    """A new connection sends 4000 segments on a 100 ms, 10 Mbit/s path
    (BDP about 83 segments) whose 10000-packet queue never overflows, with
    ssthresh_est=0 (Hoe's estimate would end slow start first): slow start
    overshoots the BDP and the queue it builds raises the RTT. Under cubic
    HyStart++ sees the rise and ends slow start before any loss: tcp_info
    shows ssthresh leave the kernel's infinity with no retransmission
    (none on the wire either, in a capture at the client), at no less
    than half the BDP (it ended past the knee, not on noise), and the
    counters hystart_css and hystart_exit move. Under reno slow start
    never ends on that path (ssthresh stays infinite, nothing counted):
    the exit is HyStart++'s.

    The premise "never overflows" is checked at the server's qdisc: it
    must drop nothing. A run that retransmitted although nothing was
    dropped (a timer firing while the TCG guest stalled) is run again
    (until_premise)."""
    params(growth=growth, cwv=1, iw=10, pace_iw=0, ssthresh_est=0)
    pcap = OUT / ("%s_hystart_%s.pcap" % (B.name, growth))
    def run():
        with Link("gh", rtt_ms=100, rate="10mbit") as link:
            c0 = counters()
            with link.capture(pcap) as cap:
                r = growth_run(link, 4000)
            c1 = counters()
            drops = qdisc_drops(link.srv, link.server_dev)
        assert cap.dropped == 0, "tcpdump dropped packets"
        wire = retransmissions(read_pcap(pcap), link.server_addr)
        return r, c0, c1, wire, drops
    try:
        (r, c0, c1, wire, drops), runs = until_premise(
            run, lambda a: a[3] == 0 or a[4] > 0)
    finally:
        params(ssthresh_est=1)
    tries = [(a[3], a[4]) for a in runs]
    assert drops == 0, "premise: the queue dropped; (retransmissions, " \
        "drops) per attempt %s" % tries
    a = r["after"]
    moved = {k: c1[k] - c0[k] for k in ("hystart_css", "hystart_resume",
                                        "hystart_exit")}
    bdp = 10e6 / 8 * 0.1 / (r["mss"] + 66)
    info = "ssthresh %d cwnd %d retrans %d wire %d counters %s BDP %.0f; " \
        "(retransmissions, drops) per attempt %s" % (
            a["snd_ssthresh"], a["snd_cwnd"], a["total_retrans"], wire,
            moved, bdp, tries)
    assert a["total_retrans"] == 0 and wire == 0, info
    if growth == "reno":
        assert a["snd_ssthresh"] >= INFINITE_SSTHRESH, info
        assert moved == {"hystart_css": 0, "hystart_resume": 0,
                         "hystart_exit": 0}, info
        return
    assert a["snd_ssthresh"] < INFINITE_SSTHRESH, info
    assert a["snd_ssthresh"] >= bdp / 2, info
    first = [x for x in r["rows"] if x[2] < INFINITE_SSTHRESH]
    assert first and first[0][4] == 0, info
    assert moved["hystart_css"] >= 1 and moved["hystart_exit"] >= 1, info


def test_cubic_restart_epoch(cocktail):
    """growth=cubic, restart=keep, cwv=0 on a 100 ms, 10 Mbit/s path: a
    connection sends 1500 segments (slow start ends at Hoe's estimate or
    HyStart++'s exit: congestion avoidance, the premise, checked in
    tcp_info), is idle 6 s (far over the RTO), then sends 1500 more. Had
    CUBIC's epoch run through the idle period, t would include those 6 s:
    W_cubic(t) would be at least 0.4 x 6^3 = 86 segments above W_max, the
    target at its 1.5 cwnd clamp, and cwnd would grow by half each round
    trip. The restart ends the epoch instead: over the first three round
    trips of the new flight cwnd (tcp_info) grows by at most 10% + 4
    segments; the restart event shows keep. An attempt whose slow start
    had not ended (Hoe's estimate read from ACKs the TCG guest bunched
    can set ssthresh far above the path's BDP) runs again
    (until_premise)."""
    params(growth="cubic", restart="keep", cwv=0, iw=10, pace_iw=0,
           ssthresh_est=1)

    def run():
        with Link("ge", rtt_ms=100, rate="10mbit") as link:
            with B.events("cocktail_restart") as tr:
                r = growth_run(link, 1500, warm=1500, idle=6.0)
        r["events"] = restart_events(tr.lines, port=GROWTH_PORT,
                                     dport=r["port"])
        return r

    def in_ca(r):
        return r["before"]["snd_cwnd"] >= r["before"]["snd_ssthresh"]
    r, tries = until_premise(run, in_ca)
    b = r["before"]
    ev = r["events"]
    info = "before: cwnd %d ssthresh %d srtt %d us; events %s; " \
        "(cwnd, ssthresh) before the pause per attempt %s" % (
            b["snd_cwnd"], b["snd_ssthresh"], b["rtt"], ev,
            [(a["before"]["snd_cwnd"], a["before"]["snd_ssthresh"])
             for a in tries])
    assert in_ca(r), "premise: not in congestion avoidance before the " \
        "pause; %s" % info
    assert ev and ev[-1]["policy"] == "keep", info
    rtt = b["rtt"] / 1e6
    rows = [x for x in r["rows"] if x[0] <= r["t0"] + 3 * rtt]
    assert rows, info
    top = max(x[1] for x in rows)
    info = "cwnd over the first 3 RTTs up to %d; %s" % (top, info)
    assert top - b["snd_cwnd"] <= 0.1 * b["snd_cwnd"] + 4, info
    assert not any(x[4] > b["total_retrans"] for x in rows), info


# ------------------------------------- test 7: pace_iw, window validation

def test_pace_iw(topo):
    """pace_iw with iw=20 on a new connection (100 ms path): with
    pace_iw=1 the initial window's segments 11..20 leave spaced at
    IW x MSS / srtt of the handshake (mean spacing 0.5..2.5 x srtt / 20
    on the wire, srtt from tcp_info) and pace_iw counts it; the
    first 10 leave at once either way (the kernel never paces a
    connection's first 10 data segments). With pace_iw=0 segments 11..20
    leave back to back too: mean spacing below a quarter of that."""
    got = {}
    for on in (1, 0):
        params(iw=20, cwv=0, pace_iw=on)
        c0 = counters()
        res, fl, _ = case(topo, "pace_iw%d" % on, fresh=True, segments=30)
        got[on] = (res, fl, counters()["pace_iw"] - c0["pace_iw"])
    params(iw=10, pace_iw=0)
    for on, (res, fl, counted) in got.items():
        info = "pace_iw=%d counted=%d; %s" % (on, counted,
                                               describe(res, fl, []))
        assert len(fl) == 20, info
        # srtt after the exchange; the handshake's is what pacing used,
        # and on this quiet path both are the path's RTT
        ref = res["after"]["rtt"] / 1e6 / 20
        head, tail = mean_spacing(fl[:10]), mean_spacing(fl[10:])
        assert head < ref / 4, "first 10: %.3f ms; %s" % (head * 1e3, info)
        if on:
            assert 0.5 * ref <= tail <= 2.5 * ref, \
                "11..20: %.3f ms, srtt / 20 %.3f ms; %s" % (
                    tail * 1e3, ref * 1e3, info)
            # the client's connections each start with a paced window
            assert counted >= 1, info
        else:
            assert tail < ref / 4, "11..20: %.3f ms; %s" % (tail * 1e3,
                                                            info)
            assert counted == 0, info


CWV_PORT = 8230



def app_limited_run(cwv_port):
    """Grow the window with a 300-segment transfer on a fresh connection,
    then write one segment every 50 ms for 2.5 s, each read before the
    next. Returns tcp_info before and after the phase, the module's
    counters around it, and the longest gap between two writes (s)."""
    with Topo(rtt=50, rate="10mbit", limit=200) as t:
        t.sysctl(t.server, "net.ipv4.tcp_slow_start_after_idle", 0)
        with warm_pair(t, cwv_port) as (srv, cli, mss, before):
            c0 = counters()
            seg = b"a" * mss
            writes = []
            end = time.monotonic() + 2.5
            while time.monotonic() < end:
                # one segment always fits the send buffer: a plain write,
                # timed where it is made
                writes.append(time.monotonic())
                srv.sendall(seg)
                traffic.recv_exact(cli, mss, time.monotonic() + 60)
                time.sleep(0.05)
            after = traffic.wait_acked(srv, 60)
            c1 = counters()
    gap = max(b - a for a, b in zip(writes, writes[1:]))
    return before, after, c0, c1, gap


@pytest.mark.growth_on_module
@pytest.mark.parametrize("growth", GROWTHS)
@pytest.mark.parametrize("cwv,nvp_s", [(1, 300), (0, 300), (2, 300),
                                       (2, 1)],
                         ids=["cwv1", "cwv0", "cwv2", "cwv2-nvp1"])
@pytest.mark.core_on_module
def test_cwv_application_limited(cocktail, cwv, nvp_s, growth):
    """A connection grows its window with a 300-segment transfer (50 ms,
    10 Mbit/s, a 200-packet queue), then sends one segment every 50 ms for
    2.5 s: application-limited, never idle for an RTO (no restart), with
    tcp_slow_start_after_idle=0 (the kernel's own decay off). With cwv=1
    (RFC 2861) tcp_info's cwnd ends below 3/4 of the window before, at no
    less than IW (each decay keeps max(used, IW)), and cwv_decay counts;
    with cwv=0 nothing decays (cwnd at least the window before, nothing
    counted); with cwv=2 (RFC 7661) the sender is in a non-validated
    period (pipeACK far below cwnd / 2), where cwnd neither grows nor
    decays: with the default nvp_s (300 s) it ends exactly where it was,
    nothing counted; with nvp_s=1 the period ends once or twice in the
    2.5 s, and each end halves cwnd (never below IW) and raises ssthresh
    to 3/4 of the window before the first cut: tcp_info shows exactly
    that for the number of ends cwv_nvp_end counted.

    Under both growths: validation acts on the window whatever grew it,
    and neither growth may grow a window the application does not use.

    The premise "never idle for an RTO" is checked on the test's side:
    a run in which two writes were 3/4 of an RTO or more apart (the TCG
    guest stalled) is run again (until_premise); with
    every gap below that, a restart fails the test. So is a run whose
    transfer left a window under 40 segments (the path's BDP is 43; Hoe's
    estimate from ACKs the guest bunched has set ssthresh at 30), too
    small for a decay to show."""
    params(iw=10, restart="ssr", cwv=cwv, pace_iw=0, nvp_s=nvp_s,
           growth=growth)
    (before, after, c0, c1, gap), runs = until_premise(
        lambda: app_limited_run(CWV_PORT),
        lambda a: a[4] < 0.75 * a[0]["rto"] / 1e6 and
        a[0]["snd_cwnd"] >= 40)
    gaps = [(round(a[4] * 1e3), a[0]["snd_cwnd"]) for a in runs]
    decays = c1["cwv_decay"] - c0["cwv_decay"]
    ends = c1["cwv_nvp_end"] - c0["cwv_nvp_end"]
    info = ("cwnd before %d after %d, ssthresh before %d after %d, rto %d "
            "us, decays %d, nvp ends %d, restarts %d, (longest gap between "
            "writes in ms, cwnd before) per attempt %s" % (
                before["snd_cwnd"], after["snd_cwnd"],
                before["snd_ssthresh"], after["snd_ssthresh"],
                before["rto"], decays, ends, c1["ssr"] - c0["ssr"], gaps))
    assert gap < 0.75 * before["rto"] / 1e6, \
        "premise: the test stalled for an RTO in every attempt; " + info
    assert before["snd_cwnd"] >= 40, "premise: window too small; " + info
    assert c1["ssr"] == c0["ssr"], "premise: a restart happened; " + info
    if cwv == 1:
        assert 10 <= after["snd_cwnd"] < 0.75 * before["snd_cwnd"], info
        assert decays >= 1, info
        return
    assert decays == 0, info
    if nvp_s == 1:
        # the period starts at the first application-limited ACK and is
        # checked on every ACK (one each 50 ms): 2.5 s hold one or two ends
        assert 1 <= ends <= 2, info
        cwnd = before["snd_cwnd"]
        for _ in range(ends):
            cwnd = max(cwnd // 2, min(10, cwnd))
        assert after["snd_cwnd"] == cwnd, info
        cut = (before["snd_cwnd"] >> 1) + (before["snd_cwnd"] >> 2)
        assert after["snd_ssthresh"] == max(before["snd_ssthresh"], cut), \
            info
        return
    assert ends == 0, info
    if cwv == 2:
        assert after["snd_cwnd"] == before["snd_cwnd"], info
    else:
        assert after["snd_cwnd"] >= before["snd_cwnd"], info

"""The BPF build of cocktail (bpf/cocktail.bpf.c, registered as
cocktail_bpf by bpf/cocktail-bpf) against the module, on the wire.

Both builds are present at once: the module as "cocktail", the BPF
program as "cocktail_bpf". The initial-window and restart tests run each
case on both (the "build" parameter), on one topology with one server
per build (cocktail_lab.topo: server -- router -- client, 100 ms RTT,
10 Mbit/s), with the wire tests' own checks (test_cocktail_wire: the
first flight on the router's capture, the restart event against
tcp_info): what the module must do, the BPF build must do too. The
module's events come from its tracepoint, the BPF build's from its ring
buffer (cocktail-bpf events prints them in the tracepoint's format).

Then what only the BPF build has: its tool refuses a bad parameter and
changes nothing, a kernel without BTF or without struct_ops for TCP gets
one sentence (simulated with --btf: a missing file, and a BTF without the
kernel's struct_ops types), and unregistering while a connection uses it
behaves as the kernel does for BPF congestion controls: the connection
keeps it, new sockets cannot pick it.
"""
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from cocktail_lab.capture import (Capture, Trace, first_flight, flight_after,
                                  idle_before, ack_rate, median, pair_gaps,
                                  read_pcap)
from cocktail_lab.modparams import get_param, loaded, set_param
from cocktail_lab.topo import REPO, Topo
from conftest import KMOD, insmod, rmmod, sh
from test_cocktail_wire import (SSR_IW, WARM_BULK, check_event, check_paced,
                                check_ssr, describe, ref_gap, restart_events)

MOD = "tcp_cocktail"
TOOL = REPO / "bpf" / "cocktail-bpf"
OBJ = REPO / "build" / "bpf" / "cocktail.bpf.o"
OUT = REPO / "build" / "vm" / "cocktail_bpf"
PARAMS = ("iw", "restart", "auto_rtt_us", "queue_pct", "cwv", "pace_iw",
          "pace_rate")
# The module's parameters the BPF build does not have (restart=measure's).
MODULE_ONLY = ("ssthresh_est", "check_rtt_pct", "check_rate_pct")
TCP_CONGESTION = 13


def has_param(p):
    return (Path("/sys/module") / MOD / "parameters" / p).exists()


def tool(*args, check=True):
    r = subprocess.run([str(TOOL)] + [str(a) for a in args], text=True,
                       capture_output=True, timeout=60)
    if check:
        assert r.returncode == 0, (args, r.returncode, r.stdout, r.stderr)
    return r


class ModuleBuild:
    name, ca, port = "module", "cocktail", 8300

    def set(self, k, v):
        set_param(MOD, k, v)

    def get(self, k):
        return get_param(MOD, k)

    def counters(self):
        return {k: int(v) for k, v in (ln.split() for ln in
                                       get_param(MOD, "stats").splitlines())}

    def events(self):
        return Trace("tcp_cocktail/cocktail_restart")


class BpfEvents:
    """cocktail-bpf events for the duration of a with block; .lines holds
    what it printed."""

    def __enter__(self):
        self.p = subprocess.Popen([str(TOOL), "events"], text=True,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.lines = []
        return self

    def __exit__(self, *exc):
        time.sleep(0.3)     # the ring buffer is polled every 100 ms
        self.p.send_signal(signal.SIGTERM)
        out, err = self.p.communicate(timeout=30)
        assert self.p.returncode == 0, err
        self.lines = out.splitlines()


class BpfBuild:
    name, ca, port = "bpf", "cocktail_bpf", 8301

    def set(self, k, v):
        tool("set", "%s=%s" % (k, v))

    def get(self, k):
        return tool("get", k).stdout.strip()

    def counters(self):
        return {k: int(v) for k, v in (ln.split() for ln in
                                       tool("stats").stdout.splitlines())}

    def events(self):
        return BpfEvents()


BUILDS = {"module": ModuleBuild(), "bpf": BpfBuild()}


@pytest.fixture(scope="module")
def builds():
    ko = KMOD / (MOD + ".ko")
    if not ko.exists():
        pytest.fail("%s is not built (make modules)" % ko)
    if not TOOL.exists():
        pytest.fail("%s is not built (make bpf)" % TOOL)
    loaded_here = not loaded(MOD)
    if loaded_here:
        insmod(MOD)
    saved = {p: get_param(MOD, p) for p in PARAMS + MODULE_ONLY
             if p in PARAMS or has_param(p)}
    # The BPF build has no Hoe estimate of the initial ssthresh: compare
    # with the module without it too.
    if has_param("ssthresh_est"):
        set_param(MOD, "ssthresh_est", 0)
    tool("load")
    allowed = sh("sysctl -n net.ipv4.tcp_allowed_congestion_control"
                 ).stdout.split()
    sh("sysctl -qw net.ipv4.tcp_allowed_congestion_control='%s'" %
       " ".join(allowed + [c for c in ("cocktail", "cocktail_bpf")
                           if c not in allowed]))
    yield BUILDS
    for p, v in saved.items():
        set_param(MOD, p, v)
    sh("sysctl -qw net.ipv4.tcp_allowed_congestion_control='%s'" %
       " ".join(allowed))
    if tool("status", check=False).returncode == 0:
        tool("unload")
    if loaded_here:
        rmmod(MOD)


@pytest.fixture(scope="module")
def topo(builds):
    with Topo(rtt=100, rate="10mbit", limit=100) as t:
        for b in builds.values():
            t.ka_server(port=b.port, cc=b.ca)
        yield t


def params(b, **kw):
    for k, v in kw.items():
        b.set(k, v)
        assert b.get(k) == str(v), (b.name, k)


def case(t, b, name, **client):
    """test_cocktail_wire.case for build b: one client run against b's
    server with a capture at the router and b's restart events."""
    pcap = OUT / ("%s_%s.pcap" % (b.name, name))
    OUT.mkdir(parents=True, exist_ok=True)
    with b.events() as tr, \
            Capture(t.capture_ns, t.capture_dev, pcap,
                    "tcp port %d" % b.port) as cap:
        res = t.ka_client(port=b.port, **client)
    assert cap.dropped == 0, "tcpdump dropped packets"
    pkts = read_pcap(pcap)
    port = res["client_port"]
    if client.get("fresh"):
        fl = first_flight(pkts, t.server_addr, dport=port)
    else:
        fl = flight_after(pkts, t.server_addr, res["request_time"],
                          dport=port)
        res["wire"] = {
            "idle": idle_before(pkts, t.server_addr, fl) if fl else None,
            "rate": ack_rate(pkts, t.server_addr, fl[0].ts if fl else
                             res["request_time"],
                             t.opts["rtt"] / 1e3, dport=port)}
    assert fl, "no first flight found in %s" % pcap
    assert res["after"]["ca"] == b.ca, res["after"]["ca"]
    return res, fl, restart_events(tr.lines, port=b.port, dport=port)


# ------------------------------------------------------------ initial window

@pytest.mark.parametrize("iw,expect", [("2", 2), ("4", 4), ("10", 10),
                                       ("rfc3390", 3)])
@pytest.mark.parametrize("build", ["module", "bpf"])
def test_iw(topo, builds, build, iw, expect):
    b = builds[build]
    params(b, iw=iw, cwv=0, pace_iw=0)
    before = b.counters()
    res, fl, _ = case(topo, b, "iw_%s" % iw, fresh=True, segments=30)
    assert res["mss"] == 1448
    assert len(fl) == expect, describe(res, fl, [])
    assert b.counters()["iw"] > before["iw"]


# ------------------------------------------------------ restart after idle

@pytest.mark.parametrize("ssai", [0, 1])
@pytest.mark.parametrize("policy", ["ssr", "keep", "pace"])
@pytest.mark.parametrize("build", ["module", "bpf"])
def test_restart(topo, builds, build, policy, ssai):
    """test_cocktail_wire.test_restart on each build: ssr sends exactly
    min(IW, cwnd) with IW 4 (the kernel's own restart gives 10), keep the
    whole window unpaced, pace the window at the pre-idle delivery rate;
    the restart event agrees with tcp_info and the build's counter of the
    policy moved."""
    b = builds[build]
    params(b, iw=SSR_IW if policy == "ssr" else 10, restart=policy, cwv=0,
           pace_iw=0, pace_rate="delivery")
    topo.sysctl(topo.server, "net.ipv4.tcp_slow_start_after_idle", ssai)
    before = b.counters()
    res, fl, ev = case(topo, b, "restart_%s_ssai%d" % (policy, ssai),
                       segments=60, idle=2.0, **WARM_BULK)
    after = b.counters()
    info = "%s: %s" % (build, describe(res, fl, ev))
    assert res["warm_reached"] and res["before"]["snd_cwnd"] >= 30, info
    assert ev and ev[-1]["policy"] == policy, info
    assert ev[-1]["requested"] == policy, info
    assert after[policy] > before[policy], (before, after, info)
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
        assert after["pace_ended"] > before["pace_ended"], (before, after)


# ------------------------------------------------------- the tool, the kernel

def test_bad_parameter_refused(builds):
    """An invalid value is refused with one line naming the parameter and
    its range, as the module refuses it (EINVAL), and nothing changes: not
    the invalid one, not a valid one given with it."""
    b = builds["bpf"]
    params(b, iw=10, restart="auto")
    old = tool("get").stdout
    for bad in ("iw=0", "iw=65", "iw=abc", "restart=fast", "queue_pct=100",
                "auto_rtt_us=0", "cwv=3", "pace_iw=2", "pace_rate=min",
                "nosuch=1", "iw"):
        r = tool("set", "restart=pace", bad, check=False)
        assert r.returncode == 1, (bad, r)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("cocktail-bpf: "), \
            (bad, r.stderr)
        assert tool("get").stdout == old, bad
    # the module refuses the same values, and keeps its own
    for k, v in (("iw", "0"), ("iw", "65"), ("restart", "fast"),
                 ("queue_pct", "100"), ("cwv", "3")):
        was = get_param(MOD, k)
        r = sh("echo %s > /sys/module/%s/parameters/%s" % (v, MOD, k),
               check=False)
        assert r.returncode != 0 and get_param(MOD, k) == was, (k, v, r)
    # edge values are taken, as by the module
    params(b, iw="rfc3390", queue_pct=101, auto_rtt_us=10000000, cwv=2)
    params(b, iw=10, queue_pct=120, auto_rtt_us=100000, cwv=1)


def one_sentence(r):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r
    assert lines[0].startswith("cocktail-bpf: "), r
    return lines[0]


def test_load_errors_are_one_sentence(builds):
    """Without BTF (a BTF file that does not exist), without struct_ops for
    tcp_congestion_ops (a BTF that lacks the kernel's struct_ops types:
    the program's own), and loading twice: one line each, nothing
    registered or changed."""
    msg = one_sentence(tool("load", "--btf", "/nonexistent/vmlinux",
                            check=False))
    assert "no BTF" in msg and "CONFIG_DEBUG_INFO_BTF" in msg, msg
    msg = one_sentence(tool("load", "--btf", OBJ, check=False))
    assert "struct_ops" in msg, msg
    msg = one_sentence(tool("load", check=False))
    assert "already registered" in msg, msg
    assert tool("status").stdout.strip() == "cocktail_bpf registered"


# ------------------------------------------- the other policies, both builds

from test_cocktail_wire import DECAY_TRIES, QUEUE_LINKS, WARM  # noqa: E402
from cocktail_lab.capture import mean_spacing  # noqa: E402


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("build", ["module", "bpf"])
def test_restart_decay(topo, builds, build, k):
    """test_cocktail_wire.test_restart_decay (ssai=0) on each build: an
    idle of k RTOs (k from the wire and tcpi_rto; an idle within 10% of a
    boundary is tried again) gives a first flight of max(IW, cwnd >> k)."""
    b = builds[build]
    params(b, iw=10, restart="decay", cwv=0, pace_iw=0)
    topo.sysctl(topo.server, "net.ipv4.tcp_slow_start_after_idle", 0)
    for _ in range(DECAY_TRIES):
        res, fl, ev = case(topo, b, "decay_k%d" % k, segments=60,
                           idle_rto=k + 0.5, **WARM)
        info = "%s: %s" % (build, describe(res, fl, ev))
        idle = res["wire"]["idle"]
        assert idle is not None, info
        ratio = idle / (res["before"]["rto"] / 1e6)
        near = abs(ratio - round(ratio)) < 0.1
        if not near and int(ratio) == k:
            break
    assert not near, info
    cwnd = res["before"]["snd_cwnd"]
    assert res["warm_reached"] and cwnd >= 30, info
    assert ev and ev[-1]["policy"] == "decay", info
    expect = min(60, max(10, cwnd >> int(ratio)))
    assert len(fl) == expect, "expected %d (k=%d); %s" % (
        expect, int(ratio), info)


@pytest.mark.parametrize("rtt,policy", [(20, "ssr"), (200, "pace")])
@pytest.mark.parametrize("build", ["module", "bpf"])
def test_auto(builds, build, rtt, policy):
    """restart=auto with the default auto_rtt_us (100 ms): ssr on a 20 ms
    path, pace on a 200 ms one, on each build."""
    b = builds[build]
    params(b, iw=SSR_IW if policy == "ssr" else 10, restart="auto", cwv=0,
           pace_iw=0, pace_rate="delivery", auto_rtt_us=100000)
    with Topo(rtt=rtt, rate="10mbit", limit=100) as t:
        t.ka_server(port=b.port, cc=b.ca)
        res, fl, ev = case(t, b, "auto_%dms" % rtt, segments=60, idle=2.0,
                           **WARM_BULK)
    info = "%s: %s" % (build, describe(res, fl, ev))
    assert res["before"]["snd_cwnd"] >= 30, info
    assert ev and ev[-1]["requested"] == "auto", info
    assert ev[-1]["policy"] == policy, info
    if policy == "ssr":
        check_ssr(res, fl, info)
    else:
        check_paced(res, fl, ev, info)


@pytest.mark.parametrize("link", ["quiet", "queued"])
@pytest.mark.parametrize("build", ["module", "bpf"])
def test_queue(builds, build, link):
    """restart=queue (queue_pct=120) on each build: pace on a path without
    a standing queue before the pause, ssr on one with (the premise from
    tcp_info is checked first); auto_rtt_us is set so that auto would
    choose the other policy."""
    b = builds[build]
    topo_opts, warm, policy = QUEUE_LINKS[link]
    params(b, iw=SSR_IW if policy == "ssr" else 10, restart="queue",
           queue_pct=120, cwv=0, pace_iw=0, pace_rate="max",
           auto_rtt_us=10000000 if policy == "pace" else 1)
    try:
        with Topo(**topo_opts) as t:
            t.ka_server(port=b.port, cc=b.ca)
            before = b.counters()
            res, fl, ev = case(t, b, "queue_%s" % link, segments=60,
                               idle=2.0, **warm)
            after = b.counters()
    finally:
        params(b, auto_rtt_us=100000)
    info = "%s: %s" % (build, describe(res, fl, ev))
    srtt, min_rtt = res["before"]["rtt"], max(1, res["before"]["min_rtt"])
    assert (srtt * 100 > min_rtt * 120) == (policy == "ssr"), \
        "premise: srtt / min RTT = %.2f; %s" % (srtt / min_rtt, info)
    assert ev and ev[-1]["requested"] == "queue", info
    assert ev[-1]["policy"] == policy, info
    check_event(res, ev, info)
    assert after["queue_" + policy] > before["queue_" + policy], info
    if policy == "ssr":
        check_ssr(res, fl, info)
        return
    rate = int(ev[-1]["pacing_rate"])
    assert rate > 0 and len(fl) >= 30, info
    ref = res["before"]["snd_mss"] / rate
    assert 0.5 * ref <= mean_spacing(fl) <= 2.5 * ref, info


@pytest.mark.parametrize("mode", ["window", "max"])
@pytest.mark.parametrize("build", ["module", "bpf"])
def test_pace_rate(topo, builds, build, mode):
    """pace_rate=window paces at exactly cwnd * mss / srtt of the event's
    own inputs, max at no less; the flight leaves at the rate the event
    reports (mean spacing 0.5..2.5 x MSS / rate), on each build."""
    b = builds[build]
    params(b, iw=10, restart="pace", cwv=0, pace_iw=0, pace_rate=mode)
    topo.sysctl(topo.server, "net.ipv4.tcp_slow_start_after_idle", 0)
    res, fl, ev = case(topo, b, "pace_rate_%s" % mode, segments=60,
                       idle=2.0, **WARM)
    info = "%s: %s" % (build, describe(res, fl, ev))
    assert ev and ev[-1]["policy"] == "pace", info
    e = ev[-1]
    check_event(res, ev, info)
    rate = int(e["pacing_rate"])
    mss = res["before"]["snd_mss"]
    window = int(e["cwnd_before"]) * mss * 1000000 // int(e["srtt_us"])
    if mode == "window":
        assert abs(rate - window) <= 1, (rate, window, info)
    else:
        assert rate >= window - 1, (rate, window, info)
    assert len(fl) >= 30, info
    assert 0.5 * mss / rate <= mean_spacing(fl) <= 2.5 * mss / rate, info


@pytest.mark.parametrize("ssai", [0, 1])
@pytest.mark.parametrize("build", ["module", "bpf"])
def test_no_restart_below_rto(topo, builds, build, ssai):
    """A pause below the RTO (route rto_min 1 s) changes nothing with
    restart=ssr: no event, the whole window at once; with ssai=1 this is
    the kernel's own restart being undone (counter short_idle)."""
    b = builds[build]
    params(b, iw=10, restart="ssr", cwv=0, pace_iw=0)
    topo.sysctl(topo.server, "net.ipv4.tcp_slow_start_after_idle", ssai)
    gw = topo.pairs[0]["server_gw"]
    topo.run(topo.server, ["ip", "route", "replace", "default", "via", gw,
                           "dev", "to-r", "rto_min", "1000ms"])
    try:
        for _ in range(DECAY_TRIES):
            res, fl, ev = case(topo, b, "short_ssai%d" % ssai, segments=60,
                               idle_rto=0.5, **WARM)
            idle = res["wire"]["idle"]
            if idle is not None and idle < 0.9 * res["before"]["rto"] / 1e6:
                break
    finally:
        topo.run(topo.server, ["ip", "route", "replace", "default", "via",
                               gw, "dev", "to-r"])
    info = "%s: %s" % (build, describe(res, fl, ev))
    assert idle is not None and idle < 0.9 * res["before"]["rto"] / 1e6, info
    assert res["before"]["snd_cwnd"] >= 30, info
    assert ev == [], info
    assert len(fl) >= min(60, res["before"]["snd_cwnd"]) - 1, info


def test_parameters_as_the_module(builds):
    """Every value the module's suite refuses (test_cocktail_module.INVALID)
    the tool refuses, changing nothing; every value it takes (VALID) reads
    back as the module shows it."""
    from test_cocktail_module import INVALID, VALID
    b = builds["bpf"]
    before = tool("get").stdout
    # what only the module has: refused with a sentence saying so
    module_only = [("restart", "measure")] + [
        (n, vs[0][0]) for n, vs in VALID.items() if n not in PARAMS]
    for name, v in module_only:
        r = tool("set", "%s=%s" % (name, v), check=False)
        assert r.returncode == 1 and "module" in r.stderr and \
            len(r.stderr.splitlines()) == 1, (name, v, r)
        assert tool("get").stdout == before, (name, v)
    for name, values in INVALID.items():
        if name not in PARAMS:
            continue
        for v in values:
            r = tool("set", "%s=%s" % (name, v), check=False)
            assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, \
                (name, v, r)
            assert tool("get").stdout == before, (name, v)
    for name, pairs in VALID.items():
        for v, shown in pairs:
            if name not in PARAMS or (name, v) in module_only:
                continue
            b.set(name, v)
            assert b.get(name) == shown, (name, v)
    params(b, iw=10, restart="auto", auto_rtt_us=100000, queue_pct=120,
           cwv=1, pace_iw=0, pace_rate="max")


@pytest.mark.parametrize("build", ["module", "bpf"])
def test_iw_route_initcwnd_wins(topo, builds, build):
    """A route's initcwnd (6) beats iw (10): the BPF build reads the
    route's metric as the module does."""
    b = builds[build]
    params(b, iw=10, cwv=0, pace_iw=0)
    gw = topo.pairs[0]["server_gw"]
    topo.run(topo.server, ["ip", "route", "replace", "default", "via", gw,
                           "dev", "to-r", "initcwnd", "6"])
    try:
        before = b.counters()
        res, fl, _ = case(topo, b, "iw_route6", fresh=True, segments=30)
        after = b.counters()
    finally:
        topo.run(topo.server, ["ip", "route", "replace", "default", "via",
                               gw, "dev", "to-r"])
    assert len(fl) == 6, describe(res, fl, [])
    assert after["iw_route"] > before["iw_route"], (before, after)


# Last in the file: it unregisters and registers cocktail_bpf again, and
# the servers of the shared topology selected the instance before it.

def connect_pair(listener):
    """Connect to listener from a fresh socket and return it with the
    accepted one."""
    c = socket.socket()
    c.connect(listener.getsockname())
    a, _ = listener.accept()
    return c, a


def test_unload_with_live_connection(builds):
    """Unregistering while a connection uses cocktail_bpf: the connection
    keeps it (tcp_info still names it, data still flows), a new socket can
    no longer select it (ENOENT, as for any unregistered algorithm), and
    registering again works while the old connection is still open. A
    listener that selected it before keeps the old instance: connections
    it accepts after the reload run the old program, so the new
    instance's counters (here: iw applied) do not see them, while a new
    listener's connections do."""
    srv = socket.socket()
    srv.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"cocktail_bpf")
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    c = socket.socket()
    c.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"cocktail_bpf")
    c.connect(srv.getsockname())
    a, _ = srv.accept()
    srv2 = None
    try:
        tool("unload")
        assert tool("status", check=False).returncode == 3
        ca = c.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16)
        assert ca.rstrip(b"\0") == b"cocktail_bpf", ca
        c.sendall(b"x" * 100000)
        got = 0
        while got < 100000:
            got += len(a.recv(65536))
        n = socket.socket()
        with pytest.raises(OSError) as e:
            n.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"cocktail_bpf")
        n.close()
        assert e.value.errno == 2, e.value
        tool("load")
        c.sendall(b"y" * 1000)
        assert a.recv(1000)
        # the old listener: its new connections run the old instance
        iw0 = builds["bpf"].counters()["iw"]
        c1, a1 = connect_pair(srv)
        ca = a1.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16)
        assert ca.rstrip(b"\0") == b"cocktail_bpf", ca
        assert builds["bpf"].counters()["iw"] == iw0
        c1.close()
        a1.close()
        # a listener made after the reload: the new instance
        srv2 = socket.socket()
        srv2.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"cocktail_bpf")
        srv2.bind(("127.0.0.1", 0))
        srv2.listen(8)
        c2, a2 = connect_pair(srv2)
        assert builds["bpf"].counters()["iw"] > iw0
        c2.close()
        a2.close()
    finally:
        c.close()
        a.close()
        srv.close()
        if srv2:
            srv2.close()
        if tool("status", check=False).returncode != 0:
            tool("load")

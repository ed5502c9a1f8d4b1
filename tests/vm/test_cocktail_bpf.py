"""What only the BPF build of cocktail has (bpf/cocktail.bpf.c,
registered as cocktail_bpf by bpf/cocktail-bpf): its tool refuses a bad
parameter and changes nothing, takes every value the module takes and
shows it as the module does, a kernel without BTF or without struct_ops
for TCP gets one sentence (simulated with --btf: a missing file, and a
BTF without the kernel's struct_ops types), and unregistering while a
connection uses it behaves as the kernel does for BPF congestion
controls: the connection keeps it, new sockets cannot pick it.

Its behaviour on the wire is test_cocktail_wire's: every test there runs
against both builds.
"""
import re
import socket

import pytest

from cocktail_builds import BUILDS, MOD, PARAMS, TOOL, tool
from cocktail_lab.modparams import get_param
from cocktail_lab.topo import REPO
from conftest import sh

OBJ = REPO / "build" / "bpf" / "cocktail.bpf.o"
TCP_CONGESTION = 13


@pytest.fixture(scope="module")
def builds():
    """Both builds up at once (the module's refusals are compared)."""
    m = BUILDS["module"].up()
    b = BUILDS["bpf"].up()
    yield BUILDS
    b.down()
    m.down()


def test_bad_parameter_refused(builds):
    """An invalid value is refused with one line naming the parameter and
    its range, as the module refuses it (EINVAL), and nothing changes: not
    the invalid one, not a valid one given with it."""
    b = builds["bpf"]
    b.params(iw=10, restart="auto")
    old = tool("get").stdout
    for bad in ("iw=0", "iw=65", "iw=abc", "restart=fast", "queue_pct=100",
                "auto_rtt_us=0", "cwv=3", "pace_iw=2", "pace_burst=2",
                "pace_rate=min",
                "growth=bic", "ssthresh_est=2", "check_rtt_pct=100",
                "check_rate_pct=100", "check_rate_miss=2", "probe_pct=99",
                "wnd_cap=2", "queue_room=2", "shared_burst=2",
                "shared_rtt=2", "pace_floor=2", "ssr_floor=2",
                "quiet_pct=201",
                "ensemble=2",
                "nosuch=1", "iw"):
        r = tool("set", "restart=pace", bad, check=False)
        assert r.returncode == 1, (bad, r)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("cocktail-bpf: "), \
            (bad, r.stderr)
        assert tool("get").stdout == old, bad
    # the module refuses the same values, and keeps its own
    for k, v in (("iw", "0"), ("iw", "65"), ("restart", "fast"),
                 ("queue_pct", "100"), ("cwv", "3"), ("growth", "bic"),
                 ("check_rate_pct", "100")):
        was = get_param(MOD, k)
        r = sh("echo %s > /sys/module/%s/parameters/%s" % (v, MOD, k),
               check=False)
        assert r.returncode != 0 and get_param(MOD, k) == was, (k, v, r)
    # edge values are taken, as by the module
    b.params(iw="rfc3390", queue_pct=101, auto_rtt_us=10000000, cwv=2,
             check_rtt_pct=1000, check_rate_pct=1)
    b.params(iw=10, queue_pct=120, auto_rtt_us=100000, cwv=1,
             check_rtt_pct=125, check_rate_pct=75)


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


# the programs of the struct_ops map, one per callback it fills
PROGRAMS = {"cocktail_init", "cocktail_release", "cocktail_ssthresh",
            "cocktail_undo_cwnd", "cocktail_cong_avoid", "cocktail_pkts_acked",
            "cocktail_in_ack_event", "cocktail_cwnd_event",
            "cocktail_min_tso_segs"}
# the share of the verifier's limit a program may use: the restart path
# (cwnd_event) is the longest, and the verifiers of later kernels explore
# more states of the same code than 6.1's (6.12 several times as many),
# so what one kernel takes close to the limit another refuses
VERIFIER_HEADROOM = 0.25


def test_verifier_headroom(builds):
    """load --verifier-stats prints, for every program, the instructions
    the kernel's verifier processed against its limit, and registers the
    algorithm; on this kernel every program stays within
    VERIFIER_HEADROOM of the limit."""
    tool("unload")
    try:
        r = tool("load", "--verifier-stats")
    finally:
        if tool("status", check=False).returncode != 0:
            tool("load")
    assert tool("status").stdout.strip() == "cocktail_bpf registered"
    print(r.stdout)
    seen = {}
    for line in r.stdout.splitlines():
        m = re.match(r"(\w+): processed (\d+) insns \(limit (\d+)\)", line)
        if m:
            seen[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    assert set(seen) == PROGRAMS, r.stdout
    kernel = sh("uname -r").stdout.strip()
    for name, (done, limit) in seen.items():
        assert 0 < done <= VERIFIER_HEADROOM * limit, \
            "%s on %s: %d of %d; %s" % (name, kernel, done, limit, r.stdout)


def test_parameters_as_the_module(builds):
    """Every value the module's suite refuses (test_cocktail_module.INVALID)
    the tool refuses, changing nothing; every value it takes (VALID) reads
    back as the module shows it."""
    from test_cocktail_module import DEFAULTS, INVALID, VALID
    b = builds["bpf"]
    assert sorted(INVALID) == sorted(PARAMS) == sorted(VALID)
    before = tool("get").stdout
    for name, values in INVALID.items():
        for v in values:
            r = tool("set", "%s=%s" % (name, v), check=False)
            assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, \
                (name, v, r)
            assert tool("get").stdout == before, (name, v)
    for name, pairs in VALID.items():
        for v, shown in pairs:
            b.set(name, v)
            assert b.get(name) == shown, (name, v)
    b.params(**DEFAULTS)


def test_stats_as_the_module(builds):
    """cocktail-bpf stats prints the module's counters: the same names in
    the same order (one list, kmod/cocktail_state.h)."""
    mod = [ln.split()[0] for ln in get_param(MOD, "stats").splitlines()]
    bpf = [ln.split()[0] for ln in tool("stats").stdout.splitlines()]
    assert bpf == mod and "check_full" in bpf and "hystart_exit" in bpf


# Last in the file: it unregisters and registers cocktail_bpf again.

def connect_pair(listener):
    """Connect to listener from a fresh socket and return it with the
    accepted one."""
    c = socket.socket()
    c.connect(listener.getsockname())
    a, _ = listener.accept()
    return c, a


def carries_on_bpf(sock, sender, receiver, fill):
    """SOCK's algorithm is cocktail_bpf, and 100,000 bytes of FILL written
    on SENDER arrive on RECEIVER."""
    ca = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16)
    assert ca.rstrip(b"\0") == b"cocktail_bpf", ca
    sender.sendall(fill * 100000)
    got = 0
    while got < 100000:
        got += len(receiver.recv(65536))


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
        carries_on_bpf(c, c, a, b"x")
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


def config_hz():
    """CONFIG_HZ as the running kernel's config file says it, or None."""
    import gzip
    import os
    for path, opener in (("/boot/config-%s" % os.uname().release, open),
                         ("/proc/config.gz", gzip.open)):
        try:
            with opener(path, "rt") as f:
                for ln in f:
                    if ln.startswith("CONFIG_HZ="):
                        return int(ln.split("=", 1)[1])
        except OSError:
            continue
    return None


def test_load_without_kernel_config(builds):
    """A kernel whose config nobody can read (no /boot/config-RELEASE, no
    /proc/config.gz: a custom kernel without CONFIG_IKCONFIG_PROC), where
    libbpf alone refuses the object's CONFIG_HZ extern with EINVAL: the
    tool counts the jiffies of /proc/timer_list instead, says so with -v,
    finds the value the config file has, and registers the algorithm,
    which then runs connections. Simulated in a mount namespace of its
    own: a tmpfs over /boot, /dev/null over /proc/config.gz."""
    hz = config_hz()
    assert hz in (100, 250, 300, 1000), "the test needs the config: %s" % hz
    hide = ("mount -t tmpfs none /boot && "
            "if [ -e /proc/config.gz ]; then "
            "mount --bind /dev/null /proc/config.gz; fi && ")
    tool("unload")
    try:
        r = sh("unshare -m --propagation private sh -c '%s"
               "ls /boot | wc -l && exec %s -v load'" % (hide, TOOL),
               check=False)
        assert r.returncode == 0, r
        assert r.stdout.splitlines()[0].strip() == "0", r
        assert "CONFIG_HZ=%d, from the jiffies in /proc/timer_list" % hz \
            in r.stderr, r
        assert tool("status").stdout.strip() == "cocktail_bpf registered"
        # the algorithm registered so runs connections
        srv = socket.socket()
        srv.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"cocktail_bpf")
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        c, a = connect_pair(srv)
        carries_on_bpf(a, c, a, b"z")
        for s in (c, a, srv):
            s.close()
        # with the config readable the tool takes the value from there
        tool("unload")
        r = tool("-v", "load")
        assert "CONFIG_HZ=%d, from /" % hz in r.stderr, r
    finally:
        if tool("status", check=False).returncode != 0:
            tool("load")

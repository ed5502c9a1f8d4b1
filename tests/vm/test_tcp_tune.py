"""scripts/tcp-tune against the real kernel, inside namespaces this file
creates (run in the VM: dev/vm-run tests/vm/run tests/vm/test_tcp_tune.py).

Every test compares the full state before and after: `ip -j route show
table all` and `ip route show table all` (text: the only place lock flags
show), IPv4 and IPv6, the namespace's TCP sysctls, the host-global ones
and the loaded modules.
"""
import functools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cocktail_lab import modparams, topo
import conftest
from conftest import KMOD, REPO, module_loaded

TOOL = str(REPO / "scripts" / "tcp-tune")
FAULT = str(Path(__file__).resolve().parent / "tcp_tune_fault.py")
KO = KMOD / "tcp_cocktail.ko"
NS, PEER = "tt-a", "tt-b"

NS_KEYS = ["net.ipv4.tcp_congestion_control",
           "net.ipv4.tcp_slow_start_after_idle",
           "net.ipv4.tcp_no_metrics_save",
           "net.ipv4.tcp_notsent_lowat",
           "net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem",
           "net.ipv4.tcp_allowed_congestion_control",
           "net.ipv4.tcp_available_congestion_control"]
GLOBAL_KEYS = ["net.ipv4.tcp_congestion_control",
               "net.ipv4.tcp_allowed_congestion_control",
               "net.ipv4.tcp_available_congestion_control",
               "net.core.default_qdisc"]

# The namespace's routes: many attributes, so that "keeps every other
# attribute" is checked on real routes. The two namespaces and their veth
# come from the lab (make_namespaces); this is the rest of the fixture, as
# `ip -batch` input (one process per family: each `ip` costs a fraction of
# a second in the test VM), IPv4 first (it makes d0).
ROUTES4 = """
link add d0 type dummy
link set d0 up
addr add 198.18.11.1/24 dev d0
route add default via 198.18.10.2 dev a0 proto static metric 100 \
    src 198.18.10.1 mtu lock 1400 advmss 1360 features ecn hoplimit 64 initrwnd 20
route add default via 198.18.10.2 dev a0 metric 200 window 30000
route add 198.19.0.0/16 via 198.18.10.2 dev a0 proto bird metric 50 \
    rto_min 50ms congctl lock reno window 65535
route add 198.19.1.0/24 dev d0 scope link initcwnd 8
route add 198.19.2.0/24 proto static \
    nexthop via 198.18.10.2 dev a0 weight 1 nexthop via 198.18.11.2 dev d0 weight 3
route add 198.19.3.0/24 via 198.18.99.9 dev a0 onlink
route add blackhole 198.19.4.0/24
route add 198.19.8.0/24 via 198.18.10.2 dev a0 table 100 initcwnd 2
route add default via 198.18.10.2 dev a0 table 100
"""
ROUTES6 = """
addr add fd00:cc:11::1/64 dev d0 nodad
route add default via fd00:cc:10::2 dev a0 metric 1024 pref high \
    mtu 1400 congctl lock cubic
route add fd00:cc:20::/48 via fd00:cc:10::2 dev a0 proto static \
    metric 10 src fd00:cc:10::1 advmss 1300
route add fd00:cc:21::/48 proto static \
    nexthop via fd00:cc:10::2 dev a0 weight 2 nexthop via fd00:cc:11::2 dev d0 weight 1
"""


def make_namespaces(ns, peer):
    """NS (the one tcp-tune acts in) and PEER joined by veth a0 -- b0
    (198.18.10.1/.2, fd00:cc:10::1/::2; no duplicate address detection, so
    link-local addresses and their local routes appear as soon as the links
    have carrier: settle() waits for that), then ROUTES4 and ROUTES6 in NS."""
    made = []
    for n in (ns, peer):
        topo.add_ns(n, made)
    topo.veth(ns, "a0", peer, "b0")
    topo.addr(ns, "a0", "198.18.10.1/24", "fd00:cc:10::1/64")
    topo.addr(peer, "b0", "198.18.10.2/24", "fd00:cc:10::2/64")
    for fam, text in (("-4", ROUTES4), ("-6", ROUTES6)):
        p = subprocess.run(["ip", "-n", ns, fam, "-batch", "-"], input=text,
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr


# every command here is one program and its words: no shell (a test takes
# a dozen snapshots)
sh = functools.partial(conftest.sh, shell=False)


def tool(*args, ns=NS, state=None, check=None, env=None, fault=None):
    """Run tcp-tune; fault=(N, shell command): through tcp_tune_fault.py,
    which runs the command just before step N of the change."""
    cmd = [TOOL]
    if fault:
        cmd = [sys.executable, FAULT, str(fault[0]), fault[1]]
    if ns is not None:              # "" too: the tool must refuse it
        cmd += ["--netns", ns]
    if state:
        cmd += ["--state-dir", str(state)]
    cmd += [str(a) for a in args]
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    if check is not None:
        assert p.returncode == check, "%s -> %d\nstdout:\n%s\nstderr:\n%s" % (
            cmd, p.returncode, p.stdout, p.stderr)
    return p


def nsysctl(key, ns=NS):
    return " ".join(sh("ip netns exec %s sysctl -n %s" % (ns, key)).stdout.split())


def gsysctl(key):
    return " ".join(sh("sysctl -n %s" % key).stdout.split())


def routes_json(fam, table="all", ns=NS):
    out = sh("ip -n %s -%d -d -j route show table %s" % (ns, fam, table)).stdout
    seen, res = set(), []
    for r in json.loads(out):
        k = json.dumps(r, sort_keys=True)
        if k not in seen:
            seen.add(k)
            res.append(r)
    return res


def state(ns=NS):
    """Everything tcp-tune may touch, as exact text."""
    snap = {}
    for fam in (4, 6):
        snap["json%d" % fam] = sh("ip -n %s -%d -j route show table all"
                                  % (ns, fam)).stdout
        snap["text%d" % fam] = sh("ip -n %s -%d route show table all"
                                  % (ns, fam)).stdout
    snap["ns_sysctl"] = sh("ip netns exec %s sysctl %s" % (ns, " ".join(NS_KEYS))).stdout
    snap["global_sysctl"] = {k: " ".join(Path("/proc/sys", k.replace(
        ".", "/")).read_text().split()) for k in GLOBAL_KEYS}
    snap["modules"] = sorted(m for m in ("tcp_cocktail", "tcp_bbr", "tcp_vegas")
                             if module_loaded(m))
    if modparams.has_params():
        snap["params"] = {k: v for k, v in modparams.get_params().items()
                          if k != "stats"}
    return snap


def settle(ns=NS, timeout=15.0):
    """Wait until the namespace stops changing by itself.  A veth gets its
    carrier through linkwatch (up to a second later) and only then its
    link-local address and that address's local route: a snapshot taken
    before that differs from any later one for reasons that have nothing to
    do with tcp-tune."""
    deadline = time.monotonic() + timeout
    while True:
        links = json.loads(sh("ip -n %s -j link show" % ns).stdout)
        addrs = json.loads(sh("ip -n %s -6 -j addr show" % ns).stdout)
        up = [l["ifname"] for l in links if l["ifname"] != "lo"]
        carrier = all("LOWER_UP" in l["flags"] for l in links
                      if l["ifname"] != "lo")
        ll = {a["ifname"] for a in addrs for i in a.get("addr_info", [])
              if i.get("scope") == "link" and not i.get("tentative")}
        tentative = any(i.get("tentative") for a in addrs
                        for i in a.get("addr_info", []))
        local6 = sh("ip -n %s -6 -j route show table local" % ns).stdout
        ll_routes = sum(1 for r in json.loads(local6)
                        if r["dst"].startswith("fe80:"))
        if carrier and not tentative and set(up) <= ll and ll_routes >= len(up):
            first = state(ns)
            time.sleep(0.3)
            if state(ns) == first:
                return
        assert time.monotonic() < deadline, "namespace %s did not settle" % ns
        time.sleep(0.1)


def assert_same(before, after):
    for k in before:
        assert before[k] == after[k], "%s differs:\nbefore:\n%s\nafter:\n%s" % (
            k, before[k], after[k])
    assert set(before) == set(after)


def default_routes(fam):
    return [r for r in routes_json(fam) if r["dst"] == "default"
            and r.get("table") == "main"]


def strip_metrics(r, names):
    r = json.loads(json.dumps(r))
    for d in r.get("metrics", []):
        for n in names:
            d.pop(n, None)
    r["metrics"] = [d for d in r.get("metrics", []) if d]
    if not r["metrics"]:
        del r["metrics"]
    return r


def text_line(fam, prefix, ns=NS, table="main"):
    for ln in sh("ip -n %s -%d route show table %s" % (ns, fam, table)
                 ).stdout.splitlines():
        if ln.split()[:1] == [prefix] or ln.split()[1:2] == [prefix]:
            return ln
    raise AssertionError("no route %s" % prefix)


@pytest.fixture
def ns(tmp_path):
    sh("ip netns del %s" % NS, check=False)
    sh("ip netns del %s" % PEER, check=False)
    for m in ("tcp_bbr", "tcp_vegas"):
        if module_loaded(m):
            sh("rmmod %s" % m, check=False)
    make_namespaces(NS, PEER)
    settle()
    yield tmp_path / "state"
    sh("ip netns del %s" % NS, check=False)
    sh("ip netns del %s" % PEER, check=False)


# What each shipped profile must set (written out here, not read from the
# profiles, so a wrong profile fails).
EXPECT = {
    "linux-default": {
        "perturb": {"net.ipv4.tcp_slow_start_after_idle": "0",
                    "net.ipv4.tcp_no_metrics_save": "1",
                    "net.ipv4.tcp_notsent_lowat": "131072",
                    "net.ipv4.tcp_wmem": "4096 65536 4194304",
                    "net.ipv4.tcp_congestion_control": "reno"},
        "ns": {"net.ipv4.tcp_congestion_control": "cubic",
               "net.ipv4.tcp_slow_start_after_idle": "1",
               "net.ipv4.tcp_no_metrics_save": "0",
               "net.ipv4.tcp_notsent_lowat": "4294967295",
               "net.ipv4.tcp_wmem": "4096 16384 4194304",
               "net.ipv4.tcp_rmem": "4096 131072 6291456"},
        "global": {"net.core.default_qdisc": "pfifo_fast"},
        "route": {"initcwnd": None, "initrwnd": None, "quickack": None,
                  "congestion": None, "rto_min": None},
    },
    "no-ssr": {
        "ns": {"net.ipv4.tcp_slow_start_after_idle": "0"},
        "route": {"initcwnd": 10},
    },
    "conservative": {
        "perturb": {"net.ipv4.tcp_slow_start_after_idle": "0",
                    "net.ipv4.tcp_congestion_control": "reno"},
        "ns": {"net.ipv4.tcp_congestion_control": "cubic",
               "net.ipv4.tcp_slow_start_after_idle": "1"},
        "route": {"initcwnd": 4},
    },
    "cocktail": {
        "ns": {"net.ipv4.tcp_congestion_control": "cocktail"},
        "global": {"net.core.default_qdisc": "fq"},
        "allowed": "cocktail",
        "params": {"restart": "measure", "iw": "10"},
    },
}


def check_routes_changed(before, after, want):
    """Default routes of table main carry `want`; every other attribute and
    every other route is unchanged."""
    names = list(want)
    assert len(before) == len(after)
    for b, a in zip(before, after):
        if b["dst"] == "default" and b.get("table") == "main":
            m = {}
            for d in a.get("metrics", []):
                m.update(d)
            for n, v in want.items():
                assert m.get(n) == v, "%s: %s is %r, want %r" % (a, n, m.get(n), v)
            assert strip_metrics(a, names) == strip_metrics(b, names)
        else:
            assert a == b


@pytest.mark.parametrize("profile", ["linux-default", "no-ssr", "conservative",
                                     "cocktail"])
def test_apply_and_revert_profile(ns, profile):
    exp = EXPECT[profile]
    extra = []
    if profile == "cocktail":
        assert KO.exists(), "%s is not built (make modules)" % KO
        if module_loaded("tcp_cocktail"):
            sh("rmmod tcp_cocktail")
        extra = ["--module-path", str(KMOD)]
    for k, v in exp.get("perturb", {}).items():
        sh("ip netns exec %s sysctl -q -w '%s=%s'" % (NS, k, v))
    before = state()
    r4, r6 = routes_json(4), routes_json(6)
    p = tool(*extra, "apply", profile, state=ns, check=0)
    assert "original state saved" in p.stdout
    for k, v in exp.get("ns", {}).items():
        assert nsysctl(k) == v, k
    for k, v in exp.get("global", {}).items():
        assert gsysctl(k) == v, k
    if "allowed" in exp:
        assert exp["allowed"] in gsysctl(
            "net.ipv4.tcp_allowed_congestion_control").split()
        assert "host-global" in p.stderr
    for k, v in exp.get("params", {}).items():
        got = modparams.get_param(modparams.COCKTAIL, k)
        assert got == v, k
    if "route" in exp:
        check_routes_changed(r4, routes_json(4), exp["route"])
        check_routes_changed(r6, routes_json(6), exp["route"])
        # locks and all the other metrics survive (text is where locks show)
        ln = text_line(4, "default")
        assert "mtu lock 1400" in ln and "src 198.18.10.1" in ln and \
            "proto static" in ln and "metric 100" in ln and "advmss 1360" in ln
    else:
        assert routes_json(4) == r4 and routes_json(6) == r6
    # applying again changes nothing
    p = tool(*extra, "apply", profile, state=ns, check=0)
    assert "nothing to change" in p.stdout
    p = tool("revert", state=ns, check=0)
    assert_same(before, state())
    assert not list(Path(ns).glob("*.json"))


def test_second_apply_keeps_first_original(ns):
    before = state()
    tool("apply", "no-ssr", state=ns, check=0)
    mid = state()
    tool("apply", "conservative", state=ns, check=0)
    tool("route", "--dst", "198.19.0.0/16", "initcwnd", "3", state=ns, check=0)
    assert nsysctl("net.ipv4.tcp_slow_start_after_idle") == "1"
    assert all(r["metrics"][0]["initcwnd"] == 4 for r in default_routes(4))
    assert state() != mid
    tool("revert", state=ns, check=0)
    assert_same(before, state())
    p = tool("revert", state=ns, check=0)
    assert "nothing to revert" in p.stdout


def test_route_keeps_every_attribute_v4_v6(ns):
    before = state()
    r4, r6 = routes_json(4), routes_json(6)
    tool("route", "--dst", "198.19.0.0/16", "initcwnd", "4", "quickack", "1",
         "initrwnd", "30", state=ns, check=0)
    ln = text_line(4, "198.19.0.0/16")
    for want in ("via 198.18.10.2", "dev a0", "proto bird", "metric 50",
                 "rto_min lock 50ms", "congctl lock reno", "window 65535",
                 "initcwnd 4", "initrwnd 30", "quickack 1"):
        assert want in ln, (want, ln)
    tool("route", "--dst", "fd00:cc:20::/48", "initcwnd", "7", "rto_min", "300ms",
         state=ns, check=0)
    ln = text_line(6, "fd00:cc:20::/48")
    for want in ("via fd00:cc:10::2", "dev a0", "proto static", "src fd00:cc:10::1",
                 "metric 10", "advmss 1300", "initcwnd 7", "rto_min lock 300ms"):
        assert want in ln, (want, ln)
    # multipath (v4 and v6), a route in another table, onlink, IPv6 default
    tool("route", "--dst", "198.19.2.0/24", "initcwnd", "5", state=ns, check=0)
    tool("route", "--dst", "fd00:cc:21::/48", "initcwnd", "6", state=ns, check=0)
    tool("route", "--dst", "198.19.8.0/24", "--table", "100", "initcwnd", "none",
         state=ns, check=0)
    tool("route", "--dst", "198.19.3.0/24", "congctl", "reno", state=ns, check=0)
    tool("route", "--default", "-6", "initcwnd", "12", "congctl", "reno",
         state=ns, check=0)
    after4, after6 = routes_json(4), routes_json(6)
    changed = {"198.19.0.0/16": {"initcwnd": 4, "quickack": 1, "initrwnd": 30},
               "198.19.2.0/24": {"initcwnd": 5},
               "198.19.8.0/24": {"initcwnd": None},
               "198.19.3.0/24": {"congestion": "reno"},
               "fd00:cc:20::/48": {"initcwnd": 7, "rto_min": 300},
               "fd00:cc:21::/48": {"initcwnd": 6},
               "default6": {"initcwnd": 12, "congestion": "reno"}}
    for fam, b_list, a_list in ((4, r4, after4), (6, r6, after6)):
        assert len(b_list) == len(a_list)
        for b, a in zip(b_list, a_list):
            key = b["dst"]
            if fam == 6 and key == "default" and b["table"] == "main":
                key = "default6"
            want = changed.get(key)
            if want is None or (key == "198.19.8.0/24") != (b["table"] == "100"):
                assert a == b, (a, b)
                continue
            m = {}
            for d in a.get("metrics", []):
                m.update(d)
            for n, v in want.items():
                assert m.get(n) == v, (a, n)
            assert strip_metrics(a, list(want)) == strip_metrics(b, list(want))
    assert "onlink" in text_line(4, "198.19.3.0/24")
    assert "nexthop via 198.18.10.2 dev a0 weight 1" in sh(
        "ip -n %s route show 198.19.2.0/24" % NS).stdout
    tool("revert", state=ns, check=0)
    assert_same(before, state())


def test_route_none_removes_metric_and_revert_restores(ns):
    before = state()
    tool("route", "--dst", "198.19.1.0/24", "initcwnd", "none", state=ns, check=0)
    assert "initcwnd" not in text_line(4, "198.19.1.0/24")
    tool("revert", state=ns, check=0)
    assert_same(before, state())


def test_netns_allowed_congestion_control_trap(ns, tmp_path):
    """In a non-initial namespace a module's algorithm can only become the
    default once it is allowed; the tool adds it (host-global) and revert
    takes it away again and unloads the module it loaded.  vegas: unlike
    bbr (which declares itself TCP_CONG_NON_RESTRICTED), it is not allowed
    when it loads."""
    assert not module_loaded("tcp_vegas")
    before = state()
    init_cc = gsysctl("net.ipv4.tcp_congestion_control")
    prof = tmp_path / "vegas"
    prof.write_text("load tcp_vegas\nnet.ipv4.tcp_congestion_control = vegas\n")
    # The trap is real: loaded but not allowed -> EPERM in the namespace.
    # Shown with htcp, not vegas: 6.1's tcp_set_default_congestion_control
    # takes a module reference before the EPERM check and never drops it,
    # so the module used here can no longer be unloaded.
    sh("modprobe tcp_htcp")
    if "htcp" not in gsysctl("net.ipv4.tcp_allowed_congestion_control").split():
        p = sh("ip netns exec %s sysctl -w net.ipv4.tcp_congestion_control=htcp"
               % NS, check=False)
        assert "Operation not permitted" in p.stderr  # (procps exits 0 anyway)
        assert nsysctl("net.ipv4.tcp_congestion_control") != "htcp"
    before = state()
    p = tool("apply", prof, state=ns, check=0)
    assert "tcp_allowed_congestion_control" in p.stderr
    assert nsysctl("net.ipv4.tcp_congestion_control") == "vegas"
    assert "vegas" in gsysctl("net.ipv4.tcp_allowed_congestion_control").split()
    assert gsysctl("net.ipv4.tcp_congestion_control") == init_cc
    tool("revert", state=ns, check=0)
    assert not module_loaded("tcp_vegas")
    assert_same(before, state())


def test_no_global_refuses_the_allowed_list(ns, tmp_path):
    before = state()
    prof = tmp_path / "bbr"
    prof.write_text("load tcp_bbr\nnet.ipv4.tcp_congestion_control = bbr\n")
    p = tool("apply", "--no-global", prof, state=ns, check=2)
    assert "host-global" in p.stderr and "--no-global" in p.stderr
    assert_same(before, state())


def test_dry_run_prints_and_changes_nothing(ns):
    before = state()
    p = tool("--dry-run", "apply", "no-ssr", state=ns, check=0)
    lines = p.stdout.splitlines()
    assert lines[0] == ("ip netns exec %s sysctl -q -w "
                        "net.ipv4.tcp_slow_start_after_idle=0" % NS)
    assert lines[1].startswith("ip -n %s -4 route change default table main "
                               "proto static scope global metric 100 via "
                               "198.18.10.2 dev a0 src 198.18.10.1 mtu lock 1400"
                               % NS), lines[1]
    assert lines[1].endswith("advmss 1360 hoplimit 64 initcwnd 10 features ecn "
                             "initrwnd 20"), lines[1]
    assert any(ln.startswith("ip -n %s -6 route change default" % NS) for ln in lines)
    assert len(lines) == 4          # sysctl + 2 IPv4 defaults + 1 IPv6 default
    assert_same(before, state())
    assert not Path(ns).exists() or not list(Path(ns).glob("*.json"))
    # the printed commands are the real ones: running them gives what
    # apply gives (main tables only: a new namespace gets new link-local
    # addresses in its local table)
    def main_state():
        return {"r%d" % f: sh("ip -n %s -%d route show table main" % (NS, f)).stdout
                for f in (4, 6)} | {"sysctl": sh("ip netns exec %s sysctl %s" % (
                    NS, " ".join(NS_KEYS))).stdout}
    for ln in lines:
        conftest.sh(ln)     # printed for a shell: run by one
    via_dry = main_state()
    sh("ip netns del %s" % NS)
    sh("ip netns del %s" % PEER)
    make_namespaces(NS, PEER)
    tool("apply", "no-ssr", state=ns, check=0)
    assert_same(via_dry, main_state())


def test_show(ns):
    tool("route", "--dst", "198.19.0.0/16", "initcwnd", "4", state=ns, check=0)
    p = tool("show", "--json", state=ns, check=0)
    d = json.loads(p.stdout)
    assert d["congestion_control"]["default"] == nsysctl(
        "net.ipv4.tcp_congestion_control")
    assert d["sysctl"]["net.ipv4.tcp_slow_start_after_idle"] == nsysctl(
        "net.ipv4.tcp_slow_start_after_idle")
    rows = {r["route"]: r for r in d["routes"]}
    row = [r for k, r in rows.items() if "198.19.0.0/16" in k][0]
    assert (row["initcwnd"], row["rto_min"], row["congctl"]) == (4, 50, "reno")
    assert d["state_file"]
    p = tool("show", "--dst", "198.19.7.7", state=ns, check=0)
    assert "198.19.0.0/16" in p.stdout and "initcwnd 4 (route metric)" in p.stdout
    p = tool("show", "--dst", "198.18.11.9", state=ns, check=0)
    assert "198.18.11.0/24" in p.stdout and "kernel default" in p.stdout
    p = tool("show", "--dst", "fd00:cc:20::9", "--json", state=ns, check=0)
    d = json.loads(p.stdout)["dst"]
    assert d["route"]["dst"] == "fd00:cc:20::/48"
    tool("revert", state=ns, check=0)


@pytest.mark.parametrize("target", ["route", "sysctl-then-route"])
def test_failure_part_way_rolls_back(ns, tmp_path, target):
    """A route vanishes between validation and action: the steps already
    done are undone and the state is exactly the original (apart from the
    route the test itself deleted, which is put back before comparing)."""
    before = state()
    readd = ("ip -n %s -6 route add default via fd00:cc:10::2 dev a0 metric 1024 "
             "pref high mtu 1400 congctl lock cubic" % NS)
    delete = "ip -n %s -6 route del default via fd00:cc:10::2 metric 1024" % NS
    if target == "route":
        args = ["route", "--default", "--all", "initcwnd", "3"]
        step = 3            # two IPv4 default routes first, then IPv6
    else:
        args = ["apply", "no-ssr"]
        step = 4            # sysctl, two IPv4 routes, then the IPv6 one
    p = tool(*args, state=ns, check=1, fault=(step, delete))
    assert "step %d of %d failed" % (step, step) in p.stderr
    assert "rolled back the %d change(s)" % (step - 1) in p.stderr
    assert not list(Path(ns).glob("*.json")), "state file left behind"
    sh(readd)
    assert_same(before, state())


def test_failure_part_way_keeps_earlier_saved_state(ns):
    before = state()
    tool("route", "--dst", "198.19.0.0/16", "initcwnd", "4", state=ns, check=0)
    saved = list(Path(ns).glob("*.json"))[0].read_text()
    delete = "ip -n %s -6 route del default via fd00:cc:10::2 metric 1024" % NS
    tool("apply", "no-ssr", state=ns, check=1, fault=(4, delete))
    assert list(Path(ns).glob("*.json"))[0].read_text() == saved
    sh("ip -n %s -6 route add default via fd00:cc:10::2 dev a0 metric 1024 "
       "pref high mtu 1400 congctl lock cubic" % NS)
    tool("revert", state=ns, check=0)
    assert_same(before, state())


def test_revert_when_saved_route_is_gone(ns):
    before = state()
    tool("apply", "no-ssr", state=ns, check=0)
    sh("ip -n %s route del 198.19.0.0/16" % NS)        # unrelated: fine
    sh("ip -n %s route del default via 198.18.10.2 metric 200" % NS)
    mid = state()
    p = tool("revert", state=ns, check=2)
    assert "no longer exists" in p.stderr and "--skip-missing" in p.stderr
    assert_same(mid, state())
    tool("revert", "--skip-missing", state=ns, check=0)
    sh("ip -n %s route add default via 198.18.10.2 dev a0 metric 200 window 30000"
       % NS)
    sh("ip -n %s route add 198.19.0.0/16 via 198.18.10.2 dev a0 proto bird "
       "metric 50 rto_min 50ms congctl lock reno window 65535" % NS)
    assert_same(before, state())


def _profile(tmp_path, text):
    f = tmp_path / "bad.profile"
    f.write_text(text)
    return str(f)


# (id, argv builder, expected message regex)
BAD = [
    ("unknown-profile", lambda t: ["apply", "no-such-profile"],
     r"no profile named 'no-such-profile'"),
    ("unknown-key", lambda t: ["apply", _profile(t, "net.ipv4.tcp_bogus = 1\n")],
     r"bad\.profile:1: unknown key 'net\.ipv4\.tcp_bogus'"),
    ("syntax", lambda t: ["apply", _profile(t, "# c\nnet.ipv4.tcp_sack 1\n")],
     r"bad\.profile:2: syntax error"),
    ("bool-range", lambda t: ["apply", _profile(
        t, "net.ipv4.tcp_slow_start_after_idle = 2\n")],
     r"bad\.profile:1: net\.ipv4\.tcp_slow_start_after_idle: '2' must be 0 or 1"),
    ("wmem-triple", lambda t: ["apply", _profile(t, "net.ipv4.tcp_wmem = 4096 16384\n")],
     r"bad\.profile:1: .*must be three integers"),
    ("wmem-order", lambda t: ["apply", _profile(
        t, "net.ipv4.tcp_wmem = 9000 4096 16384\n")],
     r"min <= default <= max"),
    ("cc-unknown", lambda t: ["apply", _profile(
        t, "net.ipv4.tcp_congestion_control = nosuchcc\n")],
     r"bad\.profile:1: .*'nosuchcc' is not available .*no module tcp_nosuchcc"),
    ("cc-module-not-loaded", lambda t: ["apply", _profile(
        t, "net.ipv4.tcp_congestion_control = bbr\n")],
     r"module tcp_bbr exists but is not loaded: add 'load tcp_bbr'"),
    ("duplicate-key", lambda t: ["apply", _profile(
        t, "net.ipv4.tcp_sack = 1\nnet.ipv4.tcp_sack = 0\n")],
     r"bad\.profile:2: net\.ipv4\.tcp_sack set twice \(first at line 1\)"),
    ("plus-equals-scalar", lambda t: ["apply", _profile(
        t, "net.ipv4.tcp_sack += 1\n")], r"'\+=' only works for list keys"),
    ("param-unknown", lambda t: ["apply", _profile(
        t, "load tcp_cocktail\ntcp_cocktail.bogus = 1\n")],
     r"bad\.profile:2: unknown parameter 'bogus' of module tcp_cocktail"),
    ("param-readonly", lambda t: ["apply", _profile(t, "tcp_cocktail.stats = 1\n")],
     r"tcp_cocktail\.stats is read-only"),
    ("param-bad-value", lambda t: ["apply", _profile(t, "tcp_cocktail.restart = maybe\n")],
     r"tcp_cocktail\.restart: 'maybe' must be one of ssr\|decay\|keep\|pace\|auto"),
    ("profile-route-selector", lambda t: ["apply", _profile(
        t, "route nowhere initcwnd 4\n")], r"bad\.profile:1: route: unknown selector"),
    ("profile-route-none-match", lambda t: ["apply", _profile(
        t, "route dst 198.19.99.0/24 initcwnd 4\n")],
     r"bad\.profile:1: no route to 198\.19\.99\.0/24"),
    ("initcwnd-zero", lambda t: ["route", "--default", "--all", "initcwnd", "0"],
     r"initcwnd: 0 is out of range 1\.\.1024"),
    ("initcwnd-big", lambda t: ["route", "--default", "--all", "initcwnd", "1025"],
     r"initcwnd: 1025 is out of range 1\.\.1024"),
    ("initrwnd-text", lambda t: ["route", "--default", "--all", "initrwnd", "ten"],
     r"initrwnd: 'ten' is not an integer"),
    ("quickack-2", lambda t: ["route", "--default", "--all", "quickack", "2"],
     r"quickack: '2' must be 0 or 1"),
    ("rto-min-zero", lambda t: ["route", "--default", "--all", "rto_min", "0"],
     r"rto_min: 0ms is out of range 1\.\.120000ms"),
    ("rto-min-huge", lambda t: ["route", "--default", "--all", "rto_min", "10min"],
     r"rto_min: '10min' is not a time"),
    ("metric-unknown", lambda t: ["route", "--default", "--all", "cwnd", "5"],
     r"unknown route metric 'cwnd'"),
    ("metric-missing-value", lambda t: ["route", "--default", "--all", "initcwnd"],
     r"route metric initcwnd needs a value"),
    ("no-metrics", lambda t: ["route", "--default"], r"no route metrics given"),
    ("route-missing", lambda t: ["route", "--dst", "198.19.99.0/24", "initcwnd", "4"],
     r"no route to 198\.19\.99\.0/24 IPv4 in table main in namespace NSNAME"),
    ("route-host-bits", lambda t: ["route", "--dst", "198.19.0.5/16", "initcwnd", "4"],
     r"--dst 198\.19\.0\.5/16: not a network prefix"),
    ("route-ambiguous", lambda t: ["route", "--default", "-4", "initcwnd", "4"],
     r"2 routes match .*pass --all"),
    ("route-blackhole", lambda t: ["route", "--dst", "198.19.4.0/24", "initcwnd", "4"],
     r"no unicast route to 198\.19\.4\.0/24 .*blackhole"),
    ("route-congctl-unknown", lambda t: ["route", "--dst", "198.19.1.0/24",
                                         "congctl", "nosuchcc"],
     r"congctl: congestion control 'nosuchcc' is not available \(no module"),
    ("route-congctl-not-loaded", lambda t: ["route", "--dst", "198.19.1.0/24",
                                            "congctl", "bbr"],
     r"module tcp_bbr exists but is not loaded: modprobe tcp_bbr first"),
    ("route-no-selector", lambda t: ["route", "initcwnd", "4"],
     r"give --dst PREFIX or --default"),
    ("qdisc-unknown", lambda t: ["apply", _profile(
        t, "net.core.default_qdisc = nosuchq\n")],
     r"qdisc 'nosuchq' is not available"),
]


SNS, SPEER = "tt-s", "tt-sp"


@pytest.fixture(scope="module")
def shared_ns():
    """One namespace pair for all bad-input cases (they must not change it;
    each case checks that)."""
    sh("ip netns del %s" % SNS, check=False)
    sh("ip netns del %s" % SPEER, check=False)
    if module_loaded("tcp_bbr"):
        sh("rmmod tcp_bbr", check=False)
    make_namespaces(SNS, SPEER)
    settle(SNS)
    yield SNS, state(SNS)
    sh("ip netns del %s" % SNS, check=False)
    sh("ip netns del %s" % SPEER, check=False)


@pytest.mark.parametrize("bad", BAD, ids=[b[0] for b in BAD])
def test_bad_input_changes_nothing(shared_ns, tmp_path, bad):
    _id, build, msg = bad
    shared_ns, before = shared_ns
    st = tmp_path / "state"
    p = tool(*build(tmp_path), ns=shared_ns, state=st)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    msg = msg.replace("NSNAME", shared_ns)
    assert re.search(msg, p.stderr), "expected /%s/ in:\n%s" % (msg, p.stderr)
    assert "nothing was changed" in p.stderr
    assert_same(before, state(shared_ns))
    assert not st.exists() or not list(st.glob("*.json"))


def test_bad_netns(ns):
    before = state()
    p = tool("apply", "no-ssr", ns="tt-nosuch", state=ns)
    assert p.returncode == 2
    assert "network namespace 'tt-nosuch' does not exist" in p.stderr
    # names `ip netns` would not take: refused before anything is read
    sh("mkdir -p /run/netns/tt-dir")
    try:
        for name, msg in (("..", "not a namespace name"),
                          (".", "not a namespace name"),
                          ("tt-dir/../" + NS, "not a namespace name"),
                          ("../netns/" + NS, "not a namespace name"),
                          ("", "empty namespace name"),
                          ("n" * 245, "longer than 244 bytes"),
                          ("tt\x1b[2J", "control characters")):
            p = tool("apply", "no-ssr", ns=name, state=ns)
            assert p.returncode == 2, (name, p.stderr)
            assert msg in p.stderr and "nothing was changed" in p.stderr, p.stderr
    finally:
        sh("rmdir /run/netns/tt-dir", check=False)
    assert_same(before, state())
    assert not Path(ns).exists()


def move_gateway(fam, old, new, ns=NS):
    """Move the main table's default route from gateway `old` to `new`,
    keeping every other attribute (as a DHCP client renewing with another
    router does)."""
    ln = [x for x in sh("ip -n %s -%d route show table main" % (ns, fam)
                        ).stdout.splitlines()
          if x.startswith("default via %s " % old)][0]
    sh("ip -n %s -%d route change %s" % (ns, fam, ln.replace(
        "via %s " % old, "via %s " % new)))


def test_revert_after_the_default_route_moved_keeps_the_new_gateway(ns):
    """Revert changes only the metrics tcp-tune set, on the route as it is
    then: a gateway moved since stays where it is."""
    before = state()
    tool("apply", "no-ssr", state=ns, check=0)
    move_gateway(4, "198.18.10.2", "198.18.10.3")
    move_gateway(6, "fd00:cc:10::2", "fd00:cc:10::3")
    assert "initcwnd 10" in text_line(4, "default")
    tool("revert", state=ns, check=0)
    d4 = [r for r in default_routes(4) if r.get("metric") == 100][0]
    d6 = default_routes(6)[0]
    assert d4["gateway"] == "198.18.10.3" and d6["gateway"] == "fd00:cc:10::3"
    ln = text_line(4, "default")
    assert "initcwnd" not in ln and "via 198.18.10.3" in ln
    for want in ("mtu lock 1400", "advmss 1360", "initrwnd 20", "src 198.18.10.1"):
        assert want in ln, (want, ln)
    assert "initcwnd" not in sh("ip -n %s -6 route show default" % NS).stdout
    # with the gateways moved back by hand, the host is as it was
    move_gateway(4, "198.18.10.3", "198.18.10.2")
    move_gateway(6, "fd00:cc:10::3", "fd00:cc:10::2")
    assert_same(before, state())


@pytest.mark.parametrize("how", ["symlink", "world-writable", "group-writable"])
def test_untrusted_state_directory_is_refused(ns, tmp_path, how):
    """A state directory someone else could have planted or can write to is
    refused with the reason before anything changes."""
    real = tmp_path / "real"
    real.mkdir(mode=0o755)
    st = real
    if how == "symlink":
        st = tmp_path / "link"
        st.symlink_to(real)
        msg = "is a symbolic link"
    else:
        real.chmod(0o777 if how == "world-writable" else 0o775)
        msg = "writable by group or others"
    before = state()
    for args in (["apply", "no-ssr"], ["route", "--default", "--all", "initcwnd", "4"],
                 ["revert"]):
        p = tool(*args, state=st, check=2)
        assert msg in p.stderr and "nothing was changed" in p.stderr, p.stderr
    assert_same(before, state())
    assert list(real.iterdir()) == []


def test_sysctl_dropin_is_a_valid_profile(ns):
    """The sysctl.d drop-in parses as a profile; without the module loaded
    tcp-tune refuses it with the reason."""
    if module_loaded("tcp_cocktail"):
        sh("rmmod tcp_cocktail")
    before = state()
    p = tool("apply", str(REPO / "sysctl" / "90-tcp-cocktail.conf"), state=ns)
    assert p.returncode == 2
    assert "congestion control 'cocktail' is not available" in p.stderr
    assert_same(before, state())

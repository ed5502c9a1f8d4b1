"""Host unit tests for scripts/tcp-tune and its package scripts/tcp_tune
(no root): profile parsing, the
`ip -j route` parser and route reconstruction on real iproute2 output
captured in the VM (tests/unit/data/, regenerate with capture-routes.sh),
validation, and the plan of commands.  The kernel-facing behaviour is
tested in tests/vm/test_tcp_tune.py."""
import ast
import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tcp_tune as tt

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "tcp-tune"
DATA = Path(__file__).resolve().parent / "data"
PROFILES = REPO / "sysctl" / "profiles"
PACKAGE = REPO / "scripts" / "tcp_tune"


def fixture_routes(fam, details=True):
    name = "ip%d-route-table-all%s.json" % (fam, "-details" if details else "")
    return json.loads((DATA / name).read_text())


def fixture_text(fam):
    return (DATA / ("ip%d-route-table-all.txt" % fam)).read_text()


def snapshot(target_is_init=False, can_write_global=True, netns="ns1", **over):
    """A snapshot as Host.snapshot() builds it, from the captured routes."""
    snap = dict(
        netns=netns, ns_label=" in namespace %s" % netns if netns else "",
        sysctl={
            "net.ipv4.tcp_congestion_control": "cubic",
            "net.ipv4.tcp_available_congestion_control": "reno cubic",
            "net.ipv4.tcp_allowed_congestion_control": "reno cubic",
            "net.ipv4.tcp_slow_start_after_idle": "1",
            "net.ipv4.tcp_no_metrics_save": "0",
            "net.ipv4.tcp_notsent_lowat": "4294967295",
            "net.ipv4.tcp_wmem": "4096 16384 4194304",
            "net.ipv4.tcp_rmem": "4096 131072 6291456",
            "net.core.default_qdisc": "pfifo_fast",
        },
        global_sysctl={
            "net.ipv4.tcp_congestion_control": "cubic",
            "net.ipv4.tcp_allowed_congestion_control": "reno cubic",
            "net.core.default_qdisc": "pfifo_fast",
        },
        available_cc=["reno", "cubic"], allowed_cc=["reno", "cubic"],
        can_write_global=can_write_global, target_is_init=target_is_init,
        routes={4: tt.dedupe(fixture_routes(4)), 6: tt.dedupe(fixture_routes(6))},
        locks={4: tt.locks_from_text(fixture_text(4), 4),
               6: tt.locks_from_text(fixture_text(6), 6)},
        modules={},
        module_files={"tcp_bbr": None, "sch_fq": None,
                      "tcp_cocktail": "/src/kmod/tcp_cocktail.ko"},
        module_param_names={"tcp_cocktail": {"iw", "restart", "auto_rtt_us",
                                             "cwv", "pace_iw", "stats"}},
    )
    snap.update(over)
    return tt.Snapshot(**snap)


def host(netns="ns1"):
    return tt.Host(netns=netns, dry_run=True)


def commands(actions, netns="ns1"):
    h = host(netns)
    return [" ".join(a.command(h)) for a in actions]


def profile(text, name="test.profile"):
    return tt.parse_profile(text, name)


# ---------------------------------------------------------------- profiles

@pytest.mark.parametrize("name", ["linux-default", "no-ssr", "cocktail",
                                  "conservative"])
def test_shipped_profiles_parse_and_document_the_format(name):
    text = (PROFILES / name).read_text()
    assert "# Format" in text and "route SELECTOR" in text and "load MODULE" in text
    p = tt.parse_profile(text, name)
    assert p.sysctls or p.routes


def test_shipped_profile_contents():
    get = lambda n: tt.parse_profile((PROFILES / n).read_text(), n)  # noqa: E731
    ssr = get("no-ssr")
    assert [(k, v) for _, k, _, v in ssr.sysctls] == [
        ("net.ipv4.tcp_slow_start_after_idle", "0")]
    assert [(s["kind"], m) for _, s, m in ssr.routes] == [("default", {"initcwnd": 10})]
    cons = get("conservative")
    assert dict((k, v) for _, k, _, v in cons.sysctls)[
        "net.ipv4.tcp_slow_start_after_idle"] == "1"
    assert cons.routes[0][2] == {"initcwnd": 4}
    c = get("cocktail")
    assert [m for _, m in c.loads] == ["tcp_cocktail"]
    assert {(p, v) for _, _, p, v in c.params} == {("restart", "measure"), ("iw", "10")}
    s = {k: (op, v) for _, k, op, v in c.sysctls}
    assert s["net.ipv4.tcp_congestion_control"] == ("=", "cocktail")
    assert s["net.ipv4.tcp_allowed_congestion_control"] == ("+=", "cocktail")
    assert s["net.core.default_qdisc"] == ("=", "fq")
    d = get("linux-default")
    s = {k: v for _, k, _, v in d.sysctls}
    assert s["net.ipv4.tcp_congestion_control"] == "cubic"
    assert s["net.ipv4.tcp_slow_start_after_idle"] == "1"
    assert d.routes[0][2] == {m: None for m in tt.TUNABLE}


def test_dropin_is_a_profile():
    p = tt.parse_profile((REPO / "sysctl" / "90-tcp-cocktail.conf").read_text(),
                         "90-tcp-cocktail.conf")
    assert {k for _, k, _, _ in p.sysctls} == {"net.core.default_qdisc",
                                               "net.ipv4.tcp_congestion_control"}


def test_profile_comments_and_sysctl_d_syntax():
    p = profile("; sysctl.d comment\n# comment\n\nnet/ipv4/tcp_sack=1  # tail\n"
                "net.ipv4.tcp_wmem = 4096\t16384   4194304\n")
    assert [(k, v) for _, k, _, v in p.sysctls] == [
        ("net.ipv4.tcp_sack", "1"), ("net.ipv4.tcp_wmem", "4096 16384 4194304")]


@pytest.mark.parametrize("text,msg", [
    ("net.ipv4.tcp_sack 1", "test.profile:1: syntax error"),
    ("\n\nnet.ipv4.tcp_bogus = 1", "test.profile:3: unknown key 'net.ipv4.tcp_bogus'"),
    ("net.ipv4.tcp_sack = ", "test.profile:1: net.ipv4.tcp_sack: missing value"),
    ("net.ipv4.tcp_sack = 2", "'2' must be 0 or 1"),
    ("net.ipv4.tcp_sack = 1\nnet.ipv4.tcp_sack = 1", "test.profile:2: net.ipv4.tcp_sack "
     "set twice (first at line 1)"),
    ("net.ipv4.tcp_rmem = 1 2", "must be three integers"),
    ("net.ipv4.tcp_rmem = 3 2 1", "min <= default <= max"),
    ("net.ipv4.tcp_notsent_lowat = -1", "out of range"),
    ("net.ipv4.tcp_congestion_control = Bad-Name", "not a congestion control name"),
    ("net.ipv4.tcp_sack += 1", "'+=' only works for list keys"),
    ("load", "syntax: load MODULE"),
    ("load tcp_x\nload tcp_x", "test.profile:2: module tcp_x loaded twice"),
    ("tcp_cocktail.nope = 1", "unknown parameter 'nope' of module tcp_cocktail"),
    ("tcp_cocktail.stats = 1", "tcp_cocktail.stats is read-only"),
    ("tcp_cocktail.iw = 65", "65 is out of range 1..64"),
    ("tcp_cocktail.iw = rfc3390\ntcp_cocktail.cwv = 3", "test.profile:2: tcp_cocktail.cwv"),
    ("tcp_cocktail.iw += 3", "only '=' works for module parameters"),
    ("tcp_cocktail.restart = queues", "tcp_cocktail.restart: 'queues' must be one of"),
    ("tcp_cocktail.queue_pct = 100", "100 is out of range 101..1000"),
    ("tcp_cocktail.queue_pct = 1001", "1001 is out of range 101..1000"),
    ("tcp_cocktail.check_rtt_pct = 100", "100 is out of range 101..1000"),
    ("tcp_cocktail.check_rate_pct = 100", "100 is out of range 1..99"),
    ("route", "syntax: route default|all|dst PREFIX"),
    ("route somewhere initcwnd 4", "unknown selector 'somewhere'"),
    ("route default", "no route metrics given"),
    ("route default initcwnd", "route metric initcwnd needs a value"),
    ("route default initcwnd 4 initcwnd 5", "route metric initcwnd given twice"),
    ("route dst 10.0.0.1/8 initcwnd 4", "not a network prefix"),
    ("route dst 10.0.0.0/8 table", "route: table needs a value"),
    ("route default mtu 1400", "unknown route metric 'mtu'"),
])
def test_profile_errors_name_file_and_line(text, msg):
    with pytest.raises(tt.TuneError) as e:
        profile(text)
    assert msg in str(e.value)


def test_profile_cocktail_queue_policy():
    p = profile("load tcp_cocktail\ntcp_cocktail.restart = queue\n"
                "tcp_cocktail.queue_pct = 101\n")
    assert [(m, k, v) for _, m, k, v in p.params] == [
        ("tcp_cocktail", "restart", "queue"), ("tcp_cocktail", "queue_pct", "101")]


def test_every_bench_policy_is_a_valid_profile():
    """bench/lib/policies.py applies each policy as a tcp-tune profile, so
    every policy it knows (on-request ones too) must parse; the BPF
    build's parameters are not module parameters (bpf/cocktail-bpf sets
    them), so its profiles carry the sysctls alone."""
    from bench.lib import policies
    for pol in policies.KNOWN:
        p = tt.parse_profile(policies.profile_text(pol), pol.name)
        want = {} if pol.cc == "cocktail_bpf" else pol.cocktail
        assert {(k, v) for _, _, k, v in p.params} == \
            {(k, str(v)) for k, v in want.items()}, pol.name


def test_profile_reports_every_error():
    with pytest.raises(tt.TuneError) as e:
        profile("net.ipv4.tcp_sack = 5\nok\nroute default initcwnd 0\n")
    lines = str(e.value).splitlines()
    assert [ln.split(": ")[0] for ln in lines] == ["test.profile:1", "test.profile:2",
                                                    "test.profile:3"]


def test_find_profile():
    assert tt.find_profile("no-ssr", str(SCRIPT)) == str(PROFILES / "no-ssr")
    # without the launcher's path: the one next to the package
    assert tt.find_profile("no-ssr") == str(PROFILES / "no-ssr")
    with pytest.raises(tt.TuneError, match="no profile named 'nope' \\(known: "
                       ".*cocktail.*no-ssr"):
        tt.find_profile("nope", str(SCRIPT))
    with pytest.raises(tt.TuneError, match="does not exist"):
        tt.find_profile("/nonexistent/x", str(SCRIPT))


# ------------------------------------------------------- route validation

@pytest.mark.parametrize("args,msg", [
    (["initcwnd", "0"], "initcwnd: 0 is out of range 1..1024"),
    (["initcwnd", "1025"], "initcwnd: 1025 is out of range 1..1024"),
    (["initrwnd", "x"], "initrwnd: 'x' is not an integer"),
    (["quickack", "2"], "quickack: '2' must be 0 or 1"),
    (["rto_min", "0"], "rto_min: 0ms is out of range 1..120000ms"),
    (["rto_min", "121s"], "rto_min: 121000ms is out of range"),
    (["rto_min", "5us"], "is not a time"),
    (["congctl", "a b"], "not a congestion control name"),
    (["window", "3"], "unknown route metric 'window'"),
    ([], "no route metrics given"),
])
def test_metric_validation(args, msg):
    with pytest.raises(tt.TuneError, match=msg.replace("(", "\\(").replace(".", "\\.")):
        tt.parse_metric_args(args)


def test_metric_values():
    assert tt.parse_metric_args(["initcwnd", "1024", "initrwnd", "1", "quickack", "1",
                                 "congctl", "reno", "rto_min", "2s"]) == {
        "initcwnd": 1024, "initrwnd": 1, "quickack": 1, "congctl": "reno",
        "rto_min": 2000}
    # the kernel drops zero-valued metrics: quickack 0 means "no metric"
    assert tt.parse_metric_args(["quickack", "0", "initcwnd", "none"]) == {
        "quickack": None, "initcwnd": None}


# ------------------------------------------- ip -j parsing, reconstruction

def test_table_all_without_family_lists_both():
    """`ip route show table all` without -4/-6 dumps IPv4 and IPv6 (so
    tcp-tune always passes the family)."""
    mixed = json.loads((DATA / "route-table-all-nofamily.json").read_text())
    fams = [tt.route_family(r) for r in mixed]
    assert 4 in fams and 6 in fams
    assert len(mixed) == len(fixture_routes(4, False)) + len(fixture_routes(6, False))
    assert all(tt.route_family(r) == 4 for r in fixture_routes(4))
    assert all(tt.route_family(r) == 6 for r in fixture_routes(6))


def test_locks_come_from_the_text_dump():
    l4 = tt.locks_from_text(fixture_text(4), 4)
    l6 = tt.locks_from_text(fixture_text(6), 6)
    r4 = {tt.route_label(r, 4): tt.route_key(r, 4) for r in fixture_routes(4)}
    key = [k for lbl, k in r4.items() if "default via 198.18.0.2" in lbl][0]
    assert l4[key] == {"mtu", "rto_min"}
    key = [k for lbl, k in r4.items() if "198.19.0.0/16" in lbl][0]
    assert l4[key] == {"rto_min", "congestion"}
    key = [tt.route_key(r, 6) for r in fixture_routes(6)
           if r["dst"] == "default" and r["metric"] == 1024][0]
    assert l6[key] == {"rto_min"}
    # every JSON route has a text line with the same key
    for fam in (4, 6):
        locks = (l4, l6)[fam == 6]
        for r in fixture_routes(fam):
            assert tt.route_key(r, fam) in locks, tt.route_label(r, fam)


def _metric_tokens(tokens):
    if "nexthop" in tokens:
        tokens = tokens[:tokens.index("nexthop")]
    for i, t in enumerate(tokens):
        if t in tt.ARG_METRIC:
            return tokens[i:]
    return []


@pytest.mark.parametrize("fam", [4, 6])
def test_reconstructed_metrics_match_iproute2_text(fam):
    """For every captured route, the metrics part of the reconstructed
    arguments is what iproute2 itself prints (including lock flags)."""
    locks = tt.locks_from_text(fixture_text(fam), fam)
    text = {}
    for ln in fixture_text(fam).splitlines():
        if ln and not ln[0].isspace():
            text.setdefault(tt.text_route_key(ln, fam), ln.split())
    n = 0
    for r in tt.dedupe(fixture_routes(fam)):
        k = tt.route_key(r, fam)
        args = tt.route_args(r, fam, locks.get(k, set()))
        want = _metric_tokens(text[k])
        # printed "rto_min lock 50ms"; iproute2 takes "rto_min 50ms" and
        # locks it by itself (it refuses the lock keyword there)
        want = [t for i, t in enumerate(want)
                if not (t == "lock" and want[i - 1] == "rto_min")]
        if fam == 6 and want[-2:-1] == ["pref"]:
            want = want[:-2]
        assert _metric_tokens(args) == want, tt.route_label(r, fam)
        n += bool(want)
    assert n >= 4


@pytest.mark.parametrize("fam", [4, 6])
def test_details_and_plain_json_give_the_same_command(fam):
    plain, det = fixture_routes(fam, False), fixture_routes(fam, True)
    assert len(plain) == len(det)
    for a, b in zip(plain, det):
        assert tt.route_key(a, fam) == tt.route_key(b, fam)
        assert tt.route_args(a, fam) == tt.route_args(b, fam)


def _find(fam, pred):
    return [r for r in tt.dedupe(fixture_routes(fam)) if pred(r)][0]


def test_route_args_v4_full():
    r = _find(4, lambda r: r["dst"] == "default" and r.get("metric") == 100)
    args = tt.route_args(r, 4, {"mtu", "rto_min"})
    assert args == ("default table main proto static scope global metric 100 "
                    "via 198.18.0.2 dev veth0 src 198.18.0.1 mtu lock 1400 "
                    "window 65535 rtt 100ms rttvar 50ms ssthresh 30 advmss 1360 "
                    "reordering 5 hoplimit 64 initcwnd 10 features ecn "
                    "rto_min 300ms initrwnd 20 quickack 1 congctl cubic "
                    "fastopen_no_cookie 1").split()


def test_route_args_special_shapes():
    mp = _find(4, lambda r: r["dst"] == "198.19.2.0/24")
    assert tt.route_args(mp, 4) == (
        "198.19.2.0/24 table main proto static scope global nexthop via "
        "198.18.0.2 dev veth0 weight 1 nexthop via 198.18.1.2 dev veth1 "
        "weight 3").split()
    nh = _find(4, lambda r: r["dst"] == "198.19.9.0/24")
    assert tt.route_args(nh, 4) == ("198.19.9.0/24 table main proto boot scope "
                                    "global nhid 17 initcwnd 6").split()
    ol = _find(4, lambda r: r["dst"] == "198.19.3.0/24")
    assert tt.route_args(ol, 4)[-5:] == ["via", "198.18.9.9", "dev", "veth0", "onlink"]
    tos = _find(4, lambda r: r["dst"] == "198.19.7.0/24")
    assert tt.route_args(tos, 4)[:3] == ["198.19.7.0/24", "tos", "0x10"]
    t100 = _find(4, lambda r: r["dst"] == "198.19.8.0/24")
    assert tt.route_args(t100, 4)[:3] == ["198.19.8.0/24", "table", "100"]
    bh = _find(4, lambda r: r["dst"] == "198.19.4.0/24")
    assert tt.route_args(bh, 4) == ["blackhole", "198.19.4.0/24", "table", "main",
                                    "proto", "boot", "scope", "global"]
    d6 = _find(6, lambda r: r["dst"] == "default" and r["metric"] == 1024)
    assert tt.route_args(d6, 6, {"rto_min"}) == (
        "default table main proto boot metric 1024 pref high via fd00:cc::2 dev "
        "veth0 mtu 1400 hoplimit 60 initcwnd 10 rto_min 200ms initrwnd 10 "
        "quickack 1 congctl cubic").split()
    # metrics come before the nexthops: iproute2 parses everything after
    # "nexthop" as nexthop options
    mpm = copy.deepcopy(mp)
    mpm["metrics"] = [{"initcwnd": 5}]
    assert tt.route_args(mpm, 4) == (
        "198.19.2.0/24 table main proto static scope global initcwnd 5 nexthop "
        "via 198.18.0.2 dev veth0 weight 1 nexthop via 198.18.1.2 dev veth1 "
        "weight 3").split()
    mp6 = _find(6, lambda r: r["dst"] == "fd00:cc:11::/48")
    assert "nexthop via fd00:cc:1::2 dev veth1 weight 1" in " ".join(
        tt.route_args(mp6, 6))
    src6 = _find(6, lambda r: r["dst"] == "fd00:cc:10::/48")
    assert " ".join(tt.route_args(src6, 6)).endswith(
        "via fd00:cc::2 dev veth0 src fd00:cc::1 advmss 1300 features ecn")


@pytest.mark.parametrize("change,msg", [
    (lambda r: r.update(encap={"type": "mpls"}), "attribute encap cannot be "
     "reconstructed"),
    (lambda r: r.update(expires=300), "attribute expires cannot be reconstructed"),
    (lambda r: r["flags"].append("weird"), "flag weird cannot be reconstructed"),
    (lambda r: r["metrics"][0].update(newmetric=3), "metric newmetric cannot be "
     "reconstructed"),
])
def test_unknown_route_attributes_are_refused(change, msg):
    r = copy.deepcopy(_find(4, lambda r: r["dst"] == "default" and
                            r.get("metric") == 100))
    change(r)
    with pytest.raises(tt.TuneError, match=msg):
        tt.route_args(r, 4)


# ------------------------------------------------------------- selection

def sel(kind="default", **kw):
    s = {"kind": kind, "families": (4, 6), "table": "main", "all": False}
    s.update(kw)
    return s


def test_select_default_needs_all_when_a_family_has_two():
    snap = snapshot()
    with pytest.raises(tt.TuneError, match="2 routes match .*metric 100.*metric 200"
                       ".*pass --all"):
        tt.select_routes(snap, sel(families=(4,)))
    got = tt.select_routes(snap, sel(all=True))
    assert [(f, r.get("metric")) for f, r in got] == [(4, 100), (4, 200), (6, 1024),
                                                      (6, 2048)]
    got = tt.select_routes(snap, sel(dev="veth1"))       # one per family: fine
    assert [(f, r["gateway"]) for f, r in got] == [(4, "198.18.1.2"),
                                                   (6, "fd00:cc:1::2")]


def test_select_by_prefix_table_and_types():
    import ipaddress
    snap = snapshot()
    p = ipaddress.ip_network
    got = tt.select_routes(snap, sel("dst", prefix=p("198.19.8.0/24"), families=(4,),
                                     table="100"))
    assert got[0][1]["metrics"] == [{"initcwnd": 2}]
    with pytest.raises(tt.TuneError, match="no route to 198.19.8.0/24 IPv4 in table "
                       "main in namespace ns1"):
        tt.select_routes(snap, sel("dst", prefix=p("198.19.8.0/24"), families=(4,)))
    with pytest.raises(tt.TuneError, match="no unicast route to 198.19.4.0/24 .*"
                       "blackhole"):
        tt.select_routes(snap, sel("dst", prefix=p("198.19.4.0/24"), families=(4,)))
    got = tt.select_routes(snap, sel("dst", prefix=p("fe80::/64"), families=(6,),
                                     dev="veth0"))
    assert len(got) == 1
    with pytest.raises(tt.TuneError, match="3 routes match"):
        tt.select_routes(snap, sel("dst", prefix=p("fe80::/64"), families=(6,)))


# -------------------------------------------------------------- planning

def test_plan_no_ssr_in_netns():
    p = tt.parse_profile((PROFILES / "no-ssr").read_text(), "no-ssr")
    actions, notes = tt.plan_profile(p, snapshot(), {"netns": "ns1"})
    assert commands(actions) == [
        "ip netns exec ns1 sysctl -q -w net.ipv4.tcp_slow_start_after_idle=0",
        # initcwnd 10 already on the first IPv4 default and the first IPv6 one
        "ip -n ns1 -4 route change default table main proto boot scope global "
        "metric 200 via 198.18.1.2 dev veth1 initcwnd 10",
        "ip -n ns1 -6 route change default table main proto boot metric 2048 pref "
        "medium via fd00:cc:1::2 dev veth1 initcwnd 10",
    ]
    assert notes == []
    # the undo of each route change is the original route, verbatim
    assert commands([actions[1].undo_action()])[0].endswith(
        "via 198.18.1.2 dev veth1 initcwnd 4")


def test_plan_keeps_locks():
    p = profile("route default -4 dev veth0 initcwnd 3 rto_min 250")
    actions, _ = tt.plan_profile(p, snapshot(netns=None), {})
    assert commands(actions, None) == [
        "ip -4 route change default table main proto static scope global metric 100 "
        "via 198.18.0.2 dev veth0 src 198.18.0.1 mtu lock 1400 window 65535 rtt "
        "100ms rttvar 50ms ssthresh 30 advmss 1360 reordering 5 hoplimit 64 initcwnd "
        "3 features ecn rto_min 250ms initrwnd 20 quickack 1 congctl cubic "
        "fastopen_no_cookie 1"]
    p = profile("route dst 198.19.1.0/24 rto_min 20 congctl reno")
    actions, _ = tt.plan_profile(p, snapshot(), {})
    assert commands(actions)[0].endswith("initrwnd 40") is False
    assert commands(actions)[0].endswith("rto_min 20ms initrwnd 40 congctl reno")


def test_plan_none_removes_and_no_change_is_no_action():
    p = profile("route dst 198.19.0.0/16 congctl none rto_min none")
    actions, _ = tt.plan_profile(p, snapshot(), {})
    assert commands(actions) == ["ip -n ns1 -4 route change 198.19.0.0/16 table main "
                                 "proto bird scope global metric 50 via 198.18.0.2 "
                                 "dev veth0"]
    p = profile("route dst 198.19.1.0/24 initrwnd 40")
    assert tt.plan_profile(p, snapshot(), {}) == ([], [])


def test_plan_cocktail_in_netns_touches_host_global_with_notes():
    p = tt.parse_profile((PROFILES / "cocktail").read_text(), "cocktail")
    actions, notes = tt.plan_profile(p, snapshot(), {"netns": "ns1"})
    assert commands(actions) == [
        "insmod /src/kmod/tcp_cocktail.ko",
        "sh -c echo measure > /sys/module/tcp_cocktail/parameters/restart",
        "sh -c echo 10 > /sys/module/tcp_cocktail/parameters/iw",
        "sysctl -q -w net.ipv4.tcp_allowed_congestion_control=reno cubic cocktail",
        "ip netns exec ns1 sysctl -q -w net.ipv4.tcp_congestion_control=cocktail",
        "sysctl -q -w net.core.default_qdisc=fq",
    ]
    text = "\n".join(notes)
    assert "whole host" in text and "net.core.default_qdisc is host-global" in text
    assert "module parameter: it applies to every namespace" in text


def test_plan_netns_trap_adds_allowed_entry():
    p = profile("load tcp_bbr\nnet.ipv4.tcp_congestion_control = bbr\n")
    actions, notes = tt.plan_profile(p, snapshot(), {"netns": "ns1"})
    assert commands(actions) == [
        "modprobe tcp_bbr",
        "sysctl -q -w net.ipv4.tcp_allowed_congestion_control=reno cubic bbr",
        "ip netns exec ns1 sysctl -q -w net.ipv4.tcp_congestion_control=bbr"]
    assert any("non-initial namespace can only make an allowed algorithm" in n
               for n in notes)
    # in the initial namespace the kernel allows it by itself
    actions, _ = tt.plan_profile(p, snapshot(target_is_init=True, netns=None), {})
    assert commands(actions, None) == [
        "modprobe tcp_bbr", "sysctl -q -w net.ipv4.tcp_congestion_control=bbr"]
    # ... and when the global list cannot be written, the tool says why
    with pytest.raises(tt.TuneError, match="cannot make 'bbr' the default in this "
                       "namespace: a non-initial namespace may only select an "
                       "algorithm listed in net.ipv4.tcp_allowed_congestion_control"):
        tt.plan_profile(profile("net.ipv4.tcp_congestion_control = bbr"),
                        snapshot(available_cc=["reno", "cubic", "bbr"],
                                 can_write_global=False), {})


@pytest.mark.parametrize("text,msg", [
    ("net.ipv4.tcp_congestion_control = bbr",
     "test.profile:1: net.ipv4.tcp_congestion_control: congestion control 'bbr' is "
     "not available (module tcp_bbr exists but is not loaded: add 'load tcp_bbr'"),
    ("net.ipv4.tcp_congestion_control = vegas",
     "'vegas' is not available (available: reno cubic; no module tcp_vegas)"),
    ("load tcp_nosuch", "test.profile:1: module tcp_nosuch not found"),
    ("tcp_cocktail.iw = 4", "module tcp_cocktail is not loaded; add 'load tcp_cocktail'"),
    ("net.core.default_qdisc = cake", "qdisc 'cake' is not available"),
    ("route default initcwnd 4\n", "test.profile:1: 2 routes match" if False else
     None),
    ("route dst 203.0.113.0/24 initcwnd 4", "test.profile:1: no route to "
     "203.0.113.0/24 IPv4 in table main in namespace ns1"),
    ("route dst 198.19.1.0/24 congctl bbr", "module tcp_bbr exists but is not loaded"),
    ("route dst 198.19.1.0/24 initcwnd 4\nroute all initcwnd 5",
     "test.profile:2: IPv4 198.19.1.0/24 dev dummy0 table main is changed by two "
     "route lines"),
])
def test_plan_profile_errors(text, msg):
    if msg is None:         # profile route lines take every match: no error
        tt.plan_profile(profile(text), snapshot(), {})
        return
    with pytest.raises(tt.TuneError) as e:
        tt.plan_profile(profile(text), snapshot(), {})
    assert msg in str(e.value)


def test_plan_no_global_and_no_routes():
    p = tt.parse_profile((PROFILES / "cocktail").read_text(), "cocktail")
    with pytest.raises(tt.TuneError) as e:
        tt.plan_profile(p, snapshot(), {"netns": "ns1", "no_global": True})
    assert "loading module tcp_cocktail is host-global and cannot be done: " \
        "--no-global was given" in str(e.value)
    p = profile("net.ipv4.tcp_no_metrics_save = 1\n"
                "route dst 203.0.113.0/24 initcwnd 4")
    actions, _ = tt.plan_profile(p, snapshot(), {"no_routes": True})
    assert commands(actions) == [
        "ip netns exec ns1 sysctl -q -w net.ipv4.tcp_no_metrics_save=1"]
    with pytest.raises(tt.TuneError, match="does not exist in this kernel"):
        tt.plan_profile(profile("net.ipv4.tcp_sack = 0"), snapshot(), {})


def test_plan_route_cmd():
    snap = snapshot()
    acts, notes = tt.plan_route_cmd(sel(all=True), {"initcwnd": 4}, snap)
    assert notes == []
    # the metric-200 IPv4 and metric-2048 IPv6 defaults have initcwnd 4 already
    assert [a.label for a in acts] == [
        "IPv4 default via 198.18.0.2 dev veth0 table main metric 100",
        "IPv6 default via fd00:cc::2 dev veth0 table main metric 1024"]
    with pytest.raises(tt.TuneError, match="modprobe tcp_bbr first"):
        tt.plan_route_cmd(sel(all=True), {"congctl": "bbr"}, snap)
    # "all": routes the kernel cannot tell apart (fe80::/64 on three devices,
    # same metric) are skipped with a note, not changed at random
    acts, notes = tt.plan_route_cmd(sel("all", all=True), {"initcwnd": 9}, snap)
    labels = [a.label for a in acts]
    assert not any("fe80::/64" in lbl for lbl in labels)
    assert len([n for n in notes if "fe80::/64" in n]) == 3
    assert "IPv4 198.19.1.0/24 dev dummy0 table main" in labels
    # ... but named explicitly, the ambiguity is an error
    import ipaddress
    with pytest.raises(tt.TuneError, match="share destination, table, tos and metric"):
        tt.plan_route_cmd(sel("dst", prefix=ipaddress.ip_network("fe80::/64"),
                              families=(6,), dev="veth1"), {"initcwnd": 9}, snap)


# ---------------------------------------------------- state and revert

def test_record_originals_keeps_the_first_original():
    snap = snapshot()
    st = tt.new_state(tt.Identity(boot_id="b", netns_cookie="1"), "ns1")
    a1, _ = tt.plan_profile(profile("net.ipv4.tcp_slow_start_after_idle = 0\n"
                                    "route dst 198.19.1.0/24 initcwnd 4"), snap, {})
    tt.record_originals(st, a1, snap)
    orig_route = copy.deepcopy(st.routes)
    # pretend the first change happened, then change again
    snap2 = copy.deepcopy(snap)
    snap2.sysctl["net.ipv4.tcp_slow_start_after_idle"] = "0"
    for r in snap2.routes[4]:
        if r["dst"] == "198.19.1.0/24":
            r["metrics"][0]["initcwnd"] = 4
    a2, _ = tt.plan_profile(profile("net.ipv4.tcp_slow_start_after_idle = 1\n"
                                    "route dst 198.19.1.0/24 initcwnd 7"), snap2, {})
    assert len(a2) == 2
    tt.record_originals(st, a2, snap2)
    assert st.sysctl == {"net.ipv4.tcp_slow_start_after_idle": "1"}
    assert st.routes == orig_route
    # only the metric tcp-tune changed is saved: the route had no initcwnd
    assert list(st.routes.values())[0].metrics == {"initcwnd": None}
    # revert from the twice-changed system restores the first original
    acts, notes = tt.plan_revert(st, snap2, {})
    assert commands(acts) == [
        "ip -n ns1 -4 route change 198.19.1.0/24 table main proto boot scope link dev "
        "dummy0 initrwnd 40",
        "ip netns exec ns1 sysctl -q -w net.ipv4.tcp_slow_start_after_idle=1"]


def test_revert_refuses_when_a_saved_route_is_gone():
    snap = snapshot()
    st = tt.new_state(tt.Identity(), "ns1")
    a, _ = tt.plan_profile(profile("route dst 198.19.1.0/24 initcwnd 4"), snap, {})
    tt.record_originals(st, a, snap)
    gone = copy.deepcopy(snap)
    gone.routes[4] = [r for r in gone.routes[4] if r["dst"] != "198.19.1.0/24"]
    with pytest.raises(tt.TuneError, match="saved route IPv4 198.19.1.0/24 dev dummy0 "
                       "table main no longer exists .*--skip-missing"):
        tt.plan_revert(st, gone, {})
    acts, notes = tt.plan_revert(st, gone, {"skip_missing": True})
    assert acts == [] and "skipped" in notes[0]


def test_revert_keeps_what_changed_since_on_the_route():
    """Revert sets back only the metrics tcp-tune changed, on the route as
    it is at revert time: a gateway a DHCP client moved since, and a metric
    someone added since, stay."""
    p = tt.parse_profile((PROFILES / "no-ssr").read_text(), "no-ssr")
    snap = snapshot()
    acts, _ = tt.plan_profile(p, snap, {"netns": "ns1"})
    st = tt.new_state(tt.Identity(), "ns1")
    tt.record_originals(st, acts, snap)
    saved = {r.label: (r.metrics, r.locked) for r in st.routes.values()}
    assert saved == {
        "IPv4 default via 198.18.1.2 dev veth1 table main metric 200":
            ({"initcwnd": 4}, []),
        "IPv6 default via fd00:cc:1::2 dev veth1 table main metric 2048":
            ({"initcwnd": 4}, [])}
    now = copy.deepcopy(snap)
    for r in now.routes[4]:
        if r["dst"] == "default" and r.get("metric") == 200:
            r["gateway"] = "198.18.1.9"
            r["metrics"] = [{"initcwnd": 10, "mtu": 1300}]
    for r in now.routes[6]:
        if r["dst"] == "default" and r.get("metric") == 2048:
            r["gateway"] = "fd00:cc:1::9"
            r["metrics"] = [{"initcwnd": 10}]
    st.routes[[k for k in st.routes if k.startswith("6|")][0]].metrics = {
        "initcwnd": None}           # as if the route had had no initcwnd
    acts, notes = tt.plan_revert(st, now, {})
    assert commands(acts) == [
        "ip -n ns1 -4 route change default table main proto boot scope global "
        "metric 200 via 198.18.1.9 dev veth1 mtu 1300 initcwnd 4",
        "ip -n ns1 -6 route change default table main proto boot metric 2048 pref "
        "medium via fd00:cc:1::9 dev veth1"]
    # nothing to do when the metrics are back already
    for r in now.routes[4] + now.routes[6]:
        if r["dst"] == "default" and r.get("metric") in (200, 2048):
            r["metrics"] = [{"initcwnd": 4}] if r.get("metric") == 200 else []
    assert tt.plan_revert(st, now, {}) == ([], [])


def test_revert_restores_a_lock_flag():
    snap = snapshot(netns=None)
    acts, _ = tt.plan_profile(profile("route default -4 dev veth0 initcwnd 3 "
                                      "congctl reno"), snap, {})
    st = tt.new_state(tt.Identity(), None)
    tt.record_originals(st, acts, snap)
    r = list(st.routes.values())[0]
    assert r.metrics == {"initcwnd": 10, "congestion": "cubic"} and r.locked == []
    key = list(st.routes)[0]
    now = copy.deepcopy(snap)
    for r in now.routes[4]:
        if tt.route_key(r, 4) == key:
            m = tt.routes.route_metrics(r)
            m.update(initcwnd=3, congestion="reno")
            r["metrics"] = [m]
    cmd = commands(tt.plan_revert(st, now, {})[0], None)
    assert len(cmd) == 1 and "initcwnd 10 " in cmd[0] and "congctl cubic" in cmd[0]
    # a metric that was locked gets its lock back
    st.routes[key].locked = ["congestion"]
    cmd = commands(tt.plan_revert(st, now, {})[0], None)
    assert "congctl lock cubic" in cmd[0]


def test_revert_order_default_cc_before_allowed():
    snap = snapshot()
    st = tt.new_state(tt.Identity(), "ns1")
    st.sysctl["net.ipv4.tcp_congestion_control"] = "cubic"
    st.global_sysctl["net.ipv4.tcp_allowed_congestion_control"] = "reno cubic"
    now = copy.deepcopy(snap)
    now.sysctl["net.ipv4.tcp_congestion_control"] = "bbr"
    now.global_sysctl["net.ipv4.tcp_allowed_congestion_control"] = "reno cubic bbr"
    acts, _ = tt.plan_revert(st, now, {})
    assert commands(acts) == [
        "ip netns exec ns1 sysctl -q -w net.ipv4.tcp_congestion_control=cubic",
        "sysctl -q -w net.ipv4.tcp_allowed_congestion_control=reno cubic"]


def test_state_file_is_written_atomically(tmp_path):
    st = tt.State(str(tmp_path / "s"), "ns1")
    assert st.load() is None
    data = tt.new_state(tt.Identity(boot_id="x", netns_cookie="7"), "ns1")
    st.save(data)
    assert st.file.endswith("netns-ns1.json")
    assert st.load() == data
    assert json.loads(Path(st.file).read_text()) == json.loads(json.dumps(data.to_json()))
    assert [p.name for p in (tmp_path / "s").iterdir()] == ["netns-ns1.json"]
    st.remove()
    assert st.load() is None


# A state file as tcp-tune wrote it in format 1 (each route's whole
# argument list): json.dump(..., indent=1, sort_keys=True) plus a newline.
STATE_V1 = json.dumps({
    "global_sysctl": {"net.core.default_qdisc": "pfifo_fast",
                      "net.ipv4.tcp_allowed_congestion_control": "reno cubic"},
    "identity": {"boot_id": "3f1c0e6a-5d2b-4c1e-9a7f-2b8d4e6f1a0c",
                 "netns_cookie": "4097"},
    "module_params": {"tcp_cocktail": {"iw": "10", "restart": None}},
    "modules_loaded": {"tcp_vegas": "/src/kmod/tcp_vegas.ko"},
    "netns": "ns1",
    "routes": {"4|main|unicast|198.19.1.0/24|0||0": {
        "args": ["198.19.1.0/24", "table", "main", "proto", "boot", "scope", "link",
                 "dev", "dummy0", "initcwnd", "lock", "7", "rto_min", "50ms",
                 "initrwnd", "40"],
        "family": 4, "label": "IPv4 198.19.1.0/24 dev dummy0 table main"}},
    "saved_at": "2026-01-02T03:04:05Z",
    "sysctl": {"net.ipv4.tcp_congestion_control": "cubic"},
    "version": 1}, indent=1, sort_keys=True) + "\n"


def test_state_file_format_1_is_read_as_format_2(tmp_path):
    st = tt.State(str(tmp_path), "ns1")
    Path(st.file).write_text(STATE_V1)
    s = st.load()
    assert s.identity == tt.Identity(boot_id="3f1c0e6a-5d2b-4c1e-9a7f-2b8d4e6f1a0c",
                                     netns_cookie="4097")
    assert s.netns == "ns1" and s.saved_at == "2026-01-02T03:04:05Z"
    assert s.sysctl == {"net.ipv4.tcp_congestion_control": "cubic"}
    assert s.global_sysctl["net.ipv4.tcp_allowed_congestion_control"] == "reno cubic"
    assert s.modules_loaded == {"tcp_vegas": "/src/kmod/tcp_vegas.ko"}
    assert s.module_params == {"tcp_cocktail": {"iw": "10", "restart": None}}
    # the route's five tunable metrics, not its whole argument list
    assert s.routes == {"4|main|unicast|198.19.1.0/24|0||0": tt.SavedRoute(
        family=4, label="IPv4 198.19.1.0/24 dev dummy0 table main",
        metrics={"initcwnd": 7, "initrwnd": 40, "quickack": None,
                 "congestion": None, "rto_min": 50},
        locked=["initcwnd"])}
    st.save(s)
    d = json.loads(Path(st.file).read_text())
    assert d["version"] == 2
    assert d["routes"]["4|main|unicast|198.19.1.0/24|0||0"] == {
        "family": 4, "label": "IPv4 198.19.1.0/24 dev dummy0 table main",
        "metrics": {"initcwnd": 7, "initrwnd": 40, "quickack": None,
                    "congestion": None, "rto_min": 50}, "locked": ["initcwnd"]}
    assert st.load() == s
    # keys this version does not know survive a load and save
    d["later"] = {"x": [1]}
    Path(st.file).write_text(json.dumps(d))
    st.save(st.load())
    assert json.loads(Path(st.file).read_text()) == d
    d["version"] = 3
    Path(st.file).write_text(json.dumps(d))
    with pytest.raises(tt.TuneError, match="has unknown version 3"):
        st.load()


# (what is forged, the change to the file's JSON, the message)
FORGED = [
    ("sysctl-key", lambda d: d["sysctl"].update({"kernel.modprobe": "/tmp/x"}),
     r"sysctl: unknown key 'kernel.modprobe'"),
    ("global-key-in-ns", lambda d: d["sysctl"].update(
        {"net.core.default_qdisc": "fq"}), r"sysctl: unknown key 'net.core"),
    ("sysctl-value", lambda d: d["sysctl"].update(
        {"net.ipv4.tcp_congestion_control": "cubic\nnet.x=1"}),
     r"not a congestion control name"),
    ("module", lambda d: d["modules_loaded"].update({"nf_tables": None}),
     r"module 'nf_tables' is not one tcp-tune loads"),
    ("module-path", lambda d: d["modules_loaded"].update(
        {"tcp_vegas": "/tmp/evil.ko"}), r"tcp_vegas: bad path"),
    ("param-module", lambda d: d["module_params"].update({"tcp_other": {"x": "1"}}),
     r"unknown module 'tcp_other'"),
    ("param-name", lambda d: d["module_params"]["tcp_cocktail"].update({"stats": "1"}),
     r"tcp_cocktail has no writable parameter 'stats'"),
    ("param-value", lambda d: d["module_params"]["tcp_cocktail"].update(
        {"restart": "$(reboot)"}), r"must be one of"),
    ("route-metric", lambda d: d["routes"]["4|main|unicast|198.19.1.0/24|0||0"][
        "metrics"].update({"mtu": 9000}), r"metric 'mtu' is not one tcp-tune changes"),
    ("route-value", lambda d: d["routes"]["4|main|unicast|198.19.1.0/24|0||0"][
        "metrics"].update({"initcwnd": "10 via 10.0.0.1"}), r"initcwnd: bad value"),
    ("route-key", lambda d: d["routes"].update({"6|x": {"family": 6, "label": "",
                                                        "metrics": {}}}),
     r"routes: bad entry '6\|x'"),
    ("netns", lambda d: d.update({"netns": "other"}), r"netns: 'other'"),
]


@pytest.mark.parametrize("forge", FORGED, ids=[f[0] for f in FORGED])
def test_state_file_contents_are_checked_before_use(tmp_path, forge):
    _id, change, msg = forge
    st = tt.State(str(tmp_path), "ns1")
    Path(st.file).write_text(STATE_V1)
    st.save(st.load())
    d = json.loads(Path(st.file).read_text())
    change(d)
    Path(st.file).write_text(json.dumps(d))
    with pytest.raises(tt.TuneError, match="not one tcp-tune wrote") as e:
        st.load()
    assert re.search(msg, str(e.value)), str(e.value)


def test_state_directory_must_be_trusted(tmp_path):
    real = tmp_path / "real"
    st = tt.State(str(real), None)
    st.lock()                             # created, owned by us, 0755
    assert (real.stat().st_mode & 0o777) == 0o755
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(tt.TuneError, match="is a symbolic link"):
        tt.State(str(link), None).lock()
    with pytest.raises(tt.TuneError, match="is a symbolic link"):
        tt.State(str(link), None).load()
    for mode in (0o777, 0o775, 0o757, 0o1777):
        real.chmod(mode)
        with pytest.raises(tt.TuneError, match="writable by group or others"):
            tt.State(str(real), None).lock()
        with pytest.raises(tt.TuneError, match="writable by group or others"):
            tt.State(str(real), None).load()
    real.chmod(0o755)
    # the state file and the lock: no symbolic links, no group/world write
    target = tmp_path / "elsewhere.json"
    target.write_text(STATE_V1)
    (real / "default.json").symlink_to(target)
    with pytest.raises(tt.TuneError, match="symbolic link"):
        tt.State(str(real), None).load()
    (real / "default.json").unlink()
    (real / "default.json").write_text(STATE_V1.replace('"ns1"', "null"))
    (real / "default.json").chmod(0o666)
    with pytest.raises(tt.TuneError, match="writable by group or others"):
        tt.State(str(real), None).load()
    (real / ".lock").unlink()
    (real / ".lock").symlink_to(tmp_path / "victim")
    with pytest.raises(tt.TuneError, match="lock"):
        tt.State(str(real), None).lock()
    assert not (tmp_path / "victim").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_state_directory_owned_by_another_user_is_refused(tmp_path):
    d = tmp_path / "s"
    d.mkdir(mode=0o755)
    os.chown(d, 65534, 65534)
    with pytest.raises(tt.TuneError, match="owned by uid 65534, not by uid 0"):
        tt.State(str(d), None).lock()


# ------------------------------------------------------------ transaction

class Step(tt.Action):
    def __init__(self, log, name, fail=False):
        self.log, self.name, self.fail = log, name, fail

    def command(self, ctx):
        return ["step", self.name]

    def do(self, ctx):
        if self.fail:
            raise tt.StepError("%s broke" % self.name)
        self.log.append(self.name)

    def undo_action(self):
        return Step(self.log, "undo-" + self.name)


def test_failure_part_way_undoes_in_reverse_order():
    log = []
    with pytest.raises(tt.StepError) as e:
        tt.run_actions(tt.Host(), [Step(log, "a"), Step(log, "b"),
                                   Step(log, "c", fail=True), Step(log, "d")])
    assert log == ["a", "b", "undo-b", "undo-a"]
    assert "step 3 of 4 failed: c broke" in str(e.value)
    assert "rolled back the 2 change(s) already made" in str(e.value)


# -------------------------------------------------------------------- CLI

def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT)] + list(args),
                          capture_output=True, text=True)


def _imports(path):
    """Top-level names of the modules a file imports (relative: "")."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("" if node.level else node.module.split(".")[0])
    return names


def test_cli_is_a_launcher_and_a_stdlib_package():
    src = SCRIPT.read_text()
    assert src.startswith("#!/usr/bin/env python3\n")
    assert SCRIPT.stat().st_mode & 0o111
    assert len(src.splitlines()) <= 20
    assert _imports(SCRIPT) <= set(sys.stdlib_module_names) | {"tcp_tune"}
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) > 1
    for m in modules:
        assert _imports(m) <= set(sys.stdlib_module_names) | {"tcp_tune", ""}, m.name


def test_installed_layout_runs_outside_the_checkout(tmp_path):
    """Installed, the launcher is in $PREFIX/sbin and the package in
    $PREFIX/lib/tcp-cocktail/tcp_tune; no __pycache__ is written there."""
    sbin, lib = tmp_path / "sbin", tmp_path / "lib" / "tcp-cocktail"
    sbin.mkdir()
    shutil.copy2(SCRIPT, sbin / "tcp-tune")
    shutil.copytree(PACKAGE, lib / "tcp_tune",
                    ignore=shutil.ignore_patterns("__pycache__"))
    p = subprocess.run([str(sbin / "tcp-tune"), "--help"], cwd="/",
                       capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: tcp-tune ")
    assert p.stdout == run("--help").stdout
    p = subprocess.run([str(sbin / "tcp-tune"), "--dry-run", "route", "--default",
                        "initcwnd", "0"], cwd="/", capture_output=True, text=True)
    assert p.returncode == 2 and "out of range 1..1024" in p.stderr
    assert not list(tmp_path.rglob("__pycache__"))


def test_cli_validation_errors_exit_2_before_touching_anything():
    p = run("--dry-run", "route", "--default", "initcwnd", "0")
    assert p.returncode == 2 and "out of range 1..1024" in p.stderr
    assert "nothing was changed" in p.stderr
    p = run("--dry-run", "apply", "no-such")
    assert p.returncode == 2 and "no profile named" in p.stderr
    p = run("--dry-run", "route", "--dst", "10.0.0.0/8", "-6", "initcwnd", "4")
    assert p.returncode == 2 and "is IPv4 but -6 was given" in p.stderr
    p = run("--netns", "tt-surely-missing", "show")
    assert p.returncode == 2 and "does not exist" in p.stderr


@pytest.mark.parametrize("name,msg", [
    ("..", "not a namespace name"), (".", "not a namespace name"),
    ("../../etc", "not a namespace name"), ("a/b", "not a namespace name"),
    ("", "empty namespace name"), ("n" * 245, "longer than 244 bytes"),
    ("x\ny", "control characters")])
def test_netns_names_are_validated(name, msg):
    for cmd in (["show"], ["--dry-run", "apply", "no-ssr"]):
        p = run("--netns", name, *cmd)
        assert p.returncode == 2 and msg in p.stderr, p.stderr
        assert "nothing was changed" in p.stderr


def test_the_tool_runs_no_commands_from_the_environment():
    """No test hook in the installed tool: nothing in the package reads
    TCP_TUNE_* variables other than the documented two, or runs a shell."""
    for m in PACKAGE.glob("*.py"):
        src = m.read_text()
        assert "shell=True" not in src, m.name
        for var in set(re.findall(r"TCP_TUNE_[A-Z_]+", src)):
            assert var in ("TCP_TUNE_STATE_DIR", "TCP_TUNE_MODULE_PATH"), (m.name, var)


def test_profile_cocktail_measure_policy():
    p = profile("load tcp_cocktail\ntcp_cocktail.restart = measure\n"
                "tcp_cocktail.check_rtt_pct = 150\n"
                "tcp_cocktail.check_rate_pct = 60\n"
                "tcp_cocktail.ssthresh_est = 0\n"
                "tcp_cocktail.pace_rate = delivery\n")
    assert [(m, k, v) for _, m, k, v in p.params] == [
        ("tcp_cocktail", "restart", "measure"),
        ("tcp_cocktail", "check_rtt_pct", "150"),
        ("tcp_cocktail", "check_rate_pct", "60"),
        ("tcp_cocktail", "ssthresh_est", "0"),
        ("tcp_cocktail", "pace_rate", "delivery")]

"""Shaped namespace topologies: network namespaces joined by veth pairs with
netem/tbf shaping (the engine of scripts/netem-topo), and the Topo and
Pair context managers the VM tests and the bench build on.

    from cocktail_lab.topo import Topo

    with Topo(rtt=100, rate="10mbit") as t:
        srv = t.start(t.server, ["python3", "server.py"], ready=r"^listening")
        t.run(t.client, ["curl", "http://%s:8000/" % t.server_addr])

The topology's shape (single sender or dumbbell), where the shaping sits
and why, and the addresses are drawn in USAGE below, netem-topo's help:
the keyword arguments of Topo are its options (rtt, rate, limit, red,
loss, loss_dir, reorder, ...; senders=N, dumbbell=True).

State: STATE_DIR/NAME.json (the description up() returned), so that
`netem-topo list/show/down` find topologies made by any process.

Links, addresses and routes are made with ip(8), qdiscs with tc(8) (the
description records the exact tc commands, which an operator can rerun),
offloads with ethtool(8); sysctls are written by a thread inside the
namespace (proc.sysctl). Standard library only: scripts/netem-topo runs
with the system's python3.
"""
import ipaddress
import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

from . import proc

REPO = Path(__file__).resolve().parents[2]
# The traffic tool's command: run as a module (-m), so its compiled form
# is cached like the rest of the library; a script path would be compiled
# again at every start, which in the test VM (TCG)
# costs more than a second a process.  `env` puts the library on the
# child's path whatever the caller's environment says.
TRAFFIC = ["env", "PYTHONPATH=%s" % (REPO / "lab"), sys.executable, "-m",
           "cocktail_lab.traffic"]
STATE_DIR = os.environ.get("NETEM_TOPO_STATE", "/run/netem-topo")
PROG = "netem-topo"

DEFAULTS = dict(rtt="100", rate="10mbit", limit="100", red=False, loss="",
                loss_dir="fwd", reorder="", reorder_corr="0", reorder_gap="",
                reorder_dir="fwd", senders="1", dumbbell=False, mtu="1500",
                id="")
FLAGS = ("red", "dumbbell")
VALUED = ("rtt", "rate", "limit", "loss", "loss_dir", "reorder",
          "reorder_corr", "reorder_gap", "reorder_dir", "senders", "mtu", "id")
TOOLS = ("ip", "tc", "ethtool", "sysctl")


class TopoError(RuntimeError):
    """A topology that cannot be made or found. `usage` is True for bad
    arguments (nothing was touched)."""

    def __init__(self, msg, usage=True):
        super().__init__(msg)
        self.usage = usage


class UpFailed(TopoError):
    """A command failed while building; what was made has been removed."""

    def __init__(self, msg):
        super().__init__(msg, usage=False)


# ------------------------------------------------------------------ options

_DEC = re.compile(r"^[0-9]+(\.[0-9]+)?$")
_RATE = re.compile(r"^([0-9]+(\.[0-9]+)?)(bit|kbit|mbit|gbit)$")
_UNIT = {"bit": 1, "kbit": 1000, "mbit": 1000000, "gbit": 1000000000}


def rate_bps(rate):
    """A rate N[.N](bit|kbit|mbit|gbit) in bits per second (int), or None."""
    m = _RATE.match(rate.lower())
    if not m:
        return None
    return int(float(m.group(1)) * _UNIT[m.group(3)])


def _is_pct(v, zero=False):
    if not _DEC.match(v):
        return False
    x = float(v)
    return (x >= 0 if zero else x > 0) and x <= 100


def _uint(v):
    """int(v) for a decimal integer below 10^9, else None."""
    return int(v) if re.match(r"^[0-9]+$", v) and int(v) < 1000000000 \
        else None


def _in(v, lo, hi):
    n = _uint(v)
    return n is not None and lo <= n <= hi


def _num(v):
    """A decimal option as the JSON number it was written as."""
    return float(v) if "." in v else int(v)


def parse_up(argv):
    """The options of `netem-topo up` (a list of words) as a dict of
    strings (flags as bools), validated. Raises TopoError (usage) with
    the CLI's message; -h/--help raises SystemExit via usage()."""
    o = dict(DEFAULTS)
    i = 0
    while i < len(argv):
        opt = argv[i]
        key = opt[2:].replace("-", "_")
        if opt != "--" + key.replace("_", "-"):
            key = None
        if key in FLAGS:
            o[key] = True
            i += 1
            continue
        if opt in ("-h", "--help"):
            usage()
        if key not in VALUED:
            raise TopoError("unknown option '%s' (see: %s up --help)" %
                            (opt, PROG))
        if i + 1 >= len(argv):
            raise TopoError("option %s needs a value" % opt)
        v = argv[i + 1]
        i += 2
        if key == "rtt":
            if not (_DEC.match(v) and 0 <= float(v) <= 10000):
                raise TopoError("--rtt: '%s' is not a delay in ms (0..10000)"
                                % v)
            o[key] = v
        elif key == "rate":
            if rate_bps(v) is None:
                raise TopoError("--rate: '%s' is not a rate like 10mbit, "
                                "500kbit, 1gbit" % v)
            o[key] = v.lower()
        elif key == "limit":
            if not _in(v, 1, 100000):
                raise TopoError("--limit: '%s' is not a packet count "
                                "(1..100000)" % v)
            o[key] = v
        elif key in ("loss", "reorder"):
            if not _is_pct(v):
                raise TopoError("--%s: '%s' is not a percentage "
                                "(0 < x <= 100)" % (key, v))
            o[key] = v
        elif key == "reorder_corr":
            if not _is_pct(v, zero=True):
                raise TopoError("--reorder-corr: '%s' is not a percentage"
                                % v)
            o[key] = v
        elif key == "reorder_gap":
            if not _in(v, 1, 999999999):
                raise TopoError("--reorder-gap: '%s' is not a positive "
                                "integer" % v)
            o[key] = v
        elif key in ("loss_dir", "reorder_dir"):
            if v not in ("fwd", "rev", "both"):
                raise TopoError("%s: '%s' must be fwd, rev or both" % (opt, v))
            o[key] = v
        elif key == "senders":
            if not _in(v, 1, 32):
                raise TopoError("--senders: '%s' must be 1..32" % v)
            o[key] = v
        elif key == "mtu":
            if not _in(v, 576, 9000):
                raise TopoError("--mtu: '%s' must be 576..9000" % v)
            o[key] = v
        elif key == "id":
            if not re.match(r"^[a-z0-9]{2,8}$", v):
                raise TopoError("--id: '%s' must match [a-z0-9]{2,8}" % v)
            o[key] = v
    if o["reorder"] and float(o["rtt"]) == 0:
        raise TopoError("--reorder needs a delay (--rtt > 0): netem reorders "
                        "by sending some packets without the delay")
    if o["reorder_gap"] and not o["reorder"]:
        raise TopoError("--reorder-gap needs --reorder")
    return o


def kwargs_argv(opts):
    """Keyword options (rtt=100, red=True, loss_dir="rev", ...) as the
    words of `netem-topo up`; None and False leave an option out."""
    a = []
    for k, v in opts.items():
        if v is None or v is False:
            continue
        flag = "--" + k.replace("_", "-")
        if v is True:
            a.append(flag)
        else:
            a += [flag, str(v)]
    return a


# ------------------------------------------------------------------ building

def _run(argv):
    """Run a command; raise UpFailed with its stderr when it fails."""
    p = subprocess.run(argv, text=True, capture_output=True)
    if p.returncode:
        raise UpFailed("%s: status %d: %s" % (" ".join(argv), p.returncode,
                                              p.stderr.strip()))
    return p.stdout


def netns_list():
    """Names of the named network namespaces (ip -j netns list)."""
    p = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True,
                       text=True)
    try:
        return [n["name"] for n in json.loads(p.stdout or "[]")]
    except ValueError:
        return []


def add_ns(ns, made):
    """A namespace with lo up and IPv6 duplicate address detection off;
    appended to MADE once it exists."""
    _run(["ip", "netns", "add", ns])
    made.append(ns)
    _run(["ip", "-n", ns, "link", "set", "lo", "up"])
    proc.sysctl(ns, "net.ipv6.conf.all.accept_dad", 0)
    proc.sysctl(ns, "net.ipv6.conf.default.accept_dad", 0)


def offloads_off(ns, dev):
    _run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off",
          "gso", "off", "gro", "off"])


def veth(ns1, d1, ns2, d2, mtu=None, link_args=()):
    """A veth pair D1 (in NS1) -- D2 (in NS2), offloads off, up. MTU and
    LINK_ARGS (e.g. gso_max_segs 1) apply to both ends."""
    extra = (["mtu", str(mtu)] if mtu else []) + list(link_args)
    _run(["ip", "-n", ns1, "link", "add", d1] + extra +
         ["type", "veth", "peer", "name", d2, "netns", ns2] + extra)
    for ns, dev in ((ns1, d1), (ns2, d2)):
        offloads_off(ns, dev)
        _run(["ip", "-n", ns, "link", "set", dev, "up"])


def addr(ns, dev, v4, v6):
    """Addresses V4/PFX and V6/PFX (no duplicate address detection)."""
    _run(["ip", "-n", ns, "addr", "add", v4, "dev", dev])
    _run(["ip", "-n", ns, "-6", "addr", "add", v6, "dev", dev, "nodad"])


def route(ns, dst, via, dev, v6=False):
    _run(["ip", "-n", ns] + (["-6"] if v6 else []) +
         ["route", "add", dst, "via", via, "dev", dev])


def tc(ns, words, record=None):
    """tc WORDS in namespace NS; the command line is appended to RECORD."""
    argv = ["ip", "netns", "exec", ns, "tc"] + list(words)
    if record is not None:
        record.append(" ".join(argv))
    _run(argv)


class PreparedTc:
    """tc WORDS in namespace NS, started now and run later: the program
    (tc -batch, in the namespace) is running and waits for the command on
    its standard input, so run() costs a netlink round trip instead of
    two program starts (ip netns exec, tc), which take a quarter of a
    second or more in a TCG guest: longer than the RTO of a 20 ms path,
    so a test that changed the link between two sends would make the
    second a restart after idle. A context manager: leaving it ends a tc
    that was never run."""

    def __init__(self, ns, words):
        self.line = " ".join(words)
        self.argv = ["ip", "netns", "exec", ns, "tc", "-batch", "-"]
        self.p = subprocess.Popen(self.argv, text=True,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)

    def run(self):
        """Hand tc the command and wait for it; UpFailed if tc failed."""
        _, err = self.p.communicate(self.line + "\n", timeout=60)
        if self.p.returncode:
            raise UpFailed("%s (%s): status %d: %s" % (
                " ".join(self.argv), self.line, self.p.returncode,
                err.strip()))

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _impair(o, direction):
    """netem impairment words for one direction (fwd or rev)."""
    w = []
    if o["loss"] and o["loss_dir"] in ("both", direction):
        w += ["loss", o["loss"] + "%"]
    if o["reorder"] and o["reorder_dir"] in ("both", direction):
        w += ["reorder", o["reorder"] + "%", o["reorder_corr"] + "%"]
        if o["reorder_gap"]:
            w += ["gap", o["reorder_gap"]]
    return w


def _shape(ns, dev, o, sz, direction, record):
    """Delay (+ impairments) on DEV's egress; toward the clients also the
    bottleneck as the delay's child."""
    tc(ns, ["qdisc", "add", "dev", dev, "root", "handle", "1:", "netem",
            "delay", "%dus" % sz["half_us"]] + _impair(o, direction) +
       ["limit", "100000"], record)
    if direction != "fwd":
        return
    if o["red"]:
        tc(ns, ["qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:",
                "tbf", "rate", o["rate"], "burst", str(sz["tbf_burst"]),
                "limit", str(sz["limit_bytes"])], record)
        tc(ns, ["qdisc", "add", "dev", dev, "parent", "10:1", "handle", "20:",
                "red", "limit", str(sz["limit_bytes"]), "min",
                str(sz["red_min"]), "max", str(sz["red_max"]), "avpkt",
                str(sz["frame"]), "bandwidth", o["rate"], "probability",
                "0.1"], record)
    else:
        tc(ns, ["qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:",
                "netem", "rate", o["rate"], "limit", o["limit"]], record)


def _sizes(o):
    """Derived numbers: half the RTT, frame and queue sizes, tbf bucket,
    RED thresholds."""
    mtu, limit = int(o["mtu"]), int(o["limit"])
    frame = mtu + 14
    sz = {"half_us": int(float(o["rtt"]) * 500), "frame": frame,
          "limit_bytes": limit * frame, "bps": rate_bps(o["rate"])}
    # tbf bucket: at least two frames and one jiffy (HZ >= 100) of tokens
    sz["tbf_burst"] = max(sz["bps"] // 8 // 100 + frame, 2 * frame)
    red_max = sz["limit_bytes"] // 2
    red_min = max(red_max // 3, frame)
    if red_max <= red_min:
        red_max = red_min + frame
    sz["red_min"], sz["red_max"] = red_min, red_max
    return sz


def _need_root():
    if os.geteuid() != 0:
        raise TopoError("must run as root")


def _state(name):
    return Path(STATE_DIR, name + ".json")


def up(argv=(), **opts):
    """Build a topology from the words of `netem-topo up` (ARGV) or
    keyword options (OPTS, see kwargs_argv); return its description (the
    JSON `netem-topo up` prints), also saved in the state directory.
    Raises TopoError for bad options or an existing name, UpFailed when a
    command failed (everything made so far is removed first)."""
    o = parse_up(list(argv) + kwargs_argv(opts))
    _need_root()
    import shutil
    for tool in TOOLS:
        if not shutil.which(tool):
            raise TopoError("%s is not installed" % tool)
    sz = _sizes(o)
    if o["red"] and sz["limit_bytes"] <= sz["red_max"]:
        raise TopoError("--red needs --limit of at least 4 packets")
    os.makedirs(STATE_DIR, exist_ok=True)
    name = o["id"] or "nt" + os.urandom(3).hex()
    if _state(name).exists() or \
            any(ns.startswith(name + "-") for ns in netns_list()):
        raise TopoError("topology '%s' already exists (%s down %s)" %
                        (name, PROG, name))
    made = []
    try:
        info = _build(name, o, sz, made)
        text = json.dumps(info)
        _state(name).write_text(text + "\n")
        return info
    except BaseException:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        try:
            _state(name).unlink()
        except FileNotFoundError:
            pass
        raise


def _build(name, o, sz, made):
    senders, mtu = int(o["senders"]), int(o["mtu"])
    dumb = senders > 1 or o["dumbbell"]
    servers = ["%s-s%d" % (name, i) for i in range(senders)]
    clients = ["%s-c%d" % (name, i) for i in range(senders)]
    if dumb:
        rl, rr = name + "-rl", name + "-rr"
        routers = [rl, rr]
    else:
        rl = rr = name + "-r"
        routers = [rl]
    for ns in routers + servers + clients:
        add_ns(ns, made)
    for ns in routers:
        proc.sysctl(ns, "net.ipv4.ip_forward", 1)
        proc.sysctl(ns, "net.ipv6.conf.all.forwarding", 1)

    pairs = []
    for i in range(senders):
        s4, sr4 = "198.18.%d.2" % (16 + i), "198.18.%d.1" % (16 + i)
        c4, cr4 = "198.19.%d.2" % (16 + i), "198.19.%d.1" % (16 + i)
        s6, sr6 = "fd00:cc:1:%d::2" % i, "fd00:cc:1:%d::1" % i
        c6, cr6 = "fd00:cc:2:%d::2" % i, "fd00:cc:2:%d::1" % i
        veth(servers[i], "to-r", rl, "to-s%d" % i, mtu)
        veth(clients[i], "to-r", rr, "to-c%d" % i, mtu)
        addr(servers[i], "to-r", s4 + "/24", s6 + "/64")
        addr(rl, "to-s%d" % i, sr4 + "/24", sr6 + "/64")
        addr(clients[i], "to-r", c4 + "/24", c6 + "/64")
        addr(rr, "to-c%d" % i, cr4 + "/24", cr6 + "/64")
        route(servers[i], "default", sr4, "to-r")
        route(servers[i], "default", sr6, "to-r", v6=True)
        route(clients[i], "default", cr4, "to-r")
        route(clients[i], "default", cr6, "to-r", v6=True)
        pairs.append({
            "index": i, "server_ns": servers[i], "client_ns": clients[i],
            "server_dev": "to-r", "client_dev": "to-r",
            "server_addr": s4, "server_addr6": s6,
            "client_addr": c4, "client_addr6": c6,
            "server_gw": sr4, "client_gw": cr4,
            "capture_ns": rl, "capture_dev": "to-s%d" % i,
            "receiver_ns": clients[i], "receiver_dev": "to-r"})
    record = []
    if dumb:
        veth(rl, "to-rr", rr, "to-rl", mtu)
        addr(rl, "to-rr", "198.18.0.1/30", "fd00:cc:3::1/64")
        addr(rr, "to-rl", "198.18.0.2/30", "fd00:cc:3::2/64")
        route(rl, "198.19.0.0/16", "198.18.0.2", "to-rr")
        route(rl, "fd00:cc:2::/48", "fd00:cc:3::2", "to-rr", v6=True)
        # the server hosts' subnets 198.18.16-47.0/24 (up to 32 senders);
        # the routers' own /30 stays the more specific, connected route
        route(rr, "198.18.0.0/16", "198.18.0.1", "to-rl")
        route(rr, "fd00:cc:1::/48", "fd00:cc:3::1", "to-rl", v6=True)
        fwd, rev = (rl, "to-rr"), (rr, "to-rl")
    else:
        fwd, rev = (rl, "to-c0"), (rl, "to-s0")
    _shape(fwd[0], fwd[1], o, sz, "fwd", record)
    _shape(rev[0], rev[1], o, sz, "rev", record)

    # Test hook (tests/vm/test_netem_topo.py): fail after everything was
    # built, to check that a failing up leaves nothing behind.
    if os.environ.get("NETEM_TOPO_TEST_FAIL") == "late":
        raise UpFailed("NETEM_TOPO_TEST_FAIL=late")

    return {
        "name": name, "senders": senders, "dumbbell": bool(dumb),
        "namespaces": routers + servers + clients, "routers": routers,
        "servers": servers, "clients": clients, "pairs": pairs,
        "bottleneck": {"ns": fwd[0], "dev": fwd[1]},
        "reverse": {"ns": rev[0], "dev": rev[1]},
        "params": {"rtt_ms": _num(o["rtt"]), "rate": o["rate"],
                   "rate_bps": sz["bps"], "limit": int(o["limit"]),
                   "red": o["red"], "loss": o["loss"],
                   "loss_dir": o["loss_dir"], "reorder": o["reorder"],
                   "reorder_corr": o["reorder_corr"],
                   "reorder_gap": o["reorder_gap"],
                   "reorder_dir": o["reorder_dir"], "mtu": mtu},
        "tc": record}


def _check_name(name, cmd):
    if not re.match(r"^[a-z0-9]{2,8}$", name):
        raise TopoError("%s: '%s' is not a topology name" % (cmd, name))


def down(name):
    """Remove every namespace of topology NAME and its state file."""
    _check_name(name, "down")
    _need_root()
    found = False
    for ns in netns_list():
        if ns.startswith(name + "-"):
            p = subprocess.run(["ip", "netns", "del", ns], text=True,
                               capture_output=True)
            if p.returncode:
                raise TopoError("down: ip netns del %s: %s" %
                                (ns, p.stderr.strip()), usage=False)
            found = True
    try:
        _state(name).unlink()
        found = True
    except FileNotFoundError:
        pass
    if not found:
        raise TopoError("down: no topology named '%s'" % name)


def list_topos():
    """[{name, namespaces, state}] for every topology that exists: a state
    file, or namespaces named like ours (nt...-) without one."""
    nss = netns_list()
    names = set()
    if os.path.isdir(STATE_DIR):
        names.update(f[:-5] for f in os.listdir(STATE_DIR)
                     if f.endswith(".json"))
    names.update(ns.split("-", 1)[0] for ns in nss if "-" in ns)
    res = []
    for name in sorted(names):
        mine = [ns for ns in nss if ns.startswith(name + "-")]
        have = _state(name).exists()
        if not mine and not have:
            continue
        if not have and not name.startswith("nt"):
            continue
        res.append({"name": name, "namespaces": mine, "state": have})
    return res


def show(name):
    """The description of topology NAME (as up returned it)."""
    try:
        return json.loads(_state(name).read_text())
    except OSError:
        raise TopoError("show: no topology named '%s'" % name)


# ------------------------------------------------------------------ queues

def tc_json(ns, dev):
    """The qdiscs on DEV in NS, as tc -j -s reports them."""
    out = proc.nsx(ns, "tc -j -s qdisc show dev %s" % dev)
    return json.loads(out or "[]")


def qdisc_drops(ns, dev):
    """Drops summed over every qdisc on DEV in NS."""
    return sum(q.get("drops", 0) for q in tc_json(ns, dev))


def bottleneck_drops(t):
    """Packets dropped at topology T's bottleneck so far: the root qdisc's
    count (netem counts its child's drops too, so summing would double
    count)."""
    b = t.info["bottleneck"]
    qs = tc_json(b["ns"], b["dev"])
    roots = [q for q in qs if q.get("root")] or qs[:1]
    return sum(q.get("drops", 0) for q in roots)


# ------------------------------------------------------------------ Topo

class Topo:
    """A topology as a context manager: entering builds it (keyword
    arguments are up()'s options: rtt, rate, limit, red, loss, loss_dir,
    reorder, reorder_corr, reorder_gap, reorder_dir, senders, dumbbell,
    mtu, id), leaving stops the processes started in it and removes it.
    Attributes: name, info (the description), server/client/router
    (namespace names of pair 0), server_addr/client_addr (IPv4),
    server_addr6/client_addr6, capture_ns and capture_dev (router
    interface toward server 0: sender timing), pairs."""

    def __init__(self, **opts):
        self.opts = opts
        self.info = None
        self.procs = []

    # -- lifecycle
    def args(self):
        return kwargs_argv(self.opts)

    def up(self):
        self.info = up(**self.opts)
        self.name = self.info["name"]
        self.pairs = self.info["pairs"]
        p0 = self.pairs[0]
        self.server, self.client = p0["server_ns"], p0["client_ns"]
        self.router = self.info["routers"][0]
        self.server_addr = p0["server_addr"]
        self.client_addr = p0["client_addr"]
        self.server_addr6 = p0["server_addr6"]
        self.client_addr6 = p0["client_addr6"]
        self.capture_ns, self.capture_dev = p0["capture_ns"], p0["capture_dev"]
        return self

    def _stop_procs(self):
        for b in self.procs:
            b.stop()
        self.procs = []

    def down(self):
        self._stop_procs()
        if self.info:
            down(self.name)
            self.info = None

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()

    # -- commands in namespaces
    nscmd = staticmethod(proc.nscmd)

    def run(self, ns, cmd, check=True, timeout=600, **kw):
        """proc.run: cmd (list, or str for sh -c) in namespace ns."""
        return proc.run(ns, cmd, check=check, timeout=timeout, **kw)

    def start(self, ns, cmd, ready=None, timeout=30):
        """Start cmd in ns in the background (a proc.Bg, stopped when the
        topology goes down). With ready (a regex), wait until it prints a
        matching line."""
        b = proc.spawn(ns, cmd)
        self.procs.append(b)
        if ready:
            b.wait_line(ready, timeout)
        return b

    def stop(self, bg):
        bg.stop()
        if bg in self.procs:
            self.procs.remove(bg)

    def sysctl(self, ns, key, value=None):
        if value is None:
            return self.run(ns, ["sysctl", "-n", key]).stdout.strip()
        self.run(ns, ["sysctl", "-qw", "%s=%s" % (key, value)])
        return str(value)

    def qdiscs(self, ns, dev):
        return json.loads(self.run(ns, ["tc", "-j", "qdisc", "show", "dev",
                                        dev]).stdout)

    # -- keep-alive traffic (cocktail_lab/traffic.py, run as a process)
    def ka_server(self, port=8000, cc=None, clamp=0, pair=0, sndbuf=None):
        cmd = TRAFFIC + ["server", "--port", str(port)]
        if cc:
            cmd += ["--cc", cc]
        if clamp:
            cmd += ["--clamp", str(clamp)]
        if sndbuf is not None:
            cmd += ["--sndbuf", str(sndbuf)]
        return self.start(self.pairs[pair]["server_ns"], cmd,
                          ready=r"^listening", timeout=60)

    def ka_client(self, port=8000, pair=0, timeout=600, **kw):
        """Run the keep-alive client (traffic.py client) against pair's
        server; keyword arguments map to its options (segments=60, warm_cwnd=30, idle=2, idle_rto=1.5,
        rounds, rcvbuf, clamp, warm_segs, warm_max). Returns its JSON."""
        p = self.pairs[pair]
        cmd = TRAFFIC + ["client", "--host", p["server_addr"],
                         "--port", str(port)] + kwargs_argv(kw)
        r = self.run(p["client_ns"], cmd, check=False, timeout=timeout)
        if r.returncode not in (0, 3):
            raise RuntimeError("keep-alive client failed (%d): %s" %
                               (r.returncode, r.stderr))
        return json.loads(r.stdout)


class Pair(Topo):
    """Two namespaces joined by one veth pair, no router: the receiver gets
    the sender's own skbs (TCP's clones: the receive side's backlog cannot
    coalesce them, and no forwarding hop copies or merges anything). Veth
    offloads off and gso_max_segs 1 (TCP builds GSO skbs whatever ethtool
    says, and splits them only after clsact and the qdisc: with one MSS per
    skb, netem and a clsact filter act on single segments); mss_skbs=False
    leaves both as the kernel sets them. Netem on each side's egress:
    delay RTT/2, plus `rate` and `server_netem` (any netem words, e.g.
    "loss 1%", "reorder 100% gap 10", "1ms" for jitter) toward the client
    and `client_netem` toward the server; no qdisc at all when there is
    nothing to shape. Same interface as Topo (run, start, sysctl,
    server/client, server_addr/client_addr 198.18.SUBNET.1/.2,
    server_addr6/client_addr6 fd00:cc:SUBNET::1/::2 (nodad), server_dev
    "vs", client_dev "vc", capture_ns/capture_dev = the client's side).
    Namespaces NAME-s and NAME-c (NAME default: np + random hex)."""

    def __init__(self, rtt=50, rate=None, server_netem="", client_netem="",
                 limit=10000, name=None, subnet=100, server_dev="vs",
                 client_dev="vc", mss_skbs=True):
        super().__init__()
        self.rtt, self.rate, self.limit = rtt, rate, limit
        self.server_netem, self.client_netem = server_netem, client_netem
        self.want_name = name
        self.subnet, self.mss_skbs = subnet, mss_skbs
        self.server_dev, self.client_dev = server_dev, client_dev

    def up(self):
        name = self.want_name or "np" + os.urandom(3).hex()
        self.server, self.client = name + "-s", name + "-c"
        self.router = None
        self.server_addr = "198.18.%d.1" % self.subnet
        self.client_addr = "198.18.%d.2" % self.subnet
        self.server_addr6 = "fd00:cc:%d::1" % self.subnet
        self.client_addr6 = "fd00:cc:%d::2" % self.subnet
        sd, cd = self.server_dev, self.client_dev
        self.capture_ns, self.capture_dev = self.client, cd
        self.info = {"name": name, "namespaces": [self.server, self.client]}
        self.name = name
        self.pairs = [{"server_ns": self.server, "client_ns": self.client,
                       "server_addr": self.server_addr,
                       "client_addr": self.client_addr,
                       "server_addr6": self.server_addr6,
                       "client_addr6": self.client_addr6,
                       "server_dev": sd, "client_dev": cd,
                       "receiver_ns": self.client, "receiver_dev": cd}]
        made = []
        try:
            for ns in (self.server, self.client):
                add_ns(ns, made)
            self._link()
            self._shape()
        except BaseException:
            self.down()
            raise
        return self

    def _link(self):
        sd, cd = self.server_dev, self.client_dev
        if self.mss_skbs:
            veth(self.server, sd, self.client, cd,
                 link_args=("gso_max_segs", "1"))
        else:
            _run(["ip", "-n", self.server, "link", "add", sd, "type", "veth",
                  "peer", "name", cd, "netns", self.client])
            for ns, dev in ((self.server, sd), (self.client, cd)):
                _run(["ip", "-n", ns, "link", "set", dev, "up"])
        addr(self.server, sd, self.server_addr + "/24",
             self.server_addr6 + "/64")
        addr(self.client, cd, self.client_addr + "/24",
             self.client_addr6 + "/64")

    def _shape(self):
        if not (self.rtt or self.rate or self.server_netem or
                self.client_netem):
            return
        half = "%.3fms" % (self.rtt / 2.0)
        rate = "rate %s" % self.rate if self.rate else ""
        for ns, dev, extra in ((self.server, self.server_dev,
                                "%s %s" % (rate, self.server_netem)),
                               (self.client, self.client_dev,
                                self.client_netem)):
            tc(ns, ["qdisc", "add", "dev", dev, "root", "netem", "limit",
                    str(self.limit), "delay", half] + shlex.split(extra))

    def down(self):
        self._stop_procs()
        if self.info:
            for ns in self.info["namespaces"]:
                subprocess.run(["ip", "netns", "del", ns],
                               capture_output=True)
            self.info = None


class Link(Pair):
    """The probe tests' link: a Pair (server and client namespaces
    joined by one veth pair, one MSS per skb, netem delay RTT/2 on each
    side's egress, srv_netem/rate on the server's). The receiver must get
    the sender's own skbs: through a forwarding hop (netem-topo's router)
    they arrive uncloned (ip_forward's skb_cow), the receiver's socket
    backlog coalesces consecutive segments into one skb, and the probe,
    which sees skbs, reports merged ranges where a capture shows segments.
    The client's receive processing runs on one CPU (RPS, steer_rx): with
    two, a segment tapped on one CPU can reach TCP after a later one
    tapped on the other (a descheduled vCPU in between), and the capture,
    whose order is the taps', calls held what TCP took in order and the
    other way round.
    Attributes after entering: srv/cli (namespaces), SRV/CLI (addresses:
    IPv6 with v6=True, canonical text), family, rtt (ms)."""

    def __init__(self, tag="", rtt_ms=50, srv_netem="", cli_netem="",
                 rate=None, v6=False):
        super().__init__(rtt=rtt_ms, rate=rate, server_netem=srv_netem,
                         client_netem=cli_netem)
        self.tag, self.v6 = tag, v6
        self._clsact = set()

    def up(self):
        super().up()
        self.srv, self.cli = self.server, self.client
        try:
            self.steer_rx(0)
        except BaseException:
            self.down()
            raise
        if self.v6:
            addrs = (self.server_addr6, self.client_addr6)
        else:
            addrs = (self.server_addr, self.client_addr)
        self.SRV, self.CLI = (str(ipaddress.ip_address(a)) for a in addrs)
        self.family = socket.AF_INET6 if self.v6 else socket.AF_INET
        return self

    def steer_rx(self, cpu):
        """Process every packet the client's device receives on `cpu`:
        veth hands them to netif_rx, which with an RPS mask queues them on
        that CPU's backlog, in order."""
        path = "/sys/class/net/%s/queues/rx-0/rps_cpus" % self.client_dev
        self.run(self.cli, "echo %x > %s" % (1 << cpu, path))
        got = int(self.run(self.cli, ["cat", path]).stdout.replace(",", ""),
                  16)
        if got != 1 << cpu:
            raise RuntimeError("%s: %x, wanted %x" % (path, got, 1 << cpu))

    @staticmethod
    def ns_inode(ns):
        return os.stat("/run/netns/%s" % ns).st_ino

    def drop_seq(self, seq, times=1, toward="client"):
        """Drop, on the server's egress (toward the client; or the
        client's, toward the server), the first `times` packets whose TCP
        sequence number is seq and pass the next one (gact determ);
        times=None drops them all (a hole that never fills). The action is
        "trap": the packet is consumed but TCP is told it was sent
        (TC_ACT_SHOT would make TCP resend it at once). Matches IPv4 or
        IPv6 (no extension headers) by the link's family."""
        ns, dev = ((self.srv, self.server_dev) if toward == "client" else
                   (self.cli, self.client_dev))
        if (ns, dev) not in self._clsact:
            self.run(ns, ["tc", "qdisc", "add", "dev", dev, "clsact"])
            self._clsact.add((ns, dev))
        if self.v6:
            match = ("protocol ipv6 prio 2 u32 match ip6 protocol 6 0xff "
                     "match u32 0x%08x 0xffffffff at 44" % seq)
        else:
            match = ("protocol ip prio 1 u32 match ip protocol 6 0xff "
                     "match u32 0x%08x 0xffffffff at 24" % seq)
        act = "action trap"
        if times is not None:
            act += " random determ pass %d" % (times + 1)
        self.run(ns, "tc filter add dev %s egress %s %s" % (dev, match, act))

    def undrop(self):
        """Remove every drop filter."""
        for ns, dev in self._clsact:
            self.run(ns, ["tc", "qdisc", "del", "dev", dev, "clsact"])
        self._clsact = set()

    def capture(self, path):
        """capture.Capture of TCP at the receiver (the client's interface),
        without --immediate-mode (see capture.Capture)."""
        from .capture import Capture
        return Capture(self.cli, self.client_dev, path, "tcp",
                       immediate=False, buffer_kib=32768)


# ------------------------------------------------------------------ CLI

USAGE = """\
netem-topo: network namespaces joined by veth pairs with a shaped link.

  netem-topo up [options]     build a topology, print its JSON description
  netem-topo down NAME        remove everything topology NAME made
  netem-topo list             JSON list of the topologies that exist
  netem-topo show NAME        print the JSON description of NAME again

Single sender (default, --senders 1):

  NAME-s0 [to-r] ==== [to-s0] NAME-r [to-c0] ==== [to-r] NAME-c0
    server              router (shaping)            client

Dumbbell (--senders N with N > 1, or --dumbbell):

  NAME-s{i} [to-r] == [to-s{i}] NAME-rl [to-rr] == [to-rl] NAME-rr [to-c{i}] == [to-r] NAME-c{i}

Shaping lives on router egress only, so tcpdump on the router's interface
toward a server sees the server's packets as it emitted them (ingress, no
shaping before it) and the ACKs when the server receives them:
  forward (toward the clients): root netem "delay RTT/2 [loss] [reorder]"
    with the bottleneck as its child: netem "rate R limit Q" (drop-tail,
    Q packets of queue) or, with --red, tbf "rate R" + RED child.
  reverse (toward the servers): netem "delay RTT/2 [loss] [reorder]".
Offloads (tso, gso, gro) are off on every veth, so segments are MSS sized.

Options of up:
  --rtt MS           round-trip propagation delay (default 100)
  --rate RATE        bottleneck rate: N[.N](bit|kbit|mbit|gbit) (default 10mbit)
  --limit PKTS       bottleneck queue in packets (default 100)
  --red              RED (tbf + red) instead of drop-tail
  --loss PCT         random loss in percent (0 < PCT <= 100)
  --loss-dir DIR     fwd (toward the clients, default), rev or both
  --reorder PCT      netem reorder percent (needs --rtt > 0)
  --reorder-corr PCT reorder correlation (default 0)
  --reorder-gap N    netem reorder gap
  --reorder-dir DIR  fwd (default), rev or both
  --senders N        number of server/client pairs (1..32, default 1)
  --dumbbell         two routers even for one sender
  --mtu N            MTU of every link (576..9000, default 1500)
  --id ID            name prefix ([a-z0-9]{2,8}); default: random

Addresses: server i 198.18.(16+i).2/24 and fd00:cc:1:i::2/64,
           client i 198.19.(16+i).2/24 and fd00:cc:2:i::2/64,
           router-router 198.18.0.1-2/30 and fd00:cc:3::1-2/64.
State: /run/netem-topo/NAME.json (the JSON that up printed).
"""


def usage():
    sys.stderr.write(USAGE)
    sys.exit(2)


def _die(msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg))
    sys.exit(2)


def _on_signal(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    """scripts/netem-topo: up, down, list, show (see USAGE). Exit status 2
    for usage errors, 1 when up failed half way (after removing what it
    made), 130 when interrupted."""
    import signal
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        usage()
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "up":
            signal.signal(signal.SIGTERM, _on_signal)
            info = up(args)
            print(json.dumps(info))
        elif cmd == "down":
            if len(args) != 1:
                _die("usage: %s down NAME" % PROG)
            down(args[0])
        elif cmd == "list":
            if args:
                _die("usage: %s list" % PROG)
            print(json.dumps(list_topos()))
        elif cmd == "show":
            if len(args) != 1:
                _die("usage: %s show NAME" % PROG)
            sys.stdout.write(_state_text(args[0]))
        elif cmd in ("-h", "--help", "help"):
            usage()
        else:
            _die("unknown command '%s' (up, down, list, show)" % cmd)
    except UpFailed as e:
        sys.stderr.write("%s: up failed (%s); removing what was made\n" %
                         (PROG, e))
        return 1
    except TopoError as e:
        _die(str(e))
    except KeyboardInterrupt:
        return 130
    return 0


def _state_text(name):
    try:
        return _state(name).read_text()
    except OSError:
        raise TopoError("show: no topology named '%s'" % name)


if __name__ == "__main__":
    sys.exit(main())

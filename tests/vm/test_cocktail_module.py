"""VM tests of tcp_cocktail.ko that need no shaped link (issue 2, tests 5-7).

  5. parameters: every invalid value is refused with EINVAL, by a sysfs
     write and at load time, and the old value stays; modinfo describes
     every parameter; counters, tracepoints and ss -ti show the module.
  6. load/unload: rmmod fails with EBUSY while a socket (or a netns
     default) uses cocktail and succeeds once nothing does; 20 load/unload
     cycles with traffic in between.
  7. 200 concurrent connections (IPv4 and IPv6) through the module for
     30 s, restart policies switched while they run: every byte arrives
     intact (SHA-256 both ways), no kernel warning (conftest checks dmesg).

Traffic runs only between two network namespaces the tests create, joined
by a veth pair (198.18.200.0/24, fd00:cc:200::/64).  Run as a script, this
file is also the traffic tool the tests start inside the namespaces:
  python3 test_cocktail_module.py serve PORT CC
  python3 test_cocktail_module.py hold HOST PORT CC
  python3 test_cocktail_module.py load HOST4 HOST6 PORT CC CONNS SECONDS
"""
import ctypes
import errno
import hashlib
import json
import os
import random
import re
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path

MOD = "tcp_cocktail"
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)

# ---------------------------------------------------------------- traffic


def _set_cc(sock, cc):
    sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())


def _get_cc(sock):
    return sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION,
                           16).rstrip(b"\0").decode()


def _cwnd(sock):
    """tcpi_snd_cwnd (struct tcp_info offset 80)."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
    return int.from_bytes(raw[80:84], "little")


def _key(addr):
    """Peer/local address as 'ip|port' (v4-mapped IPv6 shown as IPv4)."""
    host = addr[0]
    if host.startswith("::ffff:"):
        host = host[7:]
    return "%s|%d" % (host, addr[1])


def serve(port, cc):
    """Echo server on [::]:port (v4 and v6); the listener uses cc.

    Every connection's received bytes are hashed; on SIGTERM or when stdin
    closes, prints one JSON object {peer_port: [bytes, sha256]}."""
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    _set_cc(ls, cc)
    ls.bind(("::", port))
    ls.listen(1024)
    ls.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, None)
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    conns, done = {}, {}
    print("ready", flush=True)
    while True:
        for key, ev in sel.select(1.0):
            if key.data == "stdin":
                line = sys.stdin.readline()
                if line.strip() == "report":
                    # connections finished so far, then forget them
                    print(json.dumps(done), flush=True)
                    done = {}
                    continue
                if not line:
                    print(json.dumps({**done, **{
                        str(c["port"]): [c["n"], c["h"].hexdigest()]
                        for c in conns.values()}}), flush=True)
                    return
                continue
            if key.data is None:
                try:
                    s, addr = ls.accept()
                except BlockingIOError:
                    continue
                s.setblocking(False)
                conns[s] = {"port": _key(addr), "n": 0, "out": bytearray(),
                            "h": hashlib.sha256(), "eof": False}
                if _get_cc(s) != cc:
                    print("accepted socket has cc %s" % _get_cc(s),
                          file=sys.stderr, flush=True)
                    os._exit(3)
                sel.register(s, selectors.EVENT_READ, "c")
                continue
            s = key.fileobj
            c = conns[s]
            if ev & selectors.EVENT_READ and len(c["out"]) < (1 << 20):
                try:
                    d = s.recv(1 << 16)
                except (BlockingIOError, InterruptedError):
                    d = None
                if d == b"":
                    c["eof"] = True
                elif d:
                    c["n"] += len(d)
                    c["h"].update(d)
                    c["out"] += d
            if c["out"]:
                try:
                    k = s.send(c["out"])
                    del c["out"][:k]
                except (BlockingIOError, InterruptedError):
                    pass
            if c["eof"] and not c["out"]:
                sel.unregister(s)
                s.shutdown(socket.SHUT_WR)
                s.close()
                done[str(c["port"])] = [c["n"], c["h"].hexdigest()]
                del conns[s]
                continue
            want = selectors.EVENT_READ if len(c["out"]) < (1 << 20) else 0
            if c["out"]:
                want |= selectors.EVENT_WRITE
            sel.modify(s, want or selectors.EVENT_WRITE, "c")


def hold(host, port, cc):
    """Connect with cc, echo 1 MB, print 'held CC', keep the socket open
    until stdin closes."""
    s = socket.create_connection((host, port))
    _set_cc(s, cc)
    data = random.Random(1).randbytes(1 << 20)
    s.sendall(data)
    got = bytearray()
    while len(got) < len(data):
        d = s.recv(1 << 16)
        assert d, "server closed early"
        got += d
    assert bytes(got) == data, "echo differs"
    print("held %s" % _get_cc(s), flush=True)
    sys.stdin.readline()
    s.shutdown(socket.SHUT_WR)
    while s.recv(1 << 16):
        pass
    s.close()


def load(host4, host6, port, cc, nconn, seconds):
    """nconn connections (half IPv6), each sending bursts of random data
    with idle pauses for `seconds`, reading the echo back.  Prints one JSON
    object {local_port: [bytes_sent, sha256_sent, bytes_echoed,
    sha256_echoed]}."""
    sel = selectors.DefaultSelector()
    rnd = random.Random(7)
    pool = rnd.randbytes(1 << 20)
    conns = []
    for i in range(nconn):
        fam, host = ((socket.AF_INET6, host6) if i % 2 else
                     (socket.AF_INET, host4))
        s = socket.socket(fam, socket.SOCK_STREAM)
        _set_cc(s, cc)
        s.connect((host, port))
        s.setblocking(False)
        c = {"s": s, "port": _key(s.getsockname()), "sent": 0, "got": 0,
             "hs": hashlib.sha256(), "hr": hashlib.sha256(),
             "left": 0, "next": 0.0, "closed": False, "eof": False,
             "mask": selectors.EVENT_READ | selectors.EVENT_WRITE}
        conns.append(c)
        sel.register(s, c["mask"], c)
    end = time.monotonic() + seconds
    while True:
        now = time.monotonic()
        if now >= end:
            for c in conns:
                if not c["closed"]:
                    c["s"].shutdown(socket.SHUT_WR)
                    c["closed"] = True
                    if not c["eof"]:
                        sel.modify(c["s"], selectors.EVENT_READ, c)
        if all(c["eof"] for c in conns):
            break
        if now > end + 120:
            print("echo did not complete", file=sys.stderr, flush=True)
            os._exit(4)
        for key, ev in sel.select(0.05):
            c = key.data
            s = c["s"]
            if ev & selectors.EVENT_READ:
                try:
                    d = s.recv(1 << 16)
                except (BlockingIOError, InterruptedError):
                    d = None
                if d == b"":
                    c["eof"] = True
                    sel.unregister(s)
                    continue
                if d:
                    c["got"] += len(d)
                    c["hr"].update(d)
            if c["closed"] or not ev & selectors.EVENT_WRITE:
                continue
            if c["left"] == 0:
                if now < c["next"]:
                    continue
                c["left"] = rnd.randint(1000, 256 * 1024)
            off = rnd.randrange(0, len(pool) - c["left"])
            chunk = pool[off:off + min(c["left"], 65536)]
            try:
                k = s.send(chunk)
            except (BlockingIOError, InterruptedError):
                continue
            c["hs"].update(chunk[:k])
            c["sent"] += k
            c["left"] -= k
            if c["left"] == 0 and rnd.random() < 0.4:
                # idle long enough for a restart (RTO >= 200 ms)
                c["next"] = now + rnd.uniform(0.3, 0.9)
        # connections waiting for their pause to end need no EVENT_WRITE
        for c in conns:
            if c["closed"]:
                continue
            want = selectors.EVENT_READ
            if c["left"] or now >= c["next"]:
                want |= selectors.EVENT_WRITE
            if want != c["mask"]:
                c["mask"] = want
                sel.modify(c["s"], want, c)
    out = {}
    for c in conns:
        out[str(c["port"])] = [c["sent"], c["hs"].hexdigest(),
                               c["got"], c["hr"].hexdigest()]
        c["s"].close()
    return out


def cwnd_at_connect(host, port):
    """Connect with cocktail; return cwnd right after the handshake."""
    s = socket.socket()
    _set_cc(s, "cocktail")
    s.connect((host, port))
    cwnd = _cwnd(s)
    s.close()
    return cwnd


def client():
    """Long-lived traffic client: one JSON command per stdin line
    (["load", host4, host6, port, cc, conns, seconds] or
    ["cwnd", host, port]); one JSON answer per line ({"ok": result} or
    {"error": text}).  Saves a Python start-up (seconds under TCG) per
    transfer."""
    import traceback
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            if cmd[0] == "load":
                res = load(cmd[1], cmd[2], int(cmd[3]), cmd[4], int(cmd[5]),
                           float(cmd[6]))
            elif cmd[0] == "cwnd":
                res = cwnd_at_connect(cmd[1], int(cmd[2]))
            else:
                raise ValueError("unknown command %r" % cmd[0])
            ans = {"ok": res}
        except Exception:  # reported to the test, which fails on it
            ans = {"error": traceback.format_exc()}
        print(json.dumps(ans), flush=True)


def switch(host, port):
    """Echo 4 MB with reno, switch the busy socket to cocktail; print cwnd
    before, cwnd after and the algorithm now in use."""
    s = socket.create_connection((host, port))
    _set_cc(s, "reno")
    data = b"x" * (4 << 20)
    s.sendall(data)
    got = 0
    while got < len(data):
        got += len(s.recv(1 << 16))
    before = _cwnd(s)
    _set_cc(s, "cocktail")
    print(before, _cwnd(s), _get_cc(s), flush=True)
    s.close()


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "cwnd":
        print(cwnd_at_connect(args[0], int(args[1])), flush=True)
    elif cmd == "client":
        client()
    elif cmd == "switch":
        switch(args[0], int(args[1]))
    elif cmd == "serve":
        serve(int(args[0]), args[1])
    elif cmd == "hold":
        hold(args[0], int(args[1]), args[2])
    elif cmd == "load":
        print(json.dumps(load(args[0], args[1], int(args[2]), args[3],
                              int(args[4]), float(args[5]))), flush=True)
    else:
        sys.exit("unknown command %s" % cmd)
    sys.exit(0)

# ------------------------------------------------------------------ tests

import pytest  # noqa: E402

from cocktail_lab.modparams import (counters, get_param,  # noqa: E402
                                    loaded, params_dir, refcnt, write_param)
from cocktail_lab.topo import Pair  # noqa: E402
from conftest import KMOD, insmod, rmmod, sh  # noqa: E402

KO = KMOD / (MOD + ".ko")
SELF = Path(__file__).resolve()
TRACING = Path("/sys/kernel/tracing")
ALL_PARAMS = ("iw", "restart", "auto_rtt_us", "queue_pct", "cwv", "pace_iw",
              "pace_rate", "stats")
DEFAULTS = {"iw": "10", "restart": "auto", "auto_rtt_us": "100000",
            "queue_pct": "120", "cwv": "1", "pace_iw": "0",
            "pace_rate": "max"}
INVALID = {
    "iw": ["0", "65", "-1", "abc", "rfc", "rfc3390x", "10x", "4294967306",
           ""],
    "restart": ["foo", "", "SSR", "ssr,keep", "pacer", "auto2", "queues",
                "QUEUE"],
    "auto_rtt_us": ["-1", "0", "10000001", "garbage", "1e5", ""],
    "queue_pct": ["0", "100", "1001", "abc", "-1", "120%", "1.2", ""],
    "cwv": ["3", "-1", "x", "1.5", ""],
    "pace_iw": ["2", "-1", "yes", ""],
    "pace_rate": ["", "Max", "maximum", "delivery,window", "1", "rate"],
}
VALID = {
    "iw": [("rfc3390", "rfc3390"), ("1", "1"), ("64", "64"), ("2", "2")],
    "restart": [(p, p) for p in ("ssr", "decay", "keep", "pace", "auto",
                                 "queue")],
    "auto_rtt_us": [("1", "1"), ("10000000", "10000000"),
                    ("150000", "150000")],
    "queue_pct": [("101", "101"), ("1000", "1000"), ("150", "150")],
    "cwv": [("0", "0"), ("2", "2"), ("1", "1")],
    "pace_iw": [("1", "1"), ("0", "0")],
    "pace_rate": [(r, r) for r in ("delivery", "window", "max")],
}
STAT_NAMES = ("ssr", "decay", "keep", "pace", "auto_ssr", "auto_pace",
              "queue_ssr", "queue_pace", "pace_ended")

_libc = ctypes.CDLL(None, use_errno=True)
SYS_FINIT_MODULE = 313      # x86_64
SYS_DELETE_MODULE = 176


def finit_module(params):
    """Load the built module with a parameter string; return errno (0)."""
    fd = os.open(str(KO), os.O_RDONLY)
    try:
        r = _libc.syscall(SYS_FINIT_MODULE, fd, params.encode(), 0)
        return 0 if r == 0 else ctypes.get_errno()
    finally:
        os.close(fd)


# delete_module(O_NONBLOCK) of a module in use: 6.1 returns EWOULDBLOCK
# (EAGAIN); kmod's rmmod reports it as "Module ... is in use".
IN_USE = (errno.EBUSY, errno.EAGAIN)


def delete_module():
    """rmmod without waiting; return errno (0 on success)."""
    r = _libc.syscall(SYS_DELETE_MODULE, MOD.encode(), os.O_NONBLOCK)
    return 0 if r == 0 else ctypes.get_errno()


def wait_unused(timeout=20):
    end = time.monotonic() + timeout
    while refcnt(MOD) and time.monotonic() < end:
        time.sleep(0.2)
    return refcnt(MOD)


@pytest.fixture
def fresh():
    """The built module, freshly loaded with defaults; removed after."""
    rmmod(MOD)
    insmod(MOD)
    yield
    wait_unused()
    rmmod(MOD)


@pytest.fixture
def pair():
    """Two namespaces joined by veth, unshaped, offloads as the kernel sets
    them (topo.Pair): returns (ns_a, ns_b, dev); a = server 198.18.200.1 /
    fd00:cc:200::1, b = client .2 / ::2, dev the interface on both sides."""
    dev = "ckv%x" % (os.getpid() & 0xffff)
    with Pair(rtt=0, subnet=200, server_dev=dev, client_dev=dev,
              mss_skbs=False) as p:
        yield p.server, p.client, dev


def in_ns(ns, *args):
    """Run this file's traffic tool in a namespace; return its stdout."""
    return subprocess.run(["ip", "netns", "exec", ns, sys.executable,
                           str(SELF)] + list(args), check=True, text=True,
                          capture_output=True, timeout=120).stdout


def start_server(ns, port, cc="cocktail"):
    p = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable,
                          str(SELF), "serve", str(port), cc],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline().strip()
    assert line == "ready", "server did not start: %r" % line
    return p


def stop_server(p):
    """Close the server's stdin; return its JSON report."""
    out, _ = p.communicate("", timeout=120)
    assert p.returncode == 0, "server failed (%s)" % p.returncode
    return json.loads(out.strip().splitlines()[-1])


def server_report(p):
    """Ask a running server for the connections finished since the last
    report."""
    p.stdin.write("report\n")
    p.stdin.flush()
    line = p.stdout.readline()
    assert line, "server died (%s)" % p.poll()
    return json.loads(line)


class Client:
    """The traffic tool's long-lived client in a namespace."""

    def __init__(self, ns):
        self.p = subprocess.Popen(["ip", "netns", "exec", ns,
                                   sys.executable, str(SELF), "client"],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline().strip()
        assert line == "ready", "client did not start: %r" % line

    def call(self, *cmd):
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        assert line, "client died (%s)" % self.p.poll()
        ans = json.loads(line)
        assert "error" not in ans, ans.get("error")
        return ans["ok"]

    def close(self):
        try:
            self.p.communicate("", timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def run_load(ns, port, nconn, seconds, cc="cocktail"):
    return subprocess.Popen(
        ["ip", "netns", "exec", ns, sys.executable, str(SELF), "load",
         "198.18.200.1", "fd00:cc:200::1", str(port), cc, str(nconn),
         str(seconds)], stdout=subprocess.PIPE, text=True)


def check_echo(client_out, server_out, nconn):
    """Every connection: what the client sent is what the server received
    and what came back (lengths and SHA-256)."""
    client = (client_out if isinstance(client_out, dict) else
              json.loads(client_out.strip().splitlines()[-1]))
    assert len(client) == nconn
    for port, (sent, hs, got, hr) in client.items():
        assert sent > 0, "connection %s sent nothing" % port
        assert (got, hr) == (sent, hs), "echo differs on %s" % port
        assert server_out.get(port) == [sent, hs], \
            "server received different data on %s" % port
    return sum(v[0] for v in client.values())


# ---- test 5: parameters ------------------------------------------------

def test_modinfo_lists_every_parameter_with_description():
    out = sh("modinfo -F parm %s" % KO).stdout
    desc = {}
    for line in out.splitlines():
        name, _, text = line.partition(":")
        desc[name] = text.strip()
    for p in ALL_PARAMS:
        assert p in desc, "modinfo has no parameter %s:\n%s" % (p, out)
        assert len(desc[p]) > 10, "no description for %s" % p
    assert sh("modinfo -F license %s" % KO).stdout.strip() == "GPL"


def test_defaults_and_valid_values_read_back(fresh):
    for name, want in DEFAULTS.items():
        assert get_param(MOD, name) == want, name
    for name, pairs in VALID.items():
        for value, shown in pairs:
            assert write_param(MOD, name, value) == 0, (name, value)
            assert get_param(MOD, name) == shown, (name, value)
    for p in ALL_PARAMS:
        mode = (params_dir(MOD) / p).stat().st_mode & 0o777
        assert mode == (0o444 if p == "stats" else 0o644), (p, oct(mode))


def test_invalid_sysfs_writes_fail_and_keep_old_value(fresh):
    # a non-default old value, so "unchanged" cannot be a reset to default
    olds = {"iw": "rfc3390", "restart": "decay", "auto_rtt_us": "123456",
            "queue_pct": "333", "cwv": "2", "pace_iw": "1",
            "pace_rate": "delivery"}
    for name, value in olds.items():
        assert write_param(MOD, name, value) == 0
    for name, bad in INVALID.items():
        for value in bad:
            err = write_param(MOD, name, value)
            assert err == errno.EINVAL, \
                "%s=%r: errno %s, want EINVAL" % (name, value, err)
            assert get_param(MOD, name) == olds[name], (name, value)
    # stats is read-only (0444): even root cannot open it for writing
    before = get_param(MOD, "stats")
    assert write_param(MOD, "stats", "0") in (errno.EACCES, errno.EINVAL)
    assert get_param(MOD, "stats") == before


def test_invalid_values_refused_at_load_time():
    rmmod(MOD)
    for name, bad in INVALID.items():
        for value in bad:
            err = finit_module("%s=%s" % (name, value))
            assert err == errno.EINVAL, \
                "insmod %s=%r: errno %s, want EINVAL" % (name, value, err)
            assert not loaded(MOD), (name, value)
    assert finit_module("stats=1") == errno.EINVAL
    assert not loaded(MOD)
    # good values load and read back
    assert finit_module("iw=rfc3390 restart=pace auto_rtt_us=5000 cwv=2 "
                        "pace_iw=1 pace_rate=window queue_pct=101") == 0
    try:
        assert [get_param(MOD, p) for p in
                ("iw", "restart", "auto_rtt_us", "cwv", "pace_iw",
                 "pace_rate", "queue_pct")] == \
            ["rfc3390", "pace", "5000", "2", "1", "window", "101"]
    finally:
        rmmod(MOD)
    assert finit_module("restart=queue queue_pct=1000") == 0
    try:
        assert get_param(MOD, "restart") == "queue"
        assert get_param(MOD, "queue_pct") == "1000"
    finally:
        rmmod(MOD)


def test_queue_pct_range_and_restart_queue(fresh):
    """queue_pct takes 101..1000 (a ratio above 1: srtt can equal the
    minimum RTT on an idle path); anything else is EINVAL and the old value
    stays. restart takes queue and reads it back."""
    assert get_param(MOD, "queue_pct") == "120"
    for value in ("0", "100", "1001", "abc"):
        assert write_param(MOD, "queue_pct", value) == errno.EINVAL, value
        assert get_param(MOD, "queue_pct") == "120", value
    for value in ("101", "1000"):
        assert write_param(MOD, "queue_pct", value) == 0, value
        assert get_param(MOD, "queue_pct") == value
    assert write_param(MOD, "queue_pct", "100") == errno.EINVAL
    assert get_param(MOD, "queue_pct") == "1000"
    assert write_param(MOD, "restart", "queue") == 0
    assert get_param(MOD, "restart") == "queue"
    assert write_param(MOD, "restart", "queue2") == errno.EINVAL
    assert get_param(MOD, "restart") == "queue"
    desc = sh("modinfo -F parm %s" % KO).stdout
    assert re.search(r"^restart:.*\bqueue\b", desc, re.M), desc
    assert re.search(r"^queue_pct:.*101\.\.1000.*default 120", desc,
                     re.M), desc


def test_stats_and_tracepoints_exist(fresh):
    st = counters(MOD, strict=True)
    for name in STAT_NAMES:
        assert st.get(name) == 0, (name, st)
    if not (TRACING / "events").is_dir():
        sh("mount -t tracefs nodev %s" % TRACING, check=False)
    fmt = (TRACING / "events/tcp_cocktail/restart/format").read_text()
    for field in ("sport", "dport", "requested", "policy", "idle_us",
                  "rto_us", "srtt_us", "cwnd_before", "cwnd_after",
                  "ssthresh", "pacing_rate"):
        assert re.search(r"\b%s(\[\d+\])?;" % field, fmt), field
    assert (TRACING / "events/tcp_cocktail/pace_end/format").exists()
    avail = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    assert "cocktail" in avail.read_text().split()


def hold_client(ns, port):
    """A client in @ns that connects to the server in the other namespace
    with cocktail and holds the connection open until its stdin closes."""
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable,
                             str(SELF), "hold", "198.18.200.1", str(port),
                             "cocktail"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def test_setsockopt_and_ss_show_cocktail(fresh, pair):
    a, b, _ = pair
    srv = start_server(a, 5001)
    cl = hold_client(b, 5001)
    try:
        assert cl.stdout.readline().strip() == "held cocktail"
        for ns in (a, b):
            ss = sh("ip netns exec %s ss -tin state established" % ns).stdout
            assert re.search(r"\bcocktail\b", ss), ss
    finally:
        cl.communicate("\n", timeout=60)
        stop_server(srv)
    assert cl.returncode == 0


def test_switch_established_socket_keeps_cwnd(fresh, pair):
    """setsockopt(TCP_CONGESTION) on a busy connection runs .init again;
    it must not reset cwnd to iw."""
    a, b, _ = pair
    assert write_param(MOD, "iw", "2") == 0
    srv = start_server(a, 5002, cc="reno")
    try:
        out = in_ns(b, "switch", "198.18.200.1", "5002")
    finally:
        stop_server(srv)
    before, after, cc = out.split()
    assert cc == "cocktail"
    assert int(before) > 2, "transfer did not open cwnd: %s" % before
    assert int(after) == int(before), out
    assert counters(MOD, strict=True)["iw"] == 0


def test_iw_applied_on_new_connection(fresh, pair):
    """A new connection starts with cwnd = iw (rfc3390 -> 3 at MSS 1448)
    when the route has no initcwnd, and with the route's initcwnd when it
    has one."""
    a, b, dev = pair
    srv = start_server(a, 5003, cc="reno")
    cl = Client(b)
    try:
        for iw, want in (("4", 4), ("rfc3390", 3), ("64", 64)):
            assert write_param(MOD, "iw", iw) == 0
            out = cl.call("cwnd", "198.18.200.1", 5003)
            assert out == want, (iw, out)
        sh("ip -n %s route replace 198.18.200.0/24 dev %s initcwnd 6" %
           (b, dev))
        out = cl.call("cwnd", "198.18.200.1", 5003)
        assert out == 6, out
    finally:
        cl.close()
        stop_server(srv)
    assert counters(MOD, strict=True)["iw_route"] >= 1


# ---- test 6: load / unload ---------------------------------------------

def test_rmmod_busy_while_in_use(pair):
    a, b, _ = pair
    rmmod(MOD)
    insmod(MOD)
    srv = start_server(a, 5004)
    cl = hold_client(b, 5004)
    try:
        assert cl.stdout.readline().strip() == "held cocktail"
        assert delete_module() in IN_USE
        r = sh("rmmod %s" % MOD, check=False)
        assert r.returncode != 0 and "in use" in r.stderr, r.stderr
        assert loaded(MOD)
        assert "cocktail" in sh("ip netns exec %s ss -tin" % a).stdout
    finally:
        cl.communicate("\n", timeout=60)
        stop_server(srv)
    assert cl.returncode == 0
    # listener and connections closed: nothing holds the module
    assert wait_unused() == 0
    assert delete_module() == 0
    assert not loaded(MOD)


def test_rmmod_busy_while_netns_default(pair):
    a, _, _ = pair
    rmmod(MOD)
    insmod(MOD)
    allowed = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
    old_allowed = allowed.read_text().strip()
    try:
        # a non-initial netns may only pick an allowed algorithm
        allowed.write_text(old_allowed + " cocktail\n")
        sh("ip netns exec %s sysctl -qw "
           "net.ipv4.tcp_congestion_control=cocktail" % a)
        assert delete_module() in IN_USE
        sh("ip netns exec %s sysctl -qw net.ipv4.tcp_congestion_control=reno"
           % a)
    finally:
        allowed.write_text(old_allowed + "\n")
    assert wait_unused() == 0
    assert delete_module() == 0


def test_twenty_load_unload_cycles_with_traffic(pair):
    """One reno echo server and one client process for all cycles (a
    Python start-up costs seconds under TCG); only the client's sockets use
    cocktail.  Each cycle: insmod, checksummed echo over 4 cocktail
    connections (IPv4 and IPv6), close, rmmod."""
    a, b, _ = pair
    rmmod(MOD)
    policies = ("ssr", "decay", "keep", "pace", "auto")
    srv = start_server(a, 5100, cc="reno")
    cl = Client(b)
    try:
        for i in range(20):
            insmod(MOD, restart=policies[i % 5], cwv=i % 3,
                   iw=("rfc3390" if i % 4 == 0 else 2 + i), pace_iw=i % 2)
            out = cl.call("load", "198.18.200.1", "fd00:cc:200::1", 5100,
                          "cocktail", 4, 0.5)
            check_echo(out, server_report(srv), 4)
            assert wait_unused() == 0, \
                "cycle %d: module still referenced" % i
            assert delete_module() == 0, "cycle %d" % i
            assert not loaded(MOD)
    finally:
        cl.close()
        stop_server(srv)


def test_autoload_by_name_when_installed():
    """sysctl net.ipv4.tcp_congestion_control=cocktail loads the module by
    name from the module path (only when the module is installed)."""
    r = sh("modinfo -n %s" % MOD, check=False)
    if r.returncode != 0 or str(KMOD) in r.stdout:
        pytest.skip("tcp_cocktail is not installed in /lib/modules")
    rmmod(MOD)
    path = Path("/proc/sys/net/ipv4/tcp_congestion_control")
    old = path.read_text().strip()
    try:
        path.write_text("cocktail\n")
        assert loaded(MOD)
    finally:
        path.write_text(old + "\n")
    wait_unused()
    rmmod(MOD)


# ---- test 7: 200 connections for 30 s ----------------------------------

def test_200_connections_30s_intact(fresh, pair):
    a, b, dev = pair
    # 20 ms each way so idle pauses of 0.3-0.9 s exceed the RTO now and then
    for ns in (a, b):
        sh("ip netns exec %s tc qdisc add dev %s root netem delay 10ms "
           "limit 10000" % (ns, dev))
    srv = start_server(a, 5200)
    cl = run_load(b, 5200, 200, 30)
    try:
        # policies and knobs change while the connections run
        steps = [("restart", p) for p in ("pace", "ssr", "decay", "keep",
                                          "queue", "auto")] + \
                [("cwv", "0"), ("cwv", "2"), ("auto_rtt_us", "1"),
                 ("pace_rate", "window"), ("pace_rate", "delivery"),
                 ("iw", "rfc3390"), ("cwv", "1")]
        # every step lands inside the 30 s run: 3 + 13 x 1.8 = 26.4 s
        time.sleep(3)
        for name, value in steps:
            assert write_param(MOD, name, value) == 0
            time.sleep(1.8)
        ss = sh("ip netns exec %s ss -tin state established" % a).stdout
        n_cocktail = len(re.findall(r"\bcocktail\b", ss))
        out, _ = cl.communicate(timeout=300)
    finally:
        if cl.poll() is None:
            cl.kill()
    assert cl.returncode == 0
    total = check_echo(out, stop_server(srv), 200)
    assert n_cocktail >= 200, "only %d sockets used cocktail" % n_cocktail
    assert total > 10 << 20, "only %d bytes moved" % total
    st = counters(MOD, strict=True)
    restarts = sum(st[p] for p in ("ssr", "decay", "keep", "pace"))
    assert restarts > 0, st
    assert st["pace"] > 0 and st["pace_ended"] > 0, st

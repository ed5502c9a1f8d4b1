"""Network namespaces for the bench: run a Python thread inside a named
netns (setns(2) on the calling thread only, via ctypes: Python 3.11 has no
os.setns), shell helpers, and the dumbbell topology the restart scenario
needs.

The topology here is the bench's own minimal builder, used until
scripts/netem-topo (owned by another engineer) can build Chan's two-router
dumbbell with a 15-packet router buffer; see bench/README.md.
Addresses are from 198.18.0.0/15 only; traffic never leaves the VM's
namespaces.
"""
import ctypes
import json
import os
import shlex
import subprocess
import threading

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


def setns(name):
    """Move the calling thread into network namespace NAME."""
    fd = os.open("/run/netns/%s" % name, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "setns(%s): %s" % (name, os.strerror(err)))
    finally:
        os.close(fd)


class NsThread(threading.Thread):
    """A thread that runs FN(*args) inside netns NS; result in .result,
    exception (re-raised by join_result) in .error."""

    def __init__(self, ns, fn, *args, **kw):
        super().__init__(daemon=True)
        self.ns, self.fn, self.args, self.kw = ns, fn, args, kw
        self.result = None
        self.error = None

    def run(self):
        try:
            setns(self.ns)
            self.result = self.fn(*self.args, **self.kw)
        except BaseException as e:  # reported by join_result
            self.error = e

    def join_result(self, timeout=None):
        self.join(timeout)
        if self.is_alive():
            raise TimeoutError("thread in %s did not finish in %ss" %
                               (self.ns, timeout))
        if self.error is not None:
            raise self.error
        return self.result


def sh(cmd, check=True):
    r = subprocess.run(cmd, shell=True, text=True, capture_output=True)
    if check and r.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s" %
                           (r.returncode, cmd, r.stderr.strip()))
    return r.stdout


def nsx(ns, cmd, check=True):
    return sh("ip netns exec %s %s" % (shlex.quote(ns), cmd), check=check)


def sysctl(ns, key, value):
    nsx(ns, "sysctl -qw %s=%s" % (key, value))


def tc_json(ns, dev):
    """The qdiscs on DEV in NS, as tc -j -s reports them."""
    out = nsx(ns, "tc -j -s qdisc show dev %s" % dev)
    return json.loads(out or "[]")


def qdisc_drops(ns, dev):
    return sum(q.get("drops", 0) for q in tc_json(ns, dev))


def _offloads_off(ns, dev):
    nsx(ns, "ethtool -K %s tso off gso off gro off" % dev, check=False)


class Dumbbell:
    """N senders s1..sN -> router g1 -> router g2 -> receivers r1..rN.

    Forward path: g2's egress to each receiver delays by DELAY_MS (netem, a
    large limit so the delay line never drops); g1's egress to g2 is the
    bottleneck: tbf at RATE with a child queue of QUEUE_PKTS packets,
    drop-tail (pfifo) or RED.  Reverse path: g1's egress to each sender
    delays by DELAY_MS.  So RTT = 2*DELAY_MS + serialisation.  Offloads are
    off on every veth, so segments are MSS sized.
    """

    def __init__(self, prefix="bb", senders=4, rate_kbit=2000, delay_ms=10,
                 queue_pkts=15, queue="droptail", mtu=1500):
        if queue not in ("droptail", "red"):
            raise ValueError("queue must be droptail or red, got %r" % queue)
        if not 1 <= senders <= 16:
            raise ValueError("senders must be 1..16")
        self.prefix = prefix
        self.n = senders
        self.rate_kbit = rate_kbit
        self.delay_ms = delay_ms
        self.queue_pkts = queue_pkts
        self.queue = queue
        self.mtu = mtu
        self.tc = []          # exact tc commands, for meta.json

    def ns(self, role):
        return "%s-%s" % (self.prefix, role)

    def saddr(self, i):
        return "198.18.%d.1" % (10 + i)

    def raddr(self, i):
        return "198.19.%d.1" % (10 + i)

    def _tc(self, ns, args):
        cmd = "tc %s" % args
        self.tc.append("[%s] %s" % (ns, cmd))
        nsx(ns, cmd)

    def _link(self, a, adev, b, bdev):
        sh("ip link add %s netns %s type veth peer name %s netns %s" %
           (adev, a, bdev, b))
        for ns, dev in ((a, adev), (b, bdev)):
            nsx(ns, "ip link set %s up mtu %d" % (dev, self.mtu))
            _offloads_off(ns, dev)

    def up(self):
        self.down()
        names = ["g1", "g2"] + ["s%d" % i for i in range(1, self.n + 1)] + \
                ["r%d" % i for i in range(1, self.n + 1)]
        for r in names:
            sh("ip netns add %s" % self.ns(r))
            nsx(self.ns(r), "ip link set lo up")
        g1, g2 = self.ns("g1"), self.ns("g2")
        for g in (g1, g2):
            sysctl(g, "net.ipv4.ip_forward", 1)
        self._link(g1, "core", g2, "core")
        nsx(g1, "ip addr add 198.18.0.1/30 dev core")
        nsx(g2, "ip addr add 198.18.0.2/30 dev core")
        nsx(g1, "ip route add 198.19.0.0/16 via 198.18.0.2")
        nsx(g2, "ip route add 198.18.0.0/16 via 198.18.0.1")
        for i in range(1, self.n + 1):
            s, r = self.ns("s%d" % i), self.ns("r%d" % i)
            self._link(s, "eth0", g1, "s%d" % i)
            self._link(r, "eth0", g2, "r%d" % i)
            nsx(s, "ip addr add %s/24 dev eth0" % self.saddr(i))
            nsx(g1, "ip addr add 198.18.%d.254/24 dev s%d" % (10 + i, i))
            nsx(s, "ip route add default via 198.18.%d.254" % (10 + i))
            nsx(r, "ip addr add %s/24 dev eth0" % self.raddr(i))
            nsx(g2, "ip addr add 198.19.%d.254/24 dev r%d" % (10 + i, i))
            nsx(r, "ip route add default via 198.19.%d.254" % (10 + i))
            # delay lines: forward at g2 -> ri, reverse at g1 -> si
            self._tc(g2, "qdisc add dev r%d root netem delay %dms limit 100000"
                     % (i, self.delay_ms))
            self._tc(g1, "qdisc add dev s%d root netem delay %dms limit 100000"
                     % (i, self.delay_ms))
        self._bottleneck()
        return self

    def _bottleneck(self):
        g1 = self.ns("g1")
        pkt = self.mtu + 14
        self._tc(g1, "qdisc add dev core root handle 1: tbf rate %dkbit "
                 "burst %d latency 10s" % (self.rate_kbit, 2 * pkt))
        if self.queue == "droptail":
            self._tc(g1, "qdisc add dev core parent 1:1 handle 10: pfifo "
                     "limit %d" % self.queue_pkts)
        else:
            qmin = max(1, self.queue_pkts // 3)
            qmax = max(qmin + 1, (self.queue_pkts * 4) // 5)
            burst = max(1, (2 * qmin + qmax) // 3)
            self._tc(g1, "qdisc add dev core parent 1:1 handle 10: red "
                     "limit %d min %d max %d avpkt %d burst %d "
                     "probability 0.1 bandwidth %dkbit" %
                     (self.queue_pkts * pkt, qmin * pkt, qmax * pkt, pkt,
                      burst, self.rate_kbit))

    def drops(self):
        return qdisc_drops(self.ns("g1"), "core")

    def qdisc_stats(self):
        return tc_json(self.ns("g1"), "core")

    def down(self):
        out = sh("ip -j netns list", check=False) or "[]"
        for entry in json.loads(out):
            name = entry.get("name", "")
            if name.startswith(self.prefix + "-"):
                sh("ip netns del %s" % name, check=False)

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()

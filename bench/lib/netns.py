"""Network namespaces for the bench: run a Python thread inside a named
netns (setns(2) on the calling thread only, via ctypes: Python 3.11 has no
os.setns), shell helpers, and the dumbbell topology the restart scenario
needs.

Topologies come from scripts/netem-topo through tests/vm/netlab.py (both
owned by the netem-topo engineer): `topo(**opts)` returns a netlab.Topo.
"""
import ctypes
import json
import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "tests" / "vm") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "vm"))
import netlab  # noqa: E402  (tests/vm/netlab.py)

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


def _proc_sys(key):
    return "/proc/sys/" + key.replace(".", "/")


def _write(path, value):
    with open(path, "w") as f:
        f.write("%s\n" % value)


def _read(path):
    with open(path) as f:
        return f.read().strip()


def sysctl(ns, key, value):
    """Set a per-netns sysctl from a thread inside NS (no process start)."""
    t = NsThread(ns, _write, _proc_sys(key), value)
    t.start()
    t.join_result(30)


def sysctl_get(ns, key):
    t = NsThread(ns, _read, _proc_sys(key))
    t.start()
    return t.join_result(30)


def topo(**opts):
    """A netlab.Topo (scripts/netem-topo); use as a context manager."""
    return netlab.Topo(**opts)


def bottleneck_drops(t):
    """Packets dropped at TOPO's bottleneck so far: the root qdisc's count
    (netem counts its child's drops too, so summing would double count)."""
    b = t.info["bottleneck"]
    qs = tc_json(b["ns"], b["dev"])
    roots = [q for q in qs if q.get("root")] or qs[:1]
    return sum(q.get("drops", 0) for q in roots)


def tc_json(ns, dev):
    """The qdiscs on DEV in NS, as tc -j -s reports them."""
    out = nsx(ns, "tc -j -s qdisc show dev %s" % dev)
    return json.loads(out or "[]")


def qdisc_drops(ns, dev):
    return sum(q.get("drops", 0) for q in tc_json(ns, dev))

"""Processes, threads and sysctls inside network namespaces.

A named namespace is /run/netns/NAME (`ip netns add`). Two ways in:

  - a process: `ip netns exec NAME CMD` (nsx, run, Bg);
  - a thread: setns(2) on the calling thread only (NsThread, in_netns).
    Python 3.11 has no os.setns, so it goes through ctypes. A thread's
    sockets, /proc/thread-self/net and /proc/sys/net belong to the
    namespace the thread is in when it opens them, so sysctls and socket
    work need no process start.
"""
import ctypes
import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


# ------------------------------------------------------------------ threads

def _setns_fd(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def setns(name):
    """Move the calling thread into network namespace NAME."""
    fd = os.open("/run/netns/%s" % name, os.O_RDONLY)
    try:
        _setns_fd(fd)
    except OSError as e:
        raise OSError(e.errno, "setns(%s): %s" % (name, e.strerror))
    finally:
        os.close(fd)


class in_netns:
    """Context: switch this thread into namespace NS (setns) and back."""

    def __init__(self, ns):
        self.ns = ns

    def __enter__(self):
        self.old = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            setns(self.ns)
        except BaseException:
            os.close(self.old)
            raise
        return self

    def __exit__(self, *exc):
        try:
            _setns_fd(self.old)
        finally:
            os.close(self.old)


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


def in_ns(ns, fn, *args, timeout=30, **kw):
    """FN(*args, **kw) run by a thread inside NS; its result."""
    t = NsThread(ns, fn, *args, **kw)
    t.start()
    return t.join_result(timeout)


# ------------------------------------------------------------------ sysctl

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
    in_ns(ns, _write, _proc_sys(key), value)


def sysctl_get(ns, key):
    """A per-netns sysctl of NS, as text."""
    return in_ns(ns, _read, _proc_sys(key))


# The receiver's own drops of data it had queued out of order: a capture
# sees those segments arrive and counts them held, the kernel (and the
# probe, which discards the range) does not.
OFO_DROPS = ("TCPOFODrop", "OfoPruned", "TCPRcvQDrop", "PruneCalled",
             "RcvPruned", "TCPZeroWindowDrop", "TCPBacklogDrop")


def _net_counters(ns, name, prefix):
    """The counters of /proc/net/NAME's PREFIX line pair (a line of
    names, a line of values) in namespace ns."""
    with in_netns(ns):
        with open("/proc/thread-self/net/%s" % name) as f:
            lines = f.read().splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith(prefix + ":"):
            return dict(zip(names.split()[1:], map(int, values.split()[1:])))
    raise RuntimeError("no %s line in /proc/net/%s" % (prefix, name))


def tcp_ext(ns):
    """The TcpExt counters (/proc/net/netstat) of namespace ns."""
    return _net_counters(ns, "netstat", "TcpExt")


def tcp_snmp(ns):
    """The Tcp counters (/proc/net/snmp: RetransSegs, ActiveOpens, ...)
    of namespace ns."""
    return _net_counters(ns, "snmp", "Tcp")


def ofo_drops(before, after):
    """The nonzero OFO_DROPS deltas between two tcp_ext() readings."""
    return {k: after.get(k, 0) - before.get(k, 0) for k in OFO_DROPS
            if after.get(k, 0) != before.get(k, 0)}


# ------------------------------------------------------------------ processes

def sh(cmd, check=True):
    """Run a shell command line; its stdout. Raises with stderr if check
    and it fails."""
    r = subprocess.run(cmd, shell=True, text=True, capture_output=True)
    if check and r.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s" %
                           (r.returncode, cmd, r.stderr.strip()))
    return r.stdout


def nsx(ns, cmd, check=True):
    """sh() of a command line inside namespace NS."""
    return sh("ip netns exec %s %s" % (shlex.quote(ns), cmd), check=check)


def nscmd(ns, cmd):
    """argv running CMD (a list, or a str for sh -c) inside NS."""
    if isinstance(cmd, str):
        cmd = ["sh", "-c", cmd]
    return ["ip", "netns", "exec", ns] + list(cmd)


def run(ns, cmd, check=True, timeout=600, **kw):
    """Run cmd (list, or str for sh -c) in namespace ns; return the
    CompletedProcess (text). Raises with stderr on failure if check."""
    p = subprocess.run(nscmd(ns, cmd), text=True, capture_output=True,
                       timeout=timeout, **kw)
    if check and p.returncode:
        raise RuntimeError("in %s: %s -> %d\n%s%s" % (
            ns, cmd, p.returncode, p.stdout, p.stderr))
    return p


class Bg:
    """A background process (stdout and stderr together, read by a thread
    into .out and a queue for wait_line)."""

    def __init__(self, popen, name):
        self.p = popen
        self.name = name
        self.lines = queue.Queue()
        self.out = []
        self._t = threading.Thread(target=self._pump, daemon=True)
        self._t.start()

    def _pump(self):
        for line in self.p.stdout:
            self.out.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def wait_line(self, pattern, timeout=30):
        rx = re.compile(pattern)
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("%s: no line matching %r within %ss; "
                                   "output: %r" % (self.name, pattern,
                                                   timeout, self.out))
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError("%s exited (%s) before printing %r; "
                                   "output: %r" % (self.name, self.p.wait(),
                                                   pattern, self.out))
            if rx.search(line):
                return line

    def stop(self, timeout=5):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        return self.p.returncode


def spawn(ns, cmd):
    """Start cmd (list, or str for sh -c) in ns in the background as a Bg
    (stdout and stderr captured)."""
    p = subprocess.Popen(nscmd(ns, cmd), text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    return Bg(p, "%s:%s" % (ns, cmd))


def start(ns, cmd, ready=None, timeout=30):
    """spawn() then, with ready (a regex), wait until it prints a matching
    line (stopping it if it does not)."""
    b = spawn(ns, cmd)
    if ready:
        try:
            b.wait_line(ready, timeout)
        except BaseException:
            b.stop()
            raise
    return b

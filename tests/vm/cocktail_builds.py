"""The two builds of cocktail behind one interface, for the VM suites that
run one test body against both.

- ModuleBuild: kmod/tcp_cocktail.ko, algorithm "cocktail": parameters in
  /sys/module/tcp_cocktail/parameters, counters in its stats parameter,
  events from its tracepoints (tcp_cocktail:cocktail_*).
- BpfBuild: bpf/cocktail.bpf.c, algorithm "cocktail_bpf", registered by
  bpf/cocktail-bpf: parameters (the module's names, ranges and values),
  counters and events through the tool, the events in the tracepoints'
  format ("SECONDS.USECS: cocktail_restart: sport=..."), so one parser
  reads both.

up() makes a build usable (loads it if it is not, saves its parameters,
allows its algorithm for unprivileged sockets); down() puts all of that
back.
"""
import signal
import subprocess
import time

from cocktail_lab import bpfctl
from cocktail_lab.bpfctl import TOOL, run as tool
from cocktail_lab.capture import Trace
from cocktail_lab.modparams import get_param, loaded, set_param
from conftest import KMOD, insmod, rmmod, sh

MOD = "tcp_cocktail"
# every parameter, in both builds
PARAMS = ("iw", "restart", "auto_rtt_us", "queue_pct", "growth",
          "pace_rate", "cwv", "pace_iw", "pace_burst", "ssthresh_est",
          "check_rtt_pct", "check_rate_pct", "check_rate_miss", "probe_pct",
          "wnd_cap", "queue_room", "shared_burst", "shared_rtt", "pace_floor",
          "ssr_floor", "quiet_pct", "ensemble", "nvp_s")


def _allow(ca):
    """Add CA to tcp_allowed_congestion_control; returns the list before."""
    allowed = sh("sysctl -n net.ipv4.tcp_allowed_congestion_control"
                 ).stdout.split()
    if ca not in allowed:
        sh("sysctl -qw net.ipv4.tcp_allowed_congestion_control='%s'" %
           " ".join(allowed + [ca]))
    return allowed


def _restore_allowed(allowed):
    sh("sysctl -qw net.ipv4.tcp_allowed_congestion_control='%s'" %
       " ".join(allowed))


class Build:
    """What both builds offer: name and ca (the algorithm's name);
    set(k, v) and get(k) of a parameter; counters(), {name: value} with
    the module's stats names; events(*names), a with block recording the
    events NAMES (cocktail_restart, cocktail_pace_end, cocktail_check):
    .lines afterwards, one event a line in the tracepoints' format, and
    .mark(text) to put a line among them; up() and down()."""
    name = ca = None

    def params(self, **kw):
        """Set parameters and check that they read back."""
        for k, v in kw.items():
            self.set(k, v)
            assert self.get(k) == str(v), (self.name, k, self.get(k), v)


class ModuleBuild(Build):
    name, ca = "module", "cocktail"

    def set(self, k, v):
        set_param(MOD, k, v)

    def get(self, k):
        return get_param(MOD, k)

    def counters(self):
        return {k: int(v) for k, v in (ln.split() for ln in
                                       get_param(MOD, "stats").splitlines())}

    def events(self, *names):
        return Trace(*("tcp_cocktail/" + n for n in names), keep=True)

    def up(self):
        ko = KMOD / (MOD + ".ko")
        assert ko.exists(), "%s is not built (make modules)" % ko
        self.loaded_here = not loaded(MOD)
        if self.loaded_here:
            insmod(MOD)
        self.saved = {p: self.get(p) for p in PARAMS}
        self.allowed = _allow(self.ca)
        return self

    def down(self):
        for p, v in self.saved.items():
            self.set(p, v)
        _restore_allowed(self.allowed)
        if self.loaded_here:
            rmmod(MOD)


class BpfEvents:
    """cocktail-bpf events for the duration of a with block. The tool's
    lines and the marks are ordered by their CLOCK_MONOTONIC time (the
    ring buffer is read every 100 ms, after the marks were made)."""

    def __enter__(self):
        self.p = subprocess.Popen([str(TOOL), "events"], text=True,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.marks = []
        self.lines = []
        return self

    def mark(self, text):
        self.marks.append("%.6f: tracing_mark_write: %s" %
                          (time.clock_gettime(time.CLOCK_MONOTONIC), text))

    def __exit__(self, *exc):
        time.sleep(0.3)     # the ring buffer is polled every 100 ms
        self.p.send_signal(signal.SIGTERM)
        out, err = self.p.communicate(timeout=30)
        assert self.p.returncode == 0, err
        self.lines = sorted(out.splitlines() + self.marks,
                            key=lambda ln: float(ln.split(":", 1)[0]))


class BpfBuild(Build):
    name, ca = "bpf", "cocktail_bpf"

    def set(self, k, v):
        bpfctl.set_params({k: v})

    def get(self, k):
        return bpfctl.get_param(k)

    def counters(self):
        return bpfctl.counters()

    def events(self, *names):
        return BpfEvents()

    def up(self):
        assert TOOL.exists(), "%s is not built (make bpf)" % TOOL
        self.loaded_here = not bpfctl.registered()
        if self.loaded_here:
            tool("load")
        self.saved = {p: self.get(p) for p in PARAMS}
        self.allowed = _allow(self.ca)
        return self

    def down(self):
        if bpfctl.registered():
            for p, v in self.saved.items():
                self.set(p, v)
            if self.loaded_here:
                tool("unload")
        _restore_allowed(self.allowed)


BUILDS = {"module": ModuleBuild(), "bpf": BpfBuild()}

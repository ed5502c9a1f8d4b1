"""Shared fixtures for the VM suites (run inside the virtme-ng VM as root).

Every test file (suite) ends with a kernel log check: a WARN, BUG, oops,
KASAN or kmemleak report logged while the suite ran fails it, and so does a
new taint flag (a warning taints the kernel even when its lines are gone).
The log is read from /dev/kmsg, record by record from where the suite
began, so a wrapped ring buffer cannot hide a line: records overwritten
before they were read fail the check too. A session-wide reader checks the
same for everything logged between suites (namespace teardown, module
unload) at the end of the run.
"""
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

# module_loaded and KMOD (the modules under test): the tests import them
# from here
from cocktail_lab.modparams import KMOD
from cocktail_lab.modparams import loaded as module_loaded

REPO = Path(__file__).resolve().parents[2]

# Lines the kernel prints for warnings, bugs and memory errors; SLUB's
# debug checks (slub_debug=FZPU) head theirs "BUG <cache> (Tainted: ...)".
DMESG_BAD = re.compile(
    r"WARNING:|BUG:|Oops|general protection fault|KASAN:|kmemleak:|"
    r"UBSAN:|Call Trace:|kernel BUG|refcount_t:|list_(add|del) corruption|"
    r"BUG \S+ \((Not t|T)ainted"
)


def sh(cmd, check=True, shell=True, **kw):
    """Run a command line; return CompletedProcess with text output.
    shell=False splits it into words and runs the program without a shell
    (one process less a call: a fraction of a second in the test VM)."""
    return subprocess.run(cmd if shell else shlex.split(cmd), shell=shell,
                          check=check, text=True, capture_output=True, **kw)


# Taint flags loading our own modules sets (O: out-of-tree, E: unsigned);
# any other new flag (W: a warning, D: an oops, B: bad page, ...) fails.
TAINT_EXPECTED = (1 << 12) | (1 << 13)
TAINT_LETTERS = "PFSRMBUDAWCIOELKXT"
LOG_EXCERPT = 200   # lines of a failing log shown in the report


def bad_dmesg(lines):
    return [ln for ln in lines if DMESG_BAD.search(ln)]


class Kmsg:
    """The kernel log from now on, read from /dev/kmsg (its own reader
    position: nothing before it, nothing skipped after it). read() returns
    the messages logged since the last read and how many records the ring
    buffer overwrote before they could be read (EPIPE from /dev/kmsg)."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)

    def read(self):
        lines, lost = [], 0
        while True:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                return lines, lost
            except BrokenPipeError:
                lost += 1
                continue
            # "prio,seq,usec,flags[,...];message\n" + " KEY=value" lines
            head, _, msg = rec.decode(errors="replace").partition(";")
            lines.append(msg.split("\n", 1)[0])

    def close(self):
        os.close(self.fd)


def tainted():
    return int(Path("/proc/sys/kernel/tainted").read_text())


def taint_letters(bits):
    return "".join(c for i, c in enumerate(TAINT_LETTERS) if bits >> i & 1)


def log_problems(what, lines, lost, taint_before=None):
    """The reasons a stretch of the kernel log fails a run ("" if none)."""
    out = []
    bad = [i for i, ln in enumerate(lines) if DMESG_BAD.search(ln)]
    if bad:
        # each report with the lines just before it (a WARN's message) and
        # its trace after it, at most LOG_EXCERPT lines in all
        keep = sorted({j for i in bad
                       for j in range(max(0, i - 2), min(len(lines), i + 30))})
        out.append("kernel reported problems during %s (%d of %d lines):\n%s"
                   % (what, min(len(keep), LOG_EXCERPT), len(lines),
                      "\n".join(lines[j] for j in keep[:LOG_EXCERPT])))
    if lost:
        out.append("%d kernel log records during %s were overwritten before "
                   "they were read (the ring buffer wrapped)" % (lost, what))
    if taint_before is not None:
        new = tainted() & ~taint_before & ~TAINT_EXPECTED
        if new:
            out.append("the kernel became tainted (%s) during %s" %
                       (taint_letters(new), what))
    return "\n".join(out)


# The debug kernel's leak detector (dev/debug-kernel builds it without the
# periodic scan); absent on Debian's stock kernel.
KMEMLEAK = Path("/sys/kernel/debug/kmemleak")


def kmemleak_begin():
    """Forget what kmemleak suspects before the run (boot-time objects the
    kernel never frees), so only objects the run leaked are reported."""
    if not KMEMLEAK.exists():
        return False
    KMEMLEAK.write_text("scan\n")
    KMEMLEAK.write_text("clear\n")
    return True


def kmemleak_report():
    """kmemleak's suspects after the run ("" if none). Two scans: an object
    still referenced from a register or a queue being torn down is not
    reported until a scan finds it unreferenced and older than
    kmemleak's minimum age (5 s)."""
    time.sleep(6)
    for _ in range(2):
        KMEMLEAK.write_text("scan\n")
    return KMEMLEAK.read_text()


@pytest.fixture(scope="session", autouse=True)
def kmsg_session():
    """Every kernel log line of the whole run, between suites included,
    and on a kernel with kmemleak a leak scan at the end."""
    if os.geteuid() != 0:
        yield
        return
    log, taint = Kmsg(), tainted()
    leakcheck = kmemleak_begin()
    yield
    lines, lost = log.read()
    log.close()
    why = log_problems("the test session", lines, lost, taint)
    if leakcheck:
        leaks = kmemleak_report()
        if leaks.strip():
            why += ("\nkmemleak found unreferenced objects after the run:\n"
                    + "\n".join(leaks.splitlines()[:LOG_EXCERPT]))
    if why:
        pytest.fail(why)


@pytest.fixture(scope="module", autouse=True)
def dmesg_clean(request):
    """Fail the suite if the kernel logged a warning while it ran."""
    if os.geteuid() != 0:
        yield
        return
    log, taint = Kmsg(), tainted()
    yield
    lines, lost = log.read()
    log.close()
    why = log_problems(request.module.__name__, lines, lost, taint)
    if why:
        pytest.fail(why)


def insmod(name, **params):
    """Load kmod/<name>.ko (the built module, never an installed one)."""
    ko = KMOD / (name + ".ko")
    assert ko.exists(), "%s not built (run make)" % ko
    args = ["%s=%s" % kv for kv in params.items()]
    subprocess.run(["insmod", str(ko)] + args, check=True)


def rmmod(name):
    if module_loaded(name):
        subprocess.run(["rmmod", name], check=True)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "growth_on_module: the growth parameter varies on the "
        "module only; the BPF build's growth=cubic items are deselected")
    config.addinivalue_line(
        "markers", "core_on_module: what the test checks is the logic of "
        "kmod/cocktail_core.h, which both builds run; the BPF build runs it "
        "in the parity run only (COCKTAIL_PARITY=1, make vmcheck-parity)")
    config.addinivalue_line(
        "markers", "ssai_on_module: tcp_slow_start_after_idle=0 runs on the "
        "module; the BPF build runs it in the parity run only")


# COCKTAIL_PARITY=1 runs every wire test on both builds (make
# vmcheck-parity): the full comparison, about a third longer than make
# check's run, which keeps under CI's time on a slow 2-core host.
PARITY = os.environ.get("COCKTAIL_PARITY") == "1"


def pytest_collection_modifyitems(config, items):
    """Tests marked growth_on_module (test_cocktail_wire: what they check
    does not depend on how the window grew) run growth=cubic on the module
    only: the BPF build runs them under reno, and its CUBIC has tests of
    its own. Where such a test also varies tcp_slow_start_after_idle
    (ssai), growth=cubic runs with Linux's default (1) only: reno covers
    both values, and the sysctl acts on the kernel's idle check, not on
    the growth. Outside the parity run (PARITY) the BPF build leaves
    the tests marked core_on_module, and tcp_slow_start_after_idle=0 of
    those marked ssai_on_module, to the module: what they check is the
    shared logic of kmod/cocktail_core.h, while the ones it runs cover
    what its shell does differently (the initial window, pacing through
    bpf_setsockopt(), jiffies and HZ, the rate samples, the restart and
    check events, loss response through the kernel's functions). Those
    items are deselected, not skipped: nothing was meant to run."""
    keep, drop = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        bpf = params.get("cocktail") == "bpf"
        if item.get_closest_marker("growth_on_module") and \
                params.get("growth") == "cubic" and \
                (bpf or params.get("ssai") == 0):
            drop.append(item)
        elif bpf and not PARITY and (
                item.get_closest_marker("core_on_module") or
                (item.get_closest_marker("ssai_on_module") and
                 params.get("ssai") == 0)):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep

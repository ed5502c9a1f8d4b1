"""Shared fixtures for the VM suites (run inside the virtme-ng VM as root).

Every test file (suite) ends with a dmesg check: a kernel WARN, BUG, oops,
KASAN or kmemleak report logged while the suite ran fails it.
"""
import os
import re
import subprocess
from pathlib import Path

import pytest

# module_loaded: the tests import it from here
from cocktail_lab.modparams import loaded as module_loaded

REPO = Path(__file__).resolve().parents[2]
KMOD = REPO / "kmod"

# Lines the kernel prints for warnings, bugs and memory errors.
DMESG_BAD = re.compile(
    r"WARNING:|BUG:|Oops|general protection fault|KASAN:|kmemleak:|"
    r"UBSAN:|Call Trace:|kernel BUG|refcount_t:|list_(add|del) corruption"
)


def sh(cmd, check=True, **kw):
    """Run a shell command; return CompletedProcess with text output."""
    return subprocess.run(cmd, shell=True, check=check, text=True,
                          capture_output=True, **kw)


def dmesg_lines():
    return subprocess.run(["dmesg"], capture_output=True, text=True,
                          check=True).stdout.splitlines()


def bad_dmesg(lines):
    return [ln for ln in lines if DMESG_BAD.search(ln)]


@pytest.fixture(scope="module", autouse=True)
def dmesg_clean(request):
    """Fail the suite if the kernel logged a warning while it ran."""
    if os.geteuid() != 0:
        yield
        return
    before = len(dmesg_lines())
    yield
    new = dmesg_lines()[before:]
    bad = bad_dmesg(new)
    if bad:
        pytest.fail("kernel reported problems during %s:\n%s" %
                    (request.module.__name__, "\n".join(new[-60:])))


def insmod(name, **params):
    """Load kmod/<name>.ko (the built module, never an installed one)."""
    ko = KMOD / (name + ".ko")
    assert ko.exists(), "%s not built (run make)" % ko
    args = ["%s=%s" % kv for kv in params.items()]
    subprocess.run(["insmod", str(ko)] + args, check=True)


def rmmod(name):
    if module_loaded(name):
        subprocess.run(["rmmod", name], check=True)

"""Slow packaging tests (make pkgcheck): DKMS cycle, Debian packages, builds
against every kernel header tree. They change the system only inside
packaging/sandbox (a mount namespace with throw-away overlays on /usr, /etc
and /var), so they can run on a shared machine and in CI."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
MODULES = [m for m in ("tcp_cocktail", "tcp_oooprobe")
           if (TOP / "kmod" / (m + ".c")).exists()]


def run(args, check=True, timeout=900, **kw):
    p = subprocess.run(args, cwd=TOP, text=True, capture_output=True,
                       timeout=timeout, **kw)
    if check and p.returncode != 0:
        pytest.fail("%s failed (%d):\n%s\n%s" % (" ".join(map(str, args)),
                    p.returncode, p.stdout[-4000:], p.stderr[-4000:]))
    return p


def in_sandbox(script, check=True):
    """Run a bash script as root inside packaging/sandbox."""
    return run(["packaging/sandbox", "bash", "-euo", "pipefail", "-c", script],
               check=check)


def kv_lines(out):
    d = {}
    for ln in out.splitlines():
        if ln.startswith("@@ "):
            k, _, v = ln[3:].partition("=")
            d[k] = v
    return d


@pytest.fixture(scope="session")
def kver():
    return run(["make", "-s", "--no-print-directory",
                "--eval=print-kver: ; @echo $(KVER)", "print-kver"]).stdout.strip()


@pytest.fixture(scope="session")
def version():
    return run(["packaging/version"]).stdout.strip()


@pytest.fixture(scope="session", autouse=True)
def needs_root_and_tools():
    if os.geteuid() != 0:
        pytest.skip("packaging tests need root (mount namespaces)")
    if "tcp_cocktail" not in MODULES:
        pytest.skip("kmod/tcp_cocktail.c does not exist yet")
    missing = [t for t in ("dkms", "dpkg-buildpackage", "dh_dkms", "unshare")
               if not shutil.which(t)]
    if missing:
        pytest.fail("missing tools: %s (see docs/installing.md, Debian packages)"
                    % " ".join(missing))

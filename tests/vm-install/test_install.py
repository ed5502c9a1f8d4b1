"""make install / uninstall for real inside the VM: modprobe by name,
congestion-control autoload through the sysctl, boot-time loading through
modules-load.d with modprobe.d parameters (systemd-modules-load), and
uninstall leaving nothing behind.

The VM's root is the host's, read-only; the suite puts tmpfs-backed
overlays on /usr (so /lib/modules) and /etc first, so nothing reaches the
host. Overlays are mounted in the VM's init mount namespace on purpose: the
kernel's module autoload runs /sbin/modprobe there."""
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from vm_conftest import REPO, sh

KVER = os.uname().release
MODDIR = Path("/lib/modules") / KVER / "extra"
PREFIX = "/usr/local"
MODULES = [m for m in ("tcp_cocktail", "tcp_oooprobe")
           if (REPO / "kmod" / (m + ".c")).exists()]
SYSCTL_CC = "/proc/sys/net/ipv4/tcp_congestion_control"


def make(*args, check=True):
    p = subprocess.run(["make", "--no-print-directory", *args], cwd=REPO,
                       text=True, capture_output=True, timeout=1800)
    if check and p.returncode != 0:
        pytest.fail("make %s failed:\n%s\n%s" % (" ".join(args), p.stdout[-3000:],
                                                  p.stderr[-3000:]))
    return p


def unload_all():
    for m in reversed(MODULES):
        if Path("/sys/module", m).exists():
            sh("rmmod %s" % m, check=False)


@pytest.fixture(scope="module", autouse=True)
def writable_system(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("needs root inside the VM")
    if "tcp_cocktail" not in MODULES:
        pytest.skip("kmod/tcp_cocktail.c does not exist yet")
    mounted = []
    # virtme-ng already gives the guest throw-away overlays on /usr, /etc
    # and /var; only when /usr is not writable are our own put on top.
    probe = Path("/usr/lib/modules/.tcp-cocktail-write-test")
    try:
        probe.write_text("")
        probe.unlink()
        writable = True
    except OSError:
        writable = False
    base = Path(sh("mktemp -d /run/tcp-cocktail-ovl.XXXXXX").stdout.strip())
    sh("mount -t tmpfs ovl %s" % base)
    for d in () if writable else ("/usr", "/etc"):
        up, wk = base / ("up" + d), base / ("wk" + d)
        up.mkdir(parents=True)
        wk.mkdir(parents=True)
        sh("mount -t overlay overlay -o lowerdir=%s,upperdir=%s,workdir=%s %s"
           % (d, up, wk, d))
        mounted.append(d)
    old_cc = Path(SYSCTL_CC).read_text().strip()
    unload_all()
    yield
    Path(SYSCTL_CC).write_text(old_cc + "\n")
    unload_all()
    for d in reversed(mounted):
        sh("umount -l %s" % d, check=False)
    sh("umount -l %s" % base, check=False)


def test_01_install(tmp_path):
    # No DESTDIR: the real paths, depmod included.
    make("install-boot", "NOBUILD=1")
    for m in MODULES:
        assert (MODDIR / (m + ".ko")).exists()
        path = sh("modinfo -F filename %s" % m).stdout.strip()
        assert path == str(MODDIR / (m + ".ko"))
    assert Path(PREFIX, "share/tcp-cocktail/install-manifest").exists()
    assert Path("/etc/modules-load.d/tcp-cocktail.conf").exists()
    assert Path("/etc/modprobe.d/tcp-cocktail.conf").exists()


def conf_options():
    """The parameters the installed modprobe.d file sets, in its order."""
    text = Path("/etc/modprobe.d/tcp-cocktail.conf").read_text()
    opts = [kv for ln in text.splitlines() if ln.startswith("options ")
            for kv in ln.split()[2:]]
    assert opts, "no options line in /etc/modprobe.d/tcp-cocktail.conf"
    return opts


def assert_params(opts):
    """Every parameter the modprobe.d file sets reads back as set."""
    for kv in opts:
        k, v = kv.split("=", 1)
        got = Path("/sys/module/tcp_cocktail/parameters", k).read_text()
        assert got.strip() == v, (k, got, v)


def test_02_modprobe_by_name():
    opts = conf_options()
    unload_all()
    # modprobe itself reads the file: its dry run passes the options on
    p = sh("modprobe -n -v tcp_cocktail")
    line = [ln for ln in p.stdout.splitlines() if "tcp_cocktail.ko" in ln]
    assert line and line[-1].split()[2:] == opts, p.stdout
    sh("modprobe tcp_cocktail")
    assert Path("/sys/module/tcp_cocktail").exists()
    assert "cocktail" in Path(
        "/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    assert_params(opts)
    sh("rmmod tcp_cocktail")
    if "tcp_oooprobe" in MODULES:
        sh("modprobe tcp_oooprobe")
        assert Path("/sys/module/tcp_oooprobe").exists()
        sh("rmmod tcp_oooprobe")


def test_03_sysctl_autoloads_and_connection_uses_it():
    assert not Path("/sys/module/tcp_cocktail").exists()
    p = sh("sysctl -w net.ipv4.tcp_congestion_control=cocktail", check=False)
    assert p.returncode == 0, p.stderr
    assert Path("/sys/module/tcp_cocktail").exists(), "sysctl did not autoload"
    assert Path(SYSCTL_CC).read_text().strip() == "cocktail"
    # A new connection gets it (loopback in the VM's own netns); the
    # receiver drains in a thread so the sender never blocks for good.
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    cli = socket.create_connection(srv.getsockname(), timeout=30)
    acc, _ = srv.accept()
    acc.settimeout(30)
    got = []

    def drain():
        n = 0
        while n < 100000:
            b = acc.recv(65536)
            if not b:
                break
            n += len(b)
        got.append(n)

    t = threading.Thread(target=drain)
    t.start()
    cli.sendall(b"x" * 100000)
    t.join(60)
    cc = cli.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    for s in (cli, acc, srv):
        s.close()
    assert got == [100000]
    assert cc.rstrip(b"\0") == b"cocktail"
    Path(SYSCTL_CC).write_text("reno\n")


def test_04_modules_load_d():
    sml = next((p for p in ("/lib/systemd/systemd-modules-load",
                            "/usr/lib/systemd/systemd-modules-load")
                if os.access(p, os.X_OK)), None)
    if not sml:
        pytest.skip("systemd-modules-load is not installed")
    unload_all()
    assert not Path("/sys/module/tcp_cocktail").exists()
    p = subprocess.run([sml], text=True, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert Path("/sys/module/tcp_cocktail").exists()
    assert_params(conf_options())
    unload_all()


def test_05_uninstall():
    unload_all()
    make("uninstall")
    for m in MODULES:
        assert not (MODDIR / (m + ".ko")).exists()
        assert sh("modinfo %s" % m, check=False).returncode != 0
        assert sh("modprobe %s" % m, check=False).returncode != 0
    for p in ("/etc/modules-load.d/tcp-cocktail.conf",
              "/etc/modprobe.d/tcp-cocktail.conf", PREFIX + "/share/tcp-cocktail",
              PREFIX + "/sbin/tcp-tune", PREFIX + "/sbin/oooprobed"):
        assert not Path(p).exists(), p

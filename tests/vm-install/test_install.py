"""make install / uninstall for real inside the VM: modprobe by name,
congestion-control autoload through the sysctl, boot-time loading through
modules-load.d with modprobe.d parameters (systemd-modules-load), that
installing changes no default until the operator copies the sysctl.d
example (and removing it switches back), and uninstall leaving nothing
behind.

A "reboot" here (boot()) is what a boot does to the settings that matter:
the kernel's values as this VM booted with them (recorded before the suite
changes anything), no tcp-cocktail module loaded, then what systemd runs
at boot: systemd-modules-load and systemd-sysctl.

The VM's root is the host's, read-only; the suite puts tmpfs-backed
overlays on /usr (so /lib/modules) and /etc first, so nothing reaches the
host. Overlays are mounted in the VM's init mount namespace on purpose: the
kernel's module autoload runs /sbin/modprobe there."""
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from vm_conftest import REPO, sh

KVER = os.uname().release
MODDIR = Path("/lib/modules") / KVER / "extra"
PREFIX = "/usr/local"
MODULES = [m for m in ("tcp_cocktail", "tcp_oooprobe")
           if (REPO / "kmod" / (m + ".c")).exists()]
SYSCTL_CC = "/proc/sys/net/ipv4/tcp_congestion_control"
SYSCTL_QDISC = "/proc/sys/net/core/default_qdisc"
SYSCTL_ALLOWED = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
EXAMPLE = Path(PREFIX, "share/tcp-cocktail/examples/sysctl.d/90-tcp-cocktail.conf")
OPT_IN = Path("/etc/sysctl.d/90-tcp-cocktail.conf")
SYSCTL_D = ("/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d",
            "/usr/lib/sysctl.d", "/lib/sysctl.d")
# The values the VM booted with (the fixture records them first).
BOOT = {}
# cc and qdisc after a boot with nothing of tcp-cocktail installed.
BASELINE = {}


def systemd_tool(name):
    return next((p for p in ("/lib/systemd/" + name, "/usr/lib/systemd/" + name)
                 if os.access(p, os.X_OK)), None)


def boot():
    """Reboot, as far as the default congestion control and qdisc go (see
    the module docstring); returns (congestion control, qdisc) after it."""
    Path(SYSCTL_CC).write_text(BOOT["cc"] + "\n")
    Path(SYSCTL_QDISC).write_text(BOOT["qdisc"] + "\n")
    # a connection that just closed may hold the module for a moment
    deadline = time.monotonic() + 30
    while True:
        unload_all()
        if not Path("/sys/module/tcp_cocktail").exists():
            break
        assert time.monotonic() < deadline, "tcp_cocktail stays loaded"
        time.sleep(0.2)
    Path(SYSCTL_ALLOWED).write_text(BOOT["allowed"] + "\n")
    sml = systemd_tool("systemd-modules-load")
    if sml:
        p = subprocess.run([sml], text=True, capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr
    ss = systemd_tool("systemd-sysctl")
    # systemd-sysctl reports (and exits 1 for) the distribution's keys this
    # VM's kernel may lack; what counts is the values read back below
    subprocess.run([ss] if ss else ["sysctl", "--system"], text=True,
                   capture_output=True, timeout=60)
    return (Path(SYSCTL_CC).read_text().strip(),
            Path(SYSCTL_QDISC).read_text().strip())


def our_sysctl_files():
    return [str(f) for d in SYSCTL_D if Path(d).is_dir()
            for f in Path(d).iterdir() if "cocktail" in f.name]


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
    BOOT.update(cc=Path(SYSCTL_CC).read_text().strip(),
                qdisc=Path(SYSCTL_QDISC).read_text().strip(),
                allowed=Path(SYSCTL_ALLOWED).read_text().strip())
    unload_all()
    yield
    Path(SYSCTL_CC).write_text(BOOT["cc"] + "\n")
    Path(SYSCTL_QDISC).write_text(BOOT["qdisc"] + "\n")
    unload_all()
    for d in reversed(mounted):
        sh("umount -l %s" % d, check=False)
    sh("umount -l %s" % base, check=False)


def test_00_boot_before_install():
    """The baseline: what a boot gives with nothing of tcp-cocktail
    installed (the distribution's own sysctl.d files included)."""
    assert not our_sysctl_files()
    BASELINE["cc_qdisc"] = boot()
    assert BASELINE["cc_qdisc"][0] != "cocktail"


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


def test_01b_installed_and_rebooted_keeps_the_defaults():
    """Installed (install-boot: modules-load.d and modprobe.d too) and
    rebooted, the host runs the congestion control and qdisc it had: the
    sysctl.d file is only an example."""
    if "cc_qdisc" not in BASELINE:
        pytest.skip("no baseline (test_00 did not run)")
    assert boot() == BASELINE["cc_qdisc"]
    assert EXAMPLE.exists()
    assert not our_sysctl_files()
    # the module itself was loaded at boot (modules-load.d), unused
    assert Path("/sys/module/tcp_cocktail").exists()
    sh(PREFIX + "/sbin/tcp-tune show --json")


def test_01c_opt_in_and_undo():
    """Copying the example to /etc/sysctl.d is the opt-in: `sysctl -p` of
    it switches the running host, and it stays switched across a reboot;
    removing it is the undo: the next boot is back to the baseline."""
    if "cc_qdisc" not in BASELINE:
        pytest.skip("no baseline (test_00 did not run)")
    unload_all()
    shutil.copy(EXAMPLE, OPT_IN)
    try:
        # the kernel loads the module for the sysctl (no modules-load.d needed)
        p = sh("sysctl -p %s" % OPT_IN, check=False)
        assert p.returncode == 0, p.stderr
        assert Path("/sys/module/tcp_cocktail").exists()
        assert (Path(SYSCTL_CC).read_text().strip(),
                Path(SYSCTL_QDISC).read_text().strip()) == ("cocktail", "fq")
        assert boot() == ("cocktail", "fq")
        # and a new connection gets it
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        cli = socket.create_connection(srv.getsockname(), timeout=30)
        cc = cli.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
        srv.accept()[0].close()
        cli.close()
        srv.close()
        assert cc.rstrip(b"\0") == b"cocktail"
    finally:
        OPT_IN.unlink()
    assert boot() == BASELINE["cc_qdisc"]


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
    assert not our_sysctl_files()
    for p in ("/etc/modules-load.d/tcp-cocktail.conf",
              "/etc/modprobe.d/tcp-cocktail.conf", PREFIX + "/share/tcp-cocktail",
              PREFIX + "/sbin/tcp-tune", PREFIX + "/sbin/oooprobed"):
        assert not Path(p).exists(), p

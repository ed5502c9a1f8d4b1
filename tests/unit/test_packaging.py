"""Host tests for packaging/: make install / uninstall into a DESTDIR, the
systemd unit (systemd-analyze verify), module signing with the kernel's
sign-file, and the DKMS source staging. Fast (seconds, plus one `make
modules`); the DKMS cycle, the Debian packages and the builds against other
kernels are in tests/packaging (make pkgcheck)."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
MODULES = [m for m in ("tcp_cocktail", "tcp_oooprobe")
           if (TOP / "kmod" / (m + ".c")).exists()]


def run(args, check=True, **kw):
    return subprocess.run(args, cwd=TOP, text=True, capture_output=True,
                          check=False, **kw) if not check else _checked(args, **kw)


def _checked(args, **kw):
    p = subprocess.run(args, cwd=TOP, text=True, capture_output=True, **kw)
    if p.returncode != 0:
        pytest.fail("%s failed (%d):\n%s\n%s" % (" ".join(map(str, args)),
                    p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return p


def make(*args, check=True):
    return run(["make", "--no-print-directory", *args], check=check)


@pytest.fixture(scope="module")
def kver():
    return make("-s", "-f", "Makefile", "--eval=print-kver: ; @echo $(KVER)",
                "print-kver").stdout.strip()


@pytest.fixture(scope="module")
def built():
    """The modules and daemon, built the normal way (make all)."""
    if not MODULES:
        pytest.skip("no module sources in kmod/ yet")
    make("all")
    return [TOP / "kmod" / (m + ".ko") for m in MODULES]


def tree(root):
    """Every file and directory under root, as absolute-in-root paths."""
    root = Path(root)
    files, dirs = set(), set()
    for p in root.rglob("*"):
        rel = "/" + str(p.relative_to(root))
        (dirs if p.is_dir() and not p.is_symlink() else files).add(rel)
    return files, dirs


def expected_files(kver, prefix="/usr/local"):
    share = prefix + "/share/tcp-cocktail"
    exp = {share + "/install-manifest"}
    for m in MODULES:
        exp.add("/lib/modules/%s/extra/%s.ko" % (kver, m))
    if (TOP / "daemon" / "oooprobed").exists():
        exp.add(prefix + "/sbin/oooprobed")
        exp.add(prefix + "/lib/systemd/system/oooprobed.service")
    if (TOP / "bpf" / "cocktail-bpf").exists():
        exp.add(prefix + "/sbin/cocktail-bpf")
    if (TOP / "scripts" / "tcp-tune").exists():
        exp.add(prefix + "/sbin/tcp-tune")
        for p in (TOP / "scripts" / "tcp_tune").glob("*.py"):
            exp.add(prefix + "/lib/tcp-cocktail/tcp_tune/" + p.name)
    for p in (TOP / "sysctl" / "profiles").glob("*"):
        if p.is_file():
            exp.add(share + "/profiles/" + p.name)
    if (TOP / "sysctl" / "90-tcp-cocktail.conf").exists():
        exp.add(share + "/examples/sysctl.d/90-tcp-cocktail.conf")
    for k in ("modules-load.d", "modprobe.d"):
        exp.add("%s/examples/%s/tcp-cocktail.conf" % (share, k))
    return exp


def test_install_uninstall_destdir(tmp_path, built, kver):
    dest = tmp_path / "root"
    out = make("install", "DESTDIR=%s" % dest).stdout
    files, _ = tree(dest)
    assert files == expected_files(kver), out
    # Built for the kernel we install for, byte-identical, right modes.
    for m in MODULES:
        ko = dest / ("lib/modules/%s/extra/%s.ko" % (kver, m))
        assert ko.read_bytes() == (TOP / "kmod" / (m + ".ko")).read_bytes()
        vm = run(["modinfo", "-F", "vermagic", str(ko)]).stdout.split()[0]
        assert vm == kver
        assert oct(ko.stat().st_mode & 0o777) == "0o644"
    for f in files:
        if "/sbin/" in f:
            assert os.access(dest / f.lstrip("/"), os.X_OK), f
    # The installed tcp-tune finds its package, from outside the checkout,
    # and writes no __pycache__ install does not own.
    tool = dest / "usr/local/sbin/tcp-tune"
    if tool.exists():
        p = subprocess.run([str(tool), "--help"], cwd=tmp_path, text=True,
                           capture_output=True)
        assert p.returncode == 0 and p.stdout.startswith("usage: tcp-tune"), p.stderr
        assert tree(dest)[0] == files
    # No depmod output in a DESTDIR (it would not be in the manifest).
    assert not list(dest.glob("lib/modules/*/modules.dep"))
    # The manifest names every file install put there.
    man = (dest / "usr/local/share/tcp-cocktail/install-manifest").read_text()
    listed = {ln[2:] for ln in man.splitlines() if ln.startswith("f ")}
    assert listed == files - {"/usr/local/share/tcp-cocktail/install-manifest"}
    # Installing again is fine (same files, still one manifest).
    make("install", "DESTDIR=%s" % dest)
    assert tree(dest)[0] == files
    make("uninstall", "DESTDIR=%s" % dest)
    assert tree(dest) == (set(), set()), "uninstall left files behind"


def test_install_prefix_usr_and_unit_path(tmp_path, built, kver):
    dest = tmp_path / "root"
    make("install", "DESTDIR=%s" % dest, "PREFIX=/usr")
    files, _ = tree(dest)
    assert files == expected_files(kver, "/usr")
    unit = dest / "usr/lib/systemd/system/oooprobed.service"
    if unit.exists():
        assert "ExecStart=/usr/sbin/oooprobed " in unit.read_text()
    make("uninstall", "DESTDIR=%s" % dest, "PREFIX=/usr")
    assert tree(dest) == (set(), set())


def test_uninstall_keeps_foreign_files(tmp_path, built, kver):
    """Directories install did not create, and files in them that are not
    ours, survive uninstall."""
    dest = tmp_path / "root"
    (dest / "usr/local/sbin").mkdir(parents=True)
    (dest / "usr/local/sbin/other-tool").write_text("#!/bin/sh\n")
    make("install", "DESTDIR=%s" % dest)
    make("uninstall", "DESTDIR=%s" % dest)
    files, dirs = tree(dest)
    assert files == {"/usr/local/sbin/other-tool"}
    assert dirs == {"/usr", "/usr/local", "/usr/local/sbin"}


def test_install_refuses_foreign_file_and_changes_nothing(tmp_path, built, kver):
    dest = tmp_path / "root"
    target = dest / ("lib/modules/%s/extra/%s.ko" % (kver, MODULES[0]))
    target.parent.mkdir(parents=True)
    target.write_bytes(b"someone else's module")
    before = tree(dest)
    p = make("install", "DESTDIR=%s" % dest, check=False)
    assert p.returncode != 0
    assert "was not installed by 'make install'" in p.stderr
    assert tree(dest) == before
    assert target.read_bytes() == b"someone else's module"


def test_uninstall_without_manifest_is_an_error(tmp_path):
    dest = tmp_path / "empty"
    dest.mkdir()
    p = make("uninstall", "DESTDIR=%s" % dest, check=False)
    assert p.returncode != 0
    assert "nothing to uninstall" in p.stderr
    assert tree(dest) == (set(), set())


def test_install_rejects_relative_prefix(tmp_path, built):
    p = make("install", "DESTDIR=%s" % tmp_path, "PREFIX=usr/local", check=False)
    assert p.returncode != 0 and "PREFIX must be an absolute path" in p.stderr
    assert tree(tmp_path) == (set(), set())


# ---- systemd unit -------------------------------------------------------------

UNIT = TOP / "packaging" / "oooprobed.service"


def unit_directives():
    d = {}
    for ln in UNIT.read_text().splitlines():
        if "=" in ln and not ln.startswith("#"):
            k, v = ln.split("=", 1)
            d.setdefault(k.strip(), []).append(v.strip())
    return d


def test_unit_directives():
    d = unit_directives()
    assert d["ExecStartPre"][0] == "+/sbin/modprobe tcp_oooprobe"
    start = d["ExecStart"][0].split()
    assert start[0] == "/usr/sbin/oooprobed"
    prom = start[start.index("--prom") + 1]
    assert prom.startswith("/var/lib/prometheus/node-exporter/")
    assert d["ExecReload"] == ["/bin/kill -HUP $MAINPID"]
    assert d["Restart"] == ["on-failure"]
    assert d["ProtectSystem"] == ["strict"]
    assert d["CapabilityBoundingSet"] == ["CAP_NET_ADMIN"]
    assert d["NoNewPrivileges"] == ["yes"]
    # Writable only where it writes: the directory of the --prom file.
    assert d["ReadWritePaths"] == [os.path.dirname(prom)]


def test_unit_systemd_analyze_verify(tmp_path):
    sa = shutil.which("systemd-analyze")
    if not sa:
        pytest.skip("systemd-analyze is not installed")
    daemon = TOP / "daemon" / "oooprobed"
    if not daemon.exists():
        pytest.skip("daemon/oooprobed is not built (verify needs ExecStart to exist)")
    unit = tmp_path / "oooprobed.service"
    unit.write_text(UNIT.read_text().replace("/usr/sbin/oooprobed", str(daemon)))
    p = subprocess.run([sa, "verify", "--man=no", str(unit)], text=True,
                       capture_output=True)
    # verify exits 0 on unknown keys and bad values; they are warnings
    # naming the file, so any mention of the unit is a failure.
    msgs = [ln for ln in (p.stdout + p.stderr).splitlines() if "oooprobed" in ln]
    assert p.returncode == 0 and not msgs, p.stdout + p.stderr


def test_systemd_analyze_verify_catches_errors(tmp_path):
    """The check above can fail: a broken copy of the unit is reported."""
    sa = shutil.which("systemd-analyze")
    if not sa:
        pytest.skip("systemd-analyze is not installed")
    unit = tmp_path / "oooprobed.service"
    unit.write_text(UNIT.read_text().replace("/usr/sbin/oooprobed", "/bin/true")
                    .replace("ProtectSystem=strict", "ProtectSystem=bogus"))
    p = subprocess.run([sa, "verify", "--man=no", str(unit)], text=True,
                       capture_output=True)
    assert [ln for ln in (p.stdout + p.stderr).splitlines() if "oooprobed" in ln]


def test_boot_config_examples():
    ml = (TOP / "packaging/modules-load.d/tcp-cocktail.conf").read_text()
    names = [ln.strip() for ln in ml.splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert names == ["tcp_cocktail"]
    mp = (TOP / "packaging/modprobe.d/tcp-cocktail.conf").read_text()
    opts = [ln.split() for ln in mp.splitlines() if ln.startswith("options ")]
    assert opts and all(o[1] == "tcp_cocktail" for o in opts)
    params = dict(kv.split("=", 1) for o in opts for kv in o[2:])
    if "tcp_cocktail" in MODULES:
        # Every parameter the example sets exists in the module source.
        src = (TOP / "kmod/tcp_cocktail.c").read_text()
        for k in params:
            assert re.search(r"module_param(_cb|_named)?\(\s*%s\b" % k, src), k


# ---- signing ----------------------------------------------------------------------

def test_sign(tmp_path, built):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    _checked(["openssl", "req", "-new", "-x509", "-newkey", "rsa:2048",
              "-nodes", "-days", "1", "-outform", "PEM",
              "-keyout", str(key), "-out", str(cert),
              "-subj", "/CN=tcp-cocktail throwaway test key/",
              "-addext", "extendedKeyUsage=codeSigning"])
    ko = tmp_path / built[0].name
    shutil.copy(built[0], ko)
    unsigned = ko.read_bytes()
    assert not unsigned.endswith(b"~Module signature appended~\n")
    assert run(["modinfo", "-F", "signer", str(ko)]).stdout.strip() == ""
    make("sign", "KEY=%s" % key, "CERT=%s" % cert, "SIGN_MODULES=%s" % ko)
    signed = ko.read_bytes()
    assert signed.startswith(unsigned)
    assert signed.endswith(b"~Module signature appended~\n")
    assert run(["modinfo", "-F", "signer", str(ko)]).stdout.strip() == \
        "tcp-cocktail throwaway test key"
    assert run(["modinfo", "-F", "sig_hashalgo", str(ko)]).stdout.strip() == "sha256"


def test_sign_bad_input_changes_nothing(tmp_path, built):
    ko = tmp_path / built[0].name
    shutil.copy(built[0], ko)
    before = ko.read_bytes()
    p = make("sign", "SIGN_MODULES=%s" % ko, check=False)
    assert p.returncode != 0 and "usage: make sign KEY=" in p.stderr
    p = make("sign", "KEY=%s/nope.pem" % tmp_path, "CERT=%s/nope.pem" % tmp_path,
             "SIGN_MODULES=%s" % ko, check=False)
    assert p.returncode != 0 and "cannot read KEY" in p.stderr
    assert ko.read_bytes() == before


# ---- DKMS source -------------------------------------------------------------------

def test_dkms_source_staging(tmp_path):
    if "tcp_cocktail" not in MODULES:
        pytest.skip("kmod/tcp_cocktail.c does not exist yet")
    d = tmp_path / "src"
    _checked(["packaging/dkms-source", str(d), "9.9.9"])
    # dkms sources dkms.conf with bash: read it back the same way.
    q = _checked(["bash", "-c", 'kernel_source_dir=K dkms_tree=T; . "$1"; '
                  'echo "$PACKAGE_NAME $PACKAGE_VERSION $AUTOINSTALL"; '
                  'echo "${BUILT_MODULE_NAME[@]}"', "x", str(d / "dkms.conf")])
    head, names = q.stdout.splitlines()
    assert head == "tcp-cocktail 9.9.9 yes"
    assert names.split() == MODULES
    for m in MODULES:
        assert (d / "kmod" / (m + ".c")).exists()
    assert not list(d.rglob("*.o")) and not list(d.rglob("*.ko"))
    assert not list(d.rglob("*.mod.c"))

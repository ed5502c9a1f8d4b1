"""make deb: both packages build, lintian reports no errors, and dpkg -i of
both (inside the sandbox) builds the modules with DKMS and installs the
tools; dpkg --purge removes it all."""
import re

import pytest

from conftest import MODULES, TOP, in_sandbox, kv_lines, run


@pytest.fixture(scope="module")
def debs(version):
    # The version is pinned: other commits landing meanwhile change it.
    run(["make", "--no-print-directory", "deb", "PKG_VERSION=" + version])
    out = TOP / "build" / "deb"
    d = {p: out / ("%s_%s_%s.deb" % (p, version, a))
         for p, a in (("tcp-cocktail-dkms", "all"), ("tcp-cocktail-tools", "amd64"))}
    for p in d.values():
        assert p.exists(), p
    return d


def test_lintian_no_errors(debs):
    log = (TOP / "build" / "deb" / "lintian.log").read_text()
    errors = [ln for ln in log.splitlines() if re.match(r"^E: ", ln)]
    assert not errors, log


def test_deb_contents(debs, version):
    dk = run(["dpkg-deb", "-c", str(debs["tcp-cocktail-dkms"])]).stdout
    src = "./usr/src/tcp-cocktail-%s/" % version
    for m in MODULES:
        assert src + "kmod/%s.c" % m in dk
    assert src + "dkms.conf" in dk and src + "Kbuild" in dk
    assert ".ko" not in dk and ".o\n" not in dk
    tools = run(["dpkg-deb", "-c", str(debs["tcp-cocktail-tools"])]).stdout
    if (TOP / "daemon" / "oooprobed.c").exists():
        assert "./usr/sbin/oooprobed" in tools
        # debhelper 13.11 (Debian 12) installs units in /lib/systemd/system.
        assert re.search(r"\./(usr/)?lib/systemd/system/oooprobed\.service\n", tools)
    if (TOP / "scripts" / "tcp-tune").exists():
        assert "./usr/sbin/tcp-tune" in tools
        for p in (TOP / "scripts" / "tcp_tune").glob("*.py"):
            assert "./usr/lib/tcp-cocktail/tcp_tune/%s\n" % p.name in tools
        assert "__pycache__" not in tools
    if (TOP / "sysctl" / "90-tcp-cocktail.conf").exists():
        # an example, inert until the operator copies it to /etc/sysctl.d
        assert "./usr/share/tcp-cocktail/examples/sysctl.d/90-tcp-cocktail.conf\n" \
            in tools
    for k in ("modules-load.d", "modprobe.d"):
        assert "./usr/share/tcp-cocktail/examples/%s/tcp-cocktail.conf\n" % k in tools
    # nothing the boot reads: no sysctl.d, modules-load.d or modprobe.d file
    for ln in tools.splitlines():
        path = ln.split()[-1]
        assert not re.search(r"/(sysctl|modules-load|modprobe)\.d/.", path) or \
            path.startswith("./usr/share/tcp-cocktail/examples/"), ln
    info = run(["dpkg-deb", "-f", str(debs["tcp-cocktail-dkms"]), "Depends"]).stdout
    assert "dkms" in info


def test_dpkg_install_and_purge(debs, kver, version):
    out = in_sandbox(r'''
        # Build for the test kernel (the running one may have no headers).
        dpkg -i %(dk)s %(tools)s
        dkms status -m tcp-cocktail -v %(v)s -k %(k)s | grep -q installed ||
            dkms install -m tcp-cocktail -v %(v)s -k %(k)s
        echo "@@ status=$(dkms status -m tcp-cocktail -v %(v)s -k %(k)s)"
        for m in %(mods)s; do
            echo "@@ $m=$(modinfo -k %(k)s -F filename $m)"
        done
        echo "@@ tools=$(dpkg -L tcp-cocktail-tools | tr '\n' ' ')"
        echo "@@ enabled=$(systemctl --root=/ is-enabled oooprobed.service 2>&1 || true)"
        if [[ -x /usr/sbin/tcp-tune ]]; then
            echo "@@ tcptune=$(cd / && /usr/sbin/tcp-tune --help | head -n 1)"
        fi
        dpkg --purge tcp-cocktail-tools tcp-cocktail-dkms
        echo "@@ after=$(dkms status -m tcp-cocktail | wc -l)"
        for m in %(mods)s; do
            echo "@@ $m.after=$(modinfo -k %(k)s -F filename $m 2>/dev/null || echo gone)"
        done
        echo "@@ left=$(ls -d /usr/src/tcp-cocktail-* /usr/lib/tcp-cocktail /lib/systemd/system/oooprobed.service /usr/lib/systemd/system/oooprobed.service 2>/dev/null | wc -l)"
    ''' % {"dk": debs["tcp-cocktail-dkms"], "tools": debs["tcp-cocktail-tools"],
           "v": version, "k": kver, "mods": " ".join(MODULES)}).stdout
    kv = kv_lines(out)
    assert kv["status"].endswith("installed"), out
    for m in MODULES:
        assert kv[m] == "/lib/modules/%s/updates/dkms/%s.ko" % (kver, m), out
        assert kv[m + ".after"] == "gone", out
    if (TOP / "daemon" / "oooprobed.c").exists():
        assert "/usr/sbin/oooprobed" in kv["tools"]
        assert kv["enabled"].strip() == "disabled", out
    if (TOP / "scripts" / "tcp-tune").exists():
        assert kv["tcptune"].startswith("usage: tcp-tune "), out
    assert kv["after"] == "0" and kv["left"] == "0", out

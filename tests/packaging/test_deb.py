"""make deb: the three packages build, lintian reports no errors, and dpkg -i
(inside the sandbox) of dkms and tools builds the modules with DKMS and
installs the tools, of bpf installs the BPF build's tool and registers
nothing; dpkg --purge removes it all."""
import os
import re

import pytest

from conftest import MODULES, TOP, in_sandbox, kv_lines, run


@pytest.fixture(scope="module")
def debs(version):
    # The version is pinned: other commits landing meanwhile change it.
    run(["make", "--no-print-directory", "deb", "PKG_VERSION=" + version])
    out = TOP / "build" / "deb"
    d = {p: out / ("%s_%s_%s.deb" % (p, version, a))
         for p, a in (("tcp-cocktail-dkms", "all"), ("tcp-cocktail-tools", "amd64"),
                      ("tcp-cocktail-bpf", "amd64"))}
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


def test_bpf_deb_contents(debs):
    """The tool alone (the BPF object travels inside it), its man page, no
    build products, libbpf from shlibs, and no maintainer script: nothing
    runs at install, so nothing is loaded or registered."""
    deb = str(debs["tcp-cocktail-bpf"])
    files = [ln.split()[-1] for ln in run(["dpkg-deb", "-c", deb]).stdout.splitlines()]
    assert "./usr/sbin/cocktail-bpf" in files, files
    assert "./usr/share/man/man8/cocktail-bpf.8.gz" in files, files
    for f in files:
        assert not re.search(r"(\.o|\.h|vmlinux.*|\.skel\..*)$", f), f
        assert not f.startswith(("./usr/include", "./usr/lib/debug")), f
    assert [f for f in files if not f.endswith("/")] == [
        "./usr/sbin/cocktail-bpf", "./usr/share/doc/tcp-cocktail-bpf/changelog.gz",
        "./usr/share/doc/tcp-cocktail-bpf/copyright",
        "./usr/share/man/man8/cocktail-bpf.8.gz"], files
    depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout
    assert re.search(r"\blibbpf1\b", depends), depends
    info = run(["dpkg-deb", "-I", deb]).stdout
    members = re.findall(r"^\s+\d+ bytes,\s+\d+ lines\s+\*?\s*(\S+)", info, re.M)
    assert sorted(members) == ["control", "md5sums"], info


def test_bpf_build_needs_btf_image(debs, version):
    """Without the kernel image vmlinux.h comes from, the package build stops
    with one sentence saying so (not a bpftool or libbpf dump)."""
    src = TOP / "build" / "deb" / ("tcp-cocktail-" + version)
    env = dict(os.environ, BPF_BTF_IMAGE="/nonexistent/vmlinuz-6.1.0-0-amd64")
    p = run(["make", "-s", "--no-print-directory", "-C", str(src), "-f", "debian/rules",
             "override_dh_auto_build"], check=False, env=env)
    assert p.returncode != 0, p.stdout + p.stderr
    said = [ln for ln in p.stderr.splitlines() if not ln.startswith("make")]
    assert said == ["debian/rules: no kernel image to generate the BPF build's "
                    "vmlinux.h from (/nonexistent/vmlinuz-6.1.0-0-amd64): install "
                    "linux-image-amd64 or set BPF_BTF_IMAGE=/boot/vmlinuz-VERSION"], \
        p.stderr


def test_bpf_dpkg_install_and_purge(debs):
    """The package installs alone (no module package needed), the tool runs
    from /usr/sbin, installing registers no congestion control, and purge
    leaves nothing."""
    out = in_sandbox(r'''
        cas=/proc/sys/net/ipv4/tcp_available_congestion_control
        echo "@@ ca.before=$(cat $cas)"
        dpkg -i %(deb)s
        echo "@@ ca.after=$(cat $cas)"
        echo "@@ files=$(dpkg -L tcp-cocktail-bpf | tr '\n' ' ')"
        echo "@@ help=$(cd / && /usr/sbin/cocktail-bpf --help | head -n 1)"
        rc=0; /usr/sbin/cocktail-bpf >/dev/null 2>&1 || rc=$?
        echo "@@ noargs=$rc"
        dpkg --purge tcp-cocktail-bpf
        echo "@@ status=$(dpkg-query -W tcp-cocktail-bpf 2>&1 || true)"
        echo "@@ left=$(ls -d /usr/sbin/cocktail-bpf /usr/share/doc/tcp-cocktail-bpf /usr/share/man/man8/cocktail-bpf.8.gz 2>/dev/null | wc -l)"
    ''' % {"deb": debs["tcp-cocktail-bpf"]}).stdout
    kv = kv_lines(out)
    assert kv["ca.after"] == kv["ca.before"], out
    assert "/usr/sbin/cocktail-bpf" in kv["files"].split(), out
    assert kv["help"].startswith("usage: cocktail-bpf "), out
    assert kv["noargs"] == "2", out
    assert "no packages found" in kv["status"], out
    assert kv["left"] == "0", out

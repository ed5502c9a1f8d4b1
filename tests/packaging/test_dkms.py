"""make dkms-install / dkms-remove against the Debian headers of the test
kernel, inside the sandbox; modinfo of what DKMS installed."""
from conftest import MODULES, in_sandbox, kv_lines


def test_dkms_cycle(kver, version):
    out = in_sandbox(r'''
        make --no-print-directory dkms-install PKG_VERSION=%(v)s
        echo "@@ status=$(dkms status -m tcp-cocktail -v %(v)s -k %(k)s)"
        for m in %(mods)s; do
            echo "@@ $m.file=$(modinfo -k %(k)s -F filename $m)"
            echo "@@ $m.vermagic=$(modinfo -k %(k)s -F vermagic $m | cut -d' ' -f1)"
            echo "@@ $m.parm=$(modinfo -k %(k)s -F parm $m | cut -d: -f1 | tr '\n' ' ')"
            echo "@@ $m.dep=$(grep -c "updates/dkms/$m.ko" /lib/modules/%(k)s/modules.dep)"
        done
        make --no-print-directory dkms-remove PKG_VERSION=%(v)s
        echo "@@ after=$(dkms status -m tcp-cocktail | wc -l)"
        echo "@@ src_left=$(ls -d /usr/src/tcp-cocktail-* 2>/dev/null | wc -l)"
        for m in %(mods)s; do
            echo "@@ $m.after=$(modinfo -k %(k)s -F filename $m 2>/dev/null || echo gone)"
        done
    ''' % {"v": version, "k": kver, "mods": " ".join(MODULES)}).stdout
    kv = kv_lines(out)
    assert kv["status"].endswith("installed"), out
    for m in MODULES:
        assert kv[m + ".file"] == "/lib/modules/%s/updates/dkms/%s.ko" % (kver, m)
        assert kv[m + ".vermagic"] == kver
        assert kv[m + ".dep"] == "1"
        assert kv[m + ".after"] == "gone"
    if "tcp_cocktail" in MODULES:
        parms = kv["tcp_cocktail.parm"].split()
        for p in ("iw", "restart", "auto_rtt_us", "cwv", "pace_iw"):
            assert p in parms, parms
    assert kv["after"] == "0"
    assert kv["src_left"] == "0"

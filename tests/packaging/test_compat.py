"""make compat-check: the modules build against every kernel header tree
found (/usr/src and the trees packaging/fetch-headers unpacked)."""
from conftest import MODULES, run


def test_compat_check():
    p = run(["make", "--no-print-directory", "compat-check"], check=False)
    rows = [ln.split() for ln in p.stdout.splitlines()
            if ln and ln[0].isdigit()]
    assert p.returncode == 0, p.stdout + p.stderr
    assert rows, p.stdout
    for r in rows:
        assert r[1] == "OK", p.stdout
        assert r[2:2 + len(MODULES)] == [m + ".ko" for m in MODULES], p.stdout
    # Both series Debian 12 offers, when their headers are here.
    print(p.stdout)

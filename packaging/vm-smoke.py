#!/usr/bin/env python3
"""Smoke run of modules built for another kernel, inside a VM booted on it:
insmod both modules from a compat build directory, one connection with
congestion control cocktail over a shaped, reordering veth link between two
namespaces, an idle period longer than the RTO and a second burst (one
restart decision), the probe's counters over generic netlink, rmmod, and no
kernel warnings. Prints one JSON object; exit status 0 when every check
passed.

    KDIR=<headers of kernel X> dev/vm-run .venv/bin/python packaging/vm-smoke.py build/compat/<X>/kmod [--sig-enforce]

(the venv's Python: the probe's generic netlink client, cocktail_lab.genl,
needs pyroute2).

--sig-enforce finally sets module.sig_enforce=1 and checks that the unsigned
module, and tcp_cocktail.signed.ko (signed with a key the kernel does not
trust) if present, are refused.
"""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "lab"))
from cocktail_lab import modparams  # noqa: E402
from cocktail_lab.genl import Genl  # noqa: E402
from cocktail_lab.proc import in_netns  # noqa: E402
from cocktail_lab.topo import Link  # noqa: E402

BAD = re.compile(r"WARNING:|BUG:|Oops|general protection|KASAN:|UBSAN:|Call Trace:")


def sh(cmd, check=True):
    return subprocess.run(cmd, shell=True, text=True, capture_output=True,
                          check=check)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    kodir = Path(args[0] if args else "kmod").resolve()
    res = {"kernel": os.uname().release, "checks": {}}
    ok = res["checks"]
    dmesg0 = len(sh("dmesg").stdout.splitlines())
    for m in ("tcp_cocktail", "tcp_oooprobe"):
        ko = kodir / (m + ".ko")
        p = sh("insmod %s" % ko, check=False)
        ok["insmod_" + m] = p.returncode == 0
        if p.returncode:
            res["insmod_error_" + m] = p.stderr.strip()
    res["vermagic"] = sh("modinfo -F vermagic %s/tcp_cocktail.ko" % kodir).stdout.strip()
    got = {}
    listener = None
    if ok.get("insmod_tcp_oooprobe"):
        # The probe records only while someone listens to its events.
        listener = Genl()
        listener.subscribe()
    if ok.get("insmod_tcp_cocktail"):
        payload1, payload2 = 2_000_000, 300_000
        # uncorrelated reordering: see tests/vm/test_oooprobe_lifetime.py
        with Link("smk", rtt_ms=40, srv_netem="reorder 10%") as link:
            ready = threading.Event()

            def server():
                with in_netns(link.srv):
                    ls = socket.socket()
                    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    ls.bind((link.SRV, 5201))
                    ls.listen(1)
                    ready.set()
                    c, _ = ls.accept()
                    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cocktail")
                    got["cc"] = c.getsockopt(socket.IPPROTO_TCP,
                                             socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
                    c.sendall(b"a" * payload1)
                    time.sleep(1.5)          # idle > RTO (~240 ms at 40 ms RTT)
                    c.sendall(b"b" * payload2)
                    c.close()
                    ls.close()

            t = threading.Thread(target=server)
            t.start()
            ready.wait(10)
            n = 0
            with in_netns(link.cli):
                s = socket.create_connection((link.SRV, 5201), timeout=60)
                while True:
                    b = s.recv(65536)
                    if not b:
                        break
                    n += len(b)
                s.close()
            t.join(60)
        ok["transfer_complete"] = n == payload1 + payload2
        ok["cc_is_cocktail"] = got.get("cc") == "cocktail"
        stats = modparams.counters(strict=True)
        res["cocktail_stats"] = {k: v for k, v in stats.items() if v}
        ok["restart_decided"] = sum(stats[k] for k in
                                    ("ssr", "decay", "keep", "pace")) >= 1
    if ok.get("insmod_tcp_oooprobe"):
        g = Genl()
        st = g.stats()
        g.close()
        if listener:
            listener.close()
        res["oooprobe_stats"] = {k: v for k, v in st.items()}
        ok["probe_recorded_ooo"] = st.get("STAT_RANGES_RECORDED", 0) > 0 and st.get("STAT_RANGES_RELEASED", 0) > 0
        res["probe_hook"] = st.get("STAT_HOOK")
    for m in ("tcp_oooprobe", "tcp_cocktail"):
        if modparams.loaded(m):
            ok["rmmod_" + m] = sh("rmmod %s" % m, check=False).returncode == 0
    if "--sig-enforce" in sys.argv:
        # Irreversible until reboot (bool_enable_only): last, separate boot.
        # An unsigned module and one signed by a key the kernel does not
        # trust must both be refused.
        modparams.set_param("module", "sig_enforce", 1)
        p = sh("insmod %s/tcp_cocktail.ko" % kodir, check=False)
        res["sig_enforce_unsigned"] = p.stderr.strip()
        ok["sig_enforce_refuses_unsigned"] = (
            p.returncode != 0 and "Key was rejected" in p.stderr)
        signed = kodir / "tcp_cocktail.signed.ko"
        if signed.exists():
            p = sh("insmod %s" % signed, check=False)
            res["sig_enforce_untrusted"] = p.stderr.strip()
            ok["sig_enforce_refuses_untrusted_key"] = (
                p.returncode != 0 and "Key was rejected" in p.stderr)
    new = sh("dmesg").stdout.splitlines()[dmesg0:]
    res["dmesg"] = [ln for ln in new if "tcp_" in ln or BAD.search(ln)][:20]
    ok["dmesg_clean"] = not any(BAD.search(ln) for ln in new)
    res["ok"] = all(ok.values())
    print(json.dumps(res, indent=1, default=str))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""oooprobed against the real module: JSON lines and Prometheus textfile
agree with the events, the module can be unloaded and loaded again under
it, SIGHUP reopens the JSON file, SIGTERM prints the final summary and
exits 0. A reload the daemon missed because its socket overran is found
again; symlinks planted where it writes its textfile are not followed.
(Its memory and loss accounting under a sustained stream:
test_oooprobe_daemon_load.py.)"""
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from conftest import insmod, rmmod
from cocktail_lab.genl import CMD, EventCollector, Genl
from cocktail_lab.modparams import get_param
from cocktail_lab.topo import Link
from oooprobe_lib import REPO
from test_oooprobe import transfer

MOD = "tcp_oooprobe"
DAEMON = REPO / "daemon" / "oooprobed"


def wait_for(pred, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.2)
    return False


def test_daemon_end_to_end(tmp_path):
    rmmod(MOD)
    insmod(MOD)
    js, js_old, prom = tmp_path / "ev.jsonl", tmp_path / "ev.old", \
        tmp_path / "ooo.prom"
    err = open(tmp_path / "stderr", "w+")
    d = subprocess.Popen([str(DAEMON), "--json", str(js), "--prom",
                          str(prom), "--interval", "1", "--quiet"],
                         stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert wait_for(lambda: prom.exists())
        col = EventCollector()
        with Link("dm", rtt_ms=20) as link:
            transfer(link, 200_000, drop_index=12, port=5701)
            events1 = col.stop()
            # unload and load again under the daemon
            rmmod(MOD)
            insmod(MOD)
            assert wait_for(lambda: "is back" in open(err.name).read()), \
                open(err.name).read()
            # SIGHUP: the old file moved away, a new one is created
            js.rename(js_old)
            d.send_signal(signal.SIGHUP)
            assert wait_for(lambda: js.exists())
            col = EventCollector()
            transfer(link, 200_000, drop_index=12, port=5702)
            events2 = col.stop()
        time.sleep(1.5)
        d.send_signal(signal.SIGTERM)
        out, _ = d.communicate(timeout=20)
    finally:
        if d.poll() is None:
            d.kill()
    assert d.returncode == 0
    stderr = open(err.name).read()
    assert "was unloaded" in stderr and "is back" in stderr, stderr
    lines1 = [json.loads(x) for x in js_old.read_text().splitlines()]
    lines2 = [json.loads(x) for x in js.read_text().splitlines()]
    for lines, events in ((lines1, events1), (lines2, events2)):
        segs = sorted((e["SEQ"], e["TIME_OUT"] - e["TIME_IN"])
                      for e in events if e["cmd"] == CMD["SEGMENT"])
        jsegs = sorted((x["seq"], x["hold_ns"]) for x in lines
                       if x["type"] == "segment")
        assert segs and segs == jsegs
        assert len([x for x in lines if x["type"] == "flow"]) == \
            len([e for e in events if e["cmd"] == CMD["FLOW"]])
    nseg = len([x for x in lines1 + lines2 if x["type"] == "segment"])
    nflow = len([x for x in lines1 + lines2 if x["type"] == "flow"])
    final = out[out.rindex("== oooprobed final summary"):]
    assert "flows: %d\n" % nflow in final, final
    assert "hold time (%d segments)" % nseg in final, final
    assert "events lost: 0 " in final
    p = prom.read_text()
    assert "oooprobe_hold_seconds_count %d\n" % nseg in p, p
    assert 'oooprobe_hold_seconds_bucket{le="+Inf"} %d\n' % nseg in p
    assert "oooprobe_flows_total %d\n" % nflow in p
    # the module's memory bound, exported as the module reports it
    budget = int(get_param(MOD, "max_range_bytes"))
    assert "oooprobe_kernel_range_bytes_budget %d\n" % budget in p, p
    for name in ("oooprobe_kernel_range_bytes",
                 "oooprobe_kernel_range_budget_refused_total",
                 "oooprobe_kernel_segs_not_queued_total"):
        assert re.search(r"^%s \d+$" % name, p, re.M), (name, p)
    assert "range bytes " in final and "segments not queued " in final
    print(final)
    rmmod(MOD)


def test_daemon_module_not_loaded():
    rmmod(MOD)
    r = subprocess.run([str(DAEMON), "--report", "--duration", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "not found: load the module" in r.stderr


def prom_value(path, name):
    """A sample's value in the textfile (None when absent or no file)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def test_daemon_reresolves_after_overrun(tmp_path):
    """The daemon stops reading (SIGSTOP) with a small buffer; events fill
    it, then the module is unloaded and loaded again: nlctrl's
    DELFAMILY/NEWFAMILY are dropped with the events (the buffer is full),
    and the new module has a new family id. After SIGCONT the daemon reads
    ENOBUFS, resolves the family again, re-subscribes, and the new
    module's events reach it."""
    rmmod(MOD)
    insmod(MOD)
    prom = tmp_path / "ooo.prom"
    err = open(tmp_path / "stderr", "w+")
    d = subprocess.Popen([str(DAEMON), "--prom", str(prom), "--interval",
                          "0.5", "--quiet", "--rcvbuf", "4096"],
                         stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert wait_for(lambda: prom.exists())
        g = Genl()
        fam0 = g.family
        g.close()
        # jitter well above the packet spacing: most segments are held,
        # one SEGMENT event each (test_oooprobe_security's flood)
        with Link("rr", rtt_ms=2, srv_netem="1ms") as link:
            d.send_signal(signal.SIGSTOP)
            try:
                transfer(link, 2_000_000, port=5711)
                g = Genl()
                before = g.stats()
                g.close()
                rmmod(MOD)
                insmod(MOD)
                g = Genl()
                fam1 = g.family
                g.close()
            finally:
                d.send_signal(signal.SIGCONT)
            assert before["STAT_EVENTS_DROPPED"] > 0, before
            assert fam1 != fam0
            assert wait_for(lambda: "after a socket overrun" in
                            open(err.name).read()), open(err.name).read()
            # the textfile as of after the re-subscription
            t = time.time()
            assert wait_for(lambda: prom.stat().st_mtime > t + 0.2)
            n0 = prom_value(prom, "oooprobe_hold_seconds_count")
            # the new module's events reach the daemon (its 8 KiB buffer
            # may overrun again on a burst: some, not all)
            transfer(link, 200_000, drop_index=12, port=5712)
            assert wait_for(lambda: prom_value(
                prom, "oooprobe_hold_seconds_count") > n0), \
                (n0, prom.read_text())
        d.send_signal(signal.SIGTERM)
        out, _ = d.communicate(timeout=20)
    finally:
        if d.poll() is None:
            d.kill()
    stderr = open(err.name).read()
    print(stderr)
    assert d.returncode == 0
    assert "is back (family %d, after a socket overrun)" % fam1 in stderr
    final = out[out.rindex("== oooprobed final summary"):]
    m = re.search(r"socket overruns \(ENOBUFS\): (\d+)$", final, re.M)
    assert m and int(m.group(1)) >= 1, final
    assert re.search(r"family re-resolved [1-9]\d* times, module "
                     r"reloads 1$", final, re.M), final
    print(final)
    rmmod(MOD)


def test_daemon_prom_symlinks(tmp_path):
    """Symlinks planted at the textfile's name and at the temp file name
    the daemon used to use (FILE.tmp.PID) are not written through: the
    victims are unchanged, the textfile is a regular file readable by
    node_exporter, and no temp file is left behind."""
    rmmod(MOD)
    insmod(MOD)
    d_dir = tmp_path / "textfile"
    d_dir.mkdir()
    prom = d_dir / "ooo.prom"
    victim, victim2 = tmp_path / "victim", tmp_path / "victim2"
    victim.write_text("precious\n")
    victim2.write_text("precious too\n")
    prom.symlink_to(victim)
    # a shell that plants FILE.tmp.$$, then becomes the daemon (same pid)
    d = subprocess.Popen(
        ["sh", "-c", 'ln -s "$1" "$2.tmp.$$" && exec "$3" --prom "$2" '
         '--interval 0.5 --quiet', "sh", str(victim2), str(prom),
         str(DAEMON)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        assert wait_for(lambda: not prom.is_symlink() and prom.exists())
        time.sleep(1.5)    # a few more rewrites
        d.send_signal(signal.SIGTERM)
        out, errtext = d.communicate(timeout=20)
    finally:
        if d.poll() is None:
            d.kill()
    assert d.returncode == 0, errtext
    assert victim.read_text() == "precious\n"
    assert victim2.read_text() == "precious too\n"
    planted = d_dir / ("ooo.prom.tmp.%d" % d.pid)
    assert planted.is_symlink() and os.readlink(planted) == str(victim2)
    st = prom.lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644
    assert "oooprobe_module_loaded 1\n" in prom.read_text()
    assert sorted(p.name for p in d_dir.iterdir()) == \
        sorted(["ooo.prom", planted.name]), list(d_dir.iterdir())
    rmmod(MOD)


SPOOF = r'''
import socket, struct, sys
sys.path.insert(0, "%s/lab")
from cocktail_lab.genl import A, CMD, nla
port, family = int(sys.argv[1]), int(sys.argv[2])
attrs = (nla(A["EVENT_SEQ"], struct.pack("=Q", 1)) +
         nla(A["TIME_IN"], struct.pack("=Q", 1)) +
         nla(A["TIME_OUT"], struct.pack("=Q", 10 ** 12)) +
         nla(A["LOCAL_ADDR"], b"\x0a\x00\x00"))
body = struct.pack("=BBH", CMD["SEGMENT"], 1, 0) + attrs
msg = struct.pack("=IHHII", 16 + len(body), family, 0, 1, 0) + body
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
s.bind((0, 0))
s.sendto(msg, (port, 0))
print("SENT")
'''
NOBODY = ("setpriv --reuid=65534 --regid=65534 --clear-groups "
          "--inh-caps=-all --bounding-set=-all")


def test_daemon_ignores_spoofed_events(tmp_path):
    """A process other than the kernel can send a unicast netlink message
    to the daemon's event socket (its port is its pid; the kernel lets
    CAP_NET_ADMIN do it, and refuses an unprivileged user): a forged
    SEGMENT event, with a 1000 s hold and a 3-byte address, is ignored and
    counted, not taken into the statistics."""
    rmmod(MOD)
    insmod(MOD)
    g = Genl()
    family = g.family
    g.close()
    script = Path("/tmp/oooprobed_spoof.py")    # tmp_path is root's only
    script.write_text(SPOOF % REPO)
    script.chmod(0o644)
    d = subprocess.Popen([str(DAEMON), "--interval", "0", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        time.sleep(1)
        cmd = "%s %s %d %d" % (sys.executable, script, d.pid, family)
        r = subprocess.run("%s %s" % (NOBODY, cmd), shell=True,
                           capture_output=True, text=True)
        assert "PermissionError" in r.stderr, r.stderr
        r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        assert r.stdout.strip() == "SENT", r.stderr
        time.sleep(1)
        d.send_signal(signal.SIGTERM)
        out, err = d.communicate(timeout=20)
    finally:
        if d.poll() is None:
            d.kill()
    assert d.returncode == 0, err
    final = out[out.rindex("== oooprobed final summary"):]
    assert "no out-of-order segment released yet" in final, final
    assert re.search(r"^events received: 0;.* not from the kernel 1;",
                     final, re.M), final
    rmmod(MOD)

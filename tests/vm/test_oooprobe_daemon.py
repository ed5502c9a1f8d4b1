"""oooprobed against the real module: JSON lines and Prometheus textfile
agree with the events, the module can be unloaded and loaded again under
it, SIGHUP reopens the JSON file, SIGTERM prints the final summary and
exits 0."""
import json
import signal
import subprocess
import time

from conftest import insmod, rmmod
from cocktail_lab.genl import CMD, EventCollector
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
    print(final)
    rmmod(MOD)


def test_daemon_module_not_loaded():
    rmmod(MOD)
    r = subprocess.run([str(DAEMON), "--report", "--duration", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "not found: load the module" in r.stderr

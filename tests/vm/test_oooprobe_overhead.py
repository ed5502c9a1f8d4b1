"""Cost of tcp_oooprobe on a CPU-bound transfer with no out-of-order data:
iperf3 between two namespaces over veth, no shaping, probe loaded vs not,
alternating, 5 runs each. Writes build/vm/oooprobe_overhead.json."""
import json
import statistics
import subprocess
import time

from conftest import insmod, rmmod
from oooprobe_lib import REPO, Link, sh

MOD = "tcp_oooprobe"
RUNS = 5
SECS = 4


def iperf(link):
    srv = subprocess.Popen(["ip", "netns", "exec", link.srv, "iperf3", "-s",
                            "-1", "-p", "5801"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    r = sh("ip netns exec %s iperf3 -c %s -p 5801 -t %d -J" %
           (link.cli, link.SRV, SECS))
    srv.wait(timeout=20)
    return json.loads(r.stdout)["end"]["sum_received"]["bits_per_second"]


def measure(link):
    res = {"off": [], "on": []}
    for i in range(RUNS):
        for state in (("on", "off") if i % 2 else ("off", "on")):
            rmmod(MOD)
            if state == "on":
                insmod(MOD)
            res[state].append(iperf(link))
    rmmod(MOD)
    return res


def test_overhead():
    out = {}
    for name, segs in (("mss_segments", True), ("default_offloads", False)):
        with Link("oh", rtt_ms=0.0) as link:
            if not segs:
                for ns, dev in ((link.srv, "vs"), (link.cli, "vc")):
                    sh("ip netns exec %s ethtool -K %s tso on gso on" %
                       (ns, dev))
                    sh("ip -n %s link set %s gso_max_segs 65535" % (ns, dev))
            res = measure(link)
        on, off = statistics.median(res["on"]), statistics.median(res["off"])
        out[name] = {"runs_bps": res, "median_on": on, "median_off": off,
                     "ratio": on / off}
        print("%s: off %s on %s ratio %.3f" % (
            name, ["%.0f" % (x / 1e6) for x in res["off"]],
            ["%.0f" % (x / 1e6) for x in res["on"]], on / off))
    (REPO / "build" / "vm").mkdir(parents=True, exist_ok=True)
    (REPO / "build" / "vm" / "oooprobe_overhead.json").write_text(
        json.dumps(out, indent=1))
    # the target is 0.97; TCG noise is a few percent, so fail only on a
    # clear regression
    for name, r in out.items():
        assert r["ratio"] >= 0.90, (name, r)

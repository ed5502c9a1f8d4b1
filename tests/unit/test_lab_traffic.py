"""Host tests of cocktail_lab.traffic's keep-alive tool over loopback: the
server and client processes as the tests and the bench start them (by
path, no PYTHONPATH), and the output the callers parse."""
import json
import subprocess
import sys
from pathlib import Path

TRAFFIC = Path(__file__).resolve().parents[2] / "lab" / "cocktail_lab" / \
    "traffic.py"


def test_keepalive_server_and_client_over_loopback():
    srv = subprocess.Popen([sys.executable, str(TRAFFIC), "server", "--bind",
                            "127.0.0.1", "--port", "0", "--cc", "reno"],
                           stdout=subprocess.PIPE, text=True)
    try:
        line = srv.stdout.readline().split()
        assert line[0] == "listening", line
        port = int(line[1])
        r = subprocess.run([sys.executable, str(TRAFFIC), "client", "--host",
                            "127.0.0.1", "--port", str(port), "--segments",
                            "5", "--warm-cwnd", "10", "--rounds", "2"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout)
        assert res["warm_reached"] and len(res["rounds"]) == 2
        after = res["after"]
        assert after["ca"] == "reno" and after["state"] == 1
        assert res["bytes"] == 5 * res["mss"] == 5 * after["snd_mss"]
        assert res["burst_retrans"] == after["total_retrans"] - \
            res["before"]["total_retrans"]
        assert res["rounds"][1]["before"]["snd_cwnd"] >= 10
    finally:
        srv.kill()
        srv.wait()

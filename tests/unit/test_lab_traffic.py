"""Host tests of cocktail_lab.traffic's keep-alive tool over loopback: the
server and client processes as the tests and the bench start them (by
path, no PYTHONPATH), and the output the callers parse."""
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_cbr_schedule_keeps_time_and_never_catches_up_in_a_burst():
    from cocktail_lab.traffic import CBR_MAX_LAG_S, cbr_schedule
    step = 0.001
    # On time: each datagram is due one step after the last.
    assert cbr_schedule(1.0, 1.0, step) == (1.001, 0)
    # Late by less than the allowed lag: keep the schedule (catch up).
    nxt, skipped = cbr_schedule(1.0, 1.001 + CBR_MAX_LAG_S / 2, step)
    assert (nxt, skipped) == (1.001, 0)
    # A 1 s stall: the schedule restarts now, the owed datagrams are given
    # up and counted, so what follows goes out at the rate again.
    nxt, skipped = cbr_schedule(1.0, 2.0, step)
    assert nxt == 2.0 and skipped == 999


def test_cbr_sender_after_a_stall_sends_no_more_than_the_lag_at_once():
    """Replay the sender's loop against a clock that stalls for 0.5 s:
    the datagrams sent with no wait in between (a burst) stay within what
    CBR_MAX_LAG_S of the rate allows."""
    from cocktail_lab.traffic import CBR_MAX_LAG_S, cbr_schedule
    step, now, nxt = 0.0003, 0.0, 0.0
    burst = longest = 0
    for i in range(5000):
        if i == 1000:
            now += 0.5                      # the guest stalls
        nxt, _ = cbr_schedule(nxt, now, step)
        if nxt > now:
            now = nxt                       # waits: a burst ends
            burst = 0
        else:
            burst += 1                      # due already: sent at once
            longest = max(longest, burst)
    assert 0 < longest <= CBR_MAX_LAG_S / step + 1


def test_clamp_window_locks_the_buffer_and_sets_the_clamp():
    from cocktail_lab import tcpinfo
    from cocktail_lab.traffic import clamp_window
    with socket.socket() as s:
        clamp_window(s, 22 * 1448)
        assert s.getsockopt(socket.IPPROTO_TCP,
                            tcpinfo.TCP_WINDOW_CLAMP) == 22 * 1448
        assert s.getsockopt(socket.SOL_SOCKET,
                            socket.SO_RCVBUF) >= 2 * 22 * 1448


def test_clamp_window_refuses_a_buffer_smaller_than_the_window():
    from cocktail_lab import tcpinfo
    from cocktail_lab.traffic import clamp_window
    with socket.socket() as s:
        before = (s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
                  s.getsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_WINDOW_CLAMP))
        with pytest.raises(ValueError, match="cannot hold"):
            clamp_window(s, 64000, rcvbuf=32000)
        assert (s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
                s.getsockopt(socket.IPPROTO_TCP,
                             tcpinfo.TCP_WINDOW_CLAMP)) == before

"""tcp_oooprobe, issue 3 test 6: 10,000 short connections, some with
reordering; afterwards the flow table is empty, rmmod works, dmesg is clean
(the conftest fixture fails the suite on any kernel warning)."""
import socket
import threading
import time

from conftest import insmod, rmmod, module_loaded
from oooprobe_lib import CMD, EventCollector, Genl, Link, in_netns, sh

MOD = "tcp_oooprobe"
N = 10_000


def test_many_short_connections_then_unload():
    rmmod(MOD)
    insmod(MOD, flows="all")
    with Link("lt", rtt_ms=2, srv_netem="reorder 3% 50%") as link:
        with in_netns(link.srv):
            ls = socket.socket()
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind((link.SRV, 5501))
            ls.listen(512)
        payload = bytes(20_000)
        served = [0]

        def server():
            while served[0] < N:
                s, _ = ls.accept()
                s.sendall(payload)
                s.close()
                served[0] += 1

        col = EventCollector()
        t = threading.Thread(target=server)
        t.start()
        with in_netns(link.cli):
            for i in range(N):
                c = socket.socket()
                c.connect((link.SRV, 5501))
                n = 0
                while True:
                    b = c.recv(65536)
                    if not b:
                        break
                    n += len(b)
                assert n == len(payload)
                c.close()
        t.join(timeout=60)
        ls.close()
        g = Genl()
        deadline = time.time() + 60
        while time.time() < deadline:
            st = g.stats()
            if st["STAT_FLOWS_TRACKED"] == 0:
                break
            time.sleep(0.5)
        events = col.stop()
        g.close()
    flows = [e for e in events if e["cmd"] == CMD["FLOW"]]
    reordered = [f for f in flows if f["OOO_SEGS"]]
    print("stats %s; %d FLOW events, %d with reordering" %
          (st, len(flows), len(reordered)))
    assert st["STAT_FLOWS_TRACKED"] == 0, st
    assert st["STAT_FLOW_OVERFLOWS"] == 0
    assert st["STAT_EVENTS_DROPPED"] == 0
    # both ends of every connection were tracked and reported
    assert len(flows) == 2 * N
    assert reordered, "no connection saw reordering"
    assert st["STAT_RANGES_RECORDED"] == (st["STAT_RANGES_RELEASED"] +
                                          st["STAT_RANGES_DISCARDED"])
    rmmod(MOD)
    assert not module_loaded(MOD)

"""McManus's statistics (flows and packets with reordering, hold
times) from a VM run: web-like transfers (many small,
a few large) to a client over a shaped link with loss, aggregated by
oooprobed --report with the probe filtered to the client's namespace.
Writes build/vm/oooprobe_seedstats.txt (summary + netem settings)."""
import random
import socket
import subprocess
import threading
import time

from conftest import insmod, rmmod
from cocktail_lab.genl import Genl
from cocktail_lab.proc import in_netns
from cocktail_lab.topo import Link
from oooprobe_lib import REPO

MOD = "tcp_oooprobe"
NETEM = "rate 20mbit loss 0.5%"
RTT = 50


def test_seed_statistics(tmp_path):
    rmmod(MOD)
    insmod(MOD, flows="all")
    rnd = random.Random(4)
    # 150 flows: most a few packets, some hundreds of KB (web-like)
    sizes = [int(min(2_000_000, rnd.lognormvariate(9.5, 1.6)))
             for _ in range(150)]
    with Link("ss", rtt_ms=RTT, srv_netem=NETEM) as link:
        g = Genl()
        g.set_filter(netns=link.ns_inode(link.cli))
        g.close()
        # The daemon opens its JSON file once it has joined the event
        # group: an event sent before that reaches no one (the kernel
        # counts it unheard), so the transfers wait for the file.
        events = tmp_path / "events.jsonl"
        d = subprocess.Popen([str(REPO / "daemon" / "oooprobed"), "--report",
                              "--duration", "100000", "--json", str(events)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        deadline = time.monotonic() + 60
        while not events.exists():
            assert d.poll() is None, d.communicate()
            assert time.monotonic() < deadline, "oooprobed did not start"
            time.sleep(0.1)
        with in_netns(link.srv):
            ls = socket.socket()
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind((link.SRV, 5901))
            ls.listen(64)

        def server():
            for n in sizes:
                s, _ = ls.accept()
                s.recv(100)
                s.sendall(bytes(n))
                s.close()

        t = threading.Thread(target=server)
        t.start()

        def client(part):
            for _ in part:
                with in_netns(link.cli):
                    c = socket.socket()
                c.connect((link.SRV, 5901))
                c.sendall(b"GET / HTTP/1.1\r\n\r\n")
                while c.recv(65536):
                    pass
                c.close()

        workers = [threading.Thread(target=client, args=(sizes[i::4],))
                   for i in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=600)
        t.join(timeout=60)
        ls.close()
        # A flow's record is sent when its socket is destroyed: after the
        # client's FIN is acknowledged, which a lost ACK (the link's 0.5 %)
        # delays by retransmission timeouts. Stop the daemon once the probe
        # tracks no flow; it reads what its socket holds before the final
        # summary.
        g = Genl()
        deadline = time.monotonic() + 60
        while True:
            st = g.stats()
            if st["STAT_FLOWS_TRACKED"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        g.close()
        d.send_signal(15)
        out, err = d.communicate(timeout=30)
    assert st["STAT_FLOWS_TRACKED"] == 0, \
        "flows still open 60 s after the last transfer: %s" % st
    assert d.returncode == 0, err
    final = out[out.rindex("== oooprobed final summary"):]
    assert "flows: %d\n" % len(sizes) in final, final
    (REPO / "build" / "vm").mkdir(parents=True, exist_ok=True)
    (REPO / "build" / "vm" / "oooprobe_seedstats.txt").write_text(
        "netem on the server's egress: delay %d ms %s; client egress: "
        "delay %d ms; %d flows, sizes lognormal(9.5, 1.6) capped at 2 MB, "
        "total %d bytes\n%s" % (RTT // 2, NETEM, RTT // 2, len(sizes),
                                sum(sizes), final))
    print(final)
    rmmod(MOD)

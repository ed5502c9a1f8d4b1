"""iw: Sam Saffron's IW10 post: a 34 KB page fetched on a new connection
at 50, 100, 200 and 310 ms RTT, initial window 2, 4 (RFC 3390's ceiling),
10 and 10 paced over the handshake RTT (tcp_cocktail pace_iw=1); the IW
set through the module (tcp_cocktail.iw) and through the route
(`tcp-tune --netns S route --default initcwnd N`, CUBIC) must agree.

Topology: scripts/netem-topo, one server, one client, 10 Mbit/s, 100-packet
drop-tail queue (the post's client had about 1 MB/s).  One fetch = connect,
one request byte, the server writes 34 KB (34,816 B) and closes.  Time is
measured at the client (connect start and request to last byte); round
trips = (request to last byte) / RTT, against the post's arithmetic; the
first flight (segments before the first ACK of data reaches the server) is
counted from a tcpdump capture on the router interface toward the server.
"""
import socket
import threading
import time

from bench.lib import order, plot, policies, published, stats, table
from cocktail_lab import proc, traffic
from cocktail_lab.capture import Capture, flights
from cocktail_lab.topo import REPO, Topo

PAGE = 34 * 1024
PORT = 5002
RESUME_KEY = ("rtt_ms", "variant", "rep")
RATE = "10mbit"


class Variant:
    def __init__(self, name, policy, route_iw=None, params=None):
        self.name, self.policy = name, policies.BY_NAME[policy]
        self.route_iw, self.params = route_iw, params or {}


VARIANTS = [
    Variant("linux-default", "linux-default"),
    Variant("bbr", "bbr"),
    Variant("reno-ssr", "reno-ssr"),
    Variant("route-iw2", "linux-default", route_iw=2),
    Variant("route-iw4", "linux-default", route_iw=4),
    Variant("route-iw10", "linux-default", route_iw=10),
    Variant("cocktail-iw2", "cocktail-auto", params={"iw": 2}),
    Variant("cocktail-iw4", "cocktail-auto", params={"iw": 4}),
    Variant("cocktail-rfc3390", "cocktail-auto", params={"iw": "rfc3390"}),
    Variant("cocktail-iw10", "cocktail-auto", params={"iw": 10, "pace_iw": 0}),
    Variant("cocktail-iw10-paced", "cocktail-auto",
            params={"iw": 10, "pace_iw": 1}),
]
IW_OF = {"linux-default": 10, "bbr": 10, "reno-ssr": 10, "route-iw2": 2,
         "route-iw4": 4, "route-iw10": 10, "cocktail-iw2": 2,
         "cocktail-iw4": 4, "cocktail-rfc3390": 3, "cocktail-iw10": 10,
         "cocktail-iw10-paced": 10}
FULL = dict(rtts=[50, 100, 200, 310], reps=10)
QUICK = dict(rtts=[310], reps=1)


def post_round_trips(iw, segs):
    """The post's arithmetic: the window doubles every round trip."""
    n, cwnd, got = 0, iw, 0
    while got < segs:
        got += cwnd
        cwnd *= 2
        n += 1
    return n


def _page(c):
    if c.recv(1):
        c.sendall(b"p" * PAGE)


def _connect_and_fetch(addr, timeout):
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.settimeout(timeout)
    t0 = time.monotonic()
    c.connect((addr, PORT))
    t1 = time.monotonic()
    port = c.getsockname()[1]
    c.sendall(b"G")
    t_last = traffic.recv_exact(c, PAGE, time.monotonic() + timeout)
    c.close()
    return t0, t1, t_last, port


_ROUTE = {}          # namespace -> initcwnd currently on its default route


def fetch(topo, lst, variant):
    """One page fetch with VARIANT applied; returns row fields."""
    s, cl = topo.server, topo.client
    pol = variant.policy
    params = policies.apply(pol, [s], variant.params if pol.cc == "cocktail"
                            else None)
    route = str(variant.route_iw) if variant.route_iw else "none"
    if _ROUTE.get(s, "none") != route:
        proc.sh("%s --netns %s --state-dir %s route --default -4 initcwnd "
                "%s" % (policies.tcp_tune(), s, policies.STATE / s, route))
        _ROUTE[s] = route
    stop = threading.Event()
    srv = threading.Thread(target=traffic.serve, args=(lst, pol.cc, _page,
                                                        stop), daemon=True)
    srv.start()
    try:
        t = proc.NsThread(cl, _connect_and_fetch, topo.server_addr, 60)
        t.start()
        t0, t1, t_last, port = t.join_result(90)
    finally:
        stop.set()
        srv.join(5)
    return {"params": params + ";route_initcwnd=%s" % route,
            "connect_s": round(t1 - t0, 6), "seconds": round(t_last - t0, 6),
            "data_s": round(t_last - t1, 6), "client_port": port}


def run(ctx):
    g = QUICK if ctx.quick else FULL
    ctx.reps = ctx.reps or g["reps"]
    if not policies.tcp_tune():
        raise RuntimeError("iw: scripts/tcp-tune is needed for the route "
                           "initcwnd variants")
    ok, why = policies.cocktail_status()
    variants = [v for v in VARIANTS if ok or v.policy.cc != "cocktail"]
    if not ok:
        ctx.note("cocktail variants skipped: %s" % why)
    names = ctx.only.get("variant")
    if names:
        variants = [v for v in variants if v.name in names]
    proc.sh("modprobe tcp_bbr", check=False)
    rows = []
    rtts = [rtt for rtt in g["rtts"] if "rtt_ms" not in ctx.only or
            str(rtt) in ctx.only["rtt_ms"]]
    ctx.grid(len(rtts) * ctx.reps * len(variants))
    for rtt in rtts:
        todo = [(rep, v) for rep in range(ctx.reps)
                for v in order.for_rep(variants, rep)
                if not ctx.skip(variant=v.name, rtt_ms=rtt, rep=rep)]
        if not todo:
            continue
        topo = Topo(rtt=rtt, rate=RATE, limit=100)
        topo.up()
        try:
            for ns in (topo.server, topo.client):
                proc.sysctl(ns, "net.ipv4.tcp_no_metrics_save", 1)
            ctx.tc.append({"rtt_ms": rtt, "netem_topo": topo.args(),
                           "tc": topo.info["tc"]})
            lst = traffic.Listener(topo.server, topo.server_addr, PORT)
            # one unrecorded fetch: neighbour resolution and first-use
            # costs of a fresh topology stay out of the measurements
            try:
                fetch(topo, lst, variants[0])
            except (OSError, RuntimeError, TimeoutError) as e:
                ctx.note("warm-up fetch at %d ms failed: %s" % (rtt, e))
            pcap = REPO / "build" / "bench" / ("iw-%d.pcap" % rtt)
            block = []
            with Capture(topo.capture_ns, topo.capture_dev,
                         pcap, "tcp port %d" % PORT) as cap:
                for rep, v in todo:
                    row = {"rtt_ms": rtt, "variant": v.name,
                           "policy": v.name, "iw": IW_OF[v.name],
                           "rep": rep}
                    try:
                        row.update(fetch(topo, lst, v))
                    except (OSError, RuntimeError, TimeoutError) as e:
                        row["error"] = "%s: %s" % (type(e).__name__, e)
                    block.append(row)
                    ctx.log("rtt %d %-20s %s s" % (rtt, v.name,
                                                    row.get("seconds")))
                    ctx.tick()
            lst.close()
            _flights(block, cap.packets(), topo.server_addr, rtt)
            rows += block
            ctx.save(rows)
        finally:
            policies.revert([topo.server])
            topo.down()
    return rows


def _flights(rows, pkts, server, rtt):
    """First flight size and wire retransmissions per fetch, by port."""
    segs = (PAGE + 1447) // 1448
    by_port = {}
    for f in flights(pkts, server, idle=rtt / 2000.0,
                     sport=PORT):
        by_port.setdefault(f[0].dport, f)
    for r in rows:
        f = by_port.get(r.get("client_port"))
        r["first_flight"] = len(f) if f else None
        if r.get("data_s") is not None:
            r["round_trips"] = round(r["data_s"] / (rtt / 1000.0), 3)
            r["post_round_trips"] = post_round_trips(r["iw"], segs)
            r["ideal_s"] = round(2 * rtt / 1000.0 + PAGE * 8 / 10e6, 6)


def report(ctx, rows):
    rows = [r for r in rows if r.get("variant")]
    names = [v.name for v in VARIANTS]
    md = ["# iw: a 34 KB page on a new connection (Sam Saffron's IW10 "
          "post)\n\n",
          "Measured inside the test VM, 10 Mbit/s, 100-packet drop-tail "
          "queue. Time from connect() to the last byte, median (min–max); "
          "×ideal against one RTT for the handshake + one for the request "
          "+ page bytes at 10 Mbit/s; round trips = (request to last byte) "
          "/ RTT (the post counts 4 at IW2 and 2 at IW10); first flight = "
          "data segments the server sent before the first ACK of data, "
          "from the capture.\n\n"]
    md += ["- %s\n" % n for n in ctx.notes]
    md.append("\n| RTT ms | variant | IW | time s | ×ideal | round trips "
              "(post) | first flight | vs IW2 total | vs IW2 data |\n"
              "|---|---|---|---|---|---|---|---|---|\n")
    rtts = sorted({r["rtt_ms"] for r in rows})
    for rtt in rtts:
        by = {n: [r for r in rows if r["rtt_ms"] == rtt and r["variant"] == n
                  and r.get("seconds") is not None] for n in names}
        ref = by.get("route-iw2") or by.get("cocktail-iw2") or []
        ref_t = stats.median([r["seconds"] for r in ref])
        ref_d = stats.median([r["data_s"] for r in ref])
        for n in names:
            rs = by[n]
            if not rs:
                continue
            s = stats.summarize([r["seconds"] for r in rs])
            ideal = stats.median([r["ideal_s"] for r in rs])
            ff = stats.median([r["first_flight"] for r in rs])
            rt = stats.median([r["round_trips"] for r in rs])
            gain_t = (1 - s["median"] / ref_t) if ref_t else None
            d = stats.median([r["data_s"] for r in rs])
            gain_d = (1 - d / ref_d) if ref_d else None
            md.append("| %d | %s | %s | %s | %.2f | %.2f (%d) | %s | %s | "
                      "%s |\n" % (rtt, n, rs[0]["iw"], table.fmt_range(s),
                                  s["median"] / ideal, rt,
                                  rs[0]["post_round_trips"],
                                  table.fmt(ff) if ff is not None else "n/a",
                                  table.pct(gain_t), table.pct(gain_d)))
    md.append("\n## module vs route initcwnd (first flight, median)\n\n")
    for rtt in rtts:
        for iw in (2, 4, 10):
            a = stats.median([r["first_flight"] for r in rows
                              if r["rtt_ms"] == rtt and
                              r["variant"] == "route-iw%d" % iw])
            b = stats.median([r["first_flight"] for r in rows
                              if r["rtt_ms"] == rtt and
                              r["variant"] == "cocktail-iw%d" % iw])
            if a is None and b is None:
                continue
            md.append("- RTT %d ms, IW%d: route %s, module %s: %s\n" % (
                rtt, iw, a, b, "agree" if a == b else "DISAGREE"))
    post = {r["what"] + str(r["iw"]): r["value"]
            for r in published.load("iw10_post.csv")}
    md.append("\nPublished (post, 310 ms RTT): IW2 page done at %s s, IW10 "
              "at %s s; IW10 %s%% faster in total, %s%% excluding the "
              "connection round trip.\n" % (
                  post.get("page_done2"), post.get("page_done10"),
                  post.get("improvement_total10"),
                  post.get("improvement_excluding_connect10")))
    (ctx.outdir / "table.md").write_text("".join(md))
    groups = {}
    for r in rows:
        if r.get("seconds") is not None:
            groups.setdefault("%d ms" % r["rtt_ms"], {}).setdefault(
                r["variant"], []).append(r["seconds"])
    plot.bars(ctx.outdir / "iw.png", "34 KB page on a new connection",
              "seconds", groups)

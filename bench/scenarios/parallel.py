"""parallel: McManus, "The Value of HTTP Pipelines" (2010), on IW10 and
parallel connections: six connections to one host, each with an initial
window of 10, hold 60 segments of credit that can leave in one burst
("60 is too many for a multiple connection environment"), where one
pipelined connection holds 10; his remedy, pacing the data after the
first 3 or 4 segments over the handshake RTT, is measured where Linux
lets a congestion control do it.

Topology: scripts/netem-topo, one server, one client, 10 Mbit/s, at 100
and 310 ms RTT (310: the IW10 post's), drop-tail queues of 20 packets
(below the 60-segment burst) and 100 (the iw scenario's, above it).  A
page is six objects of 14,480 bytes (10 segments each: exactly one IW10).

Variants (side by side, interleaved in a Williams order per repetition):
  linux-6x            CUBIC, IW10 (Linux's defaults): six new connections
                      at once, one object each, as a browser opens six
                      per host
  linux-1x-pipelined  the same bytes on one new connection: the six
                      requests at once, the responses back to back
  bbr-6x              six connections under BBR (paced from its first RTT
                      sample on)
  cocktail-6x-iw10    the module with iw=10, pace_iw=0
  cocktail-6x-iw10-paced  iw=10, pace_iw=1 (the remedy as the module
                      can give it: Linux never paces a connection's first
                      10 data segments, so with IW 10 the wire should show
                      no difference)
  cocktail-6x-iw4     iw=4 (RFC 3390's ceiling): 24 segments of credit

Per page: time from the first connect() to the last byte of the last
object (at the client), ×ideal against two round trips (handshake and
request) plus the page's frames at 10 Mbit/s, the server's
retransmissions (RetransSegs of its namespace: it holds only these
connections), the bottleneck queue's drops, and the burst: data segments
the server sent before the first ACK of data reached it on any of the
page's connections (from a capture on the router interface toward the
server).
"""
import socket
import threading
import time

from bench.lib import order, plot, policies, stats, table
from cocktail_lab import proc, tcpinfo, traffic
from cocktail_lab.capture import ACK, Capture, seq_after
from cocktail_lab.topo import REPO, Topo, bottleneck_drops

RATE = "10mbit"
RATE_BPS = 10e6
PORT = 5006
MSS = 1448
# one object: exactly an initial window of 10 full segments
OBJECT = 10 * MSS
CONNS = 6
# Ethernet 14 + IPv4 20 + TCP 20 + 12 of timestamps per frame
FRAME_OVERHEAD = 66
RESUME_KEY = ("rtt_ms", "limit", "variant", "rep")
FULL = dict(rtts=[100, 310], limits=[20, 100], reps=10)
QUICK = dict(rtts=[100], limits=[20], reps=1)


class Variant:
    def __init__(self, name, policy, conns, params=None):
        self.name, self.policy = name, policies.BY_NAME[policy]
        self.conns, self.params = conns, params
        self.iw = (params or {}).get("iw", 10)


VARIANTS = [
    Variant("linux-6x", "linux-default", CONNS),
    Variant("linux-1x-pipelined", "linux-default", 1),
    Variant("bbr-6x", "bbr", CONNS),
    Variant("cocktail-6x-iw10", "cocktail-auto", CONNS,
            {"iw": 10, "pace_iw": 0}),
    Variant("cocktail-6x-iw10-paced", "cocktail-auto", CONNS,
            {"iw": 10, "pace_iw": 1}),
    Variant("cocktail-6x-iw4", "cocktail-auto", CONNS,
            {"iw": 4, "pace_iw": 0}),
]


def ideal_s(rtt_ms):
    """The page's ideal time: a round trip for the handshakes, one for the
    requests, and every object's frames at the link's rate."""
    frames = CONNS * -(-OBJECT // MSS)
    return 2 * rtt_ms / 1000.0 + (CONNS * OBJECT + frames *
                                  FRAME_OVERHEAD) * 8 / RATE_BPS


def credit(variant):
    """Segments the page's connections may send before any ACK of data."""
    return variant.conns * variant.iw


def burst(pkts, server, ports):
    """Data segments SERVER sent to the client PORTS before the first ACK
    of data (beyond a connection's first data byte) reached it on any of
    them; 0 without data."""
    first = {}
    n = 0
    for p in sorted(pkts, key=lambda q: q.ts):
        if p.src == server and p.plen > 0 and p.dport in ports:
            first.setdefault(p.dport, p.seq)
            n += 1
        elif p.dst == server and p.flags & ACK and p.sport in first and \
                seq_after(p.ack, first[p.sport]):
            return n
    return n


def _serve(lst, cc, stop, conns):
    """Accept the page's CONNS connections (congestion control CC), each
    answered by a Responder; returns when all are done or STOP is set."""
    lst.sock.settimeout(0.5)
    workers = []
    while len(workers) < conns and not stop.is_set():
        try:
            c, _ = lst.sock.accept()
        except socket.timeout:
            continue
        tcpinfo.set_congestion(c, cc)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        w = traffic.Responder(c)
        w.start()
        workers.append((c, w))
    for c, w in workers:
        w.join(60)
        c.close()


def _fetch_one(addr, nbytes, timeout, out, i):
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        c.settimeout(timeout)
        t0 = time.monotonic()
        c.connect((addr, PORT))
        out[i]["port"] = c.getsockname()[1]
        out[i]["t0"] = t0
        c.sendall(nbytes.to_bytes(4, "big"))
        out[i]["t_last"] = traffic.recv_exact(c, nbytes,
                                              time.monotonic() + timeout)
        c.sendall((0).to_bytes(4, "big"))
    except OSError as e:
        out[i]["error"] = e
    finally:
        c.close()


def _page(addr, conns, timeout):
    """The page on CONNS connections opened at once (one object each), or
    on one connection carrying all six objects: [{t0, t_last, port}]."""
    per = CONNS * OBJECT // conns
    out = [{} for _ in range(conns)]
    ts = [threading.Thread(target=_fetch_one, args=(addr, per, timeout,
                                                    out, i), daemon=True)
          for i in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout + 5)
    for o in out:
        if "error" in o:
            raise o["error"]
        if "t_last" not in o:
            raise TimeoutError("a connection of the page did not finish")
    return out


def fetch(topo, lst, v):
    """One page with variant V applied; returns row fields."""
    params = policies.apply(v.policy, [topo.server],
                            v.params if v.policy.cc == "cocktail" else None)
    stop = threading.Event()
    srv = threading.Thread(target=_serve, args=(lst, v.policy.cc, stop,
                                                v.conns), daemon=True)
    srv.start()
    r0 = proc.tcp_snmp(topo.server)["RetransSegs"]
    d0 = bottleneck_drops(topo)
    try:
        t = proc.NsThread(topo.client, _page, topo.server_addr, v.conns, 60)
        t.start()
        out = t.join_result(90)
    finally:
        stop.set()
        srv.join(65)
    t0 = min(o["t0"] for o in out)
    t_last = max(o["t_last"] for o in out)
    return {"params": params, "conns": v.conns, "iw": v.iw,
            "credit": credit(v), "seconds": round(t_last - t0, 6),
            "retrans": proc.tcp_snmp(topo.server)["RetransSegs"] - r0,
            "drops": bottleneck_drops(topo) - d0,
            "ports": " ".join(str(o["port"]) for o in out)}


def run(ctx):
    g = QUICK if ctx.quick else FULL
    ctx.reps = ctx.reps or g["reps"]
    ok, why = policies.cocktail_status()
    variants = [v for v in VARIANTS if ok or v.policy.cc != "cocktail"]
    if not ok:
        ctx.note("cocktail variants skipped: %s" % why)
    if "variant" in ctx.only:
        variants = [v for v in variants if v.name in ctx.only["variant"]]
    proc.sh("modprobe tcp_bbr", check=False)
    cells = [(rtt, lim) for rtt in g["rtts"] for lim in g["limits"]
             if ("rtt_ms" not in ctx.only or str(rtt) in ctx.only["rtt_ms"])
             and ("limit" not in ctx.only or str(lim) in ctx.only["limit"])]
    ctx.grid(len(cells) * ctx.reps * len(variants))
    rows = []
    for rtt, lim in cells:
        todo = [(rep, v) for rep in range(ctx.reps)
                for v in order.for_rep(variants, rep)
                if not ctx.skip(rtt_ms=rtt, limit=lim, variant=v.name,
                                rep=rep)]
        if not todo:
            continue
        topo = Topo(rtt=rtt, rate=RATE, limit=lim)
        topo.up()
        try:
            for ns in (topo.server, topo.client):
                proc.sysctl(ns, "net.ipv4.tcp_no_metrics_save", 1)
            ctx.tc.append({"rtt_ms": rtt, "limit": lim,
                           "netem_topo": topo.args(), "tc": topo.info["tc"]})
            lst = traffic.Listener(topo.server, topo.server_addr, PORT)
            pcap = REPO / "build" / "bench" / ("parallel-%d-%d.pcap" %
                                               (rtt, lim))
            block = []
            with Capture(topo.capture_ns, topo.capture_dev, pcap,
                         "tcp port %d" % PORT) as cap:
                for rep, v in todo:
                    row = {"rtt_ms": rtt, "limit": lim, "variant": v.name,
                           "policy": v.policy.name, "rep": rep,
                           "ideal_s": round(ideal_s(rtt), 6)}
                    try:
                        row.update(fetch(topo, lst, v))
                    except (OSError, RuntimeError, TimeoutError) as e:
                        row["error"] = "%s: %s" % (type(e).__name__, e)
                    block.append(row)
                    ctx.log("rtt %d limit %d %-24s %s s, %s retrans" % (
                        rtt, lim, v.name, row.get("seconds"),
                        row.get("retrans")))
                    ctx.tick()
            lst.close()
            pkts = cap.packets()
            for r in block:
                if r.get("ports"):
                    ports = {int(p) for p in r["ports"].split()}
                    r["burst"] = burst(pkts, topo.server_addr, ports)
            rows += block
            ctx.save(rows)
        finally:
            policies.revert([topo.server])
            topo.down()
    return rows


def verdict(cells):
    """The claim against CELLS ({(rtt, limit): {variant: {"drops",
    "retrans", "seconds"}}} of medians): confirmed when, on every queue
    below the six connections' credit, six IW10 connections lose
    packets where one pipelined connection loses none, and on a queue
    above it neither does; refuted otherwise. None without both."""
    small, large = [], []
    for (rtt, lim), by in sorted(cells.items()):
        six, one = by.get("linux-6x"), by.get("linux-1x-pipelined")
        if not six or not one:
            continue
        (small if lim < CONNS * 10 else large).append((rtt, lim, six, one))
    if not small:
        return None
    ok = all(s["drops"] > 0 and o["drops"] == 0 for _, _, s, o in small) \
        and all(s["drops"] == 0 for _, _, s, _ in large)
    parts = ["%d ms, %d-packet queue: 6x IW10 %g drops, %g retrans; "
             "pipelined %g drops" % (rtt, lim, s["drops"], s["retrans"],
                                     o["drops"])
             for rtt, lim, s, o in small + large]
    return "%s (medians per page): %s." % (
        "confirmed" if ok else "refuted", "; ".join(parts))


def report(ctx, rows):
    rows = [r for r in rows if r.get("variant")]
    names = [v.name for v in VARIANTS]
    md = ["# parallel: six connections with IW10 against one (McManus)\n\n",
          "Measured inside the test VM, 10 Mbit/s, drop-tail queues of the "
          "size given. A page: six objects of 14,480 B (one IW10 each). "
          "Time from the first connect() to the last byte, median "
          "(min–max), ×ideal (two RTTs plus the page's frames at 10 "
          "Mbit/s); credit: segments the page's connections may send "
          "before any ACK; burst: data segments the server sent before "
          "the first ACK of data (capture, median); retransmissions of "
          "the server and drops at the bottleneck per page (median, "
          "max).\n\n"]
    md += ["- %s\n" % n for n in table.notes(ctx)]
    md.append("\n| RTT ms | queue | variant | credit | burst | time s | "
              "×ideal | vs linux-6x | retrans (max) | drops (max) |\n"
              "|---|---|---|---|---|---|---|---|---|---|\n")
    cells = {}
    groups = {}
    keys = sorted({(r["rtt_ms"], r["limit"]) for r in rows})
    for rtt, lim in keys:
        by = {n: [r for r in rows if (r["rtt_ms"], r["limit"]) == (rtt, lim)
                  and r["variant"] == n and r.get("seconds") is not None]
              for n in names}
        ref = stats.median([r["seconds"] for r in by["linux-6x"]])
        for n in names:
            rs = by[n]
            if not rs:
                continue
            s = stats.summarize([r["seconds"] for r in rs])
            med = {k: stats.median([r[k] for r in rs])
                   for k in ("retrans", "drops", "seconds")}
            cells.setdefault((rtt, lim), {})[n] = med
            bursts = [r["burst"] for r in rs if r.get("burst") is not None]
            md.append("| %d | %d | %s | %s | %s | %s | %.2f | %s | %s (%s) "
                      "| %s (%s) |\n" % (
                          rtt, lim, n, rs[0]["credit"],
                          table.fmt(stats.median(bursts)) if bursts
                          else "n/a", table.fmt_range(s),
                          s["median"] / rs[0]["ideal_s"],
                          "%.2f" % (s["median"] / ref) if ref else "n/a",
                          table.fmt(med["retrans"]),
                          max(r["retrans"] for r in rs),
                          table.fmt(med["drops"]),
                          max(r["drops"] for r in rs)))
            groups.setdefault("%d ms, %d pkts" % (rtt, lim), {})[n] = \
                [r["seconds"] for r in rs]
    errs = [r for r in rows if r.get("error")]
    if errs:
        md.append("\nFailed pages:\n\n")
        md += ["- %s ms, %s pkts, %s rep %s: %s\n" % (
            r["rtt_ms"], r["limit"], r["variant"], r["rep"], r["error"])
            for r in errs]
    v = verdict(cells)
    if v:
        md.append("\nVerdict on \"60 is too many\": %s\n" % v)
    (ctx.outdir / "table.md").write_text("".join(md))
    if groups:
        plot.bars(ctx.outdir / "parallel.png", "six objects of 14,480 B",
                  "seconds", groups)

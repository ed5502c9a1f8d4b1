"""chan: the small experiments of Chan (2001), dissertation sections
3.4.1-3.4.4 and 5.1.1-5.1.4 (figures 3.11, 3.13-3.17, 5.1-5.7): each
element of the Cocktail against what it replaces, on real Linux TCP.

Topology: scripts/netem-topo --senders 4 (the dissertation's figure 3.1:
s0..s3 -> router -> router -> c0..c3), 200 ms RTT (figure 3.11: the first
segment leaves at 0.10 s, the second, after its ACK, at 0.32 s), 2 Mbit/s
bottleneck (the rate bench/scenarios/restart.py derives for `chan2m`),
15-packet drop-tail queue; MSS 1460 (TCP timestamps off), the client's
window clamped at 22 segments (traffic.clamp_window: TCP_WINDOW_CLAMP with
a locked receive buffer, which autotuning would otherwise grow, lifting the
clamp), delayed ACKs on at the
client (Linux's default).  s0 -> c0 is measured; s1..s3 -> c1..c3 are
constant-rate UDP sources of 512 kbit/s each (restart.UdpCross), the
dissertation's cross traffic: `congested` runs all three (464 kbit/s
left), `light` one.  The dissertation gives no rates for its small
experiments; these are its section 3.3 network's.

The experiments (variants of one experiment run side by side, in a
Williams order per repetition, bench/lib/order.py):
- iw (figures 3.11, 5.1-5.2): a new connection, the server writes 20
  segments at once; the module's `iw` 1 or 2; delayed ACKs at the client
  on, or off with the client's host route to the server carrying
  `quickack 1` (`-quickack` variants).
- nagle (figures 3.13, 5.7): on a connection whose receiver has left its
  quick-ACK start (40 segments sent first), the server writes 10 full
  segments and a 740-byte tail (11 segments, the dissertation's 5 KB
  example's 740 bytes), then a 5-byte end (a chunked response's last
  chunk); Nagle on (Linux's is Minshall's: the 5 bytes wait while the
  740-byte segment is unacknowledged, and the client delays that ACK: it
  is not a second full segment) against TCP_NODELAY.
- ssthresh (figures 3.14-3.16): a new Reno connection (the kernel's
  `reno`) sends 200 segments into the congested path; initial ssthresh 22
  against 10 segments.  Linux takes an initial ssthresh only from its TCP
  metrics cache (tcp_init_metrics); the cache entry copies the route's
  `ssthresh` when it is created and keeps it over what connections learn
  only when the metric is locked.  So: the server's host route to the
  client gets `ssthresh lock N`, net.ipv4.tcp_no_metrics_save=0 and
  tcp_no_ssthresh_metrics_save=0 in the server's namespace, the cache is
  flushed and one unrecorded connection creates the entry (at its close);
  the measured connection's tcpi_snd_ssthresh is read before any data.
- hoe (figures 5.3-5.4): the module (growth reno, iw 2) sends 100 segments
  on a new connection, congested and light, ssthresh_est=1 (Hoe's
  estimate from the first ACK train) against 0.
- cwv (figures 3.17, 5.5-5.6): the module (iw 2), 10 segments, then one
  segment every 100 ms for 1 s (application-limited; the cross traffic
  starts with it), then a 30-segment burst; cwv=1 (RFC 2861) against
  cwv=0 (growth while application-limited).

Time = the client's last byte minus the server's write of the measured
data (one process, one monotonic clock).  Retransmissions =
tcpi_total_retrans of the measured data; cross_udp_dropped = the UDP
datagrams the bottleneck lost (sent minus received).  Every run is
captured (tcpdump on the router interface toward s0, both directions):
from it the client's ACK delays (ACK time minus the time the data it
completes passed, minus the handshake's RTT seen there) and the longest
wait between two of the server's data segments; repetition 0's captures
stay in the results and draw one sequence/time plot per experiment.
"""
import json
import threading
import time

from bench.lib import order, plot, policies, published, stats, table
from bench.scenarios import restart
from cocktail_lab import proc, traffic
from cocktail_lab.capture import (ACK, SYN, Capture, read_pcap, seq_after,
                                  seq_points)
from cocktail_lab.topo import REPO, Topo

PORT = 5010
RESUME_KEY = ("experiment", "variant", "rep")
RTT_MS = 200
RATE_KBIT = 2000
QUEUE = 15
CLAMP_SEGS = 22
MSS = 1460
CROSS_KBIT = 512
TAIL = 740              # the 5 KB example's last segment (section 3.4.2)
TRAILER = 5             # "0\r\n\r\n": a chunked response's last chunk
WARM_NAGLE = 40         # segments that use up the client's quick ACKs
FULL_REPS, QUICK_REPS = 5, 1


class Variant:
    def __init__(self, exp, name, policy, params=None, **opt):
        self.exp, self.name = exp, name
        self.policy = policies.BY_NAME[policy]
        self.params = params or {}
        self.opt = opt


# the module's other elements held still: ssthresh_est=0 unless the
# experiment is about it, restart=ssr (nothing here idles past an RTO)
_M = {"ssthresh_est": 0}
VARIANTS = [
    Variant("iw", "iw1-delack", "cocktail-ssr", dict(_M, iw=1), quickack=0),
    Variant("iw", "iw2-delack", "cocktail-ssr", dict(_M, iw=2), quickack=0),
    Variant("iw", "iw1-quickack", "cocktail-ssr", dict(_M, iw=1),
            quickack=1),
    Variant("iw", "iw2-quickack", "cocktail-ssr", dict(_M, iw=2),
            quickack=1),
    Variant("nagle", "nagle", "cocktail-ssr", dict(_M, iw=2), nodelay=0),
    Variant("nagle", "nodelay", "cocktail-ssr", dict(_M, iw=2), nodelay=1),
    Variant("ssthresh", "ssthresh22", "reno-ssr", ssthresh=22),
    Variant("ssthresh", "ssthresh10", "reno-ssr", ssthresh=10),
    Variant("hoe", "est1-congested", "cocktail-ssr",
            dict(iw=2, ssthresh_est=1), flows=3),
    Variant("hoe", "est0-congested", "cocktail-ssr",
            dict(iw=2, ssthresh_est=0), flows=3),
    Variant("hoe", "est1-light", "cocktail-ssr",
            dict(iw=2, ssthresh_est=1), flows=1),
    Variant("hoe", "est0-light", "cocktail-ssr",
            dict(iw=2, ssthresh_est=0), flows=1),
    Variant("cwv", "cwv1", "cocktail-ssr", dict(_M, iw=2, cwv=1)),
    Variant("cwv", "cwv0", "cocktail-ssr", dict(_M, iw=2, cwv=0)),
]
EXPERIMENTS = ("iw", "nagle", "ssthresh", "hoe", "cwv")
# (experiment, what, variant, baseline): the ratios compared with the
# dissertation's, variant / baseline, published and measured
COMPARE = [
    ("iw", "IW2 / IW1, delayed ACKs (fig. 5.1)", "iw2-delack", "iw1-delack"),
    ("iw", "IW2 / IW1, no delayed ACKs (fig. 5.2)", "iw2-quickack",
     "iw1-quickack"),
    ("iw", "IW1, no delayed ACKs / delayed ACKs (fig. 3.11)",
     "iw1-quickack", "iw1-delack"),
    ("nagle", "TCP_NODELAY / Nagle (figs. 3.13, 5.7)", "nodelay", "nagle"),
    ("ssthresh", "initial ssthresh 10 / 22 (fig. 3.16)", "ssthresh10",
     "ssthresh22"),
    ("hoe", "Hoe's estimate / none, congested (fig. 5.3)", "est1-congested",
     "est0-congested"),
    ("hoe", "Hoe's estimate / none, light (fig. 5.4)", "est1-light",
     "est0-light"),
    ("cwv", "CWV / none, the burst (figs. 3.17, 5.6)", "cwv1", "cwv0"),
]
# published rows standing for a variant when the figure's own name differs
PUB_ALIAS = {("iw", "iw1-quickack", "fig. 3.11"): "iw1-quickack-fig3.11",
             ("iw", "iw1-delack", "fig. 3.11"): "iw1-delack-fig3.11"}


# ------------------------------------------------------------------ capture
# Pure functions of a capture's packets (cocktail_lab.capture.Pkt lists),
# host-tested in tests/unit/test_bench_chan.py.

def handshake_rtt(pkts, server, port):
    """Seconds from the server's SYN-ACK to the client's first ACK of it,
    at the capture point beside the server: the path's RTT as the server
    sees it (None without a handshake)."""
    synack = None
    for p in pkts:
        if p.src == server and p.sport == port and \
                p.flags & (SYN | ACK) == SYN | ACK:
            synack = p
        elif synack is not None and p.dst == server and p.dport == port \
                and p.flags & ACK and not p.flags & SYN and \
                p.sport == synack.dport and p.ack == synack.end:
            return p.ts - synack.ts
    return None


def ack_delays(pkts, server, port, rtt):
    """The client's ACKs of the server's data, in order: dicts with t
    (seconds since the first data segment), delay (seconds the client
    held it: the ACK's time minus the time the segment that released it
    passed the capture point, minus RTT) and segs (data segments it newly
    acknowledged).  The segment that released an ACK is the one sent last
    of those it covers (after a loss, the retransmission that filled the
    hole).  An ACK that ends on no segment boundary or acknowledges
    nothing new (a duplicate, a SACK) is left out."""
    data = [p for p in pkts if p.src == server and p.sport == port and
            p.plen > 0]
    if not data:
        return []
    t0 = data[0].ts
    out = []
    acked = None
    for a in pkts:
        if a.dst != server or a.dport != port or not a.flags & ACK or \
                a.plen or a.flags & SYN:
            continue
        if acked is not None and not seq_after(a.ack, acked):
            continue
        before = [d for d in data if d.ts <= a.ts]
        if not any(d.end == a.ack for d in before):
            continue
        covered = [d for d in before if not seq_after(d.end, a.ack)]
        new = {d.seq for d in covered
               if acked is None or seq_after(d.end, acked)}
        acked = a.ack
        out.append({"t": a.ts - t0,
                    "delay": a.ts - max(d.ts for d in covered) - rtt,
                    "segs": len(new)})
    return out


def longest_wait(pkts, server, port, after=0.0):
    """(seconds, bytes of the segment that waited): the longest gap
    between two consecutive data segments of the server sent at or after
    time AFTER (a capture timestamp); (None, None) with fewer than two."""
    data = [p for p in pkts if p.src == server and p.sport == port and
            p.plen > 0 and p.ts >= after]
    best = (None, None)
    for a, b in zip(data, data[1:]):
        if best[0] is None or b.ts - a.ts > best[0]:
            best = (b.ts - a.ts, b.plen)
    return best


def ratios(rows, compare=COMPARE, pub=None):
    """Published against measured, one dict per COMPARE line: variant and
    baseline medians (seconds), their ratio, and the published ratio
    (from PUB, {(experiment, variant): seconds or burst_s}).  A ratio is
    None when either side is missing."""
    out = []
    for exp, what, var, base in compare:
        m = {}
        for v in (var, base):
            m[v] = stats.median([r.get("seconds") for r in rows
                                 if r.get("experiment") == exp and
                                 r.get("variant") == v])
        pv = pb = None
        if pub:
            fig = what[what.rfind("(") + 1:-1] if "(" in what else ""
            pv = pub.get((exp, PUB_ALIAS.get((exp, var, fig), var)))
            pb = pub.get((exp, PUB_ALIAS.get((exp, base, fig), base)))
        out.append({"experiment": exp, "what": what, "variant": var,
                    "baseline": base, "measured_variant": m[var],
                    "measured_baseline": m[base],
                    "measured_ratio": m[var] / m[base]
                    if m[var] and m[base] else None,
                    "published_variant": pv, "published_baseline": pb,
                    "published_ratio": pv / pb if pv and pb else None})
    return out


def published_seconds():
    """{(experiment, variant): seconds}: the burst's own duration where
    the dissertation gives the time it ended (cwv)."""
    out = {}
    for r in published.load("chan2001_elements.csv"):
        v = r.get("burst_s")
        out[(r["experiment"], r["variant"])] = v if v not in ("", None) \
            else r["seconds"]
    return out


# ------------------------------------------------------------------ runs

def _route_get(ns, dst):
    r = json.loads(proc.nsx(ns, "ip -j route get %s" % dst))[0]
    return r.get("gateway"), r["dev"]


def host_route(ns, dst, metrics):
    """A /32 route from NS to DST via the path's gateway with METRICS
    (e.g. "quickack 1", "ssthresh lock 22"); returns what undoes it."""
    gw, dev = _route_get(ns, dst)
    proc.nsx(ns, "ip route replace %s/32 %sdev %s %s" % (
        dst, "via %s " % gw if gw else "", dev, metrics))
    return lambda: proc.nsx(ns, "ip route del %s/32" % dst, check=False)


class Cross(restart.UdpCross):
    """FLOWS of the UDP sources s1..s3 -> c1..c3 at CROSS_KBIT each, with
    restart.UdpCross's count of what the bottleneck dropped."""

    def __init__(self, topo, flows):
        pairs = topo.pairs[1:1 + flows]
        self.rns = [q["client_ns"] for q in pairs]
        self.cross = traffic.CrossTraffic(
            [(q["server_ns"], q["client_ns"], q["client_addr"])
             for q in pairs], CROSS_KBIT)
        self.err0 = None


class Bench:
    """The topology, the listener and the runs of every variant."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.topo = Topo(senders=4, rtt=RTT_MS, rate="%dkbit" % RATE_KBIT,
                         limit=QUEUE)
        self.topo.up()
        self.lst = None
        try:
            t = self.topo
            self.s, self.c = t.server, t.client
            for ns in (self.s, self.c):
                proc.sysctl(ns, "net.ipv4.tcp_timestamps", 0)
                proc.sysctl(ns, "net.ipv4.tcp_no_metrics_save", 1)
            ctx.tc.append({"netem_topo": t.args(), "tc": t.info["tc"]})
            self.lst = traffic.Listener(self.s, t.server_addr, PORT)
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.lst:
            self.lst.close()
        policies.revert([self.topo.server])
        self.topo.down()

    def pair(self, cc, nodelay=True):
        return traffic.tcp_pair(self.lst, self.c, cc,
                                clamp=CLAMP_SEGS * MSS, nodelay=nodelay,
                                timeout=120)

    @staticmethod
    def timed(row, srv, cli, segs, base=None):
        """Write SEGS full segments from SRV and time them to CLI's last
        byte: ROW gets t_write, seconds, mss and retrans (since BASE,
        tcp_info, or since the connection began); returns the sender's
        tcp_info once everything is ACKed."""
        mss = (base or traffic.tcpinfo.info(srv))["snd_mss"]
        row["t_write"] = time.time()
        t0, t1 = traffic.send_and_time(srv, cli, segs * mss, 120)
        after = traffic.wait_acked(srv, 60)
        row.update(seconds=round(t1 - t0, 6), mss=mss,
                   retrans=after["total_retrans"] -
                   (base["total_retrans"] if base else 0))
        return after

    # one function per experiment: row fields of one run
    def iw(self, v, row):
        undo = host_route(self.c, self.topo.server_addr, "quickack 1") \
            if v.opt["quickack"] else None
        try:
            srv, cli = self.pair(v.policy.cc)
            try:
                self.timed(row, srv, cli, 20)
            finally:
                srv.close()
                cli.close()
        finally:
            if undo:
                undo()

    def nagle(self, v, row):
        srv, cli = self.pair(v.policy.cc, nodelay=bool(v.opt["nodelay"]))
        try:
            mss = traffic.tcpinfo.info(srv)["snd_mss"]
            traffic.send_and_time(srv, cli, WARM_NAGLE * mss, 60)
            before = traffic.wait_acked(srv, 30)
            time.sleep(0.05)
            body = b"b" * (10 * mss + TAIL)
            err = []

            def write():
                try:
                    srv.sendall(body)
                    srv.sendall(b"t" * TRAILER)
                except OSError as e:
                    err.append(e)
            row["t_write"] = time.time()
            w = threading.Thread(target=write, daemon=True)
            t0 = time.monotonic()
            w.start()
            t1 = traffic.recv_exact(cli, len(body) + TRAILER,
                                    time.monotonic() + 60)
            w.join(30)
            if err:
                raise err[0]
            after = traffic.wait_acked(srv, 30)
            row.update(seconds=round(t1 - t0, 6), mss=mss,
                       cwnd_before=before["snd_cwnd"],
                       retrans=after["total_retrans"] -
                       before["total_retrans"])
        finally:
            srv.close()
            cli.close()

    def ssthresh(self, v, row):
        s = self.s
        undo = host_route(s, self.topo.client_addr,
                          "ssthresh lock %d" % v.opt["ssthresh"])
        cross = None
        try:
            proc.sysctl(s, "net.ipv4.tcp_no_metrics_save", 0)
            proc.sysctl(s, "net.ipv4.tcp_no_ssthresh_metrics_save", 0)
            proc.nsx(s, "ip tcp_metrics flush all", check=False)
            # the connection whose close creates the metrics entry
            srv, cli = self.pair(v.policy.cc)
            traffic.send_and_time(srv, cli, 2 * MSS, 60)
            traffic.wait_acked(srv, 30)
            cli.close()
            time.sleep(0.1)
            srv.close()
            time.sleep(2.5 * RTT_MS / 1000.0)
            row["metrics"] = proc.nsx(s, "ip tcp_metrics show %s" %
                                      self.topo.client_addr,
                                      check=False).strip()
            cross = Cross(self.topo, 3)
            cross.start()
            time.sleep(1.0)
            srv, cli = self.pair(v.policy.cc)
            try:
                i0 = traffic.tcpinfo.info(srv)
                row["ssthresh_initial"] = i0["snd_ssthresh"]
                self.timed(row, srv, cli, 200, i0)
            finally:
                srv.close()
                cli.close()
            row.update(cross.finish(0.5))
        finally:
            if cross:
                cross.close()
            undo()
            proc.sysctl(s, "net.ipv4.tcp_no_metrics_save", 1)
            proc.nsx(s, "ip tcp_metrics flush all", check=False)

    def hoe(self, v, row):
        cross = Cross(self.topo, v.opt["flows"])
        try:
            cross.start()
            time.sleep(1.0)
            c0 = policies.counters(v.policy)
            srv, cli = self.pair(v.policy.cc)
            try:
                after = self.timed(row, srv, cli, 100)
                row["ssthresh_after"] = after["snd_ssthresh"]
            finally:
                srv.close()
                cli.close()
            c1 = policies.counters(v.policy)
            row["ssthresh_estimates"] = c1.get("ssthresh_est", 0) - \
                c0.get("ssthresh_est", 0)
            row.update(cross.finish(0.5))
        finally:
            cross.close()

    def cwv(self, v, row):
        cross = Cross(self.topo, 3)
        srv, cli = self.pair(v.policy.cc)
        try:
            mss = traffic.tcpinfo.info(srv)["snd_mss"]
            traffic.send_and_time(srv, cli, 10 * mss, 60)
            i0 = traffic.wait_acked(srv, 30)
            row["cwnd_before_app"] = i0["snd_cwnd"]
            cross.start()
            nxt = time.monotonic()
            for _ in range(10):             # application-limited: 1 s
                srv.sendall(b"a" * mss)
                nxt += 0.1
                time.sleep(max(0.0, nxt - time.monotonic()))
            traffic.recv_exact(cli, 10 * mss, time.monotonic() + 60)
            pre = traffic.tcpinfo.info(srv)
            row["cwnd_before_burst"] = pre["snd_cwnd"]
            self.timed(row, srv, cli, 30, pre)
            row.update(cross.finish(0.5))
        finally:
            srv.close()
            cli.close()
            cross.close()

    def run(self, v, rep):
        row = {"experiment": v.exp, "variant": v.name, "rep": rep,
               "policy": v.policy.name}
        keep = rep == 0
        pcap = (self.ctx.outdir if keep else REPO / "build" / "bench") / (
            "capture-%s-%s.pcap" % (v.exp, v.name))
        try:
            row["params"] = policies.apply(v.policy, [self.s],
                                           v.params or None)
            with Capture(self.topo.capture_ns, self.topo.capture_dev, pcap,
                         "tcp port %d" % PORT):
                getattr(self, v.exp)(v, row)
            row.update(analyse(read_pcap(str(pcap)), self.topo.server_addr,
                               row.get("t_write", 0.0)))
        except (OSError, RuntimeError, TimeoutError, ValueError) as e:
            row["error"] = "%s: %s" % (type(e).__name__, e)
        if not keep and pcap.exists():
            pcap.unlink()
        return row


def analyse(pkts, server, t_write=0.0):
    """Row fields from one run's capture: the handshake RTT, the client's
    first and longest ACK delay, ACKs per data segment, the longest wait
    between the server's segments of the measured data (sent after
    T_WRITE, a wall-clock time; 0: all) and the retransmissions seen."""
    out = {}
    rtt = handshake_rtt(pkts, server, PORT)
    if rtt is None:
        return out
    data_pkts = [p for p in pkts if p.ts >= t_write - 0.001]
    acks = ack_delays(data_pkts, server, PORT, rtt)
    out["rtt_ms"] = round(rtt * 1000, 1)
    if acks:
        out["first_ack_delay_ms"] = round(acks[0]["delay"] * 1000, 1)
        out["max_ack_delay_ms"] = round(max(a["delay"] for a in acks)
                                        * 1000, 1)
        out["segs_per_ack"] = round(sum(a["segs"] for a in acks) /
                                    float(len(acks)), 2)
    wait, held = longest_wait(pkts, server, PORT, after=t_write - 0.001)
    if wait is not None:
        out["longest_wait_ms"] = round(wait * 1000, 1)
        out["held_bytes"] = held
    pts = seq_points(pkts, server, PORT, MSS, after=t_write - 0.001)
    out["wire_rtx"] = sum(1 for p in pts if p[2])
    return out


def chosen(ctx):
    vs = list(VARIANTS)
    ok, why = policies.cocktail_status()
    if not ok:
        ctx.note("cocktail variants skipped: %s" % why)
        vs = [v for v in vs if v.policy.cc != "cocktail"]
    for key, attr in (("experiment", "exp"), ("variant", "name")):
        if key in ctx.only:
            vs = [v for v in vs if getattr(v, attr) in ctx.only[key]]
    return vs


def run(ctx):
    ctx.reps = ctx.reps or (QUICK_REPS if ctx.quick else FULL_REPS)
    variants = chosen(ctx)
    ctx.grid(ctx.reps * len(variants))
    rows = []
    b = Bench(ctx)
    try:
        for rep in range(ctx.reps):
            for exp in EXPERIMENTS:
                mine = [v for v in variants if v.exp == exp]
                for v in order.for_rep(mine, rep):
                    if ctx.skip(experiment=exp, variant=v.name, rep=rep):
                        continue
                    row = b.run(v, rep)
                    ctx.log("rep %d %-9s %-15s %s s rtx %s %s" % (
                        rep, exp, v.name, row.get("seconds"),
                        row.get("retrans"), row.get("error", "")))
                    rows.append(row)
                    ctx.save(rows)
                    ctx.tick()
    finally:
        b.close()
    return rows


# ------------------------------------------------------------------ report

COLS = [("seconds", "time s", True), ("retrans", "rtx", False),
        ("cross_udp_dropped", "cross lost", False),
        ("first_ack_delay_ms", "1st ACK delay ms", False),
        ("max_ack_delay_ms", "max ACK delay ms", False),
        ("segs_per_ack", "segs/ACK", False),
        ("longest_wait_ms", "longest wait ms", False),
        ("ssthresh_initial", "initial ssthresh", False),
        ("ssthresh_estimates", "estimates", False),
        ("cwnd_before_burst", "cwnd before burst", False)]


def _cell(rs, key, rng):
    vals = [r.get(key) for r in rs]
    if not stats.clean(vals):
        return ""
    s = stats.summarize(vals)
    return table.fmt_range(s) if rng and s["n"] > 1 else table.fmt(
        s["median"])


def report(ctx, rows):
    rows = [r for r in rows if r.get("variant")]
    good = [r for r in rows if r.get("seconds") not in (None, "")]
    pub = published_seconds()
    md = ["# chan: the Cocktail's elements one by one (Chan 2001, sections "
          "3.4 and 5.1)\n\n",
          "Measured inside the test VM on real Linux TCP: 200 ms RTT, 2 "
          "Mbit/s, 15-packet drop-tail queue, MSS 1460, the client's window "
          "clamped at 22 segments; cross traffic 512 kbit/s UDP per "
          "source (3 sources: congested, 1: light). Median (min–max) over "
          "repetitions; the ACK, wait and retransmission columns come from "
          "the capture of each run (ACK delay: how long the client held "
          "its ACK, the handshake's RTT taken off). What each experiment "
          "runs: bench/scenarios/chan.py's docstring.\n\n"]
    md += ["- %s\n" % n for n in ctx.notes]
    errs = [r for r in rows if r.get("error")]
    if errs:
        md.append("- %d runs failed: %s\n" % (len(errs), "; ".join(
            sorted({"%s %s: %s" % (r["experiment"], r["variant"],
                                   r["error"]) for r in errs}))))
    md.append("\n## Published against measured\n\nRatios variant / "
              "baseline of the median times (published: the dissertation's "
              "ns-2 seconds; cwv: the burst's own duration, 2.6 s to the "
              "time the last segment left).\n\n| experiment | comparison | "
              "published s | published ratio | measured s | measured "
              "ratio |\n|---|---|---|---|---|---|\n")
    for c in ratios(good, pub=pub):
        md.append("| %s | %s | %s / %s | %s | %s / %s | %s |\n" % (
            c["experiment"], c["what"], table.fmt(c["published_variant"]),
            table.fmt(c["published_baseline"]),
            table.fmt(c["published_ratio"]),
            table.fmt(c["measured_variant"]),
            table.fmt(c["measured_baseline"]),
            table.fmt(c["measured_ratio"])))
    md.append("\n## Every variant\n\n| experiment | variant | n | %s |\n|"
              "---|---|---|%s\n" % (" | ".join(c[1] for c in COLS),
                                     "---|" * len(COLS)))
    for v in VARIANTS:
        rs = [r for r in good if r["experiment"] == v.exp and
              r["variant"] == v.name]
        if not rs:
            continue
        md.append("| %s | %s | %d | %s |\n" % (
            v.exp, v.name, len(rs), " | ".join(_cell(rs, k, rng)
                                                 for k, _, rng in COLS)))
    plots = _plots(ctx, rows)
    if plots:
        md.append("\n## Sequence/time plots (repetition 0's captures)\n\n")
        md += ["![%s](%s)\n" % (p, p) for p in plots]
    (ctx.outdir / "table.md").write_text("".join(md))


TITLES = {"iw": "20 segments on a new connection: IW 1/2, delayed ACKs "
                "on/off (figs. 3.11, 5.1-5.2)",
          "nagle": "11 segments + 5-byte end, Nagle on/off, delayed ACKs "
                   "(figs. 3.13, 5.7)",
          "ssthresh": "200 segments, initial ssthresh 22 / 10, congested "
                      "(figs. 3.14-3.16)",
          "hoe": "100 segments, Hoe's ssthresh estimate on/off (figs. "
                 "5.3-5.4)",
          "cwv": "30-segment burst after 1 s application-limited, cwv 1/0 "
                 "(figs. 3.17, 5.5-5.6)"}


def _plots(ctx, rows):
    """One sequence/time PNG per experiment from the kept captures
    (repetition 0), the measured data only: from the run's t_write (the
    wall-clock time of the measured write, which capture timestamps
    share) where the run has warm-up or application-limited data
    before it."""
    out = []
    t_write = {(r["experiment"], r["variant"]): r.get("t_write")
               for r in rows if str(r.get("rep")) == "0"}
    for exp in EXPERIMENTS:
        series = {}
        for v in VARIANTS:
            if v.exp != exp:
                continue
            pcap = ctx.outdir / ("capture-%s-%s.pcap" % (exp, v.name))
            if not pcap.exists():
                continue
            pkts = read_pcap(str(pcap))
            server = next((p.src for p in pkts if p.sport == PORT), None)
            if server is None:
                continue
            after = t_write.get((exp, v.name)) or 0.0
            series[v.name] = seq_points(pkts, server, PORT, MSS,
                                        after=float(after) - 0.001)
        if series:
            name = "seq-%s.png" % exp
            plot.seqtime(ctx.outdir / name, TITLES[exp], series)
            out.append(name)
    return out

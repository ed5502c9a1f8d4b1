"""restart: Chan (2001), dissertation section 3.3 / 5.2, tables 3.1-3.4 and
5.1-5.4, on real Linux TCP.

Topology (figure 3.1), built by scripts/netem-topo --senders 4: senders
s0..s3 -> router rl -> router rr -> clients c0..c3; one-way delay D on each
direction (--rtt 2D), router buffer 15 packets (drop-tail: netem rate limit
15; RED: tbf + red with a 15-packet limit, netem-topo's thresholds); MSS 1460 (TCP timestamps off at the
receiver, so a segment carries 1460 bytes); window capped at 22 segments
(TCP_WINDOW_CLAMP at the receiver, its buffer locked so that autotuning
does not lift the clamp: traffic.clamp_window); receiver delayed ACKs on (Linux
default); Nagle off at the sender (TCP_NODELAY).

Bottleneck: the dissertation does not state its rate.  With three 512
kbit/s cross-traffic sources, a 2 Mbit/s link leaves 464 kbit/s, and 100
segments of 1514 B on the wire then need 2.6 s: its 100-segment times are
2.5-4 s at 10-100 ms, and its 1000-segment times are about ten times those.
So profile `chan2m` is 2 Mbit/s.  Profile `modern50m` is 50 Mbit/s with a
buffer of one BDP at 50 ms RTT (206 packets), default windows (no clamp,
timestamps on), cross traffic scaled to the same 77% share of the link.

One run: s1 sends 1000 segments to r1 alone (warm-up) and waits for the
last ACK; the connection then idles 1.5 RTO (measured from the last data
sent, RTO from tcp_info); cross traffic starts at the beginning of the
idle period; then s1 writes the burst.  The cross traffic (`cross`):
- `udp`: three constant-rate UDP sources s2..s4 -> r2..r4 (unresponsive);
  cross_udp_dropped = datagrams sent - datagrams that reached the
  receivers (queued in their never-read sockets or refused by them for
  a full buffer, /proc/net/snmp InErrors), counted after the burst is
  acked, the sources stopped and the path drained; a source the guest
  stalled does not catch up in a burst of its own (it would overflow
  the queue whatever the burst did): cross_udp_skipped counts what it
  gave up instead (cocktail_lab.traffic.cbr_schedule);
- `tcp`: one CUBIC bulk flow s2 -> r2 through the same bottleneck
  (responsive), with the profile's window clamp and timestamps;
  cross_tcp_kbit_before = its goodput at the receiver over the second
  half of the idle period (cross_tcp_before_s long; at long RTTs the
  flow is still in slow start there, so it reads low),
  cross_tcp_kbit_burst = during the burst, cross_tcp_retrans = its
  retransmissions during the burst;
- `none` (the demo's quiet path, not in the grids): nothing starts, the
  path stays as the warm-up left it.
Time = the receiver's last byte minus the sender's write (one process,
one clock; t_write is the write's wall-clock time, for captures).
Ideal = one-way delay + burst bytes on the wire / (rate - cross rate)
(`tcp`: / half the rate, the burst's fair share beside the bulk flow;
`none`: / the rate).  Burst retransmissions = tcpi_total_retrans after
the burst is acked minus just before the idle period.  Bottleneck drops
are counted over the idle period and the burst (cross traffic runs in
both); idle_s is the idle time actually spent (on a loaded host it can
exceed 1.5 RTO).

--jobs N: up to N (profile, queue, delay) cells of a profile at or below
PARALLEL_MAX_KBIT run side by side, each on its own topology.  The
module's parameters are global, so every cell of a batch runs the same
policy and burst at the same moment; a repetition is a series of such
batches, the policy order following a Williams design (bench/lib/order.py)
as without --jobs.
"""
import itertools
import time

from bench.lib import (order, parallel, plot, policies, published,
                       rules, stats, table)
from cocktail_lab import modparams, proc, traffic
from cocktail_lab.topo import Topo, bottleneck_drops

PROFILES = {
    "chan2m": dict(rate_kbit=2000, queue_pkts=15, clamp_segs=22,
                   timestamps=0, cross_kbit=512),
    "modern50m": dict(rate_kbit=50000, queue_pkts=206, clamp_segs=0,
                      timestamps=1, cross_kbit=12800),
}
FULL = [
    dict(profile="chan2m", queues=["droptail", "red"],
         delays=[10, 20, 30, 50, 100, 150, 200, 300],
         bursts=[100, 200, 500, 1000], crosses=["udp", "tcp"]),
    dict(profile="modern50m", queues=["droptail"], delays=[10, 25, 50, 100],
         bursts=[100, 1000], crosses=["udp", "tcp"]),
]
QUICK = [dict(profile="chan2m", queues=["droptail"], delays=[20, 150],
              bursts=[100], crosses=["udp", "tcp"])]
# the kinds of cross traffic that start during the idle period
CROSSES = ("udp", "tcp")
WARM_SEGS = 1000
IDLE_RTO = 1.5
# profiles up to this rate may run several cells side by side (--jobs)
PARALLEL_MAX_KBIT = 10000
# --jobs of a full run: all 16 chan2m cells at once
FULL_JOBS = 16
PORT = 5001
RESUME_KEY = ("profile", "queue", "delay_ms", "burst", "cross", "policy",
              "rep")


def ideal_s(p, delay_ms, burst, mss, cross="udp"):
    hdr = 40 + (12 if p["timestamps"] else 0) + 14
    free = {"tcp": p["rate_kbit"] / 2.0, "none": p["rate_kbit"]}.get(
        cross, p["rate_kbit"] - 3 * p["cross_kbit"]) * 1000.0
    return delay_ms / 1000.0 + burst * (mss + hdr) * 8 / free


def _udp_errors():
    """This thread's namespace's UDP InErrors (/proc/net/snmp): datagrams
    that arrived but were refused, e.g. for a full receive buffer."""
    with open("/proc/thread-self/net/snmp") as f:
        lines = [ln.split() for ln in f if ln.startswith("Udp:")]
    return int(dict(zip(lines[0][1:], lines[1][1:]))["InErrors"])


def _drain(sock):
    """Datagrams queued on SOCK, read and counted."""
    sock.setblocking(False)
    n = 0
    while True:
        try:
            sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return n
        n += 1


class NoCross:
    """No cross traffic: the path stays as the warm-up left it.  The base
    of the other kinds: what one_run asks of cross traffic (start at the
    idle period's beginning, marks mid-idle, before and after the burst,
    finish once it is acked), each doing nothing here."""
    kind = "none"

    def start(self):
        pass

    def mid(self):
        pass

    def pre(self):
        pass

    def post(self):
        return {}

    def finish(self, drain_s):
        return {}

    def rate(self, t):
        return 0.0, 0

    def close(self):
        pass


class UdpCross(NoCross):
    """The UDP sources s2..s4 -> r2..r4, and what the bottleneck dropped
    of them: sent - (read from the receivers' sockets + refused by them)."""
    kind = "udp"

    def __init__(self, topo, p):
        self.rns = [q["client_ns"] for q in topo.pairs[1:]]
        self.cross = traffic.CrossTraffic(
            [(q["server_ns"], q["client_ns"], q["client_addr"])
             for q in topo.pairs[1:]], p["cross_kbit"])
        self.err0 = None

    def start(self):
        self.err0 = [proc.in_ns(ns, _udp_errors) for ns in self.rns]
        self.cross.start()

    def finish(self, drain_s):
        """Stop the sources, wait DRAIN_S for the path to empty, count."""
        self.cross.stop()
        time.sleep(drain_s)
        got = sum(_drain(s) for s in self.cross.sinks)
        got += sum(proc.in_ns(ns, _udp_errors) - e0
                   for ns, e0 in zip(self.rns, self.err0))
        return {"cross_udp_sent": self.cross.sent,
                "cross_udp_skipped": self.cross.skipped,
                "cross_udp_dropped": max(0, self.cross.sent - got)}

    def rate(self, t):
        """What it sent per second since start (kbit/s over T seconds)
        and the datagram count."""
        return (round(self.cross.sent * self.cross.frame * 8 / t / 1000.0,
                      1), self.cross.sent)

    def close(self):
        self.cross.close()


class TcpCross(NoCross):
    """One CUBIC bulk flow s2 -> r2 through the bottleneck; its goodput at
    the receiver over the second half of the idle period and during the
    burst, and its retransmissions during the burst."""
    kind = "tcp"

    def __init__(self, topo, lst_bulk, p, timeout):
        self.srv, self.cli = traffic.tcp_pair(
            lst_bulk, topo.pairs[1]["client_ns"], "cubic",
            clamp=p["clamp_segs"] * 1460, timeout=timeout)
        self.bulk = traffic.Bulk(self.srv, self.cli)
        self.marks = {}

    def _mark(self, name):
        self.marks[name] = (time.monotonic(), self.bulk.received,
                            traffic.tcpinfo.info(self.srv)["total_retrans"])

    def start(self):
        self.bulk.start()
        self._mark("start")

    def mid(self):
        self._mark("mid")

    def pre(self):
        self._mark("pre")

    def post(self):
        self._mark("post")
        m = self.marks
        m.setdefault("mid", m["start"])

        def kbit(a, b):
            dt = m[b][0] - m[a][0]
            return round((m[b][1] - m[a][1]) * 8 / dt / 1000.0, 1) \
                if dt > 0 else None
        return {"cross_tcp_kbit_before": kbit("mid", "pre"),
                "cross_tcp_kbit_burst": kbit("pre", "post"),
                "cross_tcp_before_s": round(m["pre"][0] - m["mid"][0], 3),
                "cross_tcp_retrans": m["post"][2] - m["pre"][2]}

    def rate(self, t):
        return round(self.bulk.received * 8 / t / 1000.0, 1), None

    def close(self):
        self.bulk.stop()


def one_run(topo, lst, p, pol, burst, delay_ms, params, cross_kind="udp",
            lst_bulk=None):
    """One warm-up / idle / burst run with CROSS_KIND cross traffic
    starting in the idle period; returns the CSV row fields."""
    r1 = topo.pairs[0]["client_ns"]
    clamp = p["clamp_segs"] * 1460
    slow = 3.0 + delay_ms / 50.0          # generous timeouts under TCG
    srv, cli = traffic.tcp_pair(lst, r1, pol.cc, clamp=clamp,
                                timeout=120 * slow)
    cross = None
    row = {"params": params, "congestion": traffic.tcpinfo.congestion(srv),
           "cross": cross_kind}
    try:
        cross = TcpCross(topo, lst_bulk, p, 120 * slow) \
            if cross_kind == "tcp" else NoCross() if cross_kind == "none" \
            else UdpCross(topo, p)
        mss = traffic.tcpinfo.info(srv)["snd_mss"]
        w0, w1 = traffic.send_and_time(srv, cli, WARM_SEGS * mss, 120 * slow)
        row["warm_s"] = round(w1 - w0, 3)
        before = traffic.wait_acked(srv, 10 * slow)
        rto_s = before["rto"] / 1e6
        t_idle0 = time.monotonic()
        cross.start()                       # idle period begins
        # slow bookkeeping (a tc process: seconds on a loaded TCG host)
        # runs beside the idle period, which is slept to its planned end
        # (the cross traffic's mid-idle mark on time); the burst waits
        # for it if it takes longer
        drops0 = parallel.Background(bottleneck_drops, topo)
        idle = IDLE_RTO * rto_s - before["last_data_sent"] / 1000.0
        left = t_idle0 + idle / 2 - time.monotonic()
        if left > 0:
            time.sleep(left)
        cross.mid()
        left = t_idle0 + idle - time.monotonic()
        if left > 0:
            time.sleep(left)
        drops0 = drops0.result(60 * slow)
        pre = traffic.tcpinfo.info(srv)
        cross.pre()
        # the write's wall-clock time, which capture timestamps share
        row["t_write"] = round(time.time(), 6)
        t0, t_last = traffic.send_and_time(srv, cli, burst * mss, 120 * slow)
        row.update(cross.post())
        after = traffic.wait_acked(srv, 10 * slow)
        t_cross = time.monotonic() - t_idle0
        cross_kbit, cross_sent = cross.rate(t_cross)
        row.update({
            "seconds": round(t_last - t0, 6),
            "ideal_s": round(ideal_s(p, delay_ms, burst, mss, cross_kind),
                             6),
            "burst_retrans": after["total_retrans"] - before["total_retrans"],
            "warm_retrans": before["total_retrans"],
            "bottleneck_drops": bottleneck_drops(topo) - drops0,
            "mss": mss,
            "rto_ms": round(rto_s * 1000, 1),
            "idle_s": round(t0 - t_idle0 + before["last_data_sent"] / 1000.0,
                            3),
            "srtt_ms": round(before["rtt"] / 1000.0, 1),
            "min_rtt_ms": round(before["min_rtt"] / 1000.0, 1),
            "cwnd_before_idle": before["snd_cwnd"],
            "cwnd_at_burst": pre["snd_cwnd"],
            "cwnd_after": after["snd_cwnd"],
            "cross_pkts": cross_sent,
            # what the cross traffic really sent from the start of the idle
            # period until the burst was acked (a late sender thread would
            # leave the burst more of the link than the ideal assumes)
            # (tcp: the bulk flow's goodput over the same time)
            "cross_kbit_sent": cross_kbit,
        })
        row["ratio_ideal"] = round(row["seconds"] / row["ideal_s"], 4)
        # the sources stop, the queue drains (one-way delay + the queue
        # at the bottleneck rate, generously), then what arrived counts
        row.update(cross.finish(delay_ms / 1000.0 + 0.5 + p["queue_pkts"] *
                                1514 * 8 / (p["rate_kbit"] * 1000.0)))
    finally:
        if cross is not None:
            cross.close()
        srv.close()
        cli.close()
    return row


def _grid(ctx):
    grid = QUICK if ctx.quick else FULL
    only = ctx.only
    for g in grid:
        if "profile" in only and g["profile"] not in only["profile"]:
            continue
        for q in g["queues"]:
            if "queue" in only and q not in only["queue"]:
                continue
            for d in g["delays"]:
                if "delay_ms" in only and str(d) not in only["delay_ms"]:
                    continue
                bursts = [b for b in g["bursts"] if "burst" not in only or
                          str(b) in only["burst"]]
                crosses = [c for c in g.get("crosses", ["udp"])
                           if "cross" not in only or c in only["cross"]]
                if bursts and crosses:
                    yield g["profile"], q, d, bursts, crosses


def _lanes(ctx):
    """The grid's cells in groups that run side by side: up to ctx.jobs
    cells of one profile (each on a topology of its own).  A profile
    faster than PARALLEL_MAX_KBIT always runs one cell at a time: under
    TCG its packet rate alone can load the VM's CPUs."""
    cells = list(_grid(ctx))
    for prof in dict.fromkeys(c[0] for c in cells):
        mine = [c for c in cells if c[0] == prof]
        width = ctx.jobs if PROFILES[prof]["rate_kbit"] <= \
            PARALLEL_MAX_KBIT else 1
        for i in range(0, len(mine), width):
            yield mine[i:i + width]


class Cell:
    """One (profile, queue, delay) cell: its topology, with the listener
    on s1 and the namespace sysctls set."""

    def __init__(self, ctx, prof, q, d, bursts, crosses=("udp",), p=None):
        self.prof, self.q, self.d, self.bursts = prof, q, d, bursts
        self.crosses = list(crosses)
        # P: a profile of the caller's own (the demo's), named PROF
        self.p = p = p or PROFILES[prof]
        self.topo = Topo(senders=4, rtt=2 * d,
                         rate="%dkbit" % p["rate_kbit"],
                         limit=p["queue_pkts"], red=(q == "red"))
        self.topo.up()
        self.s1 = self.topo.pairs[0]["server_ns"]
        self.lst = self.lst_bulk = None
        try:
            pairs = self.topo.pairs
            for ns in (self.s1, pairs[0]["client_ns"], pairs[1]["server_ns"],
                       pairs[1]["client_ns"]):
                proc.sysctl(ns, "net.ipv4.tcp_no_metrics_save", 1)
                proc.sysctl(ns, "net.ipv4.tcp_timestamps", p["timestamps"])
            ctx.tc.append({"profile": prof, "queue": q, "delay_ms": d,
                           "netem_topo": self.topo.args(),
                           "tc": self.topo.info["tc"]})
            self.lst = traffic.Listener(self.s1,
                                        self.topo.pairs[0]["server_addr"],
                                        PORT)
            if "tcp" in self.crosses:
                self.lst_bulk = traffic.Listener(
                    pairs[1]["server_ns"], pairs[1]["server_addr"], PORT)
        except BaseException:
            self.close()
            raise

    def run(self, pol, burst, params, base, cross="udp"):
        """One run of POL with BURST and CROSS traffic into a copy of
        BASE (the row)."""
        row = dict(base, profile=self.prof, queue=self.q, delay_ms=self.d,
                   cross=cross)
        t = time.monotonic()
        try:
            row.update(one_run(self.topo, self.lst, self.p, pol, burst,
                               self.d, params, cross, self.lst_bulk))
        except (OSError, TimeoutError, RuntimeError) as e:
            row["error"] = "%s: %s" % (type(e).__name__, e)
        row["wall_s"] = round(time.monotonic() - t, 1)
        return row

    def close(self):
        for lst in (self.lst, self.lst_bulk):
            if lst:
                lst.close()
        self.topo.down()


def _batch(cells, pol, burst, params, base, cross="udp"):
    """Run POL's BURST with CROSS traffic on every cell of CELLS at once,
    one thread a cell.
    Every row carries the batch size, the VM's CPU load over the batch
    and the counter changes of the policy's build, module or BPF
    (`module_counters`: the counters are global, so in a batch of several
    cells they sum over the batch)."""
    c0 = policies.counters(pol)
    rows, busy = parallel.side_by_side(
        lambda i, c: c.run(pol, burst, params, base, cross), cells)
    counters = policies.counters_since(pol, c0)
    for row in rows:
        row.update(batch_cells=len(cells), batch_cpu_busy=busy)
        if counters is not None:
            row["module_counters"] = counters
    return rows


def run(ctx):
    ctx.reps = ctx.reps or (1 if ctx.quick else 5)
    ctx.jobs = ctx.jobs or (1 if ctx.quick else FULL_JOBS)
    names = ctx.only.get("policy")
    pols = policies.available(names, log=ctx.note)
    if not pols:
        raise SystemExit("restart: no policy can run here")
    ctx.extra["policies"] = [p.name for p in pols]
    ctx.extra["cocktail_params_at_start"] = modparams.get_params()
    ctx.extra["jobs"] = ctx.jobs
    rows = []
    # with --append, batches and repetitions continue the earlier run's
    # numbering (auto_choices groups a batch's rows by `order`)
    # (--resume: the repetitions are the interrupted run's)
    old_order = [int(r["order"]) for r in ctx.old
                 if r.get("order") is not None]
    old_rep = [int(r["rep"]) for r in ctx.old if r.get("rep") is not None
               and not ctx.resuming]
    batch_no = itertools.count(max(old_order, default=-1) + 1)
    rep0 = max(old_rep, default=-1) + 1
    lanes = list(_lanes(ctx))
    ctx.grid(ctx.reps * len(pols) * sum(len(c[3]) * len(c[4])
                                        for lane in lanes for c in lane))
    for lane in lanes:
        keys = [dict(profile=c[0], queue=c[1], delay_ms=c[2], burst=b,
                     cross=x, policy=p.name, rep=rep0 + rep) for c in lane
                for b in c[3] for x in c[4] for p in pols
                for rep in range(ctx.reps)]
        if all(ctx.done(**k) for k in keys):
            ctx.skipped(len(keys))     # --resume: the lane is complete
            continue
        cells = parallel.build(lambda c: Cell(ctx, *c), lane, Cell.close)
        try:
            s1s = [c.s1 for c in cells]
            ctx.log("%d cell(s) side by side: %s" % (len(cells), ", ".join(
                "%s/%s/%d ms" % (c.prof, c.q, c.d) for c in cells)))
            applied = None
            for rep in range(ctx.reps):
                # a Williams design: every policy follows every other
                for pol in order.for_rep(pols, rep0 + rep):
                    for burst, cross in dict.fromkeys(
                            (b, x) for c in cells for b in c.bursts
                            for x in c.crosses):
                        batch = [c for c in cells if burst in c.bursts and
                                 cross in c.crosses]
                        # --resume: a batch whose rows are all kept does
                        # not run; one with some runs whole (same load),
                        # and only its missing rows are added
                        kept = [ctx.skip(profile=c.prof, queue=c.q,
                                         delay_ms=c.d, burst=burst,
                                         cross=cross, policy=pol.name,
                                         rep=rep0 + rep)
                                for c in batch]
                        if all(kept):
                            continue
                        if applied != pol.name:
                            t = time.monotonic()
                            params = policies.apply(pol, s1s, jobs=4)
                            applied = pol.name
                            ctx.log("%s applied in %d namespace(s) in %.0f "
                                    "s" % (pol.name, len(s1s),
                                           time.monotonic() - t))
                        base = {"burst": burst, "policy": pol.name,
                                "rep": rep0 + rep, "order": next(batch_no)}
                        for row, k in zip(_batch(batch, pol, burst, params,
                                                 base, cross), kept):
                            if k:
                                continue
                            rows.append(row)
                            ctx.tick()
                            ctx.log("%s %s d=%d b=%d %s %-14s %s s (ideal "
                                    "%s) rtx %s wall %s cpu %s" % (
                                        row["profile"], row["queue"],
                                        row["delay_ms"], burst, cross,
                                        pol.name,
                                        row.get("seconds"),
                                        row.get("ideal_s"),
                                        row.get("burst_retrans"),
                                        row["wall_s"],
                                        row["batch_cpu_busy"]))
                ctx.save(rows)
        finally:
            policies.revert([c.s1 for c in cells])
            parallel.close_all(Cell.close, cells)
    return rows


def _published(rows):
    pub = published.chan()
    out = {}
    for (q, b, d, pol), v in pub.items():
        out[(("chan2m", q, b), d, pol)] = v
    return out


def _profiles(rows):
    """(profile, its rows), in the order the profiles first appear."""
    for prof in dict.fromkeys(r["profile"] for r in rows):
        yield prof, [r for r in rows if r["profile"] == prof]


def _policies_md(rows, names):
    """Markdown: every policy over every cell of a profile."""
    md = ["\n## Every policy over the grid\n\nPer profile, over every "
          "(queue, burst, delay) cell: in how many cells the policy had the "
          "fastest median, the median over cells of its median time / the "
          "fastest policy's and / the ideal, in how many cells its median "
          "burst retransmissions were no higher than cocktail-ssr's, and "
          "the sum over cells of its median burst retransmissions.\n"]
    for prof, mine in _profiles(rows):
        md += table.policy_summary_md(prof, table.policy_summary(
            mine, ["queue", "burst"], "delay_ms", names), "burst rtx")
    return md


def auto_choices(rows, policy="cocktail-auto"):
    """{id(row): "ssr"|"pace"} for the POLICY rows (cocktail-auto, or the
    BPF build's bpf-auto): what auto ran.
    The module counts its choices (auto_ssr, auto_pace) per batch of cells
    that ran at once (rows sharing `order`); auto picks ssr below a
    threshold of the path's minimum RTT, so the batch's auto_ssr cells are
    the ones with the smallest min_rtt_ms."""
    out = {}
    batches = {}
    for r in rows:
        if r.get("policy") == policy and r.get("min_rtt_ms") \
                is not None and r.get("module_counters"):
            batches.setdefault(r.get("order"), []).append(r)
    for batch in batches.values():
        cnt = dict(kv.split("=") for kv in
                   str(batch[0]["module_counters"]).split() if "=" in kv)
        n_ssr = int(cnt.get("auto_ssr", 0))
        if n_ssr + int(cnt.get("auto_pace", 0)) != len(batch):
            continue        # restarts outside the measured bursts: unsure
        for i, r in enumerate(sorted(batch, key=lambda r: r["min_rtt_ms"])):
            out[id(r)] = "ssr" if i < n_ssr else "pace"
    return out


def _auto_vs_chosen_md(rows):
    """Markdown: auto against the policy it ran, cell by cell (same
    profile, queue, burst, delay): how far apart two runs of the same
    restart are, i.e. the grid's noise floor."""
    ch = auto_choices(rows)
    if not ch:
        return []
    md = ["\n## auto against the policy it ran (the noise floor)\n\n"
          "auto runs ssr or pace; here its runs are set beside that "
          "policy's runs in the same cells. Ratios are medians over "
          "cells of the cell medians.\n\n| profile | auto ran | cells | "
          "auto ×ideal | that policy ×ideal | auto / that policy | auto rtx "
          "| that policy rtx |\n|---|---|---|---|---|---|---|---|\n"]
    key = ("profile", "queue", "burst", "delay_ms")
    for prof in dict.fromkeys(r["profile"] for r in rows):
        for pol in ("ssr", "pace"):
            cellrows = {}
            for r in rows:
                if r["profile"] != prof or r.get("seconds") is None:
                    continue
                k = tuple(r[x] for x in key)
                if r["policy"] == "cocktail-auto" and ch.get(id(r)) == pol:
                    cellrows.setdefault(k, ([], []))[0].append(r)
                elif r["policy"] == "cocktail-" + pol:
                    cellrows.setdefault(k, ([], []))[1].append(r)
            pairs = [(a, b) for a, b in cellrows.values() if a and b]
            if not pairs:
                continue

            def med(rs, f):
                return stats.median([f(r) for r in rs])
            ri = [(med(a, lambda r: r["seconds"] / r["ideal_s"]),
                   med(b, lambda r: r["seconds"] / r["ideal_s"]),
                   med(a, lambda r: r["burst_retrans"]),
                   med(b, lambda r: r["burst_retrans"])) for a, b in pairs]
            md.append("| %s | %s | %d | %s | %s | %s | %s | %s |\n" % (
                prof, pol, len(pairs),
                table.fmt(stats.median([x[0] for x in ri])),
                table.fmt(stats.median([x[1] for x in ri])),
                table.fmt(stats.median([x[0] / x[1] for x in ri])),
                table.fmt(stats.median([x[2] for x in ri])),
                table.fmt(stats.median([x[3] for x in ri]))))
    return md


# the counters that say what a restart decided
DECISIONS = ("ssr", "decay", "keep", "pace", "measure", "auto_ssr",
             "auto_pace", "measure_no_rate", "measure_queued",
             "measure_probed", "measure_wnd", "measure_room",
             "measure_burst", "measure_srtt", "measure_floor", "measure_ssr",
             "measure_quiet", "measure_quiet_others",
             "measure_ensemble",
             "check_full", "check_rtt",
             "check_rate", "check_loss", "check_held", "pace_no_rate")


def _decisions(rows):
    """The DECISIONS counters summed over the batches of ROWS (a batch's
    rows share `order` and carry the same counters)."""
    tot, seen = {}, set()
    for r in rows:
        if r.get("order") in seen or not r.get("module_counters"):
            continue
        seen.add(r.get("order"))
        for kv in str(r["module_counters"]).split():
            k, _, v = kv.partition("=")
            if k in DECISIONS:
                tot[k] = tot.get(k, 0) + int(v)
    return tot


def bpf_md(rows):
    """Markdown: the BPF build (bpf-R) beside the module (cocktail-R) for
    each restart R both ran: the decisions their counters recorded over
    the run, auto's choice cell by cell, and the median over cells of the
    ratio of their cell medians (time, ×ideal) and their retransmissions.
    Empty when no bpf-* policy ran."""
    key = ("profile", "queue", "burst", "delay_ms", "cross")
    out = []
    for r in dict.fromkeys(p.name[len("bpf-"):] for p in policies.BPF):
        mod, bpf = "cocktail-" + r, "bpf-" + r
        cells = {}
        for row in rows:
            if row.get("seconds") is None or row.get("policy") not in (
                    mod, bpf):
                continue
            k = tuple(row.get(x) for x in key)
            cells.setdefault(k, ([], []))[row["policy"] == bpf].append(row)
        pairs = [(a, b) for a, b in cells.values() if a and b]
        if not pairs:
            continue

        def med(rs, f):
            return stats.median([f(x) for x in rs])
        ratio = stats.median([med(b, lambda x: x["seconds"]) /
                              med(a, lambda x: x["seconds"])
                              for a, b in pairs])
        rtx = [sum(med(p, lambda x: x["burst_retrans"]) for p in side)
               for side in zip(*pairs)]
        dm = _decisions([x for a, _ in pairs for x in a])
        db = _decisions([x for _, b in pairs for x in b])
        same = "yes" if dm == db else "no"
        if r == "auto":
            cm, cb = auto_choices(rows, mod), auto_choices(rows, bpf)
            by_cell = [({cm.get(id(x)) for x in a} - {None},
                        {cb.get(id(x)) for x in b} - {None})
                       for a, b in pairs]
            agree = sum(1 for x, y in by_cell if x and x == y)
            same += " (auto: same choice in %d of %d cells)" % (
                agree, len(by_cell))
        out.append("| %s | %d | %s | %s | %s | %.2f | %s | %s |\n" % (
            r, len(pairs), " ".join("%s=%d" % kv for kv in sorted(
                dm.items())) or "-", " ".join("%s=%d" % kv for kv in sorted(
                    db.items())) or "-", same, ratio,
            table.fmt(rtx[0]), table.fmt(rtx[1])))
    if not out:
        return []
    return ["\n## the BPF build beside the module\n\n"
            "bpf-R is cocktail_bpf (bpf/cocktail-bpf) with the module's "
            "parameters of cocktail-R, run interleaved with it in the same "
            "cells. Decisions: the restart counters each build recorded "
            "over those cells; time: the median over cells of bpf-R's "
            "median seconds / cocktail-R's; rtx: the sum over cells of "
            "the median burst retransmissions.\n\n"
            "| restart | cells | module decisions | BPF decisions | same | "
            "BPF / module time | module rtx | BPF rtx |\n"
            "|---|---|---|---|---|---|---|---|\n"] + out


def _crossover_md(rows):
    """Markdown: SSR against pace at each delay, per profile, over every
    queue and burst table; the delays between which pace starts to win
    bound auto_rtt_us (auto compares the path's RTT, about twice the
    one-way delay)."""
    md = ["\n## ssr or pace, by path RTT (where auto_rtt_us belongs)\n\n"
          "Over every queue and burst table of a profile: in how many cells "
          "cocktail-pace's median time beats cocktail-ssr's, the median of "
          "their ratio, and in how many pace's median burst retransmissions "
          "are no higher than SSR's.\n"]
    for prof, mine in _profiles(rows):
        lines = table.crossover(mine, ["queue", "burst"], "delay_ms")
        if not lines:
            continue
        md.append("\n### %s\n\n| one-way delay ms | path RTT ms | cells | "
                  "pace faster | median pace/ssr | pace rtx ≤ ssr |\n"
                  "|---|---|---|---|---|---|\n" % prof)
        for ln in lines:
            md.append("| %s | %s | %d | %d | %.2f | %d |\n" % (
                ln["value"], 2 * ln["value"], ln["cells"], ln["b_faster"],
                ln["ratio"], ln["b_rtx_le"]))
        below, above = table.switch_point(lines)
        if above is None:
            md.append("\npace is not faster in most cells at the largest "
                      "delay: this grid gives no threshold (SSR throughout)."
                      "\n")
        elif below is None:
            md.append("\npace is faster in most cells at every delay: this "
                      "grid gives no threshold (pace throughout).\n")
        else:
            md.append("\npace is faster in most cells from %s ms one-way "
                      "up (and not at %s ms): a threshold between %d and "
                      "%d ms of path RTT fits this grid (auto_rtt_us "
                      "%d–%d).\n" % (above, below, 2 * below, 2 * above,
                                      2000 * below, 2000 * above))
    return md


# the path RTT is twice the one-way delay (auto itself compares the
# connection's minimum RTT)
RULES = rules.candidates(lambda delay_ms: 2 * delay_ms)


def _queue_ratios(rows):
    """rules.queue_ratios over ROWS (one profile), keyed by (queue, burst,
    delay)."""
    return rules.queue_ratios(
        rows, lambda r: (r["queue"], r["burst"], r["delay_ms"]))


def _queue_cell(g, delay):
    """A cell's key in _queue_ratios."""
    return (g[0], g[1], delay)


def queue_rule(rows, below, above):
    """rules.queue_rule over ROWS (one profile), a cell's queue taken from
    the cocktail runs of its (queue, burst, delay)."""
    return rules.queue_rule(_queue_ratios(rows), _queue_cell, below, above)


def _rules_md(rows, names):
    """Markdown: candidate rules for auto, scored per profile."""
    md = ["\n## Rules auto could follow, scored on this grid\n\n"
          "Each rule is scored with the measured runs of the policy it "
          "would pick in a cell (the path RTT taken as twice the one-way "
          "delay), against the cell's fastest policy whose median burst "
          "retransmissions are no higher than cocktail-ssr's. Goal: within "
          "10% of it with retransmissions no higher than SSR's. Only the "
          "first row is a policy that ran as such; the others reuse the "
          "runs of the policies they pick, so they carry the same noise "
          "(see the noise floor above). The queue rules use the queue the "
          "connection had built before the idle period (the cell's median "
          "srtt / minimum RTT over the cocktail runs, from tcp_info just "
          "before the idle period), at the thresholds `queue_pct` could "
          "take.\n"]
    for prof, mine in _profiles(rows):
        mine_rules = dict(RULES)
        ratios = _queue_ratios(mine)
        rules.add_queue_sweep(mine_rules, lambda ratio: rules.queue_rule(
            ratios, _queue_cell, ratio=ratio))
        extra = rules.add_measured_queue(mine, mine_rules)
        md += rules.markdown(prof, table.rule_scores(
            mine, ["queue", "burst"], "delay_ms", names, mine_rules,
            extra=extra))
    return md


def _queue_vs_auto_md(rows):
    """Markdown: restart=queue against auto, per profile, over the cells
    where both ran: the median over cells of queue's median time / auto's,
    the cells where queue was faster, and median burst retransmissions
    summed over the cells."""
    cs = table.cells(rows, ["profile", "queue", "burst"], "delay_ms")
    md = []
    for prof in sorted({r["profile"] for r in rows}):
        pairs = []
        for (g, d, pol), c in cs.items():
            if g[0] != prof or pol != rules.QUEUE_POLICY:
                continue
            a = cs.get((g, d, "cocktail-auto"))
            if a and a["median"] and c["median"] is not None:
                pairs.append((c["median"] / a["median"], c["rtx"] or 0,
                              a["rtx"] or 0))
        if not pairs:
            continue
        if not md:
            md.append("\n## restart=queue against auto\n\nCells where "
                      "both ran: the median over cells of queue's median "
                      "time / auto's, the cells where queue was faster, "
                      "and the median burst retransmissions summed over "
                      "the cells. Only a comparison within one run "
                      "(meta.json) is free of run-to-run drift.\n\n"
                      "| profile | cells | queue / auto (median, "
                      "min–max) | queue faster in | rtx queue | rtx auto "
                      "|\n|---|---|---|---|---|---|\n")
        r = [p[0] for p in pairs]
        md.append("| %s | %d | %.2f (%.2f–%.2f) | %d | %d | %d |\n" % (
            prof, len(pairs), stats.median(r), min(r), max(r),
            sum(x < 1 for x in r), sum(p[1] for p in pairs),
            sum(p[2] for p in pairs)))
    return md


# Chan's restart policies and the bench policies that run the same restart
CHAN_POLICIES = (("SSR", "cocktail-ssr"), ("RBP", "cocktail-pace"),
                 ("CWV", "cocktail-decay"), ("Cocktail", "cocktail-chan"))
# Chan's "high RTT": one-way delays of 150-300 ms (dissertation section 3.3)
HIGH_DELAYS = (150, 200, 300)


def red_over_droptail(medians, delays=HIGH_DELAYS):
    """RED's burst time over drop-tail's, from MEDIANS, {(queue, burst,
    delay_ms, policy): seconds} (a cell's median; published.chan() has
    this shape): {policy: {delay: ratio, ..., "high": ratio}}, a delay's
    ratio the median over bursts of RED / drop-tail in the same (burst,
    delay, policy), "high" the median over every burst and delay in
    DELAYS.  Cells with one queue only are left out."""
    acc = {}
    for (q, b, d, pol), red in medians.items():
        if q != "red" or red is None:
            continue
        dt = medians.get(("droptail", b, d, pol))
        if not dt:
            continue
        acc.setdefault(pol, {}).setdefault(d, []).append(red / dt)
    out = {}
    for pol, byd in acc.items():
        out[pol] = {d: stats.median(v) for d, v in sorted(byd.items())}
        high = [x for d, v in byd.items() if d in delays for x in v]
        out[pol]["high"] = stats.median(high) if high else None
    return out


def red_faster(medians, delays=HIGH_DELAYS):
    """(cells where RED's time is below drop-tail's, cells with both) over
    every (burst, delay in DELAYS, policy) of MEDIANS (as
    red_over_droptail's)."""
    pairs = [(red, medians.get(("droptail", b, d, pol)))
             for (q, b, d, pol), red in medians.items()
             if q == "red" and d in delays and red is not None]
    pairs = [(a, b) for a, b in pairs if b]
    return sum(a < b for a, b in pairs), len(pairs)


def _medians(rows, value="seconds"):
    """{(queue, burst, delay_ms, policy): median VALUE} over ROWS (one
    profile)."""
    cs = table.cells(rows, ["queue", "burst"], "delay_ms", value=value)
    return {(g[0], g[1], d, pol): c["median"]
            for (g, d, pol), c in cs.items()}


def _high(medians, queue, pol, delays=HIGH_DELAYS):
    """The median over the cells at DELAYS of QUEUE and POL in MEDIANS."""
    v = [x for (q, _, d, p), x in medians.items()
         if q == queue and p == pol and d in delays and x is not None]
    return stats.median(v) if v else None


def red_md(rows, profile="chan2m"):
    """Markdown: RED against drop-tail per policy and one-way delay in
    PROFILE's UDP rows, beside Chan's ns-2 tables, with the burst
    retransmissions and bottleneck drops at high RTT."""
    mine = [r for r in rows if r.get("profile") == profile
            and r.get("seconds") is not None]
    meas = _medians(mine)
    ours = red_over_droptail(meas)
    if not ours:
        return []
    chan = red_over_droptail(published.chan())
    rtx = _medians(mine, "burst_retrans")
    drops = _medians(mine, "bottleneck_drops")
    delays = sorted({d for v in ours.values() for d in v if d != "high"})
    hi = "%d–%d ms" % (HIGH_DELAYS[0], HIGH_DELAYS[-1])
    md = ["\n## RED against drop-tail, by one-way delay (%s)\n\n"
          "Chan (section 3.3): \"When RED is used, overall transmission "
          "time is reduced irrespective of which proposed solution is "
          "used\", most at high RTT. Each entry: the median over bursts "
          "of RED's median time / drop-tail's in the same (burst, delay); "
          "%s: the median over every burst and delay from %d ms up. "
          "Burst retransmissions and bottleneck drops (the UDP's and the "
          "connection's, over the idle period and the burst) at %s: the "
          "median of the cell medians, drop-tail → RED. Chan's rows are "
          "his ns-2 tables 3.1–3.4 and 5.1–5.4.\n\n| policy | %s | %s "
          "| rtx %s | drops %s |\n|---|%s---|---|---|\n" % (
              profile, hi, HIGH_DELAYS[0], hi, " | ".join(
                  "%d ms" % d for d in delays), hi, hi, hi,
              "---|" * len(delays))]

    def line(name, v, extra):
        return "| %s | %s | %s | %s |\n" % (name, " | ".join(
            "%.2f" % v[d] if v.get(d) is not None else ""
            for d in delays), "%.2f" % v["high"] if
            v.get("high") is not None else "n/a", extra)
    for pol in sorted(ours, key=lambda p: ([n for _, n in CHAN_POLICIES] +
                                           sorted(ours)).index(p)):
        md.append(line(pol, ours[pol], "%s → %s | %s → %s" % tuple(
            "%g" % x if x is not None else "n/a"
            for x in (_high(m, q, pol) for m in (rtx, drops)
                      for q in ("droptail", "red")))))
    for name, _ in CHAN_POLICIES:
        if name in chan:
            md.append(line("Chan %s (ns-2)" % name, chan[name], " | "))
    verdicts = []
    for name, pol in CHAN_POLICIES:
        a, b = ours.get(pol, {}).get("high"), chan.get(name, {}).get("high")
        if a is None or b is None:
            continue
        verdicts.append("%s %.2f against Chan's %s %.2f (%s)" % (
            pol, a, name, b, "RED faster in both" if a < 1 and b < 1 else
            "RED slower in both" if a >= 1 and b >= 1 else
            "RED slower here, faster in Chan's" if a >= 1 else
            "RED faster here, slower in Chan's"))
    if verdicts:
        md.append("\nRED / drop-tail at %s: %s.\n" % (hi, "; ".join(
            verdicts)))
    (a, n), (b, m) = red_faster(meas), red_faster(published.chan())
    md.append("\nRED faster than drop-tail at %s in %d of %d cells (every "
              "policy, burst and delay) here; in Chan's tables, in %d of "
              "%d.\n" % (hi, a, n, b, m))
    return md


# Chan's low and high RTT (one-way delays, ms) and the bursts and queue
# where he found his Cocktail slow (section 5.3)
LOW_DELAYS = (10, 20, 30, 50)
LONG_BURSTS = (500, 1000)


def chan_cocktail(medians):
    """Chan's Cocktail against his other three policies in MEDIANS
    ({(queue, burst, delay_ms, name): seconds}, names SSR, RBP, CWV,
    Cocktail): {"cells": cells with all four, "fastest": cells where
    Cocktail's time is the lowest of the four, "fastest_low": the same at
    LOW_DELAYS (of "cells_low"), "ratio": the median over cells of
    Cocktail / SSR, "ratio_low", "ratio_high_long": at HIGH_DELAYS with
    LONG_BURSTS on drop-tail}."""
    names = [n for n, _ in CHAN_POLICIES]
    cells = {(q, b, d) for (q, b, d, _) in medians}
    out = {"cells": 0, "fastest": 0, "cells_low": 0, "fastest_low": 0}
    ratio, low, high = [], [], []
    for q, b, d in sorted(cells):
        v = {n: medians.get((q, b, d, n)) for n in names}
        if v["Cocktail"] is not None and v["SSR"]:
            r = v["Cocktail"] / v["SSR"]
            ratio.append(r)
            if d in LOW_DELAYS:
                low.append(r)
            if d in HIGH_DELAYS and b in LONG_BURSTS and q == "droptail":
                high.append(r)
        if any(x is None for x in v.values()):
            continue
        best = v["Cocktail"] <= min(v.values())
        out["cells"] += 1
        out["fastest"] += best
        if d in LOW_DELAYS:
            out["cells_low"] += 1
            out["fastest_low"] += best
    for k, xs in (("ratio", ratio), ("ratio_low", low),
                  ("ratio_high_long", high)):
        out[k] = stats.median(xs) if xs else None
    return out


def chan_cocktail_md(rows, profile="chan2m"):
    """Markdown: Chan's Cocktail (cocktail-chan) measured against his
    tables 5.1-5.4, beside SSR, RBP and CWV (cocktail-ssr, -pace,
    -decay) in PROFILE's UDP rows."""
    mine = [r for r in rows if r.get("profile") == profile
            and r.get("seconds") is not None]
    med = _medians(mine)
    by = {pol: name for name, pol in CHAN_POLICIES}
    meas = {(q, b, d, by[p]): v for (q, b, d, p), v in med.items()
            if p in by}
    if not any(k[3] == "Cocktail" for k in meas):
        return []
    ours, chan = chan_cocktail(meas), chan_cocktail(published.chan())
    # his section 6.2.1's "true Cocktail", the RTT hybrid (ssr on short
    # paths, paced on long ones): cocktail-auto in Cocktail's place
    hyb = {k: v for k, v in meas.items() if k[3] != "Cocktail"}
    hyb.update({(q, b, d, "Cocktail"): v for (q, b, d, p), v in med.items()
                if p == "cocktail-auto"})
    hybrid = chan_cocktail(hyb) if any(
        p == "cocktail-auto" for (_, _, _, p) in med) else None

    def fmt(x):
        return "%.2f" % x if x is not None else "n/a"

    def line(name, c):
        return "| %s | %s | %s | %s | %s | %s |\n" % (
            name, "%d of %d" % (c["fastest"], c["cells"]) if c["cells"]
            else "n/a (not all four ran)",
            "%d of %d" % (c["fastest_low"], c["cells_low"])
            if c["cells_low"] else "n/a", fmt(c["ratio"]),
            fmt(c["ratio_low"]), fmt(c["ratio_high_long"]))
    return ["\n## Chan's Cocktail as a whole (%s)\n\n"
            "cocktail-chan is the mix of his chapter 5: slow-start restart, "
            "IW 2, NewReno with Hoe's initial ssthresh estimate, window "
            "validation, Nagle off. Fastest: cells where its median time "
            "is the lowest of the four (SSR, RBP, CWV, Cocktail: "
            "cocktail-ssr, -pace, -decay, -chan), over the cells where all "
            "four ran; low RTT: one-way delays %s ms. Cocktail / SSR: the "
            "median over cells of the ratio of median times; high RTT, "
            "long bursts: one-way delays %s ms, bursts of %s segments, "
            "drop-tail, where Chan found it slow. Chan's row: his ns-2 "
            "tables 5.1-5.4.\n\n| | fastest of the four | at low RTT "
            "| Cocktail / SSR | at low RTT | high RTT, long bursts, "
            "drop-tail |\n|---|---|---|---|---|---|\n" % (
                profile, "–".join(map(str, (LOW_DELAYS[0], LOW_DELAYS[-1]))),
                "–".join(map(str, (HIGH_DELAYS[0], HIGH_DELAYS[-1]))),
                " and ".join(map(str, LONG_BURSTS))),
            line("measured", ours), line("Chan (ns-2)", chan)] + (
                [line("measured, cocktail-auto in Cocktail's place (his "
                      "6.2.1 RTT hybrid)", hybrid)] if hybrid else [])


def cross_of(r):
    """A row's cross traffic; rows from before the `cross` column ran
    with the UDP sources."""
    return r.get("cross") or "udp"


def by_cross(rows):
    """ROWS with the cross traffic folded into the profile: the UDP rows
    keep their profile (Chan's published numbers are for it), the others
    become PROFILE+KIND, so every table, summary and plot keeps them
    apart."""
    return [r if cross_of(r) == "udp" else
            dict(r, profile="%s+%s" % (r["profile"], cross_of(r)))
            for r in rows]


def report(ctx, rows):
    rows = by_cross([r for r in rows if r.get("policy")])
    names = [p.name for p in policies.ALL + policies.CHAN]
    # the main table has a column for every module policy that ran: the
    # usual set, then those run on request (--only policy=...) in the
    # registry's order; the BPF build's have a section of their own
    ran = {r["policy"] for r in rows}
    columns = names + [p.name for p in policies.KNOWN
                       if p.name in ran and p.name not in names and
                       p.cc == "cocktail"]
    group = ["profile", "queue", "burst"]
    md = ["# restart: idle-restart burst completion time (Chan 2001 "
          "tables 3.1-3.4, 5.1-5.4)\n",
          "Measured inside the test VM (%s runs). Each cell: median "
          "(min–max) seconds over repetitions; ×ideal = median / ideal "
          "(one-way delay + burst bytes at the bottleneck rate left by the "
          "cross traffic); ×base = median / Linux default's median; rtx = "
          "median burst retransmissions (tcpi_total_retrans after the "
          "burst minus just before the idle period). Published columns: "
          "Chan's ns-2 numbers (bench/published/chan2001_restart.csv); "
          "RBP is rate-based pacing, CWV is RFC 2861 decay. The ideal is not "
          "a lower bound: drop-tail and RED drop the UDP cross traffic too, "
          "so a burst can take more than the rate the cross traffic leaves "
          "(×ideal below 1; cross_kbit_sent in runs.csv is what the cross "
          "traffic really sent).\n" % len(rows)]
    md += ["- %s\n" % n for n in ctx.notes]
    errs = [r for r in rows if r.get("error")]
    if errs:
        md.append("\n%d runs failed: %s\n" % (len(errs), "; ".join(
            sorted({str(r["error"])[:80] for r in errs}))))
    md.append(table.markdown(
        rows, group, "delay_ms", columns, policies.BASELINE,
        "{profile}, {queue}, burst {burst} segments", "one-way delay ms",
        published=_published(rows),
        published_cols=("SSR", "RBP", "CWV", "Cocktail")))
    head, lines = table.auto_summary(rows, group, "delay_ms", names)
    md.append("\n## auto vs the fastest policy\n\n%s (goal: within 10%%, "
              "retransmissions no higher than cocktail-ssr).\n" % head)
    md += [ln + "\n" for ln in lines]
    md += _policies_md(rows, columns)
    md += _auto_vs_chosen_md(rows)
    md += bpf_md(rows)
    md += _crossover_md(rows)
    md += _rules_md(rows, names)
    md += _queue_vs_auto_md(rows)
    md += chan_cocktail_md(rows)
    red = red_md(rows)
    md += red
    (ctx.outdir / "table.md").write_text("".join(md))
    if red:
        print("".join(red).strip("\n"))
    pub = published.chan()
    for prof, q, b in sorted({(r["profile"], r["queue"], int(r["burst"]))
                              for r in rows}):
        series = {}
        for r in rows:
            if (r["profile"], r["queue"], int(r["burst"])) != (prof, q, b):
                continue
            s = series.setdefault(r["policy"], {})
            s.setdefault(r["delay_ms"], []).append(r.get("seconds"))
        series = {k: sorted(v.items()) for k, v in series.items()}
        pubs = {}
        if prof == "chan2m":
            for pol in ("SSR", "RBP", "Cocktail"):
                pts = [(d, v) for (qq, bb, d, pp), v in pub.items()
                       if qq == q and bb == b and pp == pol]
                if pts:
                    pubs["Chan %s (ns-2)" % pol] = pts
        plot.lines(ctx.outdir / ("%s-%s-%d.png" % (prof, q, b)),
                   "restart %s %s burst %d: completion time" % (prof, q, b),
                   "one-way delay (ms)", "seconds", series, pubs)

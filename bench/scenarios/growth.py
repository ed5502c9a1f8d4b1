"""growth: the module's window growths against the kernel's on bulk
transfers.  growth=cubic (CUBIC, RFC 9438, with HyStart++) against the
kernel's cubic, growth=reno (NewReno) against the kernel's reno, on one
shaped path per cell (scripts/netem-topo: server -- router -- client, a
drop-tail queue at the router) of RTT x rate x queue:

  RTT 20, 100, 200 ms  x  10, 50 Mbit/s  x  queue 0.25, 1, 2 BDP

Each cell runs the four variants interleaved (a Williams order per
repetition, bench/lib/order.py), one bulk transfer each of about 15 s at
the link's rate (2 s with --quick); throughput is the bytes over the time
the client took to read them, retransmissions the sender's tcp_info
total_retrans.  The table gives the median (min-max) per variant, the
ratios cocktail-cubic / cubic and cocktail-reno / reno (1.0: the module
grows as the kernel does), and the retransmissions beside.

A fairness cell (100 ms, 10 Mbit/s, 1 BDP, two senders behind one
bottleneck): a cocktail-cubic flow and a kernel cubic flow start together
and run 60 s (5 s with --quick); each flow's throughput over that time
and Jain's index of the two, (x1 + x2)^2 / (2 (x1^2 + x2^2)), 1.0 for an
equal share, 0.5 when one flow takes everything.

A loss-epoch cell (`epoch`, the fairness cell's path): one bulk transfer
per variant, 45 s (20 s with --quick), its sender's tcp_info (cwnd,
ssthresh, retransmissions, congestion state) read every 20 ms into
epoch-VARIANT-REP.csv.  A loss event starts where the retransmissions
grow while the connection was in Open or Disorder; an epoch runs from
the end of one loss event's recovery (back in Open) to the start of the
next.  The table gives, for the second epoch after slow start (the
first when there is only one): the window at the loss (W_max), the
window the epoch starts from and their ratio (the multiplicative
decrease: 0.7 for CUBIC, 0.5 for NewReno), the time to regain W_max and
the epoch's length; epoch.png draws that epoch's cwnd against time for
the four variants: CUBIC's concave-then-convex curve against NewReno's
line of one segment a round trip.

Options (bench/run growth ...):
  --quick                 one cell (100 ms, 10 Mbit/s, 1 BDP) and the
                          fairness cell, 1 repetition (default 3; --reps N)
  --only cell=100ms-10mbit-1bdp,...   a subset of the cells (fair: the
                          fairness cell, epoch: the loss-epoch cell)
"""
import time

from bench.lib import only as check, order, plot, policies, stats, table
from cocktail_lab import tcpinfo, traffic
from cocktail_lab.topo import Topo

RTTS = (20, 100, 200)                 # ms
RATES = (10, 50)                      # Mbit/s
QUEUES = (0.25, 1, 2)                 # BDPs
QUICK_CELLS = ("100ms-10mbit-1bdp",)
FRAME = 1514                          # bytes on the link per MSS segment
FAIR = "fair"
EPOCH = "epoch"
# the path of the fairness and loss-epoch cells: 100 ms, 10 Mbit/s, a
# one-BDP drop-tail queue (83 packets)
SHARED = dict(rtt=100, rate=10, queue_bdp=1,
              limit=int(round(10e6 / 8 * 0.1 / FRAME)))
# on that path a loss comes at about 2 BDP (166 segments): CUBIC regains
# it in K = cbrt(166 x 0.3 / 0.4) = 5 s (RFC 9438 section 4.2), NewReno
# climbs back from half of it in 83 round trips of 100-200 ms, 8-17 s;
# 45 s hold two epochs of each after slow start, 20 s (--quick) one
EPOCH_SECS, EPOCH_QUICK_SECS = 45, 20
# tcp_info readings: many per round trip, few enough for TCG's Python
EPOCH_SAMPLE_S = 0.02
# tcp_info ca_state values (include/uapi/linux/tcp.h) in which a new
# retransmission starts a loss event (in CWR, Recovery or Loss it is
# part of the one under way)
CA_OPEN, CA_DISORDER = 0, 1
# variant -> bench policy (bench/lib/policies.py), and the kernel
# baseline each cocktail growth is compared with
VARIANTS = {"cocktail-cubic": "cocktail-cubic", "cubic": "linux-default",
            "cocktail-reno": "cocktail-reno", "reno": "reno-ssr"}
PAIRS = (("cocktail-cubic", "cubic"), ("cocktail-reno", "reno"))
PORT = 5301
RESUME_KEY = ("cell", "variant", "rep")


def cells():
    out = {}
    for rtt in RTTS:
        for rate in RATES:
            for q in QUEUES:
                name = "%dms-%dmbit-%sbdp" % (rtt, rate, ("%g" % q))
                bdp = rate * 1e6 / 8 * rtt / 1e3 / FRAME
                out[name] = dict(rtt=rtt, rate=rate, queue_bdp=q,
                                 limit=max(2, int(round(q * bdp))))
    return out


def chosen(ctx):
    check.keys("growth", ctx.only, ("cell",))
    known = cells()
    extra = [FAIR, EPOCH]
    names = ctx.only.get("cell") or (list(QUICK_CELLS) + extra
                                     if ctx.quick else list(known) + extra)
    check.values("growth", "cell", names, list(known) + extra)
    return names, known


def bulk(topo, pol, nbytes, pair=0):
    """One transfer of NBYTES from pair PAIR's server (policy POL's
    congestion control) to its client: Mbit/s and retransmissions."""
    p = topo.pairs[pair]
    lst = traffic.Listener(p["server_ns"], p["server_addr"], PORT + pair)
    try:
        srv, cli = traffic.tcp_pair(lst, p["client_ns"], pol.cc, timeout=300)
        try:
            t0, t1 = traffic.send_and_time(srv, cli, nbytes, 600)
            info = traffic.wait_acked(srv, 60)
        finally:
            srv.close()
            cli.close()
    finally:
        lst.close()
    return {"mbit_s": round(nbytes * 8 / (t1 - t0) / 1e6, 3),
            "retrans": info["total_retrans"]}


def run_cell(ctx, name, c, rows, transfer, extra=None):
    """The four variants interleaved on one path of cell NAME (C: rtt,
    rate, limit...), each TRANSFER(topo, policy, variant, rep): the
    row's measured fields.  EXTRA: more fields for every row."""
    pols = {v: policies.BY_NAME[p] for v, p in VARIANTS.items()}
    with Topo(rtt=c["rtt"], rate="%dmbit" % c["rate"],
              limit=c["limit"]) as topo:
        ctx.tc.append({"cell": name, "netem_topo": topo.args(),
                       "tc": topo.info["tc"]})
        try:
            for rep in range(ctx.reps):
                for v in order.for_rep(list(VARIANTS), rep):
                    if ctx.skip(cell=name, variant=v, rep=rep):
                        continue
                    row = dict(cell=name, variant=v, rep=rep, cc=pols[v].cc,
                               **c, **(extra or {}))
                    try:
                        row["params"] = policies.apply(pols[v],
                                                       [topo.server])
                        row.update(transfer(topo, pols[v], v, rep))
                    except (OSError, RuntimeError, ValueError,
                            KeyError) as e:
                        row["error"] = "%s: %s" % (type(e).__name__, e)
                    rows.append(row)
                    ctx.log("%-20s %-15s %s Mbit/s, %s retrans%s" % (
                        name, v, row.get("mbit_s"), row.get("retrans"),
                        ", %s epochs, beta %s" % (row.get("epochs"),
                                                  row.get("beta"))
                        if name == EPOCH else ""))
                    ctx.tick()
                    time.sleep(0.5)
                ctx.save(rows)
        finally:
            policies.revert([topo.server])


def jain(xs):
    xs = [x for x in xs if x is not None]
    if not xs or not any(xs):
        return None
    return round(sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)), 4)


def run_fair(ctx, secs, rows):
    """cocktail-cubic and the kernel's cubic, one flow each, together."""
    c = SHARED
    flows = (("cocktail-cubic", 0), ("cubic", 1))
    with Topo(rtt=c["rtt"], rate="%dmbit" % c["rate"], limit=c["limit"],
              senders=2) as topo:
        ctx.tc.append({"cell": FAIR, "netem_topo": topo.args(),
                       "tc": topo.info["tc"]})
        try:
            for rep in range(ctx.reps):
                if ctx.skip(cell=FAIR, variant="fair-cocktail-cubic",
                            rep=rep):
                    continue
                got, listeners, bulks = [], [], []
                try:
                    for v, i in flows:
                        pol = policies.BY_NAME[VARIANTS[v]]
                        p = topo.pairs[i]
                        policies.apply(pol, [p["server_ns"]])
                        lst = traffic.Listener(p["server_ns"],
                                               p["server_addr"], PORT + i)
                        listeners.append(lst)
                        srv, cli = traffic.tcp_pair(lst, p["client_ns"],
                                                    pol.cc, timeout=300)
                        bulks.append(traffic.Bulk(srv, cli))
                    for b in bulks:
                        b.start()
                    time.sleep(secs)
                    for (v, _), b in zip(flows, bulks):
                        got.append((v, b.received,
                                    tcpinfo.info(b.srv)["total_retrans"]))
                finally:
                    for b in bulks:
                        b.stop()
                    for lst in listeners:
                        lst.close()
                mbit = [n * 8 / secs / 1e6 for _, n, _ in got]
                j = jain(mbit)
                for (v, _, retrans), m in zip(got, mbit):
                    rows.append(dict(cell=FAIR, variant="fair-" + v, rep=rep,
                                     mbit_s=round(m, 3), retrans=retrans,
                                     jain=j, **c))
                ctx.log("fair: %s, Jain %s" % (
                    ", ".join("%s %.2f Mbit/s" % (v, m)
                              for (v, _, _), m in zip(got, mbit)), j))
                ctx.tick()
                ctx.save(rows)
        finally:
            policies.revert([p["server_ns"] for p in topo.pairs])


SAMPLE_FIELDS = ("t_s", "cwnd", "ssthresh", "retrans", "ca_state")


def loss_epochs(samples):
    """The complete loss epochs of a trace: SAMPLES are dicts of
    SAMPLE_FIELDS in time order.  A loss event starts at a sample whose
    retransmissions grew while the one before was in Open or Disorder;
    its recovery ends at the next sample in Open.  An epoch runs from that
    sample to the last one before the next loss event.  Per epoch:
    start_s and end_s (seconds into the trace), w_max (cwnd at the last
    sample before the loss event that opened the epoch), w_start (cwnd
    at its start), beta (w_start / w_max), regain_s (seconds from its
    start to the first sample with cwnd >= w_max; None if it never did),
    first and last (indices into SAMPLES)."""
    starts = [i for i in range(1, len(samples))
              if samples[i]["retrans"] > samples[i - 1]["retrans"] and
              samples[i - 1]["ca_state"] in (CA_OPEN, CA_DISORDER)]
    out = []
    for k, loss in enumerate(starts[:-1]):
        first = next((i for i in range(loss, starts[k + 1])
                      if samples[i]["ca_state"] == CA_OPEN), None)
        if first is None:
            continue
        last = starts[k + 1] - 1
        w_max = samples[loss - 1]["cwnd"]
        w_start = samples[first]["cwnd"]
        t0 = samples[first]["t_s"]
        regain = next((samples[i]["t_s"] - t0
                       for i in range(first, last + 1)
                       if samples[i]["cwnd"] >= w_max), None)
        out.append(dict(start_s=t0, end_s=samples[last]["t_s"],
                        w_max=w_max, w_start=w_start,
                        beta=round(w_start / w_max, 3) if w_max else None,
                        regain_s=None if regain is None else round(regain, 3),
                        first=first, last=last))
    return out


def shown_epoch(epochs):
    """The epoch the table and the plot show: the second (the first
    after slow start's overshoot is set by where slow start ended), or
    the only one; None without any."""
    if not epochs:
        return None
    return epochs[1] if len(epochs) > 1 else epochs[0]


def trace_bulk(topo, pol, secs):
    """A bulk transfer of SECS seconds from the server (POL's congestion
    control) with its tcp_info read every EPOCH_SAMPLE_S: (samples,
    Mbit/s received, retransmissions)."""
    p = topo.pairs[0]
    lst = traffic.Listener(p["server_ns"], p["server_addr"], PORT)
    bulk = None
    samples = []
    try:
        srv, cli = traffic.tcp_pair(lst, p["client_ns"], pol.cc, timeout=300)
        bulk = traffic.Bulk(srv, cli)
        t0 = time.monotonic()
        bulk.start()
        nxt = t0
        while True:
            now = time.monotonic()
            if now - t0 >= secs:
                break
            i = tcpinfo.get(srv)
            samples.append(dict(t_s=round(now - t0, 4), cwnd=i["snd_cwnd"],
                                ssthresh=i["snd_ssthresh"],
                                retrans=i["total_retrans"],
                                ca_state=i["ca_state"]))
            nxt += EPOCH_SAMPLE_S
            time.sleep(max(0.0, nxt - time.monotonic()))
        got = bulk.received
        retrans = tcpinfo.get(srv)["total_retrans"]
    finally:
        if bulk is not None:
            bulk.stop()
        lst.close()
    return samples, round(got * 8 / secs / 1e6, 3), retrans


def run_epoch(ctx, secs, rows):
    """The loss-epoch cell: each variant a traced bulk transfer; the
    samples go to epoch-VARIANT-REP.csv beside runs.csv, the row names
    the file and sums up its shown epoch."""
    def transfer(topo, pol, v, rep):
        samples, mbit, retrans = trace_bulk(topo, pol, secs)
        name = "epoch-%s-%d.csv" % (v, rep)
        table.write_csv(ctx.outdir / name, samples, SAMPLE_FIELDS)
        eps = loss_epochs(samples)
        shown = shown_epoch(eps) or {}
        return dict(mbit_s=mbit, retrans=retrans, samples=name,
                    epochs=len(eps),
                    **{k: shown.get(k) for k in ("start_s", "end_s", "w_max",
                                                 "w_start", "beta",
                                                 "regain_s")})
    run_cell(ctx, EPOCH, dict(SHARED), rows, transfer, {"secs": secs})


def run(ctx):
    names, known = chosen(ctx)
    ctx.reps = ctx.reps or (1 if ctx.quick else 3)
    secs = 2 if ctx.quick else 15
    ctx.grid(ctx.reps * sum(1 if n == FAIR else len(VARIANTS)
                            for n in names))
    rows = []
    for n in names:
        if n == FAIR:
            run_fair(ctx, 5 if ctx.quick else 60, rows)
        elif n == EPOCH:
            run_epoch(ctx, EPOCH_QUICK_SECS if ctx.quick else EPOCH_SECS,
                      rows)
        else:
            nbytes = int(known[n]["rate"] * 1e6 / 8 * secs)
            run_cell(ctx, n, known[n], rows,
                     lambda topo, pol, v, rep, nb=nbytes: bulk(topo, pol, nb))
    return rows


def report(ctx, rows):
    rows = [r for r in rows if r.get("cell") and not r.get("error")]
    md = ["# growth: the module's growths against the kernel's, bulk "
          "transfers\n\n",
          "Median (min-max) Mbit/s per variant over interleaved "
          "repetitions; ratio = cocktail's median / the kernel's; "
          "retransmissions: median per transfer.\n\n"]
    md += ["- %s\n" % n for n in ctx.notes]
    if any(r["cell"] not in (FAIR, EPOCH) for r in rows):
        md.append("\n| cell | variant | Mbit/s | ratio | retrans |\n"
                  "|---|---|---|---|---|\n")
    groups = {}
    for cell in dict.fromkeys(r["cell"] for r in rows):
        if cell in (FAIR, EPOCH):
            continue
        mine = [r for r in rows if r["cell"] == cell]

        def vals(v, key="mbit_s"):
            return [r.get(key) for r in mine if r["variant"] == v]
        for ours, kernel in PAIRS:
            ref = stats.median(vals(kernel))
            for v in (ours, kernel):
                s = stats.summarize(vals(v))
                ratio = "%.3f" % (s["median"] / ref) \
                    if v == ours and ref and s["median"] else ""
                md.append("| %s | %s | %s | %s | %s |\n" % (
                    cell, v, table.fmt_range(s), ratio,
                    table.fmt(stats.median(vals(v, "retrans")))))
            if ref and stats.median(vals(ours)):
                groups.setdefault(cell, {})["%s / %s" % (ours, kernel)] = [
                    r["mbit_s"] / ref for r in mine
                    if r["variant"] == ours and r.get("mbit_s")]
    fair = [r for r in rows if r["cell"] == FAIR]
    if fair:
        md.append("\nFairness, 100 ms, 10 Mbit/s, 1 BDP queue, one "
                  "cocktail-cubic and one kernel cubic flow together:\n\n"
                  "| flow | Mbit/s | retrans | Jain's index |\n"
                  "|---|---|---|---|\n")
        for v in dict.fromkeys(r["variant"] for r in fair):
            sel = [r for r in fair if r["variant"] == v]
            md.append("| %s | %s | %s | %s |\n" % (
                v, table.fmt_range(stats.summarize([r["mbit_s"]
                                                    for r in sel])),
                table.fmt(stats.median([r["retrans"] for r in sel])),
                table.fmt(stats.median([r["jain"] for r in sel]))))
        groups.setdefault(FAIR, {})["Jain's index"] = [
            r["jain"] for r in fair if r["variant"] == "fair-cocktail-cubic"]
    md += report_epoch(ctx, [r for r in rows if r["cell"] == EPOCH])
    (ctx.outdir / "table.md").write_text("".join(md))
    if groups:
        plot.bars(ctx.outdir / "growth.png",
                  "cocktail's growth / the kernel's, bulk throughput",
                  "ratio (fair: Jain's index)", groups)


def report_epoch(ctx, rows):
    """The loss-epoch cell's table lines, and epoch.png: each variant's
    shown epoch (of its first repetition with one) as cwnd against the
    seconds since the epoch began."""
    if not rows:
        return []
    md = ["\nOne loss epoch per transfer, 100 ms, 10 Mbit/s, 1 BDP queue "
          "(the second after slow start, or the only one): cwnd at the "
          "loss (W_max, segments), where the epoch starts and its ratio "
          "to W_max, seconds to regain W_max, the epoch's length; "
          "epochs: complete epochs in the trace.\n\n"
          "| variant | rep | Mbit/s | retrans | epochs | W_max | start | "
          "start / W_max | regain s | epoch s |\n"
          "|---|---|---|---|---|---|---|---|---|---|\n"]
    series = {}
    for v in VARIANTS:
        for r in sorted((r for r in rows if r["variant"] == v),
                        key=lambda r: r["rep"]):
            length = r["end_s"] - r["start_s"] \
                if r.get("end_s") is not None else None
            md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n"
                      % (v, r["rep"], table.fmt(r.get("mbit_s")),
                         r.get("retrans"), r.get("epochs"),
                         r.get("w_max", "n/a"), r.get("w_start", "n/a"),
                         table.fmt(r.get("beta")),
                         table.fmt(r.get("regain_s")), table.fmt(length)))
            path = ctx.outdir / str(r.get("samples"))
            if v in series or not r.get("samples") or not path.exists():
                continue
            samples = table.read_csv(path)
            shown = shown_epoch(loss_epochs(samples))
            if shown:
                t0 = samples[shown["first"]]["t_s"]
                series[v] = [(x["t_s"] - t0, [x["cwnd"]]) for x in
                             samples[shown["first"]:shown["last"] + 1]]
    if series:
        plot.lines(ctx.outdir / "epoch.png",
                   "one loss epoch: the module's growths and the kernel's "
                   "(100 ms, 10 Mbit/s, 1 BDP)",
                   "seconds since the epoch began", "cwnd (segments)",
                   series)
    return md

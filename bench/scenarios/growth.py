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

Options (bench/run growth ...):
  --quick                 one cell (100 ms, 10 Mbit/s, 1 BDP) and the
                          fairness cell, 1 repetition (default 3; --reps N)
  --only cell=100ms-10mbit-1bdp,...   a subset of the cells (fair: the
                          fairness cell)
"""
import time

from bench.lib import only as check, order, plot, policies, stats, table
from cocktail_lab import tcpinfo, traffic
from cocktail_lab.topo import Topo

RTTS = (20, 100, 200)                 # ms
RATES = (10, 50)                      # Mbit/s
QUEUES = (0.25, 1, 2)                 # BDPs
QUICK_CELLS = ("100ms-10mbit-1bdp",)
FAIR = "fair"
FRAME = 1514                          # bytes on the link per MSS segment
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
    names = ctx.only.get("cell") or (list(QUICK_CELLS) + [FAIR]
                                     if ctx.quick else list(known) + [FAIR])
    check.values("growth", "cell", names, list(known) + [FAIR])
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


def run_cell(ctx, name, c, secs, rows):
    pols = {v: policies.BY_NAME[p] for v, p in VARIANTS.items()}
    nbytes = int(c["rate"] * 1e6 / 8 * secs)
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
                               **c)
                    try:
                        row["params"] = policies.apply(pols[v],
                                                       [topo.server])
                        row.update(bulk(topo, pols[v], nbytes))
                    except (OSError, RuntimeError, ValueError,
                            KeyError) as e:
                        row["error"] = "%s: %s" % (type(e).__name__, e)
                    rows.append(row)
                    ctx.log("%-20s %-15s %s Mbit/s, %s retrans" % (
                        name, v, row.get("mbit_s"), row.get("retrans")))
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
    c = dict(rtt=100, rate=10, queue_bdp=1,
             limit=int(round(10e6 / 8 * 0.1 / FRAME)))
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
        else:
            run_cell(ctx, n, known[n], secs, rows)
    return rows


def report(ctx, rows):
    rows = [r for r in rows if r.get("cell") and not r.get("error")]
    md = ["# growth: the module's growths against the kernel's, bulk "
          "transfers\n\n",
          "Median (min-max) Mbit/s per variant over interleaved "
          "repetitions; ratio = cocktail's median / the kernel's; "
          "retransmissions: median per transfer.\n\n"]
    md += ["- %s\n" % n for n in ctx.notes]
    md.append("\n| cell | variant | Mbit/s | ratio | retrans |\n"
              "|---|---|---|---|---|\n")
    groups = {}
    for cell in dict.fromkeys(r["cell"] for r in rows):
        if cell == FAIR:
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
    (ctx.outdir / "table.md").write_text("".join(md))
    plot.bars(ctx.outdir / "growth.png",
              "cocktail's growth / the kernel's, bulk throughput",
              "ratio (fair: Jain's index)", groups)

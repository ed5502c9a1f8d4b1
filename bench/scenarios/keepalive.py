"""keepalive: what operators run -- a keep-alive server answering objects
of 16, 64 and 256 KB to a client that waits a think time (0.5, 1, 3 s)
between requests on one connection, at 20, 100 and 200 ms RTT, with and
without a competing bulk TCP flow (CUBIC) on the bottleneck; plus the
gRPC-like case: a 20 KB message on a connection idle longer than the RTO
at 200 ms RTT.

nginx is not installed on the test machines (scripts/deps does not pull
it), so the server is the bench's own keep-alive responder
(bench/lib/traffic.py: length-prefixed request, one sendall answer, Nagle
off); see bench/README.md.

Topology: scripts/netem-topo --senders 2 (dumbbell), 20 Mbit/s,
bottleneck queue of one BDP at 100 ms (170 packets), drop-tail.  Pair 0
carries the keep-alive connection, pair 1 the bulk flow.  Per connection:
one 1 MB warm-up response, then REQS requests, each after the think time.
Latency = request write to last response byte at the client.  Per-request
retransmissions = tcpi_total_retrans after the response is acked minus
before the request; drops = the bottleneck queue's drops over the cell.
"""
import time

from bench.lib import netns, plot, policies, stats, table, traffic

RATE_KBIT = 20000
LIMIT = 170
PORT = 5003
WARM = 1 << 20
FULL = dict(rtts=[20, 100, 200], sizes=[16, 64, 256], thinks=[0.5, 1, 3],
            compete=[0, 1], reqs=20, grpc=True)
QUICK = dict(rtts=[200], sizes=[64], thinks=[1], compete=[0], reqs=4,
             grpc=True)
GRPC_KB = 20


def cells(g):
    for rtt in g["rtts"]:
        for comp in g["compete"]:
            for size in g["sizes"]:
                for think in g["thinks"]:
                    yield rtt, comp, size, think, "web"
        if g["grpc"] and rtt == 200:
            yield rtt, 0, GRPC_KB, 1, "grpc"


def one_conn(topo, lst, lst_bulk, pol, rtt, comp, size_kb, think, reqs):
    s, c = topo.pairs[0]["server_ns"], topo.pairs[0]["client_ns"]
    params = policies.apply(pol, [s])
    bulk = None
    if comp:
        bs, bc = traffic.tcp_pair(lst_bulk, topo.pairs[1]["client_ns"],
                                  "cubic")
        bulk = traffic.Bulk(bs, bc)
        bulk.start()
        time.sleep(2 * rtt / 1000.0 + 1.0)   # let it fill the queue
    srv, cli = traffic.tcp_pair(lst, c, pol.cc, timeout=120)
    resp = traffic.Responder(srv)
    resp.start()
    out = []
    try:
        traffic.request(cli, WARM, 120)
        traffic.wait_acked(srv, 10)
        drops0 = netns.bottleneck_drops(topo)
        for i in range(reqs):
            time.sleep(think)
            before = traffic.tcpinfo.info(srv)
            t0, t1 = traffic.request(cli, size_kb * 1024, 120)
            after = traffic.wait_acked(srv, 10)
            out.append({"req": i, "seconds": round(t1 - t0, 6),
                        "ideal_s": round(rtt / 1000.0 + size_kb * 1024 * 8 /
                                         (RATE_KBIT * 1000.0), 6),
                        "retrans": after["total_retrans"] -
                        before["total_retrans"],
                        "cwnd_before": before["snd_cwnd"],
                        "rto_ms": before["rto"] / 1000.0})
        drops = netns.bottleneck_drops(topo) - drops0
        for r in out:
            r["cell_drops"] = drops
            r["params"] = params
    finally:
        try:
            cli.sendall((0).to_bytes(4, "big"))
        except OSError:
            pass
        resp.join(5)
        srv.close()
        cli.close()
        if bulk:
            bulk.stop()
    return out


def run(ctx):
    g = QUICK if ctx.quick else FULL
    ctx.reps = ctx.reps or 1
    pols = policies.available(ctx.only.get("policy"), log=ctx.note)
    rows = []
    for rtt in g["rtts"]:
        if "rtt_ms" in ctx.only and str(rtt) not in ctx.only["rtt_ms"]:
            continue
        topo = netns.topo(senders=2, rtt=rtt, rate="%dkbit" % RATE_KBIT,
                          limit=LIMIT)
        topo.up()
        s = topo.pairs[0]["server_ns"]
        try:
            netns.sysctl(s, "net.ipv4.tcp_no_metrics_save", 1)
            netns.sysctl(topo.pairs[1]["server_ns"],
                         "net.ipv4.tcp_no_metrics_save", 1)
            ctx.tc.append({"rtt_ms": rtt, "netem_topo": topo.args(),
                           "tc": topo.info["tc"]})
            lst = traffic.Listener(s, topo.pairs[0]["server_addr"], PORT)
            lstb = traffic.Listener(topo.pairs[1]["server_ns"],
                                    topo.pairs[1]["server_addr"], PORT)
            for rep in range(ctx.reps):
                for cell in [c for c in cells(g) if c[0] == rtt]:
                    _, comp, size, think, kind = cell
                    k = rep % len(pols)
                    for pol in pols[k:] + pols[:k]:
                        base = {"kind": kind, "rtt_ms": rtt, "compete": comp,
                                "size_kb": size, "think_s": think,
                                "policy": pol.name, "rep": rep}
                        try:
                            got = one_conn(topo, lst, lstb, pol, rtt, comp,
                                           size, think, g["reqs"])
                            rows += [dict(base, **r) for r in got]
                            ctx.log("%s rtt %d comp %d %dKB think %s %-14s "
                                    "median %.3f s rtx %d" % (
                                        kind, rtt, comp, size, think,
                                        pol.name,
                                        stats.median([r["seconds"]
                                                      for r in got]),
                                        sum(r["retrans"] for r in got)))
                        except (OSError, RuntimeError, TimeoutError) as e:
                            rows.append(dict(base, error="%s: %s" % (
                                type(e).__name__, e)))
                            ctx.log("%s failed: %s" % (pol.name, e))
                    ctx.save(rows)
            lst.close()
            lstb.close()
        finally:
            policies.revert([s])
            topo.down()
    return rows


def report(ctx, rows):
    rows = [r for r in rows if r.get("policy")]
    names = [p.name for p in policies.ALL]
    present = [n for n in names if any(r["policy"] == n for r in rows)]
    md = ["# keepalive: per-request latency on one persistent connection\n\n",
          "Measured inside the test VM; 20 Mbit/s, 170-packet drop-tail "
          "queue. Per policy: median / p90 / p99 request latency (s) over "
          "all requests of the cell, ×ideal of the median (one RTT + object "
          "at 20 Mbit/s), total retransmissions of the measured requests, "
          "bottleneck drops during the cell. `auto vs fastest` compares "
          "medians (goal within 10%, retransmissions no higher than "
          "cocktail-ssr).\n\n"]
    md += ["- %s\n" % n for n in ctx.notes]
    keys = []
    for r in rows:
        k = (r["kind"], r["rtt_ms"], r["compete"], r["size_kb"], r["think_s"])
        if k not in keys:
            keys.append(k)
    md.append("\n| case | RTT ms | bulk | object KB | think s | " +
              " | ".join(present) + " | fastest | auto vs fastest |\n")
    md.append("|" + "---|" * (7 + len(present)) + "\n")
    for k in keys:
        sel = [r for r in rows if (r["kind"], r["rtt_ms"], r["compete"],
                                   r["size_kb"], r["think_s"]) == k
               and r.get("seconds") is not None]
        cellv = {}
        line = [k[0], str(k[1]), "yes" if k[2] else "no", str(k[3]),
                str(k[4])]
        for n in present:
            v = [r["seconds"] for r in sel if r["policy"] == n]
            if not v:
                line.append("—")
                continue
            rtx = sum(r["retrans"] for r in sel if r["policy"] == n)
            drops = max(r["cell_drops"] for r in sel if r["policy"] == n)
            ideal = stats.median([r["ideal_s"] for r in sel])
            m = stats.median(v)
            cellv[n] = {"median": m, "rtx": rtx}
            line.append("%s / %s / %s<br>×%.2f ideal<br>%d rtx, %d drops" % (
                table.fmt(m), table.fmt(stats.percentile(v, 90)),
                table.fmt(stats.percentile(v, 99)), m / ideal, rtx, drops))
        v = table.verdict(cellv, present)
        line.append("%s (%s)" % (v["winner"], table.pct(v["margin"])))
        line.append("%s, %s" % (table.pct(v["auto_gap"]),
                                {True: "rtx ≤ SSR", False: "rtx > SSR",
                                 None: "n/a"}[v["auto_rtx_ok"]]))
        md.append("| " + " | ".join(line) + " |\n")
    (ctx.outdir / "table.md").write_text("".join(md))
    groups = {}
    for r in rows:
        if r.get("seconds") is not None:
            groups.setdefault("%s %dms %dKB t%s%s" % (
                r["kind"], r["rtt_ms"], r["size_kb"], r["think_s"],
                " +bulk" if r["compete"] else ""), {}).setdefault(
                    r["policy"], []).append(r["seconds"])
    plot.bars(ctx.outdir / "keepalive.png", "request latency after think "
              "time (median, min-max)", "seconds", groups)

"""keepalive: what operators run -- a keep-alive server answering objects
of 16, 64 and 256 KB to a client that waits a think time (0.5, 1, 3 s)
between requests on one connection, at 20, 100 and 200 ms RTT, with and
without a competing bulk TCP flow (CUBIC) on the bottleneck; plus the
gRPC-like case: a 20 KB message on a connection idle longer than the RTO
at 200 ms RTT.

Two servers, side by side for the same policy:
- `bench`: the bench's own keep-alive responder (bench/lib/traffic.py:
  length-prefixed request, one sendall answer, Nagle off), every policy;
- `nginx`: Debian's nginx (bench/lib/nginx.py: keep-alive, static files
  from a temp dir, `sendfile on`, `tcp_nodelay on`, a foreground process
  in the sender namespace), for NGINX_POLICIES, web cells only; the
  client is the bench's keep-alive client speaking HTTP/1.1 (latency =
  request write to the last body byte).  Its connections get the
  namespace's default congestion control (the policy's tcp-tune profile
  sets it); sock_diag reads back the connection's algorithm (the run
  fails if it differs) and its tcp_info for retransmissions.
When nginx is missing, table.md says so (a note) and only `bench` runs.

Topology: scripts/netem-topo --senders 2 (dumbbell), 20 Mbit/s,
bottleneck queue of one BDP at 100 ms (170 packets), drop-tail.  Pair 0
carries the keep-alive connection, pair 1 the bulk flow.  Per connection:
one 1 MB warm-up response, then REQS requests, each after the think time.
Latency = request write to last response byte at the client.  Per-request
retransmissions = tcpi_total_retrans after the response is acked minus
before the request; drops = the bottleneck queue's drops over the cell.
"""
import time

from bench.lib import (netns, nginx, order, plot, policies, stats, table,
                       tcpinfo, traffic)

RATE_KBIT = 20000
LIMIT = 170
PORT = 5003
NGINX_PORT = 8080
WARM = 1 << 20
FULL = dict(rtts=[20, 100, 200], sizes=[16, 64, 256], thinks=[0.5, 1, 3],
            compete=[0, 1], reqs=20, grpc=True)
QUICK = dict(rtts=[200], sizes=[64], thinks=[1], compete=[0], reqs=4,
             grpc=True)
GRPC_KB = 20
NGINX_POLICIES = ("linux-default", "cocktail-auto")


def cells(g, only=None):
    """The grid's cells; ONLY (--only) may restrict compete, size_kb,
    think_s and kind (web, grpc)."""
    only = only or {}

    def keep(key, value):
        return key not in only or str(value) in only[key]
    for rtt in g["rtts"]:
        for comp in g["compete"]:
            for size in g["sizes"]:
                for think in g["thinks"]:
                    if keep("compete", comp) and keep("size_kb", size) and \
                            keep("think_s", think) and keep("kind", "web"):
                        yield rtt, comp, size, think, "web"
        if g["grpc"] and rtt == 200 and keep("kind", "grpc"):
            yield rtt, 0, GRPC_KB, 1, "grpc"


class BenchConn:
    """A connection to the bench's own responder (server side in hand)."""
    server = "bench"

    def __init__(self, lst, client_ns, pol):
        self.srv, self.cli = traffic.tcp_pair(lst, client_ns, pol.cc,
                                              timeout=120)
        self.resp = traffic.Responder(self.srv)
        self.resp.start()
        self.ca = tcpinfo.congestion(self.srv)

    def info(self):
        return tcpinfo.info(self.srv)

    def request(self, nbytes):
        return traffic.request(self.cli, nbytes, 120)

    def close(self):
        try:
            self.cli.sendall((0).to_bytes(4, "big"))
        except OSError:
            pass
        self.resp.join(5)
        self.srv.close()
        self.cli.close()


class NginxConn:
    """An HTTP/1.1 keep-alive connection to nginx; the server side's
    tcp_info and congestion control come from sock_diag."""
    server = "nginx"

    def __init__(self, topo, pol):
        s, c = topo.pairs[0]["server_ns"], topo.pairs[0]["client_ns"]
        addr = topo.pairs[0]["server_addr"]
        t = netns.NsThread(c, traffic._connect, addr, NGINX_PORT, 0, 120)
        t.start()
        self.cli = t.join_result(120)
        self.rport = self.cli.getsockname()[1]
        self.diag = nginx.Diag(s)
        end = time.monotonic() + 10
        # connect() returns one way-delay before nginx has a full socket
        while self.diag.tcp(NGINX_PORT, self.rport) is None and \
                time.monotonic() < end:
            time.sleep(0.02)
        self.ca = self.info().get("ca")
        if self.ca != pol.cc:
            self.close()
            raise RuntimeError("nginx's connection uses %s, policy %s wants "
                               "%s" % (self.ca, pol.name, pol.cc))

    def info(self):
        i = self.diag.tcp(NGINX_PORT, self.rport)
        if i is None:
            raise RuntimeError("sock_diag: no nginx socket for port %d" %
                               self.rport)
        return i

    def request(self, nbytes):
        t0, t1, n = nginx.get(self.cli, "/%d.bin" % nbytes, 120)
        if n != nbytes:
            raise RuntimeError("nginx sent %d bytes, wanted %d" % (n, nbytes))
        return t0, t1

    def close(self):
        self.cli.close()
        self.diag.close()


def one_conn(topo, open_conn, lst_bulk, pol, rtt, comp, size_kb, think,
             reqs):
    s = topo.pairs[0]["server_ns"]
    params = policies.apply(pol, [s])
    bulk = None
    if comp:
        bs, bc = traffic.tcp_pair(lst_bulk, topo.pairs[1]["client_ns"],
                                  "cubic")
        bulk = traffic.Bulk(bs, bc)
        bulk.start()
        time.sleep(2 * rtt / 1000.0 + 1.0)   # let it fill the queue
    out = []
    conn = None
    try:
        conn = open_conn(pol)
        conn.request(WARM)
        traffic.wait_acked_by(conn.info, 10)
        drops0 = netns.bottleneck_drops(topo)
        for i in range(reqs):
            time.sleep(think)
            before = conn.info()
            t0, t1 = conn.request(size_kb * 1024)
            after = traffic.wait_acked_by(conn.info, 10)
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
            r["ca"] = conn.ca
    finally:
        if conn is not None:
            conn.close()
        if bulk:
            bulk.stop()
    return out


def _servers(ctx, g):
    """'bench' and, when it is installed and not filtered out, 'nginx'."""
    want = ctx.only.get("server", ["bench", "nginx"])
    out = [x for x in ("bench", "nginx") if x in want]
    if "nginx" in out:
        ok, why = nginx.available()
        if not ok:
            ctx.note("nginx rows NOT measured: %s" % why)
            out.remove("nginx")
        else:
            ctx.extra["nginx"] = {"version": nginx.version(),
                                  "config": nginx.CONF.strip(),
                                  "policies": list(NGINX_POLICIES)}
    return out


def _nginx_files(g):
    sizes = [k * 1024 for k in g["sizes"]] + [WARM]
    return {"%d.bin" % n: n for n in sizes}


def run(ctx):
    g = QUICK if ctx.quick else FULL
    ctx.reps = ctx.reps or 1
    pols = policies.available(ctx.only.get("policy"), log=ctx.note)
    servers = _servers(ctx, g)
    rows = []
    for rtt in g["rtts"]:
        if "rtt_ms" in ctx.only and str(rtt) not in ctx.only["rtt_ms"]:
            continue
        topo = netns.topo(senders=2, rtt=rtt, rate="%dkbit" % RATE_KBIT,
                          limit=LIMIT)
        topo.up()
        s = topo.pairs[0]["server_ns"]
        web = None
        try:
            netns.sysctl(s, "net.ipv4.tcp_no_metrics_save", 1)
            netns.sysctl(topo.pairs[1]["server_ns"],
                         "net.ipv4.tcp_no_metrics_save", 1)
            ctx.tc.append({"rtt_ms": rtt, "netem_topo": topo.args(),
                           "tc": topo.info["tc"]})
            lst = traffic.Listener(s, topo.pairs[0]["server_addr"], PORT)
            lstb = traffic.Listener(topo.pairs[1]["server_ns"],
                                    topo.pairs[1]["server_addr"], PORT)
            opener = {"bench": lambda pol: BenchConn(
                lst, topo.pairs[0]["client_ns"], pol)}
            if "nginx" in servers:
                web = nginx.Nginx(s, topo.pairs[0]["server_addr"],
                                  NGINX_PORT, _nginx_files(g)).start(topo)
                opener["nginx"] = lambda pol: NginxConn(topo, pol)
            for rep in range(ctx.reps):
                for cell in [c for c in cells(g, ctx.only)
                             if c[0] == rtt]:
                    _, comp, size, think, kind = cell
                    runs = [("bench", p) for p in order.for_rep(pols, rep)
                            if "bench" in servers]
                    if kind == "web" and "nginx" in servers:
                        runs += [("nginx", p) for p in pols
                                 if p.name in NGINX_POLICIES]
                    for server, pol in runs:
                        base = {"kind": kind, "rtt_ms": rtt, "compete": comp,
                                "size_kb": size, "think_s": think,
                                "server": server, "policy": pol.name,
                                "rep": rep}
                        try:
                            got = one_conn(topo, opener[server], lstb, pol,
                                           rtt, comp, size, think, g["reqs"])
                            rows += [dict(base, **r) for r in got]
                            ctx.log("%s rtt %d comp %d %dKB think %s %-5s "
                                    "%-14s median %.3f s rtx %d" % (
                                        kind, rtt, comp, size, think, server,
                                        pol.name,
                                        stats.median([r["seconds"]
                                                      for r in got]),
                                        sum(r["retrans"] for r in got)))
                        except (OSError, RuntimeError, TimeoutError) as e:
                            rows.append(dict(base, error="%s: %s" % (
                                type(e).__name__, e)))
                            ctx.log("%s %s failed: %s" % (server, pol.name,
                                                          e))
                    ctx.save(rows)
            lst.close()
            lstb.close()
        finally:
            if web is not None:
                web.stop(topo)
            policies.revert([s])
            topo.down()
    return rows


def _key(r):
    return (r["kind"], r["rtt_ms"], r["compete"], r["size_kb"], r["think_s"],
            r.get("server") or "bench")


def report(ctx, rows):
    rows = [r for r in rows if r.get("policy")]
    names = [p.name for p in policies.ALL]
    present = [n for n in names if any(r["policy"] == n for r in rows)]
    md = ["# keepalive: per-request latency on one persistent connection\n\n",
          "Measured inside the test VM; 20 Mbit/s, 170-packet drop-tail "
          "queue. Server `bench`: the bench's own keep-alive responder; "
          "`nginx`: Debian's nginx (keep-alive, static files, sendfile on, "
          "tcp_nodelay on) with the bench's HTTP/1.1 keep-alive client. "
          "Per policy: median / p90 / p99 request latency (s) over "
          "all requests of the cell, ×ideal of the median (one RTT + object "
          "at 20 Mbit/s), total retransmissions of the measured requests, "
          "bottleneck drops during the cell. `auto vs fastest` compares "
          "medians (goal within 10%, retransmissions no higher than "
          "cocktail-ssr); the last column compares auto with the fastest "
          "policy that retransmitted no more than cocktail-ssr (speed "
          "bought with loss is not a win); `—`: not run for that "
          "server.\n\n"]
    md += ["- %s\n" % n for n in table.notes(ctx)]
    keys = []
    for r in rows:
        if _key(r) not in keys:
            keys.append(_key(r))
    md.append("\n| case | server | RTT ms | bulk | object KB | think s | " +
              " | ".join(present) + " | fastest | auto vs fastest | "
              "auto vs fastest at rtx ≤ SSR |\n")
    md.append("|" + "---|" * (9 + len(present)) + "\n")
    for k in keys:
        sel = [r for r in rows if _key(r) == k
               and r.get("seconds") is not None]
        failed = [r for r in rows if _key(r) == k and r.get("error")]
        cellv = {}
        line = [k[0], k[5], str(k[1]), "yes" if k[2] else "no", str(k[3]),
                str(k[4])]
        for n in present:
            v = [r["seconds"] for r in sel if r["policy"] == n]
            if not v:
                line.append("failed" if any(r["policy"] == n
                                            for r in failed) else "—")
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
        line.append("%s (%s)" % (table.pct(v["auto_gap_fair"]),
                                 v["fair_winner"])
                    if v["fair_winner"] else "n/a")
        md.append("| " + " | ".join(line) + " |\n")
    errs = [r for r in rows if r.get("error")]
    if errs:
        md.append("\nFailed runs:\n\n")
        md += ["- %s %s rtt %s %s KB think %s, %s: %s\n" % (
            r["kind"], r.get("server") or "bench", r["rtt_ms"], r["size_kb"],
            r["think_s"], r["policy"], r["error"]) for r in errs]
    (ctx.outdir / "table.md").write_text("".join(md))
    groups = {}
    for r in rows:
        if r.get("seconds") is not None:
            groups.setdefault("%s %dms %dKB t%s%s" % (
                r["kind"], r["rtt_ms"], r["size_kb"], r["think_s"],
                " +bulk" if r["compete"] else ""), {}).setdefault(
                    "%s%s" % ("nginx " if r.get("server") == "nginx" else "",
                              r["policy"]), []).append(r["seconds"])
    plot.bars(ctx.outdir / "keepalive.png", "request latency after think "
              "time (median, min-max)", "seconds", groups)

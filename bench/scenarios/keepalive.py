"""keepalive: what operators run -- a keep-alive server answering objects
of 16, 64 and 256 KB to a client that waits a think time (0.5, 1, 3 s)
between requests on one connection, at 20, 100 and 200 ms RTT, with and
without a competing bulk TCP flow (CUBIC) on the bottleneck; plus the
gRPC-like case: a 20 KB message on a connection idle longer than the RTO
at 200 ms RTT.

Two servers, side by side for the same policy:
- `bench`: the bench's own keep-alive responder (cocktail_lab.traffic:
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

--jobs N: up to N cells of one RTT (BULK_JOBS with the bulk flow) run
side by side, each on a topology of its own.  The module's parameters are
global, so all cells of a batch run the same policy at the same time; the
policy order follows a Williams design (bench/lib/order.py).  Rows record
the batch's size and the VM's CPU load over it (batch_cells,
batch_cpu_busy).
"""
import time

from bench.lib import (nginx, order, parallel, plot, policies, rules,
                       stats, table)
from cocktail_lab import proc, tcpinfo, traffic
from cocktail_lab.topo import Topo, bottleneck_drops

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
# cells with a competing bulk flow that may run side by side (--jobs):
# nine 20 Mbit/s bulk flows kept the VM's two CPUs 55% busy under TCG
BULK_JOBS = 9
# --jobs of a full run: the nine web cells of a think time at once (ten
# at 1 s, with the gRPC-like cell)
FULL_JOBS = 10
# one connection: a cell, the server, the policy, the repetition (its
# rows are its requests)
RESUME_KEY = ("kind", "rtt_ms", "compete", "size_kb", "think_s", "server",
              "policy", "rep")


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
        t = proc.NsThread(c, traffic._connect, addr, NGINX_PORT, 0, 120)
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


def _kbit(a, b):
    """kbit/s between two (time, bytes received) marks."""
    return round((b[1] - a[1]) * 8 / (b[0] - a[0]) / 1000.0, 1) \
        if b[0] > a[0] else None


def one_conn(topo, open_conn, lst_bulk, pol, rtt, comp, size_kb, think,
             reqs):
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
        drops0 = bottleneck_drops(topo)
        for i in range(reqs):
            # the bulk flow's goodput over the think time, then during
            # the response (what the response cost it)
            m0 = (time.monotonic(), bulk.received) if bulk else None
            time.sleep(think)
            before = conn.info()
            m1 = (time.monotonic(), bulk.received) if bulk else None
            t0, t1 = conn.request(size_kb * 1024)
            m2 = (time.monotonic(), bulk.received) if bulk else None
            after = traffic.wait_acked_by(conn.info, 10)
            cross = {"cross": "tcp" if bulk else "none"}
            if bulk:
                cross.update(cross_tcp_kbit_before=_kbit(m0, m1),
                             cross_tcp_kbit_burst=_kbit(m1, m2))
            out.append({"req": i, "seconds": round(t1 - t0, 6), **cross,
                        "ideal_s": round(rtt / 1000.0 + size_kb * 1024 * 8 /
                                         (RATE_KBIT * 1000.0), 6),
                        "retrans": after["total_retrans"] -
                        before["total_retrans"],
                        "cwnd_before": before["snd_cwnd"],
                        "rto_ms": before["rto"] / 1000.0,
                        "srtt_ms": round(before["rtt"] / 1000.0, 1),
                        "min_rtt_ms": round(before["min_rtt"] / 1000.0, 1)})
        drops = bottleneck_drops(topo) - drops0
        for r in out:
            r["cell_drops"] = drops
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


def lanes(g, only=None, jobs=1):
    """The grid's cells in groups that run side by side, each cell on a
    topology of its own: cells of one competing-traffic setting and one
    think time, up to JOBS of them (BULK_JOBS with a bulk flow: each
    bulk flow keeps 20 Mbit/s through netem, which TCG pays for in CPU).
    A group's connections take about as long as its think time times the
    requests, whatever the RTT, so cells of one think time finish
    together and none waits long for a slower one; cells without a bulk
    flow never share the VM's CPUs with one."""
    cs = [c for c in cells(g, only)
          if "rtt_ms" not in (only or {}) or str(c[0]) in only["rtt_ms"]]
    for key in dict.fromkeys((c[1], c[3]) for c in cs):
        mine = sorted((c for c in cs if (c[1], c[3]) == key),
                      key=lambda c: (c[0], c[2], c[4]))
        width = max(1, min(jobs, BULK_JOBS) if key[0] else jobs)
        for i in range(0, len(mine), width):
            yield mine[i:i + width]


class Site:
    """One cell (rtt, compete, size, think, kind) on a topology of its
    own: the keep-alive pair 0 with the bench's listener (and nginx when
    it runs), pair 1 with the bulk flow's listener."""

    def __init__(self, ctx, cell, servers, files):
        self.cell = cell
        rtt = cell[0]
        self.web = None
        self.topo = Topo(senders=2, rtt=rtt, rate="%dkbit" % RATE_KBIT,
                         limit=LIMIT)
        self.topo.up()
        self.s = self.topo.pairs[0]["server_ns"]
        self.lst = self.lstb = None
        try:
            for ns in (self.s, self.topo.pairs[1]["server_ns"]):
                proc.sysctl(ns, "net.ipv4.tcp_no_metrics_save", 1)
            ctx.tc.append({"rtt_ms": rtt, "netem_topo": self.topo.args(),
                           "tc": self.topo.info["tc"]})
            self.lst = traffic.Listener(self.s,
                                        self.topo.pairs[0]["server_addr"],
                                        PORT)
            self.lstb = traffic.Listener(self.topo.pairs[1]["server_ns"],
                                         self.topo.pairs[1]["server_addr"],
                                         PORT)
            self.servers = [x for x in servers
                            if x == "bench" or cell[4] == "web"]
            if "nginx" in self.servers:
                self.web = nginx.Nginx(self.s,
                                       self.topo.pairs[0]["server_addr"],
                                       NGINX_PORT, files).start(self.topo)
        except BaseException:
            self.close()
            raise

    def open_conn(self, server, pol):
        if server == "nginx":
            return NginxConn(self.topo, pol)
        return BenchConn(self.lst, self.topo.pairs[0]["client_ns"], pol)

    def run(self, server, pol, reqs, base, delay):
        """One connection of POL to SERVER after DELAY seconds: its
        request rows, or one row with the error."""
        rtt, comp, size, think, kind = self.cell
        base = dict(base, kind=kind, rtt_ms=rtt, compete=comp, size_kb=size,
                    think_s=think, server=server, policy=pol.name)
        time.sleep(delay)
        try:
            got = one_conn(self.topo, lambda p: self.open_conn(server, p),
                           self.lstb, pol, rtt, comp, size, think, reqs)
            return [dict(base, **r) for r in got]
        except (OSError, RuntimeError, TimeoutError) as e:
            return [dict(base, error="%s: %s" % (type(e).__name__, e))]

    def close(self):
        if self.web is not None:
            self.web.stop(self.topo)
        for lst in (self.lst, self.lstb):
            if lst is not None:
                lst.close()
        self.topo.down()


def _batch(sites, server, pol, reqs, base):
    """POL's connection to SERVER on every site at once, one thread a
    site.  Site i starts i/n of its think time late, so that the sites'
    requests interleave instead of coinciding.  Every row carries the
    batch size, the VM's CPU load over the batch and the counter changes
    of the policy's build (`module_counters`, summed over the batch's
    connections: the counters are global)."""
    sites = [x for x in sites if server in x.servers]
    c0 = policies.counters(pol)
    out, busy = parallel.side_by_side(
        lambda i, x: x.run(server, pol, reqs, base,
                           x.cell[3] * i / len(sites)), sites)
    counters = policies.counters_since(pol, c0)
    rows = [r for got in out for r in got]
    for r in rows:
        r.update(batch_cells=len(sites), batch_cpu_busy=busy)
        if counters is not None:
            r["module_counters"] = counters
    return rows


def _log(ctx, rows):
    for k in dict.fromkeys(_key(r) for r in rows):
        mine = [r for r in rows if _key(r) == k]
        kind, rtt, comp, size, think, server = k
        good = [r["seconds"] for r in mine if r.get("seconds") is not None]
        if not good:
            ctx.log("%s rtt %d comp %d %dKB think %s %-5s %-14s failed: %s"
                    % (kind, rtt, comp, size, think, server,
                       mine[0]["policy"], mine[0].get("error")))
            continue
        ctx.log("%s rtt %d comp %d %dKB think %s %-5s %-14s median %.3f s "
                "rtx %d cpu %s" % (kind, rtt, comp, size, think, server,
                                   mine[0]["policy"], stats.median(good),
                                   sum(r["retrans"] for r in mine),
                                   mine[0]["batch_cpu_busy"]))


def run(ctx):
    g = QUICK if ctx.quick else FULL
    ctx.reps = ctx.reps or 1
    ctx.jobs = ctx.jobs or (1 if ctx.quick else FULL_JOBS)
    ctx.extra["jobs"] = ctx.jobs
    pols = policies.available(ctx.only.get("policy"), log=ctx.note)
    servers = _servers(ctx, g)
    rows = []
    all_lanes = list(lanes(g, ctx.only, ctx.jobs))

    def conns(cell, pol):
        """The servers POL's connections on CELL go to (as Site and the
        loop below choose them)."""
        return [x for x in servers if (x == "bench" or cell[4] == "web")
                and (x != "nginx" or pol.name in NGINX_POLICIES)]
    ctx.grid(ctx.reps * sum(len(conns(c, p)) for lane in all_lanes
                            for c in lane for p in pols))
    for lane in all_lanes:
        sites = parallel.build(
            lambda c: Site(ctx, c, servers, _nginx_files(g)), lane,
            Site.close)
        ctx.log("%d cell(s) side by side: %s" % (len(sites), ", ".join(
            "%s %d ms%s %d KB think %s" % (c[4], c[0], " +bulk" if c[1]
                                           else "", c[2], c[3])
            for c in lane)))
        try:
            for rep in range(ctx.reps):
                # a Williams design: every policy follows every other
                for pol in order.for_rep(pols, rep):
                    # --resume: connections whose rows are kept do not
                    # run; a batch with some runs whole (same load), and
                    # only the missing connections' rows are added
                    kept = {server: [ctx.done(**_conn_key(
                        x.cell, server, pol, rep)) for x in sites
                        if server in x.servers] for server in servers
                        if server != "nginx" or pol.name in NGINX_POLICIES}
                    if all(all(k) for k in kept.values()):
                        ctx.skipped(sum(len(k) for k in kept.values()))
                        continue
                    params = policies.apply(pol, [x.s for x in sites], jobs=4)
                    base = {"rep": rep, "params": params}
                    for server in kept:
                        ctx.skipped(sum(kept[server]))
                        if all(kept[server]):
                            continue
                        got = _batch(sites, server, pol, g["reqs"], base)
                        got = [r for r in got if not ctx.done(**r)]
                        _log(ctx, got)
                        rows += got
                        ctx.tick(len(kept[server]) - sum(kept[server]))
                ctx.save(rows)
        finally:
            policies.revert([x.s for x in sites])
            parallel.close_all(Site.close, sites)
    return rows


def _conn_key(cell, server, pol, rep):
    rtt, comp, size, think, kind = cell
    return dict(kind=kind, rtt_ms=rtt, compete=comp, size_kb=size,
                think_s=think, server=server, policy=pol.name, rep=rep)


def _key(r):
    return (r["kind"], r["rtt_ms"], r["compete"], r["size_kb"], r["think_s"],
            r.get("server") or "bench")


# the summaries' cells: one RTT row per (kind, bulk, object, think)
# table, bench server only (nginx runs two policies); a cell's
# retransmissions are the sum over its requests
GROUP = ["kind", "compete", "size_kb", "think_s"]
CELL_KW = {"retrans": "retrans", "rtx_total": True}
RULES = rules.candidates(lambda rtt_ms: rtt_ms)


def _queue_key(r):
    """A cell's pre-idle queue is taken over its think times: the queue
    before the idle period does not depend on how long the idle is."""
    return (r["kind"], r["compete"], r["size_kb"], r["rtt_ms"])


def _queue_md(ratios):
    """Markdown: the pre-idle srtt / minimum RTT per (kind, RTT, bulk,
    object), the input of the queue rule."""
    if not ratios:
        return []
    md = ["\nPre-idle srtt / minimum RTT (median over the cocktail "
          "policies' requests, from tcp_info after the think time), the "
          "queue rule's input:\n\n| case | RTT ms | bulk | object KB | "
          "srtt / min RTT |\n|---|---|---|---|---|\n"]
    for (kind, comp, size, rtt), v in sorted(
            ratios.items(), key=lambda kv: (kv[0][0] != "web", kv[0][3],
                                            kv[0][1], kv[0][2])):
        md.append("| %s | %s | %s | %s | %.2f |\n" % (
            kind, rtt, "yes" if comp else "no", size, v))
    return md


def _by_rtt_md(rows, names, head=None):
    """Markdown: per (kind, RTT, bulk), every policy's median latency / the
    ideal, as the median over the cells (object sizes, think times), and
    its retransmissions summed over them; under HEAD if given."""
    cs = table.cells(rows, GROUP, "rtt_ms", **CELL_KW)
    lines = {}
    for (g, rtt, pol), c in cs.items():
        if c["median"] is not None and c["ideal"]:
            d = lines.setdefault((g[0], rtt, g[1]), {}).setdefault(
                pol, {"r": [], "rtx": 0, "n": 0})
            d["r"].append(c["median"] / c["ideal"])
            d["rtx"] += c["rtx"] or 0
            d["n"] += 1
    present = [n for n in names if any(n in v for v in lines.values())]
    md = [head or "\n## By RTT and competing traffic (bench server)\n\n"
          "Per policy: the median over the line's cells (object sizes × "
          "think times) of median latency / ideal, and the retransmissions "
          "of all their requests.\n"]
    md += ["\n| case | RTT ms | bulk | cells | " +
          " | ".join(present) + " |\n|" + "---|" * (4 + len(present)) +
          "\n"]
    for (kind, rtt, comp) in sorted(lines, key=lambda k: (k[0] != "web",
                                                          k[1], k[2])):
        v = lines[(kind, rtt, comp)]
        ncells = max(d["n"] for d in v.values())
        md.append("| %s | %s | %s | %d | %s |\n" % (
            kind, rtt, "yes" if comp else "no", ncells, " | ".join(
                "×%s, %d rtx" % (table.fmt(stats.median(v[p]["r"])),
                                 v[p]["rtx"]) if p in v else "—"
                for p in present)))
    return md


def _cwv_md(rows):
    """Markdown: auto and keep with cwv 0, 1 (the default) and 2, over the
    bench server's cells where a cwv variant ran."""
    variants = [p.name for p in policies.CWV_VARIANTS]
    ran = {_key(r) for r in rows if r["policy"] in variants}
    if not ran:
        return []
    names = []
    for base in ("auto", "keep"):
        names += ["cocktail-%s-cwv0" % base, "cocktail-" + base,
                  "cocktail-%s-cwv2" % base]
    sel = [r for r in rows if _key(r) in ran and r["policy"] in names]
    return _by_rtt_md(sel, names, "\n## Congestion window validation "
                      "(bench server)\n\n`auto` and `keep` with `cwv=0` "
                      "(off), `cwv=1` (RFC 2861, the default; no suffix) and "
                      "`cwv=2` (RFC 7661), over the cells where the variants "
                      "ran (%d). Per policy: the median over the line's cells "
                      "of median latency / ideal, and the retransmissions of "
                      "all their requests. When the variants ran in a later "
                      "run than the default (`--append`), the comparison "
                      "spans two runs (meta.json).\n" % len(ran))


def _summaries_md(rows, names):
    """Markdown: auto against the goal, every policy over the grid, and
    the rules auto could follow, over the bench server's cells."""
    mine = [r for r in rows if (r.get("server") or "bench") == "bench"]
    if not any(r.get("policy") == "cocktail-auto" for r in mine):
        return []
    head, lines = table.auto_summary(mine, GROUP, "rtt_ms", names,
                                     cell_kw=CELL_KW)
    md = _by_rtt_md(mine, names)
    md += ["\n## auto vs the fastest policy (bench server)\n\n%s (goal: "
          "within 10%% of the fastest median, retransmissions no higher "
          "than cocktail-ssr's). Cells are named kind/bulk/object KB/think "
          "s.\n\n" % head]
    md += [ln + "\n" for ln in lines]
    md.append("\n## Every policy over the grid (bench server)\n\nOver "
              "every cell: in how many the policy had the fastest median "
              "request latency, the median over cells of its median / the "
              "fastest policy's and / the ideal, in how many cells its "
              "retransmissions were no higher than cocktail-ssr's, and its "
              "retransmissions summed over all requests.\n")
    md += table.policy_summary_md("all cells", table.policy_summary(
        mine, GROUP, "rtt_ms", names, cell_kw=CELL_KW), "rtx")
    md.append("\n## Rules auto could follow, scored on this grid\n\n"
              "Each rule is scored with the measured requests of the policy "
              "it would pick in a cell, against the cell's fastest policy "
              "whose retransmissions are no higher than cocktail-ssr's. "
              "Goal: within 10% of it with retransmissions no higher than "
              "SSR's. Only the rows \"as measured\" are policies that ran "
              "as such; the others reuse the requests of the policies they "
              "pick. The queue rules (where srtt was recorded), at the "
              "thresholds `queue_pct` could take, take a "
              "cell's queue from the cocktail policies' requests, over "
              "its think times (the table below); the module's "
              "`restart=queue` decides per restart.\n")
    ratios = rules.queue_ratios(mine, _queue_key)
    mine_rules = dict(RULES)
    if ratios:
        rules.add_queue_sweep(mine_rules, lambda ratio: rules.queue_rule(
            ratios, lambda g, rtt: (g[0], g[1], g[2], rtt), ratio=ratio))
    extra = rules.add_measured_queue(mine, mine_rules)
    md += rules.markdown("bench server", table.rule_scores(
        mine, GROUP, "rtt_ms", names, mine_rules, cell_kw=CELL_KW,
        extra=extra))
    md += _queue_md(ratios)
    return md


def report(ctx, rows):
    rows = [r for r in rows if r.get("policy")]
    # the grid's policies; cwv variants get their own section
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
    md += _summaries_md(rows, present)
    md += _cwv_md([r for r in rows if (r.get("server") or "bench") ==
                   "bench" and r.get("seconds") is not None])
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

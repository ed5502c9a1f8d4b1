"""fleet: the network as a whole -- many keep-alive connections of one
policy share one bottleneck and restart after idle periods, as they would
if every host ran that policy (Chan 2001, section 4.2: what aggressive
restarts do to the network).

Topology: scripts/netem-topo --senders SERVERS (dumbbell): SERVERS server
hosts s0.. behind one router, their clients c0.. behind the other,
20 Mbit/s, a drop-tail queue of one BDP at 100 ms (170 packets).  CONNS
connections, spread round-robin over the server hosts, each a bench
keep-alive responder (cocktail_lab.traffic.Responder) and a client
thread.  Per connection: a WARM-byte warm-up response (all connections
at once), then REQS requests of an object after an idle period:

- `sync`: the idle periods start together -- every connection waits
  until all have their previous response, then all wait THINK seconds
  and request at the same moment (a page load, a cron job, a push to
  every client);
- `random`: each connection waits THINK x U(0.5, 1.5) after its own
  response, independently (seeded per connection and repetition).

THINK is longer than the RTO, so every request is a restart after idle.
Per request: latency (request write to the last response byte, at the
client) and the server side's retransmissions (tcp_info).  Per cell
(RTT, mode, object): the requests' p50 and p95 latency over every
connection, the retransmissions summed over them, the bottleneck queue's
drops over the requests, and Jain's fairness index over the connections'
goodput while fetching (object bytes / the sum of their latencies).

What it shows and what it does not: it is one bottleneck shared by one
policy, the bench's stand-in for that policy deployed widely -- the
losses and queueing the restarts of many connections impose on each
other.  It does not show a mix of policies, paths of different RTTs or
rates, more flows than the VM can run (tens, not thousands), or traffic
that is not keep-alive restarts.
"""
import random
import threading
import time

from bench.lib import order, plot, policies, stats, table
from bench.scenarios.keepalive import BenchConn
from cocktail_lab import proc, tcpinfo, traffic
from cocktail_lab.topo import Topo, bottleneck_drops

RATE_KBIT = 20000
LIMIT = 170
PORT = 5005
WARM = 256 * 1024
FULL = dict(rtts=[20, 100, 200], modes=["sync", "random"], sizes=[64],
            conns=24, servers=4, reqs=10, think=1.5)
QUICK = dict(rtts=[100], modes=["sync", "random"], sizes=[64], conns=20,
             servers=4, reqs=3, think=1.5)
RESUME_KEY = ("rtt_ms", "mode", "size_kb", "policy", "rep")
# the policies compared by default: the baselines and the module's default
POLICIES = ("linux-default", "cubic-nossai", "bbr", "cocktail-default")


def grid(quick=False, only=None):
    """The grid to run: QUICK or FULL, with `--only servers=N` spreading
    the connections over N server hosts instead (1..32, at most one per
    connection).  With one connection per host, nothing the module keeps
    per host (the ensemble table) sees another connection: each restart is
    decided as on a host of its own behind the shared bottleneck."""
    g = dict(QUICK if quick else FULL)
    want = (only or {}).get("servers")
    if want is None:
        return g
    if len(want) != 1 or not str(want[0]).isdigit() or \
            not 1 <= int(want[0]) <= min(32, g["conns"]):
        raise SystemExit("fleet: servers= takes one number of server "
                         "hosts, 1..%d (the connections), got %s" % (
                             min(32, g["conns"]), ",".join(map(str, want))))
    g["servers"] = int(want[0])
    return g


def jain(values):
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when every value
    is equal, 1/n when one value has everything; None without values."""
    v = stats.clean(values)
    if not v or not any(v):
        return None
    return sum(v) ** 2 / (len(v) * sum(x * x for x in v))


def cells(g, only=None):
    only = only or {}

    def keep(k, v):
        return k not in only or str(v) in only[k]
    for rtt in g["rtts"]:
        for mode in g["modes"]:
            for size in g["sizes"]:
                if keep("rtt_ms", rtt) and keep("mode", mode) and \
                        keep("size_kb", size):
                    yield rtt, mode, size


class Fleet:
    """The topology of one RTT with a listener on every server host."""

    def __init__(self, ctx, rtt, servers):
        self.topo = Topo(senders=servers, rtt=rtt, rate="%dkbit" % RATE_KBIT,
                         limit=LIMIT)
        self.topo.up()
        self.lsts = []
        try:
            self.servers = [q["server_ns"] for q in self.topo.pairs]
            for ns in self.servers:
                proc.sysctl(ns, "net.ipv4.tcp_no_metrics_save", 1)
            ctx.tc.append({"rtt_ms": rtt, "netem_topo": self.topo.args(),
                           "tc": self.topo.info["tc"]})
            self.lsts = [traffic.Listener(q["server_ns"], q["server_addr"],
                                          PORT) for q in self.topo.pairs]
        except BaseException:
            self.close()
            raise

    def close(self):
        for lst in self.lsts:
            lst.close()
        self.topo.down()


class Conn(BenchConn):
    """Connection I of the fleet, to server I modulo the fleet's size."""

    def __init__(self, fleet, i, pol):
        pair = i % len(fleet.lsts)
        super().__init__(fleet.lsts[pair],
                         fleet.topo.pairs[pair]["client_ns"], pol)
        self.i, self.server = i, pair


def one_cell(fleet, pol, g, rtt, mode, size_kb, seed):
    """CONNS connections of POL through FLEET's bottleneck: their request
    rows (conn, server, req, seconds, retrans) and the cell's drops."""
    n = g["conns"]
    conns = []
    try:
        for i in range(n):
            conns.append(Conn(fleet, i, pol))
        ca = {tcpinfo.congestion(c.srv) for c in conns}
        if ca != {pol.cc}:
            raise RuntimeError("connections run %s, policy %s wants %s" % (
                ",".join(sorted(ca)), pol.name, pol.cc))
        # every warm-up acked (then the drops are read), go, and in sync
        # mode every previous response in before the next idle period
        warmed = threading.Barrier(n + 1)
        go = threading.Barrier(n + 1)
        turn = threading.Barrier(n)
        out = [[] for _ in range(n)]
        errors = []

        def client(c):
            rng = random.Random(seed * 1000 + c.i)
            try:
                c.request(WARM)
                traffic.wait_acked_by(c.info, 30)
                warmed.wait(300)
                go.wait(300)
                for req in range(g["reqs"]):
                    if mode == "sync":
                        turn.wait(300)      # every previous response in
                        time.sleep(g["think"])
                    else:
                        time.sleep(g["think"] * rng.uniform(0.5, 1.5))
                    before = c.info()
                    t0, t1 = c.request(size_kb * 1024)
                    after = traffic.wait_acked_by(c.info, 30)
                    out[c.i].append({
                        "conn": c.i, "server": c.server, "req": req,
                        "seconds": round(t1 - t0, 6),
                        "retrans": after["total_retrans"] -
                        before["total_retrans"],
                        "rto_ms": before["rto"] / 1000.0,
                        "cwnd_before": before["snd_cwnd"],
                        "t_start": t0})
            except (OSError, RuntimeError, TimeoutError,
                    threading.BrokenBarrierError) as e:
                errors.append("conn %d: %s: %s" % (c.i, type(e).__name__,
                                                   e))
                for b in (warmed, go, turn):
                    b.abort()

        threads = [threading.Thread(target=client, args=(c,), daemon=True)
                   for c in conns]
        for th in threads:
            th.start()
        # the drops over the requests: counted once every warm-up is
        # acked, before any request
        drops0 = None
        try:
            warmed.wait(600)
            drops0 = bottleneck_drops(fleet.topo)
            go.wait(60)
        except threading.BrokenBarrierError:
            pass
        for th in threads:
            th.join(600)
        if errors or drops0 is None:
            raise RuntimeError("; ".join(errors[:3]) or "barrier broken")
        drops = bottleneck_drops(fleet.topo) - drops0
        rows = [r for o in out for r in o]
        t_first = min(r["t_start"] for r in rows)
        for r in rows:
            r["t_start"] = round(r["t_start"] - t_first, 3)
            r["cell_drops"] = drops
        return rows
    finally:
        for c in conns:
            c.close()


def run(ctx):
    g = grid(ctx.quick, ctx.only)
    ctx.reps = ctx.reps or (1 if ctx.quick else 3)
    names = ctx.only.get("policy") or list(POLICIES)
    pols = policies.available(names, log=ctx.note)
    if not pols:
        raise SystemExit("fleet: no policy can run here")
    ctx.extra.update(policies=[p.name for p in pols],
                     grid={k: v for k, v in g.items()})
    cs = list(cells(g, ctx.only))
    ctx.grid(ctx.reps * len(pols) * len(cs))
    rows = []
    for rtt in dict.fromkeys(c[0] for c in cs):
        mine = [c for c in cs if c[0] == rtt]
        if all(ctx.done(rtt_ms=rtt, mode=m, size_kb=s, policy=p.name,
                        rep=r) for _, m, s in mine for p in pols
               for r in range(ctx.reps)):
            ctx.skipped(len(mine) * len(pols) * ctx.reps)
            continue
        fleet = Fleet(ctx, rtt, g["servers"])
        try:
            for rep in range(ctx.reps):
                for pol in order.for_rep(pols, rep):
                    todo = [c for c in mine if not ctx.skip(
                        rtt_ms=rtt, mode=c[1], size_kb=c[2], policy=pol.name,
                        rep=rep)]
                    if not todo:
                        continue
                    params = policies.apply(pol, fleet.servers, jobs=4)
                    for _, mode, size in todo:
                        base = {"rtt_ms": rtt, "mode": mode,
                                "size_kb": size, "policy": pol.name,
                                "rep": rep, "params": params,
                                "conns": g["conns"],
                                "servers": g["servers"],
                                "think_s": g["think"],
                                "ideal_s": round(rtt / 1000.0 + size * 1024 *
                                                 8 / (RATE_KBIT * 1000.0),
                                                 6)}
                        t = time.monotonic()
                        c0 = policies.counters(pol)
                        try:
                            got = one_cell(fleet, pol, g, rtt, mode, size,
                                           rep)
                            got = [dict(base, **r) for r in got]
                            # the cell's counter changes (all its
                            # connections: the counters are global)
                            cnt = policies.counters_since(pol, c0)
                            if cnt is not None:
                                for r in got:
                                    r["module_counters"] = cnt
                        except (OSError, RuntimeError, TimeoutError) as e:
                            got = [dict(base, error="%s: %s" % (
                                type(e).__name__, e))]
                        rows += got
                        ctx.tick()
                        lat = [r["seconds"] for r in got
                               if r.get("seconds") is not None]
                        ctx.log("rtt %d %-6s %dKB %-16s p50 %s p95 %s rtx %s "
                                "drops %s wall %.0f s%s" % (
                                    rtt, mode, size, pol.name,
                                    table.fmt(stats.median(lat)),
                                    table.fmt(stats.percentile(lat, 95)),
                                    sum(r.get("retrans", 0) for r in got),
                                    got[0].get("cell_drops"),
                                    time.monotonic() - t,
                                    "" if lat else " FAILED: %s" %
                                    got[0].get("error")))
                    ctx.save(rows)
        finally:
            policies.revert(fleet.servers)
            fleet.close()
    return rows


def summary(rows):
    """{(rtt, mode, size): {policy: {p50, p95, rtx, drops, jain, n,
    conns}}}: per cell and policy, over every repetition (drops summed
    over repetitions, one count per repetition)."""
    acc = {}
    for r in rows:
        if r.get("seconds") is None:
            continue
        k = (r["rtt_ms"], r["mode"], r["size_kb"])
        a = acc.setdefault(k, {}).setdefault(r["policy"], {
            "lat": [], "rtx": 0, "drops": {}, "conn": {}})
        a["lat"].append(r["seconds"])
        a["rtx"] += r["retrans"]
        a["drops"][r["rep"]] = r["cell_drops"]
        c = a["conn"].setdefault((r["rep"], r["conn"]), [0, 0.0])
        c[0] += r["size_kb"] * 1024
        c[1] += r["seconds"]
    out = {}
    for k, pols in acc.items():
        for p, a in pols.items():
            out.setdefault(k, {})[p] = {
                "p50": stats.median(a["lat"]),
                "p95": stats.percentile(a["lat"], 95),
                "rtx": a["rtx"], "drops": sum(a["drops"].values()),
                "jain": jain([b / s for b, s in a["conn"].values() if s]),
                "n": len(a["lat"]), "conns": len(a["conn"])}
    return out


def spread(rows):
    """How the rows' connections sat on the server hosts, in words."""
    got = sorted({(r["conns"], r["servers"]) for r in rows
                  if r.get("conns") and r.get("servers")})
    if not got:
        return "the connections spread over the server hosts"
    return "; ".join("%d connections over %d server host%s" % (
        c, n, "" if n == 1 else "s") for c, n in got)


def report(ctx, rows):
    rows = [r for r in rows if r.get("policy")]
    s = summary(rows)
    present = [p for p in list(POLICIES) + [q.name for q in policies.KNOWN]
               if any(r["policy"] == p for r in rows)]
    present = list(dict.fromkeys(present))
    md = ["# fleet: many keep-alive connections of one policy on one "
          "bottleneck\n\n",
          "Measured inside the test VM; 20 Mbit/s, 170-packet drop-tail "
          "queue, %s. Per cell "
          "and policy, over every connection's requests (and every "
          "repetition): p50 / p95 request latency (s), retransmissions "
          "(sum), drops at the bottleneck queue (sum), Jain's fairness over "
          "the connections' goodput while fetching. Goal for the module's "
          "default: p95 and losses (retransmissions) no worse than "
          "`linux-default`'s.\n\n" % spread(rows)]
    md += ["- %s\n" % n for n in table.notes(ctx)]
    errs = [r for r in rows if r.get("error")]
    if errs:
        md.append("\n%d cells failed: %s\n" % (len(errs), "; ".join(
            sorted({str(r["error"])[:100] for r in errs}))))
    md.append("\n| RTT ms | idle periods | object KB | " +
              " | ".join(present) + " | default vs linux-default |\n|" +
              "---|" * (4 + len(present)) + "\n")
    for k in sorted(s):
        v = s[k]
        line = [str(k[0]), k[1], str(k[2])]
        for p in present:
            c = v.get(p)
            line.append("—" if c is None else
                        "%s / %s<br>%d rtx, %d drops<br>Jain %s<br>%d "
                        "conns, %d requests" % (
                            table.fmt(c["p50"]), table.fmt(c["p95"]),
                            c["rtx"], c["drops"], table.fmt(c["jain"]),
                            c["conns"], c["n"]))
        d, b = v.get("cocktail-default"), v.get("linux-default")
        if d and b:
            ok = d["p95"] <= b["p95"] and d["rtx"] <= b["rtx"]
            line.append("p95 ×%.2f, rtx %d vs %d: %s" % (
                d["p95"] / b["p95"], d["rtx"], b["rtx"],
                "goal met" if ok else "goal missed"))
        else:
            line.append("n/a")
        md.append("| " + " | ".join(line) + " |\n")
    (ctx.outdir / "table.md").write_text("".join(md))
    groups = {}
    for r in rows:
        if r.get("seconds") is not None:
            groups.setdefault("%d ms %s %dKB" % (
                r["rtt_ms"], r["mode"], r["size_kb"]), {}).setdefault(
                    r["policy"], []).append(r["seconds"])
    plot.bars(ctx.outdir / "fleet.png", "request latency, every connection "
              "(median, min-max)", "seconds", groups)

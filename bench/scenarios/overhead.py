"""overhead: CPU cost of the modules.  iperf3 throughput over an unshaped
path (scripts/netem-topo --rtt 0 --rate 100gbit: the netem qdiscs stay but
neither delay nor limit anything), CPU-bound inside the TCG VM: reno vs
cubic vs bbr vs cocktail (each restart policy), and cubic with
tcp_oooprobe loaded vs not.  Runs alternate (a Williams order per round, bench/lib/order.py);
ratio = median throughput / reno's median (oooprobe: / cubic without it).
"""
import json
import time

from bench.lib import order, plot, policies, stats, table
from cocktail_lab import modparams, proc
from cocktail_lab.topo import Topo

FULL = dict(rounds=5, secs=5)
QUICK = dict(rounds=1, secs=2)
PORT = 5201
RESUME_KEY = ("variant", "round")
OOO_KO = policies.KMOD / "tcp_oooprobe.ko"


def iperf(topo, cc, secs):
    # --forceflush: iperf3 block-buffers its stdout on a pipe otherwise
    try:
        srv = topo.start(topo.server, ["iperf3", "-s", "-1", "--forceflush",
                                       "-p", str(PORT)],
                         ready=r"Server listening", timeout=60)
    except (RuntimeError, TimeoutError):
        for b in list(topo.procs):       # a half-started server: stop it
            topo.stop(b)
        raise
    try:
        p = topo.run(topo.client, ["iperf3", "-c", topo.server_addr, "-p",
                                   str(PORT), "-t", str(secs), "-C", cc, "-J"],
                     timeout=secs + 120)
    finally:
        topo.stop(srv)
    j = json.loads(p.stdout)
    end = j["end"]
    return {"mbit_s": round(end["sum_received"]["bits_per_second"] / 1e6, 3),
            "retrans": end["sum_sent"].get("retransmits"),
            "cpu_sender": round(end["cpu_utilization_percent"]["host_total"],
                                1),
            "cpu_receiver": round(
                end["cpu_utilization_percent"]["remote_total"], 1)}


def ooo_loaded():
    return modparams.loaded(modparams.OOOPROBE)


def run(ctx):
    g = QUICK if ctx.quick else FULL
    ctx.reps = ctx.reps or g["rounds"]
    pols = [p for p in policies.available(ctx.only.get("policy"),
                                          log=ctx.note)
            if p.name != "cubic-nossai"]      # same socket path as cubic
    reno = policies.Policy("reno", "reno", 1, "Reno")
    variants = [(reno, 0)] + [(p, 0) for p in pols]
    can_ooo = OOO_KO.exists() and not ooo_loaded()
    if can_ooo:
        variants.append((policies.BY_NAME["linux-default"], 1))
    else:
        ctx.note("tcp_oooprobe variant skipped: %s" % (
            "%s not built" % OOO_KO if not OOO_KO.exists()
            else "tcp_oooprobe already loaded by someone else"))
    rows = []
    ctx.grid(ctx.reps * len(variants))
    topo = Topo(rtt=0, rate="100gbit", limit=10000)
    topo.up()
    try:
        ctx.tc.append({"netem_topo": topo.args(), "tc": topo.info["tc"]})
        for rnd in range(ctx.reps):
            for pol, ooo in order.for_rep(variants, rnd):
                name = pol.name + ("+oooprobe" if ooo else "")
                if ctx.skip(variant=name, round=rnd):
                    continue
                row = {"variant": name, "policy": pol.name, "oooprobe": ooo,
                       "round": rnd, "cc": pol.cc}
                try:
                    if pol.name != "reno":
                        row["params"] = policies.apply(pol, [topo.server])
                    if ooo:
                        proc.sh("insmod %s" % OOO_KO)
                    row.update(iperf(topo, pol.cc, g["secs"]))
                except (OSError, RuntimeError, ValueError, KeyError) as e:
                    row["error"] = "%s: %s" % (type(e).__name__, e)
                finally:
                    if ooo and ooo_loaded():
                        proc.sh("rmmod tcp_oooprobe", check=False)
                rows.append(row)
                ctx.log("%-24s %s Mbit/s" % (name, row.get("mbit_s")))
                ctx.tick()
                time.sleep(0.5)
            ctx.save(rows)
    finally:
        policies.revert([topo.server])
        topo.down()
    return rows


def report(ctx, rows):
    rows = [r for r in rows if r.get("variant")]
    names = []
    for r in rows:
        if r["variant"] not in names:
            names.append(r["variant"])
    med = {n: stats.median([r.get("mbit_s") for r in rows
                            if r["variant"] == n]) for n in names}
    md = ["# overhead: iperf3 throughput, CPU-bound, no shaping\n\n",
          "Measured inside the TCG VM (so absolute numbers are small and "
          "noisy; compare ratios). Median (min–max) Mbit/s over alternating "
          "rounds; ratio to reno (the `+oooprobe` row: to cubic without "
          "the probe).\n\n"]
    md += ["- %s\n" % n for n in ctx.notes]
    md.append("\n| variant | Mbit/s | ratio | sender CPU % | retrans |\n"
              "|---|---|---|---|---|\n")
    for n in names:
        sel = [r for r in rows if r["variant"] == n and r.get("mbit_s")]
        s = stats.summarize([r["mbit_s"] for r in sel])
        ref = med.get("linux-default") if n.endswith("+oooprobe") else \
            med.get("reno")
        md.append("| %s | %s | %s | %s | %s |\n" % (
            n, table.fmt_range(s),
            "%.3f" % (s["median"] / ref) if ref and s["median"] else "n/a",
            table.fmt(stats.median([r["cpu_sender"] for r in sel])),
            table.fmt(stats.median([r["retrans"] for r in sel]))))
    (ctx.outdir / "table.md").write_text("".join(md))
    plot.bars(ctx.outdir / "overhead.png", "iperf3 throughput (TCG VM)",
              "Mbit/s", {"throughput": {n: [r.get("mbit_s") for r in rows
                                            if r["variant"] == n]
                                        for n in names}})

"""demo (`make demo`): a restart after idle on two paths, the module's
default side by side with the ideal and every baseline an operator would
pick instead.

Both paths are one link: 200 ms RTT, 10 Mbit/s, a drop-tail queue of 15
packets (shallow: a window sent at once overflows it), on the restart
grid's dumbbell (bench/scenarios/restart.py, netem-topo --senders 4).
One run is restart.one_run's: a new connection sends 1000 segments
(window-limited warm-up) and waits for the last ACK, idles 1.5 RTO, then
writes a burst of 100 segments; time = the receiver's last byte minus
the sender's write.
  quiet       nothing else on the link: after the idle period the path is
              what it was before
  competitor  a CUBIC bulk flow starts through the same bottleneck when
              the idle period begins
Policies (bench/lib/policies.py): linux-default (CUBIC,
tcp_slow_start_after_idle=1), cubic-nossai (0), bbr, and
cocktail-default (the module, every parameter at its default).  5
repetitions (--quick: 1), the policy order a Williams design per
repetition; the two paths run side by side, each on its own topology,
the same policy at the same moment (the module's parameters are global).

Per path the table has the median time (min-max), x the ideal (one-way
delay + the burst's bytes on the wire at the rate it may use: the link's,
or half of it beside the bulk flow), x Linux's default, the burst's
retransmissions, what the competitor lost (its goodput during the burst
against before, in segments) and the harm (the two added:
bench/lib/scorecard.py's), and the scorecard's verdict for the default:
won (within 5% of the fastest baseline, no more harm than any), dominated
(a baseline more than 5% faster with no more harm), or neither.
flight-<path>.png: the burst's segments against time, one series per
policy, from repetition 0's capture at the router (toward the sender).

Options (bench/run demo ...):
  --quick                  1 repetition (default 5; --reps N)
  --only path=quiet        the paths (quiet, competitor)
  --only policy=NAME,...   the policies, in this order (any name of
                           bench/lib/policies.py)

Results: runs.csv (a row per run: restart.one_run's columns with path,
policy, rep), flight.csv (repetition 0's burst: path, policy, seconds
since its first segment, segment, retransmitted), table.md, demo.png,
flight-<path>.png, meta.json.
"""
import csv

from bench.lib import only as check, order, parallel, plot, policies, \
    scorecard as sc, stats, table
from bench.scenarios import restart
from cocktail_lab import modparams
from cocktail_lab.capture import Capture, read_pcap, seq_points
from cocktail_lab.topo import REPO

# the link (restart.one_run's profile keys): 10 Mbit/s, a 15-packet
# queue, no window clamp, timestamps on (Linux's default)
PROFILE = dict(rate_kbit=10000, queue_pkts=15, clamp_segs=0, timestamps=1,
               cross_kbit=0)
DELAY_MS = 100                 # one way: a 200 ms RTT
BURST = 100                    # segments, within one BDP (about 165)
# path -> the cross traffic that starts when the idle period begins
PATHS = {"quiet": "none", "competitor": "tcp"}
POLICIES = ["linux-default", "cubic-nossai", "bbr", "cocktail-default"]
FULL_REPS, QUICK_REPS = 5, 1
RESUME_KEY = ("path", "policy", "rep")
FLIGHT_FIELDS = ["path", "policy", "seconds", "segment", "retransmitted"]


def chosen(only):
    """The paths --only asks for, in PATHS' order."""
    check.keys("demo", only, ("path", "policy"))
    names = only.get("path") or list(PATHS)
    check.values("demo", "path", names, list(PATHS))
    return [n for n in PATHS if n in names]


def read_flights(outdir):
    """{(path, policy): [(seconds, segment, retransmitted)]} from
    flight.csv, empty without one."""
    out = {}
    try:
        rows = table.read_csv(outdir / "flight.csv")
    except FileNotFoundError:
        return out
    for r in rows:
        out.setdefault((r["path"], r["policy"]), []).append(
            (r["seconds"], r["segment"], bool(r["retransmitted"])))
    return out


def write_flights(outdir, flights):
    table.write_csv(outdir / "flight.csv", [
        {"path": path, "policy": pol, "seconds": round(t, 6),
         "segment": round(s, 3), "retransmitted": int(rtx)}
        for (path, pol), pts in flights.items() for t, s, rtx in pts],
        FLIGHT_FIELDS)


def one(cell, path, pol, params, base, keep):
    """One run of POL on CELL (PATH's topology); with KEEP, captured at
    the router and the burst's segments returned beside the row."""
    base = dict(base, path=path)
    if not keep:
        return cell.run(pol, BURST, params, base, PATHS[path]), []
    pcap = REPO / "build" / "bench" / ("demo-%s-%s.pcap" % (path, pol.name))
    with Capture(cell.topo.capture_ns, cell.topo.capture_dev, pcap,
                 "tcp port %d" % restart.PORT) as cap:
        row = cell.run(pol, BURST, params, base, PATHS[path])
    row["capture_dropped"] = cap.dropped
    if row.get("t_write") is None:
        return row, []
    return row, seq_points(read_pcap(str(pcap)),
                           cell.topo.pairs[0]["server_addr"], restart.PORT,
                           row["mss"], after=row["t_write"] - 0.001)


def run(ctx):
    paths = chosen(ctx.only)
    ctx.reps = ctx.reps or (QUICK_REPS if ctx.quick else FULL_REPS)
    pols = policies.available(ctx.only.get("policy") or POLICIES,
                              log=ctx.note)
    if not pols:
        raise SystemExit("demo: no policy can run here")
    ctx.extra.update({"profile": PROFILE, "delay_ms": DELAY_MS,
                      "burst": BURST, "warm_segs": restart.WARM_SEGS,
                      "idle_rto": restart.IDLE_RTO,
                      "paths": {p: PATHS[p] for p in paths},
                      "policies": [p.name for p in pols],
                      "cocktail_params_at_start": modparams.get_params()})
    ctx.grid(ctx.reps * len(pols) * len(paths))
    flights = read_flights(ctx.outdir) if ctx.old else {}
    cells = parallel.build(
        lambda path: restart.Cell(ctx, "demo", "droptail", DELAY_MS, [BURST],
                                  [PATHS[path]], p=PROFILE),
        paths, restart.Cell.close)
    rows = []
    s1s = [c.s1 for c in cells]
    try:
        for rep in range(ctx.reps):
            for pol in order.for_rep(pols, rep):
                todo = [(path, c) for path, c in zip(paths, cells)
                        if not ctx.skip(path=path, policy=pol.name, rep=rep)]
                if not todo:
                    continue
                params = policies.apply(pol, s1s, jobs=2)
                base = {"policy": pol.name, "rep": rep}
                got, busy = parallel.side_by_side(
                    lambda i, pc: one(pc[1], pc[0], pol, params, base,
                                      rep == 0), todo)
                for (path, _), (row, pts) in zip(todo, got):
                    row["batch_cpu_busy"] = busy
                    rows.append(row)
                    if pts:
                        flights[(path, pol.name)] = pts
                    ctx.tick()
                    ctx.log("%-10s %-16s rep %d: %s s (ideal %s) burst "
                            "retrans %s%s" % (
                                path, pol.name, rep, row.get("seconds"),
                                row.get("ideal_s"), row.get("burst_retrans"),
                                "" if row.get("error") is None
                                else " error: " + row["error"]))
                ctx.save(rows)
                write_flights(ctx.outdir, flights)
    finally:
        policies.revert(s1s)
        parallel.close_all(restart.Cell.close, cells)
    return rows


def path_cells(rows, path):
    """{policy: scorecard cell values} of PATH's rows, POLICIES' order
    first, then any other policy in run order."""
    mine = [r for r in rows if r.get("path") == path]
    ran = list(dict.fromkeys(r["policy"] for r in mine))
    names = [p for p in POLICIES if p in ran] + [p for p in ran
                                                  if p not in POLICIES]
    return {pol: sc.cell_values([r for r in mine if r["policy"] == pol],
                                "burst_retrans", restart.cross_of)
            for pol in names}


def verdict_text(cells):
    """The scorecard's verdict for cocktail-default in words."""
    v = sc.classify(cells)
    if v["status"] == "incomplete":
        return "not every baseline and the default ran: no verdict"
    ratio = "%.2fx the fastest baseline's time (%s)" % (v["ratio"],
                                                         v["fastest"])
    if v["status"] == "won":
        return "**won**: %s, no more harm than any baseline" % ratio
    if v["status"] == "dominated":
        return "**dominated** by %s: more than 5%% faster with no more " \
            "harm (one-sided Mann–Whitney test over the repetitions: %s); " \
            "%s" % (", ".join(v["dominators"]), ", ".join(
                "%s p %s" % (b, "n/a" if v["p"].get(b) is None else
                             "%.3f" % v["p"][b]) for b in v["dominators"]),
                    ratio)
    return "neither won nor dominated: %s" % ratio


def path_md(rows, path):
    """One path's section of table.md."""
    mine = [r for r in rows if r.get("path") == path and
            r.get("seconds") is not None]
    if not mine:
        return ""
    cells = path_cells(mine, path)
    base = cells.get(policies.BASELINE)
    md = ["## %s: %s\n\n" % (path, {
        "none": "nothing else on the link",
        "tcp": "a CUBIC bulk flow starts during the idle period"}[
            PATHS[path]]),
        "| policy | time, s: median (min–max) | × ideal | × Linux default "
        "| burst retransmissions (mean) | competitor's loss, segments "
        "(mean) | harm, segments (mean) | competitor's retransmissions "
        "during the burst (mean) |\n|---|---|---|---|---|---|---|---|\n"]
    def f2(x):
        return "n/a" if x is None else "%.2f" % x

    def f1(x):
        return "n/a" if x is None else "%.1f" % x

    for pol, c in cells.items():
        rs = [r for r in mine if r["policy"] == pol]
        secs = stats.summarize([r["seconds"] for r in rs])
        cross = [sc.cross_harm(r, restart.cross_of(r)) for r in rs]
        md.append("| %s | %.3f (%.3f–%.3f) | %s | %s | %s | %s | %s | %s "
                  "|\n"
                  % (pol, secs["median"], secs["min"], secs["max"],
                     f2(c["time"] / c["ideal"]) if c["ideal"] else "n/a",
                     f2(c["time"] / base["time"]) if base else "n/a",
                     f1(stats.mean([r["burst_retrans"] for r in rs])),
                     "–" if PATHS[path] == "none" else f1(stats.mean(cross)),
                     f1(c["harm"]), "–" if PATHS[path] == "none" else
                     f1(stats.mean([r.get("cross_tcp_retrans")
                                    for r in rs]))))
    md.append("\nIdeal %.3f s. cocktail-default: %s.\n\n" % (
        stats.median(r["ideal_s"] for r in mine), verdict_text(cells)))
    return "".join(md)


def write_tables(outdir, rows):
    """table.md, demo.png and flight-<path>.png in OUTDIR; returns the
    markdown."""
    rows = [r for r in rows if r.get("path")]
    reps = max((int(r["rep"]) for r in rows), default=0) + 1
    md = ["# make demo (measured)\n\n",
          "A burst of %d segments after 1.5 RTO idle (warm-up %d segments) "
          "on a %d ms RTT, %g Mbit/s link with a %d-packet drop-tail "
          "queue; repetitions per policy and path: %d, interleaved. Harm = "
          "the burst's retransmissions + what the competitor lost (its "
          "goodput during the burst against before, in segments: every "
          "policy's burst takes about its own size from it, what differs "
          "is the rest; at this RTT the bulk flow is still in slow start "
          "when the burst begins, so that loss often reads 0, and its "
          "retransmissions during the burst are shown beside it).\n\n" % (
              BURST, restart.WARM_SEGS, 2 * DELAY_MS,
              PROFILE["rate_kbit"] / 1000.0, PROFILE["queue_pkts"], reps)]
    md += [path_md(rows, p) for p in PATHS]
    text = "".join(md)
    (outdir / "table.md").write_text(text)
    groups = {}
    for p in PATHS:
        for r in rows:
            if r.get("path") == p and r.get("ratio_ideal") is not None:
                groups.setdefault(p, {}).setdefault(r["policy"], []).append(
                    r["ratio_ideal"])
    if groups:
        plot.bars(outdir / "demo.png", "Burst after idle: time / ideal "
                  "(%d ms RTT, %g Mbit/s, %d-packet queue)" % (
                      2 * DELAY_MS, PROFILE["rate_kbit"] / 1000.0,
                      PROFILE["queue_pkts"]), "x ideal", groups)
    flights = read_flights(outdir)
    for p in PATHS:
        series = {pol: pts for (path, pol), pts in flights.items()
                  if path == p}
        if series:
            plot.seqtime(outdir / ("flight-%s.png" % p),
                         "%s path: the burst's segments (repetition 0)" % p,
                         series)
    return text


def report(ctx, rows):
    print(write_tables(ctx.outdir, rows), end="")

"""pacerate: the measurements behind tcp_cocktail's pace_rate default.

One netem-topo link (10 Mbit/s, 200 ms RTT, the module with iw=10,
pace_iw=0 and cwv=0 unless a policy sets it). For each policy a new
persistent connection warms up, stays idle 2 s, then fetches 100
segments; the keep-alive client (cocktail_lab.traffic) measures the
completion time (request sent -> last byte received). The paced restart
runs at each pace_rate, next to keep and ssr, in four settings:
  app        warm-up of 3 x 100-segment fetches (application-limited, the
             keep-alive case), drop-tail queue of 100 packets
  bulk       warm-up of one 1000-segment fetch (window-limited), 100 packets
  small      bulk warm-up, queue of 20 packets (a stale window overflows it)
  app-small  the app warm-up with a 20-packet queue, each pace_rate also
             with cwv=1 (RFC 2861: no growth while application-limited)

Options (bench/run pacerate ...):
  --quick                 1 repetition (default 5; --reps N)
  --only setting=app,...  a subset of the settings

Results: runs.csv (every setting's rows; its first column is the setting),
meta.json (the run), and per setting <setting>/table.md, demo.png and
<setting>/meta.json (the link, the warm-up, the module's parameters, the
policies). Repetitions run round-robin over the policies. The table:
median completion with min-max, ratio to the ideal (one RTT + the
burst's bytes on the wire at the bottleneck rate), ratio to the first
policy, retransmissions caused by the burst (tcpi_total_retrans after it
minus before the idle period).

Results measured before pacerate was a scenario name the policies ssr,
keep, pace-<rate>[-cwv1] (LEGACY_NAMES); the tables show the names
runs.csv has.
"""
import datetime
import json
import platform
import statistics
from pathlib import Path

from bench.lib import meta, only as check, policies
from cocktail_lab import modparams as lab_params, proc
from cocktail_lab.topo import Topo

# the link and the fetch (a setting overrides the warm-up and the queue)
DEFAULTS = {"rtt_ms": 200.0, "rate": "10mbit", "limit": 100, "idle_s": 2.0,
            "segments": 100, "warm": "fetches"}
FULL_REPS, QUICK_REPS = 5, 1
# module parameters of the whole run, and the ones each policy starts from
SETUP = {"iw": 10, "cwv": 0, "pace_iw": 0}
RESET = ("restart", "pace_rate", "auto_rtt_us", "cwv")
# policy names in runs before pacerate was a scenario (kept in their
# runs.csv: the committed tables show them)
LEGACY_NAMES = {"ssr": "cocktail-ssr-cwv0", "keep": "cocktail-keep-cwv0"}
for _r in ("delivery", "window", "max"):
    LEGACY_NAMES["pace-" + _r] = "cocktail-pace-%s-cwv0" % _r
    LEGACY_NAMES["pace-%s-cwv1" % _r] = "cocktail-pace-%s-cwv1" % _r


def warmup(warm):
    """(segments per warm-up fetch, fetches)."""
    return (1000, 1) if warm == "bulk" else (100, 3)


def variants(names):
    bad = [n for n in names if n not in policies.EVERY]
    if bad:
        raise SystemExit("pacerate: unknown policy %s (known: %s)" % (
            ", ".join(bad), " ".join(policies.EVERY)))
    return [policies.EVERY[n] for n in names]


def setup_modules():
    proc.sh("modprobe tcp_bbr")
    if not lab_params.has_params():
        if not policies.KO.exists():
            raise SystemExit("pacerate: %s is not built (run make)" %
                             policies.KO)
        proc.sh("insmod %s" % policies.KO)
    allowed = proc.sh("sysctl -n net.ipv4.tcp_allowed_congestion_control"
                       ).split()
    for cc in ("bbr", "cocktail"):
        if cc not in allowed:
            allowed.append(cc)
    proc.sh("sysctl -qw net.ipv4.tcp_allowed_congestion_control='%s'" %
             " ".join(allowed))
    lab_params.set_params(SETUP)


def modparams():
    return {k: v for k, v in lab_params.get_params().items() if k != "stats"}


def measure(ctx, s, pols, reps, setting=None, prior=()):
    """REPS fetches of every policy of POLS on the link of settings S,
    round-robin; returns (rows, facts for meta.json).  SETTING goes into
    every row and the resume key; PRIOR, this invocation's rows
    of earlier settings, is saved with them."""
    warm_segs, warm_fetches = warmup(s["warm"])
    setup_modules()
    rows = []
    defaults = modparams()
    pre = {} if setting is None else {"setting": setting}
    with Topo(rtt=s["rtt_ms"], rate=s["rate"], limit=s["limit"]) as t:
        bps = t.info["params"]["rate_bps"]
        ports = {}
        for i, p in enumerate(pols):
            ports[p.name] = 9000 + i
            t.ka_server(port=ports[p.name], cc=p.cc)
        for run in range(reps):
            for p in pols:
                if ctx.skip(variant=p.name, run=run, **pre):
                    continue
                t.sysctl(t.server, "net.ipv4.tcp_slow_start_after_idle",
                         p.ssai)
                # each policy starts from the module's parameters at setup
                lab_params.set_params({k: p.cocktail.get(k, defaults[k])
                                       for k in RESET})
                lab_params.set_params(p.cocktail)
                r = t.ka_client(port=ports[p.name], segments=s["segments"],
                                idle=s["idle_s"], warm_segs=warm_segs,
                                warm_fetches=warm_fetches)
                if r["after"]["ca"] != p.cc:
                    raise SystemExit("pacerate: %s ran with %s" % (
                        p.name, r["after"]["ca"]))
                row = dict(pre, **{
                    "run": run, "variant": p.name, "cc": p.cc,
                    "ssai": p.ssai,
                    "params": ",".join("%s=%s" % kv for kv in
                                       sorted(p.cocktail.items())),
                    "completion_s": round(r["completion_s"], 6),
                    "bytes": r["bytes"], "mss": r["mss"],
                    "cwnd_before": r["before"]["snd_cwnd"],
                    "cwnd_after": r["after"]["snd_cwnd"],
                    "rto_us": r["before"]["rto"],
                    "srtt_us": r["before"]["rtt"],
                    "min_rtt_us": r["before"]["min_rtt"],
                    "delivery_rate_before": r["before"]["delivery_rate"],
                    "burst_retrans": r["burst_retrans"]})
                rows.append(row)
                ctx.log("run %d %-15s %.3f s  cwnd %d->%d  retrans %d" % (
                    run, p.name, row["completion_s"], row["cwnd_before"],
                    row["cwnd_after"], row["burst_retrans"]))
                ctx.save(list(prior) + rows)
                ctx.tick()
        tc = t.info["tc"]
    facts = {
        "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"),
        "rtt_ms": s["rtt_ms"], "rate": s["rate"], "rate_bps": bps,
        "limit": s["limit"], "idle_s": s["idle_s"],
        "segments": s["segments"],
        "warmup": {"fetches": warm_fetches, "segments": warm_segs},
        "order": "round-robin over variants", "tc": tc,
        "cocktail_params": modparams(),
        "variants": [{"name": p.name, "cc": p.cc,
                      "tcp_slow_start_after_idle": p.ssai,
                      "cocktail": p.cocktail} for p in pols]}
    return rows, facts


def complete(f, rows):
    """The facts F with what the rows tell: MSS, ideal, summary."""
    if rows:
        f["mss"] = rows[0]["mss"]
        f["ideal_s"] = ideal(f, rows[0]["mss"])
        f["summary"] = summary(rows, f)
    return f


def ideal(f, mss):
    frame = mss + 66  # Ethernet + IPv4 + TCP with timestamps
    return f["rtt_ms"] / 1e3 + f["segments"] * frame * 8 / f["rate_bps"]


def summary(rows, f):
    """Per policy (in the order of runs.csv): median, min, max completion,
    ratio to the ideal, burst retransmissions."""
    ide = ideal(f, rows[0]["mss"])
    out = []
    for name in dict.fromkeys(r["variant"] for r in rows):
        xs = [r["completion_s"] for r in rows if r["variant"] == name]
        rt = [r["burst_retrans"] for r in rows if r["variant"] == name]
        med = statistics.median(xs)
        out.append({"variant": name, "median_s": med, "min_s": min(xs),
                    "max_s": max(xs), "ratio_ideal": med / ide,
                    "retrans_median": statistics.median(rt),
                    "retrans_total": sum(rt), "runs": len(xs)})
    return out


def facts(path):
    """The link and run facts a table needs, from a setting's
    meta.json."""
    m = json.loads(Path(path).read_text())
    return {k: m[k] for k in ("kernel", "date", "rtt_ms", "rate",
                              "rate_bps", "limit", "idle_s", "segments",
                              "warmup")}


def write_tables(outdir, rows, f):
    """table.md and demo.png in OUTDIR from ROWS and the facts F."""
    mss = rows[0]["mss"]
    ide = ideal(f, mss)
    tab = summary(rows, f)
    base_name = tab[0]["variant"]
    base = tab[0]["median_s"]
    runs = max(x["runs"] for x in tab)
    head = ("| variant | median completion (min-max) | x ideal | x %s "
            "| burst retrans (median, total) |\n|---|---|---|---|---|\n"
            % base_name)
    md = head + "".join(
        "| %s | %.3f s (%.3f-%.3f) | %.2f | %.2f | %g, %d |\n" % (
            x["variant"], x["median_s"], x["min_s"], x["max_s"],
            x["ratio_ideal"], x["median_s"] / base, x["retrans_median"],
            x["retrans_total"]) for x in tab)
    warm = "%d fetches of %d segments" % (f["warmup"]["fetches"],
                                          f["warmup"]["segments"])
    title = ("Fetch of %d segments (%d B each) after %.0f s idle, %g ms RTT, "
             "%s, drop-tail %d packets, warm-up %s; %d runs per variant, "
             "interleaved; ideal = RTT + bytes on the wire / rate = %.3f s. "
             "Kernel %s under QEMU TCG, %s.\n\n" % (
                 f["segments"], mss, f["idle_s"], f["rtt_ms"], f["rate"],
                 f["limit"], warm, runs, ide, f["kernel"], f["date"]))
    (Path(outdir) / "table.md").write_text("# pace_rate (measured)\n\n" +
                                           title + md)
    _plot(Path(outdir) / "demo.png", tab, ide, f)
    return title + md


def _plot(path, tab, ide, f):
    from bench.lib import plot
    plt = plot.plt
    fig, ax = plt.subplots(figsize=(9, 4))
    names = [x["variant"] for x in tab]
    med = [x["median_s"] for x in tab]
    err = [[m - x["min_s"] for m, x in zip(med, tab)],
           [x["max_s"] - m for m, x in zip(med, tab)]]
    ax.bar(names, med, yerr=err, capsize=4, color="#4878a8")
    ax.axhline(ide, color="k", ls="--", lw=1, label="ideal")
    ax.set_ylabel("completion time (s)")
    ax.set_title("%d segments after %.0f s idle, %g ms RTT, %s" % (
        f["segments"], f["idle_s"], f["rtt_ms"], f["rate"]))
    ax.legend()
    plt.xticks(rotation=30, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


BASE = ["cocktail-ssr-cwv0", "cocktail-keep-cwv0"] + [
    "cocktail-pace-%s-cwv0" % r for r in ("delivery", "window", "max")]
CWV1 = ["cocktail-pace-%s-cwv1" % r for r in ("delivery", "window", "max")]
# setting -> (warm-up, queue in packets, policies)
SETTINGS = {"app": ("fetches", 100, BASE), "bulk": ("bulk", 100, BASE),
            "small": ("bulk", 20, BASE), "app-small": ("fetches", 20,
                                                       BASE + CWV1)}
# the README's sections: <setting>/table.md
TABLES = {"app": "application-limited warm-up, 100-packet queue",
          "bulk": "window-limited warm-up, 100-packet queue",
          "small": "window-limited warm-up, 20-packet queue",
          "app-small": "application-limited warm-up, 20-packet queue, "
                       "each pace_rate also with cwv=1"}
RESUME_KEY = ("setting", "variant", "run")


def chosen(only):
    check.keys("pacerate", only, ("setting",))
    names = only.get("setting") or list(SETTINGS)
    check.values("pacerate", "setting", names, list(SETTINGS))
    return [n for n in SETTINGS if n in names]


def run(ctx):
    names = chosen(ctx.only)
    ctx.reps = ctx.reps or (QUICK_REPS if ctx.quick else FULL_REPS)
    ctx.grid(sum(ctx.reps * len(SETTINGS[n][2]) for n in names))
    rows = []
    for name in names:
        warm, limit, pols = SETTINGS[name]
        ctx.log("%s: warm-up %s, queue %d packets" % (name, warm, limit))
        s = dict(DEFAULTS, warm=warm, limit=limit)
        got, f = measure(ctx, s, variants(pols), ctx.reps, setting=name,
                         prior=rows)
        rows += got
        ctx.tc.append({"setting": name, "tc": f["tc"]})
        mine = [r for r in ctx.old + rows if r["setting"] == name]
        d = ctx.outdir / name
        d.mkdir(parents=True, exist_ok=True)
        meta.write(d / "meta.json", complete(f, mine))
    return rows


def report(ctx, rows):
    for name in dict.fromkeys(r["setting"] for r in rows
                              if r.get("setting")):
        mine = [r for r in rows if r["setting"] == name]
        d = ctx.outdir / name
        print("== pacerate: %s" % name)
        print(write_tables(d, mine, facts(d / "meta.json")), end="")


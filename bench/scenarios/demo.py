"""demo (`make demo`): restart-after-idle policies side by side on one
shaped link.

One netem-topo link, 200 ms RTT, 10 Mbit/s, drop-tail queue of 100
packets. For each policy a new persistent connection warms up (3 fetches
of 100 segments), stays idle 2 s, then fetches 100 segments; the client
(cocktail_lab.traffic) measures the completion time (request sent -> last
byte received). Policies (bench/lib/policies.py's names):
  linux-default        CUBIC, net.ipv4.tcp_slow_start_after_idle=1
  cubic-nossai         CUBIC, tcp_slow_start_after_idle=0
  bbr                  BBR (tcp_bbr)
  cocktail-*-cwv0      the cocktail module with restart=ssr|decay|keep|pace|
                       auto, cwv=0 (growth while application-limited)
The module runs with iw=10, cwv=0, pace_iw=0; each policy starts from the
module's parameters as they were then (restart, pace_rate, auto_rtt_us,
cwv) and sets its own. Repetitions run round-robin over the policies.
The table: median completion with min-max, ratio to the ideal (one RTT +
the burst's bytes on the wire at the bottleneck rate), ratio to the first
policy, retransmissions caused by the burst (tcpi_total_retrans after it
minus before the idle period).

Options (bench/run demo ...):
  --quick              1 repetition (default 5; --reps N)
  --only variant=NAME  the policies to run, in this order (repeat the key;
                       the first is the ratios' base), any name of
                       bench/lib/policies.py (EVERY)
  --only rtt_ms=200,rate=10mbit,limit=100,idle_s=2,segments=100,warm=fetches
                       the link and the fetch; warm=bulk warms up with one
                       fetch of 1000 segments (window-limited) instead of
                       3 of 100 (application-limited, like keep-alive)

Results: runs.csv (one row per fetch; the column `variant` is the policy),
table.md, demo.png, meta.json (with the link, the warm-up, the ideal, the
module's parameters and a summary per policy).

Results measured before the demo became a scenario name their policies
cubic-ssr, cubic-nossr, cocktail-<restart> (cwv=0): the tables show the
names runs.csv has; LEGACY_NAMES maps them for the reproducing command.
"""
import datetime
import json
import platform
import statistics
from pathlib import Path

from bench.lib import policies
from cocktail_lab import modparams as lab_params, proc
from cocktail_lab.topo import Topo

# the link and the fetch; --only KEY=VALUE overrides (values as the CLI
# spells them)
DEFAULTS = {"rtt_ms": 200.0, "rate": "10mbit", "limit": 100, "idle_s": 2.0,
            "segments": 100, "warm": "fetches"}
CAST = {"rtt_ms": float, "rate": str, "limit": int, "idle_s": float,
        "segments": int, "warm": str}
VARIANTS = ["linux-default", "cubic-nossai", "bbr", "cocktail-ssr-cwv0",
            "cocktail-decay-cwv0", "cocktail-keep-cwv0", "cocktail-pace-cwv0",
            "cocktail-auto-cwv0"]
FULL_REPS, QUICK_REPS = 5, 1
# module parameters of the whole run, and the ones each policy starts from
SETUP = {"iw": 10, "cwv": 0, "pace_iw": 0}
RESET = ("restart", "pace_rate", "auto_rtt_us", "cwv")
RESUME_KEY = ("variant", "run")
# policy names in runs before the demo was a scenario (kept in their
# runs.csv: the committed tables show them)
LEGACY_NAMES = {"cubic-ssr": "linux-default", "cubic-nossr": "cubic-nossai",
                "ssr": "cocktail-ssr-cwv0", "keep": "cocktail-keep-cwv0"}
for _r in ("ssr", "decay", "keep", "pace", "auto"):
    LEGACY_NAMES["cocktail-" + _r] = "cocktail-%s-cwv0" % _r
for _r in ("delivery", "window", "max"):
    LEGACY_NAMES["pace-" + _r] = "cocktail-pace-%s-cwv0" % _r
    LEGACY_NAMES["pace-%s-cwv1" % _r] = "cocktail-pace-%s-cwv1" % _r


def settings(only, keys=DEFAULTS):
    """The link and fetch settings: DEFAULTS with --only's overrides."""
    out = dict(DEFAULTS)
    for k, vs in only.items():
        if k in ("variant", "setting"):
            continue
        if k not in keys:
            raise SystemExit("demo: unknown --only key %r (known: variant, "
                             "%s)" % (k, ", ".join(keys)))
        if len(vs) != 1:
            raise SystemExit("demo: --only %s wants one value" % k)
        try:
            out[k] = CAST[k](vs[0])
        except ValueError:
            raise SystemExit("demo: --only %s=%s: not a number" % (k, vs[0]))
    if out["warm"] not in ("fetches", "bulk"):
        raise SystemExit("demo: --only warm= wants fetches or bulk")
    return out


def warmup(warm):
    """(segments per warm-up fetch, fetches)."""
    return (1000, 1) if warm == "bulk" else (100, 3)


def variants(names):
    bad = [n for n in names if n not in policies.EVERY]
    if bad:
        raise SystemExit("demo: unknown policy %s (known: %s)" % (
            ", ".join(bad), " ".join(policies.EVERY)))
    return [policies.EVERY[n] for n in names]


def setup_modules():
    proc.sh("modprobe tcp_bbr")
    if not lab_params.has_params():
        if not policies.KO.exists():
            raise SystemExit("demo: %s is not built (run make)" %
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
    round-robin; returns (rows, facts for meta.json).  SETTING (pacerate)
    goes into every row and the resume key; PRIOR, this invocation's rows
    of earlier settings, is saved with them."""
    warm_segs, warm_fetches = warmup(s["warm"])
    setup_modules()
    rows = []
    defaults = modparams()
    pre = {} if setting is None else {"setting": setting}
    with Topo(rtt=s["rtt_ms"], rate=s["rate"],
                           limit=s["limit"]) as t:
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
                    raise SystemExit("demo: %s ran with %s" % (
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


def run(ctx):
    s = settings(ctx.only)
    ctx.reps = ctx.reps or (QUICK_REPS if ctx.quick else FULL_REPS)
    pols = variants(ctx.only.get("variant") or VARIANTS)
    ctx.grid(ctx.reps * len(pols))
    rows, f = measure(ctx, s, pols, ctx.reps)
    ctx.tc.extend(f.pop("tc"))
    ctx.extra.update(complete(f, ctx.old + rows))
    return rows


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
    """The link and run facts a table needs, from a meta.json (the demo's
    own, or a pacerate setting's)."""
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
    (Path(outdir) / "table.md").write_text("# make demo (measured)\n\n" +
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


def report(ctx, rows):
    rows = [r for r in rows if r.get("variant")]
    if not rows:
        return
    text = write_tables(ctx.outdir, rows, facts(ctx.outdir / "meta.json"))
    print(text, end="")


def legacy_options(m):
    """The options of a run from before the demo was a scenario (its
    meta.json has the link and the variants, no options)."""
    if "variants" not in m:
        return None
    only = {}
    for k in ("rtt_ms", "rate", "limit", "idle_s", "segments"):
        if m.get(k) is not None and m[k] != DEFAULTS[k]:
            only[k] = [str(m[k])]
    if m.get("warmup", {}).get("segments") == 1000:
        only["warm"] = ["bulk"]
    names = [LEGACY_NAMES.get(v["name"], v["name"]) for v in m["variants"]]
    if names != VARIANTS:
        only["variant"] = names
    return {"quick": False, "reps": m.get("runs"), "jobs": None,
            "only": only, "trace": False}

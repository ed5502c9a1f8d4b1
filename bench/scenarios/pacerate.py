"""pacerate: the measurements behind tcp_cocktail's pace_rate default.

The demo's link (bench/scenarios/demo.py: one netem-topo path, 10 Mbit/s,
200 ms RTT, the module with cwv=0 unless a policy sets it) with the paced
restart at each pace_rate, next to keep and ssr, in four settings:
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
policies: what the demo records about one run).

Results measured before pacerate was a scenario name the policies ssr,
keep, pace-<rate>[-cwv1] (demo.LEGACY_NAMES); the tables show the names
runs.csv has.
"""
from bench.lib import meta
from bench.scenarios import demo

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
    bad = [k for k in only if k != "setting"]
    if bad:
        raise SystemExit("pacerate: unknown --only key %s (known: setting)"
                         % ", ".join(bad))
    names = only.get("setting") or list(SETTINGS)
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        raise SystemExit("pacerate: unknown setting %s (known: %s)" % (
            ", ".join(unknown), " ".join(SETTINGS)))
    return [n for n in SETTINGS if n in names]


def run(ctx):
    names = chosen(ctx.only)
    ctx.reps = ctx.reps or (demo.QUICK_REPS if ctx.quick else demo.FULL_REPS)
    ctx.grid(sum(ctx.reps * len(SETTINGS[n][2]) for n in names))
    rows = []
    for name in names:
        warm, limit, pols = SETTINGS[name]
        ctx.log("%s: warm-up %s, queue %d packets" % (name, warm, limit))
        s = dict(demo.DEFAULTS, warm=warm, limit=limit)
        got, f = demo.measure(ctx, s, demo.variants(pols), ctx.reps,
                              setting=name, prior=rows)
        rows += got
        ctx.tc.append({"setting": name, "tc": f["tc"]})
        mine = [r for r in ctx.old + rows if r["setting"] == name]
        d = ctx.outdir / name
        d.mkdir(parents=True, exist_ok=True)
        meta.write(d / "meta.json", demo.complete(f, mine))
    return rows


def report(ctx, rows):
    for name in dict.fromkeys(r["setting"] for r in rows
                              if r.get("setting")):
        mine = [r for r in rows if r["setting"] == name]
        d = ctx.outdir / name
        print("== pacerate: %s" % name)
        print(demo.write_tables(d, mine, demo.facts(d / "meta.json")),
              end="")


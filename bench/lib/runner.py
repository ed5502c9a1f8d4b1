"""Run one bench scenario (inside the VM, as root) and write its results:

    bench/results/<scenario>/runs.csv    one row per run
    bench/results/<scenario>/table.md    the scenario's tables
    bench/results/<scenario>/*.png       plots
    bench/results/<scenario>/meta.json   kernel, CPU, date, commit, tc

Usage: python -m bench.lib.runner SCENARIO [--quick] [--reps N] [--jobs N]
       [--out DIR] [--only K=V,...] [--trace] [--report-only]
"""
import argparse
import datetime
import importlib
import os
import sys
import time
from pathlib import Path

from . import ktrace, meta, policies, table

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("restart", "iw", "keepalive", "phttp", "overhead", "ooo")


class Context:
    def __init__(self, name, args, outdir):
        self.name = name
        self.quick = args.quick
        self.reps = args.reps
        self.jobs = args.jobs
        self.only = args.only
        self.outdir = outdir
        self.tc = []
        self.extra = {}
        self.notes = []
        self.old = []              # rows of an earlier run (--append)
        self.t_start = time.monotonic()
        self.started = meta.git_state()
        self.started["started_utc"] = datetime.datetime.now(
            datetime.timezone.utc).isoformat(timespec="seconds")

    def log(self, msg):
        print("[%s %6.0fs] %s" % (self.name, time.monotonic() - self.t_start,
                                  msg), flush=True)

    def save(self, rows):
        """Write runs.csv now (partial results survive an interrupted run)."""
        if rows:
            table.write_csv(self.outdir / "runs.csv", self.old + rows)

    def note(self, msg):
        self.log(msg)
        self.notes.append(msg)


def parse_only(text):
    out = {}
    for part in filter(None, (text or "").split(",")):
        if "=" not in part:
            raise SystemExit("--only wants K=V[,K=V...], got %r" % part)
        k, v = part.split("=", 1)
        out.setdefault(k, []).append(v)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench/run")
    ap.add_argument("scenario", nargs="+", choices=SCENARIOS)
    ap.add_argument("--quick", action="store_true",
                    help="the small subset used by bench-quick")
    ap.add_argument("--reps", type=int, default=None,
                    help="repetitions per cell (default: scenario's)")
    ap.add_argument("--jobs", type=int, default=None,
                    help="cells run side by side, each on its own "
                    "topology (restart, keepalive; default: the "
                    "scenario's, 1 with --quick)")
    ap.add_argument("--out", default=None,
                    help="output directory (default bench/results/SCENARIO)")
    ap.add_argument("--only", default="",
                    help="restrict the grid, e.g. delay_ms=50,burst=100")
    ap.add_argument("--append", action="store_true",
                    help="keep the rows of an existing runs.csv and add "
                    "this run's (tables then cover both)")
    ap.add_argument("--trace", action="store_true",
                    help="record the module's tracepoints (restart, "
                    "pace_end) into trace.txt and restarts.csv")
    ap.add_argument("--report-only", action="store_true",
                    help="rebuild table/plots from an existing runs.csv")
    args = ap.parse_args(argv)
    if args.reps is not None and not 1 <= args.reps <= 1000:
        ap.error("--reps must be 1..1000")
    if args.jobs is not None and not 1 <= args.jobs <= 32:
        ap.error("--jobs must be 1..32")
    args.only = parse_only(args.only)
    if args.out and len(args.scenario) > 1:
        ap.error("--out needs a single scenario")
    if os.geteuid() != 0 and not args.report_only:
        print("bench/run: must run as root inside the VM (bench/run does "
              "that through scripts/vm-run)", file=sys.stderr)
        return 2
    status = 0
    for name in args.scenario:
        try:
            run_one(name, args)
        except Exception as e:  # one scenario's failure does not stop the rest
            import traceback
            traceback.print_exc()
            print("bench: scenario %s failed: %s" % (name, e), file=sys.stderr)
            status = 1
    return status


def run_one(name, args):
    args = argparse.Namespace(**vars(args))
    args.scenario = name
    outdir = Path(args.out) if args.out else REPO / "bench" / "results" / \
        args.scenario
    mod = importlib.import_module("bench.scenarios." + args.scenario)
    ctx = Context(args.scenario, args, outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        rows = table.read_csv(outdir / "runs.csv")
        mod.report(ctx, rows)
        return
    if args.append and (outdir / "runs.csv").exists():
        ctx.old = table.read_csv(outdir / "runs.csv")
        ctx.note("appended to %d rows of an earlier run" % len(ctx.old))
    if args.trace:
        policies.cocktail_status()      # load the module: its events exist
    tracing = args.trace and ktrace.start()
    if args.trace and not tracing:
        ctx.note("--trace: no tcp_cocktail events in tracefs (module not "
                 "loaded?); nothing traced")
    try:
        new = mod.run(ctx)
    finally:
        if tracing:
            ctx.extra["trace"] = ktrace.stop(outdir)
    ctx.save(new)
    rows = ctx.old + new
    m = meta.collect(args.scenario, {"quick": args.quick, "reps": ctx.reps,
                                     "jobs": ctx.jobs, "only": args.only},
                     ctx.tc, ctx.extra)
    m.update(ctx.started)          # the tree as it was when the run began
    m["notes"] = ctx.notes
    m["duration_s"] = round(time.monotonic() - ctx.t_start, 1)
    m["runs"] = len(rows)
    if ctx.old:
        m["earlier_runs"] = meta.earlier(outdir / "meta.json")
    meta.write(outdir / "meta.json", m)
    mod.report(ctx, rows)
    ctx.log("done: %d rows in %s" % (len(rows), outdir))


if __name__ == "__main__":
    sys.exit(main())

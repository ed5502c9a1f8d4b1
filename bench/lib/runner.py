"""Run one bench scenario (inside the VM, as root) and write its results:

    bench/results/<scenario>/runs.csv    one row per run
    bench/results/<scenario>/table.md    the scenario's tables
    bench/results/<scenario>/*.png       plots
    bench/results/<scenario>/meta.json   kernel, CPU, date, commit, tc,
                                         the options of the run
    bench/results/<scenario>/README.md   title, the command that reproduces
                                         the run, notes.md (hand-written,
                                         if any), the tables, the plots

Usage: python -m bench.lib.runner SCENARIO [--quick] [--reps N] [--jobs N]
       [--out DIR] [--only K=V,...] [--trace] [--append | --resume]
       [--report-only]
(bench/run SCENARIO ... boots the VM and runs this inside it; see
`bench/run --help`.)  The scenarios are bench/scenarios' registry.

Progress: a scenario announces its grid's size (ctx.grid) and ticks every
run (ctx.tick); bench/lib/progress.py shows runs done of total, elapsed
and time left.  Resume: with --resume the rows of runs.csv stay, the
scenario skips the (cell, repetition) pairs they cover (ctx.skip, keyed by
the scenario's RESUME_KEY columns) and runs the others in their usual
order; meta.json must record the same options (it is written with the
options at the first save, so an interrupted run has them).
"""
import argparse
import datetime
import importlib
import json
import os
import sys
import time
from pathlib import Path

from bench.scenarios import HOST, NAMES as SCENARIOS, SCENARIOS as ABOUT

from . import ktrace, meta, policies, progress, table

REPO = Path(__file__).resolve().parents[2]


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
        self.old = []              # rows of an earlier run (--append,
        #                            --resume)
        self.resuming = getattr(args, "resume", False)
        self.options = options(args)
        self.resume = progress.Resume()
        self.progress = progress.Progress(name)
        self.partial_written = False
        self.earlier = []          # meta.json records of --append's runs
        self.t_start = time.monotonic()
        self.started = meta.git_state()
        self.started["started_utc"] = datetime.datetime.now(
            datetime.timezone.utc).isoformat(timespec="seconds")

    def log(self, msg):
        self.progress.clear()
        print("[%s %6.0fs] %s" % (self.name, time.monotonic() - self.t_start,
                                  msg), flush=True)
        if self.progress.live and self.progress.ran:
            self.progress.show()       # the live line back under the log

    def grid(self, total):
        """The grid has TOTAL runs more (cells x repetitions, counting the
        ones --resume keeps): progress counts them."""
        self.progress.total += total

    def skip(self, **key):
        """Whether the run KEY names (the scenario's RESUME_KEY columns)
        has its row from the interrupted run (--resume): then it counts as
        done and the scenario does not run it."""
        if self.resume.done(**key):
            self.progress.skip()
            return True
        return False

    def done(self, **key):
        """Whether KEY's row is kept from the interrupted run, without
        counting it (a scenario deciding whether to build a topology at
        all; it counts what it skips with skipped())."""
        return self.resume.done(**key)

    def skipped(self, n):
        self.progress.skip(n)

    def tick(self, n=1):
        """N runs of the grid done."""
        self.progress.tick(n)

    def save(self, rows):
        """Write runs.csv now (partial results survive an interrupted run).
        The first save also writes meta.json with this run's options, so
        that an interrupted run can be resumed."""
        if rows:
            if not self.partial_written:
                m = {"scenario": self.name, "options": self.options,
                     "in_progress": True}
                m.update(self.started)
                if self.earlier:
                    m["earlier_runs"] = self.earlier
                meta.write(self.outdir / "meta.json", m)
                self.partial_written = True
            table.write_csv(self.outdir / "runs.csv", self.old + rows)

    def note(self, msg):
        self.log(msg)
        self.notes.append(msg)


EPILOG = """\
scenarios:
""" + "".join("  %-10s %s\n" % kv for kv in ABOUT.items()) + """
examples:
  bench/run demo                     make demo: 5 runs of each policy
  bench/run demo --quick             1 run of each (a few minutes)
  bench/run demo --only path=competitor,policy=linux-default,policy=cocktail-default
  bench/run pacerate                 the four pace_rate settings
  bench/run pacerate --only setting=app,setting=bulk
  bench/run restart --jobs 16        a grid; Ctrl-C or a crash stops it
  bench/run restart --jobs 16 --resume   runs only what is missing
  bench/run restart --report-only    tables, plots, README from runs.csv
  bench/run scorecard                the restart and keepalive grids scored
                                     (on the host, from their runs.csv)
"""


def parse_only(text):
    out = {}
    for part in filter(None, (text or "").split(",")):
        if "=" not in part:
            raise SystemExit("--only wants K=V[,K=V...], got %r" % part)
        k, v = part.split("=", 1)
        out.setdefault(k, []).append(v)
    return out


def options(args):
    """The options a run's rows depend on, as meta.json records them
    (--resume compares them)."""
    return {"quick": bool(args.quick), "reps": args.reps, "jobs": args.jobs,
            "only": args.only, "trace": bool(args.trace)}


def command(name, outdir, m, mod=None):
    """The bench/run command line that reproduces the run META records
    (options of a run before --resume existed: from its resolved args)."""
    opts = m.get("options")
    if opts is None and mod is not None and hasattr(mod, "legacy_options"):
        opts = mod.legacy_options(m)
    if opts is None:
        a = m.get("args") or {}
        opts = {"quick": a.get("quick"), "reps": a.get("reps"),
                "jobs": a.get("jobs"), "only": a.get("only") or {},
                "trace": "trace" in m}
    cmd = ["bench/run", name]
    if opts.get("quick"):
        cmd.append("--quick")
    for k in ("reps", "jobs"):
        if opts.get(k) is not None:
            cmd += ["--" + k, str(opts[k])]
    only = opts.get("only") or {}
    if only:
        cmd += ["--only", ",".join("%s=%s" % (k, v) for k in sorted(only)
                                   for v in only[k])]
    if opts.get("trace"):
        cmd.append("--trace")
    try:
        rel = Path(outdir).resolve().relative_to(REPO)
    except ValueError:
        rel = Path(outdir)
    if rel != Path("bench", "results", name):
        cmd += ["--out", str(rel)]
    return " ".join(cmd)


def _demote(md):
    """Markdown headings one level down (a table.md's title becomes a
    section of README.md), fenced code left alone."""
    out, fence = [], False
    for ln in md.splitlines(keepends=True):
        if ln.startswith("```"):
            fence = not fence
        out.append("#" + ln if ln.startswith("#") and not fence else ln)
    return "".join(out)


def write_readme(name, outdir, mod=None):
    """bench/results/<dir>/README.md: title, the command that reproduces
    the run (from meta.json), notes.md if present, the tables (every
    table.md, the scenario's TABLES order for subdirectories) and links
    to the plots."""
    outdir = Path(outdir)
    try:
        m = json.loads((outdir / "meta.json").read_text())
    except (OSError, ValueError):
        m = {}
    title = outdir.name if outdir.name == name else "%s (scenario %s)" % (
        outdir.name, name)
    md = ["<!-- generated by `bench/run %s --report-only`: edit notes.md, "
          "not this file -->\n" % name,
          "# Bench results: %s\n\n%s.\n\n" % (
              title, ABOUT.get(name, name)[:1].upper() +
              ABOUT.get(name, name)[1:])]
    # an --append run: the earlier runs' commands, then this one's
    runs = list(m.get("earlier_runs") or []) + [m]
    cmds = [command(name, outdir, r, mod) + (" --append" if i else "")
            for i, r in enumerate(runs)]
    md.append("Reproduce (%s)%s:\n\n%s\n" % (
        "on the host: it reads other scenarios' results" if name in HOST
        else "bench/run boots the test VM",
        "; runs.csv holds the rows of these %d runs" % len(runs)
        if len(runs) > 1 else "", "".join("    %s\n" % c for c in cmds)))
    when = m.get("date_utc") or m.get("date")
    if when or m.get("kernel"):
        md.append("Measured %s on kernel %s, commit %s%s. `meta.json` has "
                  "the machine, the options and the qdiscs.\n\n" % (
                      when or "(date not recorded)", m.get("kernel", "?"),
                      (m.get("git_commit") or "?")[:12],
                      " (uncommitted changes)" if m.get("git_dirty") or
                      str(m.get("git_commit", "")).endswith("-dirty")
                      else ""))
    notes = outdir / "notes.md"
    if notes.exists():
        md.append(notes.read_text().rstrip("\n") + "\n\n")
    if (outdir / "table.md").exists():
        md.append(_demote((outdir / "table.md").read_text()).rstrip("\n") +
                  "\n\n")
    # a scenario with a table per subdirectory (pacerate): TABLES is
    # {subdirectory: what it measures}, in the README's order
    subs = getattr(mod, "TABLES", {})
    for d, about in subs.items():
        if (outdir / d / "table.md").exists():
            md.append("## %s: %s\n\n" % (d, about))
            md.append(_demote(_demote((outdir / d / "table.md").read_text()))
                      .rstrip("\n") + "\n\n")
    subdirs = list(subs)
    pngs = sorted(outdir.glob("*.png")) + [
        p for d in subdirs for p in sorted((outdir / d).glob("*.png"))]
    if pngs:
        md.append("## Plots\n\n")
        md += ["- [%s](%s)\n" % ((p.relative_to(outdir).as_posix(),) * 2)
               for p in pngs]
    (outdir / "README.md").write_text("".join(md).rstrip("\n") + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench/run", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run bench scenarios inside the test VM (bench/run "
        "boots it through dev/vm-run) and write bench/results/SCENARIO/"
        "{runs.csv,table.md,*.png,meta.json,README.md}.",
        epilog=EPILOG)
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
    ap.add_argument("--resume", action="store_true",
                    help="continue an interrupted run: keep runs.csv's "
                    "rows and run only the missing (cell, repetition) "
                    "pairs; the options must be the interrupted run's "
                    "(an interrupted --append run cannot be resumed)")
    ap.add_argument("--trace", action="store_true",
                    help="record the module's tracepoints (restart, "
                    "pace_end, check) into trace.txt and restarts.csv")
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
    if args.resume and args.append:
        ap.error("--resume continues a run, --append adds one: pick one")
    if os.geteuid() != 0 and not args.report_only and \
            not set(args.scenario) <= set(HOST):
        print("bench/run: must run as root inside the VM (bench/run does "
              "that through dev/vm-run)", file=sys.stderr)
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
    if name in HOST and args.report_only and not args.only and \
            (outdir / "meta.json").exists():
        # the report of an earlier run reads what that run read: its
        # --only names the sources (scorecard --only restart=DIR)
        earlier = json.loads((outdir / "meta.json").read_text())
        args.only = (earlier.get("options") or {}).get("only") or {}
    ctx = Context(args.scenario, args, outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    if name in HOST:
        # reads other scenarios' results: run() loads them, report()
        # writes the tables; meta.json says what was read
        rows = mod.run(ctx)
        m = {"scenario": name, "options": ctx.options}
        m.update(ctx.started)
        m.update(ctx.extra)
        meta.write(outdir / "meta.json", m)
        mod.report(ctx, rows)
        write_readme(name, outdir, mod)
        return
    if args.report_only:
        rows = table.read_csv(outdir / "runs.csv")
        mod.report(ctx, rows)
        write_readme(name, outdir, mod)
        return
    if args.append and (outdir / "runs.csv").exists():
        ctx.old = table.read_csv(outdir / "runs.csv")
        ctx.earlier = meta.earlier(outdir / "meta.json")
        ctx.note("appended to %d rows of an earlier run" % len(ctx.old))
    resumed = None
    if args.resume:
        resumed = progress.check_options(outdir / "meta.json", ctx.options)
        if resumed.get("earlier_runs"):
            # its repetitions continue the earlier runs' numbering, which
            # the keys of the kept rows cannot tell apart
            raise SystemExit("bench/run --resume: %s is an --append run; "
                             "resuming one is not supported" %
                             (outdir / "meta.json"))
        if (outdir / "runs.csv").exists():
            ctx.old = table.read_csv(outdir / "runs.csv")
        ctx.resume = progress.Resume(ctx.old, mod.RESUME_KEY)
        ctx.note("resumed: %d rows kept from the interrupted run" %
                 len(ctx.old))
    if args.trace:
        policies.cocktail_status()      # load the module: its events exist
    tracing = args.trace and ktrace.start()
    if args.trace and not tracing:
        ctx.note("--trace: no tcp_cocktail events in tracefs (module not "
                 "loaded?); nothing traced")
    try:
        new = mod.run(ctx)
    finally:
        ctx.progress.finish()
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
    m["options"] = ctx.options
    if resumed is not None:
        # the tree and start of the run that was interrupted
        m["resumed_from"] = {k: resumed.get(k) for k in (
            "git_commit", "git_dirty", "started_utc")}
    elif ctx.earlier:
        m["earlier_runs"] = ctx.earlier
    meta.write(outdir / "meta.json", m)
    mod.report(ctx, rows)
    write_readme(name, outdir, mod)
    ctx.log("done: %d rows in %s" % (len(rows), outdir))


if __name__ == "__main__":
    sys.exit(main())

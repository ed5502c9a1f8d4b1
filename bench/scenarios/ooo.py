"""ooo: the seed 004_* statistics (flows, flows with reordering per
thousand, reordered packets per thousand, mean flow sizes, hold-time
median/p80/p90/p97/max) produced by `oooprobed` over many flows with netem
loss and reordering.

Not measured yet: the scenario needs daemon/oooprobed (the probe's
userspace daemon), which has not landed.  Until it does, run() records
the reason and report() writes it into table.md next to the published
numbers, so the skip is visible rather than silent.
"""
from pathlib import Path

from bench.lib import published

REPO = Path(__file__).resolve().parents[2]
DAEMON = REPO / "daemon" / "oooprobed"


def run(ctx):
    ctx.reps = ctx.reps or 1
    if not DAEMON.exists():
        ctx.note("skipped: daemon/oooprobed is not built (the out-of-order "
                 "probe's daemon has not landed)")
    else:
        ctx.note("skipped: the bench's oooprobed driver is not written yet")
    return []


def report(ctx, rows):
    md = ["# ooo: out-of-order hold times (seed 004_1ce70cf55789b78c.txt)"
          "\n\n"]
    md += ["- %s\n" % n for n in ctx.notes]
    md.append("\nPublished (bench/published/ooo2010_stats.csv):\n\n"
              "| statistic | value |\n|---|---|\n")
    for r in published.load("ooo2010_stats.csv"):
        md.append("| %s | %s %s |\n" % (r["what"], r["value"], r["unit"]))
    (ctx.outdir / "table.md").write_text("".join(md))

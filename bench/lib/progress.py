"""Progress of a grid, and resuming an interrupted one.

A grid runs for hours.  The runner gives every scenario a Progress and a
Resume (through its Context: ctx.grid(), ctx.skip(), ctx.tick()):

- Progress counts runs done of the grid's total and estimates the time
  left from this invocation's pace: elapsed / runs run so far * runs still
  to run.  Runs kept from an interrupted run count as done but not toward
  the pace (they took no time now).  On a terminal the status is one line
  rewritten in place; in a log (stdout not a terminal) and inside the VM
  (its console goes through virtme-ng, where a carriage return does not
  rewrite anything) it is a plain line after every run.

- Resume holds the (cell, repetition) keys of the rows an interrupted run
  saved in runs.csv: the scenario skips those and runs the rest in the
  same interleaved order.  A key is the scenario's columns naming a cell
  and its repetition; values compare as runs.csv spells them, so 20 and
  "20" are the same key.  A resumed run must have the same options as the
  interrupted one (check_options), else the kept rows would measure
  something else than the new ones.
"""
import json
import os
import sys
import time
from pathlib import Path

from . import table


def fmt_duration(s):
    """Seconds as H:MM:SS (M:SS under an hour)."""
    s = int(round(max(0, s)))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return "%d:%02d:%02d" % (h, m, sec) if h else "%d:%02d" % (m, sec)


def eta(ran, left, elapsed):
    """Seconds still needed for LEFT runs when RAN runs took ELAPSED
    seconds; None before the first run (no pace yet)."""
    if ran <= 0:
        return None
    return elapsed / ran * max(0, left)


def in_vm():
    try:
        return "virtme" in Path("/proc/cmdline").read_text()
    except OSError:
        return False


def live_output(out):
    """Whether OUT can show one line rewritten in place: a terminal, not
    a dumb one, and not the VM's console."""
    try:
        tty = out.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and os.environ.get("TERM", "") != "dumb" and not in_vm()


class Progress:
    """Runs done of TOTAL, elapsed time and time left, written to OUT."""

    def __init__(self, name, total=0, out=None, clock=time.monotonic,
                 live=None):
        self.name = name
        self.total = total
        self.kept = 0          # done before this invocation (--resume)
        self.ran = 0           # run by this invocation
        self.out = out or sys.stdout
        self.clock = clock
        self.t0 = clock()
        self.live = live_output(self.out) if live is None else live
        self.shown = False     # a live line is on the screen

    @property
    def done(self):
        return self.kept + self.ran

    def line(self):
        elapsed = self.clock() - self.t0
        left = eta(self.ran, self.total - self.done, elapsed)
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return "[%s] %d/%d runs (%.0f%%), elapsed %s, %s" % (
            self.name, self.done, self.total, pct, fmt_duration(elapsed),
            "left: estimating" if left is None else
            "about %s left" % fmt_duration(left))

    def show(self):
        if not self.total:
            return
        if self.live:
            self.out.write("\r\033[K" + self.line())
            self.shown = True
        else:
            self.out.write(self.line() + "\n")
        self.out.flush()

    def clear(self):
        """Take the live line off the screen (before a log line)."""
        if self.live and self.shown:
            self.out.write("\r\033[K")
            self.out.flush()
            self.shown = False

    def skip(self, n=1):
        """N runs of the grid were done before (kept rows): no line."""
        self.kept += n

    def tick(self, n=1):
        """N runs done now."""
        self.ran += n
        self.show()

    def finish(self):
        if self.live and self.shown:
            self.out.write("\n")
            self.out.flush()
            self.shown = False


def norm(v):
    """A key value as runs.csv spells it once read back."""
    v = table._num(None if v is None else str(v))
    return "" if v is None else str(v)


class Resume:
    """The keys of the rows kept from an interrupted run."""

    def __init__(self, rows=(), columns=None):
        self.columns = tuple(columns or ())
        self.keys = {self.key(r) for r in rows} if self.columns else set()

    def key(self, row):
        return tuple(norm(row.get(c)) for c in self.columns)

    def done(self, **key):
        """Whether the run named by KEY (the scenario's key columns) has
        its row already."""
        if not self.keys:
            return False
        missing = [c for c in self.columns if c not in key]
        if missing:
            raise KeyError("resume key lacks %s" % ", ".join(missing))
        return self.key(key) in self.keys


def check_options(meta_path, options):
    """Refuse (SystemExit) to resume a run whose meta.json recorded other
    options than OPTIONS (or none: a run from before --resume)."""
    try:
        rec = json.loads(Path(meta_path).read_text())
    except (OSError, ValueError) as e:
        raise SystemExit("bench/run --resume: cannot read %s (%s): nothing "
                         "to resume" % (meta_path, e))
    old = rec.get("options")
    if old is None:
        raise SystemExit("bench/run --resume: %s records no options (its "
                         "run predates --resume); run again without "
                         "--resume" % meta_path)
    new = json.loads(json.dumps(options))
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if diff:
        raise SystemExit(
            "bench/run --resume: the interrupted run had other options, "
            "resuming would mix two grids:\n" + "".join(
                "  %s: was %s, now %s\n" % (k, json.dumps(old.get(k)),
                                            json.dumps(new.get(k)))
                for k in diff) + "rerun with the same options, or without "
            "--resume")
    return rec

"""Host tests of bench/lib/progress.py and the runner's use of it: the time
left, the status line on a terminal and in a log, which runs --resume
skips, and that a resume with other options is refused."""
import argparse
import io
import json
import sys
import types

import pytest

from bench.lib import progress, runner, table


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_fmt_duration():
    assert progress.fmt_duration(0) == "0:00"
    assert progress.fmt_duration(59.4) == "0:59"
    assert progress.fmt_duration(61) == "1:01"
    assert progress.fmt_duration(3600) == "1:00:00"
    assert progress.fmt_duration(3 * 3600 + 25 * 60 + 7) == "3:25:07"
    assert progress.fmt_duration(-5) == "0:00"


def test_eta_is_the_pace_so_far_times_the_runs_left():
    assert progress.eta(0, 10, 50.0) is None         # no pace yet
    assert progress.eta(4, 6, 100.0) == pytest.approx(150.0)
    assert progress.eta(10, 0, 100.0) == 0
    assert progress.eta(2, -1, 10.0) == 0


def test_kept_runs_count_as_done_but_not_toward_the_pace():
    clock = Clock()
    out = io.StringIO()
    p = progress.Progress("demo", total=10, out=out, clock=clock,
                          live=False)
    p.skip(4)                          # kept from an interrupted run
    clock.t += 30
    p.tick()                           # one run took 30 s
    assert p.done == 5
    assert out.getvalue() == \
        "[demo] 5/10 runs (50%), elapsed 0:30, about 2:30 left\n"


def test_log_output_is_one_plain_line_per_run():
    clock = Clock()
    out = io.StringIO()
    p = progress.Progress("restart", total=3, out=out, clock=clock,
                          live=False)
    for _ in range(3):
        clock.t += 20
        p.tick()
    p.finish()
    lines = out.getvalue().split("\n")
    assert lines == [
        "[restart] 1/3 runs (33%), elapsed 0:20, about 0:40 left",
        "[restart] 2/3 runs (67%), elapsed 0:40, about 0:20 left",
        "[restart] 3/3 runs (100%), elapsed 1:00, about 0:00 left", ""]
    assert "\r" not in out.getvalue()


def test_terminal_output_rewrites_one_line():
    clock = Clock()
    out = io.StringIO()
    p = progress.Progress("iw", total=2, out=out, clock=clock, live=True)
    clock.t += 10
    p.tick()
    clock.t += 10
    p.tick()
    assert "\n" not in out.getvalue()
    assert out.getvalue() == (
        "\r\033[K[iw] 1/2 runs (50%), elapsed 0:10, about 0:10 left"
        "\r\033[K[iw] 2/2 runs (100%), elapsed 0:20, about 0:00 left")
    p.clear()                          # a log line comes
    assert out.getvalue().endswith("\r\033[K") and not p.shown
    p.show()
    p.finish()                         # the last state stays on screen
    assert out.getvalue().endswith("about 0:00 left\n")


def test_nothing_shown_without_a_grid():
    out = io.StringIO()
    p = progress.Progress("x", out=out, live=False)
    p.tick()
    assert out.getvalue() == ""


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_live_only_on_a_real_terminal_outside_the_vm(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(progress, "in_vm", lambda: False)
    assert progress.live_output(FakeTTY())
    assert not progress.live_output(io.StringIO())     # a log file
    monkeypatch.setenv("TERM", "dumb")
    assert not progress.live_output(FakeTTY())
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(progress, "in_vm", lambda: True)  # virtme-ng
    assert not progress.live_output(FakeTTY())


def test_resume_keys_compare_as_runs_csv_spells_them(tmp_path):
    table.write_csv(tmp_path / "runs.csv", [
        {"delay_ms": 20, "policy": "bbr", "rep": 0, "think_s": 0.5},
        {"delay_ms": 150, "policy": "bbr", "rep": 1, "think_s": 1}])
    r = progress.Resume(table.read_csv(tmp_path / "runs.csv"),
                        ("delay_ms", "policy", "rep", "think_s"))
    assert r.done(delay_ms=20, policy="bbr", rep=0, think_s=0.5)
    assert r.done(delay_ms="150", policy="bbr", rep="1", think_s="1")
    assert not r.done(delay_ms=20, policy="bbr", rep=1, think_s=0.5)
    assert not r.done(delay_ms=150, policy="cubic", rep=1, think_s=1)
    with pytest.raises(KeyError):
        r.done(delay_ms=20, policy="bbr")
    assert not progress.Resume().done(anything=1)


def test_check_options(tmp_path):
    opts = {"quick": False, "reps": 3, "jobs": None,
            "only": {"policy": ["bbr"]}, "trace": False}
    path = tmp_path / "meta.json"
    path.write_text(json.dumps({"options": opts, "in_progress": True}))
    assert progress.check_options(path, opts)["in_progress"]
    with pytest.raises(SystemExit) as e:
        progress.check_options(path, dict(opts, reps=5))
    assert "reps: was 3, now 5" in str(e.value)
    with pytest.raises(SystemExit) as e:
        progress.check_options(path, dict(opts, only={}))
    assert "only: was" in str(e.value)
    path.write_text(json.dumps({"args": {"reps": 3}}))
    with pytest.raises(SystemExit) as e:
        progress.check_options(path, opts)
    assert "records no options" in str(e.value)
    with pytest.raises(SystemExit):
        progress.check_options(tmp_path / "none.json", opts)


# -- the runner with a scenario of its own: a grid of 3 cells x 2 reps in
# an interleaved order, interrupted after STOP runs, then resumed

CELLS = ("a", "b", "c")


def _scenario(log, stop=None):
    mod = types.ModuleType("bench.scenarios.fakegrid")
    mod.RESUME_KEY = ("cell", "rep")

    def run(ctx):
        ctx.reps = ctx.reps or 2
        ctx.grid(len(CELLS) * ctx.reps)
        rows = []
        for rep in range(ctx.reps):
            order = CELLS if rep % 2 == 0 else CELLS[::-1]
            for cell in order:
                if ctx.skip(cell=cell, rep=rep):
                    continue
                if stop is not None and len(log) == stop:
                    raise KeyboardInterrupt
                log.append((cell, rep))
                rows.append({"cell": cell, "rep": rep, "value": len(log)})
                ctx.save(rows)
                ctx.tick()
        return rows

    def report(ctx, rows):
        (ctx.outdir / "table.md").write_text(
            "# fakegrid\n\n| cell | rep |\n|---|---|\n" + "".join(
                "| %s | %s |\n" % (r["cell"], r["rep"]) for r in rows))
    mod.run, mod.report = run, report
    return mod


def _args(tmp_path, **kw):
    a = dict(scenario=["fakegrid"], quick=False, reps=None, jobs=None,
             out=str(tmp_path / "out"), only={}, append=False,
             resume=False, trace=False, report_only=False)
    a.update(kw)
    return argparse.Namespace(**a)


def test_resume_runs_only_the_missing_pairs_in_order(tmp_path, monkeypatch,
                                                     capsys):
    log = []
    monkeypatch.setitem(sys.modules, "bench.scenarios.fakegrid",
                        _scenario(log, stop=4))
    with pytest.raises(KeyboardInterrupt):
        runner.run_one("fakegrid", _args(tmp_path))
    out = tmp_path / "out"
    assert log == [("a", 0), ("b", 0), ("c", 0), ("c", 1)]
    m = json.loads((out / "meta.json").read_text())
    assert m["in_progress"] and m["options"]["reps"] is None
    assert len(table.read_csv(out / "runs.csv")) == 4

    # other options: refused, nothing run, nothing overwritten
    log2 = []
    monkeypatch.setitem(sys.modules, "bench.scenarios.fakegrid",
                        _scenario(log2))
    with pytest.raises(SystemExit) as e:
        runner.run_one("fakegrid", _args(tmp_path, resume=True, reps=3))
    assert "reps: was null, now 3" in str(e.value)
    assert log2 == [] and len(table.read_csv(out / "runs.csv")) == 4

    capsys.readouterr()
    runner.run_one("fakegrid", _args(tmp_path, resume=True))
    assert log2 == [("b", 1), ("a", 1)]      # the rest, in the grid's order
    rows = table.read_csv(out / "runs.csv")
    assert [(r["cell"], r["rep"]) for r in rows] == \
        [("a", 0), ("b", 0), ("c", 0), ("c", 1), ("b", 1), ("a", 1)]
    m = json.loads((out / "meta.json").read_text())
    assert "in_progress" not in m and m["runs"] == 6
    assert m["resumed_from"]["started_utc"]
    printed = capsys.readouterr().out
    assert "[fakegrid] 5/6 runs" in printed     # the kept 4 count as done
    assert "[fakegrid] 6/6 runs" in printed
    readme = (out / "README.md").read_text()
    assert "bench/run fakegrid --out " in readme and "| c | 1 |" in readme


def test_an_appending_run_is_not_resumed(tmp_path, monkeypatch):
    log = []
    monkeypatch.setitem(sys.modules, "bench.scenarios.fakegrid",
                        _scenario(log))
    runner.run_one("fakegrid", _args(tmp_path))
    monkeypatch.setitem(sys.modules, "bench.scenarios.fakegrid",
                        _scenario(log, stop=8))
    with pytest.raises(KeyboardInterrupt):
        runner.run_one("fakegrid", _args(tmp_path, append=True))
    assert "earlier_runs" in json.loads(
        (tmp_path / "out" / "meta.json").read_text())
    with pytest.raises(SystemExit) as e:
        runner.run_one("fakegrid", _args(tmp_path, resume=True))
    assert "--append run" in str(e.value) and len(log) == 8


def test_a_run_without_resume_starts_over(tmp_path, monkeypatch):
    log = []
    monkeypatch.setitem(sys.modules, "bench.scenarios.fakegrid",
                        _scenario(log))
    runner.run_one("fakegrid", _args(tmp_path))
    runner.run_one("fakegrid", _args(tmp_path))
    assert len(log) == 12
    assert len(table.read_csv(tmp_path / "out" / "runs.csv")) == 6


def test_resume_and_append_exclude_each_other():
    with pytest.raises(SystemExit):
        runner.main(["demo", "--resume", "--append", "--report-only"])

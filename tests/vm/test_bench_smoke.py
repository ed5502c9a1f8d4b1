"""VM smoke test of the bench: every scenario, in a trimmed --quick
--reps 1 form, produces well-formed outputs (runs.csv with the scenario's
columns and measured values, table.md with a table, PNG plots, meta.json
with kernel/commit/tc).  Asserts the machinery, never timings."""
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "vm" / "bench-smoke"
PNG = b"\x89PNG\r\n\x1a\n"

# scenario -> (--only filter, columns every good row must have)
CASES = {
    "restart": ("delay_ms=20,policy=cocktail-auto",
                ["seconds", "ideal_s", "burst_retrans", "cwnd_before_idle"]),
    "iw": ("variant=route-iw2,variant=cocktail-iw2",
           ["seconds", "round_trips", "first_flight"]),
    "keepalive": ("policy=cocktail-auto",
                  ["seconds", "retrans", "cell_drops"]),
    "phttp": ("server=phttp-split-nagle,policy=linux-default",
              ["ms"]),
    "overhead": ("policy=linux-default", ["mbit_s"]),
}


def run_scenario(name, only):
    out = OUT / name
    cmd = [sys.executable, "-m", "bench.lib.runner", name, "--quick",
           "--reps", "1", "--out", str(out)]
    if only:
        cmd += ["--only", only]
    env = dict(os.environ, MPLCONFIGDIR=str(REPO / "build" / "mpl"))
    p = subprocess.run(cmd, cwd=REPO, text=True, capture_output=True,
                       timeout=420, env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_scenario_outputs(name):
    if name == "iw" and not (REPO / "scripts" / "tcp-tune").exists():
        pytest.skip("scripts/tcp-tune has not landed")
    only, cols = CASES[name]
    if not (REPO / "kmod" / "tcp_cocktail.ko").exists():
        only = ",".join(x for x in only.split(",") if "cocktail" not in x)
    out = run_scenario(name, only)
    with open(out / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows, "no rows in runs.csv"
    good = [r for r in rows if not r.get("error")]
    assert good, "every run failed: %s" % rows[0].get("error")
    for r in good:
        for c in cols:
            assert r.get(c) not in (None, ""), "%s missing in %s" % (c, r)
            float(r[c])
    md = (out / "table.md").read_text()
    assert md.startswith("# ") and "\n|" in md and "---|" in md
    pngs = list(out.glob("*.png"))
    assert pngs and all(p.read_bytes()[:8] == PNG for p in pngs)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["scenario"] == name and meta["kernel"] == os.uname().release
    assert meta["git_commit"] and meta["tc"], meta
    assert meta["runs"] == len(rows)


def test_restart_rows_are_consistent():
    """The burst retransmissions and times the restart smoke run wrote are
    plausible (non-negative, time above one one-way delay)."""
    path = OUT / "restart" / "runs.csv"
    if not path.exists():
        pytest.skip("restart smoke run did not produce runs.csv")
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("error"):
                continue
            assert int(r["burst_retrans"]) >= 0
            assert float(r["seconds"]) > 0.02
            assert int(r["mss"]) == 1460


def test_ooo_reports_skip_or_results():
    out = run_scenario("ooo", "")
    md = (out / "table.md").read_text()
    if not (REPO / "daemon" / "oooprobed").exists():
        assert "skipped" in md
        pytest.skip("daemon/oooprobed has not landed; ooo writes a skip note")
    assert "| statistic |" in md


def test_bad_arguments_are_refused():
    p = subprocess.run([sys.executable, "-m", "bench.lib.runner", "nosuch"],
                       cwd=REPO, text=True, capture_output=True)
    assert p.returncode == 2 and "invalid choice" in p.stderr
    p = subprocess.run([sys.executable, "-m", "bench.lib.runner", "restart",
                        "--reps", "0"], cwd=REPO, text=True,
                       capture_output=True)
    assert p.returncode == 2 and "--reps" in p.stderr

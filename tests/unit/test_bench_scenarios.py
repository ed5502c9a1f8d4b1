"""Host tests of the scenario registry (bench/scenarios/__init__.py: the
one list bench/run, the runner and bench/bench.mk ask) and of the demo
and pacerate scenarios' report step on their committed results."""
import importlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from bench import scenarios
from bench.lib import policies, runner, table
from bench.scenarios import demo, pacerate

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", scenarios.NAMES)
def test_every_registered_scenario_is_a_module(name):
    mod = importlib.import_module("bench.scenarios." + name)
    assert callable(mod.run) and callable(mod.report)
    assert mod.RESUME_KEY and all(isinstance(c, str)
                                  for c in mod.RESUME_KEY)


def test_every_module_is_registered():
    mods = {p.stem for p in (REPO / "bench" / "scenarios").glob("*.py")
            if not p.stem.startswith("_")}
    assert mods == set(scenarios.NAMES)
    assert set(scenarios.SUITE) <= set(scenarios.NAMES)


def test_bench_run_and_make_ask_the_registry():
    p = subprocess.run([str(REPO / "bench" / "run")], cwd=REPO, text=True,
                       capture_output=True)
    assert p.returncode == 2
    listed = re.search(r"scenarios: (.*) \(", p.stderr).group(1).split()
    assert listed == list(scenarios.NAMES)
    p = subprocess.run([str(REPO / "bench" / "run"), "nosuch"], cwd=REPO,
                       text=True, capture_output=True)
    assert p.returncode == 2 and "unknown scenario 'nosuch'" in p.stderr
    p = subprocess.run(["make", "--no-print-directory", "-s", "--eval",
                        "print-bench: ; @echo $(BENCH_SCENARIOS)",
                        "print-bench"], cwd=REPO, text=True,
                       capture_output=True)
    assert p.stdout.split() == list(scenarios.SUITE), p.stderr
    assert runner.SCENARIOS == scenarios.NAMES


def test_bench_run_refuses_an_out_the_vm_cannot_write(tmp_path):
    """The VM writes only inside the repository: an --out elsewhere is
    refused on the host, before the VM starts, in either spelling."""
    for args in (["--out", str(tmp_path / "r")],
                 ["--out=%s" % (tmp_path / "r")]):
        p = subprocess.run([str(REPO / "bench" / "run"), "restart",
                            "--quick"] + args, cwd=REPO, text=True,
                           capture_output=True, timeout=60)
        assert p.returncode == 2, p.stderr
        assert "is outside %s, which is all the VM can write" % REPO in \
            p.stderr, p.stderr
    assert not (tmp_path / "r").exists()


def test_help_lists_the_scenarios_and_resume():
    p = subprocess.run([str(REPO / "bench" / "run"), "--help"], cwd=REPO,
                       text=True, capture_output=True)
    assert p.returncode == 0
    for name in scenarios.NAMES:
        assert "\n  %s " % name in p.stdout
    assert "--resume" in p.stdout


def test_demo_and_pacerate_policies_are_the_policy_tables():
    for name in demo.POLICIES + [n for s in pacerate.SETTINGS.values()
                                 for n in s[2]]:
        assert name in policies.EVERY
    d = {n: policies.EVERY[n] for n in demo.POLICIES}
    assert (d["linux-default"].cc, d["linux-default"].ssai) == ("cubic", 1)
    assert (d["cubic-nossai"].cc, d["cubic-nossai"].ssai) == ("cubic", 0)
    assert d["cocktail-default"].defaults
    # pacerate's module runs with cwv=0: its cocktail policies say so
    for n, p in {p.name: p for s in pacerate.SETTINGS.values()
                 for p in pacerate.variants(s[2])}.items():
        assert p.cocktail["cwv"] in (0, 1) and n.endswith(
            "-cwv%d" % p.cocktail["cwv"])
    for old, new in pacerate.LEGACY_NAMES.items():
        assert new in policies.EVERY, old


def test_demo_and_pacerate_options():
    assert demo.chosen({}) == ["quiet", "competitor"]
    assert demo.chosen({"path": ["competitor"], "policy": ["bbr"]}) == \
        ["competitor"]
    for bad in ({"nosuch": ["1"]}, {"path": ["lossy"]}):
        with pytest.raises(SystemExit):
            demo.chosen(bad)
    assert pacerate.warmup("bulk") == (1000, 1)
    assert pacerate.warmup("fetches") == (100, 3)
    with pytest.raises(SystemExit):
        pacerate.variants(["cubic-ssr"])      # an old name: not a policy
    with pytest.raises(SystemExit):
        pacerate.chosen({"setting": ["nosuch"]})
    assert pacerate.chosen({"setting": ["small", "app"]}) == ["app", "small"]


def demo_row(path, policy, rep, seconds, retrans, before=None, during=None):
    return {"path": path, "policy": policy, "rep": rep, "seconds": seconds,
            "ideal_s": 0.2, "ratio_ideal": seconds / 0.2, "mss": 1448,
            "burst_retrans": retrans, "cross": demo.PATHS[path],
            "cross_tcp_kbit_before": before, "cross_tcp_kbit_burst": during}


def test_demo_verdicts_follow_the_scorecard():
    rows = []
    for rep in range(3):
        rows += [demo_row("quiet", "linux-default", rep, 0.5, 0),
                 demo_row("quiet", "cubic-nossai", rep, 0.25, 3),
                 demo_row("quiet", "bbr", rep, 0.22, 0),
                 demo_row("quiet", "cocktail-default", rep, 0.22, 0),
                 # the competitor: BBR is faster but costs the bulk flow
                 # (5000 -> 1000 kbit/s over 0.3 s: 103.6 segments)
                 demo_row("competitor", "linux-default", rep, 0.5, 0,
                          5000, 4000),
                 demo_row("competitor", "cubic-nossai", rep, 0.45, 2,
                          5000, 4000),
                 demo_row("competitor", "bbr", rep, 0.3, 9, 5000, 1000),
                 demo_row("competitor", "cocktail-default", rep, 0.4, 0,
                          5000, 3000)]
    q = demo.path_md(rows, "quiet")
    assert "| cocktail-default | 0.220 (0.220–0.220) | 1.10 | 0.44 | 0.0 | – " \
        "| 0.0 | – |" in q
    assert [ln.split(" | ")[0] for ln in q.splitlines()
            if ln.startswith("| ") and " | 0." in ln] == [
                "| " + p for p in demo.POLICIES]
    assert "**won**: 1.00x the fastest baseline's time (bbr)" in q
    c = demo.path_md(rows, "competitor")
    assert "neither won nor dominated: 1.33x the fastest baseline's " \
        "time (bbr)" in c
    # the same rows where BBR costs nothing more: it dominates
    rows = [dict(r, cross_tcp_kbit_burst=4000, burst_retrans=0)
            if r["policy"] == "bbr" else r for r in rows]
    # 3 repetitions each, every pair apart: p = 1/20
    c = demo.path_md(rows, "competitor")
    assert "**dominated** by bbr: " in c
    assert "(one-sided Mann–Whitney test over the repetitions: bbr p " \
        "0.050)" in c
    assert demo.path_md(rows, "nosuch") == ""


def test_demo_table_regenerates_from_the_committed_runs(tmp_path):
    res = REPO / "bench" / "results" / "demo"
    rows = table.read_csv(res / "runs.csv")
    (tmp_path / "flight.csv").write_bytes((res / "flight.csv").read_bytes())
    demo.write_tables(tmp_path, rows)
    assert (tmp_path / "table.md").read_bytes() == \
        (res / "table.md").read_bytes()
    for png in ["demo.png"] + ["flight-%s.png" % p for p in demo.PATHS]:
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    m = json.loads((res / "meta.json").read_text())
    assert runner.command("demo", res, m, demo) == "bench/run demo"


def test_pacerate_tables_regenerate_from_the_committed_runs(tmp_path):
    res = REPO / "bench" / "results" / "pacerate"
    rows = table.read_csv(res / "runs.csv")
    assert list(dict.fromkeys(r["setting"] for r in rows)) == \
        list(pacerate.SETTINGS)
    for name in pacerate.SETTINGS:
        mine = [r for r in rows if r["setting"] == name]
        (tmp_path / name).mkdir()
        pacerate.write_tables(tmp_path / name, mine,
                              pacerate.facts(res / name / "meta.json"))
        assert (tmp_path / name / "table.md").read_bytes() == \
            (res / name / "table.md").read_bytes()
        # the setting's policies, under the names they ran with
        m = json.loads((res / name / "meta.json").read_text())
        assert [pacerate.LEGACY_NAMES.get(v["name"], v["name"])
                for v in m["variants"]] == pacerate.SETTINGS[name][2]
        assert m["limit"] == pacerate.SETTINGS[name][1]


def test_readme_has_command_notes_tables_and_plots(tmp_path):
    out = tmp_path / "overhead-x"
    out.mkdir()
    (out / "meta.json").write_text(json.dumps({
        "scenario": "overhead", "date_utc": "2026-01-02T03:04:05+00:00",
        "kernel": "6.1.0", "git_commit": "0123456789abcdef",
        "git_dirty": False,
        "options": {"quick": True, "reps": 2, "jobs": None,
                    "only": {"policy": ["bbr", "linux-default"]},
                    "trace": False}}))
    (out / "notes.md").write_text("Hand-written.\n")
    (out / "table.md").write_text("# overhead\n\n| a |\n|---|\n| 1 |\n")
    (out / "x.png").write_bytes(b"")
    runner.write_readme("overhead", out)
    md = (out / "README.md").read_text()
    assert "# Bench results: overhead-x (scenario overhead)" in md
    assert ("    bench/run overhead --quick --reps 2 --only "
            "policy=bbr,policy=linux-default --out %s\n" % out) in md
    assert md.index("Hand-written.") < md.index("## overhead\n")
    assert "| 1 |" in md and "- [x.png](x.png)" in md

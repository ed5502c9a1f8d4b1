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


def test_help_lists_the_scenarios_and_resume():
    p = subprocess.run([str(REPO / "bench" / "run"), "--help"], cwd=REPO,
                       text=True, capture_output=True)
    assert p.returncode == 0
    for name in scenarios.NAMES:
        assert "\n  %s " % name in p.stdout
    assert "--resume" in p.stdout


def test_demo_policies_are_the_policy_tables():
    for name in demo.VARIANTS + [n for s in pacerate.SETTINGS.values()
                                 for n in s[2]]:
        assert name in policies.EVERY
    d = {p.name: p for p in demo.variants(demo.VARIANTS)}
    assert (d["linux-default"].cc, d["linux-default"].ssai) == ("cubic", 1)
    assert (d["cubic-nossai"].cc, d["cubic-nossai"].ssai) == ("cubic", 0)
    # the demo's module runs with cwv=0: its cocktail policies say so
    for n, p in d.items():
        if p.cc == "cocktail":
            assert p.cocktail["cwv"] == 0 and n.endswith("-cwv0")
    for old, new in demo.LEGACY_NAMES.items():
        assert new in policies.EVERY, old


def test_demo_settings_from_only():
    assert demo.settings({}) == demo.DEFAULTS
    s = demo.settings({"rtt_ms": ["100"], "limit": ["20"], "warm": ["bulk"],
                       "variant": ["bbr"]})
    assert (s["rtt_ms"], s["limit"], s["warm"]) == (100.0, 20, "bulk")
    assert demo.warmup("bulk") == (1000, 1)
    assert demo.warmup("fetches") == (100, 3)
    for bad in ({"nosuch": ["1"]}, {"limit": ["x"]}, {"warm": ["lots"]},
                {"limit": ["1", "2"]}):
        with pytest.raises(SystemExit):
            demo.settings(bad)
    with pytest.raises(SystemExit):
        demo.variants(["cubic-ssr"])          # the old name: not a policy
    with pytest.raises(SystemExit):
        pacerate.chosen({"setting": ["nosuch"]})
    assert pacerate.chosen({"setting": ["small", "app"]}) == ["app", "small"]


def test_demo_table_regenerates_from_the_committed_runs(tmp_path):
    res = REPO / "bench" / "results" / "demo"
    rows = table.read_csv(res / "runs.csv")
    demo.write_tables(tmp_path, rows, demo.facts(res / "meta.json"))
    assert (tmp_path / "table.md").read_bytes() == \
        (res / "table.md").read_bytes()
    assert (tmp_path / "demo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    m = json.loads((res / "meta.json").read_text())
    assert runner.command("demo", res, m, demo) == "bench/run demo --reps 5"


def test_pacerate_tables_regenerate_from_the_committed_runs(tmp_path):
    res = REPO / "bench" / "results" / "pacerate"
    rows = table.read_csv(res / "runs.csv")
    assert list(dict.fromkeys(r["setting"] for r in rows)) == \
        list(pacerate.SETTINGS)
    for name in pacerate.SETTINGS:
        mine = [r for r in rows if r["setting"] == name]
        (tmp_path / name).mkdir()
        demo.write_tables(tmp_path / name, mine,
                          demo.facts(res / name / "meta.json"))
        assert (tmp_path / name / "table.md").read_bytes() == \
            (res / name / "table.md").read_bytes()
        m = json.loads((res / name / "meta.json").read_text())
        legacy = demo.legacy_options(m)
        names = legacy["only"].get("variant")
        assert names == pacerate.SETTINGS[name][2]
        assert legacy["only"].get("limit", ["100"]) == \
            [str(pacerate.SETTINGS[name][1])]


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

"""The skip policy of conftest.py: a skip fails the run unless the test is
on the allow-list. Checked by running pytest on planted tests inside the
checkout (conftest.py applies to files under it)."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLANT = REPO / "build" / "unit" / "skip_policy"


def run(body):
    PLANT.mkdir(parents=True, exist_ok=True)
    f = PLANT / "test_planted.py"
    f.write_text("import pytest\n\n" + body)
    return subprocess.run([sys.executable, "-m", "pytest", "-q",
                           "-p", "no:cacheprovider", str(f)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_unexpected_skip_fails_the_run():
    r = run("def test_a():\n    pytest.skip('no tool here')\n")
    assert r.returncode == 1, r.stdout
    assert "unexpected skip" in r.stdout and "no tool here" in r.stdout


def test_skip_in_a_fixture_fails_too():
    r = run("@pytest.fixture\ndef f():\n    pytest.skip('not root')\n\n"
            "def test_b(f):\n    pass\n")
    assert r.returncode == 1, r.stdout
    assert "unexpected skip" in r.stdout


def test_passing_tests_still_pass():
    r = run("def test_c():\n    assert True\n")
    assert r.returncode == 0, r.stdout

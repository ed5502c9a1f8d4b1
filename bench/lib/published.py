"""The published numbers the bench reproduces (bench/published/*.csv, '#'
lines are citations) as lists of dicts."""
import csv
from pathlib import Path

DIR = Path(__file__).resolve().parents[1] / "published"


def load(name):
    path = DIR / name
    with open(path, newline="") as f:
        rows = [ln for ln in f if not ln.startswith("#")]
    out = []
    for r in csv.DictReader(rows):
        for k, v in r.items():
            try:
                r[k] = float(v) if "." in v else int(v)
            except (TypeError, ValueError):
                pass
        out.append(r)
    return out


def chan():
    """{(queue, burst, delay_ms, policy): seconds}; tables 5.x repeat the
    3.x SSR/RBP/CWV values and add Cocktail."""
    return {(r["queue"], r["burst_segments"], r["delay_ms"], r["policy"]):
            r["seconds"] for r in load("chan2001_restart.csv")}

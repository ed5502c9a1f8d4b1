"""VM smoke test of the bench: every scenario of the registry
(bench/scenarios/__init__.py), in a trimmed --quick --reps 1 form,
produces well-formed outputs (runs.csv with the scenario's columns and
measured values, table.md with a table, PNG plots, meta.json with
kernel/commit/tc, README.md with the command).  Asserts the machinery,
never timings."""
import contextlib
import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "vm" / "bench-smoke"
# bench/run's matplotlib configuration (its font cache), set before the
# runner, which these tests import, imports matplotlib
MPLCONFIG = REPO / "build" / "mpl"
os.environ["MPLCONFIGDIR"] = str(MPLCONFIG)

import pytest  # noqa: E402

from bench.scenarios import NAMES  # noqa: E402
from cocktail_lab import modparams  # noqa: E402
from conftest import KMOD  # noqa: E402

RUN_TIMEOUT_S = 900     # one smoke scenario; they take 1-2 minutes under TCG
PNG = b"\x89PNG\r\n\x1a\n"

# scenario -> (--only filter, columns every good row must have)
CASES = {
    # restart: both quick delays side by side (--jobs 2), UDP cross
    # traffic (test_restart_tcp_cross runs the TCP kind), the module's
    # auto and the BPF build's
    "restart": ("policy=cocktail-auto,policy=bpf-auto,cross=udp",
                ["seconds", "ideal_s", "burst_retrans", "cwnd_before_idle",
                 "cross_udp_dropped"]),
    "iw": ("variant=route-iw2,variant=cocktail-iw2",
           ["seconds", "round_trips", "first_flight"]),
    "keepalive": ("policy=cocktail-auto",
                  ["seconds", "retrans", "cell_drops"]),
    # the paper's unfixed server, "both fixes", Apache's 4 KB writes
    # and on the socket-buffer link, the 4 KB buffer and its reference
    "phttp": ("server=phttp-split-nagle,server=phttp-together-nodelay,"
              "server=phttp-4k-together,server=nginx-keepalive,"
              "server=phttp-4k-nodelay,server=phttp-4k-sndbuf-4k,"
              "policy=linux-default",
              ["ms", "cell_retrans"]),
    "overhead": ("policy=linux-default", ["mbit_s"]),
    # both paths side by side, Linux's default and the module's
    "demo": ("policy=linux-default,policy=cocktail-default",
             ["seconds", "ideal_s", "burst_retrans", "t_write"]),
    "fleet": ("policy=cocktail-default,mode=sync",
              ["seconds", "retrans"]),
    # the quick grid's bulk cell of four variants and the fairness cell
    # (its CUBIC epoch cell, 80 s of transfers, runs with the full grid)
    "growth": ("cell=100ms-10mbit-1bdp,cell=fair", ["mbit_s", "retrans"]),
    # one of Chan's small experiments (two variants), with its capture
    "chan": ("experiment=nagle", ["seconds", "retrans", "longest_wait_ms"]),
    # six IW10 connections against one pipelined, 20-packet queue
    "parallel": ("variant=linux-6x,variant=linux-1x-pipelined",
                 ["seconds", "retrans", "drops", "burst", "credit"]),
    # persistent and non-persistent with ICP, and persistent with the
    # study's window, 12 URLs
    "cache": ("", ["seconds", "pass_s", "pass_retrans", "parent_conns",
                   "icp_sent", "icp_rtt_ms", "child_max_win"]),
}
# scenarios with outputs of their own shape: a test each below, but the
# scorecard's (a host scenario: tests/unit/test_bench_scorecard.py)
DEDICATED = ("ooo", "pacerate", "scorecard")


EXTRA_ARGS = {"restart": ["--jobs", "2", "--trace"],
              "keepalive": ["--jobs", "2"]}


def runner_env():
    """The environment bench/run gives the runner: the lab library and
    tcp-tune's package on the path."""
    path = [str(REPO / "lab"), str(REPO / "scripts")]
    return dict(os.environ, MPLCONFIGDIR=str(MPLCONFIG),
                PYTHONPATH=os.pathsep.join(
                    path + [p for p in [os.environ.get("PYTHONPATH")] if p]))


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout("the scenario ran past %d s" % RUN_TIMEOUT_S)


def run_runner(argv):
    """bench/run's runner (bench.lib.runner.main) in this process: its
    imports, matplotlib's above all, take tens of seconds a process in the
    VM, once here instead of once a scenario. Returns (exit status, what
    it printed); a scenario still running after RUN_TIMEOUT_S fails."""
    from bench.lib import runner
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(RUN_TIMEOUT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = runner.main(argv)
            except SystemExit as e:     # argparse's errors and the runner's
                rc = e.code if isinstance(e.code, int) else 1
                if isinstance(e.code, str):
                    print(e.code, file=sys.stderr)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return rc, out.getvalue() + err.getvalue()


def run_scenario(name, only):
    out = OUT / name
    argv = [name, "--quick", "--reps", "1", "--out", str(out)] + \
        EXTRA_ARGS.get(name, [])
    if only:
        argv += ["--only", only]
    rc, text = run_runner(argv)
    assert rc == 0, text[-6000:]
    return out


def test_every_scenario_is_smoke_tested():
    assert set(CASES) | set(DEDICATED) == set(NAMES), \
        "a scenario of the registry without a smoke case"


@pytest.mark.parametrize("name", [n for n in NAMES if n not in DEDICATED])
def test_scenario_outputs(name):
    only, cols = CASES[name]
    assert (KMOD / "tcp_cocktail.ko").exists(), \
        "%s/tcp_cocktail.ko is not built (make modules)" % KMOD
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
    assert meta["options"]["reps"] == 1 and meta["options"]["quick"]
    readme = (out / "README.md").read_text()
    assert "bench/run %s --quick --reps 1" % name in readme
    assert md.rstrip("\n").splitlines()[-1] in readme


def test_restart_rows_are_consistent():
    """The burst retransmissions and times the restart smoke run wrote are
    plausible (non-negative, time above one one-way delay), and its two
    cells ran side by side (--jobs 2), each on its own topology."""
    path = OUT / "restart" / "runs.csv"
    if not path.exists():
        pytest.skip("restart smoke run did not produce runs.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        assert r["batch_cells"] == "2", r
        assert 0 <= float(r["batch_cpu_busy"]) <= 1, r
        if r.get("error"):
            continue
        assert int(r["burst_retrans"]) >= 0
        assert float(r["seconds"]) > int(r["delay_ms"]) / 1000.0
        assert int(r["mss"]) == 1460
        assert float(r["cross_kbit_sent"]) > 0
    assert sorted({int(r["delay_ms"]) for r in rows}) == [20, 150]
    meta = json.loads((OUT / "restart" / "meta.json").read_text())
    assert meta["args"]["jobs"] == 2
    assert sorted(t["delay_ms"] for t in meta["tc"]) == [20, 150]
    if not modparams.loaded(modparams.COCKTAIL):
        return
    # --trace: one restart event per measured burst, attributed to the
    # policy that was applied, auto resolved by each cell's path RTT
    assert meta["trace"]["events"] >= 2 and meta["trace"]["lost"] == 0
    with open(OUT / "restart" / "restarts.csv", newline="") as f:
        ev = [r for r in csv.DictReader(f)
              if r["event"] == "cocktail_restart"]
    assert len(ev) == 2, ev
    assert {r["bench_policy"] for r in ev} == {"cocktail-auto"}
    assert {r["requested"] for r in ev} == {"auto"}
    by_rtt = sorted(ev, key=lambda r: int(r["path_rtt_us"]))
    assert [r["applied"] for r in by_rtt] == ["ssr", "pace"]
    # the BPF build, beside it in the same cells, decided the same: its
    # counters (it has no tracepoints) and the report's comparison
    bpf = [r for r in rows
           if r["policy"] == "bpf-auto" and not r.get("error")]
    assert len(bpf) == 2, rows
    for r in bpf:
        cnt = dict(kv.split("=") for kv in r["module_counters"].split())
        assert cnt.get("auto_ssr") == "1" and cnt.get("auto_pace") == "1", r
    md = (OUT / "restart" / "table.md").read_text()
    assert "## the BPF build beside the module" in md
    assert "| yes (auto: same choice in 2 of 2 cells) |" in md, md[-2000:]


def _counters(row):
    """A row's `module_counters` ("name=N ...") as {name: N}."""
    return {k: int(v) for k, v in (kv.split("=") for kv in
                                   row["module_counters"].split())}


def test_fleet_counts_restarts():
    """The fleet's rows carry the module's counters over their cell: the
    default's measured restarts, one for each request after an idle
    period (or fewer, where a request followed within an RTO), each
    flight's check ended once."""
    path = OUT / "fleet" / "runs.csv"
    if not path.exists():
        pytest.skip("fleet smoke run did not produce runs.csv")
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if not r.get("error")]
    assert rows and {r["policy"] for r in rows} == {"cocktail-default"}
    assert len({r["module_counters"] for r in rows}) == 1, rows[:2]
    cnt = _counters(rows[0])
    assert 1 <= cnt.get("measure", 0) <= len(rows), (cnt, len(rows))
    checks = sum(cnt.get("check_" + v, 0)
                 for v in ("full", "rtt", "rate", "loss"))
    assert 1 <= checks <= cnt["measure"], cnt


def _nginx_rows_or_note(name, key, value):
    """The scenario's runs.csv has measured nginx rows, or (nginx not
    installed) its table.md says they were not measured."""
    out = OUT / name
    if not (out / "runs.csv").exists():
        pytest.skip("%s smoke run did not produce runs.csv" % name)
    md = (out / "table.md").read_text()
    if not Path("/usr/sbin/nginx").exists():
        assert "NOT measured" in md and "nginx" in md, md[:2000]
        return []
    with open(out / "runs.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get(key) == value]
    assert rows, "no %s=%s rows in %s" % (key, value, out / "runs.csv")
    assert all(not r.get("error") for r in rows), rows[0]
    return rows


def test_keepalive_has_nginx_rows():
    rows = _nginx_rows_or_note("keepalive", "server", "nginx")
    if not rows:
        return
    assert {r["policy"] for r in rows} <= {"linux-default", "cocktail-auto"}
    for r in rows:
        assert float(r["seconds"]) > 0 and int(r["retrans"]) >= 0
        # the connection's algorithm, read back with sock_diag
        assert r["ca"] == ("cocktail" if r["policy"] == "cocktail-auto"
                           else "cubic"), r
    md = (OUT / "keepalive" / "table.md").read_text()
    assert "| web | nginx |" in md and "| web | bench |" in md


def test_keepalive_cells_ran_side_by_side():
    """--jobs 2: the quick web cell and the gRPC-like cell ran at once,
    each on its own topology; nginx served the web cell only."""
    path = OUT / "keepalive" / "runs.csv"
    if not path.exists():
        pytest.skip("keepalive smoke run did not produce runs.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    bench = [r for r in rows if r["server"] == "bench"]
    assert {r["kind"] for r in bench} == {"web", "grpc"}
    for r in bench:
        assert r["batch_cells"] == "2", r
        assert 0 <= float(r["batch_cpu_busy"]) <= 1, r
    assert all(r["kind"] == "web" for r in rows if r["server"] == "nginx")
    meta = json.loads((OUT / "keepalive" / "meta.json").read_text())
    assert meta["args"]["jobs"] == 2 and len(meta["tc"]) == 2
    # the module's counters over each batch: its restarts after the 1 s
    # think times on the 200 ms paths, where auto paces (the path's
    # minimum RTT is above auto_rtt_us); one value for the whole batch
    for server in {r["server"] for r in rows}:
        mine = [r for r in rows if r["server"] == server
                and r["policy"] == "cocktail-auto" and not r.get("error")]
        assert mine, (server, rows)
        assert len({r["module_counters"] for r in mine}) == 1, mine
        cnt = _counters(mine[0])
        assert cnt.get("auto_pace", 0) >= 1, (server, cnt)
        assert "auto_ssr" not in cnt, (server, cnt)


def test_cache_hierarchy_as_configured():
    """The smoke run's caches did what each variant says, as the kernel
    and squid saw it: every request answered, the child asked the parent
    over ICP before every request and heard back, reused one connection
    to the parent when persistent and opened one per request when not
    (the client namespace's TCP ActiveOpens less the client's own
    connects; squid also opens a test connection to its peer when it
    starts)."""
    with open(OUT / "cache" / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    # 1% loss each way: a request may time out, not fail
    assert not [r for r in rows if r.get("error") and "Timeout" not in
                r["error"]], rows
    rows = [r for r in rows if not r.get("error")]
    by = {}
    for r in rows:
        by.setdefault(r["variant"], []).append(r)
    assert set(by) == {"persistent-icp-linux-default",
                       "nonpersistent-icp-linux-default",
                       "persistent-icp-linux-default-win8760"}, set(by)
    # the study's window on the wire: squid's tcp_recv_bufsize 8760 makes
    # the child advertise at most that (Linux doubles SO_RCVBUF and
    # offers half), several segments' worth; without it the child
    # offers Linux's default, far more
    small = int(by["persistent-icp-linux-default-win8760"][0][
        "child_max_win"])
    assert 4 * 1448 <= small <= 8760, small
    assert int(by["persistent-icp-linux-default"][0]["child_max_win"]) > \
        4 * 8760
    for v, rs in by.items():
        n = len(rs)
        r = rs[0]
        assert int(r["icp_sent"]) >= n, (v, n, r)
        assert int(r["icp_acked"]) > 0 and int(r["icp_rtt_ms"]) > 0, (v, r)
        if v.startswith("persistent"):
            # one, plus the test connection squid opens to its peer when
            # it starts (and room for one given up after a loss)
            assert 1 <= int(r["parent_conns"]) <= n // 3, (v, n, r)
        else:
            assert int(r["parent_conns"]) >= n, (v, n, r)


def test_phttp_has_nginx_row():
    rows = _nginx_rows_or_note("phttp", "server", "nginx-keepalive")
    if rows:
        assert all(float(r["ms"]) > 0 for r in rows)    # --reps 1: one
        md = (OUT / "phttp" / "table.md").read_text()
        assert "nginx-keepalive linux-default" in md


def test_phttp_table1_rows_and_captures():
    """Every variant of the smoke run stands in the table 1 section with
    a measured mean, and each bench-server variant's captured retrieval
    is kept, listed and read for its waits (three documents each)."""
    out = OUT / "phttp"
    if not (out / "table.md").exists():
        pytest.skip("phttp smoke run did not produce table.md")
    md = (out / "table.md").read_text()
    t1 = md.split("## The paper's table 1 against the variants")[1]
    for v in ("phttp-split-nagle", "phttp-together-nodelay",
              "phttp-4k-together"):
        line = [ln for ln in t1.splitlines()
                if "| %s linux-default |" % v in ln]
        assert line and "not measured" not in line[0], v
        assert (out / ("capture-lan-%s.pcap" % v)).stat().st_size > 0
        waits = [ln for ln in md.splitlines()
                 if ln.startswith("| lan | %s |" % v)]
        assert waits and waits[0].count(" ms") >= 3, waits
    listing = (out / "capture-lan.txt").read_text()
    assert "## phttp-together-nodelay linux-default (lan)" in listing
    assert "server>" in listing and "client>" in listing


def test_phttp_sndbuf_limits_the_flight():
    """On the 1 Mbit/s, 90 ms link the server writing 4 KB pieces with a
    4 KB send buffer (SO_SNDBUF 2,048, which the kernel doubles and
    raises to its minimum) never has more bytes in flight on the wire
    than the kernel's buffer, and fewer than the same server autotuned,
    which has a whole 6,651-byte document out at once; the section
    reports both."""
    out = OUT / "phttp"
    if not (out / "table.md").exists():
        pytest.skip("phttp smoke run did not produce table.md")
    md = (out / "table.md").read_text()
    assert "## Socket buffers (wan1m" in md
    sec = md.split("## Socket buffers")[1].split("\n## ")[0]
    rows = {}
    for ln in sec.splitlines():
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) == 10 and cells[0].startswith("phttp-"):
            rows[cells[0]] = cells
    assert {"phttp-4k-sndbuf-4k", "phttp-4k-nodelay"} <= set(rows), sec
    small, ref = rows["phttp-4k-sndbuf-4k"], rows["phttp-4k-nodelay"]
    assert small[1] == "4 KB" and small[2] == "2048", small
    assert 4096 <= int(small[3]) < 6651, small
    assert 0 < int(small[8]) <= int(small[3]), small
    assert int(ref[8]) >= 6651 > int(small[8]), (ref, small)


def test_ooo_outputs():
    """ooo --quick --reps 1: every run has oooprobed's statistics, every
    connection gave a FLOW event, the daemon's summary agrees with its
    JSON events, holds.csv has one row per held segment."""
    loaded = modparams.loaded(modparams.OOOPROBE)
    out = run_scenario("ooo", "")
    with open(out / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 and all(not r.get("error") for r in rows), rows
    with open(out / "holds.csv", newline="") as f:
        holds = list(csv.DictReader(f))
    for r in rows:
        assert int(r["flows"]) == int(r["flows_started"]) > 0, r
        assert int(r["flows_failed"]) == 0
        assert int(r["data_pkts"]) > int(r["flows"])
        assert r["daemon_json_agree"] == "1", r
        assert int(r["events_lost"]) == 0
        n = [h for h in holds if h["setting"] == r["setting"]]
        assert len(n) == int(r["segments"]) > 0, r["setting"]
        assert float(r["hold_median_ms"]) <= float(r["hold_max_ms"])
        assert "netem" in r["tc_fwd"] and "loss" in r["tc_fwd"]
    md = (out / "table.md").read_text()
    assert md.startswith("# ooo") and "| statistic |" in md
    assert "| hold time median, ms |" in md and "| 293 |" in md
    assert (out / "hold-cdf.png").read_bytes()[:8] == PNG
    meta = json.loads((out / "meta.json").read_text())
    assert meta["runs"] == 2 and len(meta["tc"]) == 2
    assert meta["oooprobe"]["params"]["flows"] == "all"
    assert modparams.loaded(modparams.OOOPROBE) == loaded, \
        "the scenario changed whether tcp_oooprobe is loaded"


def test_demo_rows():
    """demo: both paths ran each policy with its congestion control
    (tcp_info's, in the row), the competitor's bulk flow ran and was
    measured, the capture of repetition 0 holds each burst's 100
    segments (flight.csv), and the table judges the default on both
    paths."""
    path = OUT / "demo" / "runs.csv"
    if not path.exists():
        pytest.skip("demo smoke run did not produce runs.csv")
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if not r.get("error")]
    assert {(r["path"], r["policy"]) for r in rows} == {
        (p, pol) for p in ("quiet", "competitor")
        for pol in ("linux-default", "cocktail-default")}
    for r in rows:
        assert r["congestion"] == {"linux-default": "cubic",
                                   "cocktail-default": "cocktail"}[
                                       r["policy"]]
        assert r["cross"] == {"quiet": "none", "competitor": "tcp"}[
            r["path"]]
        assert float(r["seconds"]) > float(r["delay_ms"]) / 1000.0
        if r["path"] == "competitor":
            # the bulk flow's goodput from the idle period's start until
            # the burst was acked
            assert float(r["cross_kbit_sent"]) > 0, r
    with open(OUT / "demo" / "flight.csv", newline="") as f:
        pts = list(csv.DictReader(f))
    for r in rows:
        mine = [float(p["segment"]) for p in pts
                if (p["path"], p["policy"]) == (r["path"], r["policy"])]
        assert mine and max(mine) == pytest.approx(100, abs=0.01), \
            (r["path"], r["policy"], len(mine))
    md = (OUT / "demo" / "table.md").read_text()
    assert "## quiet:" in md and "## competitor:" in md
    assert md.count("cocktail-default: ") == 2
    for p in ("demo.png", "flight-quiet.png", "flight-competitor.png"):
        assert (OUT / "demo" / p).read_bytes()[:8] == PNG


def test_pacerate_outputs():
    """pacerate --only setting=small: one setting's rows, its table and
    plot in small/, its link's facts in small/meta.json."""
    assert (KMOD / "tcp_cocktail.ko").exists(), \
        "%s/tcp_cocktail.ko is not built (make modules)" % KMOD
    out = run_scenario("pacerate", "setting=small")
    with open(out / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["setting"] for r in rows} == {"small"}
    assert [r["variant"] for r in rows] == [
        "cocktail-ssr-cwv0", "cocktail-keep-cwv0",
        "cocktail-pace-delivery-cwv0", "cocktail-pace-window-cwv0",
        "cocktail-pace-max-cwv0"]
    assert all(r["cc"] == "cocktail" and float(r["completion_s"]) > 0.2
               for r in rows)
    md = (out / "small" / "table.md").read_text()
    assert "drop-tail 20 packets, warm-up 1 fetches of 1000 segments" in md
    assert (out / "small" / "demo.png").read_bytes()[:8] == PNG
    sm = json.loads((out / "small" / "meta.json").read_text())
    assert sm["limit"] == 20 and sm["cocktail_params"]["cwv"] == "0"
    meta = json.loads((out / "meta.json").read_text())
    assert meta["scenario"] == "pacerate" and meta["runs"] == 5
    assert "## small:" in (out / "README.md").read_text()


def test_bad_arguments_are_refused():
    # the runner as bench/run starts it (python -m), then in this process
    p = subprocess.run([sys.executable, "-m", "bench.lib.runner", "nosuch"],
                       cwd=REPO, text=True, capture_output=True,
                       env=runner_env())
    assert p.returncode == 2 and "invalid choice" in p.stderr, p.stderr
    rc, text = run_runner(["restart", "--reps", "0"])
    assert rc == 2 and "--reps" in text, text
    rc, text = run_runner(["restart", "--only", "delay_ms"])
    assert rc == 1 and "--only wants K=V" in text, text


def test_restart_tcp_cross():
    """The restart scenario's tcp cross traffic: a CUBIC bulk flow through
    the bottleneck during the idle period; each row names it and carries
    its goodput before and during the burst."""
    out = OUT / "restart-tcp"
    rc, text = run_runner(["restart", "--quick", "--reps", "1", "--out",
                           str(out), "--only",
                           "policy=linux-default,cross=tcp,delay_ms=20"])
    assert rc == 0, text[-6000:]
    with open(out / "runs.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if not r.get("error")]
    assert rows
    for r in rows:
        assert r["cross"] == "tcp", r
        assert float(r["cross_tcp_kbit_before"]) > 0, r
        assert float(r["cross_tcp_kbit_burst"]) >= 0, r

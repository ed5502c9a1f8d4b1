"""ooo: McManus's statistics (2010, "Long Out Of Order
Queueing Delays"): flows, flows with reordering per thousand, reordered
packets per thousand, mean data packets per flow with and without
reordering, and the hold-time distribution (median, p80, p90, p97, max)
-- produced by daemon/oooprobed from kmod/tcp_oooprobe's events, over
hundreds of web-like flows on netem-shaped links with loss and
reordering.

One run = one netem setting x one repetition: scripts/netem-topo builds
server, router and client namespaces (the loss/reorder netem sits on the
router's egress toward the client, the data direction; netem-topo
--loss/--reorder); tcp_oooprobe is filtered to the client namespace
(`netns` parameter = its inode; `flows=all`), oooprobed runs in the
initial namespace with --json and --interval 0, FLOWS connections fetch one
object each (HTTP/1.0-like: request, the server writes the object and
closes), WORKERS at a time (a browser's parallel connections), object
sizes lognormal like web traffic (the same sizes for every setting).
When every client socket is closed (each emitted its FLOW event),
oooprobed gets SIGTERM; its final summary gives the row, and the same
statistics recomputed from its JSON events must agree with it.

Outputs: runs.csv (one row per run, the daemon's numbers), holds.csv
(every hold time: the CDF), table.md (ours next to
bench/published/ooo2010_stats.csv, with the netem settings), hold-cdf.png.
"""
import csv
import json
import math
import os
import random
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from bench.lib import policies, published, stats, table
from cocktail_lab import modparams, proc
from cocktail_lab.topo import Topo

REPO = Path(__file__).resolve().parents[2]
DAEMON = REPO / "daemon" / "oooprobed"
KO = policies.KMOD / "tcp_oooprobe.ko"
OOO = modparams.OOOPROBE
PORT = 5006
RESUME_KEY = ("setting", "rep")
RATE = "20mbit"
LIMIT = 170                     # one BDP at 100 ms, 20 Mbit/s
WORKERS = 6
SIZE_MU, SIZE_SIGMA, SIZE_CAP = 9.5, 1.6, 2_000_000
# name -> netem-topo options besides --rate/--limit
SETTINGS = {
    "rtt50-loss1": dict(rtt=50, loss=1),
    "rtt50-loss3": dict(rtt=50, loss=3),
    "rtt200-loss1": dict(rtt=200, loss=1),
    "rtt200-loss3": dict(rtt=200, loss=3),
    "rtt50-reorder2": dict(rtt=50, reorder=2),
    "rtt100-loss1-reorder1": dict(rtt=100, loss=1, reorder=1),
}
FULL = dict(settings=list(SETTINGS), flows=400, reps=3)
QUICK = dict(settings=["rtt50-loss1", "rtt200-loss3"], flows=100, reps=1)

# the statistics of a run: (key, label, published key or None)
STATS = [
    ("flows", "flows", "web_flows"),
    ("flows_reordered", "flows with reordering", "flows_with_reordering"),
    ("flows_reordered_permille", "flows with reordering, per thousand",
     "flows_with_reordering_per_thousand"),
    ("data_pkts", "data packets", "data_packets"),
    ("reordered_pkts", "reordered packets", "reordered_packets"),
    ("reordered_pkts_permille", "reordered packets, per thousand",
     "reordered_packets_per_thousand"),
    ("mean_pkts_reordered_flow", "mean data packets, flow with reordering",
     "mean_packets_flow_with_reordering"),
    ("mean_ooo_reordered_flow", "mean reordered packets, flow with "
     "reordering", "mean_reordered_packets_flow_with_reordering"),
    ("mean_pkts_clean_flow", "mean data packets, flow without reordering",
     "mean_packets_flow_without_reordering"),
    ("mean_held_len", "mean length of a held range, bytes (can exceed "
     "one MSS)",
     "mean_reordered_packet_length"),
    ("segments", "held ranges (hold samples; the daemon's "
     "\"segments\")", None),
    ("hold_median_ms", "hold time median, ms", "median_hold_time"),
    ("hold_p80_ms", "hold time p80, ms", "p80_hold_time_about"),
    ("hold_p90_ms", "hold time p90, ms", None),
    ("hold_p97_ms", "hold time p97, ms", None),
    ("hold_max_ms", "hold time max, ms", "max_hold_time"),
    ("hold_median_rtts", "hold time median, in RTTs", None),
    ("events_lost", "events lost (daemon: sequence gaps + ENOBUFS; "
     "kernel: dropped)", None),
]


# ------------------------------------------------------------ statistics

_SUMMARY = [
    ("flows", r"^flows: (\d+)$"),
    ("flows_reordered", r"^flows with reordering: (\d+) "),
    ("flows_reordered_permille", r"^flows with reordering: \d+ \(([\d.]+) "),
    ("data_pkts", r"^data packets: (\d+)$"),
    ("reordered_pkts", r"^reordered packets: (\d+) "),
    ("reordered_pkts_permille", r"^reordered packets: \d+ \(([\d.]+) "),
    ("mean_pkts_reordered_flow",
     r"^mean data packets per flow: ([\d.]+) with reordering"),
    ("mean_pkts_clean_flow", r"with reordering, ([\d.]+) without$"),
    ("segments", r"^hold time \((\d+) segments\)"),
    ("hold_median_ms", r"^hold time .*: median ([\d.]+) ms"),
    ("hold_p80_ms", r"^hold time .*, p80 ([\d.]+) ms"),
    ("hold_p90_ms", r"^hold time .*, p90 ([\d.]+) ms"),
    ("hold_p97_ms", r"^hold time .*, p97 ([\d.]+) ms"),
    ("hold_max_ms", r"^hold time .*, max ([\d.]+) ms"),
    ("daemon_gaps", r"^events lost: (\d+) \(sequence gaps\)"),
    ("daemon_enobufs", r"socket overruns \(ENOBUFS\): (\d+)$"),
    ("kernel_dropped", r"^kernel: events sent \d+, dropped (\d+)"),
]


def parse_summary(text):
    """oooprobed's final summary (the text from '== oooprobed final
    summary' on) as a dict of numbers; keys missing from the text are
    absent (no hold line when no segment was held)."""
    i = text.rfind("== oooprobed final summary")
    if i < 0:
        raise ValueError("no '== oooprobed final summary' in the output")
    text = text[i:]
    out = {}
    for key, rx in _SUMMARY:
        m = re.search(rx, text, re.M)
        if m:
            v = m.group(1)
            out[key] = float(v) if "." in v else int(v)
    if "flows" not in out:
        raise ValueError("oooprobed summary without a flows line")
    return out


def nearest_rank(sorted_values, p):
    """The daemon's percentile: smallest value with at least P% at or
    below it (stats_percentile in daemon/stats.c)."""
    n = len(sorted_values)
    if not n:
        return None
    rank = min(n, max(1, math.ceil(p / 100.0 * n - 1e-9)))
    return sorted_values[rank - 1]


def from_events(events):
    """McManus's statistics recomputed from oooprobed's JSON events
    (dicts with type flow/segment), plus what the summary does not print
    (mean reordered packets of a flow with reordering, mean held length).
    Returns (stats dict, sorted hold times in ms, held lengths)."""
    flows = [e for e in events if e["type"] == "flow"]
    segs = [e for e in events if e["type"] == "segment"]
    ro = [f for f in flows if f["ooo_segs"] > 0]
    clean = [f for f in flows if f["ooo_segs"] == 0]
    data = sum(f["data_segs_in"] for f in flows)
    ooo = sum(f["ooo_segs"] for f in flows)
    holds = sorted(e["hold_ns"] / 1e6 for e in segs)
    s = {"flows": len(flows), "flows_reordered": len(ro),
         "flows_reordered_permille": 1000.0 * len(ro) / len(flows)
         if flows else 0.0,
         "data_pkts": data, "reordered_pkts": ooo,
         "reordered_pkts_permille": 1000.0 * ooo / data if data else 0.0,
         "mean_pkts_reordered_flow": stats.mean(
             [f["data_segs_in"] for f in ro]) or 0.0,
         "mean_pkts_clean_flow": stats.mean(
             [f["data_segs_in"] for f in clean]) or 0.0,
         "mean_ooo_reordered_flow": stats.mean([f["ooo_segs"] for f in ro]),
         "mean_held_len": stats.mean([e["len"] for e in segs]),
         "segments": len(segs)}
    if holds:
        for key, p in (("median", 50), ("p80", 80), ("p90", 90),
                       ("p97", 97), ("max", 100)):
            s["hold_%s_ms" % key] = nearest_rank(holds, p)
    return s, holds, [e["len"] for e in segs]


def disagreements(summary, recomputed):
    """Keys where the daemon's printed summary and the statistics from its
    own JSON events differ beyond the summary's print precision."""
    bad = []
    for key, val in summary.items():
        if key not in recomputed or recomputed[key] is None:
            continue
        tol = 0.0 if isinstance(val, int) else (
            0.0006 if key.endswith("_ms") else 0.051)
        if abs(recomputed[key] - val) > tol:
            bad.append("%s: summary %s, events %s" % (key, val,
                                                      recomputed[key]))
    return bad


# --------------------------------------------------------------- traffic

def _serve(lst, stop, sizes_seen):
    """Accept until STOP; each connection: read 'GET N', write N bytes,
    close (a thread per connection)."""
    def one(c):
        try:
            c.settimeout(120)
            buf = b""
            while b"\n" not in buf:
                b = c.recv(64)
                if not b:
                    return
                buf += b
            n = int(buf.split()[1])
            sizes_seen.append(n)
            c.sendall(b"o" * n)
        except (OSError, ValueError, IndexError):
            pass
        finally:
            c.close()
    lst.settimeout(0.5)
    while not stop.is_set():
        try:
            c, _ = lst.accept()
        except socket.timeout:
            continue
        except OSError:
            return
        threading.Thread(target=one, args=(c,), daemon=True).start()


def _fetch_all(addr, sizes, timeout):
    """Runs in the client namespace: fetch every size in turn; returns
    (bytes received, failures)."""
    got, failed = 0, []
    for n in sizes:
        try:
            with socket.create_connection((addr, PORT), timeout=timeout) as c:
                c.sendall(b"GET %d\r\n" % n)
                k = 0
                while True:
                    b = c.recv(1 << 16)
                    if not b:
                        break
                    k += len(b)
            if k != n:
                failed.append("%d of %d bytes" % (k, n))
            got += k
        except OSError as e:
            failed.append("%s: %s" % (type(e).__name__, e))
    return got, failed


def _open_tcp(port):
    """TCP sockets of this thread's netns with PORT at either end (from
    /proc/thread-self/net/tcp, which follows setns)."""
    n = 0
    with open("/proc/thread-self/net/tcp") as f:
        next(f)
        for ln in f:
            p = ln.split()
            lport = int(p[1].split(":")[1], 16)
            rport = int(p[2].split(":")[1], 16)
            if port in (lport, rport):
                n += 1
    return n


def sizes_for(rep, n):
    rnd = random.Random(1000 + rep)
    return [max(1, int(min(SIZE_CAP, rnd.lognormvariate(SIZE_MU,
                                                        SIZE_SIGMA))))
            for _ in range(n)]


class Probe:
    """tcp_oooprobe loaded (insmod kmod/ if needed) with flows=all and its
    netns filter; at close() unloaded when this class loaded it, else its
    filters are put back as they were."""
    FILTERS = ("flows", "ports", "netns")

    def __init__(self):
        self.loaded_here = False
        if not modparams.has_params(OOO):
            proc.sh("insmod %s flows=all" % KO)
            self.loaded_here = True
        self.old = {k: modparams.get_param(OOO, k) for k in self.FILTERS}
        self.set("flows", "all")
        self.set("ports", "any")

    @staticmethod
    def set(name, value):
        modparams.set_param(OOO, name, value)
        got = modparams.get_param(OOO, name)
        if got != str(value):
            raise RuntimeError("tcp_oooprobe.%s reads %r, wanted %r" %
                               (name, got, value))

    @staticmethod
    def params():
        return modparams.get_params(OOO)

    def close(self):
        if self.loaded_here:
            proc.sh("rmmod tcp_oooprobe", check=False)
            return
        modparams.set_params(self.old, OOO)


def _tc_lines(info):
    return [re.sub(r"^ip netns exec \S+ ", "", c) for c in info["tc"]]


def one_run(ctx, probe, setting, rep, nflows, tmp):
    opts = dict(SETTINGS[setting], rate=RATE, limit=LIMIT)
    topo = Topo(**opts)
    topo.up()
    daemon = None
    try:
        proc.sysctl(topo.server, "net.ipv4.tcp_no_metrics_save", 1)
        ctx.tc.append({"setting": setting, "rep": rep,
                       "netem_topo": topo.args(), "tc": topo.info["tc"]})
        probe.set("netns", os.stat("/run/netns/%s" % topo.client).st_ino)
        jpath = tmp / ("%s-%d.jsonl" % (setting, rep))
        if jpath.exists():
            jpath.unlink()
        err = open(tmp / "oooprobed.err", "w+")
        daemon = subprocess.Popen([str(DAEMON), "--json", str(jpath),
                                   "--interval", "0"],
                                  stdout=subprocess.PIPE, stderr=err,
                                  text=True)
        end = time.monotonic() + 30
        while "listening to" not in Path(err.name).read_text():
            if daemon.poll() is not None or time.monotonic() > end:
                raise RuntimeError("oooprobed did not start: %s" %
                                   Path(err.name).read_text().strip())
            time.sleep(0.1)
        t = proc.NsThread(topo.server, socket.create_server,
                          (topo.server_addr, PORT), backlog=64)
        t.start()
        lst = t.join_result(30)
        stop = threading.Event()
        seen = []
        srv = threading.Thread(target=_serve, args=(lst, stop, seen),
                               daemon=True)
        srv.start()
        sizes = sizes_for(rep, nflows)
        t0 = time.monotonic()
        workers = [proc.NsThread(topo.client, _fetch_all, topo.server_addr,
                                 sizes[i::WORKERS], 120)
                  for i in range(WORKERS)]
        for w in workers:
            w.start()
        got, failed = 0, []
        for w in workers:
            g, f = w.join_result(120 * len(sizes))
            got += g
            failed += f
        transfer_s = time.monotonic() - t0
        # every client socket closed = every FLOW event emitted
        end = time.monotonic() + 60
        while True:
            t = proc.NsThread(topo.client, _open_tcp, PORT)
            t.start()
            if t.join_result(30) == 0 or time.monotonic() > end:
                break
            time.sleep(0.5)
        stop.set()
        srv.join(5)
        lst.close()
        time.sleep(0.5)
        daemon.send_signal(signal.SIGTERM)
        out, _ = daemon.communicate(timeout=60)
        if daemon.returncode != 0:
            raise RuntimeError("oooprobed exited %d: %s" % (
                daemon.returncode, Path(err.name).read_text().strip()))
        summary = parse_summary(out)
        events = [json.loads(x) for x in jpath.read_text().splitlines()]
        recomputed, holds, lens = from_events(events)
        bad = disagreements(summary, recomputed)
        row = {"setting": setting, "rep": rep,
               "rtt_ms": opts["rtt"], "loss_pct": opts.get("loss", 0),
               "reorder_pct": opts.get("reorder", 0), "rate": RATE,
               "limit": LIMIT, "flows_started": len(sizes),
               "flows_failed": len(failed), "bytes": got,
               "transfer_s": round(transfer_s, 3)}
        row.update(summary)
        for k in ("mean_ooo_reordered_flow", "mean_held_len"):
            v = recomputed.get(k)
            row[k] = round(v, 1) if v is not None else None
        row["events_lost"] = summary.get("daemon_gaps", 0) + summary.get(
            "daemon_enobufs", 0) + summary.get("kernel_dropped", 0)
        if summary.get("hold_median_ms") is not None:
            row["hold_median_rtts"] = round(
                summary["hold_median_ms"] / opts["rtt"], 2)
        row["daemon_json_agree"] = int(not bad)
        row["tc_fwd"] = " ; ".join(_tc_lines(topo.info))
        if bad:
            ctx.note("%s rep %d: oooprobed's summary and its JSON events "
                     "differ: %s" % (setting, rep, "; ".join(bad)))
        if failed:
            ctx.note("%s rep %d: %d of %d fetches failed (first: %s)" % (
                setting, rep, len(failed), len(sizes), failed[0]))
        if summary["flows"] != len(sizes):
            ctx.note("%s rep %d: oooprobed saw %d flows, %d were opened" % (
                setting, rep, summary["flows"], len(sizes)))
        jpath.unlink()
        return row, [{"setting": setting, "rep": rep,
                      "hold_ms": round(h, 4)} for h in holds]
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        topo.down()


def run(ctx):
    g = QUICK if ctx.quick else FULL
    ctx.reps = ctx.reps or g["reps"]
    for what, path in (("daemon/oooprobed", DAEMON),
                       ("kmod/tcp_oooprobe.ko", KO)):
        if not path.exists() and not (what.startswith("kmod") and
                                      modparams.has_params(OOO)):
            raise RuntimeError("%s is not built (make all)" % what)
    settings = [s for s in g["settings"] if "setting" not in ctx.only
                or s in ctx.only["setting"]]
    nflows = int(ctx.only["flows"][0]) if "flows" in ctx.only else g["flows"]
    tmp = REPO / "build" / "bench" / "ooo"
    tmp.mkdir(parents=True, exist_ok=True)
    hpath = ctx.outdir / "holds.csv"
    holds_all = read_holds(hpath) if ctx.old else []
    probe = Probe()
    ctx.extra["oooprobe"] = {"params": probe.params(),
                             "filter": "netns = the client namespace's "
                             "inode, set per run"}
    ctx.extra["flows"] = {
        "per_run": nflows, "parallel": WORKERS,
        "sizes": "lognormal(mu=%g, sigma=%g) bytes, capped at %d; one "
                 "object per connection (request, server writes, closes)"
                 % (SIZE_MU, SIZE_SIGMA, SIZE_CAP),
        "sender": "kernel default (CUBIC), Nagle on; receiver: Linux "
                  "defaults (SACK on, delayed ACKs)"}
    rows = []
    ctx.grid(ctx.reps * len(settings))
    try:
        for rep in range(ctx.reps):
            for setting in settings:
                if ctx.skip(setting=setting, rep=rep):
                    continue
                try:
                    row, holds = one_run(ctx, probe, setting, rep, nflows,
                                         tmp)
                except (OSError, RuntimeError, ValueError, TimeoutError,
                        subprocess.SubprocessError) as e:
                    row, holds = {"setting": setting, "rep": rep,
                                  "error": "%s: %s" % (type(e).__name__,
                                                       e)}, []
                    ctx.note("%s rep %d failed: %s" % (setting, rep, e))
                rows.append(row)
                holds_all += holds
                write_holds(hpath, holds_all)
                ctx.save(rows)
                ctx.tick()
                if "error" not in row:
                    ctx.log("%s rep %d: %d flows, %d with reordering, %d "
                            "held segments, median hold %s ms, %.0f s" % (
                                setting, rep, row["flows"],
                                row["flows_reordered"], row["segments"],
                                row.get("hold_median_ms"),
                                row["transfer_s"]))
    finally:
        probe.close()
    return rows


def read_holds(path):
    if not Path(path).exists():
        return []
    return table.read_csv(path)


def write_holds(path, holds):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["setting", "rep", "hold_ms"])
        for h in holds:
            w.writerow([h["setting"], h["rep"], h["hold_ms"]])


# ---------------------------------------------------------------- report

def num(v):
    """A number for the table: integers as such, else 3 significant digits
    below 10, one decimal below 100, none above."""
    if v is None:
        return "n/a"
    if float(v) == int(v):
        return "%d" % v
    if abs(v) >= 100:
        return "%.0f" % v
    return "%.1f" % v if abs(v) >= 10 else "%.3g" % v


def _pub_value(r):
    """A published value in the unit of our row (hold times in ms)."""
    v = r["value"]
    if r["unit"] == "s":
        v = v * 1000
    return ("about " if r["what"].endswith("_about") else "") + num(v)


def _cell(values):
    """median (min–max) over repetitions; one value when they agree."""
    s = stats.summarize(values)
    if not s["n"]:
        return "—"
    if s["min"] == s["max"]:
        return num(s["median"])
    return "%s (%s–%s)" % (num(s["median"]), num(s["min"]), num(s["max"]))


def markdown(rows, notes=()):
    """table.md text from runs.csv rows (pure: the unit tests feed it a
    fixed CSV)."""
    good = [r for r in rows if r.get("setting") and not r.get("error")]
    names = [n for n in dict.fromkeys(r["setting"] for r in good)]
    pub = {r["what"]: r for r in published.load("ooo2010_stats.csv")}
    md = ["# ooo: out-of-order hold times (McManus 2010)"
          "\n\n",
          "Measured inside the test VM by `daemon/oooprobed` (its final "
          "summary; the same numbers recomputed from its JSON events must "
          "agree) from `tcp_oooprobe` filtered to the client namespace. "
          "Web-like flows: one object per connection, sizes lognormal, "
          "several connections in parallel, sender CUBIC. A cell is the "
          "median (min–max) over repetitions. Published: McManus (2010), "
          "10 days of one desktop's web flows at 40–150 ms RTT "
          "(bench/published/ooo2010_stats.csv).\n\n"]
    md += ["- %s\n" % n for n in notes]
    failed = [r for r in rows if r.get("error")]
    for r in failed:
        md.append("- run %s rep %s failed: %s\n" % (r.get("setting"),
                                                    r.get("rep"),
                                                    r["error"]))
    md.append("\n## netem settings\n\n| setting | RTT ms | loss % | "
              "reorder % | rate, queue | runs | flows per run | tc "
              "(netem-topo) |\n|---|---|---|---|---|---|---|---|\n")
    for n in names:
        sel = [r for r in good if r["setting"] == n]
        r0 = sel[0]
        md.append("| %s | %s | %s | %s | %s, %s pkts | %d | %s | `%s` |\n"
                  % (n, r0["rtt_ms"], r0["loss_pct"], r0["reorder_pct"],
                     r0["rate"], r0["limit"], len(sel),
                     _cell([r["flows_started"] for r in sel]),
                     r0.get("tc_fwd", "")))
    md.append("\n## statistics\n\n| statistic | " + " | ".join(names) +
              " | published |\n|" + "---|" * (len(names) + 2) + "\n")
    for key, label, pkey in STATS:
        line = [label]
        for n in names:
            line.append(_cell([r.get(key) for r in good
                               if r["setting"] == n]))
        line.append(_pub_value(pub[pkey]) if pkey in pub else "—")
        md.append("| " + " | ".join(line) + " |\n")
    agree = [r.get("daemon_json_agree") for r in good]
    md.append("\nDaemon summary vs its JSON events: %d of %d runs agree.\n"
              % (sum(1 for a in agree if a == 1), len(agree)))
    return "".join(md)


def cdf_plot(path, holds, published_rows=None):
    """CDF of the hold times per setting (log x), with McManus's median
    and p80 marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    by = {}
    for h in holds:
        if h.get("hold_ms") is not None:
            by.setdefault(h["setting"], []).append(max(h["hold_ms"], 1e-3))
    for name, v in by.items():
        v.sort()
        ax.step(v, [(i + 1) / len(v) for i in range(len(v))], where="post",
                label="%s (%d)" % (name, len(v)))
    pub = {r["what"]: r["value"] for r in (published_rows or [])}
    for key, q, lab in (("median_hold_time", 0.5, "McManus median"),
                        ("p80_hold_time_about", 0.8, "McManus p80 (about)")):
        if key in pub:
            ax.plot([pub[key]], [q], "kx", ms=8)
            ax.annotate(lab, (pub[key], q), fontsize=7,
                        xytext=(4, -10), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("hold time in the out-of-order queue (ms)")
    ax.set_ylabel("fraction of held segments")
    ax.set_ylim(0, 1.02)
    ax.set_title("out-of-order hold time CDF (tcp_oooprobe + oooprobed)",
                 fontsize=10)
    ax.grid(alpha=0.3, which="both")
    if by:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def report(ctx, rows):
    notes = table.notes(ctx)
    (ctx.outdir / "table.md").write_text(markdown(rows, notes))
    cdf_plot(ctx.outdir / "hold-cdf.png",
             read_holds(ctx.outdir / "holds.csv"),
             published.load("ooo2010_stats.csv"))

"""The module's tracepoints during a bench run (bench/run --trace).

start() clears the trace buffer and enables tcp_cocktail:cocktail_restart,
cocktail_pace_end and cocktail_check; policies.apply() writes a trace_marker line
("bench policy=NAME") each time it applies a policy, so every event can be
attributed to the policy in force; stop() disables the events and writes

    trace.txt      the raw trace buffer
    restarts.csv   one row per event: time, event, policy, and the
                   event's own fields (sport, dport, requested, policy
                   applied, idle_us, srtt_us, path_rtt_us, cwnd_before,
                   cwnd_after, pacing_rate; reason, segs, duration_us;
                   a restart=measure check's verdict, elapsed_us,
                   send_us, sent_rate, ack_rate, rtt_us, min_rtt_us,
                   misses)

The kernel's ring buffer is per CPU and finite: `lost` in meta.json counts
the events the kernel reported as overwritten.
"""
import re
from pathlib import Path

from cocktail_lab.capture import Trace, tracefs

EVENTS = ("cocktail_restart", "cocktail_pace_end", "cocktail_check")
BUFFER_KB = 8192
_trace = None   # the capture.Trace while start() is in effect

_LINE = re.compile(r"^\s*(?P<task>.+?)\s+\[(?P<cpu>\d+)\]\s+\S+\s+"
                   r"(?P<ts>\d+\.\d+):\s+(?P<event>[\w:]+):\s+(?P<rest>.*)$")
_KV = re.compile(r"(\w+)=(\S*)")


def start():
    """Clear the buffer and enable the module's events (the lab's
    capture.Trace); False when the module (or tracefs) is not there."""
    global _trace
    t = Trace(*("tcp_cocktail/" + e for e in EVENTS), buffer_kb=BUFFER_KB)
    t.dir = tracefs()
    if not Path(t.dir, "events", "tcp_cocktail").is_dir():
        return False
    try:
        _trace = t.__enter__()
    except OSError:
        return False
    return True


def marker(text):
    """A line in the trace, while start() is in effect."""
    if _trace is not None:
        try:
            _trace.mark("bench %s\n" % text)
        except OSError:
            pass


def parse(text):
    """Rows (dicts) for the module's events in trace TEXT; each carries the
    policy named by the latest "bench policy=NAME" marker before it (the
    event's own `policy` field, the one applied, is `applied`)."""
    rows, bench_policy = [], ""
    for ln in text.splitlines():
        if ln.startswith("#"):
            continue
        m = _LINE.match(ln)
        if not m:
            continue
        ev, rest = m.group("event"), m.group("rest")
        if ev == "tracing_mark_write":
            kv = dict(_KV.findall(rest))
            if rest.startswith("bench ") and "policy" in kv:
                bench_policy = kv["policy"]
            continue
        if ev not in EVENTS:
            continue
        row = {"t": float(m.group("ts")), "event": ev,
               "bench_policy": bench_policy}
        for k, v in _KV.findall(rest):
            row["applied" if k == "policy" else k] = \
                int(v) if v.isdigit() else v
        rows.append(row)
    return rows


def stop(outdir, trace=None):
    """Disable the events and write trace.txt and restarts.csv into
    OUTDIR; returns {"events": n, "lost": n} for meta.json.  TRACE: the
    started trace (default: start()'s)."""
    global _trace
    from . import table
    trace, _trace = trace or _trace, None
    if trace is None:
        return {"events": 0, "lost": None}
    try:
        trace.__exit__(None, None, None)
    except OSError:
        return {"events": 0, "lost": None}
    text = trace.text
    Path(outdir, "trace.txt").write_text(text)
    rows = parse(text)
    if rows:
        table.write_csv(Path(outdir, "restarts.csv"), rows)
    lost = None
    m = re.search(r"entries-in-buffer/entries-written: (\d+)/(\d+)", text)
    if m:
        lost = int(m.group(2)) - int(m.group(1))
    return {"events": len(rows), "lost": lost}

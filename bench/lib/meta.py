"""meta.json: where and how a result was measured."""
import datetime
import json
import os
import platform
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(cmd):
    try:
        return subprocess.run(cmd, shell=True, text=True, capture_output=True,
                              cwd=REPO, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_jiffies():
    """(busy, total) jiffies of this machine's CPUs, from /proc/stat."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    return sum(f) - idle, sum(f)


def cpu_busy_since(start):
    """The CPUs' busy fraction since START, a cpu_jiffies() reading."""
    now = cpu_jiffies()
    return (now[0] - start[0]) / max(1, now[1] - start[1])


def cpu_model():
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def git_state():
    """The tree a run measures: HEAD and whether bench, kmod or scripts
    had uncommitted changes.  Taken when the run starts (a run may take
    hours, and commits made meanwhile did not run)."""
    return {"git_commit": _run("git rev-parse HEAD"),
            "git_dirty": bool(_run("git status --porcelain -- bench kmod "
                                   "scripts"))}


def collect(scenario, args, tc=None, extra=None):
    cmdline = Path("/proc/cmdline").read_text() if Path(
        "/proc/cmdline").exists() else ""
    m = {
        "scenario": scenario,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"),
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "in_vm": "virtme" in cmdline,
        **git_state(),
        "args": args,
        "tc": tc or [],
    }
    host = REPO / "build" / "bench" / "host-load.json"
    if host.exists():
        try:
            m.update(json.loads(host.read_text()))
        except ValueError:
            pass
    m["vm_loadavg_end"] = Path("/proc/loadavg").read_text().split()[:3] \
        if Path("/proc/loadavg").exists() else None
    m.update(extra or {})
    return m


def write(path, meta):
    Path(path).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def earlier(path):
    """The runs an --append run adds to: the meta.json at PATH (if any)
    and the runs it recorded as earlier, oldest first, each without its
    own history."""
    try:
        old = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return []
    runs = old.pop("earlier_runs", [])
    return runs + [old]

"""The BPF build of cocktail through its control tool, bpf/cocktail-bpf.

The BPF program registers as the congestion control "cocktail_bpf"; its
parameters (the module's names, ranges and values) and counters (the
module's stats names) are global data of the loaded program, which only
the tool reads and writes: `get` prints "name value" lines, `set
NAME=VALUE...` checks every value before it writes any, `stats` prints the
counters. A refusal is one sentence on stderr and exit status 1.
Parameters are global to the machine, not per namespace, as the
module's are.
"""
import subprocess

from .modparams import parse_counters
from .topo import REPO

TOOL = REPO / "bpf" / "cocktail-bpf"
CA = "cocktail_bpf"


def run(*args, check=True, timeout=60):
    """Run the tool with ARGS: its CompletedProcess (text). With CHECK a
    non-zero exit raises RuntimeError carrying the tool's sentence."""
    p = subprocess.run([str(TOOL)] + [str(a) for a in args], text=True,
                       capture_output=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError("cocktail-bpf %s: exit %d: %s" % (
            " ".join(map(str, args)), p.returncode, p.stderr.strip()))
    return p


def registered():
    """cocktail_bpf is loaded and registered."""
    return TOOL.exists() and run("status", check=False).returncode == 0


def get_params():
    """{name: value as text} of every parameter."""
    return dict(ln.split(" ", 1) for ln in run("get").stdout.splitlines()
                if " " in ln)


def get_param(name):
    return run("get", name).stdout.strip()


def set_params(values):
    """Set {name: value} in one call: all of them or, if the tool refuses
    one, none (RuntimeError)."""
    if values:
        run("set", *("%s=%s" % kv for kv in sorted(values.items())))


def counters():
    """{name: int}, the module's stats names."""
    return parse_counters(run("stats").stdout, strict=True)

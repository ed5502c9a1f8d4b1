"""Kernel module parameters and the module's counters, through sysfs.

A loaded module's parameters are files in /sys/module/MODULE/parameters:
writing one runs the module's setter (which may refuse the value with
EINVAL and keep the old one), reading it shows the value in force.
tcp_cocktail's counters are its read-only parameter `stats`, one
"name value" line per counter. Parameters are global to the machine, not
per namespace, so whoever sets them runs alone.
"""
import os
from pathlib import Path

COCKTAIL = "tcp_cocktail"
OOOPROBE = "tcp_oooprobe"
SYS_MODULE = Path("/sys/module")
# Where the built modules are: the checkout's kmod/, or the build for
# another kernel that COCKTAIL_KMOD names (dev/vm-kernel sets it).
KMOD = Path(os.environ.get("COCKTAIL_KMOD") or
            Path(__file__).resolve().parents[2] / "kmod")


def module_dir(module=COCKTAIL):
    return SYS_MODULE / module


def params_dir(module=COCKTAIL):
    return SYS_MODULE / module / "parameters"


def loaded(module=COCKTAIL):
    """The module is loaded (its sysfs directory exists)."""
    return module_dir(module).is_dir()


def has_params(module=COCKTAIL):
    """The module is loaded and has parameters."""
    return params_dir(module).is_dir()


def set_param(module, name, value):
    """Write VALUE to parameter NAME (as `echo VALUE > file`); raises
    OSError when the module refuses it."""
    (params_dir(module) / name).write_text("%s\n" % value)


def get_param(module, name):
    """The value of parameter NAME, as text without the newline."""
    return (params_dir(module) / name).read_text().strip()


def write_param(module, name, value):
    """Write like `echo value > file` with one write(2); return its errno
    (0 on success) instead of raising, for tests of refused values."""
    try:
        fd = os.open(str(params_dir(module) / name), os.O_WRONLY)
    except OSError as e:
        return e.errno
    try:
        os.write(fd, (str(value) + "\n").encode())
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def set_params(values, module=COCKTAIL):
    """set_param for every NAME: VALUE of VALUES, in order."""
    for k, v in values.items():
        set_param(module, k, v)


def get_params(module=COCKTAIL):
    """{name: value} of every readable parameter; {} when not loaded."""
    d = params_dir(module)
    if not d.is_dir():
        return {}
    out = {}
    for f in sorted(d.iterdir()):
        try:
            out[f.name] = f.read_text().strip()
        except OSError:
            pass
    return out


def parse_counters(text, strict=False):
    """{name: int} from "name value" lines. Lines of another shape are
    skipped, or with STRICT raise ValueError."""
    out = {}
    for ln in text.splitlines():
        parts = ln.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
        elif strict:
            raise ValueError("not a counter line: %r" % ln)
    return out


def counters(module=COCKTAIL, strict=False):
    """The module's counters (its `stats` parameter) as {name: int}; {}
    when it is not loaded (with STRICT the file must exist and every line
    be a counter)."""
    try:
        text = (params_dir(module) / "stats").read_text()
    except OSError:
        if strict:
            raise
        return {}
    return parse_counters(text, strict)


def counter_delta(before, after):
    """Counters that changed between two counters() snapshots."""
    return {k: after[k] - before.get(k, 0) for k in after
            if after[k] != before.get(k, 0)}


def refcnt(module=COCKTAIL):
    """The module's reference count (sockets and namespaces using it)."""
    return int((module_dir(module) / "refcnt").read_text())

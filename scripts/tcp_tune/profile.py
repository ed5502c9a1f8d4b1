"""Profiles (the format is documented in the header of every file in
sysctl/profiles/): parsing with file:line errors, finding one by name, and
the modules a profile may need."""

import os
import re

from .errors import TuneError
from .metrics import parse_metric_args
from .routes import parse_prefix
from .settings import MODULE_PARAMS, SYSCTLS
from .validate import MODULE_NAME_RE

# Profile directories: relative to the tcp-tune launcher (the checkout's
# sysctl/profiles), then the installed ones.
PROFILE_DIRS_REL = ("../sysctl/profiles",)
PROFILE_DIRS_ABS = ("/etc/tcp-cocktail/profiles",
                    "/usr/local/share/tcp-cocktail/profiles",
                    "/usr/share/tcp-cocktail/profiles")
# Where the launcher sits next to this package in the checkout (scripts/).
LAUNCHER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "tcp-tune")


class Profile:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.sysctls = []    # (lineno, key, op, value)   op '=' or '+='
        self.loads = []      # (lineno, module)
        self.params = []     # (lineno, module, param, value)
        self.routes = []     # (lineno, selector dict, metrics dict)


def parse_profile(text, path):
    """Parse a profile (see the header of any file in sysctl/profiles/).
    Raises TuneError naming the file and line of the first errors."""
    p = Profile(path)
    errors = []
    seen = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if line.startswith(";"):
            continue
        if not line:
            continue
        where = "%s:%d: " % (path, no)
        try:
            _parse_line(p, no, line, seen)
        except TuneError as e:
            errors.append(where + str(e))
    if errors:
        raise TuneError("\n".join(errors))
    return p


def _parse_line(p, no, line, seen):
    tok = line.split()
    if tok[0] == "load":
        if len(tok) != 2:
            raise TuneError("syntax: load MODULE")
        if not MODULE_NAME_RE.match(tok[1]):
            raise TuneError("load %s: tcp-tune loads congestion control (tcp_NAME) "
                            "and qdisc (sch_NAME) modules only" % tok[1])
        if tok[1] in [m for _, m in p.loads]:
            raise TuneError("module %s loaded twice" % tok[1])
        p.loads.append((no, tok[1]))
        return
    if tok[0] == "route":
        p.routes.append((no,) + parse_route_line(tok[1:]))
        return
    m = re.match(r"^([A-Za-z0-9_.\-/]+)\s*(\+?=)\s*(.*)$", line)
    if not m:
        raise TuneError("syntax error: expected 'KEY = VALUE', 'load MODULE' or "
                        "'route SELECTOR METRIC VALUE...', got %r" % line)
    key, op, value = m.group(1).replace("/", "."), m.group(2), m.group(3).strip()
    if value == "":
        raise TuneError("%s: missing value" % key)
    if key in seen:
        raise TuneError("%s set twice (first at line %d)" % (key, seen[key]))
    seen[key] = no
    mod, _, param = key.partition(".")
    if mod in MODULE_PARAMS:
        if op != "=":
            raise TuneError("%s: only '=' works for module parameters" % key)
        params = MODULE_PARAMS[mod]
        if param not in params:
            raise TuneError("unknown parameter %r of module %s (known: %s)"
                            % (param, mod, ", ".join(sorted(params))))
        if params[param] is None:
            raise TuneError("%s is read-only" % key)
        p.params.append((no, mod, param, params[param](key, value)))
        return
    if key not in SYSCTLS:
        raise TuneError("unknown key %r (tcp-tune knows: %s, and module "
                        "parameters %s)" % (key, ", ".join(sorted(SYSCTLS)),
                                            ", ".join("%s.*" % m for m in MODULE_PARAMS)))
    validator, _scope, kind = SYSCTLS[key]
    if op == "+=" and kind != "cclist":
        raise TuneError("%s: '+=' only works for list keys "
                        "(net.ipv4.tcp_allowed_congestion_control)" % key)
    p.sysctls.append((no, key, op, validator(key, value)))


def parse_route_line(tok):
    """'default initcwnd 10' | 'all ...' | 'dst PREFIX [dev D] [table T] ...'
    (also [-4|-6] after the selector). Returns (selector, metrics)."""
    if not tok:
        raise TuneError("syntax: route default|all|dst PREFIX [dev DEV] "
                        "[table T] [-4|-6] METRIC VALUE...")
    sel = {"kind": tok[0], "families": (4, 6), "table": "main", "all": True}
    i = 1
    if tok[0] == "dst":
        if len(tok) < 2:
            raise TuneError("route dst: missing PREFIX")
        sel["prefix"] = parse_prefix(tok[1])
        if sel["prefix"] is None:
            sel["kind"] = "default"
        else:
            sel["families"] = (sel["prefix"].version,)
        i = 2
    elif tok[0] not in ("default", "all"):
        raise TuneError("route: unknown selector %r (default, all, dst PREFIX)"
                        % tok[0])
    while i < len(tok) and tok[i] in ("dev", "table", "-4", "-6"):
        if tok[i] in ("-4", "-6"):
            sel["families"] = (int(tok[i][1]),)
            i += 1
            continue
        if i + 1 >= len(tok):
            raise TuneError("route: %s needs a value" % tok[i])
        sel[tok[i]] = tok[i + 1]
        i += 2
    return sel, parse_metric_args(tok[i:])


def find_profile(name_or_path, script=LAUNCHER):
    """Path of a profile given by file path or by name (looked up next to
    the launcher `script`, then in the installed directories)."""
    if os.sep in name_or_path or os.path.isfile(name_or_path):
        if not os.path.isfile(name_or_path):
            raise TuneError("profile file %s does not exist" % name_or_path)
        return name_or_path
    if not re.match(r"^[A-Za-z0-9_.\-]+$", name_or_path):
        raise TuneError("bad profile name %r" % name_or_path)
    here = os.path.dirname(os.path.realpath(script))
    dirs = [os.path.normpath(os.path.join(here, d)) for d in PROFILE_DIRS_REL]
    dirs += list(PROFILE_DIRS_ABS)
    for d in dirs:
        f = os.path.join(d, name_or_path)
        if os.path.isfile(f):
            return f
    known = set()
    for d in dirs:
        if os.path.isdir(d):
            known.update(x for x in os.listdir(d) if not x.startswith("."))
    raise TuneError("no profile named %r (known: %s; or give a file path)"
                    % (name_or_path, ", ".join(sorted(known)) or "none found"))


def modules_wanted(profile=None, metrics=None):
    """Modules the snapshot must look up for a profile or route metrics:
    the ones it loads, and those providing the congestion controls and
    qdiscs it names."""
    want = set()
    if profile:
        want.update(m for _, m in profile.loads)
        for _, key, _op, value in profile.sysctls:
            kind = SYSCTLS[key][2]
            if kind in ("cc", "cclist"):
                want.update("tcp_" + n for n in value.split())
            if kind == "qdisc":
                want.add("sch_" + value)
        for _, _sel, m in profile.routes:
            if m.get("congctl"):
                want.add("tcp_" + m["congctl"])
    if metrics and metrics.get("congctl"):
        want.add("tcp_" + metrics["congctl"])
    return want

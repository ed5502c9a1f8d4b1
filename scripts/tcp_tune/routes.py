"""Routes: `ip -j` output -> key, label, attributes, the reconstructed
`ip route` arguments, and the selection of the routes a command or a
profile line names."""

import ipaddress
import json

from .errors import TuneError
from .metrics import ARG_METRIC, LOCKABLE, METRIC_ARG, TIME_METRICS

ROUTE_TYPES = ("unicast", "local", "broadcast", "multicast", "throw",
               "unreachable", "prohibit", "blackhole", "nat", "anycast")
KNOWN_ROUTE_KEYS = {"type", "dst", "tos", "from", "gateway", "via", "dev",
                    "table", "protocol", "scope", "prefsrc", "metric", "flags",
                    "metrics", "pref", "nexthops", "nhid", "nh_info"}
# Flags the kernel sets by itself; only onlink is ours to pass back.
DERIVED_FLAGS = {"linkdown", "dead", "offload", "trap", "offload_failed",
                 "pervasive", "notify", "rt_offload", "rt_trap",
                 "rt_offload_failed", "unresolved"}


def dedupe(routes):
    """`ip -6 route show table all` on 6.1 can list routes twice; keep the
    first of identical entries."""
    seen, out = set(), []
    for r in routes:
        s = json.dumps(r, sort_keys=True)
        if s not in seen:
            seen.add(s)
            out.append(r)
    return out


def route_family(r):
    dst = r.get("dst", "")
    if dst == "default":
        g = r.get("gateway") or ""
        if ":" in g:
            return 6
        nh = r.get("nexthops") or [{}]
        if ":" in (nh[0].get("gateway") or ""):
            return 6
        return 6 if "pref" in r else 4
    return 6 if ":" in dst else 4


def route_key(r, family=None):
    """What identifies a route for the kernel's replace/change: family,
    table, type, destination, tos, source prefix, metric (priority)."""
    fam = family or route_family(r)
    return "%d|%s|%s|%s|%s|%s|%s" % (
        fam, r.get("table", "main"), r.get("type", "unicast"),
        r.get("dst"), r.get("tos", "0"), r.get("from", ""),
        r.get("metric", 0))


def route_label(r, family=None):
    fam = family or route_family(r)
    parts = ["IPv%d" % fam]
    if r.get("type", "unicast") != "unicast":
        parts.append(r["type"])
    parts.append(r.get("dst", "?"))
    if r.get("nhid") is not None:
        parts += ["nhid", str(r["nhid"])]
    if r.get("gateway"):
        parts += ["via", r["gateway"]]
    if r.get("dev"):
        parts += ["dev", r["dev"]]
    parts += ["table", r.get("table", "main")]
    if r.get("metric") is not None:
        parts += ["metric", str(r["metric"])]
    return " ".join(parts)


def route_metrics(r):
    m = {}
    for d in r.get("metrics") or []:
        m.update(d)
    return m


def text_route_key(line, family):
    """Key of one line of `ip route show` text (for lock flags only)."""
    tok = line.split()
    if not tok:
        return None
    i = 0
    rtype = "unicast"
    if tok[0] in ROUTE_TYPES:
        rtype = tok[0]
        i = 1
    if i >= len(tok):
        return None
    dst = tok[i]
    fields = {}
    for name in ("tos", "table", "metric", "from"):
        if name in tok[i + 1:]:
            j = tok.index(name, i + 1)
            if j + 1 < len(tok):
                fields[name] = tok[j + 1]
    r = {"type": rtype, "dst": dst, "table": fields.get("table", "main")}
    if "tos" in fields:
        r["tos"] = fields["tos"]
    if "from" in fields:
        r["from"] = fields["from"]
    if "metric" in fields:
        r["metric"] = int(fields["metric"])
    elif family == 6:
        r["metric"] = 0
    return route_key(r, family)


def locks_from_text(text, family):
    """`ip -j` does not print which metrics are locked ("mtu lock 1400"),
    so the lock flags alone come from the text form of the same dump.
    Returns {route_key: set of JSON metric names}."""
    out = {}
    for line in text.splitlines():
        if not line or line[0].isspace():
            continue                      # nexthop continuation lines
        key = text_route_key(line, family)
        tok = line.split()
        locked = set()
        for i, t in enumerate(tok[:-1]):
            if t in ARG_METRIC and tok[i + 1] == "lock":
                locked.add(ARG_METRIC[t])
        if key is not None:
            out.setdefault(key, set()).update(locked)
    return out


def route_args(r, family, locks=(), metrics=None):
    """Reconstruct the full `ip route` argument list (after the verb) for a
    route from its `ip -j -d` JSON, with `metrics` (JSON names) replacing
    the route's metrics when given.  Raises TuneError for routes carrying
    attributes that cannot be reconstructed (they would be lost)."""
    unknown = sorted(set(r) - KNOWN_ROUTE_KEYS)
    if unknown:
        raise TuneError("%s: attribute %s cannot be reconstructed by tcp-tune; "
                        "refusing to change this route (it would be lost)"
                        % (route_label(r, family), ", ".join(unknown)))
    rtype = r.get("type", "unicast")
    args = []
    if rtype != "unicast":
        args.append(rtype)
    args.append(r["dst"])
    if r.get("tos") not in (None, "0", 0, "0x0"):
        args += ["tos", str(r["tos"])]
    if r.get("from"):
        args += ["from", r["from"]]
    args += ["table", str(r.get("table", "main"))]
    args += ["proto", str(r.get("protocol", "boot"))]
    if family == 4:
        args += ["scope", str(r.get("scope", "global"))]
    if r.get("metric") is not None and not (family == 4 and r["metric"] == 0):
        args += ["metric", str(r["metric"])]
    if family == 6 and r.get("pref"):
        args += ["pref", r["pref"]]
    flags = set(r.get("flags") or [])
    odd = sorted(flags - DERIVED_FLAGS - {"onlink"})
    if odd:
        raise TuneError("%s: flag %s cannot be reconstructed; refusing to change "
                        "this route" % (route_label(r, family), ", ".join(odd)))
    nexthops = []            # iproute2 reads everything after "nexthop" as
    if rtype == "unicast":   # nexthop options, so they go last
        if r.get("nhid") is not None:
            args += ["nhid", str(r["nhid"])]
        elif r.get("nexthops"):
            for nh in r["nexthops"]:
                args, saved = nexthops, args
                args.append("nexthop")
                if nh.get("gateway"):
                    args += ["via", nh["gateway"]]
                elif nh.get("via"):
                    args += ["via", nh["via"]["family"], nh["via"]["host"]]
                if nh.get("dev"):
                    args += ["dev", nh["dev"]]
                if nh.get("weight") is not None:
                    args += ["weight", str(nh["weight"])]
                if "onlink" in (nh.get("flags") or []):
                    args.append("onlink")
                extra = sorted(set(nh) - {"gateway", "via", "dev", "weight",
                                          "flags"})
                if extra:
                    raise TuneError("%s: nexthop attribute %s cannot be "
                                    "reconstructed; refusing to change this route"
                                    % (route_label(r, family), ", ".join(extra)))
                nexthops, args = args, saved
        else:
            if r.get("gateway"):
                args += ["via", r["gateway"]]
            elif r.get("via"):
                args += ["via", r["via"]["family"], r["via"]["host"]]
            if r.get("dev"):
                args += ["dev", r["dev"]]
            if "onlink" in flags:
                args.append("onlink")
    if r.get("prefsrc"):
        args += ["src", r["prefsrc"]]
    m = route_metrics(r) if metrics is None else metrics
    for name in METRIC_ARG:
        if name not in m or m[name] is None and name != "ecn":
            continue
        arg = METRIC_ARG[name]
        args.append(arg)
        if name in locks and name in LOCKABLE:
            args.append("lock")
        if name == "ecn":
            args.append("ecn")
        elif name in TIME_METRICS:
            args.append("%dms" % m[name])
        else:
            args.append(str(m[name]))
    extra = sorted(set(m) - set(METRIC_ARG))
    if extra:
        raise TuneError("%s: metric %s cannot be reconstructed; refusing to "
                        "change this route" % (route_label(r, family),
                                               ", ".join(extra)))
    return args + nexthops


def dst_matches(r, family, prefix):
    """prefix: an ipaddress network."""
    dst = r.get("dst")
    if dst == "default":
        net = ipaddress.ip_network("0.0.0.0/0" if family == 4 else "::/0")
    else:
        try:
            net = ipaddress.ip_network(dst, strict=False)
        except ValueError:
            return False
    return net == prefix


def parse_prefix(text):
    if text == "default":
        return None
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError as e:
        raise TuneError("--dst %s: not a network prefix (%s)" % (text, e)) from None


def route_devs(r):
    devs = set()
    if r.get("dev"):
        devs.add(r["dev"])
    for nh in r.get("nexthops") or []:
        if nh.get("dev"):
            devs.add(nh["dev"])
    return devs


def select_routes(snap, sel, where=""):
    """sel: dict(kind=default|all|dst, prefix=network or None, families=(4,6),
    dev=None, table='main', all=bool).  Returns [(family, route)]."""
    table = str(sel.get("table") or "main")
    out, odd = [], []
    for fam in sel.get("families", (4, 6)):
        for r in snap.routes[fam]:
            if str(r.get("table", "main")) != table and table != "all":
                continue
            if sel["kind"] == "default":
                if r.get("dst") != "default":
                    continue
            elif sel["kind"] == "dst":
                if sel["prefix"].version != fam or not dst_matches(
                        r, fam, sel["prefix"]):
                    continue
            if sel.get("dev") and sel["dev"] not in route_devs(r):
                continue
            if r.get("type", "unicast") != "unicast":
                odd.append((fam, r))
                continue
            out.append((fam, r))
    desc = {"default": "default route", "all": "route",
            "dst": "route to %s" % sel.get("prefix")}[sel["kind"]]
    fams = "/".join("IPv%d" % f for f in sel.get("families", (4, 6)))
    scope = "%s in table %s%s" % (fams, table,
                                  " dev %s" % sel["dev"] if sel.get("dev") else "")
    if not out:
        if odd:
            raise TuneError("%sno unicast %s %s (only %s, which carries no TCP "
                            "traffic)" % (where, desc, scope,
                                          "; ".join(route_label(r, f) for f, r in odd)))
        raise TuneError("%sno %s %s%s" % (where, desc, scope, snap.ns_label))
    per_family = {}
    for f, _r in out:
        per_family[f] = per_family.get(f, 0) + 1
    if max(per_family.values()) > 1 and not sel.get("all"):
        raise TuneError("%s%d routes match (%s): %s; narrow with --dev/--table/-4/-6 "
                        "or pass --all" % (where, len(out), scope,
                                           "; ".join(route_label(r, f) for f, r in out)))
    return out

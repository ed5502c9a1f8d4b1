"""`tcp-tune show`: the TCP tuning in effect (text or JSON), and which
route, initcwnd and congestion control a destination gets."""

import ipaddress
import json
import os

from .errors import TuneError
from .host import host_label
from .routes import route_label, route_metrics
from .settings import GLOBAL_READ, MODULE_PARAMS, SHOW_SYSCTLS


def explain_dst(host, addr, snap):
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:
        raise TuneError("--dst %s: not an IP address" % addr) from None
    fam = ip.version
    p = host.query(host.ip_prefix(fam) + ["-j", "route", "get", addr], check=False)
    if p.returncode != 0:
        raise TuneError("no route to %s%s: %s" % (addr, host_label(host),
                                                  p.stderr.strip()))
    got = json.loads(p.stdout)[0]
    fm = host.query(host.ip_prefix(fam) + ["-d", "-j", "route", "get", "fibmatch",
                                           addr], check=False)
    match = json.loads(fm.stdout)[0] if fm.returncode == 0 and fm.stdout.strip() \
        else None
    m = route_metrics(match or got)
    cc = snap.sysctl.get("net.ipv4.tcp_congestion_control")
    out = {"destination": addr, "resolved": got, "route": match}
    if m.get("initcwnd"):
        out["initcwnd"] = m["initcwnd"]
        out["initcwnd_source"] = "route metric"
    elif cc == "cocktail" and "tcp_cocktail" in snap.modules:
        iw = snap.modules["tcp_cocktail"].get("iw")
        out["initcwnd"] = iw
        out["initcwnd_source"] = "tcp_cocktail iw parameter (route has no initcwnd)"
    else:
        out["initcwnd"] = 10
        out["initcwnd_source"] = "kernel default TCP_INIT_CWND (route has no initcwnd)"
    out["congestion_control"] = m.get("congestion") or cc
    out["congestion_control_source"] = ("route congctl" if m.get("congestion")
                                        else "namespace default")
    return out


def route_row(fam, r):
    m = route_metrics(r)

    def val(n):
        v = m.get(n)
        if v is None:
            return "-"
        return "%dms" % v if n == "rto_min" else str(v)
    return {"family": fam, "route": route_label(r, fam),
            "initcwnd": m.get("initcwnd"), "initrwnd": m.get("initrwnd"),
            "quickack": m.get("quickack"), "congctl": m.get("congestion"),
            "rto_min": m.get("rto_min"),
            "text": "initcwnd %s initrwnd %s quickack %s congctl %s rto_min %s" % (
                val("initcwnd"), val("initrwnd"), val("quickack"),
                val("congestion"), val("rto_min"))}


def cmd_show(args, host, st):
    snap = host.snapshot()
    table = args.table or "main"
    routes = [route_row(f, r) for f in (4, 6) for r in snap.routes[f]
              if table == "all" or str(r.get("table", "main")) == table]
    s = snap.sysctl
    data = {
        "netns": host.netns,
        "congestion_control": {
            "default": s.get("net.ipv4.tcp_congestion_control"),
            "available": snap.available_cc, "allowed": snap.allowed_cc},
        "sysctl": {k: s.get(k) for k in SHOW_SYSCTLS
                   if "congestion_control" not in k},
        "module": {m: snap.modules.get(m) for m in MODULE_PARAMS},
        "routes": routes,
        "state_file": st.file if os.path.exists(st.file) else None,
    }
    if args.dst:
        data["dst"] = explain_dst(host, args.dst, snap)
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    cc = data["congestion_control"]
    print("namespace: %s" % (host.netns or "(this process's)"))
    print("congestion control: default %s; available: %s; allowed: %s"
          % (cc["default"], " ".join(cc["available"]), " ".join(cc["allowed"])))
    for k, v in data["sysctl"].items():
        print("%s = %s%s" % (k, v, "   (host-global)" if k in GLOBAL_READ else ""))
    for m, params in data["module"].items():
        if params is None:
            print("module %s: not loaded" % m)
        else:
            print("module %s: %s" % (m, " ".join("%s=%s" % kv
                                                 for kv in sorted(params.items()))))
    print("routes (table %s):" % table)
    for r in routes:
        print("  %s\n      %s" % (r["route"], r["text"]))
    if data["state_file"]:
        print("saved original state: %s (tcp-tune revert restores it)"
              % data["state_file"])
    if args.dst:
        d = data["dst"]
        rt = d["route"] or d["resolved"]
        print("destination %s uses: %s" % (
            args.dst, route_label(rt, 6 if ":" in args.dst else 4)))
        print("  initcwnd %s (%s)" % (d["initcwnd"], d["initcwnd_source"]))
        print("  congestion control %s (%s)" % (d["congestion_control"],
                                                d["congestion_control_source"]))
        print("  note: a socket bound to another device, with SO_MARK, or "
              "matched by another `ip rule`, may use a different route")
    return 0

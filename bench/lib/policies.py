"""The policies every scenario compares, and how to apply one.

Kernel policies are a congestion control (set per socket with
TCP_CONGESTION) plus net.ipv4.tcp_slow_start_after_idle in the sender's
namespace.  `cocktail-*` policies also set the tcp_cocktail module's
parameters (global to the machine, so runs are sequential); `bpf-*`
policies the same parameters of the BPF build (algorithm cocktail_bpf,
registered and set with bpf/cocktail-bpf).  When
scripts/tcp-tune exists the namespace sysctl is applied through
`tcp-tune --netns` so the bench exercises it; otherwise with sysctl(8).
"""
import concurrent.futures
import os
import re
from pathlib import Path

from cocktail_lab import bpfctl, modparams, proc

from . import ktrace

REPO = Path(__file__).resolve().parents[2]
KMOD = modparams.KMOD
KO = KMOD / "tcp_cocktail.ko"
# the congestion controls whose parameters a policy sets
BUILDS = ("cocktail", "cocktail_bpf")


class Policy:
    def __init__(self, name, cc, ssai, label, cocktail=None,
                 defaults=False):
        self.name, self.cc, self.ssai, self.label = name, cc, ssai, label
        self.cocktail = cocktail or {}
        # the module's parameters all at their defaults (module_defaults())
        self.defaults = defaults

    def __repr__(self):
        return "Policy(%s)" % self.name


KERNEL = [
    Policy("linux-default", "cubic", 1, "Linux default (CUBIC, SSAI=1)"),
    Policy("cubic-nossai", "cubic", 0, "CUBIC, SSAI=0"),
    Policy("bbr", "bbr", 1, "BBR"),
    Policy("reno-ssr", "reno", 1, "Reno, SSAI=1 (classic SSR)"),
]
# every cocktail policy sets cwv, so a variant's setting does not carry over
COCKTAIL = [Policy("cocktail-%s" % r, "cocktail", 1, "cocktail restart=%s" % r,
                   {"restart": r, "cwv": 1})
            for r in ("ssr", "decay", "keep", "pace", "auto")]
# the module as installed: every parameter at its default, whatever the
# defaults are in the module that runs (the scorecard's "default")
DEFAULT = Policy("cocktail-default", "cocktail", 1,
                 "cocktail, every parameter at its default", defaults=True)
ALL = KERNEL + [DEFAULT] + COCKTAIL
# congestion window validation off (0) and RFC 7661 (2) beside the default
# RFC 2861 (1): run when asked for with --only policy=...
CWV_VARIANTS = [Policy("cocktail-%s-cwv%d" % (r, c), "cocktail", 1,
                       "cocktail restart=%s cwv=%d" % (r, c),
                       {"restart": r, "cwv": c})
                for r in ("auto", "keep") for c in (0, 2)]
# restart=queue (ssr if the connection had queued before the idle period,
# else pace): run when asked for with --only policy=cocktail-queue
QUEUE = [Policy("cocktail-queue", "cocktail", 1, "cocktail restart=queue",
                {"restart": "queue", "cwv": 1})]
# the demo's link (bench/scenarios/demo.py, pacerate.py) runs the module
# with cwv=0 (growth while application-limited): every restart policy
# with cwv=0
DEMO_CWV0 = [Policy("cocktail-%s-cwv0" % r, "cocktail", 1,
                    "cocktail restart=%s cwv=0" % r, {"restart": r, "cwv": 0})
             for r in ("ssr", "decay", "pace")]
# restart=measure (the flight sized from the path's rate and checked on
# its first ACKs): run when asked for with --only policy=cocktail-measure
# (and cocktail-measure-cubic: the same restart with growth=cubic, which
# after a check that left the flight grows back toward the window of the
# last loss along CUBIC's curve instead of NewReno's one segment a round
# trip; cocktail-measure-cubic-noest: the same with ssthresh_est=0, so
# that only HyStart++ ends the initial slow start before a loss; and
# cocktail-ratecut: the same restart with check_rate_miss=0,
# whose exits on the ACKs' rate cut the flight they checked but neither
# count a miss nor lower the next flights' rate; and cocktail-norate:
# check_rate_pct=1, no exit on the ACKs' rate at all; and cocktail-probe125,
# cocktail-probe150: flights paced and sized at 125 or 150 % of the
# pre-idle rate when the last check passed with its lowest RTT showing a
# queue and while no failed one is remembered; and cocktail-nowndcap:
# wnd_cap=0, flights paced at the path's rate even when the peer's window
# held the connection's data back; and cocktail-room: queue_room=1,
# flights sent faster than the path's rate into the room a queue of the
# connection's own showed before the idle period; and cocktail-noqueue:
# queue_pct=1000, no queue ever counts as standing before the idle
# period: no flight halved for one, the check's RTT judged against the
# minimum RTT, no probe; and cocktail-measure-window: pace_rate=window,
# the pre-idle rate from the window over srtt, the share the last round
# trip got, instead of the larger of that and the windowed max delivery
# rate; and cocktail-shared-burst: shared_burst=1, the flight sent at
# once rather than paced when a queue others kept stood before the idle
# period; cocktail-shared-rtt: shared_rtt=1, that flight sized as the
# rate times srtt instead of the minimum RTT's BDP halved;
# cocktail-shared-rtt-burst: both; and cocktail-noensemble: ensemble=0,
# every restart at its own rate, also the k-th of a quick run toward one
# destination; cocktail-floor: pace_floor=1, until its first ACK the
# flight leaves no slower than the restart window per minimum RTT;
# cocktail-ssr-floor: ssr_floor=1, a flight that would take longer than
# a minimum RTT to send the restart window restarts as ssr when another
# connection restarted toward the destination while it was idle; and
# cocktail-quiet: quiet_pct=125, until its first ACK the flight leaves at
# 1.25 times its rate once a check found the path quiet, the default's
# value, named for the runs made before it was; cocktail-noquiet:
# quiet_pct=100, such a flight paced at its rate)
MEASURE = [Policy("cocktail-measure", "cocktail", 1, "cocktail restart=measure",
                  {"restart": "measure", "cwv": 1}),
           Policy("cocktail-measure-cubic", "cocktail", 1,
                  "cocktail restart=measure growth=cubic",
                  {"restart": "measure", "cwv": 1, "growth": "cubic"}),
           Policy("cocktail-measure-cubic-noest", "cocktail", 1,
                  "cocktail restart=measure growth=cubic ssthresh_est=0",
                  {"restart": "measure", "cwv": 1, "growth": "cubic",
                   "ssthresh_est": 0}),
           Policy("cocktail-ratecut", "cocktail", 1,
                  "cocktail restart=measure check_rate_miss=0",
                  {"restart": "measure", "cwv": 1, "check_rate_miss": 0}),
           Policy("cocktail-norate", "cocktail", 1,
                  "cocktail restart=measure check_rate_pct=1",
                  {"restart": "measure", "cwv": 1, "check_rate_pct": 1})] + [
           Policy("cocktail-probe%d" % pct, "cocktail", 1,
                  "cocktail restart=measure probe_pct=%d" % pct,
                  {"restart": "measure", "cwv": 1, "probe_pct": pct})
           for pct in (125, 150)] + [
           Policy("cocktail-" + name, "cocktail", 1,
                  "cocktail restart=measure " +
                  " ".join("%s=%s" % kv for kv in extra.items()),
                  dict({"restart": "measure", "cwv": 1}, **extra))
           for name, extra in (
               ("nowndcap", {"wnd_cap": 0}),
               ("room", {"queue_room": 1}),
               ("noqueue", {"queue_pct": 1000}),
               ("measure-window", {"pace_rate": "window"}),
               ("shared-burst", {"shared_burst": 1}),
               ("shared-rtt", {"shared_rtt": 1}),
               ("shared-rtt-burst", {"shared_rtt": 1, "shared_burst": 1}),
               ("noensemble", {"ensemble": 0}),
               ("floor", {"pace_floor": 1}),
               ("ssr-floor", {"ssr_floor": 1}),
               ("quiet", {"quiet_pct": 125}),
               ("noquiet", {"quiet_pct": 100}))]
# growth=cubic (CUBIC, RFC 9438, with HyStart++) beside growth=reno, each
# with the default restart: run when asked for with --only
# policy=cocktail-cubic (bench/scenarios/growth.py runs both). A policy
# that does not name growth runs with growth=reno (apply()), so cubic
# does not carry over into the policies after it
GROWTH = [Policy("cocktail-%s" % g, "cocktail", 1, "cocktail growth=%s" % g,
                 {"growth": g, "cwv": 1})
          for g in ("cubic", "reno")] + [
    # the kernel's restart (slow-start restart) with each growth: beside
    # linux-default and the default, it tells a restart's part in a
    # cell's time from the growth's
    Policy("cocktail-ssr-cubic", "cocktail", 1,
           "cocktail restart=ssr growth=cubic",
           {"restart": "ssr", "cwv": 1, "growth": "cubic"})]
# the BPF build with the module's restart policies: run when asked for
# with --only policy=bpf-..., beside the cocktail-* of the same restart
# (same decisions in the counters, times and throughput as ratios)
BPF = [Policy("bpf-%s" % r, "cocktail_bpf", 1, "cocktail_bpf restart=%s" % r,
              {"restart": r, "cwv": 1})
       for r in ("ssr", "pace", "auto", "measure")]
# Chan's Cocktail (his dissertation's chapter 5), the mix his tables
# 5.1-5.4 measure beside SSR, RBP and CWV: slow-start restart, an initial
# window of 2, NewReno with initial ssthresh estimation (Hoe's, from the
# first ACK train), window validation (RFC 2861) and Nagle off (the
# restart scenario's sender always sets TCP_NODELAY): run when asked for
# with --only policy=cocktail-chan
CHAN = [Policy("cocktail-chan", "cocktail", 1,
               "Chan's Cocktail: cocktail restart=ssr iw=2 ssthresh_est=1 "
               "cwv=1", {"restart": "ssr", "iw": 2, "ssthresh_est": 1,
                         "cwv": 1, "growth": "reno"})]
# a paced restart that starts with the restart window min(IW, cwnd) at
# once (pace_burst=1, the default) or is paced from its first segment
# (0): run when asked for with --only policy=cocktail-auto-noburst,...
# pace_burst acts on pace only (and on auto or queue when they choose
# it): cocktail-measure-noburst and -burst run the default restart again
# under another name, a second copy of it in the same run, which shows
# the run-to-run spread of a scorecard's counts
BURST = [Policy("cocktail-%s-%s" % (r, name), "cocktail", 1,
                "cocktail restart=%s pace_burst=%d" % (r, b),
                {"restart": r, "cwv": 1, "pace_burst": b})
         for r in ("auto", "pace", "measure")
         for name, b in (("burst", 1), ("noburst", 0))]
KNOWN = ALL + CWV_VARIANTS + QUEUE + MEASURE + DEMO_CWV0 + GROWTH + BPF + \
    CHAN + BURST
BY_NAME = {p.name: p for p in KNOWN}
# the paced restart at each pace_rate, cwv=0 and 1 (pacerate): applied
# only by writing the module's parameters, the demo's way, since
# tcp-tune's profiles do not set pace_rate; so not in KNOWN (apply())
PACE_RATES = [Policy("cocktail-pace-%s-cwv%d" % (rate, c), "cocktail", 1,
                     "cocktail restart=pace pace_rate=%s cwv=%d" % (rate, c),
                     {"restart": "pace", "pace_rate": rate, "cwv": c})
              for c in (0, 1) for rate in ("delivery", "window", "max")]
# every policy by name, whichever way it is applied
EVERY = dict(BY_NAME, **{p.name: p for p in PACE_RATES})
BASELINE = "linux-default"


# the parameters read right after this process loaded the module with
# none set: the defaults of the module that runs
_FRESH = {}


def cocktail_status():
    """(usable, reason): the module is loaded, or loadable from kmod/."""
    if modparams.has_params():
        return True, "loaded"
    if not KO.exists():
        return False, "kmod/tcp_cocktail.ko not built (module not landed)"
    if os.geteuid() != 0:
        return False, "not root"
    proc.sh("insmod %s" % KO, check=False)
    if modparams.has_params():
        _FRESH.update(writable(modparams.get_params()))
        return True, "loaded from kmod/"
    return False, "insmod kmod/tcp_cocktail.ko failed"


def bpf_status():
    """(usable, reason): cocktail_bpf is registered, or registers now."""
    if not bpfctl.TOOL.exists():
        return False, "bpf/cocktail-bpf not built (make bpf)"
    if os.geteuid() != 0:
        return False, "not root"
    if bpfctl.registered():
        return True, "registered"
    p = bpfctl.run("load", check=False)
    if p.returncode == 0:
        return True, "registered now"
    return False, p.stderr.strip()


def build_params(policy):
    """The parameters of POLICY's build as read back ({} for a kernel
    congestion control)."""
    if policy.cc == "cocktail":
        return modparams.get_params()
    if policy.cc == "cocktail_bpf":
        return bpfctl.get_params()
    return {}


def counters(policy):
    """The counters of POLICY's build ({} for a kernel congestion
    control): the module's stats, or the BPF build's, the same names."""
    if policy.cc == "cocktail":
        return modparams.counters()
    if policy.cc == "cocktail_bpf":
        return bpfctl.counters()
    return {}


def counters_since(policy, before):
    """The counters of POLICY's build that changed since BEFORE (a
    counters() snapshot), as "name=N ..." sorted by name, the form of the
    rows' `module_counters` column; None for a kernel congestion control
    (no counters to read).  The counters are global: over runs side by
    side they sum."""
    if policy.cc not in BUILDS:
        return None
    return " ".join("%s=%d" % kv for kv in sorted(
        modparams.counter_delta(before, counters(policy)).items()))


def writable(params):
    """PARAMS without the read-only ones (the counters)."""
    d = modparams.params_dir()
    return {k: v for k, v in params.items()
            if not (d / k).exists() or os.stat(d / k).st_mode & 0o200}


def declared_defaults(ko=KO):
    """{parameter: default} as the module's descriptions declare them
    ("... (default X)" or "(RANGE, default X)" in MODULE_PARM_DESC),
    read from the .ko's modinfo strings; parameters declaring none are
    left out."""
    data = Path(ko).read_bytes()
    out = {}
    for m in re.finditer(rb"parm=([A-Za-z0-9_]+):([^\0]*)\0", data):
        d = declared_default(m.group(2).decode("utf-8", "replace"))
        if d is not None:
            out[m.group(1).decode()] = d
    return out


def declared_default(desc):
    """The default a parameter description declares: X of "(default X)"
    or "(RANGE, default X)" closing it; None without one."""
    d = re.search(r"[(,]\s*default:?\s+([^),]+)\)", desc)
    return d.group(1).strip() if d else None


def module_defaults():
    """The module's parameters at their defaults: as read when this
    process loaded it with none set, else as its descriptions declare
    them.  A writable parameter without a known default is an error
    (cocktail-default would run with whatever the last policy left)."""
    if _FRESH:
        return dict(_FRESH)
    got = declared_defaults()
    if modparams.has_params():
        missing = sorted(set(writable(modparams.get_params())) - set(got))
        if missing:
            raise RuntimeError("cocktail-default: no declared default for "
                               "tcp_cocktail.%s (MODULE_PARM_DESC says no "
                               "'(default X)')" % ", ".join(missing))
    return got


def available(names=None, log=print):
    """The policies that can run here; skipped ones are logged with why."""
    bad = [n for n in names or () if n not in BY_NAME]
    if bad:
        raise SystemExit("unknown policy %s (known: %s)" % (
            ", ".join(bad), " ".join(BY_NAME)))
    want = [BY_NAME[n] for n in names] if names else ALL
    ok, why = cocktail_status() if any(p.cc == "cocktail" for p in want) \
        else (True, "")
    ok_bpf, why_bpf = bpf_status() if any(p.cc == "cocktail_bpf"
                                          for p in want) else (True, "")
    proc.sh("modprobe tcp_bbr", check=False)
    avail = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    kernel_ccs = avail.read_text().split() if avail.exists() else []
    out = []
    for p in want:
        if p.cc == "cocktail" and not ok:
            log("skip %s: %s" % (p.name, why))
        elif p.cc == "cocktail_bpf" and not ok_bpf:
            log("skip %s: %s" % (p.name, why_bpf))
        elif p.cc not in BUILDS and p.cc not in kernel_ccs:
            log("skip %s: %s not available" % (p.name, p.cc))
        else:
            out.append(p)
    return out


def tcp_tune():
    t = REPO / "scripts" / "tcp-tune"
    return t if t.exists() and os.access(t, os.X_OK) else None


def profile_text(policy, extra_params=None):
    """A tcp-tune profile (sysctl/profiles format) for POLICY."""
    lines = ["# bench policy %s: %s" % (policy.name, policy.label)]
    # cocktail_bpf is registered by bpf/cocktail-bpf, not a module
    if policy.cc not in ("cocktail", "cocktail_bpf", "cubic", "reno"):
        lines.append("load tcp_%s" % policy.cc)
    if policy.cc == "cocktail":
        params = dict(policy.cocktail)
        params.update(extra_params or {})
        lines.append("load tcp_cocktail")
        lines += ["tcp_cocktail.%s = %s" % kv for kv in sorted(params.items())]
        lines.append("net.ipv4.tcp_allowed_congestion_control += cocktail")
    lines.append("net.ipv4.tcp_congestion_control = %s" % policy.cc)
    lines.append("net.ipv4.tcp_slow_start_after_idle = %d" % policy.ssai)
    return "\n".join(lines) + "\n"


STATE = REPO / "build" / "bench" / "tune"
# parameters only some policies name (growth, Chan's iw=2, ssthresh_est,
# pace_burst, check_rate_pct, check_rate_miss, probe_pct, wnd_cap,
# queue_room, shared_burst, shared_rtt, pace_floor, ssr_floor, quiet_pct,
# ensemble,
# queue_pct): a policy that
# does not name one runs with it reset, so a
# setting does not carry over from the policy before; growth to reno (every
# restart policy is
# compared under NewReno growth), the others to their defaults
CARRIED = ("growth", "iw", "ssthresh_est", "pace_burst", "check_rate_pct",
           "check_rate_miss", "probe_pct", "wnd_cap", "queue_room",
           "shared_burst", "shared_rtt", "pace_floor", "ssr_floor", "quiet_pct",
           "ensemble", "queue_pct")


def carried():
    """{parameter: value} of CARRIED for a policy that names none."""
    d = module_defaults()
    return {k: "reno" if k == "growth" else d[k] for k in CARRIED}



def apply(policy, ns_list, extra_params=None, jobs=1):
    """Apply POLICY (plus EXTRA_PARAMS for the module, e.g. iw) in every
    namespace of NS_LIST with `tcp-tune --netns NS apply FILE` (JOBS
    namespaces at a time), then check that the namespace's sysctls and the
    module's parameters read back as asked.  Without scripts/tcp-tune,
    sysctls are written directly.
    Returns a description of what was applied, for the CSV."""
    if policy.cc in BUILDS and not policy.defaults:
        named = dict(policy.cocktail, **(extra_params or {}))
        fill = {k: v for k, v in carried().items() if k not in named}
        if fill:
            extra_params = dict(extra_params or {}, **fill)
    text = profile_text(policy, extra_params)
    ktrace.marker("policy=%s" % policy.name)
    if policy.defaults:
        # written directly, like the demo's parameters: tcp-tune's
        # profiles know only the parameters it validates, the defaults
        # cover every one the module has
        want = dict(module_defaults())
        want.update(extra_params or {})
        modparams.set_params(want)
        extra_params = want
    if policy.cc == "cocktail_bpf":
        # the tool checks every value before it writes any
        want = dict(policy.cocktail)
        want.update(extra_params or {})
        bpfctl.set_params(want)
    tool = tcp_tune()
    prof = STATE / ("%s.profile" % policy.name)
    if tool:
        prof.parent.mkdir(parents=True, exist_ok=True)
        prof.write_text(text)

    def one(ns):
        if tool:
            proc.sh("%s --netns %s --state-dir %s --module-path %s apply %s"
                    % (tool, ns, STATE / ns, KMOD, prof))
        else:
            if policy.cc == "cocktail":
                params = dict(policy.cocktail)
                params.update(extra_params or {})
                modparams.set_params(params)
            proc.sysctl(ns, "net.ipv4.tcp_slow_start_after_idle",
                        policy.ssai)
        got = proc.sysctl_get(ns, "net.ipv4.tcp_slow_start_after_idle")
        if int(got) != policy.ssai:
            raise RuntimeError("%s: tcp_slow_start_after_idle is %s in %s, "
                               "wanted %d" % (policy.name, got, ns,
                                              policy.ssai))
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(one, ns_list))    # re-raises the first failure
    desc = ["ssai=%d" % policy.ssai]
    if policy.cc in BUILDS:
        want = dict(policy.cocktail)
        want.update(extra_params or {})
        have = build_params(policy)
        for k, v in sorted(want.items()):
            if str(have.get(k)) != str(v):
                raise RuntimeError("%s.%s is %r, wanted %r" % (
                    policy.cc, k, have.get(k), v))
            desc.append("%s=%s" % (k, v))
    return ";".join(desc)


def revert(ns_list):
    """Undo tcp-tune's changes (module parameters are host-global)."""
    tool = tcp_tune()
    if not tool:
        return
    for ns in ns_list:
        if (STATE / ns).exists():
            proc.sh("%s --netns %s --state-dir %s revert" %
                    (tool, ns, STATE / ns), check=False)

"""Planning: pure functions from what was asked (a profile, a route
command, a saved state) and a Snapshot to the list of actions and the
notes for the operator.  Every problem is found before anything is done:
they raise TuneError listing all of them."""

from .actions import ChangeRoute, LoadModule, SetParam, SetSysctl
from .errors import TuneError
from .metrics import ARG_METRIC
from .routes import route_args, route_key, route_label, route_metrics, select_routes
from .settings import ALLOWED_KEY, SYSCTLS
from .validate import norm


# ---------------------------------------------------------------- profiles

class ProfilePlanning:
    """One profile being planned against a snapshot: the options, what the
    module steps decided, and the errors and notes found so far (in the
    order of the profile's sections: modules, parameters, sysctls, routes)."""

    def __init__(self, profile, snap, opts):
        self.profile, self.snap = profile, snap
        self.netns = opts.get("netns")
        self.no_routes = opts.get("no_routes")
        self.global_ok = snap.can_write_global and not opts.get("no_global")
        self.why_global = ("--no-global was given" if opts.get("no_global") else
                           "this process is not in the initial network namespace")
        self.errors, self.notes = [], []
        self.loaded_by_profile, self.failed_loads = set(), set()

    def where(self, no):
        return "%s:%d: " % (self.profile.path, no)

    def error(self, no, msg):
        self.errors.append(self.where(no) + msg)

    def cc_ok(self, no, name, what):
        """Is congestion control `name` (asked for at line `no` by `what`)
        available, or made so by the profile's own load lines?"""
        snap = self.snap
        if name in snap.available_cc:
            return True
        mod = "tcp_" + name
        if mod in self.loaded_by_profile:
            return True
        if mod in self.failed_loads:
            return False
        if snap.module_available(mod):
            self.error(no, "%s: congestion control %r is not available "
                       "(module %s exists but is not loaded: add 'load %s' to "
                       "the profile)" % (what, name, mod, mod))
        else:
            self.error(no, "%s: congestion control %r is not available "
                       "(available: %s; no module %s)"
                       % (what, name, " ".join(snap.available_cc), mod))
        return False


def plan_profile(profile, snap, opts):
    """Validate a parsed profile against the snapshot; return (actions, notes).
    opts: netns, no_routes, no_global.  Raises TuneError listing every
    problem (file:line)."""
    p = ProfilePlanning(profile, snap, opts)
    actions = plan_loads(p)
    actions += plan_params(p)
    sys_actions, allowed, default_cc = plan_sysctls(p)
    actions += allow_default_cc(p, sys_actions, allowed, default_cc)
    if not p.no_routes:
        actions += plan_route_lines(p)
    if p.errors:
        raise TuneError("\n".join(p.errors))
    return actions, p.notes


def plan_loads(p):
    """The profile's `load MODULE` lines: LoadModule for each module not
    loaded yet (host-global)."""
    actions = []
    for no, mod in p.profile.loads:
        if mod in p.snap.modules:
            continue                    # already loaded: nothing to do
        if not p.snap.module_available(mod):
            p.failed_loads.add(mod)
            p.error(no, "module %s not found (no %s.ko in --module-path, and "
                    "modprobe does not know it)" % (mod, mod))
            continue
        if not p.global_ok:
            p.error(no, "loading module %s is host-global and cannot be done: %s"
                    % (mod, p.why_global))
            continue
        p.loaded_by_profile.add(mod)
        actions.append(LoadModule(mod, p.snap.module_files.get(mod)))
        if p.netns:
            p.notes.append("module %s is loaded for the whole host, not only "
                           "namespace %s" % (mod, p.netns))
    return actions


def plan_params(p):
    """The profile's MODULE.PARAM lines: SetParam for each value that
    differs (host-global)."""
    actions = []
    snap = p.snap
    for no, mod, param, value in p.profile.params:
        if mod in p.failed_loads:
            continue
        if mod not in snap.modules and mod not in p.loaded_by_profile:
            p.error(no, "module %s is not loaded; add 'load %s' to the profile"
                    % (mod, mod))
            continue
        names = snap.module_param_names.get(mod)
        if names is not None and param not in names:
            p.error(no, "module %s has no parameter %s (it has: %s)"
                    % (mod, param, ", ".join(sorted(names))))
            continue
        if not p.global_ok:
            p.error(no, "module parameters are host-global and cannot be set: %s"
                    % p.why_global)
            continue
        old = snap.modules.get(mod, {}).get(param)
        if old is not None and norm(old) == norm(value):
            continue
        actions.append(SetParam(mod, param, value, old,
                                fresh_module=mod in p.loaded_by_profile))
        if p.netns:
            p.notes.append("%s.%s is a module parameter: it applies to every "
                           "namespace" % (mod, param))
    return actions


def plan_sysctls(p):
    """The profile's sysctl lines: SetSysctl for each value that differs.
    Returns (actions, the allowed congestion control list the profile
    leaves, (line, name) of the default congestion control it sets or
    None)."""
    actions = []
    allowed = list(p.snap.allowed_cc)
    default_cc = None
    for no, key, op, value in p.profile.sysctls:
        kind = SYSCTLS[key][2]
        if kind == "cclist":
            for n in value.split():
                p.cc_ok(no, n, key)
            if op == "+=":
                value = " ".join(allowed + [n for n in value.split()
                                            if n not in allowed])
            allowed = value.split()
        elif kind == "cc":
            if not p.cc_ok(no, value, key):
                continue
            default_cc = (no, value)
        elif kind == "qdisc" and value != "pfifo_fast" and \
                not p.snap.module_available("sch_" + value):
            p.error(no, "%s: qdisc %r is not available (no module sch_%s)"
                    % (key, value, value))
            continue
        a = plan_sysctl(p, no, key, value)
        if a:
            actions.append(a)
    return actions, allowed, default_cc


def plan_sysctl(p, no, key, value):
    """SetSysctl setting `key` to `value` (line `no`), or None when it has
    that value already or cannot be set (an error says why)."""
    scope, kind = SYSCTLS[key][1:]
    cur = (p.snap.global_sysctl if scope == "global" else p.snap.sysctl).get(key)
    if cur is None:
        p.error(no, "%s does not exist in this kernel/namespace" % key)
        return None
    if scope == "global":
        if not p.global_ok:
            if norm(cur) != norm(value):
                p.error(no, "%s is host-global and cannot be changed: %s"
                        % (key, p.why_global))
            return None
        if p.netns:
            p.notes.append("%s is host-global: changed for the whole host, not "
                           "only namespace %s" % (key, p.netns))
    if kind == "cclist":
        same = set((cur or "").split()) == set(value.split())
    else:
        same = norm(cur) == norm(value)
    return None if same else SetSysctl(key, value, cur, scope)


def allow_default_cc(p, sys_actions, allowed, default_cc):
    """The netns trap: outside the initial namespace, only an algorithm in
    tcp_allowed_congestion_control can become the default, so one the
    profile makes the default is added to that (host-global) list.  Returns
    the sysctl actions, the allowed list first so that the default's check
    passes."""
    if default_cc and not p.errors:
        no, name = default_cc
        if not p.snap.target_is_init and name not in allowed:
            if not p.global_ok:
                p.error(no, "cannot make %r the default in this namespace: a "
                        "non-initial namespace may only select an algorithm "
                        "listed in %s, that list is host-global and %s"
                        % (name, ALLOWED_KEY, p.why_global))
            else:
                new = " ".join(allowed + [name])
                old = p.snap.global_sysctl.get(ALLOWED_KEY)
                sys_actions = [a for a in sys_actions if a.key != ALLOWED_KEY]
                sys_actions.append(SetSysctl(ALLOWED_KEY, new, old, "global"))
                p.notes.append("added %s to %s (host-global): a non-initial "
                               "namespace can only make an allowed algorithm its "
                               "default" % (name, ALLOWED_KEY))
        # In the initial namespace the kernel adds the default to the
        # allowed list by itself; record_originals saves the list so that
        # revert restores it.
    return sorted(sys_actions, key=lambda a: 0 if a.key == ALLOWED_KEY else 1)


def plan_route_lines(p):
    """The profile's route lines: ChangeRoute for each route that does not
    have the metrics yet.  A route two lines change is an error."""
    actions = []
    touched = set()
    snap = p.snap
    for no, sel, metrics in p.profile.routes:
        try:
            if "congctl" in metrics and metrics["congctl"]:
                if not p.cc_ok(no, metrics["congctl"], "congctl"):
                    continue
            for fam, r in select_routes(snap, sel, p.where(no)):
                if sel["kind"] == "all" and shared_key(snap, fam, r):
                    p.notes.append(SHARED_NOTE % route_label(r, fam))
                    continue
                k = route_key(r, fam)
                if k in touched:
                    p.error(no, "%s is changed by two route lines"
                            % route_label(r, fam))
                    continue
                touched.add(k)
                a = plan_route_change(snap, fam, r, metrics)
                if a:
                    actions.append(a)
        except TuneError as e:
            p.errors.append(str(e) if str(e).startswith(p.profile.path)
                            else p.where(no) + str(e))
    return actions


# ------------------------------------------------------------------ routes

def plan_route_change(snap, fam, r, metrics):
    """ChangeRoute action setting `metrics` (JSON names; None removes) on
    route r, or None when it already has them."""
    locks = snap.locks[fam].get(route_key(r, fam), set())
    old_args = route_args(r, fam, locks)
    check_unique_key(snap, fam, r)
    new_m = dict(route_metrics(r))
    for arg, value in metrics.items():
        name = ARG_METRIC[arg]
        if value is None:
            new_m.pop(name, None)
        else:
            new_m[name] = value
    new_args = route_args(r, fam, locks, new_m)
    if new_args == old_args:
        return None
    cur_m = route_metrics(r)
    changed = {n: cur_m.get(n) for n in set(cur_m) | set(new_m)
               if cur_m.get(n) != new_m.get(n)}
    return ChangeRoute(fam, new_args, old_args, route_key(r, fam),
                       route_label(r, fam), old_metrics=changed,
                       old_locked=set(changed) & set(locks))


def shared_key(snap, fam, r):
    k = route_key(r, fam)
    return len([x for x in snap.routes[fam] if route_key(x, fam) == k]) > 1


def check_unique_key(snap, fam, r):
    k = route_key(r, fam)
    same = [x for x in snap.routes[fam] if route_key(x, fam) == k]
    if len(same) > 1:
        raise TuneError("%s: %d routes share destination, table, tos and metric; "
                        "the kernel's change would hit the first one only, so "
                        "tcp-tune refuses" % (route_label(r, fam), len(same)))


def plan_route_cmd(sel, metrics, snap):
    if "congctl" in metrics and metrics["congctl"] and \
            metrics["congctl"] not in snap.available_cc:
        name = metrics["congctl"]
        mod = "tcp_" + name
        hint = ("module %s exists but is not loaded: modprobe %s first" % (mod, mod)
                if snap.module_available(mod) else "no module %s" % mod)
        raise TuneError("congctl: congestion control %r is not available (%s)"
                        % (name, hint))
    actions, notes = [], []
    for fam, r in select_routes(snap, sel):
        if sel["kind"] == "all" and shared_key(snap, fam, r):
            notes.append(SHARED_NOTE % route_label(r, fam))
            continue
        a = plan_route_change(snap, fam, r, metrics)
        if a:
            actions.append(a)
    return actions, notes


SHARED_NOTE = ("skipped %s: another route has the same destination, table, tos and "
               "metric (e.g. fe80::/64 on several devices), so the kernel's change "
               "could hit the wrong one; select it with --dst/--dev if needed")


# ------------------------------------------------------------------ revert

def plan_revert(state, snap, opts):
    """Actions restoring the saved originals (a SavedState) on the system
    now (a Snapshot): routes, then the namespace's sysctls and module
    parameters, then the host-global sysctls.  Raises TuneError when a
    saved route no longer exists (unless opts skip_missing) or host-global
    settings cannot be restored."""
    errors, notes = [], []
    actions = _revert_ns_sysctls(state, snap)
    gl = _revert_global_sysctls(state, snap, errors)
    actions += _revert_params(state, snap, notes)
    route_actions = _revert_routes(state, snap, opts.get("skip_missing"),
                                   errors, notes)
    if errors:
        raise TuneError("\n".join(errors))
    return route_actions + actions + gl, notes


def _revert_ns_sysctls(state, snap):
    actions = []
    for key, old in state.sysctl.items():
        cur = snap.sysctl.get(key)
        if norm(cur) != norm(old) and old is not None:
            actions.append(SetSysctl(key, old, cur, "ns"))
    # default congestion control first (it may need the allowed entry,
    # restored after it among the host-global ones)
    actions.sort(key=lambda a: 0 if a.key.endswith("congestion_control") else 1)
    return actions


def _revert_global_sysctls(state, snap, errors):
    gl = []
    for key, old in state.global_sysctl.items():
        cur = snap.global_sysctl.get(key)
        if old is None:
            continue
        if key == ALLOWED_KEY:
            if set((cur or "").split()) != set(old.split()):
                gl.append(SetSysctl(key, old, cur, "global"))
        elif norm(cur) != norm(old):
            gl.append(SetSysctl(key, old, cur, "global"))
    if gl and not snap.can_write_global:
        errors.append("saved host-global settings (%s) cannot be restored from "
                      "this namespace" % ", ".join(a.key for a in gl))
    # the allowed list last: the default is restored before it
    gl.sort(key=lambda a: 1 if a.key == ALLOWED_KEY else 0)
    return gl


def _revert_params(state, snap, notes):
    actions = []
    for mod, params in state.module_params.items():
        if mod not in snap.modules:
            notes.append("module %s is no longer loaded; its saved parameters "
                         "need no restoring" % mod)
            continue
        for p, old in params.items():
            cur = snap.modules[mod].get(p)
            if old is not None and norm(cur) != norm(old):
                actions.append(SetParam(mod, p, old, cur))
    return actions


def _revert_routes(state, snap, skip_missing, errors, notes):
    """For each saved route: the route as it is now, with only the metrics
    tcp-tune changed set back to their saved values (and lock flags); its
    gateway, device, source and other metrics stay as they are now (a DHCP
    client may have moved the gateway since).  A route that no longer
    exists is reported, never recreated."""
    actions = []
    for key, saved in state.routes.items():
        fam = saved.family
        cur = [r for r in snap.routes[fam] if route_key(r, fam) == key]
        if not cur:
            if skip_missing:
                notes.append("saved route %s no longer exists: skipped"
                             % saved.label)
                continue
            errors.append("saved route %s no longer exists (deleted since the "
                          "change?); nothing reverted; `revert --skip-missing` "
                          "restores everything else" % saved.label)
            continue
        r = cur[0]
        locks = snap.locks[fam].get(key, set())
        new_m = dict(route_metrics(r))
        new_locks = set(locks)
        for name, old in saved.metrics.items():
            if old is None:
                new_m.pop(name, None)
            else:
                new_m[name] = old
            if name in saved.locked:
                new_locks.add(name)
            else:
                new_locks.discard(name)
        try:
            cur_args = route_args(r, fam, locks)
            new_args = route_args(r, fam, new_locks, new_m)
        except TuneError as e:
            errors.append(str(e))
            continue
        if cur_args != new_args:
            actions.append(ChangeRoute(fam, new_args, cur_args, key,
                                       route_label(r, fam)))
    return actions

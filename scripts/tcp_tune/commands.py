"""The commands that change things: apply, route and revert, each planned
first, then committed as one transaction with the originals saved."""

import copy
import sys

from .actions import UnloadModule, run_actions
from .errors import StepError, TuneError
from .host import host_label
from .metrics import parse_metric_args
from .plan import plan_profile, plan_revert, plan_route_cmd
from .profile import find_profile, modules_wanted, parse_profile
from .routes import parse_prefix
from .state import new_state, record_originals


def commit(host, st, snap, actions, notes, what):
    """Print the notes, then run the actions (or print them with --dry-run)
    after saving the originals they change; a failed step rolls back and
    restores the saved state as it was."""
    for n in notes:
        print("note: " + n, file=sys.stderr)
    if not actions:
        print("nothing to change: %s already in effect%s" % (what, host_label(host)))
        return 0
    if host.dry_run:
        for a in actions:
            host.log(a.command(host))
        return 0
    prev = st.load()
    ident = host.identity()
    if prev is not None and not prev.belongs_to(ident):
        print("note: discarding saved state %s: it belongs to a namespace or boot "
              "that no longer exists" % st.file, file=sys.stderr)
        prev = None
    state = copy.deepcopy(prev) if prev else new_state(ident, host.netns)
    record_originals(state, actions, snap)
    st.save(state)
    try:
        run_actions(host, actions)
    except StepError as e:
        if prev is None:
            st.remove()
        else:
            st.save(prev)
        print("tcp-tune: error: " + str(e), file=sys.stderr)
        return 1
    print("%s: %d change(s) made%s; original state saved in %s (tcp-tune revert "
          "restores it)" % (what, len(actions), host_label(host), st.file))
    return 0


def cmd_apply(args, host, st):
    path = find_profile(args.profile, args.launcher)
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise TuneError("cannot read profile %s: %s" % (path, e.strerror)) from None
    profile = parse_profile(text, path)
    snap = host.snapshot(modules_wanted(profile))
    actions, notes = plan_profile(profile, snap, {
        "netns": host.netns, "no_routes": args.no_routes,
        "no_global": args.no_global})
    return commit(host, st, snap, actions, notes, "profile %s" % profile.name)


def cmd_route(args, host, st):
    metrics = parse_metric_args(args.metrics)
    if args.default and args.dst:
        raise TuneError("give --dst PREFIX or --default, not both")
    fams = (4, 6)
    if args.ipv4 and args.ipv6:
        raise TuneError("give -4 or -6, not both")
    if args.ipv4:
        fams = (4,)
    if args.ipv6:
        fams = (6,)
    if args.default or (args.dst == "default"):
        sel = {"kind": "default"}
    elif args.dst:
        prefix = parse_prefix(args.dst)
        if prefix.version not in fams:
            raise TuneError("--dst %s is IPv%d but -%d was given"
                            % (args.dst, prefix.version, fams[0]))
        sel = {"kind": "dst", "prefix": prefix}
        fams = (prefix.version,)
    else:
        if not args.all:
            raise TuneError("give --dst PREFIX or --default (or --all for every "
                            "route in the table)")
        sel = {"kind": "all"}
    sel.update(families=fams, dev=args.dev, table=args.table or "main",
               all=args.all)
    if sel["table"] == "all":
        raise TuneError("--table all is only for show; name one table")
    snap = host.snapshot(modules_wanted(metrics=metrics))
    actions, notes = plan_route_cmd(sel, metrics, snap)
    return commit(host, st, snap, actions, notes, "route")


def cmd_revert(args, host, st):
    state = st.load()
    if state is None:
        print("nothing to revert: no saved state %s" % st.file)
        return 0
    ident = host.identity()
    if not state.belongs_to(ident) and not args.force:
        raise TuneError("saved state %s belongs to another boot or to a namespace "
                        "that no longer exists; nothing reverted (remove the file, "
                        "or pass --force)" % st.file)
    snap = host.snapshot(state.modules_loaded)
    actions, notes = plan_revert(state, snap, {"skip_missing": args.skip_missing})
    for n in notes:
        print("note: " + n, file=sys.stderr)
    unload = []
    for mod in state.modules_loaded:
        if mod not in snap.modules:
            continue
        users = st.others_using(mod)
        if users:
            print("note: module %s stays loaded: also used by %s"
                  % (mod, ", ".join(users)), file=sys.stderr)
            continue
        unload.append(UnloadModule(mod, state.modules_loaded[mod]))
    if host.dry_run:
        for a in actions + unload:
            host.log(a.command(host))
        return 0
    try:
        run_actions(host, actions)
    except StepError as e:
        print("tcp-tune: error: revert " + str(e), file=sys.stderr)
        return 1
    left = {}
    for u in unload:
        try:
            u.do(host)
        except StepError as e:
            left[u.module] = u.path
            print("tcp-tune: error: module %s could not be unloaded (%s); everything "
                  "else is restored; `tcp-tune revert` retries" % (u.module, e),
                  file=sys.stderr)
    if left:
        rest = new_state(state.identity, state.netns)
        rest.modules_loaded = left
        st.save(rest)
        return 1
    st.remove()
    print("reverted %d change(s)%s to the state saved at %s"
          % (len(actions) + len(unload), host_label(host), state.saved_at))
    return 0

"""Actions, one per command, each knowing its undo, and the transaction that
runs them: on a failure the steps already done are undone in reverse."""

import shlex
import sys

from .errors import StepError
from .validate import norm


class Action:
    note = None

    def command(self, ctx):
        raise NotImplementedError

    def do(self, ctx):
        ctx.run(self.command(ctx))

    def undo_action(self):
        raise NotImplementedError


class SetSysctl(Action):
    def __init__(self, key, value, old, scope):
        self.key, self.value, self.old, self.scope = key, value, old, scope

    def command(self, ctx):
        cmd = ["sysctl", "-q", "-w", "%s=%s" % (self.key, self.value)]
        return ctx.ns_prefix(self.scope) + cmd

    def do(self, ctx):
        p = ctx.run(self.command(ctx))
        # procps sysctl exits 0 even when the kernel refuses the write
        # (e.g. EPERM), so its message and the value read back decide
        if p is not None and p.stderr.strip():
            raise StepError("`%s` failed: %s" % (shlex.join(self.command(ctx)),
                                                 p.stderr.strip()))
        got = ctx.read_sysctls([self.key], self.scope).get(self.key)
        want = self.value
        if self.key.endswith("allowed_congestion_control"):
            ok = set((got or "").split()) == set(want.split())
        else:
            ok = norm(got) == norm(want)
        if not ok:
            raise StepError("%s reads back %r after writing %r"
                            % (self.key, got, want))

    def undo_action(self):
        return SetSysctl(self.key, self.old, self.value, self.scope)


class SetParam(Action):
    def __init__(self, module, param, value, old, fresh_module=False):
        self.module, self.param, self.value, self.old = module, param, value, old
        # the module is loaded by the same change: its revert unloads it
        self.fresh_module = fresh_module

    def path(self):
        return "/sys/module/%s/parameters/%s" % (self.module, self.param)

    def command(self, ctx):
        return ["sh", "-c", "echo %s > %s" % (shlex.quote(self.value), self.path())]

    def do(self, ctx):
        ctx.log(self.command(ctx))
        if ctx.dry_run:
            return
        try:
            with open(self.path(), "w") as f:
                f.write(self.value + "\n")
        except OSError as e:
            raise StepError("writing %r to %s: %s" % (self.value, self.path(),
                                                      e.strerror)) from None

    def undo_action(self):
        if self.old is None:        # module loaded by this run: rmmod undoes it
            return NoOp()
        return SetParam(self.module, self.param, self.old, self.value)


class NoOp(Action):
    def command(self, ctx):
        return ["true"]

    def do(self, ctx):
        pass


class LoadModule(Action):
    def __init__(self, module, path=None):
        self.module, self.path = module, path

    def command(self, ctx):
        return ["insmod", self.path] if self.path else ["modprobe", self.module]

    def undo_action(self):
        return UnloadModule(self.module, self.path)


class UnloadModule(Action):
    def __init__(self, module, path=None):
        self.module, self.path = module, path

    def command(self, ctx):
        return ["rmmod", self.module]

    def undo_action(self):
        return LoadModule(self.module, self.path)


class ChangeRoute(Action):
    """`ip route change` of one route.  args/old_args: the full argument
    lists after and before (the undo within the same transaction);
    old_metrics: the previous value (None: absent) of each metric (JSON
    name) the change alters, old_locked: those of them that were locked --
    what the state file keeps, so that a later revert changes only these
    metrics on the route as it is then."""

    def __init__(self, family, args, old_args, key, label, old_metrics=None,
                 old_locked=()):
        self.family, self.args, self.old_args = family, args, old_args
        self.key, self.label = key, label
        self.old_metrics = dict(old_metrics or {})
        self.old_locked = set(old_locked)

    def command(self, ctx):
        return ctx.ip_prefix(self.family) + ["route", "change"] + self.args

    def undo_action(self):
        return ChangeRoute(self.family, self.old_args, self.args, self.key,
                           self.label)


def run_actions(host, actions, out=sys.stderr):
    """Run actions in order; on failure undo the ones done (in reverse) and
    raise StepError describing what happened."""
    done = []
    for i, a in enumerate(actions, 1):
        try:
            a.do(host)
        except (StepError, OSError) as e:
            failed = []
            for d in reversed(done):
                u = d.undo_action()
                try:
                    u.do(host)
                except (StepError, OSError) as ue:
                    failed.append("%s (%s)" % (shlex.join(u.command(host)), ue))
            msg = "step %d of %d failed: %s\n" % (i, len(actions), e)
            if failed:
                msg += ("rollback INCOMPLETE: %d of %d undo steps failed: %s"
                        % (len(failed), len(done), "; ".join(failed)))
            else:
                msg += ("rolled back the %d change(s) already made; the system "
                        "is as it was" % len(done))
            raise StepError(msg) from None
        done.append(a)
    return done

"""tcp-tune: safe, reversible TCP host tuning (sysctl, congestion control,
module parameters, per-route initcwnd/initrwnd/quickack/congctl/rto_min).

    tcp-tune show [--json] [--dst ADDR] [--table T]
    tcp-tune apply PROFILE|FILE [--no-routes] [--no-global]
    tcp-tune route [--dst PREFIX|--default] [--dev DEV] [--table T] [-4|-6] [--all]
                   initcwnd N initrwnd N quickack 0|1 congctl NAME rto_min MS
    tcp-tune revert [--skip-missing]
  global options: --netns NS, --dry-run, --state-dir DIR, --module-path PATH, -v

Every change is validated first (nothing is touched when validation fails),
then run as one transaction: if a step fails, every step already done is
undone, and the tool says so.  The state from before the first change is
saved (atomically) under --state-dir (default /var/lib/tcp-cocktail), one
file per network namespace; later changes never overwrite a saved original,
and `revert` restores it.

Host-global settings: net.core.default_qdisc (exists only in the initial
namespace), net.ipv4.tcp_allowed_congestion_control (read-only outside the
initial namespace), module loading and module parameters are not per
namespace.  With --netns they are changed in the initial namespace, a
"note:" line says so, and they are saved in that namespace's state file so
its revert restores them; --no-global refuses to touch them.

Only the Python standard library is used.  The scripts/tcp-tune launcher
runs cli.main; installed, this package sits in $PREFIX/lib/tcp-cocktail/
and the launcher in $PREFIX/sbin/.  The modules, in dependency order:

  errors     TuneError (refused, nothing changed), StepError (a step failed)
  validate   value validators
  settings   the sysctls and module parameters tcp-tune knows
  metrics    route metric names and their validation
  routes     `ip -j` routes: key, label, reconstructed arguments, selection
  profile    profile parsing and lookup
  actions    one action per command, each with its undo; the transaction
  snapshot   Snapshot: what planning knows of the system
  state      SavedState, the state file (its format is documented there)
  host       Host: runs the commands, reads the Snapshot
  plan       pure planning: profile, route command, revert
  commands   apply, route, revert;  show: show;  cli: arguments, main
The names below are the ones the tests use (tests/unit/test_tcp_tune.py).
"""

from .actions import (Action, ChangeRoute, LoadModule, NoOp, SetParam, SetSysctl,
                      UnloadModule, run_actions)
from .errors import StepError, TuneError
from .host import Host
from .metrics import ARG_METRIC, TUNABLE, parse_metric_args
from .plan import plan_profile, plan_revert, plan_route_cmd
from .profile import find_profile, parse_profile
from .routes import (dedupe, locks_from_text, route_args, route_family, route_key,
                     route_label, select_routes, text_route_key)
from .snapshot import Snapshot
from .state import Identity, SavedRoute, SavedState, State, new_state, record_originals

__all__ = [
    "Action", "ChangeRoute", "LoadModule", "NoOp", "SetParam", "SetSysctl",
    "UnloadModule", "run_actions", "StepError", "TuneError", "Host", "ARG_METRIC",
    "TUNABLE", "parse_metric_args", "plan_profile", "plan_revert", "plan_route_cmd",
    "find_profile", "parse_profile", "dedupe", "locks_from_text", "route_args",
    "route_family", "route_key", "route_label", "select_routes", "text_route_key",
    "Snapshot", "Identity", "SavedRoute", "SavedState", "State", "new_state",
    "record_originals",
]

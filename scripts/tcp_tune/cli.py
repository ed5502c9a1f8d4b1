"""The command line: arguments, and the dispatch to the commands with the
exit codes (0 done or nothing to do, 1 a step failed and was rolled back,
2 refused before anything was changed)."""

import argparse
import os
import sys

import tcp_tune

from .commands import cmd_apply, cmd_revert, cmd_route
from .errors import TuneError
from .host import Host
from .profile import LAUNCHER
from .show import cmd_show
from .state import DEFAULT_STATE_DIR, State
from .validate import v_netns


def build_parser():
    ap = argparse.ArgumentParser(prog="tcp-tune",
                                 description=tcp_tune.__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--netns", metavar="NS", help="act inside network namespace NS")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the commands, change nothing")
    ap.add_argument("--state-dir", default=os.environ.get("TCP_TUNE_STATE_DIR",
                                                          DEFAULT_STATE_DIR))
    ap.add_argument("--module-path", default=os.environ.get("TCP_TUNE_MODULE_PATH"),
                    help="directory with <module>.ko (or the .ko) to insmod "
                    "instead of modprobe (env TCP_TUNE_MODULE_PATH)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print each command as it runs")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("show", help="show the TCP tuning in effect")
    s.add_argument("--json", action="store_true")
    s.add_argument("--dst", metavar="ADDR",
                   help="explain which route (and so which initcwnd) ADDR uses")
    s.add_argument("--table", help="routing table to list (default main; 'all')")
    a = sub.add_parser("apply", help="apply a profile")
    a.add_argument("profile", metavar="PROFILE|FILE")
    a.add_argument("--no-routes", action="store_true",
                   help="skip the profile's route lines")
    a.add_argument("--no-global", action="store_true",
                   help="refuse to change host-global settings")
    r = sub.add_parser("route", help="change metrics of existing routes")
    r.add_argument("--dst", metavar="PREFIX")
    r.add_argument("--default", action="store_true")
    r.add_argument("--dev")
    r.add_argument("--table")
    r.add_argument("--all", action="store_true",
                   help="change every matching route")
    r.add_argument("-4", dest="ipv4", action="store_true")
    r.add_argument("-6", dest="ipv6", action="store_true")
    r.add_argument("metrics", nargs=argparse.REMAINDER,
                   help="initcwnd N initrwnd N quickack 0|1 congctl NAME "
                   "rto_min MS (value 'none' removes the metric)")
    v = sub.add_parser("revert", help="restore the state saved before the first change")
    v.add_argument("--skip-missing", action="store_true",
                   help="restore what exists when a saved route is gone")
    v.add_argument("--force", action="store_true",
                   help="revert even if the state is from another boot/namespace")
    return ap


def main(argv=None, launcher=LAUNCHER):
    """Run tcp-tune; `launcher`: the path of the tcp-tune script (profiles
    are looked up relative to it first)."""
    args = build_parser().parse_args(argv)
    args.launcher = launcher
    try:
        if args.netns is not None:
            v_netns(args.netns)
        host = Host(args.netns, args.dry_run, args.verbose, args.module_path)
        host.check_netns()
        st = State(args.state_dir, args.netns)
        if args.cmd == "show":
            return cmd_show(args, host, st)
        if os.geteuid() != 0 and not args.dry_run:
            raise TuneError("%s needs root (or use --dry-run)" % args.cmd)
        if not args.dry_run:
            st.lock()
        return {"apply": cmd_apply, "route": cmd_route,
                "revert": cmd_revert}[args.cmd](args, host, st)
    except TuneError as e:
        print("tcp-tune: error: %s\nnothing was changed" % e, file=sys.stderr)
        return 2

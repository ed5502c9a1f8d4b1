#!/usr/bin/env python3
"""tcp-tune with a fault injected, for the tests only (the installed tool
has no hook of any kind):

    tcp_tune_fault.py N 'SHELL COMMAND' TCP-TUNE ARGS...

runs tcp-tune from the checkout with SHELL COMMAND run just before step N
of the change it makes (e.g. deleting a route that passed validation), so
that the rollback of the steps already done is exercised on the real
kernel."""
import subprocess
import sys
from pathlib import Path

sys.dont_write_bytecode = True
SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

from tcp_tune import actions, cli, commands  # noqa: E402


def main():
    step, cmd, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    real = actions.run_actions

    def run_actions(host, acts, out=sys.stderr):
        victim = acts[step - 1]
        do = victim.do

        def faulty_do(ctx):
            subprocess.run(cmd, shell=True, check=True)
            do(ctx)
        victim.do = faulty_do
        return real(host, acts, out)

    commands.run_actions = run_actions
    return cli.main(argv, launcher=str(SCRIPTS / "tcp-tune"))


if __name__ == "__main__":
    sys.exit(main())

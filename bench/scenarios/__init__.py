"""The bench's scenarios: the one list bench/run, bench/lib/runner.py,
bench/bench.mk and the tests ask.

Each scenario is a module bench/scenarios/<name>.py with
`run(ctx) -> rows` (measures; inside the VM, as root) and
`report(ctx, rows)` (writes table.md and plots from runs.csv's rows).

    python3 -m bench.scenarios          every scenario, one per line
    python3 -m bench.scenarios suite    the ones `make bench` runs

This file imports nothing beyond the standard library: bench/run and make
read it with any python3, before the venv exists.
"""
# name -> what it measures, in the order `make bench` runs them
SCENARIOS = {
    "restart": "burst after idle on a shared bottleneck, per policy",
    "iw": "initial window: route initcwnd vs the module's iw",
    "keepalive": "keep-alive web and gRPC-like request series",
    "phttp": "persistent HTTP: page retrieval times",
    "overhead": "CPU cost: iperf3 throughput over an unshaped path",
    "ooo": "out-of-order holds measured by tcp_oooprobe",
    "demo": "make demo: the module's default against every baseline after "
            "idle, on a quiet path and one a competitor joins",
    "pacerate": "the paced restart at each pace_rate (a keep-alive fetch "
                "on one link)",
    "fleet": "many keep-alive connections of one policy restarting on "
             "one bottleneck",
    "scorecard": "time and harm of the module's default against the "
                 "baselines, per cell of the restart and keepalive grids",
    "growth": "bulk throughput of growth=cubic / reno against the "
              "kernel's cubic / reno, and a fairness cell",
    "chan": "Chan's small experiments: IW 1/2 with and without delayed "
            "ACKs, Nagle, initial ssthresh, Hoe's estimate, CWV",
    "cache": "the Waikato study: a client through a child and a parent "
             "Squid across a long lossy link, persistent or not, ICP on "
             "or off",
    "parallel": "six connections with IW10 against one pipelined "
                "connection: the burst, its drops and the page time",
}
# `make bench` / `make bench-quick`: the grids (demo has its own target,
# pacerate is a study of one parameter)
SUITE = ("restart", "iw", "keepalive", "phttp", "overhead", "ooo")
NAMES = tuple(SCENARIOS)
# scenarios that measure nothing (they read other scenarios' results):
# bench/run runs them on the host, without the VM
HOST = ("scorecard",)


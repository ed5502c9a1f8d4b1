# Benchmark suite (bench/): one VM boot runs the listed scenarios; results
# land in bench/results/<scenario>/ (CSV, table.md, PNG, meta.json).
#   make bench         every scenario, full grids (hours under TCG)
#   make bench-quick   the quick subset (under 15 minutes under TCG)
#   make bench BENCH_SCENARIOS="restart iw" BENCH_ARGS="--reps 3"
# The default list is bench/scenarios/__init__.py's SUITE (make demo runs
# the demo scenario; bench/run --help lists them all).
BENCH_SCENARIOS ?= $(shell python3 -m bench.scenarios suite)
BENCH_ARGS ?=

.PHONY: bench bench-quick

bench: deps-if-missing all
	bench/run $(BENCH_SCENARIOS) $(BENCH_ARGS)

bench-quick: deps-if-missing all
	bench/run $(BENCH_SCENARIOS) --quick $(BENCH_ARGS)

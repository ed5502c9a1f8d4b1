# Benchmark suite (bench/): one VM boot runs the listed scenarios; results
# land in bench/results/<scenario>/ (CSV, table.md, PNG, meta.json).
#   make bench         every scenario, full grids (hours under TCG)
#   make bench-quick   the quick subset (under 15 minutes under TCG)
#   make bench BENCH_SCENARIOS="restart iw" BENCH_ARGS="--reps 3"
BENCH_SCENARIOS ?= restart iw keepalive phttp overhead ooo
BENCH_ARGS ?=

.PHONY: bench bench-quick

bench: deps-if-missing all
	bench/run $(BENCH_SCENARIOS) $(BENCH_ARGS)

bench-quick: deps-if-missing all
	bench/run $(BENCH_SCENARIOS) --quick $(BENCH_ARGS)

# bench/bench.mk: `make bench`, included by the main Makefile (`include bench/bench.mk`, after the
# variables BUILD, BIN, CC, WARN, CFLAGS, CPPFLAGS, PKG_CFLAGS and PKG_LIBS are defined).
#
#   make bench                                   the full run (about 3 minutes on 2 cores)
#   make bench BENCH_SIZES="100 10000" BENCH_SECONDS=1   a quicker one
#   make bench BENCH_PROMTOOL=                   without the promtool reference
#
# Payloads are generated once into $(BENCH_OUT)/nodes-N/ (gitignored) and regenerated when the
# generator changes. The benchmark prints figures and never fails because something is slow.

BENCH_SIZES    ?= 100 1000 10000 50000
BENCH_E2E      ?= tests/fixtures/slurm-25.11/04-resumed-busy $(BENCH_OUT)/nodes-10000
BENCH_OUT      ?= bench/out
BENCH_SECONDS  ?= 3
BENCH_PYTHON   ?= python3
BENCH_PROMTOOL ?= promtool
BENCH_MAPPING  ?= mappings/prometheus-slurm-exporter.json

BENCH_DIRS := $(addprefix $(BENCH_OUT)/nodes-,$(BENCH_SIZES))
BENCH_E2E_STAMPS := $(addsuffix /.stamp,$(filter $(BENCH_OUT)/nodes-%,$(BENCH_E2E)))

BENCH_TEMPLATE := $(wildcard tests/fixtures/slurm-25.11/02-busy-mix/metrics_*.txt)

$(BENCH_OUT)/nodes-%/.stamp: bench/gen_payload.py $(BENCH_TEMPLATE)
	$(BENCH_PYTHON) bench/gen_payload.py --nodes $* --out $(BENCH_OUT)/nodes-$*
	@touch $@

$(BUILD)/bench/bench: bench/bench.c $(BUILD)/libshim.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $< $(BUILD)/libshim.a $(PKG_LIBS)

bench: $(BIN) $(BUILD)/tests/fake_slurmctld $(BUILD)/bench/bench $(addsuffix /.stamp,$(BENCH_DIRS)) $(BENCH_E2E_STAMPS)
	$(BUILD)/bench/bench --mapping $(BENCH_MAPPING) --seconds $(BENCH_SECONDS) --out $(BENCH_OUT) \
	  --promtool '$(BENCH_PROMTOOL)' --shim ./$(BIN) --fake $(BUILD)/tests/fake_slurmctld \
	  $(addprefix --e2e ,$(BENCH_E2E)) $(BENCH_DIRS)

.PHONY: bench

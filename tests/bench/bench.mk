# tests/bench/bench.mk: `make bench`, included by the main Makefile (`include tests/bench/bench.mk`, after the
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
BENCH_OUT      ?= tests/bench/out
BENCH_SECONDS  ?= 3
BENCH_PYTHON   ?= python3
BENCH_PROMTOOL ?= promtool
BENCH_MAPPING  ?= mappings/prometheus-slurm-exporter.json
# the compressed answers' figures (bench_gzip: bytes and CPU per answer, plain and gzip, libdeflate
# against zlib, the shim's CPU serving both); empty: skip
BENCH_GZIP_SIZES ?= 1000 10000 50000
# slurmrestd answers for the JSON converter's figures (bench_rest: MB/s and peak RSS); empty: skip
BENCH_REST_JOBS  ?= 100000
BENCH_REST_NODES ?= 10000

BENCH_DIRS := $(addprefix $(BENCH_OUT)/nodes-,$(BENCH_SIZES))
BENCH_E2E_STAMPS := $(addsuffix /.stamp,$(filter $(BENCH_OUT)/nodes-%,$(BENCH_E2E)))
BENCH_GZIP_DIRS := $(addprefix $(BENCH_OUT)/nodes-,$(BENCH_GZIP_SIZES))

BENCH_TEMPLATE := $(wildcard tests/fixtures/slurm-25.11/02-busy-mix/metrics_*.txt)

$(BENCH_OUT)/nodes-%/.stamp: tests/bench/gen_payload.py $(BENCH_TEMPLATE)
	$(BENCH_PYTHON) tests/bench/gen_payload.py --nodes $* --out $(BENCH_OUT)/nodes-$*
	@touch $@

$(BENCH_OUT)/rest/jobs-%.json: tests/bench/gen_rest.py
	@mkdir -p $(dir $@)
	$(BENCH_PYTHON) tests/bench/gen_rest.py jobs $* $@.tmp && mv $@.tmp $@

$(BENCH_OUT)/rest/nodes-%.json: tests/bench/gen_rest.py
	@mkdir -p $(dir $@)
	$(BENCH_PYTHON) tests/bench/gen_rest.py nodes $* $@.tmp && mv $@.tmp $@

BENCH_REST := $(if $(BENCH_REST_JOBS),$(BENCH_OUT)/rest/jobs-$(BENCH_REST_JOBS).json) \
	      $(if $(BENCH_REST_NODES),$(BENCH_OUT)/rest/nodes-$(BENCH_REST_NODES).json)

$(BUILD)/bench/bench_rest: tests/bench/bench_rest.c $(BUILD)/libshim.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(DEPFLAGS) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $< $(BUILD)/libshim.a $(PKG_LIBS)

$(BUILD)/bench/bench_gzip: tests/bench/bench_gzip.c $(BUILD)/libshim.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(DEPFLAGS) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $< $(BUILD)/libshim.a $(PKG_LIBS) $(TEST_LIBS)

$(BUILD)/bench/bench: tests/bench/bench.c $(BUILD)/libshim.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(DEPFLAGS) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $< $(BUILD)/libshim.a $(PKG_LIBS)

bench: $(BIN) $(BUILD)/tests/fake_slurmctld $(BUILD)/bench/bench $(BUILD)/bench/bench_rest $(BUILD)/bench/bench_gzip $(BENCH_REST) $(addsuffix /.stamp,$(BENCH_DIRS) $(BENCH_GZIP_DIRS)) $(BENCH_E2E_STAMPS)
	$(BUILD)/bench/bench --mapping $(BENCH_MAPPING) --seconds $(BENCH_SECONDS) --out $(BENCH_OUT) \
	  --promtool '$(BENCH_PROMTOOL)' --shim ./$(BIN) --fake $(BUILD)/tests/fake_slurmctld \
	  $(addprefix --e2e ,$(BENCH_E2E)) $(BENCH_DIRS)
	@for f in $(BENCH_REST); do kind=$$(basename $$f | sed 's/-.*//'); \
	  echo "== slurmrestd $$kind answer $$f"; $(BUILD)/bench/bench_rest $$kind $$f || exit 1; done
	$(if $(BENCH_GZIP_SIZES),$(BUILD)/bench/bench_gzip --mapping $(BENCH_MAPPING) --seconds $(BENCH_SECONDS) \
	  --shim ./$(BIN) --fake $(BUILD)/tests/fake_slurmctld $(BENCH_GZIP_DIRS))

.PHONY: bench

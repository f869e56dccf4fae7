# tests/fuzz/fuzz.mk: libFuzzer targets, included by the top-level Makefile after it defines LIB_SRCS
# (src/*.c but main.c), WARN, CPPFLAGS, PKG_CFLAGS and PKG_LIBS.
#
#   make fuzz                          build $(FUZZ_BUILD)/fuzz_{expo,expr,mapping,webconfig,restjson,
#                                      native,probe,accept} with clang
#                                      (-fsanitize=fuzzer,address,undefined)
#   make fuzz-run [FUZZ_SECONDS=60]    run each target for FUZZ_SECONDS (-max_total_time) on a copy of
#                                      its seed corpus in a temporary directory (the repository is not
#                                      modified); fails if any target finds a crash, a leak, a timeout
#                                      (FUZZ_TIMEOUT s for one input) or an out-of-memory. The crashing
#                                      input is kept in $(FUZZ_BUILD)/artifacts/.
#
# Seeds: tests/fuzz/corpus/<target>/ (rebuilt by tests/fuzz/gen-seeds.sh); fuzz_expo also gets every case of
# tests/conformance/openmetrics-parsers/. tests/fuzz/corpus/restjson/ is cut from
# tests/fixtures/slurm-25.11-rest/*/rest_{nodes,shares,jobs,diag}.json: one selector byte (the
# document, 0 nodes .. 3 diag, plus 4 x a piece size) and the answer, the jobs answers cut to their
# first two jobs and the shares to their first four rows, with sorted keys and the shapes
# slurmrestd.c refuses or accepts (NO_VAL objects in any key order, items that are not objects) too
# (see gen-seeds.sh); fuzz_restjson also runs src/jsonfeed.c alone with a small string limit. fuzz_native (the passthrough: slurmctld's
# text through the tolerant reader, fed in pieces, and native_render, read back by the strict reader
# label value for label value), fuzz_probe (--probe.targets-file, written to a file under TMPDIR)
# and fuzz_accept (Accept-Encoding field lines, src/http_encoding.c) state their properties at the
# top of their source. Dictionaries: tests/fuzz/dict/<target>.dict.
# FUZZ_FLAGS adds libFuzzer options, e.g. FUZZ_FLAGS=-jobs=2 or FUZZ_FLAGS=-only_ascii=1. FUZZ_WARN
# (default: the project's WARN) is there to relax a clang-only warning in a module while it is fixed.

FUZZ_CC       ?= clang
FUZZ_BUILD    ?= build-fuzz
FUZZ_SECONDS  ?= 60
FUZZ_TIMEOUT  ?= 10
FUZZ_FLAGS    ?=
FUZZ_WARN     ?= $(WARN)
FUZZ_TARGETS  := expo expr mapping webconfig restjson native probe accept
FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS   := -O1 -g $(FUZZ_SAN)
FUZZ_LIB_OBJS := $(LIB_SRCS:src/%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BINS     := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)

fuzz: $(FUZZ_BINS)

# the objects are only prerequisites of a pattern rule: keep make from deleting them as intermediates
.SECONDARY: $(FUZZ_LIB_OBJS)

# the library: coverage instrumentation, no libFuzzer main
$(FUZZ_BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_WARN) $(DEPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(CPPFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_WARN) $(DEPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(CPPFLAGS) -Itests/fuzz $(PKG_CFLAGS) -o $@ $< \
	  $(FUZZ_LIB_OBJS) $(PKG_LIBS)

# One target after the other (the machine may be shared); stdin is /dev/null so that no input can
# make a loader block on it. Exit status: 0 when every target ran clean.
fuzz-run: $(FUZZ_BINS)
	@tmp=$$(mktemp -d) || exit 1; trap 'rm -rf "$$tmp"' EXIT; trap 'exit 1' INT TERM; \
	mkdir -p $(FUZZ_BUILD)/artifacts; fail=0; \
	for t in $(FUZZ_TARGETS); do \
	  run=$$tmp/$$t; mkdir -p $$run/corpus $$run/tmp; \
	  cp tests/fuzz/corpus/$$t/* $$run/corpus/; \
	  if [ $$t = expo ]; then \
	    for c in tests/conformance/openmetrics-parsers/*/metrics; do \
	      cp "$$c" $$run/corpus/om-$$(basename $$(dirname "$$c")); done; \
	  fi; \
	  dict=; [ -f tests/fuzz/dict/$$t.dict ] && dict=-dict=$(CURDIR)/tests/fuzz/dict/$$t.dict; \
	  echo "== fuzz_$$t: $(FUZZ_SECONDS) s, $$(ls $$run/corpus | wc -l) seeds"; \
	  if (cd $$run && TMPDIR=$$run/tmp FUZZ_WEBCONFIG_FIXTURES=$(CURDIR)/tests/webconfig \
	      $(CURDIR)/$(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) \
	        -print_final_stats=1 -artifact_prefix=$$run/ $$dict $(FUZZ_FLAGS) corpus \
	        </dev/null >$$run/log 2>&1); then \
	    grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb' \
	      $$run/log; \
	  else \
	    fail=1; echo "fuzz_$$t FAILED:"; \
	    grep -E -A40 '^==[0-9]+== ?ERROR|runtime error|^SUMMARY|Test unit written' $$run/log | head -80; \
	    for a in $$run/crash-* $$run/leak-* $$run/timeout-* $$run/oom-* $$run/slow-unit-*; do \
	      [ -f "$$a" ] && cp "$$a" $(FUZZ_BUILD)/artifacts/fuzz_$$t-$$(basename "$$a") && \
	        echo "input kept in $(FUZZ_BUILD)/artifacts/fuzz_$$t-$$(basename "$$a")"; \
	    done; \
	  fi; \
	done; exit $$fail

-include $(wildcard $(FUZZ_BUILD)/obj/*.d $(FUZZ_BUILD)/*.d)

.PHONY: fuzz fuzz-run

# slurm-exporter-shim
# make            build ./slurm-exporter-shim
# make test       build and run every cmocka test (tests/test_*.c) and script test (tests/*.sh)
# make asan       the same tests under ASan+UBSan
# make tsan       the HTTP tests with the daemon under ThreadSanitizer
# make valgrind   the same tests under valgrind (leak check)
# make install    DESTDIR, PREFIX honoured
# make fuzz       libFuzzer targets (clang)
# make bench      benchmark (prints figures; never fails on speed)

VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
PREFIX    ?= /usr
SYSCONFDIR ?= /etc
DESTDIR   ?=
CC        ?= cc
# gnutls: --version prints its version, and the web config checks its TLS priority string with it
PKGS      := libmicrohttpd jansson libcurl yaml-0.1 yajl libdeflate gnutls
# a missing package stops the build here, naming it (scripts/install-deps.sh installs them all);
# (make clean needs none)
ifeq ($(filter clean,$(MAKECMDGOALS)),)
PKG_MISSING := $(strip $(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(p) && echo y),,$(p))))
ifneq ($(PKG_MISSING),)
$(error pkg-config finds no package $(PKG_MISSING): run scripts/install-deps.sh (it installs pkg-config too))
endif
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lcrypt -lm -lpthread
# the tests decompress the shim's gzip answers with zlib: another implementation than libdeflate's
TEST_LIBS  := $(shell pkg-config --libs zlib 2>/dev/null || echo -lz)
CFLAGS    ?= -O2 -g
WARN      := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla
# every object's header dependencies, written by the compiler beside it (build/x.d, -include below)
DEPFLAGS  := -MMD -MP
CPPFLAGS  += -D_GNU_SOURCE -DSHIM_VERSION='"$(VERSION)"' -DSHIM_SYSCONFDIR='"$(SYSCONFDIR)"' -Isrc
BUILD     ?= build
# --version's revision: the commit built ("-dirty" with uncommitted changes); outside git, the
# REVISION file that packaging/build-*.sh write into the tree they build; else "unknown"
GIT_REV   := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
REVISION  ?= $(if $(GIT_REV),$(GIT_REV)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty),$(or $(shell cat REVISION 2>/dev/null),unknown))
BIN       := slurm-exporter-shim

SRCS      := $(sort $(wildcard src/*.c))
LIB_SRCS  := $(filter-out src/main.c,$(SRCS))
LIB_OBJS  := $(LIB_SRCS:src/%.c=$(BUILD)/%.o)
TEST_SRCS := $(sort $(wildcard tests/test_*.c))
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
# the HTTP tests (the daemon against fake_slurmctld; their fixture is tests/http_fixture.h): what tsan runs
HTTP_TEST_BINS := $(filter $(BUILD)/tests/test_http_%,$(TEST_BINS))
TEST_SH   := $(sort $(wildcard tests/test_*.sh))
# shell tests that exercise the binary itself, rerun with the sanitizer build
TEST_SH_SAN := $(filter tests/test_cli.sh tests/test_tls.sh tests/test_conformance.sh tests/test_files.sh tests/test_secrets.sh tests/test_listen.sh tests/test_schemas.sh,$(TEST_SH))

all: $(BIN) $(BUILD)/tests/fake_slurmctld

$(BUILD)/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(DEPFLAGS) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -c -o $@ $<

# version.o is rebuilt when the revision changes: the stamp is rewritten only then
$(BUILD)/revision.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(REVISION) $(SOURCE_DATE_EPOCH)' | cmp -s - $@ || echo '$(REVISION) $(SOURCE_DATE_EPOCH)' >$@
$(BUILD)/version.o: $(BUILD)/revision.stamp
$(BUILD)/version.o: CPPFLAGS += -DSHIM_REVISION='"$(REVISION)"' \
	$(if $(SOURCE_DATE_EPOCH),-DSHIM_BUILD_DATE='"$(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%d 2>/dev/null)"')
.PHONY: FORCE
FORCE:

$(BUILD)/libshim.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(BUILD)/main.o $(BUILD)/libshim.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/tests/fake_slurmctld: tests/fake_slurmctld.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(DEPFLAGS) $(CFLAGS) $(CPPFLAGS) -o $@ $< -lpthread

$(BUILD)/tests/%: tests/%.c $(BUILD)/libshim.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(DEPFLAGS) -Wno-missing-prototypes $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -Itests -o $@ $< $(BUILD)/libshim.a $(PKG_LIBS) -lcmocka $(TEST_LIBS)

# Tests run from the repository root; each prints cmocka's summary.
# TEST_WRAP runs each test binary under a wrapper (valgrind).
test: $(BIN) $(BUILD)/tests/fake_slurmctld $(TEST_BINS)
	@fail=0; for t in $(TEST_BINS); do \
	  echo "== $$t"; SHIM_BIN=./$(BIN) FAKE_SLURMCTLD=$(BUILD)/tests/fake_slurmctld $(TEST_WRAP) $$t || fail=1; done; \
	for t in $(TEST_SH); do echo "== $$t"; sh=sh; head -1 $$t | grep -q bash && sh=bash; \
	  SHIM_BIN=./$(BIN) FAKE_SLURMCTLD=$(BUILD)/tests/fake_slurmctld $$sh $$t || fail=1; done; \
	exit $$fail

# clang: its UBSan also refuses arithmetic on a null pointer (null + 0), which GCC's does not check
ASAN_CC ?= clang
asan:
	$(MAKE) BUILD=build-asan BIN=build-asan/slurm-exporter-shim CC=$(ASAN_CC) \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  LDFLAGS="-fsanitize=address,undefined" TEST_SH="$(TEST_SH_SAN)" test

# the daemon's threads (shared fetches, reload, concurrent scrapes) under ThreadSanitizer
tsan:
	$(MAKE) BUILD=build-tsan BIN=build-tsan/slurm-exporter-shim CFLAGS="-O1 -g -fsanitize=thread" \
	  LDFLAGS="-fsanitize=thread" TEST_BINS="$(patsubst $(BUILD)/%,build-tsan/%,$(HTTP_TEST_BINS))" TEST_SH= test

valgrind: $(BIN) $(BUILD)/tests/fake_slurmctld $(TEST_BINS)
	$(MAKE) test TEST_SH= TEST_WRAP="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect"

clean:
	rm -rf build build-asan build-fuzz $(BIN)

-include $(wildcard $(BUILD)/*.d $(BUILD)/tests/*.d $(BUILD)/bench/*.d)
# an object or test built before its .d existed (an older tree) depends on every header once
$(foreach o,$(LIB_OBJS) $(BUILD)/main.o $(TEST_BINS),$(if $(wildcard $(basename $(o)).d),,$(eval $(o): $(wildcard src/*.h tests/*.h))))

include packaging/install.mk
include tests/fuzz/fuzz.mk
include tests/bench/bench.mk

.PHONY: all test asan tsan valgrind clean install fuzz bench

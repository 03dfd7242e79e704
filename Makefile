# tracemerge: one non-recursive Makefile, out-of-tree build/.
#   make            build build/tracemerge (release flags)
#   make test       install what the build and the tests need, build with ASan+UBSan,
#                   run every test
#   make demo       install what the build needs, build, open the workbench on the demo
#   make deps       install the Debian packages the build and tests need
#   make bench      issue 10's speed figures as ratios to baselines, a met/not met table
#                   (make bench BENCH_MB=32: a short run; see tests/bench/bench.sh)
# V=1 shows full commands; WERROR=0 drops -Werror (packagers with newer compilers).

.DEFAULT_GOAL := all
SHELL := /bin/bash

B       ?= build
SAN     ?= 0
V       ?= 0
WERROR  ?= 1
PREFIX  ?= /usr/local
MANDIR  ?= $(PREFIX)/share/man

ifeq ($(SAN),2)
  O := $(B)/tsan
  OPTFLAGS := -O1 -g -fsanitize=thread
  LDSAN := -fsanitize=thread
else ifeq ($(SAN),1)
  O := $(B)/asan
  # TM_COUNT_WORK: lookups count their probes (internal.h), bounded by the
  # unit tests that give a table 10^5 keys
  OPTFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
              -DTM_COUNT_WORK
  LDSAN := -fsanitize=address,undefined
else
  O := $(B)/rel
  # Functions at 64-byte boundaries: where a hot function (scan_proto.c's
  # compact_array) falls in its cache line moved check's CPU by 6-8%, so an
  # edit anywhere in the engine showed up as a speed change on the bench.
  OPTFLAGS := -O2 -g -falign-functions=64
  LDSAN :=
endif

Q := $(if $(filter 1,$(V)),,@)
PKG_ENGINE := libarchive libprotobuf-c libcjson zlib
PKG_TUI    := ncursesw readline
PKGCONFIG  := pkg-config
# ISA-L (Debian libisal-dev) inflates gzip and ZIP deflate where it is
# installed (engine/stream/zinflate.c); without it zlib does, with the same results.
HAVE_ISAL   := $(shell $(PKGCONFIG) --exists libisal 2>/dev/null && echo 1)
ifeq ($(HAVE_ISAL),1)
  PKG_ENGINE += libisal
  ISAL_DEF   := -DTM_HAVE_ISAL
endif

WARN := -Wall -Wextra -Wshadow -Wpointer-arith -Wcast-qual -Wstrict-prototypes \
        -Wmissing-prototypes -Wformat=2 -Wundef -Wvla -Wwrite-strings \
        -Wimplicit-fallthrough -Wdouble-promotion
ifeq ($(WERROR),1)
  WARN += -Werror
endif

# The engine's stage folders, in the order data flows (README, map of the
# code); each is on the include path, so an engine file names a header bare.
ENGINE_DIRS  := util stream scan input manifest replay session align
ENGINE_INC   := -Iengine $(addprefix -Iengine/,$(ENGINE_DIRS))
CPPFLAGS_ENG := -D_DEFAULT_SOURCE -DTM_ENGINE_INTERNAL $(ENGINE_INC) -I$(O)/protos $(ISAL_DEF)
CFLAGS_BASE  := -std=c11 $(OPTFLAGS) $(WARN) -MMD -MP -pthread
ENG_PC_CFLAGS = $(shell $(PKGCONFIG) --cflags $(PKG_ENGINE) 2>/dev/null)
# libarchive is not linked: engine/stream/stream.c loads it (dlopen) for the first
# zstd member only.  The binary, the unit tests, the tools and the fuzz
# targets all link the engine with ENG_LIBS, so the tests load libarchive
# as the shipped binary does.  test_archive writes its zstd fixtures with
# libarchive itself (LIBS_test_archive).
ENG_LIBS      = $(shell $(PKGCONFIG) --libs $(filter-out libarchive,$(PKG_ENGINE)) 2>/dev/null) -ldl
LIBS_test_archive = $(shell $(PKGCONFIG) --libs libarchive 2>/dev/null)
TUI_PC_CFLAGS = $(shell $(PKGCONFIG) --cflags $(PKG_TUI) 2>/dev/null)
TUI_PC_LIBS   = $(shell $(PKGCONFIG) --libs $(PKG_TUI) 2>/dev/null)

PROTOS     := $(wildcard protos/*.proto)
PROTO_C    := $(patsubst protos/%.proto,$(O)/protos/%.pb-c.c,$(PROTOS))
PROTO_H    := $(PROTO_C:.c=.h)
ENGINE_SRC := $(wildcard engine/*.c $(addsuffix /*.c,$(addprefix engine/,$(ENGINE_DIRS))))
ENGINE_OBJ := $(patsubst engine/%.c,$(O)/engine/%.o,$(ENGINE_SRC)) $(PROTO_C:.c=.o)
TUI_SRC    := $(wildcard tui/*.c)
TUI_OBJ    := $(patsubst tui/%.c,$(O)/tui/%.o,$(TUI_SRC))
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRC))
TOOL_SRC   := $(wildcard tools/*.c)
TOOL_BIN   := $(patsubst tools/%.c,$(O)/tools/%,$(TOOL_SRC))

LIBENGINE  := $(O)/libtmengine.a
# generated sources are kept (make would delete the .h as an intermediate)
.SECONDARY: $(PROTO_C) $(PROTO_H)
BIN        := $(O)/tracemerge

.PHONY: all test check demo deps deps-build deps-check bench clean lint-man install uninstall unit tools
all: $(BIN) $(TOOL_BIN)
	$(Q)ln -sf $(patsubst $(B)/%,%,$(BIN)) $(B)/tracemerge

# ---------- protos (protoc-c into build/) ----------
$(O)/protos/%.pb-c.c $(O)/protos/%.pb-c.h: protos/%.proto
	@mkdir -p $(@D)
	$(if $(Q),@echo "  PROTOC  $<")
	$(Q)protoc-c --proto_path=protos --c_out=$(O)/protos $<

$(O)/protos/%.pb-c.o: $(O)/protos/%.pb-c.c
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) -std=c11 $(OPTFLAGS) -w -MMD -MP $(CPPFLAGS_ENG) $(ENG_PC_CFLAGS) -c $< -o $@

# ---------- engine ----------
$(O)/engine/%.o: engine/%.c | $(PROTO_H)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(CPPFLAGS_ENG) $(ENG_PC_CFLAGS) -c $< -o $@

$(LIBENGINE): $(ENGINE_OBJ)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# ---------- tui / batch front end ----------
$(O)/tui/%.o: tui/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) -D_DEFAULT_SOURCE -Iengine -Itui $(TUI_PC_CFLAGS) $(ENG_PC_CFLAGS) -c $< -o $@

$(BIN): $(TUI_OBJ) $(LIBENGINE)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDSAN) -pthread -o $@ $(TUI_OBJ) $(LIBENGINE) $(TUI_PC_LIBS) $(ENG_LIBS) -lm

# ---------- unit tests and tools (engine only, plus internal headers) ----------
$(O)/tests/%: tests/unit/%.c tests/unit/t.h $(LIBENGINE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(CPPFLAGS_ENG) -Itests/unit $(ENG_PC_CFLAGS) -o $@ $< $(LIBENGINE) $(LDSAN) $(LIBS_$*) $(ENG_LIBS) -lm

$(O)/tools/%: tools/%.c $(LIBENGINE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(CPPFLAGS_ENG) $(ENG_PC_CFLAGS) -o $@ $< $(LIBENGINE) $(LDSAN) $(ENG_LIBS) -lm

unit: $(UNIT_BIN)
tools: $(TOOL_BIN)

# ---------- clang-check: the tree under clang's reading of the warnings ----------
# Syntax only (seconds; tests/static.sh runs it where clang is): clang warns
# where gcc does not (a fall-through annotated by a comment only, string
# literals split over lines in an array), and a packager may build with it.
CLANG        ?= clang
CLANG_CFLAGS := $(filter-out -g -MMD -MP,$(CFLAGS_BASE)) -fsyntax-only
.PHONY: clang-check
clang-check: $(PROTO_H)
	$(Q)$(CLANG) $(CLANG_CFLAGS) $(CPPFLAGS_ENG) $(ENG_PC_CFLAGS) $(ENGINE_SRC) $(TOOL_SRC)
	$(Q)$(CLANG) $(CLANG_CFLAGS) -D_DEFAULT_SOURCE -Iengine -Itui $(TUI_PC_CFLAGS) $(ENG_PC_CFLAGS) $(TUI_SRC)
	$(Q)$(CLANG) $(CLANG_CFLAGS) $(CPPFLAGS_ENG) -Itests/unit $(ENG_PC_CFLAGS) $(UNIT_SRC)

# ---------- setup ----------
# tools/deps.sh: the build's packages (deps-build) or the build's and the
# tests' (deps, deps-check); it checks first and installs only what is missing.
deps deps-check:
	$(Q)tools/deps.sh install test

deps-build:
	$(Q)tools/deps.sh install build

# ---------- tests: sanitizer build, then everything ----------
# The three variants and the clang fuzz targets (make fuzz-build: their
# regressions replay under clang's sanitizers; SKIP without clang) build at
# once (each -j$(TEST_JOBS)); tests/run.sh then runs independent test
# programs TEST_JOBS at a time.  The sanitizer variants build only what the
# tests run (the tools, bench_tm, are the release build's).
TEST_JOBS ?= 2
test check: deps-check
	$(Q)pids=; \
	$(MAKE) --no-print-directory -j$(TEST_JOBS) all WERROR=$(WERROR) & pids="$$pids $$!"; \
	$(MAKE) --no-print-directory -j$(TEST_JOBS) SAN=1 $(B)/asan/tracemerge unit & pids="$$pids $$!"; \
	$(MAKE) --no-print-directory -j$(TEST_JOBS) SAN=2 $(B)/tsan/tracemerge \
		$(B)/tsan/tests/test_replay_fast $(B)/tsan/tests/test_listing & pids="$$pids $$!"; \
	$(MAKE) --no-print-directory -j$(TEST_JOBS) fuzz-build & pids="$$pids $$!"; \
	st=0; for p in $$pids; do wait $$p || st=1; done; exit $$st
	$(Q)TEST_JOBS=$(TEST_JOBS) tests/run.sh $(B)/asan $(B)/rel $(B)/tsan

lint-man:
	$(Q)mandoc -Tlint -Wwarning man/*.[15]

demo: deps-build all
	$(Q)$(BIN) demo

bench: deps-check
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/bench/bench.sh $(B)/rel

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(PREFIX)/share/tracemerge/themes
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/tracemerge
	install -m 0644 man/tracemerge.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/tracemerge-manifest.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 themes/*.theme $(DESTDIR)$(PREFIX)/share/tracemerge/themes/ 2>/dev/null || true
	@echo "installed $(DESTDIR)$(PREFIX)/bin/tracemerge; its manual: man tracemerge (man-db) or mman tracemerge (mandoc)"

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/tracemerge $(DESTDIR)$(MANDIR)/man1/tracemerge.1 $(DESTDIR)$(MANDIR)/man5/tracemerge-manifest.5
	rm -rf $(DESTDIR)$(PREFIX)/share/tracemerge

clean:
	rm -rf $(B)

-include $(ENGINE_OBJ:.o=.d) $(TUI_OBJ:.o=.d) $(UNIT_BIN:=.d)

# ---------- fuzz (libFuzzer; tests/fuzz/) ----------
#   make fuzz                  build every target, seed, run each FUZZ_SECONDS
#   make fuzz FUZZ_TARGETS=fuzz_input FUZZ_SECONDS=3600
#   make fuzz-build            build only (build/fuzz/fuzz_*)
#   make fuzz-regress          replay tests/fuzz/regress/ through the targets
# Engine sources and protoc-c output are compiled here with clang for the
# fuzzer (coverage + ASan + UBSan); prints SKIP when clang is missing.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
FUZZ_ARGS    ?=
FZ           := $(B)/fuzz
FUZZ_ALL     := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_HAVE_CC := $(shell command -v $(FUZZ_CC) >/dev/null 2>&1 && echo 1)
# pointer-overflow stays recoverable so tests/fuzz/ubsan.supp can silence the
# open findings listed there; everything else aborts at once.
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -fsanitize-recover=pointer-overflow -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c11 -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -pthread \
                -D_DEFAULT_SOURCE -DTM_ENGINE_INTERNAL $(ENGINE_INC) -I$(FZ)/protos
FUZZ_PROTO_C := $(patsubst protos/%.proto,$(FZ)/protos/%.pb-c.c,$(PROTOS))
FUZZ_OBJ     := $(patsubst engine/%.c,$(FZ)/engine/%.o,$(ENGINE_SRC)) $(FUZZ_PROTO_C:.c=.o)
FUZZ_BIN     := $(addprefix $(FZ)/,$(FUZZ_ALL))
# dictionary per target (none for fuzz_escape)
FUZZ_DICT_fuzz_manifest      := tests/fuzz/manifest.dict
FUZZ_DICT_fuzz_scan_json     := tests/fuzz/json.dict
FUZZ_DICT_fuzz_scan_systrace := tests/fuzz/systrace.dict
FUZZ_DICT_fuzz_scan_proto    := tests/fuzz/proto.dict
FUZZ_DICT_fuzz_input         := tests/fuzz/proto.dict
FUZZ_MAXLEN_fuzz_input       := 262144

.PHONY: fuzz fuzz-build fuzz-regress
.SECONDARY: $(FUZZ_PROTO_C) $(FUZZ_PROTO_C:.c=.h)
# named outside the pattern rule, so the objects are not intermediates
$(FUZZ_BIN): $(FUZZ_OBJ)

$(FZ)/protos/%.pb-c.c $(FZ)/protos/%.pb-c.h: protos/%.proto
	@mkdir -p $(@D)
	$(if $(Q),@echo "  PROTOC  $< (fuzz)")
	$(Q)protoc-c --proto_path=protos --c_out=$(FZ)/protos $<

$(FZ)/protos/%.pb-c.o: $(FZ)/protos/%.pb-c.c
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -w $(ENG_PC_CFLAGS) -c $< -o $@

# Engine warnings are the engine build's business (gcc, -Werror); under clang
# they are shown but not fatal, so a clang-only warning cannot block fuzzing.
$(FZ)/engine/%.o: engine/%.c | $(FUZZ_PROTO_C:.c=.h)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(filter-out -Werror -Wimplicit-fallthrough,$(WARN)) $(ENG_PC_CFLAGS) -c $< -o $@

$(FZ)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_OBJ)
	$(if $(Q),@echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(WARN) $(ENG_PC_CFLAGS) -o $@ $< $(FUZZ_OBJ) \
		-fsanitize=fuzzer $(ENG_LIBS) -lm

ifeq ($(FUZZ_HAVE_CC),1)
fuzz-build: $(FUZZ_BIN)

fuzz: fuzz-build
	$(Q)rm -rf $(FZ)/seed && python3 tests/fuzz/seed.py . $(FZ)/seed
	$(Q)mkdir -p $(FZ)/seed/fuzz_scancache && TM_FUZZ_SEED_DIR=$(FZ)/seed/fuzz_scancache \
		$(FZ)/fuzz_scancache -runs=0 >/dev/null 2>&1
	$(Q)set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FZ)/corpus/$$t $(FZ)/artifacts; \
		echo "  FUZZ    $$t for $(FUZZ_SECONDS)s"; \
		d=$$( case $$t in \
			fuzz_manifest) echo $(FUZZ_DICT_fuzz_manifest);; \
			fuzz_scan_json) echo $(FUZZ_DICT_fuzz_scan_json);; \
			fuzz_scan_systrace) echo $(FUZZ_DICT_fuzz_scan_systrace);; \
			fuzz_scan_proto|fuzz_input) echo $(FUZZ_DICT_fuzz_scan_proto);; esac ); \
		ml=; [ $$t != fuzz_input ] || ml=-max_len=$(FUZZ_MAXLEN_fuzz_input); \
		ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=tests/fuzz/ubsan.supp \
		$(FZ)/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			$(if $(filter-out 1,$(FUZZ_JOBS)),-jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS)) -print_final_stats=1 \
			$${d:+-dict=$$d} $$ml -artifact_prefix=$(FZ)/artifacts/$$t- $(FUZZ_ARGS) \
			$(FZ)/corpus/$$t $(FZ)/seed/$$t 2>&1 | tail -n 20; \
		[ $${PIPESTATUS[0]} -eq 0 ] || { echo "FAIL: $$t: see $(FZ)/artifacts/"; exit 1; }; \
	done

fuzz-regress: fuzz-build
	$(Q)out=$$(tests/fuzz/regress.sh $(FZ)); echo "$$out"; ! echo "$$out" | grep -q '^FAIL'
else
fuzz fuzz-build fuzz-regress:
	@echo "SKIP: fuzz: $(FUZZ_CC) not found (apt-get install clang)"
endif

-include $(FUZZ_OBJ:.o=.d)

# tracemerge: one non-recursive Makefile, out-of-tree build/.
#   make            build build/tracemerge (release flags)
#   make test       install missing deps, build with ASan+UBSan, run every test
#   make demo       install missing deps, build, open the workbench on the demo
#   make deps       install the Debian packages the build and tests need
#   make bench      generate large archives and print throughput ratios
# V=1 shows full commands; WERROR=0 drops -Werror (packagers with newer compilers).

.DEFAULT_GOAL := all
SHELL := /bin/bash

B       ?= build
SAN     ?= 0
V       ?= 0
WERROR  ?= 1
PREFIX  ?= /usr/local
MANDIR  ?= $(PREFIX)/share/man

ifeq ($(SAN),1)
  O := $(B)/asan
  OPTFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDSAN := -fsanitize=address,undefined
else
  O := $(B)/rel
  OPTFLAGS := -O2 -g
  LDSAN :=
endif

Q := $(if $(filter 1,$(V)),,@)
PKG_ENGINE := libarchive libprotobuf-c libcjson zlib
PKG_TUI    := ncursesw readline
PKGCONFIG  := pkg-config

WARN := -Wall -Wextra -Wshadow -Wpointer-arith -Wcast-qual -Wstrict-prototypes \
        -Wmissing-prototypes -Wformat=2 -Wundef -Wvla -Wwrite-strings \
        -Wimplicit-fallthrough -Wdouble-promotion
ifeq ($(WERROR),1)
  WARN += -Werror
endif

CPPFLAGS_ENG := -D_DEFAULT_SOURCE -DTM_ENGINE_INTERNAL -Iengine -I$(O)/protos
CFLAGS_BASE  := -std=c11 $(OPTFLAGS) $(WARN) -MMD -MP -pthread
ENG_PC_CFLAGS = $(shell $(PKGCONFIG) --cflags $(PKG_ENGINE) 2>/dev/null)
ENG_PC_LIBS   = $(shell $(PKGCONFIG) --libs $(PKG_ENGINE) 2>/dev/null)
TUI_PC_CFLAGS = $(shell $(PKGCONFIG) --cflags $(PKG_TUI) 2>/dev/null)
TUI_PC_LIBS   = $(shell $(PKGCONFIG) --libs $(PKG_TUI) 2>/dev/null)

PROTOS     := $(wildcard protos/*.proto)
PROTO_C    := $(patsubst protos/%.proto,$(O)/protos/%.pb-c.c,$(PROTOS))
PROTO_H    := $(PROTO_C:.c=.h)
ENGINE_SRC := $(wildcard engine/*.c)
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

.PHONY: all test check demo deps deps-check bench clean lint-man check-layers install uninstall fmt-check unit tools
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
	$(Q)$(CC) $(LDSAN) -pthread -o $@ $(TUI_OBJ) $(LIBENGINE) $(TUI_PC_LIBS) $(ENG_PC_LIBS) -lm

# ---------- unit tests and tools (engine only, plus internal headers) ----------
$(O)/tests/%: tests/unit/%.c tests/unit/t.h $(LIBENGINE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(CPPFLAGS_ENG) -Itests/unit $(ENG_PC_CFLAGS) -o $@ $< $(LIBENGINE) $(LDSAN) $(ENG_PC_LIBS) -lm

$(O)/tools/%: tools/%.c $(LIBENGINE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(CPPFLAGS_ENG) $(ENG_PC_CFLAGS) -o $@ $< $(LIBENGINE) $(LDSAN) $(ENG_PC_LIBS) -lm

unit: $(UNIT_BIN)
tools: $(TOOL_BIN)

# ---------- setup ----------
deps:
	$(Q)tools/deps.sh install

deps-check:
	$(Q)tools/deps.sh check || tools/deps.sh install

# ---------- tests: sanitizer build, then everything ----------
test check: deps-check
	$(Q)$(MAKE) --no-print-directory all WERROR=$(WERROR)
	$(Q)$(MAKE) --no-print-directory SAN=1 all unit
	$(Q)tests/run.sh $(B)/asan $(B)/rel

lint-man:
	$(Q)mandoc -Tlint -Wwarning man/*.[15]

check-layers: $(LIBENGINE)
	$(Q)! grep -lE '#include <(n?curses|readline)' engine/*.[ch] || { echo "engine/ includes curses or readline"; exit 1; }
	$(Q)! nm -u $(LIBENGINE) | grep -E ' (initscr|newterm|wgetch|readline|rl_|printf|puts|exit)$$' || { echo "engine uses terminal, printing or exit"; exit 1; }

demo: deps-check all
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

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/tracemerge $(DESTDIR)$(MANDIR)/man1/tracemerge.1 $(DESTDIR)$(MANDIR)/man5/tracemerge-manifest.5
	rm -rf $(DESTDIR)$(PREFIX)/share/tracemerge

fmt-check:
	$(Q)clang-format --dry-run -Werror engine/*.[ch] tui/*.[ch]

clean:
	rm -rf $(B)

-include $(ENGINE_OBJ:.o=.d) $(TUI_OBJ:.o=.d)

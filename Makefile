# etlkit - ETW trace analysis as Unix filters.
#
#   make              build every tool into bin/
#   make test         run the bats suite (tests/*.bats) on bin/
#   make check-asan   build into bin/asan with ASan+UBSan and run the suite again
#   make check        both (what CI runs)
#   make bench        benchmarks (tests/bench/*.sh), numbers on stdout
#   make demo         synthesise the backup-server incident and diagnose it
#   make install PREFIX=/usr/local [DESTDIR=...]
#   make deps         install the Debian packages the build and tests need (root)

VERSION  = 0.1.0
PREFIX  ?= /usr/local
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# The feature-test macro: the code is C11 + POSIX 2008 and builds with
# FEATURES=-D_POSIX_C_SOURCE=200809L (make check-portable does); the default
# stays as it was so that existing builds do not change.
FEATURES ?= -D_GNU_SOURCE
CPPFLAGS += $(FEATURES) -DETLKIT_VERSION='"$(VERSION)"' -Ilib
LDLIBS   = -lyaml -lz -lm

BIN     ?= bin
OBJ      = $(BIN)/.obj

LIB_SRC    = $(wildcard lib/*.c)
FILTER_SRC = $(wildcard filters/*.c)
TOOL_SRC   = $(wildcard tests/tools/*.c)
LIB_OBJ    = $(patsubst lib/%.c,$(OBJ)/lib/%.o,$(LIB_SRC))
LIBA       = $(OBJ)/libetlkit.a
TOOLS      = $(patsubst filters/%.c,$(BIN)/%,$(FILTER_SRC))
TESTTOOLS  = $(patsubst tests/tools/%.c,$(BIN)/%,$(TOOL_SRC))
MANPAGES   = $(wildcard $(patsubst filters/%.c,docs/%.1,$(FILTER_SRC)))	# the installed tools' (not etlgen.1)

SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all test check check-asan bench demo install uninstall clean deps fuzz

all: $(TOOLS) $(TESTTOOLS)

$(OBJ)/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(OBJ)/filters/%.o: filters/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(OBJ)/tools/%.o: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN)/%: $(OBJ)/filters/%.o $(LIBA)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LDLIBS)

$(BIN)/%: $(OBJ)/tools/%.o $(LIBA)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LDLIBS)

-include $(wildcard $(OBJ)/*/*.d)

test: all
	ETLKIT_BIN=$(abspath $(BIN)) tests/run.sh

check-asan:
	$(MAKE) BIN=bin/asan CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" all
	ETLKIT_BIN=$(abspath bin/asan) ETLKIT_ASAN=1 \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	tests/run.sh

check: test check-asan

bench: all
	ETLKIT_BIN=$(abspath $(BIN)) tests/bench.sh

demo: all
	ETLKIT_BIN=$(abspath $(BIN)) tests/demo.sh

fuzz:
	tests/fuzz.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/etlkit/pipelines
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin
	$(if $(MANPAGES),install -m 644 $(MANPAGES) $(DESTDIR)$(PREFIX)/share/man/man1)
	install -m 644 pipelines/* $(DESTDIR)$(PREFIX)/share/etlkit/pipelines 2>/dev/null || true

uninstall:
	rm -f $(patsubst $(BIN)/%,$(DESTDIR)$(PREFIX)/bin/%,$(TOOLS))
	rm -f $(patsubst docs/%,$(DESTDIR)$(PREFIX)/share/man/man1/%,$(MANPAGES))

deps:
	sh tests/deb-src.sh
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	    build-essential zlib1g-dev libyaml-dev bats python3 perl \
	    clang llvm lld libclang-rt-14-dev xxd chromium time musl-tools dpkg-dev

clean:
	rm -rf bin/.obj bin/asan $(TOOLS) $(TESTTOOLS)

# Portability (tests/portable.sh): a strict POSIX build into bin/posix, a
# static musl build into bin/musl (zlib and libyaml built for musl from
# Debian's sources, cached in ~/.cache/etlkit/musl; make deps enables
# deb-src), and the glibc and musl builds compared on the corpus.
.PHONY: check-portable clean-portable
check-portable:
	tests/portable.sh

clean-portable:
	rm -rf bin/posix bin/musl

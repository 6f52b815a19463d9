# etlkit - ETW trace analysis as Unix filters.
#
#   make              build every tool into bin/
#   make test         run the bats suite (tests/*.bats) on bin/
#   make check-asan   build into bin/asan with ASan+UBSan and run the suite again
#   make check        the three: test, check-asan, check-portable (README's
#                     test command, what CI runs)
#   make bench [BASE=rev]  this build against the last release's, side by side
#                     (tests/bench.sh): each tool on the same inputs, base,
#                     new and `cat` of the input interleaved, medians of 5,
#                     ratios.  The base is tests/bench/BASE (rule for updating
#                     it there: after a release, its commit), checked out
#                     and built once in ~/.cache/etlkit/bench-base-<commit>.
#                     BENCH_QUICK=1 for small inputs, BENCH_RUNS=N
#   make demo         synthesise the backup-server incident and diagnose it
#   make install PREFIX=/usr/local [DESTDIR=...]
#                     the front command etlkit and the links etlkit-TOOL in
#                     PREFIX/bin (nothing there shadows a system command),
#                     the tools themselves in PREFIX/libexec/etlkit
#   make deps         install the Debian packages the build and tests need (root;
#                     parallel, slurm-wlm and munge for tests/scaling_*.bats, strace
#                     for the symbol-search syscall check in tests/pdb.bats)
#   make corpus       fetch the real traces the tests read into a cache outside
#                     the repository (not needed when ../shared/corpus exists)
#   make peers        fetch flamegraph.pl (pinned commit, SHA-256 checked) into
#                     ~/.cache/etlkit/peers for the tests that compare with it

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
# The build identity, the second line of every tool's --version: a hash of
# the sources compiled into the tools (lib/, filters/), never of paths,
# times or the compiler.  etlkit-run puts it in its cache keys, so two
# installs of one build share a cache and any other build converts again.
# Override to force a distinct identity: make BUILD_ID=mybuild (or export
# BUILD_ID).  Only base/cli.o is compiled with it (see $(OBJ)/buildid.stamp).
ifeq ($(origin BUILD_ID),undefined)
BUILD_ID := $(shell cat $(sort $(wildcard lib/*/*.c lib/*/*.h filters/*.c)) | sha256sum | cut -c1-16)
endif
LDLIBS   = -lyaml -lz -lnettle -lm -pthread
# libdeflate checks gzip input's CRC-32 (lib/evt/gzread.c) when the compiler
# finds its header (make deps installs it; the musl build has none); without
# it zlib checks, as before.  LIBDEFLATE=yes or no decides instead.
LIBDEFLATE ?= $(shell $(CC) $(CPPFLAGS) -E -include libdeflate.h -x c /dev/null >/dev/null 2>&1 && echo yes)
ifeq ($(LIBDEFLATE),yes)
CPPFLAGS += -DETLKIT_LIBDEFLATE
LDLIBS   += -ldeflate
endif

BIN     ?= bin
OBJ      = $(BIN)/.obj

LIB_SRC    = $(wildcard lib/*/*.c)
FILTER_SRC = $(wildcard filters/*.c)
TOOL_SRC   = $(wildcard tests/tools/*.c)
TOOLLIB_SRC = $(wildcard tests/tools/lib/*.c)
LIB_OBJ    = $(patsubst lib/%.c,$(OBJ)/lib/%.o,$(LIB_SRC))
LIBA       = $(OBJ)/libetlkit.a
TOOLLIB_OBJ = $(patsubst tests/tools/lib/%.c,$(OBJ)/toollib/%.o,$(TOOLLIB_SRC))
TOOLLIBA   = $(OBJ)/libtesttools.a
TOOLS      = $(patsubst filters/%.c,$(BIN)/%,$(FILTER_SRC))
TESTTOOLS  = $(patsubst tests/tools/%.c,$(BIN)/%,$(TOOL_SRC))

# Installed layout (README "Installing"): the tools keep their names in
# LIBEXECDIR, where "diff" shadows nothing; BINDIR gets only the front
# command etlkit and a link etlkit-TOOL per tool (etlkit-run keeps its name).
BINDIR     = $(PREFIX)/bin
LIBEXECDIR = $(PREFIX)/libexec/etlkit
MANDIR     = $(PREFIX)/share/man/man1
DOCDIR     = $(PREFIX)/share/doc/etlkit
PIPEDIR    = $(PREFIX)/share/etlkit/pipelines
TOOLNAMES  = $(filter-out etlkit,$(patsubst filters/%.c,%,$(FILTER_SRC)))
# man pages name docs/X.md and pipelines/X.yaml: installed, where those went
INSTALL_MAN = sed -e 's\#docs/\([a-z-]*\.md\)\#$(DOCDIR)/\1\#g' -e 's\#pipelines/\#$(PIPEDIR)/\#g'
USERDOCS   = docs/evt-format.md docs/pipelines.md docs/scaling.md docs/symbols.md \
             docs/pmu.md docs/hardening.md

SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all test check check-asan bench demo install uninstall clean deps fuzz corpus peers

# Objects are kept between builds (not deleted as intermediates), so a second
# make compiles nothing and a changed file recompiles that file only.
.SECONDARY:

all: $(TOOLS) $(TESTTOOLS)

$(OBJ)/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(OBJ)/filters/%.o: filters/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(OBJ)/tools/%.o: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/tools/lib $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(OBJ)/toollib/%.o: tests/tools/lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/tools/lib $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(TOOLLIBA): $(TOOLLIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN)/%: $(OBJ)/filters/%.o $(LIBA)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LDLIBS)

$(BIN)/%: $(OBJ)/tools/%.o $(TOOLLIBA) $(LIBA)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TOOLLIBA) $(LIBA) $(LDLIBS)

-include $(wildcard $(OBJ)/*/*.d $(OBJ)/*/*/*.d)

# cli.o (the --version text) is recompiled when the build identity changes:
# the stamp is rewritten (when make reads this file, so that make -n tells
# the truth) only then.
BUILD_STAMP = $(OBJ)/buildid.stamp
$(shell mkdir -p $(OBJ) && { [ "$$(cat $(BUILD_STAMP) 2>/dev/null)" = '$(BUILD_ID)' ] || \
    echo '$(BUILD_ID)' >$(BUILD_STAMP); })
$(BUILD_STAMP): ;
$(OBJ)/lib/base/cli.o: $(BUILD_STAMP)
$(OBJ)/lib/base/cli.o: CPPFLAGS += -DETLKIT_BUILD_ID='"$(BUILD_ID)"'

test: all
	ETLKIT_BIN=$(abspath $(BIN)) tests/run.sh

check-asan:
	$(MAKE) BIN=bin/asan CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" all
	ETLKIT_BIN=$(abspath bin/asan) ETLKIT_ASAN=1 \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	tests/run.sh

check: test check-asan check-portable

bench: all
	BASE=$(BASE) ETLKIT_BIN=$(abspath $(BIN)) tests/bench.sh

demo: all
	ETLKIT_BIN=$(abspath $(BIN)) tests/demo.sh

fuzz:
	tests/fuzz.sh

corpus:
	python3 tests/corpus/fetch.py

# best effort: tests that compare with a peer (flamegraph.pl) skip without it
peers:
	-python3 tests/peers/fetch.py

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(MANDIR) \
	    $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PIPEDIR)
	install -m 755 $(BIN)/etlkit $(DESTDIR)$(BINDIR)/etlkit
	install -m 755 $(addprefix $(BIN)/,$(TOOLNAMES)) $(DESTDIR)$(LIBEXECDIR)
	for t in $(TOOLNAMES); do \
	    case $$t in etlkit-*) l=$$t ;; *) l=etlkit-$$t ;; esac; \
	    ln -sf ../libexec/etlkit/$$t $(DESTDIR)$(BINDIR)/$$l || exit 1; \
	    $(INSTALL_MAN) docs/$$t.1 >$(DESTDIR)$(MANDIR)/$$l.1 || exit 1; \
	done
	$(INSTALL_MAN) docs/etlkit.1 >$(DESTDIR)$(MANDIR)/etlkit.1
	install -m 644 $(USERDOCS) $(DESTDIR)$(DOCDIR)
	install -m 644 pipelines/*.yaml $(DESTDIR)$(PIPEDIR)

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/etlkit $(DESTDIR)$(MANDIR)/etlkit.1
	for t in $(TOOLNAMES); do \
	    case $$t in etlkit-*) l=$$t ;; *) l=etlkit-$$t ;; esac; \
	    rm -f $(DESTDIR)$(LIBEXECDIR)/$$t $(DESTDIR)$(BINDIR)/$$l $(DESTDIR)$(MANDIR)/$$l.1; \
	done
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(USERDOCS))) \
	    $(addprefix $(DESTDIR)$(PIPEDIR)/,$(notdir $(wildcard pipelines/*.yaml)))
	-rmdir $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PIPEDIR) \
	    $(DESTDIR)$(PREFIX)/share/etlkit 2>/dev/null

deps:
	sh tests/deb-src.sh
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	    build-essential zlib1g-dev libdeflate-dev libyaml-dev nettle-dev bats python3 perl \
	    clang llvm lld libclang-rt-14-dev xxd chromium time musl-tools dpkg-dev \
	    parallel slurm-wlm munge strace

clean:
	rm -rf bin/.obj bin/asan bin/posix bin/musl $(TOOLS) $(TESTTOOLS)

# Portability (tests/portable.sh): a strict POSIX build into bin/posix, a
# static musl build into bin/musl (zlib and libyaml built for musl from
# Debian's sources, cached in ~/.cache/etlkit/musl; make deps enables
# deb-src), and the glibc and musl builds compared on the corpus.
.PHONY: check-portable
check-portable:
	tests/portable.sh

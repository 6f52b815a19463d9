#!/usr/bin/env bats
# Portable C: the sources stay C11 + POSIX 2008, so that etlkit builds with
# musl and on macOS, not only with glibc.  The full check (strict POSIX
# build, static musl build, glibc and musl compared on the corpus) is
# `make check-portable` (tests/portable.sh); these are the quick guards.
load helpers

REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
SOURCES="lib filters tests/tools"

# glibc-only (or GNU/BSD, not POSIX 2008) functions and fields, with what
# to use instead.  FILE: a file where the name is allowed (its one home).
GLIBC_ONLY="memrchr|mem_last() in lib/base/cli.h
memmem|mem_find() in lib/base/cli.h
qsort_r|qsort() with entries that carry what the comparator needs
strchrnul|strchr() and a NULL check
rawmemchr|memchr() with a length
mempcpy|memcpy() and an addition
strsep|strtok_r()
get_current_dir_name|getcwd()
canonicalize_file_name|realpath() (with _XOPEN_SOURCE 700)
program_invocation_name|cli_progname()
program_invocation_short_name|cli_progname()
asprintf|snprintf() into a malloc'd buffer
vasprintf|vsnprintf() into a malloc'd buffer
strverscmp|a comparator of its own
secure_getenv|getenv()
euidaccess|access()
timegm|a days-from-civil computation (tests/tools/lib/scenario.c utc_seconds)"

# uncommented: drops grep -n hits on comment lines ("FILE:LINE: * ...", "/* ...", "// ...")
uncommented() { grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|/\*|//)'; }

@test "portable: no glibc-only function in lib/ filters/ tests/tools/" {
	local name instead hits found=""
	cd "$REPO"
	while IFS='|' read -r name instead; do
		# a call: the name as a whole word followed by "(" (comments that
		# merely mention it, and xasprintf(), do not count)
		hits=$(grep -rnE "(^|[^A-Za-z0-9_])$name[[:space:]]*\(" $SOURCES --include='*.c' --include='*.h' |
		    uncommented || true)
		[ -z "$hits" ] && continue
		found=1
		echo "glibc-only $name() -- use $instead:" >&2
		echo "$hits" | sed 's/^/    /' >&2
	done <<<"$GLIBC_ONLY"
	[ -z "$found" ] || fail "glibc-only functions in the sources (see above): they do not build with musl, macOS or -D_POSIX_C_SOURCE=200809L"
}

@test "portable: st_mtim, madvise and MADV_* only inside lib/base/cli.c's helpers" {
	local hits
	cd "$REPO"
	# st_mtim is POSIX 2008 but st_mtimespec on macOS: stat_mtime() knows;
	# madvise is not POSIX and glibc's posix_madvise ignores DONTNEED: map_release() knows
	hits=$(grep -rnE '(^|[^A-Za-z0-9_])(st_mtim|st_mtimespec|madvise|MADV_[A-Z]+)([^A-Za-z0-9_]|$)' \
	    $SOURCES --include='*.c' --include='*.h' | uncommented | grep -vE '^lib/base/cli\.[ch]:' || true)
	[ -z "$hits" ] || fail "use stat_mtime() / map_sequential() / map_release() of lib/base/cli.h instead of:
$hits"
}

@test "portable: every source compiles warning-free with -D_POSIX_C_SOURCE=200809L instead of _GNU_SOURCE" {
	local f out=""
	cd "$REPO"
	for f in lib/*/*.c filters/*.c tests/tools/*.c tests/tools/lib/*.c; do
		# the Makefile's warnings; -fsyntax-only: declarations are what differ
		out+=$(${CC:-cc} -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		    -D_POSIX_C_SOURCE=200809L -Ilib -Itests/tools/lib -fsyntax-only "$f" 2>&1)
	done
	[ -z "$out" ] || fail "$(printf '%s\n' "$out" | grep -E 'warning|error' | head -n 20)"
}

@test "portable: mem_last and mem_find agree with Python's rfind and find on random bytes" {
	local san=""
	asan && san="-fsanitize=address,undefined -fno-sanitize-recover=all"
	cat >"$T/t.c" <<-'EOF'
	#include <stdio.h>
	#include <stdlib.h>
	#include "base/cli.h"
	/* each line of stdin: HAYHEX NEEDLEHEX BYTE; prints rfind(BYTE) find(NEEDLE) */
	static size_t unhex(const char *s, unsigned char *out) {
		size_t n = 0; unsigned v;
		while (sscanf(s + 2 * n, "%2x", &v) == 1) out[n++] = (unsigned char)v;
		return n;
	}
	int main(void) {
		char h[512], nd[64]; int c;
		while (scanf("%511s %63s %d", h, nd, &c) == 3) {
			unsigned char hb[256], nb[32];
			/* exact-size copies, so that ASan sees a read one byte too far */
			size_t hn = unhex(h[0] == '-' ? "" : h, hb), nn = unhex(nd[0] == '-' ? "" : nd, nb);
			unsigned char *hay = malloc(hn ? hn : 1), *needle = malloc(nn ? nn : 1);
			const unsigned char *l, *f;
			for (size_t i = 0; i < hn; i++) hay[i] = hb[i];
			for (size_t i = 0; i < nn; i++) needle[i] = nb[i];
			l = mem_last(hay, c, hn);
			f = mem_find(hay, hn, needle, nn);
			printf("%ld %ld\n", l ? (long)(l - hay) : -1L, f ? (long)(f - hay) : -1L);
			free(hay); free(needle);
		}
		return 0;
	}
	EOF
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -I"$REPO/lib" -g $san -o "$T/t" "$T/t.c" "$REPO/lib/base/cli.c"
	# small alphabets so that matches, repeats and near-misses are common
	python3 - "$T" <<-'EOF'
	import random, sys
	t = sys.argv[1]
	rnd = random.Random(7)
	cases = [(b"", b"", 0), (b"", b"a", 97), (b"a", b"", 97), (b"ab", b"abc", 98), (b"aab", b"ab", 97)]
	for _ in range(3000):
	    hay = bytes(rnd.choice(b"ab\x00\xff") for _ in range(rnd.randrange(0, 40)))
	    nd = bytes(rnd.choice(b"ab\x00\xff") for _ in range(rnd.randrange(0, 5)))
	    cases.append((hay, nd, rnd.choice([0, 97, 98, 255, -1, 353])))
	with open(t + "/in", "w") as f, open(t + "/want", "w") as w:
	    for hay, nd, c in cases:
	        f.write("%s %s %d\n" % (hay.hex() or "-", nd.hex() or "-", c))
	        w.write("%d %d\n" % (hay.rfind(bytes([c & 0xff])), hay.find(nd)))
	EOF
	"$T/t" <"$T/in" >"$T/got"
	[ "$(wc -l <"$T/got")" -eq 3005 ] || fail "the test program stopped early"
	textdiff "$T/want" "$T/got" | head -n 5 >&2
	cmp -s "$T/want" "$T/got" || fail "mem_last/mem_find differ from Python's rfind/find"
}

@test "portable: render dpcstacks lists (root, stack) in byte order, with no tie (qsort without a context)" {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/net.evt" 2>/dev/null
	render dpcstacks "$T/net.evt" >"$T/f" 2>/dev/null
	# independent check: split "ROOT;STACK COUNT", sort by the bytes of (ROOT, STACK)
	python3 - "$T/f" <<-'EOF'
	import sys
	lines = open(sys.argv[1], "rb").read().splitlines()
	assert len(lines) > 10, "too few dpcstacks lines to say anything: %d" % len(lines)
	keys = []
	for l in lines:
	    folded = l.rsplit(b" ", 1)[0]
	    root, _, stack = folded.partition(b";")
	    keys.append((root, stack))
	assert len(set(keys)) == len(keys), "two lines with the same (root, stack)"
	assert keys == sorted(keys), "not in (root, stack) byte order"
	EOF
}

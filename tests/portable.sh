#!/usr/bin/env bash
# make check-portable: does etlkit build and behave the same beyond glibc?
#
#   1. build every tool with -D_POSIX_C_SOURCE=200809L instead of
#      _GNU_SOURCE into bin/posix: must be warning-free;
#   2. build every tool with musl-gcc, statically, into bin/musl, against
#      zlib, libyaml and Nettle built for musl from Debian's own sources
#      (apt-get source; make deps enables deb-src) and kept in a cache
#      outside the repository;
#   3. decode every corpus trace (each .etl and .etl.zip, and every .etl
#      member of the diaghub .diagsession zip) with the glibc build (bin/)
#      and the musl build, and run stackfold and render flame on one of
#      them: output, messages and exit status must be byte-identical.
#
# One line per check, then "N passed, N failed".  Exit 0 all passed,
# 1 some check failed, 2 cannot run at all (no corpus, no musl-gcc).
#
# Environment:
#   ETLKIT_CORPUS      the corpus (tests/corpus/locate.bash)
#   ETLKIT_MUSL_CACHE  zlib/libyaml for musl (default
#                      ${XDG_CACHE_HOME:-$HOME/.cache}/etlkit/musl)
#   JOBS               parallel compiles (default 2)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
me=portable
: "${JOBS:=2}"
: "${ETLKIT_MUSL_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/etlkit/musl}"
cache=$ETLKIT_MUSL_CACHE

. "$root/tests/corpus/locate.bash"
corpus=$(corpus_dir "$root") || { echo "$me: $CORPUS_HINT" >&2; exit 2; }

case "$cache" in "$root"/*) echo "$me: ETLKIT_MUSL_CACHE must be outside the repository" >&2; exit 2 ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/etlkit-portable.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok    $*"; }
bad() { failed=$((failed + 1)); echo "FAIL  $*"; }
# show LOG: the end of a failed step's log, indented
show() { tail -n 15 "$1" | sed 's/^/      /'; }

# ---- 1. strict POSIX build -------------------------------------------------
# A fresh directory every time: an up-to-date build would compile nothing
# and so show no warning.
posix_build() {
	rm -rf "$root/bin/posix"
	make -C "$root" -j"$JOBS" BIN=bin/posix FEATURES=-D_POSIX_C_SOURCE=200809L all \
	    >"$tmp/posix.log" 2>&1
}
if ! posix_build; then
	bad "build with -D_POSIX_C_SOURCE=200809L (bin/posix) fails"
	show "$tmp/posix.log"
elif grep -q 'warning:' "$tmp/posix.log"; then
	bad "build with -D_POSIX_C_SOURCE=200809L (bin/posix): $(grep -c 'warning:' "$tmp/posix.log") warnings"
	grep 'warning:' "$tmp/posix.log" | head -n 15 | sed 's/^/      /'
else
	ok "build with -D_POSIX_C_SOURCE=200809L (bin/posix), no warning"
fi

# ---- 2. musl build ---------------------------------------------------------
if ! command -v musl-gcc >/dev/null 2>&1; then
	echo "$me: musl-gcc not found (Debian: apt-get install musl-tools, or make deps)" >&2
	exit 2
fi

# fetch_source PKG: Debian's source of PKG unpacked under $cache/src.
fetch_source() {
	mkdir -p "$cache/src" &&
	(cd "$cache/src" && apt-get source -q "$1") >>"$tmp/musl-libs.log" 2>&1 || {
		echo "apt-get source $1 failed: is deb-src enabled? (make deps runs tests/deb-src.sh)" \
		    >>"$tmp/musl-libs.log"
		return 1
	}
}

# srcdir PKG: the unpacked source directory of PKG (newest if several).
srcdir() {
	ls -d "$cache/src/$1"-[0-9]*/ 2>/dev/null | sort -V | tail -n 1 | sed 's:/$::'
}

# zlib with its own configure (static only), installed into $cache.
build_zlib() {
	local d
	[ -n "$(srcdir zlib)" ] || fetch_source zlib || return 1
	d=$(srcdir zlib)
	(cd "$d" && make distclean >/dev/null 2>&1
	 CC=musl-gcc CFLAGS="-O2" ./configure --static --prefix="$cache" &&
	 make -j"$JOBS" libz.a && make install) >>"$tmp/musl-libs.log" 2>&1
}

# libyaml: no configure in the Debian source (autotools would be needed),
# so its eight files are compiled directly; the version comes from the
# directory name (libyaml-0.2.5).
build_libyaml() {
	local d v maj min pat f
	[ -n "$(srcdir libyaml)" ] || fetch_source libyaml || return 1
	d=$(srcdir libyaml)
	v=${d##*/libyaml-}
	v=${v%%[-+~]*}
	IFS=. read -r maj min pat <<-EOF
	$v
	EOF
	mkdir -p "$d/musl-obj" "$cache/lib" "$cache/include" || return 1
	for f in "$d"/src/*.c; do
		musl-gcc -O2 -I"$d/include" -DYAML_VERSION_STRING="\"$v\"" \
		    -DYAML_VERSION_MAJOR="$maj" -DYAML_VERSION_MINOR="$min" -DYAML_VERSION_PATCH="$pat" \
		    -c -o "$d/musl-obj/$(basename "$f" .c).o" "$f" || return 1
	done >>"$tmp/musl-libs.log" 2>&1
	rm -f "$cache/lib/libyaml.a"
	ar rcs "$cache/lib/libyaml.a" "$d"/musl-obj/*.o && cp "$d/include/yaml.h" "$cache/include/"
}

# Nettle (SHA-256) with its own configure, static, without the assembler
# (which needs m4) or the public-key half (which needs GMP).  The patched
# Debian source looks newer than its generated files: touching them keeps
# make from wanting autoheader.
build_nettle() {
	local d
	[ -n "$(srcdir nettle)" ] || fetch_source nettle || return 1
	d=$(srcdir nettle)
	(cd "$d" && make distclean >/dev/null 2>&1
	 touch aclocal.m4 configure config.h.in stamp-h.in
	 CC=musl-gcc CFLAGS="-O2" ./configure --prefix="$cache" --libdir="$cache/lib" \
	     --disable-shared --disable-public-key --disable-documentation --disable-openssl \
	     --disable-assembler && touch config.h.in stamp-h.in &&
	 make -j"$JOBS" libnettle.a && make install-headers install-static) >>"$tmp/musl-libs.log" 2>&1
}

if [ -f "$cache/lib/libz.a" ] && [ -f "$cache/lib/libyaml.a" ] && [ -f "$cache/lib/libnettle.a" ] &&
    [ -f "$cache/include/zlib.h" ] && [ -f "$cache/include/yaml.h" ] &&
    [ -f "$cache/include/nettle/sha2.h" ]; then
	ok "zlib, libyaml and Nettle for musl (cached in $cache)"
elif { [ -f "$cache/lib/libz.a" ] || build_zlib; } && { [ -f "$cache/lib/libyaml.a" ] || build_libyaml; } &&
    build_nettle; then
	ok "zlib, libyaml and Nettle $(srcdir nettle | sed 's:.*/nettle-::') for musl in $cache (built what was missing)"
else
	bad "zlib, libyaml and Nettle for musl (see below)"
	show "$tmp/musl-libs.log"
fi

# Static: musl-gcc's own libc, and no glibc library can sneak in at run time.
# CPPFLAGS goes through the environment because the Makefile appends to it.
musl_build() {
	rm -rf "$root/bin/musl"
	CPPFLAGS="-I$cache/include" make -C "$root" -j"$JOBS" BIN=bin/musl CC=musl-gcc \
	    LDFLAGS="-static -L$cache/lib" all >"$tmp/musl.log" 2>&1
}
if ! musl_build; then
	bad "build with musl-gcc (bin/musl) fails"
	show "$tmp/musl.log"
elif grep -q 'warning:' "$tmp/musl.log"; then
	bad "build with musl-gcc (bin/musl): $(grep -c 'warning:' "$tmp/musl.log") warnings"
	grep 'warning:' "$tmp/musl.log" | head -n 15 | sed 's/^/      /'
elif ! "$root/bin/musl/etl2evt" --version >/dev/null 2>&1; then
	bad "build with musl-gcc (bin/musl): etl2evt --version does not run"
elif grep -l 'GLIBC_' "$root"/bin/musl/* 2>/dev/null | grep -q .; then
	# glibc's symbol versions in a binary: it was linked against glibc after all
	bad "build with musl-gcc (bin/musl): linked against glibc: $(grep -l 'GLIBC_' "$root"/bin/musl/* | tr '\n' ' ')"
else
	ok "build with musl-gcc, static (bin/musl), no warning"
fi

# ---- 3. glibc and musl builds agree on the corpus -----------------------
if ! make -C "$root" -j"$JOBS" all >"$tmp/glibc.log" 2>&1; then
	bad "build with glibc (bin/)"
	show "$tmp/glibc.log"
fi

# same NAME TOOL ARGS...: TOOL of bin/ and of bin/musl write the same
# bytes, the same messages and exit the same.
same() {
	local name=$1 tool=$2 b
	shift 2
	for b in glibc musl; do
		case $b in glibc) dir=$root/bin ;; musl) dir=$root/bin/musl ;; esac
		"$dir/$tool" "$@" >"$tmp/$b.out" 2>"$tmp/$b.err"
		echo "exit $?" >>"$tmp/$b.err"
	done
	if [ ! -x "$root/bin/musl/$tool" ] || [ ! -x "$root/bin/$tool" ]; then
		bad "$name: no $tool to run"
	elif ! cmp -s "$tmp/glibc.out" "$tmp/musl.out"; then
		bad "$name: output differs ($(cmp "$tmp/glibc.out" "$tmp/musl.out" 2>&1 | sed -n '1s/.*differ: //p'))"
	elif ! cmp -s "$tmp/glibc.err" "$tmp/musl.err"; then
		bad "$name: messages or exit status differ"
		/usr/bin/diff "$tmp/glibc.err" "$tmp/musl.err" | head -n 6 | sed 's/^/      /'
	else
		ok "$name: glibc and musl agree ($(wc -c <"$tmp/glibc.out" | tr -d ' ') bytes, $(tail -n 1 "$tmp/glibc.err"))"
	fi
}

traces=$(cd "$corpus" && ls -- */*.etl */*.etl.zip 2>/dev/null | sort)
[ -n "$traces" ] || bad "no .etl or .etl.zip file in $corpus"
for t in $traces; do
	same "etl2evt $t" etl2evt "$corpus/$t"
done
diaghub=perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip
# its members are named by their base name (etl2evt --member, as in tests/invariants.bats)
members=$(python3 -c 'import sys, zipfile
for n in zipfile.ZipFile(sys.argv[1]).namelist():
    if n.endswith(".etl"): print(n.rsplit("/", 1)[-1])' "$corpus/$diaghub") ||
    bad "cannot list the members of $diaghub"
[ -n "$members" ] || bad "no .etl member in $diaghub"
for m in $members; do
	same "etl2evt $diaghub --member $m" etl2evt --member "$m" "$corpus/$diaghub"
done

# stackfold and render flame on one trace, from the same evt input
evt=$tmp/net.evt
"$root/bin/etl2evt" "$corpus/perfview/net.4.5.2.x64.etl.zip" >"$evt" 2>/dev/null
same "stackfold (net.4.5.2.x64)" stackfold "$evt"
same "render flame (net.4.5.2.x64)" render flame "$evt"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

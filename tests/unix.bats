#!/usr/bin/env bats
# Unix manners of every shipped tool (the filters/*.c that `make install`
# installs): --help/--version on stdout with exit 0, an unknown option exits
# 2 with a message prefixed by the tool's name, `| head -1` ends quietly,
# a full disk (/dev/full) is an error and never a silently short output,
# -o FILE writes the same bytes as stdout, and a man page docs/TOOL.1 that
# groff renders without warnings (tests/install.bats installs them).
#
# Each test walks the list of shipped tools.  A tool whose source
# filters/NAME.c is in the repository but whose binary is missing in
# $ETLKIT_BIN is a failure; a tool not written yet is not tested.
load helpers

# Defects already reported to their owner (TOOL:CHECK); they are printed,
# not failed, until fixed.  Remove an entry when its fix lands.
KNOWN=""

# The shipped tools (README); any other filters/*.c is tested too.
SHIPPED="etl2evt evtfilter stackfold aggregate diff overweight render etlkit-run"
REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)

# tools: the shipped tools that exist, one per line; fails when a tool's
# source is there but its binary is not.
tools() {
	local t all="$SHIPPED" missing=""
	for f in "$REPO"/filters/*.c; do
		[ -e "$f" ] || continue
		t=$(basename "$f" .c)
		[[ " $all " == *" $t "* ]] || all="$all $t"
	done
	for t in $all; do
		if [ -x "$ETLKIT_BIN/$t" ]; then
			echo "$t"
		elif [ -e "$REPO/filters/$t.c" ]; then
			missing="$missing $t"
		fi
	done
	if [ -n "$missing" ]; then
		echo "built from filters/ but missing in $ETLKIT_BIN:$missing" >&2
		return 1
	fi
}

# defect TOOL CHECK MESSAGE: records a defect (printed only when in KNOWN).
defect() {
	if [[ " $KNOWN " == *" $1:$2 "* ]]; then
		echo "known, reported to the owner: $1: $3" >&3
	else
		bad="$bad $1($3)"
	fi
}

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	# A synthetic evt stream with ~30,000 distinct stacks (so every
	# consumer has a large output), a small one, and folded versions.
	awk 'BEGIN {
		srand(7);
		printf "#evt\t1\tsource=synthetic\tcpus=4\tpointer_size=8\tclock=qpc\tclock_freq=10000000\tsample_interval_ms=1\n";
		for (i = 0; i < 60000; i++) {
			s = "ntdll.dll!RtlUserThreadStart;kernel32.dll!BaseThreadInitThunk";
			d = 3 + int(rand() * 10);
			for (j = 0; j < d; j++)
				s = s ";mod" int(rand() * 40) ".dll!Namespace.Class" int(rand() * 200) ".Method" j;
			printf "%d.%06d\tSample\t%d\tapp%d.exe\t%d\t%d\t1\tip=0x7ff6a1b2c3d4\tprio=8\t%s\n",
			    i / 1000, (i % 1000) * 1000, i % 4, i % 3, 100 + i % 3, 1000 + i % 17, s;
		}
	}' >"$d/big.evt"
	head -200 "$d/big.evt" >"$d/small.evt"
	awk -F'\t' '!/^#/ { n[$NF]++ } END { for (s in n) print s, n[s] }' "$d/big.evt" | sort >"$d/big.folded"
	awk 'NR % 3 { print } NR % 3 == 0 { sub(/ [0-9]+$/, " 7"); print }' "$d/big.folded" >"$d/big2.folded"
	head -50 "$d/big.folded" >"$d/small.folded"
	head -60 "$d/big2.folded" | tail -40 >"$d/small2.folded"
}

# args TOOL big|small: arguments for a run with a large or a small output,
# reading the files made in setup_file or the corpus.  Nothing printed for
# a tool that takes no such run (etlkit-run writes into its own files).
args() {
	local d="$BATS_FILE_TMPDIR"
	case "$1:$2" in
	etl2evt:big) echo "$CORPUS/perfview/net.4.5.2.x64.etl.zip" ;;
	etl2evt:small) echo "$CORPUS/perfview/smallEtlFile.etl" ;;
	evtfilter:big) echo "-k Sample $d/big.evt" ;;
	evtfilter:small) echo "-k Sample $d/small.evt" ;;
	stackfold:*) echo "$d/$2.evt" ;;
	aggregate:*) echo "$d/$2.folded" ;;
	diff:big) echo "$d/big.folded $d/big2.folded" ;;
	diff:small) echo "$d/small.folded $d/small2.folded" ;;
	overweight:big) echo "$d/big.folded $d/big2.folded" ;;
	overweight:small) echo "$d/small.folded $d/small2.folded" ;;
	render:big) echo "flame $d/big.folded" ;;
	render:small) echo "flame $d/small.folded" ;;
	esac
}

@test "unix: every tool built from filters/ is in \$ETLKIT_BIN" {
	run tools
	echo "$output"
	[ "$status" -eq 0 ]
	[ -n "$output" ]
}

@test "unix: --help and -h print usage on stdout (nothing on stderr) and exit 0" {
	local t bad=""
	for t in $(tools 2>/dev/null); do
		rc=0; "$t" --help >"$T/out" 2>"$T/err" || rc=$?
		[ "$rc" -eq 0 ] || defect "$t" help "--help exit $rc"
		[ -s "$T/out" ] || defect "$t" help "--help: empty stdout"
		[ ! -s "$T/err" ] || defect "$t" help "--help: stderr: $(head -c 80 "$T/err")"
		grep -qi "usage: *$t" "$T/out" || defect "$t" help "--help: no 'usage: $t' on stdout"
		rc=0; "$t" -h >"$T/out2" 2>/dev/null || rc=$?
		[ "$rc" -eq 0 ] || defect "$t" help "-h exit $rc"
		cmp -s "$T/out" "$T/out2" || defect "$t" help "-h differs from --help"
	done
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "unix: --version prints 'TOOL (etlkit) VERSION' and 'build ID' on stdout and exits 0" {
	local t bad="" v b
	v=$(sed -n 's/^VERSION *= *//p' "$REPO/Makefile")
	b=$(etl2evt --version | sed -n 2p)
	[[ "$b" == "build "?* ]] || bad="$bad etl2evt(no build line: $b)"
	for t in $(tools 2>/dev/null); do
		"$t" --version >"$T/out" 2>"$T/err" || bad="$bad $t(exit $?)"
		[ "$(head -1 "$T/out")" = "$t (etlkit) $v" ] || bad="$bad $t(stdout: $(head -c 60 "$T/out"))"
		# the build identity etlkit-run's cache keys name (Makefile BUILD_ID)
		[ "$(sed -n '2,$p' "$T/out")" = "$b" ] ||
		    bad="$bad $t(build line: $(sed -n 2p "$T/out"))"
		[ ! -s "$T/err" ] || bad="$bad $t(stderr)"
	done
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "unix: an unknown option exits 2 with 'TOOL:' on stderr and nothing on stdout" {
	local t bad=""
	for t in $(tools 2>/dev/null); do
		rc=0; "$t" --no-such-option </dev/null >"$T/out" 2>"$T/err" || rc=$?
		[ "$rc" -eq 2 ] || bad="$bad $t(exit $rc)"
		[[ "$(head -1 "$T/err")" == "$t: "* ]] || bad="$bad $t(stderr: $(head -c 80 "$T/err"))"
		[ ! -s "$T/out" ] || bad="$bad $t(stdout not empty)"
	done
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "unix: '| head -1' on a large output ends quietly (no message, exit 0 or SIGPIPE, no hang)" {
	require_corpus
	local t bad="" a
	for t in $(tools 2>/dev/null); do
		a=$(args "$t" big)
		[ -n "$a" ] || continue
		# shellcheck disable=SC2086
		out=$( (timeout 120 "$t" $a 2>"$T/err.$t"; echo $? >"$T/rc.$t") | head -1)
		rc=$(cat "$T/rc.$t")
		[ -n "$out" ] || bad="$bad $t(no first line)"
		[ "$rc" -eq 0 ] || [ "$rc" -eq 141 ] || bad="$bad $t(exit $rc)"
		[ ! -s "$T/err.$t" ] || bad="$bad $t(stderr: $(head -c 100 "$T/err.$t"))"
	done
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "unix: writing to a full disk (/dev/full) is an error with a message, never a short output" {
	require_corpus
	local t bad="" a size
	for t in $(tools 2>/dev/null); do
		for size in small big; do
			a=$(args "$t" $size)
			[ -n "$a" ] || continue
			# shellcheck disable=SC2086
			rc=0; timeout 120 "$t" $a >/dev/full 2>"$T/err" || rc=$?
			[ "$rc" -eq 2 ] || bad="$bad $t/$size(exit $rc)"
			grep -q "^$t: .*\(No space\|write\)" "$T/err" || bad="$bad $t/$size(stderr: $(head -c 100 "$T/err"))"
		done
		a=$(args "$t" small)
		[ -n "$a" ] || continue
		# shellcheck disable=SC2086
		rc=0; timeout 120 "$t" -o /dev/full $a 2>"$T/err" || rc=$?
		[ "$rc" -eq 2 ] || bad="$bad $t/-o(exit $rc)"
		grep -q "^$t: " "$T/err" || bad="$bad $t/-o(stderr: $(head -c 100 "$T/err"))"
	done
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "unix: -o FILE writes exactly what stdout gets; an unwritable -o is exit 2 naming the file" {
	require_corpus
	local t bad="" a
	for t in $(tools 2>/dev/null); do
		a=$(args "$t" small)
		[ -n "$a" ] || continue
		# shellcheck disable=SC2086
		rc1=0; "$t" $a >"$T/stdout.$t" 2>/dev/null || rc1=$?
		# shellcheck disable=SC2086
		rc2=0; "$t" -o "$T/file.$t" $a >"$T/empty.$t" 2>/dev/null || rc2=$?
		[ "$rc1" -eq "$rc2" ] || bad="$bad $t(exit $rc1 vs $rc2)"
		[ -s "$T/stdout.$t" ] || bad="$bad $t(no output)"
		cmp -s "$T/stdout.$t" "$T/file.$t" || defect "$t" o-same "-o FILE differs from stdout: $(cmp "$T/stdout.$t" "$T/file.$t" 2>&1 | head -c 80)"
		[ ! -s "$T/empty.$t" ] || bad="$bad $t(stdout written with -o)"
		# shellcheck disable=SC2086
		rc=0; "$t" -o "$T/no/such/dir/out" $a 2>"$T/err" || rc=$?
		[ "$rc" -eq 2 ] || bad="$bad $t(unwritable -o: exit $rc)"
		grep -q "^$t: .*no/such/dir/out\b" "$T/err" || defect "$t" o-unwritable "unwritable -o: $(head -c 100 "$T/err")"
	done
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "unix: every tool has a man page docs/TOOL.1 that groff renders without warnings" {
	local t bad=""
	command -v groff >/dev/null || skip "groff is not installed"
	for t in $(tools 2>/dev/null); do
		m="$REPO/docs/$t.1"
		[ -e "$m" ] || { defect "$t" man "no docs/$t.1"; continue; }
		LC_ALL=C.UTF-8 groff -t -man -Tutf8 -ww -z "$m" >"$T/err" 2>&1 || bad="$bad $t(groff exit $?)"
		[ ! -s "$T/err" ] || bad="$bad $t($(head -c 120 "$T/err"))"
		# titled by the installed name (etlkit-diff), never by a system command's
		case $t in etlkit|etlkit-*) th=$t ;; *) th=etlkit-$t ;; esac
		th=$(tr a-z A-Z <<<"$th")
		grep -q "^\.TH  *\"\?$th\"\?  *\"\?1" "$m" || bad="$bad $t(.TH is not '$th 1')"
		grep -qi '^\.SH  *"\?EXIT STATUS' "$m" || bad="$bad $t(no EXIT STATUS section)"
	done
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "tests: no test depends on chance or on the clock (no system randomness, no time-boxed fuzzing)" {
	# every random input comes from random_bytes SEED N (helpers.bash)
	local pat='/dev/u?random|\$RANDOM|\bshuf\b|FUZZ_SECONDS=[1-9]|max_total''_time'
	run bash -c "grep -nE '$pat' '$ROOT'/tests/*.bats | grep -v 'local pat='"
	[ "$status" -eq 1 ] || fail "found: $output"
}

@test "build: a second make compiles nothing, and a changed file recompiles that file only" {
	if asan; then skip "a build check, done once in the normal pass"; fi
	mkdir -p "$T/src"
	(cd "$ROOT" && git ls-files -co --exclude-standard -- Makefile lib filters tests/tools) |
		(cd "$ROOT" && xargs tar cf -) | (cd "$T/src" && tar xf -)
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j2 -C "$T/src" all >/dev/null 2>&1 || fail "build failed"
	run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -C "$T/src" all
	[ "$(grep -c -- ' -c -o ' <<<"$output")" -eq 0 ] || fail "a second make would compile: $output"
	[ "$(grep -c -- ' -o bin/' <<<"$output")" -eq 0 ] || fail "a second make would link: $output"
	touch "$T/src/lib/base/cli.c"
	run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -C "$T/src" all
	[ "$(grep -c -- ' -c -o ' <<<"$output")" -eq 1 ] || fail "more than lib/base/cli.c would compile: $output"
	grep -q -- ' -c -o bin/.obj/lib/base/cli.o lib/base/cli.c' <<<"$output"
}

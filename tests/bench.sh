#!/usr/bin/env bash
# make bench: this build against the base build (the last release), side by side.
#
# USAGE:  tests/bench.sh            (make bench; make bench BASE=<revision>)
#
# 1. The base: BASE (a git revision; default: tests/bench/BASE, the last
#    release's commit) is checked out once as a git worktree in
#    $BENCH_CACHE/bench-base-<commit> and built there once (its bin/ is
#    reused by every later run).  BENCH_BASE_BIN=DIR uses an already built
#    base's bin/ instead (no worktree, no build).
# 2. The table (tests/bench/sidebyside.py): each tool on the inputs of issue
#    18, base and new and `cat` of the input (the floor) run interleaved,
#    medians of BENCH_RUNS (5) runs: CPU, wall, peak RSS, the ratio new
#    speed / base speed, MB/s; then a summary with the issue's goals.
# 3. The other benchmarks (tests/bench/*.sh: aggregate, diff, etl2evt,
#    render, schema, stackfold, symbols) run once per build, their lines
#    shown in pairs, base then new; memory.sh (a curve over input sizes) runs
#    for the new build only.  BENCH_OTHER=0 skips them.
#
# Env:  BASE, BENCH_BASE_BIN, BENCH_RUNS, BENCH_ONLY (a regular expression
#       choosing rows of the table), BENCH_QUICK=1 (small inputs and few
#       sizes, for a quick look: the output says so), BENCH_OTHER,
#       BENCH_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/etlkit: the base
#       worktrees, and in bench/ the inputs, made once and reused: about
#       6 GB at the full sizes, mostly the 1 GB trace and its evt),
#       BENCH_MIN_SAMPLE (tests/bench/sidebyside.py), ETLKIT_BIN (the new
#       build, default bin/), ETLKIT_SHARED, ETLKIT_CORPUS.
#
# A benchmark, not a test: it measures and reports, it does not pass or fail
# (it exits non-zero only when it cannot run: no base, no corpus).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${ETLKIT_BIN:=$here/../bin}"
ETLKIT_BIN=$(cd "$ETLKIT_BIN" && pwd)
ETLKIT_ROOT=$(cd "$here/.." && pwd)
. "$here/corpus/locate.bash"
ETLKIT_CORPUS=$(corpus_dir "$ETLKIT_ROOT") || { echo "bench: $CORPUS_HINT" >&2; exit 2; }
# ETLKIT_SHARED: the project's shared folder (gen_folded.py, the real perf folded files)
export ETLKIT_BIN ETLKIT_ROOT ETLKIT_CORPUS ETLKIT_SHARED="${ETLKIT_SHARED:-$ETLKIT_ROOT/../shared}"
cache=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etlkit}
export BENCH_TMP="${BENCH_TMP:-$cache/bench/tmp}"
mkdir -p "$cache/bench" "$BENCH_TMP"

die() { echo "bench: $*" >&2; exit 2; }

# ---- the base build ---------------------------------------------------------
rev=${BASE:-$(grep -v '^#' "$here/bench/BASE" | awk 'NF { print $1; exit }')}
[ -n "$rev" ] || die "$here/bench/BASE: no revision in it"
commit=$(git -C "$ETLKIT_ROOT" rev-parse --verify --quiet "$rev^{commit}") ||
	die "BASE=$rev: not a commit of this repository (a clone with its history is needed, or set BENCH_BASE_BIN)"
base_id=$(git -C "$ETLKIT_ROOT" rev-parse --short=12 "$commit")

if [ -n "${BENCH_BASE_BIN:-}" ]; then
	base_bin=$(cd "$BENCH_BASE_BIN" && pwd)
else
	wt=$cache/bench-base-$base_id
	# one make bench at a time makes or builds a base (flock(1), where there is one)
	exec 9>"$cache/bench-base.lock"
	! command -v flock >/dev/null || flock 9
	if [ ! -f "$wt/Makefile" ]; then
		echo "bench: base $base_id: making a worktree in $wt" >&2
		git -C "$ETLKIT_ROOT" worktree prune
		git -C "$ETLKIT_ROOT" worktree add --detach "$wt" "$commit" >/dev/null 2>&1 ||
			die "cannot make a worktree of $base_id in $wt"
	fi
	if [ ! -f "$wt/.bench-built" ]; then
		echo "bench: base $base_id: building (once; log in $wt/.bench-build.log)" >&2
		# its own make, not ours: our BIN= or -j must not leak into it
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$wt" -j"$(nproc)" BIN=bin all \
			>"$wt/.bench-build.log" 2>&1 || die "the base $base_id did not build: see $wt/.bench-build.log"
		echo "$commit" >"$wt/.bench-built"
	fi
	base_bin=$wt/bin
	exec 9>&-
fi

echo "etlkit bench  $(date -u +%Y-%m-%dT%H:%MZ)  $(nproc) cores  $(uname -m)" \
     "$( [ -n "${BENCH_QUICK:-}" ] && [ "$BENCH_QUICK" != 0 ] && echo ' QUICK (small inputs)')"
echo "new:  $(git -C "$ETLKIT_ROOT" describe --always --dirty 2>/dev/null || echo '?')  $ETLKIT_BIN"
echo "base: $base_id  $base_bin"

python3 "$here/bench/sidebyside.py" --base-bin "$base_bin" --new-bin "$ETLKIT_BIN" \
	--base-id "$base_id" --cache "$cache/bench" --root "$ETLKIT_ROOT" \
	--shared "$ETLKIT_SHARED" --corpus "$ETLKIT_CORPUS"

[ "${BENCH_OTHER:-1}" != 0 ] || exit 0

# ---- the other benchmarks ---------------------------------------------------
if [ -n "${BENCH_QUICK:-}" ] && [ "$BENCH_QUICK" != 0 ]; then
	: "${AGG_BENCH_SIZE:=5M}" "${DIFF_BENCH_SIZE:=10M}" "${RENDER_BENCH_SIZE:=20M}"
	: "${STACKFOLD_BENCH_SIZE:=20M}" "${SCHEMA_BENCH_PERIODS:=100}" "${SYM_BENCH_LOOKUPS:=50000}"
	: "${MEMORY_ETL_REPEATS=1}" "${MEMORY_ETL_REPEATS_XPRESS=}" "${MEMORY_FOLDED_SIZES=10M}"
	: "${BENCH_TT_REPEAT:=8}"
	export AGG_BENCH_SIZE DIFF_BENCH_SIZE RENDER_BENCH_SIZE STACKFOLD_BENCH_SIZE \
	       SCHEMA_BENCH_PERIODS SYM_BENCH_LOOKUPS MEMORY_ETL_REPEATS \
	       MEMORY_ETL_REPEATS_XPRESS MEMORY_FOLDED_SIZES BENCH_TT_REPEAT
fi

# paired BASE_OUT NEW_OUT: line by line "base | ..." and "new  | ..." when
# both runs printed as many lines (the usual case), else one block each
paired() {
	awk -v nb="$(wc -l <"$1")" -v nn="$(wc -l <"$2")" '
		FNR == NR { b[FNR] = $0; next }
		{ n[FNR] = $0 }
		END {
			if (nb == nn) { for (i = 1; i <= nb; i++) { print "base | " b[i]; print "new  | " n[i] } }
			else { for (i = 1; i <= nb; i++) print "base | " b[i]; for (i = 1; i <= nn; i++) print "new  | " n[i] }
		}' "$1" "$2"
}

echo
echo "== other benchmarks: each script once per build (base, then new), its own best of 3"
out=$cache/bench/other
mkdir -p "$out"
for b in "$here"/bench/*.sh; do
	[ -e "$b" ] || continue
	name=$(basename "$b" .sh)
	echo "== $name"
	if [ "$name" = memory ]; then
		ETLKIT_BIN=$ETLKIT_BIN bash "$b" 2>&1 | sed 's/^/new  | /' || true
		continue
	fi
	ETLKIT_BIN=$base_bin bash "$b" >"$out/$name.base" 2>&1 || echo "(exit $?)" >>"$out/$name.base"
	ETLKIT_BIN=$ETLKIT_BIN bash "$b" >"$out/$name.new" 2>&1 || echo "(exit $?)" >>"$out/$name.new"
	paired "$out/$name.base" "$out/$name.new"
done

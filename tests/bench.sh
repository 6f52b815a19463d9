#!/usr/bin/env bash
# make bench: runs every tests/bench/*.sh; each prints its own numbers.
# A benchmark, not a test: it measures and reports, it does not pass or fail
# (a script that cannot run at all still exits non-zero).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${ETLKIT_BIN:=$here/../bin}"
ETLKIT_ROOT=$(cd "$here/.." && pwd)
. "$here/corpus/locate.bash"
ETLKIT_CORPUS=$(corpus_dir "$ETLKIT_ROOT") || { echo "bench: $CORPUS_HINT" >&2; exit 2; }
# ETLKIT_SHARED: the project's shared folder, for the real perf folded files
export ETLKIT_BIN ETLKIT_ROOT ETLKIT_CORPUS ETLKIT_SHARED="${ETLKIT_SHARED:-$here/../../shared}"
export BENCH_TMP="${BENCH_TMP:-${TMPDIR:-/tmp}/etlkit-bench}"
mkdir -p "$BENCH_TMP"
echo "etlkit bench  $(date -u +%Y-%m-%dT%H:%MZ)  $(nproc) cores  $(uname -m)"
for b in "$here"/bench/*.sh; do
	[ -e "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	bash "$b"
done

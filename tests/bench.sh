#!/usr/bin/env bash
# make bench: runs every tests/bench/*.sh; each prints its own numbers.
# A benchmark, not a test: it measures and reports, it does not pass or fail
# (a script that cannot run at all still exits non-zero).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${ETLKIT_BIN:=$here/../bin}"
export ETLKIT_BIN ETLKIT_SHARED="${ETLKIT_SHARED:-$here/../../shared}"
export BENCH_TMP="${BENCH_TMP:-${TMPDIR:-/tmp}/etlkit-bench}"
mkdir -p "$BENCH_TMP"
echo "etlkit bench  $(date -u +%Y-%m-%dT%H:%MZ)  $(nproc) cores  $(uname -m)"
for b in "$here"/bench/*.sh; do
	[ -e "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	bash "$b"
done

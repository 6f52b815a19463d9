#!/usr/bin/env bats
# SHA-256 of traces (lib/base/sha256.c, through Nettle): the hash etlkit-run
# records for each trace in its cache equals sha256sum's, on every corpus
# trace and on files whose lengths sit at the padding edges (0, 55, 56,
# 64 bytes) and past one 1 MiB read.
load helpers

@test "etlkit-run's cache records the trace's SHA-256 as sha256sum computes it" {
	require_corpus
	mkdir -p "$T/traces"
	for f in "$CORPUS"/*/*.etl "$CORPUS"/*/*.etl.zip; do ln -s "$f" "$T/traces/"; done
	for n in 0 55 56 64 1048577; do random_bytes "$n" "$n" >"$T/traces/junk$n.etl"; done
	cat >"$T/p.yaml" <<-EOF
	etlkit: 1
	cache: cache
	output: out
	scenarios:
	  - files: traces/*.etl*
	    name: "t \$1"
	steps:
	  cpu:
	    stackfold: [--roots=comm]
	outputs:
	  - folded: cpu.folded
	    from: cpu
	EOF
	(cd "$T" && etlkit-run -q -j 2 p.yaml 2>/dev/null) || true
	n=0
	for r in "$T"/cache/*.rec; do
		t=$(sed -n 's/^trace=//p' "$r")
		h=$(sed -n 's/^sha256=//p' "$r")
		want=$(sha256sum <"$T/$t" | cut -d" " -f1)
		[ "$h" = "$want" ] || fail "$t: recorded $h, sha256sum $want"
		n=$((n + 1))
	done
	[ "$n" -ge 20 ] || fail "only $n records"
}

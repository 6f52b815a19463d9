#!/usr/bin/env bats
# Gzip-compressed inputs, as nightly archives keep them.  etl2evt reads a
# gzipped trace (.etl.gz, .etl.zip.gz) through zlib into a temporary file:
# the same evt as the plain trace; a truncated or damaged stream is
# reported with its compressed offset and what came before it is decoded
# (exit 1).  The text tools read gzipped evt and folded stacks, and a
# gzipped trace given to them is named in one line (exit 2).
load helpers

# evt_body FILE: the evt without its header's source= (the name differs)
evt_body() { sed '1s/\tsource=[^\t]*//' "$1"; }

@test "etl2evt: gzipped corpus traces (32- and 64-bit .etl, an .etl.zip) give the evt of the plain file" {
	require_corpus
	for f in perfview/smallEtlFile.etl tx/HTTP_Server.etl perfview/net.4.5.2.x64.etl.zip; do
		gzip -c "$CORPUS/$f" >"$T/t.gz"
		# (--no-symbols: PDBs inside a gzipped zip are not searched, etl2evt(1))
		etl2evt --no-symbols "$CORPUS/$f" >"$T/plain.evt" 2>"$T/plain.err" || [ $? -eq 1 ]
		etl2evt --no-symbols "$T/t.gz" >"$T/gz.evt" 2>"$T/gz.err" || [ $? -eq 1 ]
		textdiff <(evt_body "$T/plain.evt") <(evt_body "$T/gz.evt") >/dev/null || fail "$f: the evt differs"
		grep -q $'\tsource='"$T/t.gz"$'\t' "$T/gz.evt"
		# and on standard input
		etl2evt --no-symbols - <"$T/t.gz" >"$T/stdin.evt" 2>/dev/null || [ $? -eq 1 ]
		textdiff <(evt_body "$T/plain.evt") <(evt_body "$T/stdin.evt") >/dev/null || fail "$f on stdin"
	done
	# the zip's events are there: 79,528 samples in net.4.5.2.x64 (corpus README)
	[ "$(grep -c $'^[0-9.-]*\tSample\t' "$T/gz.evt")" -eq 79528 ]
}

@test "etl2evt: a truncated .etl.gz is decoded up to the cut, reported with the compressed offset, exit 1" {
	require_corpus
	gzip -c "$CORPUS/tx/HTTP_Server.etl" >"$T/h.gz"
	head -c 12000 "$T/h.gz" >"$T/cut.gz"
	# what zlib inflates from the cut file, independently of etlkit
	inflated=$(python3 -c 'import sys, zlib
d = zlib.decompressobj(31).decompress(open(sys.argv[1], "rb").read()); print(len(d))' "$T/cut.gz")
	run etl2evt -o "$T/cut.evt" "$T/cut.gz"
	[ "$status" -eq 1 ] || fail "exit $status: $output"
	[[ "${lines[0]}" == "etl2evt: $T/cut.gz: gzip stream truncated near compressed byte 12000; decoding the "*" bytes inflated before it" ]] ||
	    fail "${lines[0]}"
	# every 64 KiB that zlib gave out was decoded (etl2evt writes in 64 KiB steps)
	n=$(echo "${lines[0]}" | sed 's/.*decoding the \([0-9]*\) bytes.*/\1/')
	[ "$n" -le "$inflated" ] && [ "$n" -gt $((inflated - 65536)) ] || fail "$n of $inflated bytes"
	# the events before the cut are events of the whole trace
	etl2evt "$CORPUS/tx/HTTP_Server.etl" | grep -v '^#' | sort >"$T/full"
	grep -v '^#' "$T/cut.evt" | sort >"$T/cut"
	full=$(wc -l <"$T/full") got=$(wc -l <"$T/cut")
	[ "$got" -gt 100 ] && [ "$got" -lt "$full" ] || fail "$got of $full events"
	[ -z "$(comm -23 "$T/cut" "$T/full")" ] || fail "lines that the whole trace does not have"
}

@test "etl2evt: damage in a gzip stream is reported (exit 1 past the first 64 KiB, exit 2 within it)" {
	require_corpus
	gzip -c "$CORPUS/tx/HTTP_Server.etl" >"$T/h.gz"
	# a flipped byte of the CRC in gzip's trailer: the check fails at the end
	size=$(wc -c <"$T/h.gz")
	python3 -c 'import sys; p, at = sys.argv[1], int(sys.argv[2]); d = bytearray(open(p, "rb").read()); d[at] ^= 0xff; open(sys.argv[3], "wb").write(d)' \
	    "$T/h.gz" $((size - 6)) "$T/late.gz"
	run etl2evt -o "$T/late.evt" "$T/late.gz"
	[ "$status" -eq 1 ] || fail "exit $status: $output"
	[[ "$output" == *"$T/late.gz: gzip stream damaged near compressed byte "* ]] || fail "$output"
	[[ "$output" == *"$T/late.gz: zlib: incorrect data check"* ]] || fail "$output"
	grep -q $'\tEvent\t' "$T/late.evt"
	# a flipped byte at the start: nothing to decode, one line
	python3 -c 'import sys; p = sys.argv[1]; d = bytearray(open(p, "rb").read()); d[300] ^= 0xff; open(sys.argv[2], "wb").write(d)' \
	    "$T/h.gz" "$T/early.gz"
	run etl2evt -o "$T/early.evt" "$T/early.gz"
	[ "$status" -eq 2 ] || fail "exit $status: $output"
	[ "${#lines[@]}" -eq 1 ] && [[ "$output" == "etl2evt: $T/early.gz: gzip stream damaged near compressed byte "*", in its first 64 KiB: "* ]] ||
	    fail "$output"
}

@test "etl2evt: gzipped evt text or other data is refused in one line before the rest is inflated" {
	require_corpus
	etl2evt "$CORPUS/perfview/smallEtlFile.etl" | gzip >"$T/e.gz"
	run etl2evt "$T/e.gz"
	[ "$status" -eq 2 ] && [ "$output" = "etl2evt: $T/e.gz: gzip-compressed evt text, not a trace: the other tools read it as it is" ] ||
	    fail "exit $status: $output"
	# 64 MiB of zeros: refused from its first 64 KiB, nothing written to TMPDIR
	mkdir "$T/tmp"
	head -c $((64 << 20)) /dev/zero | gzip -1 >"$T/z.gz"
	TMPDIR="$T/tmp" run etl2evt "$T/z.gz"
	[ "$status" -eq 2 ] && [[ "$output" == "etl2evt: $T/z.gz: gzip-compressed, but what it holds is not an ETL trace or a zip ("* ]] ||
	    fail "exit $status: $output"
	[ -z "$(ls -A "$T/tmp")" ]
}

@test "text tools: a gzipped trace is named in one line, exit 2; gzipped evt and folded are read" {
	require_corpus
	gzip -c "$CORPUS/perfview/smallEtlFile.etl" >"$T/s.etl.gz"
	gzip -c "$CORPUS/perfview/gcevents.etl.zip" >"$T/g.zip.gz"
	for t in stackfold render evtfilter aggregate; do
		run "$t" "$T/s.etl.gz"
		[ "$status" -eq 2 ] && [ "$output" = "$t: $T/s.etl.gz: this is a gzip-compressed ETL file: run etl2evt first (it reads .etl.gz)" ] ||
		    fail "$t: exit $status: $output"
		run "$t" "$T/g.zip.gz"
		[ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ "$output" == "$t: $T/g.zip.gz: this is a gzip-compressed zip: run etl2evt first"* ]] ||
		    fail "$t: exit $status: $output"
	done
	# gzipped evt and folded: the same as plain
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/n.evt"
	gzip -c "$T/n.evt" >"$T/n.evt.gz"
	stackfold "$T/n.evt" >"$T/plain.folded"
	stackfold "$T/n.evt.gz" >"$T/gz.folded"
	cmp "$T/plain.folded" "$T/gz.folded"
	gzip -c "$T/plain.folded" >"$T/x.folded.gz"
	stackfold "$T/x.folded.gz" >"$T/again.folded"
	cmp "$T/plain.folded" "$T/again.folded"
	render flame "$T/x.folded.gz" >"$T/gz.svg"
	render flame "$T/plain.folded" >"$T/plain.svg"
	cmp "$T/plain.svg" "$T/gz.svg"
}

@test "etl2evt: a gzipped trace costs no more memory than the plain one (streamed through a file)" {
	n=8
	if asan; then n=2; fi
	etlgen --repeat $n --no-compress -o "$T/b.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	gzip -1 -c "$T/b.etl" >"$T/b.etl.gz"
	plain=$(peak_rss_kb etl2evt "$T/b.etl")
	cp "$T/out" "$T/plain.evt"
	gz=$(peak_rss_kb etl2evt "$T/b.etl.gz")
	[ "$plain" -gt 0 ] && [ "$gz" -gt 0 ] || fail "etl2evt failed: $plain $gz"
	# the trace is mapped either way; the gzip path adds a 64 KiB buffer and zlib's state
	[ "$gz" -le $((plain + 8192)) ] || fail "gzip: $gz kB, plain: $plain kB ($(wc -c <"$T/b.etl") bytes of trace)"
	textdiff <(evt_body "$T/plain.evt") <(evt_body "$T/out") >/dev/null
}

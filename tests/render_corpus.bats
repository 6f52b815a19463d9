#!/usr/bin/env bats
# render on real traces from ../shared/corpus decoded by etl2evt: totals
# checked against awk over the evt, and against stackfold's folding.
load helpers

NET="$CORPUS/perfview/net.4.5.2.x64.etl.zip"

net_evt() {
	local f="$BATS_FILE_TMPDIR/net.evt"
	[ -s "$f" ] || etl2evt "$NET" > "$f"
	echo "$f"
}

local_setup() { require_corpus; }

@test "corpus: flame graph of net.4.5.2.x64 CPU samples, totals from the evt" {
	evt=$(net_evt)
	want=$(awk -F'\t' '$2=="Sample" {s+=$7} END{print s}' "$evt")
	[ "$want" -gt 10000 ]
	render --keep-idle --unit=ms --colors etw --title "net.4.5.2 CPU" "$evt" > "$T/f.svg"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" "$T/f.svg" > "$T/b"
	[ "$(awk -F'\t' '$1=="all"{print $2}' "$T/b")" = "$want" ]
	[ "$(wc -l < "$T/b")" -gt 100 ]
	# the same through stackfold (microseconds): the same shape, x1000
	stackfold --keep-idle --unit=us "$evt" | render --countname us > "$T/s.svg"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" "$T/s.svg" > "$T/sb"
	[ "$(awk -F'\t' '$1=="all"{print $2}' "$T/sb")" = "$((want * 1000))" ]
	# icicle, reversed and flame chart views of a real trace are well-formed too
	render --inverted --reverse "$evt" | python3 "$BATS_TEST_DIRNAME/render_svg.py" /dev/stdin > /dev/null
	render --flamechart "$evt" | python3 "$BATS_TEST_DIRNAME/render_svg.py" /dev/stdin > /dev/null
}

@test "corpus: call tree and by-name totals match the samples" {
	evt=$(net_evt)
	want=$(awk -F'\t' '$2=="Sample" {s+=$7} END{print s*1000}' "$evt")
	render tree --tsv --keep-idle --unit=us --min-percent 1 "$evt" > "$T/t"
	[ "$(awk -F'\t' '$1==0 {print $2}' "$T/t")" = "$want" ]
	render byname --tsv --keep-idle --unit=us "$evt" > "$T/b"
	# exclusive over all names = the total
	[ "$(awk -F'\t' '!/^#/ {s+=$1} END{print s}' "$T/b")" = "$want" ]
	top=$(awk -F'\t' '!/^#/ {print $NF; exit}' "$T/b")
	render callers -f "$top" --tsv "$evt" > "$T/c"
	grep -q '^#tree' "$T/c"
}

@test "corpus: speedscope export per thread, weights per thread match the samples" {
	evt=$(net_evt)
	render speedscope --keep-idle --unit=ms "$evt" > "$T/s.json"
	awk -F'\t' '$2=="Sample" {w[$4" ("$5") Thread ("$6")"]+=$7} END{for (k in w) print k "\t" w[k]}' "$evt" | sort > "$T/want"
	python3 - "$T/s.json" <<-'EOF' | sort > "$T/got"
	import json, sys
	d = json.load(open(sys.argv[1]))
	nf = len(d["shared"]["frames"])
	for p in d["profiles"]:
	    assert p["type"] == "sampled" and p["unit"] == "milliseconds"
	    assert len(p["samples"]) == len(p["weights"])
	    assert all(0 <= i < nf for s in p["samples"] for i in s)
	    print("%s\t%g" % (p["name"], sum(p["weights"])))
	EOF
	textdiff "$T/want" "$T/got"
}

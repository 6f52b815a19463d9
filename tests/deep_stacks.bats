#!/usr/bin/env bats
# Hostile stack depth (docs/hardening.md, "Deep stacks and hostile
# names"): a stack deeper than 4096 frames keeps its 2048 root-side and
# 2047 leaf-side frames, the frames between become one "[N frames
# elided]" frame, the weight stays exact, the cut is counted on stderr,
# and every output stays linear in the input (text trees stop indenting
# at 256 levels).
load helpers

# deep.folded: a 100,000-frame stack (1.6 MB), a 5,000-frame one, a
# stack of exactly 4096 frames (not cut) and a normal one.  want.folded:
# the same stacks cut by the rule above, computed here in python.
local_setup() {
	python3 - "$T" <<-'EOF'
	import sys
	d = sys.argv[1]
	stacks = [
	    (["app.dll!f%06d" % i for i in range(100000)], 1234),
	    (["app.dll!f%06d" % i for i in range(10)] + ["lib.dll!g%d" % i for i in range(4990)], 77),
	    (["edge!e%d" % i for i in range(4096)], 5),
	    (["main", "work"], 3),
	]
	def cut(fr):
	    if len(fr) <= 4096:
	        return fr
	    return fr[:2048] + ["[%d frames elided]" % (len(fr) - 4095)] + fr[-2047:]
	with open(d + "/deep.folded", "w") as f, open(d + "/want.folded", "w") as w:
	    for fr, n in stacks:
	        f.write(";".join(fr) + " %d\n" % n)
	        w.write(";".join(cut(fr)) + " %d\n" % n)
	EOF
	insize=$(wc -c < "$T/deep.folded")
	# the bound: twice the input plus 64 KiB
	bound=$((2 * insize + 65536))
}

# bounded CMD...: the size of CMD's output, reading at most BOUND+1 bytes
# (an unbounded writer is stopped by SIGPIPE instead of filling the disk).
bounded() {
	"$@" 2>/dev/null | head -c $((bound + 1)) | wc -c
}

@test "deep stacks: stackfold cuts a 100,000-frame stack to 4096 frames, weights exact, counted" {
	run stackfold "$T/deep.folded"
	[ "$status" -eq 0 ]
	stackfold "$T/deep.folded" 2> "$T/err" | sort > "$T/got"
	sort "$T/want.folded" | textdiff - "$T/got"
	grep -q '^stackfold: .*deep.folded:1: 2 stacks deeper than 4096 frames: 96810 frames elided' "$T/err"
	[ "$(wc -l < "$T/err")" -eq 1 ]
	# an evt stream is cut the same way (lib/stacks reads both)
	{
		printf '#evt\t1\n'
		awk '{printf "1.000000\tSample\t0\tapp.exe\t1\t2\t%s\t%s\n", $NF, $1}' "$T/deep.folded"
	} > "$T/deep.evt"
	stackfold --unit ms "$T/deep.evt" 2> "$T/err2" | sort > "$T/got2"
	sort "$T/want.folded" | textdiff - "$T/got2"
	grep -q 'deep.evt:2: 2 stacks deeper than 4096 frames' "$T/err2"
	# --kernel: the leaf-side kframes= frames keep their _[k] across the cut,
	# the mark gets it when it replaced a kernel frame (python maps every frame)
	for k in 1000 3000 5000; do
		python3 - "$T/k.evt" "$T/k.want" "$k" <<-'EOF'
		import sys
		n, k = 6000, int(sys.argv[3])
		fr = ["u%d" % i for i in range(n - k)] + ["k%d" % i for i in range(k)]
		kern = [i >= n - k for i in range(n)]
		open(sys.argv[1], "w").write("#evt\t1\n1.000000\tSample\t0\ta.exe\t1\t2\t1\tkframes=%d\t%s\n" % (k, ";".join(fr)))
		cut = list(range(2048)) + [None] + list(range(n - 2047, n))
		out = [("[%d frames elided]" % (n - 4095) + ("_[k]" if any(kern[2048:n - 2047]) else ""))
		       if i is None else fr[i] + ("_[k]" if kern[i] else "") for i in cut]
		open(sys.argv[2], "w").write(";".join(out) + " 1000\n")
		EOF
		stackfold --unit=us --kernel "$T/k.evt" 2>/dev/null | textdiff "$T/k.want" -
	done
	# evtfilter matches its patterns on the cut stack (as stackfold will), says so,
	# and writes the event whole
	evtfilter --include 'f099999' "$T/deep.evt" > "$T/kept" 2> "$T/err3"
	grep -q 'deep.evt: 2 stacks deeper than 4096 frames' "$T/err3"
	awk -F'\t' '$2 == "Sample" && $7 == 1234 {print split($NF, a, ";")}' "$T/kept" | grep -qx 100000
}

@test "deep stacks: render tree output stays linear, indentation stops at 256 levels" {
	# the 100,000-frame stack alone (it wrote 5 GB before the cap)
	head -1 "$T/deep.folded" > "$T/one.folded"
	[ "$(bounded render tree "$T/one.folded")" -le "$bound" ]
	render tree "$T/deep.folded" > "$T/t" 2> "$T/err"
	grep -q 'deep.folded:1: 2 stacks deeper than 4096 frames: 96810 frames elided' "$T/err"
	# linear for any input: at most one line per input frame, and no line
	# longer than the columns + 256 spaces + "+ [depth N] " + the longest name
	awk '{ if (length($0) > 50 + 256 + 16 + 24) { print "long line " NR; exit 1 } }' "$T/t"
	[ "$(wc -l < "$T/t")" -le "$(tr ';' '\n' < "$T/deep.folded" | wc -l)" ]
	grep -q '^ *1,234 .*   + \[depth 2049\] \[95905 frames elided\]$' "$T/t"
	grep -q '^ *77 .*   + \[depth 2049\] \[905 frames elided\]$' "$T/t"
	# the TSV tree: depth column exact, inclusive of ROOT = the input total
	render tree --tsv "$T/deep.folded" > "$T/tsv" 2>/dev/null
	want=$(awk '{s += $NF} END {print s}' "$T/deep.folded")
	[ "$(awk -F'\t' '$1 == 0 {print $2}' "$T/tsv")" = "$want" ]
	[ "$(awk -F'\t' '!/^#/ && $1 > m {m = $1} END {print m}' "$T/tsv")" -eq 4096 ]
	grep -qx $'2049\t1234\t[0-9.]*\t0\t0.00\t\\[95905 frames elided\\]' "$T/tsv"
}

@test "deep stacks: render callers and callees stay linear, weights exact" {
	[ "$(bounded render callees -f 'app.dll!f000000' "$T/deep.folded")" -le "$bound" ]
	[ "$(bounded render callers -f 'app.dll!f099999' "$T/deep.folded")" -le "$bound" ]
	render callees -f 'app.dll!f000000' "$T/deep.folded" > "$T/c" 2>/dev/null
	# the focus is on the two app.dll stacks: 1234 + 77
	grep -q '^Focus app.dll!f000000: inclusive 1,311 ' "$T/c"
	render callers -f 'app.dll!f099999' --tsv "$T/deep.folded" > "$T/r" 2>/dev/null
	grep -qx $'0\t1234\t[0-9.]*\t0\t0.00\tapp.dll!f099999' "$T/r"
	grep -qx $'2047\t1234\t[0-9.]*\t0\t0.00\t\\[95905 frames elided\\]' "$T/r"
}

@test "deep stacks: flame graph and speedscope stay linear, weights exact" {
	[ "$(bounded render "$T/deep.folded")" -le "$bound" ]
	render "$T/deep.folded" > "$T/f.svg" 2> "$T/err"
	grep -q 'deep.folded:1: 2 stacks deeper than 4096 frames: 96810 frames elided' "$T/err"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" "$T/f.svg" > "$T/b"
	want=$(awk '{s += $NF} END {print s}' "$T/deep.folded")
	[ "$(awk -F'\t' '$1=="all"{print $2}' "$T/b")" = "$want" ]
	grep -q $'^\\[95905 frames elided\\]\t1234\t' "$T/b"
	# from stdin (the line reader, not the mapped file): the same picture
	render < "$T/deep.folded" 2>/dev/null | cmp - "$T/f.svg"
	render speedscope "$T/deep.folded" > "$T/s.json" 2>/dev/null
	python3 - "$T/s.json" "$T/want.folded" <<-'EOF'
	import json, sys
	d = json.load(open(sys.argv[1]))
	names = [f["name"] for f in d["shared"]["frames"]]
	got = sorted((";".join(names[i] for i in s), w)
	             for p in d["profiles"] for s, w in zip(p["samples"], p["weights"]))
	want = sorted((l.rsplit(" ", 1)[0], float(l.rsplit(" ", 1)[1])) for l in open(sys.argv[2]))
	assert got == want, "speedscope stacks differ from the cut stacks"
	EOF
}

@test "deep stacks: diff, overweight and aggregate obey the same cap" {
	diff "$T/deep.folded" "$T/deep.folded" > "$T/d" 2> "$T/err"
	grep -q 'deep.folded:1: 2 stacks deeper than 4096 frames' "$T/err"
	awk '{n = split($1, a, ";"); if (n > 4096) exit 1}' "$T/d"
	grep -q '\[95905 frames elided\]' "$T/d"
	aggregate "$T/deep.folded" > "$T/a" 2> "$T/err"
	grep -q 'deep.folded:1: 2 stacks deeper than 4096 frames' "$T/err"
	[ "$(wc -c < "$T/a")" -lt "$(wc -c < "$T/deep.folded")" ]
	grep -q '\[95905 frames elided\]' "$T/a"
	overweight "$T/deep.folded" "$T/deep.folded" > /dev/null 2> "$T/err"
	grep -q 'deep.folded:1: 2 stacks deeper than 4096 frames' "$T/err"
}

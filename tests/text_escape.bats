#!/usr/bin/env bats
# Names from traces in text meant for people (docs/hardening.md, "Deep
# stacks and hostile names"): control characters, invalid UTF-8, C1 and
# bidi controls are shown as visible escapes (\n \t \x1b \u202e), one
# name stays on its row, and TSV keeps its own rules.
load helpers

# clean FILE: fails if FILE is not UTF-8 or holds a control character
# (other than the line ends), a C1 control, a bidi control or U+2028/9.
clean() {
	python3 - "$1" <<-'EOF'
	import re, sys
	bad = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
	for i, line in enumerate(open(sys.argv[1], encoding="utf-8", errors="strict")):
	    if bad.search(line.rstrip("\n")):
	        sys.exit("%s:%d: raw control character: %r" % (sys.argv[1], i + 1, line))
	EOF
}

# dpc.evt: two DPC routines, one of them named with a newline, a tab, an
# escape sequence and a right-to-left override (U+202E, evt-escaped as
# evt-format.md §4 says: control bytes as %XX, UTF-8 as it is).
local_setup() {
	python3 - "$T/dpc.evt" <<-'EOF'
	import sys
	hostile = "evil.sys!A%0AB%09C%1B[2JD\u202eE"
	with open(sys.argv[1], "w", encoding="utf-8") as f:
	    f.write("#evt\t1\tsource=hand\tcpus=2\tduration_ms=100\n")
	    for i in range(6):
	        routine, module = (hostile, "evil%0Asys") if i % 2 else ("ndis.sys!ndisInterruptDpc", "ndis.sys")
	        t = 1.0 + i
	        f.write("%.6f\tDPC\t%d\tIdle\t0\t0\t0.01\troutine=%s\tmodule=%s\tduration_us=10.000\tend_ms=%.6f\t\n"
	                % (t, i % 2, routine, module, t + 0.01))
	EOF
}

@test "text escape: render dpc shows a hostile routine name as one row with visible escapes" {
	render dpc "$T/dpc.evt" > "$T/out"
	clean "$T/out"
	grep -qF 'A\nB\tC\x1b[2JD\u202eE' "$T/out"
	# the function table: a header and two rows of the same width, nothing split
	sed -n '/^By module, function$/,/^$/p' "$T/out" | sed '1d;/^$/d' > "$T/tab"
	[ "$(wc -l < "$T/tab")" -eq 3 ]
	[ "$(awk '{print length($0)}' "$T/tab" | sort -u | wc -l)" -eq 1 ]
	grep -q '^DPC  *evil\\nsys  *evil.sys!A\\nB\\tC\\x1b\[2JD\\u202eE  *3 ' "$T/tab"
	# the module tables and the interval table too
	grep -q '^DPC  *evil\\nsys  *3 ' "$T/out"
}

@test "text escape: render dpcisr names the module on one line; TSV keeps its rules" {
	render dpcisr "$T/dpc.evt" > "$T/x"
	clean "$T/x"
	grep -qx 'Total = 3 for module evil\\nsys' "$T/x"
	grep -q ', evil\\nsys$' "$T/x"
	# TSV: tabs and line ends become spaces (unchanged), one line per row
	render dpc --tsv "$T/dpc.evt" > "$T/t"
	[ "$(awk -F'\t' '$1 == "function"' "$T/t" | wc -l)" -eq 2 ]
	awk -F'\t' '$1 == "function" && NF != 13 {exit 1}' "$T/t"
}

@test "text escape: tree, byname, callers, callees and overweight escape frame names" {
	# raw bytes in folded stacks: a tab, ESC, DEL, an RLO, an isolate, a C1 NEL, invalid UTF-8
	printf 'main;bad\tname\033[31m\177\342\200\256evil\342\201\246x\302\205y\377z 10\nmain;ok 5\n' > "$T/f"
	for v in tree byname; do
		render $v "$T/f" > "$T/$v"
		clean "$T/$v"
		grep -qF 'bad\tname\x1b[31m\x7f\u202eevil\u2066x\u0085y\xffz' "$T/$v"
	done
	render callers -f 'bad*' "$T/f" > "$T/c"
	clean "$T/c"
	grep -qF 'Focus bad*' "$T/c"
	grep -qF '  bad\tname\x1b[31m\x7f\u202eevil' "$T/c"
	render callees -f main "$T/f" > "$T/e"
	clean "$T/e"
	grep -qF '+ bad\tname\x1b[31m\x7f\u202eevil' "$T/e"
	# TSV is left as it was: the frame is one field (the tab turned into a space)
	render tree --tsv "$T/f" | awk -F'\t' 'NF != 6 {exit 1}'
	# overweight's table (its folded reader refuses control bytes: bidi and C1 pass)
	printf 'main;a\342\200\256b 10\nmain;ok\302\205 5\n' > "$T/base"
	printf 'main;a\342\200\256b 30\nmain;ok\302\205 5\n' > "$T/test"
	overweight "$T/base" "$T/test" > "$T/o"
	clean "$T/o"
	grep -qF 'a\u202eb' "$T/o"
}

#!/usr/bin/env bats
# The shared line reader (lr_next in lib/evt/evt.c) never loses the stream:
# a line of 64 MiB or more, or a line with a NUL byte, is one skipped
# line, named FILE:LINE on stderr and counted (exit 1), and every other
# line is read, by every tool that reads evt or folded text; a damaged
# gzip input keeps the lines before the damage and names the compressed
# byte.  The truths come from tests/lines_gen.py and python's zlib, not
# from the tools.  Inputs over the cap are made on the fly (pipes), not
# kept on disk.
load helpers

gen() { python3 "$BATS_TEST_DIRNAME/lines_gen.py" "$@"; }

LONG=long:70000000	# over the 64 MiB cap (67108864 bytes)
TOO_LONG="line too long (64 MiB or more), line skipped"
HAS_NUL="NUL byte in line, line skipped"

# run_tool CMD...: stdout in $T/out, stderr in $T/err, exit status in $st.
run_tool() {
	st=0
	"$@" >"$T/out" 2>"$T/err" || st=$?
	cat "$T/err"
}

# truth FORMAT BAD AT: what the tools must keep of gen's stream, in
# $T/sums ("stack weight", sorted), $T/total and $T/good (the lines).
truth() {
	gen sums "$@" >"$T/sums"
	gen total "$@" >"$T/total"
	gen good "$@" >"$T/good"
}

# kept TOOL MESSAGE IN1 IN2: TOOL reads IN1 (diff and overweight IN1 and
# IN2, the same data); it must exit 1, print MESSAGE, and keep exactly
# the truth in $T/sums, $T/total, $T/good (evtfilter).
kept() {
	local tool=$1 msg=$2 in1=$3 in2=$4

	case $tool in
	stackfold | aggregate)
		if [ "$tool" = stackfold ]; then
			run_tool stackfold "$in1"
		else
			# aggregate opens each input twice (it peeks for an evt header)
			[ -f "$in1" ] || { cat "$in1" >"$T/agg.in" && in1=$T/agg.in; }
			run_tool aggregate -S "$in1"
			rm -f "$T/agg.in"
		fi
		LC_ALL=C sort "$T/out" >"$T/got"
		cp "$T/sums" "$T/want" ;;
	diff)
		run_tool diff "$in1" "$in2"
		LC_ALL=C sort "$T/out" >"$T/got"
		awk '{ print $0, $NF }' "$T/sums" >"$T/want" ;;
	overweight)
		run_tool overweight "$in1" "$in2"
		sed -n 's/^\(Base\|Test\) .*: \([0-9.]*\)$/\2/p' "$T/out" >"$T/got"
		cat "$T/total" "$T/total" >"$T/want" ;;
	render-flame)
		run_tool render "$in1"
		# the frame "root" (every stack's first) holds the total in v="..."
		sed -n 's|.*<title>root</title><rect [^>]* v="\([0-9.]*\)".*|\1|p' "$T/out" >"$T/got"
		cp "$T/total" "$T/want" ;;
	render-tree)
		run_tool render tree --tsv "$in1"
		awk -F'\t' '$NF == "ROOT" { print $2 }' "$T/out" >"$T/got"
		cp "$T/total" "$T/want" ;;
	render-speedscope)
		run_tool render speedscope "$in1"
		python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["profiles"]
print(int(sum(sum(x["weights"]) for x in p)))' "$T/out" >"$T/got"
		cp "$T/total" "$T/want" ;;
	evtfilter)
		run_tool evtfilter "$in1"
		grep -v '^#' "$T/out" >"$T/got"
		grep -v '^#' "$T/good" >"$T/want"
		grep -q "^#skipped	what=malformed line	count=[1-9]" "$T/out" ||
			fail "evtfilter: no #skipped line" ;;
	esac
	[ "$st" -eq 1 ] || fail "$tool: exit status $st, not 1"
	grep -qF -- "$msg" "$T/err" || fail "$tool: no \"$msg\" on stderr"
	textdiff "$T/want" "$T/got" || fail "$tool: the rest of the input was not kept exactly"
}

FOLDED_TOOLS="stackfold aggregate diff overweight render-tree render-speedscope"

@test "a line over 64 MiB in the middle: every folded reader skips it, names its line, keeps the rest" {
	truth folded "$LONG" 1001
	for tool in $FOLDED_TOOLS; do
		kept "$tool" ":1001: $TOO_LONG" <(gen stream folded "$LONG" 1001) <(gen good folded "$LONG" 1001)
	done
}

@test "a line over 64 MiB in the middle: evtfilter skips it, names its line, passes the rest" {
	truth evt "$LONG" 1001
	kept evtfilter ":1001: $TOO_LONG" <(gen stream evt "$LONG" 1001)
	# stackfold reads evt the same way
	run_tool stackfold --unit=ms <(gen stream evt "$LONG" 1001)
	[ "$st" -eq 1 ]
	grep -qF ":1001: $TOO_LONG" "$T/err"
	awk '{ s += $NF } END { print s }' "$T/out" | textdiff "$T/total" -
}

@test "a line over 64 MiB costs no more memory than the cap: a 150 MB line read from a pipe" {
	asan && skip "ASan's shadow memory makes RSS meaningless"
	truth folded long:150000000 501 1001
	for tool in stackfold render diff; do
		case $tool in diff) cmd="diff - $T/good" ;; *) cmd="$tool -" ;; esac
		read -r kb status < <(gen stream folded long:150000000 501 1001 |
			python3 -c 'import resource, subprocess, sys
with open(sys.argv[1], "wb") as out, open(sys.argv[2], "wb") as err:
    rc = subprocess.run(sys.argv[3:], stdout=out, stderr=err).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)' "$T/out" "$T/err" $cmd)
		echo "$tool: peak RSS $kb kB, status $status"
		[ "$status" -eq 1 ] || fail "$tool: status $status"
		grep -qF "<stdin>:501: $TOO_LONG" "$T/err" || fail "$tool: line 501 not named"
		[ "$kb" -lt 204800 ] || fail "$tool: peak RSS $kb kB for a skipped line"
	done
	# and the rest was kept (diff's output is the last)
	awk '{ print $0, $NF }' "$T/sums" >"$T/want"
	LC_ALL=C sort "$T/out" | textdiff "$T/want" -
}

@test "a line with a NUL byte: every folded reader skips it with the same message, keeps the rest" {
	truth folded nul 2 40
	for tool in $FOLDED_TOOLS render-flame; do
		kept "$tool" ":2: $HAS_NUL" <(gen stream folded nul 2 40) <(gen good folded nul 2 40)
	done
}

@test "a line with a NUL byte: evtfilter skips it with the same message, never passes it on" {
	truth evt nul 3 40
	kept evtfilter ":3: $HAS_NUL" <(gen stream evt nul 3 40)
	[ "$(tr -cd '\000' <"$T/out" | wc -c)" -eq 0 ]
	# the DPC/ISR reader (render dpc) counts it too
	run_tool render dpc <(gen stream evt nul 3 40)
	[ "$st" -eq 1 ]
	grep -qF ":3: $HAS_NUL" "$T/err"
}

# damage FILE: the decodable complete lines of the damaged gzip FILE, by
# python's zlib, in $T/good, $T/sums, $T/total; the byte (count of
# compressed bytes zlib took) where decoding stopped on stdout.
damage() {
	python3 - "$1" "$T" <<'PY'
import sys, zlib
data, t = open(sys.argv[1], "rb").read(), sys.argv[2]
d, out, at = zlib.decompressobj(31), [], len(data)
for i in range(len(data)):
    try:
        out.append(d.decompress(data[i:i + 1]))
    except zlib.error:
        at = i + 1
        break
lines = b"".join(out).split(b"\n")[:-1]
sums, total = {}, 0
for l in lines:
    if l.startswith(b"#"):
        continue
    cols = l.split(b"\t")
    try:
        stack, w = (cols[7], int(cols[6])) if len(cols) > 1 else l.rsplit(b" ", 1)
        w = int(w)
    except (ValueError, IndexError):
        continue	# garbage decoded before a corrupt stream's check fails
    sums[stack] = sums.get(stack, 0) + w
    total += w
open(t + "/good", "wb").write(b"".join(l + b"\n" for l in lines))
open(t + "/sums", "wb").write(b"".join(b"%s %d\n" % (s, sums[s]) for s in sorted(sums)))
open(t + "/total", "w").write("%d\n" % total)
print(at)
PY
}

@test "a truncated gzip input: every tool, render included, keeps the good part and names the byte" {
	gen good folded nul 0 30000 | gzip >"$T/f.gz"
	size=$(stat -c %s "$T/f.gz")
	head -c $((size / 2)) "$T/f.gz" >"$T/cut.gz"
	at=$(damage "$T/cut.gz")
	[ "$at" -eq $((size / 2)) ]
	[ "$(cat "$T/total")" -gt 0 ]
	for tool in $FOLDED_TOOLS render-flame; do
		kept "$tool" "cut.gz: truncated gzip stream at compressed byte $at" "$T/cut.gz" "$T/cut.gz"
	done
	gen good evt nul 0 30000 | gzip >"$T/e.gz"
	size=$(stat -c %s "$T/e.gz")
	head -c $((size / 2)) "$T/e.gz" >"$T/cut.evt.gz"
	at=$(damage "$T/cut.evt.gz")
	kept evtfilter "cut.evt.gz: truncated gzip stream at compressed byte $at" "$T/cut.evt.gz"
}

@test "a corrupt gzip input: the good part is kept and the message names where zlib stopped" {
	# a first member with a wrong CRC, then a good one that is never reached
	{ gen good folded nul 0 30000 | gzip; gen good folded nul 0 10 | gzip; } >"$T/f.gz"
	first=$(gen good folded nul 0 30000 | gzip | wc -c)
	python3 -c 'import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[int(sys.argv[3]) - 8] ^= 0x55
open(sys.argv[2], "wb").write(b)' "$T/f.gz" "$T/bad.gz" "$first"
	at=$(damage "$T/bad.gz")
	[ "$at" -lt "$first" ]
	for tool in $FOLDED_TOOLS render-flame; do
		kept "$tool" "bad.gz: corrupt gzip stream at compressed byte $at" "$T/bad.gz" "$T/bad.gz"
	done
}

@test "etlkit-run: a NUL line in a trace is one skipped line, the job partial, everything else aggregated" {
	mkdir -p "$T/tr"
	gen stream folded nul 2 40 >"$T/tr/run1.folded"
	printf 'app;b 2\n' >"$T/tr/run2.folded"
	printf 'etlkit: 1\nscenarios:\n  - files: tr/run*.folded\n    name: "run $1"\nsteps:\n  s:\n    stackfold: []\noutputs:\n  - folded: all.folded\n' >"$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	echo "$output"
	[ "$status" -eq 1 ]
	truth folded nul 2 40
	sed -n 's/^run 1;//p' "$T/out/p/all.folded" | LC_ALL=C sort | textdiff "$T/sums" -
	grep -qx 'run 2;app;b 2' "$T/out/p/all.folded"
	grep -q "run1.folded:2: $HAS_NUL" "$T"/.etlkit-cache/p/*.log
}

#!/usr/bin/env bats
# The line reader finds NUL bytes by one search ahead over the bytes it
# has read, not a search per line (lib/evt/evt.c, line_has_nul).  Many
# lines with NUL bytes, spread over several of its 256 KiB reads (across
# reads, buffer slides, and lines that grow the buffer), from a file, a
# pipe and gzip: exactly those lines are skipped, each named, and the
# rest read as the same file without them is read.
load helpers

# gen OUT CLEAN: folded lines, some with NUL bytes (in OUT only), and the
# line numbers of those in $T/nul_lines.  Python decides, independently.
gen() {
	python3 - "$1" "$2" "$T/nul_lines" <<'EOF'
import sys
out, clean, nul = open(sys.argv[1], 'wb'), open(sys.argv[2], 'wb'), open(sys.argv[3], 'w')
for i in range(1, 60001):
    frames = ';'.join('m!f%d' % ((i * 7 + k) % 53) for k in range(1 + i % 9))
    if i % 5000 == 17:
        frames += ';' + 'x' * 400000  # a line longer than the buffer: it grows
    line = ('%s %d\n' % (frames, 1 + i % 3)).encode()
    bad = i % 397 == 0 or i in (2, 3, 4, 30001, 30002, 59999, 60000) or i % 5000 == 18
    if bad:
        at = (i * 31) % (len(line) - 1)
        line = line[:at] + b'\0' + line[at:]
        if i % 2:
            line = line[:-1] + b'\0\n'  # and one just before the newline
        nul.write('%d\n' % i)
    else:
        clean.write(line)
    out.write(line)
EOF
}

check() {
	local name=$1
	stackfold -j 1 -o "$T/got" "$2" 2>"$T/err" && st=0 || st=$?
	[ "$st" -eq 1 ] || fail "exit $st: $(head -3 "$T/err")"
	cmp "$T/got" "$T/want" || fail "output differs: $(textdiff "$T/got" "$T/want" | head -3)"
	n=$(wc -l <"$T/nul_lines")
	grep -q ": $n malformed lines skipped" "$T/err" || fail "$(tail -2 "$T/err")"
	# the first ten are named, by their line numbers
	head -10 "$T/nul_lines" | while read -r l; do
		grep -qF "$name:$l: NUL byte in line, line skipped" "$T/err" ||
		    fail "line $l not named: $(head -12 "$T/err")"
	done
}

@test "NUL lines among 60000 folded lines over many reads: the same lines skipped from a file, a pipe and gzip" {
	gen "$T/in" "$T/clean"
	[ "$(wc -l <"$T/nul_lines")" -gt 150 ]
	stackfold -j 1 -o "$T/want" "$T/clean"
	check "$T/in" "$T/in"
	cat "$T/in" | { stackfold -j 1 -o "$T/got" 2>"$T/err" || true; }
	cmp "$T/got" "$T/want"
	grep -q ": $(wc -l <"$T/nul_lines") malformed lines skipped" "$T/err"
	gzip -c "$T/in" >"$T/in.gz"
	check "$T/in.gz" "$T/in.gz"
}

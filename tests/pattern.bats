#!/usr/bin/env bats
# Patterns are untrusted input (command lines, YAML pipelines): lib/stacks/pattern.c
# must refuse what would blow up, with a one-line message naming the
# pattern, and match what it accepts in bounded memory and linear time
# (docs/hardening.md, "Patterns").
load helpers

# Without ASan, a tool that would eat gigabytes (the bugs these tests pin
# down) fails fast instead of taking the shared machine with it.
# ASan reserves terabytes of address space, so it runs unlimited.
limit_memory() {
	asan || ulimit -v 2097152
}

# errto FILE CMD...: runs CMD with its stderr in FILE (bats' run merges it)
errto() {
	local f=$1
	shift
	"$@" 2>"$f"
}

# refused TOOL OPTION PATTERN WHY: a usage error, one line on stderr with
# the tool's prefix, the pattern and the reason.
refused() {
	local tool=$1 opt=$2 pat=$3 why=$4
	limit_memory
	run errto "$T/err" timeout 120 "$tool" "$opt" "$pat" /dev/null
	[ "$status" -eq 2 ] || fail "$tool $opt '$pat': status $status, want 2"
	grep -qF -- "$tool: " "$T/err" || fail "no '$tool:' prefix: $(cat "$T/err")"
	grep -qF -- "'${pat:0:80}" "$T/err" || fail "pattern not named: $(cat "$T/err")"
	grep -qF -- "$why" "$T/err" || fail "want '$why': $(cat "$T/err")"
	[ "$(grep -c . "$T/err")" -eq 1 ] || [ "$(grep -vc "try '$tool --help'" "$T/err")" -eq 1 ] ||
		fail "more than one message: $(cat "$T/err")"
}

# frames FILE N LEN CHARS: N folded one-frame stacks of LEN random CHARS.
frames() {
	python3 -c 'import random, sys
f, n, ln, cs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = random.Random(1)
with open(f, "w") as o:
    for i in range(n):
        o.write("".join(r.choice(cs) for _ in range(ln)) + " 1\n")' "$@"
}

@test "reproducer: a ']' escaped inside a class no longer hides the quantifiers after it" {
	# the class is unterminated: refused as such, not compiled into 2.9 GB
	refused stackfold --fold '@[x\]a++++++++++++++++++++++' 'missing ]'
	# closed, the class is followed by a nested quantifier, refused as in .NET
	refused stackfold --fold '@[x\]]a++++++++++++++++++++++' 'nested quantifier'
}

@test "reproducer: quantifiers after (?i) are refused (718 MB before)" {
	refused stackfold --fold '@a+(?i)+(?i)+(?i)+(?i)+(?i)+(?i)+(?i)+(?i)+(?i)+(?i)+(?i)+' 'quantifier follows nothing'
}

@test "reproducer: {m,n} counts are capped (a{1,32767} took over 7.8 GB)" {
	refused evtfilter -i '@a{1,32767}' 'repetition count over 255'
	refused evtfilter -x '@a{300}' 'repetition count over 255'
}

@test "reproducer: 20 nested (...+)+ groups are refused (over 5.9 GB before)" {
	local p='a' i
	for i in $(seq 20); do p="($p+)"; done
	refused stackfold --group "@$p+" 'nested quantifier'
	# bounded repetitions that multiply through the nesting: refused by size
	p='a'
	for i in $(seq 20); do p="($p){2}"; done
	refused stackfold --group "@$p" 'program over 2000 instructions'
	# nesting itself is capped
	p='a'
	for i in $(seq 40); do p="($p)"; done
	refused stackfold --include "@$p" 'groups nested deeper than 32'
	p='a'
	for i in $(seq 40); do p="{$p}"; done
	refused stackfold --include "$p" 'groups nested deeper than 32'
}

@test "reproducer: back-references and repeated empty-matching groups are refused (@(a*)*\\1X\$ took over 60 s)" {
	refused stackfold --fold '@(a*)*\1X$' 'repeated group can match empty'
	refused stackfold --fold '@(a*)\1X$' 'back-reference'
	refused stackfold --fold '@(a|)+b' 'repeated group can match empty'
	refused stackfold --fold '@(?=a)b' 'unsupported (? construct'
	# a long pattern is named by its first 80 bytes
	long="@$(printf 'a%.0s' $(seq 5000))"
	run errto "$T/err" evtfilter -x "$long" /dev/null
	[ "$status" -eq 2 ]
	grep -qF "evtfilter: --exclude: bad pattern '${long:0:80}...': longer than 4096 bytes" "$T/err"
}

@test "the message says where in the pattern" {
	refused stackfold -x '@abc(d+)+' 'nested quantifier at offset 8'
}

@test "accepted patterns that blew up glibc's matcher run in bounded memory" {
	# [ab]*a[ab]{250}: glibc's lazily built DFA grew past 1.3 GB on such
	# frames; our matcher keeps a few ints per instruction
	frames "$T/in" 300 4000 ab
	limit_memory
	rss=$(peak_rss_kb timeout 300 stackfold -x '@[ab]*a[ab]{250}x' "$T/in")
	[ "$rss" -gt 0 ] || fail "stackfold failed: $rss"
	bound=$((64 * 1024)); asan && bound=$((512 * 1024))
	[ "$rss" -lt "$bound" ] || fail "peak RSS $rss kB"
	# nothing matched (no x): every sample is kept
	[ "$(awk '{s += $NF} END {print s}' "$T/out")" -eq 300 ]
	# the largest counts, nested bounded groups: complete, bounded
	rss=$(peak_rss_kb timeout 300 stackfold -g '@(?:(?:b{0,255}a){1,3})->A' "$T/in")
	[ "$rss" -gt 0 ] && [ "$rss" -lt "$bound" ] || fail "peak RSS $rss kB"
}

@test "classes: ']' first, escaped ']' '-' '^' '\\', [:alpha:], ranges match as Python's re says" {
	printf '%s 1\n' 'a]b' 'x-y' 'p^q' 'back\slash' 'X' 'dig9it' '[open' 'plain' 'UPPER' 'A_B' >"$T/in"
	# ours, and the same in Python's syntax where POSIX classes differ
	local pats=(
		'[]x]' '[]x]' '[x\]]' '[x\]]' '[\^]' '[\^]' '[\-z]' '[\-z]' '[\\]' '[\\]'
		'[[:digit:]]' '[0-9]' '[^a-z]' '[^a-z]' '^[[:upper:]]+$' '^[A-Z]+$' '[\[]' '[\[]'
		'[a-c]\]' '[a-c]\]' '\w_\w' '\w_\w' '[\d\s]' '[\d\s]' '^(?:x|p)[-^]' '^(?:x|p)[-^]'
	)
	local i p
	for ((i = 0; i < ${#pats[@]}; i += 2)); do
		p=${pats[i]}
		run errto "$T/err" stackfold -x "@$p" "$T/in"
		[ "$status" -eq 0 ] || fail "'@$p' refused: $output"
		want=$(python3 -c 'import re, sys
pat = re.compile(sys.argv[1], re.I)
for line in open(sys.argv[2]):
    name, n = line.rsplit(" ", 1)
    if not pat.search(name):
        print(line, end="")' "${pats[i + 1]}" "$T/in" | sort)
		[ "$(echo "$output" | sort)" = "$want" ] || fail "'@$p': got $(echo "$output" | tr '\n' ' ') want $(echo "$want" | tr '\n' ' ')"
	done
}

#!/usr/bin/env bats
# Memory grows with distinct stacks at the rate docs/hardening.md (section
# "Memory") states: peak RSS per distinct stack, on inputs made to have
# many of them.  The bounds sit 10-25% above what was measured when they
# were set (RSS is no timing: it moves little from run to run) and below
# what the tools took before (the figures are in docs/hardening.md).
load helpers

# distinct_folded N FILE: N distinct 3-frame stacks (100 roots x 1000
# callers x a leaf of its own each: the hostile shape, a new frame and a
# new node per stack), about 53 bytes a line
distinct_folded() {
	python3 -c 'import sys
n = int(sys.argv[1])
with open(sys.argv[2], "w") as f:
    for i in range(0, n, 100000):
        f.write("".join("app.exe!Main%d;core.dll!Work%d;leaf.dll!F%x %d\n" %
            (j % 100, (j // 100) % 1000, j * 2654435761 % (1 << 32) ^ 1, 1 + j % 7)
            for j in range(i, min(n, i + 100000))))' "$1" "$2"
}

# same_sums A B: the two folded files give the same total per distinct stack
# (python, not the tools: the truth is computed apart from the code under test)
same_sums() {
	python3 -c 'import sys
def sums(p):
    d = {}
    for l in open(p, "rb"):
        s, c = l.rstrip(b"\n").rsplit(b" ", 1)
        d[s] = d.get(s, 0) + int(c)
    return d
a, b = sums(sys.argv[1]), sums(sys.argv[2])
if a != b:
    print("%d vs %d stacks, %d differ" % (len(a), len(b), len(set(a.items()) ^ set(b.items()))))
    sys.exit(1)' "$1" "$2"
}

# total FILE: the sum of the counts (integers) of a folded file
total() { python3 -c 'import sys; print(sum(int(l.rsplit(b" ", 1)[1]) for l in open(sys.argv[1], "rb")))' "$1"; }

@test "memory: stackfold keeps 1 M distinct short stacks in < 224 bytes each (measured 188, was 372)" {
	asan && skip "RSS under ASan is its shadow memory"
	distinct_folded 1000000 "$T/in.folded"
	rss=$(peak_rss_kb stackfold "$T/in.folded")
	[ "$rss" -gt 0 ] || fail "stackfold failed ($rss)"
	[ "$(wc -l <"$T/out")" -eq 1000000 ] || fail "$(wc -l <"$T/out") stacks out, not 1000000"
	same_sums "$T/in.folded" "$T/out" || fail "stackfold changed the counts"
	# 1 M stacks: kB * 1024 / 1e6 bytes each (the stack cache fills at about
	# 600,000 of them: the rest are transformed line by line, and counted right)
	[ "$rss" -lt 218750 ] || fail "stackfold peak RSS $rss kB: $((rss * 1024 / 1000000)) bytes per distinct stack"
}

@test "memory: stackfold keeps deep stacks (gen_folded 200M: 8,908 distinct, 21 MB of text) in less than 1.25 x their text a thread (measured 0.99 with -j 1, 1.30 with -j 2; was 2.3)" {
	asan && skip "RSS under ASan is its shadow memory"
	python3 "$GEN_FOLDED" --size 200M --seed 1 >"$T/in.folded"
	# the text of the distinct stacks, counted apart from the tools
	text=$(python3 -c 'import sys
print(sum(len(s) for s in {l.rsplit(b" ", 1)[0] for l in open(sys.argv[1], "rb")}))' "$T/in.folded")
	[ "$text" -gt 20000000 ] || fail "only $text bytes of distinct stacks: not the input planned"
	# One thread: one table of the distinct stacks.
	rss=$(peak_rss_kb stackfold -j 1 "$T/in.folded")
	[ "$rss" -gt 0 ] || fail "stackfold failed ($rss)"
	# (recursion collapses: a stack may merge into another, the total stays)
	[ "$(total "$T/out")" = "$(total "$T/in.folded")" ] || fail "stackfold changed the total"
	[ "$((rss * 1024 * 4))" -lt "$((text * 5))" ] ||
		fail "stackfold -j 1 peak RSS $rss kB for $text bytes of distinct stacks"
	# Two threads fold a piece of the file each, every piece with its own
	# table (that is what lets them run apart), so the bound is per thread:
	# memory grows with distinct stacks times threads, never with the file.
	rss=$(peak_rss_kb stackfold -j 2 "$T/in.folded")
	[ "$rss" -gt 0 ] || fail "stackfold -j 2 failed ($rss)"
	[ "$(total "$T/out")" = "$(total "$T/in.folded")" ] || fail "stackfold -j 2 changed the total"
	[ "$((rss * 1024 * 4))" -lt "$((text * 5 * 2))" ] ||
		fail "stackfold -j 2 peak RSS $rss kB for $text bytes of distinct stacks (2 tables)"
}

@test "memory: aggregate keeps 1 M distinct stacks in < 184 bytes each (measured 168, was 198), render flame in < 160 (measured 136, was 183)" {
	asan && skip "RSS under ASan is its shadow memory"
	distinct_folded 1000000 "$T/in.folded"
	rss=$(peak_rss_kb aggregate -S "$T/in.folded")
	[ "$rss" -gt 0 ] || fail "aggregate failed ($rss)"
	same_sums "$T/in.folded" "$T/out" || fail "aggregate changed the counts"
	[ "$rss" -lt 179688 ] || fail "aggregate peak RSS $rss kB: $((rss * 1024 / 1000000)) bytes per distinct stack"
	rss=$(peak_rss_kb render flame "$T/in.folded")
	[ "$rss" -gt 0 ] || fail "render flame failed ($rss)"
	grep -q '</svg>' "$T/out" || fail "render flame wrote no whole SVG"
	[ "$rss" -lt 156250 ] || fail "render flame peak RSS $rss kB: $((rss * 1024 / 1000000)) bytes per distinct stack"
}

@test "memory: the stack cache keeps frame ids, not text: %3B, cut names and look-alike stacks still land on the right stack" {
	# every line comes many times (cached after its first time); python
	# spells the frames as stackfold does (%3B -> ':', names over 4096
	# bytes cut to 4093 + "...", a frame repeated at once collapses, an
	# empty name is written "?")
	python3 -c 'import random, sys
r = random.Random(7)
long = "L" * 5000
frames = ["a%3Bb", "a:b", "a%3bb", "x", long, long + "z", "%3B", "%", "%3", "", "c;d"]
stacks = [";".join(r.choice(frames) for _ in range(r.randint(1, 6))) for _ in range(300)]
stacks = [s for s in stacks if s.strip()]
with open(sys.argv[1], "w") as f:
    for _ in range(20000):
        f.write("%s %d\n" % (r.choice(stacks), r.randint(1, 9)))' "$T/in.folded"
	python3 -c 'import re, sys
def spell(fr):
    if len(fr) > 4096:
        fr = fr[:4093] + "..."
    return re.sub("%3[Bb]", ":", fr)
want = {}
for l in open(sys.argv[1]):
    s, c = l.rstrip("\n").rsplit(" ", 1)
    out = []
    for fr in (spell(x) for x in s.split(";")):
        if not out or out[-1] != fr:
            out.append(fr)
    k = ";".join(x or "?" for x in out)	# stackfold writes an empty name as "?"
    want[k] = want.get(k, 0) + int(c)
for k in sorted(want):
    print(k, want[k])' "$T/in.folded" >"$T/want"
	stackfold "$T/in.folded" >"$T/got" 2>"$T/err" || fail "stackfold failed: $(cat "$T/err")"
	same_sums "$T/want" "$T/got" || fail "stackfold's stacks differ from python's"
}

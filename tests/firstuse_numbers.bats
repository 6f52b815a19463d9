#!/usr/bin/env bats
# What a new user trips over (issue 15), numbers and exits: the progress
# line's rate, the exit status when inputs are unreadable, and the
# attributes docs/evt-format.md promises for each kind of line.
load helpers

# on_tty [--slow FILE] CMD...: runs CMD with stderr on a pseudo-terminal
# (progress is drawn only on a terminal) and stdout to /dev/null; prints
# what the terminal received, one progress update a line.  With --slow,
# FILE is fed to CMD's stdin through a pipe over about two seconds, so
# that the run lasts long enough for a rate to be measured.
on_tty() {
	python3 -c '
import os, pty, sys, time
args = sys.argv[1:]
slow = None
if args[0] == "--slow":
    slow, args = args[1], args[2:]
if slow:
    rd, wr = os.pipe()
pid, fd = pty.fork()
if pid == 0:
    if slow:
        os.dup2(rd, 0)
        os.close(wr)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.execvp(args[0], args)
if slow:
    os.close(rd)
    data = open(slow, "rb").read()
    step = len(data) // 40 + 1
    for i in range(0, len(data), step):
        os.write(wr, data[i:i + step])
        time.sleep(0.05)
    os.close(wr)
out = b""
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:
        break
    if not b:
        break
    out += b
os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace").replace("\r", "\n"))' "$@"
}

# check_progress TOOL FILE: every update in FILE is "TOOL: [NN% ]X.Y MB
# [R MB/s ]" and every rate is below a generous bound; prints the rates.
check_progress() {
	python3 -c '
import re, sys
tool, path = sys.argv[1], sys.argv[2]
line_re = re.compile(r"^%s: (?:[ 0-9]{3}%% )?\d+\.\d MB (?:(\d+) MB/s )?$" % re.escape(tool))
updates = 0
for line in open(path, encoding="utf-8"):
    line = line.rstrip("\n").replace("\x1b[K", "")
    if not line.strip():
        continue
    m = line_re.match(line)
    if not m:
        sys.exit("bad progress line: %r" % line)
    updates += 1
    if m.group(1) is not None:
        rate = int(m.group(1))
        print(rate)
        if rate >= 100000:
            sys.exit("impossible rate: %r" % line)
if updates == 0:
    sys.exit("no progress line drawn")' "$@"
}

@test "progress: etl2evt's first update shows no rate from a near-zero interval" {
	require_corpus
	on_tty etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/tty"
	check_progress etl2evt "$T/tty"
}

@test "progress: stackfold on a slow input prints rates, each one plausible" {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/in.evt"
	on_tty --slow "$T/in.evt" stackfold --keep-idle >"$T/tty"
	check_progress stackfold "$T/tty" >"$T/rates" || { cat "$T/tty"; false; }
	# the run lasts about two seconds: a rate must have been measured
	[ -s "$T/rates" ] || { cat "$T/tty"; fail "no rate printed"; }
}

# a small folded input made from a corpus trace
corpus_folded() {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" | stackfold >"$T/a.folded"
	[ -s "$T/a.folded" ]
}

@test "exit: aggregate with every input missing exits 2, one line per missing file, no output" {
	run aggregate "$T/nope1.folded" "$T/nope2.folded" -o "$T/out"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *nope1.folded:*"No such file"* ]]
	[[ "${lines[1]}" == *nope2.folded:*"No such file"* ]]
	[ ! -e "$T/out" ]
	run aggregate -M "$T/nope1.folded" "$T/nope2.folded"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 2 ]
	# a directory is no readable input either
	mkdir "$T/dir"
	run aggregate "$T/dir"
	[ "$status" -eq 2 ]
}

@test "exit: aggregate with some inputs missing exits 1, the rest aggregated as if alone" {
	corpus_folded
	aggregate -m mean -b "$T/alone.tsv" "$T/a.folded" >"$T/alone"
	run aggregate -m mean -b "$T/some.tsv" "$T/a.folded" "$T/nope.folded" -o "$T/some"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == *nope.folded:*"No such file"* ]]
	[ -s "$T/some" ]
	# the missing file is no scenario of weight 0 halving the mean
	textdiff "$T/alone" "$T/some"
	textdiff "$T/alone.tsv" "$T/some.tsv"
}

@test "exit: diff, overweight, render and stackfold with every input unreadable exit 2" {
	for cmd in "diff $T/n1 $T/n2" "overweight $T/n1 $T/n2" "render $T/n1" \
	    "render flame $T/n1 $T/n2" "render tree $T/n1" "render speedscope $T/n1" \
	    "render dpc $T/n1" "render pmu $T/n1" "stackfold $T/n1"; do
		run $cmd
		[ "$status" -eq 2 ] || fail "$cmd: exit $status"
		[[ "${lines[0]}" == *n1:*"No such file"* ]] || fail "$cmd: ${lines[0]}"
	done
}

# doc_attrs_check DOC EVT...: parses the kind/attribute table of
# docs/evt-format.md §3 and checks it against the evt streams given: every
# kind seen is in the table; for each row a stream has a kind of, every
# attribute the row names appears on a line of the row's kinds, and every
# attribute on those lines is named (besides utc=, which --utc adds to all).
# Prints "checked KIND..." per row checked.
doc_attrs_check() {
	python3 -c '
import re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
sec = doc[doc.index("## 3. Kinds and weights"):doc.index("## 4.")]
rows = []
for line in sec.splitlines():
    if not line.startswith("| `"):
        continue
    cols = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
    kinds = []
    for tok in re.findall(r"`([^`]*)`", cols[0]):
        tok = tok.replace("\\|", "|")
        pat = re.sub(r"<([^>]*)>", r"(\1)", tok)
        pat = re.sub(r"\[([^]]*)\]", r"(\1)?", pat)
        kinds.append(re.compile(pat + "$"))
    attrs = set()
    for tok in re.findall(r"`([^`]*)`", cols[2]):
        m = re.match(r"([A-Za-z0-9_.:-]+)(=|$)", tok)
        if m:
            attrs.add("p.NAME" if m.group(1).startswith("p.") else m.group(1))
    rows.append((cols[0], kinds, attrs))
assert len(rows) > 10, "kind table not found"

def row_of(kind):
    for i, (_, kinds, _) in enumerate(rows):
        if any(k.match(kind) for k in kinds):
            return i
    return None

seen = {}
bad = []
for path in sys.argv[2:]:
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            c = line.rstrip("\n").split("\t")
            if len(c) < 8:
                continue
            kind = c[1]
            if kind not in seen:
                seen[kind] = set()
            for a in c[7:-1]:
                k = a.split("=", 1)[0]
                seen[kind].add("p.NAME" if k.startswith("p.") else k)
by_row = {}
for kind, attrs in seen.items():
    i = row_of(kind)
    if i is None:
        bad.append("kind %s (in the output) is not in the table" % kind)
        continue
    by_row.setdefault(i, [set(), []])
    by_row[i][0] |= attrs
    by_row[i][1].append(kind)
for i, (attrs, kinds) in sorted(by_row.items()):
    name, _, documented = rows[i]
    for a in sorted(documented - attrs):
        bad.append("%s: documented %s= on no line of %s" % (name, a, ",".join(sorted(kinds))))
    for a in sorted(attrs - documented - {"utc"}):
        bad.append("%s: %s= in the output is not documented" % (name, a))
    print("checked", " ".join(sorted(kinds)))
if bad:
    sys.exit("\n".join(bad))' "$@"
}

@test "docs: every attribute docs/evt-format.md names per kind is what etl2evt writes, and no other" {
	require_corpus
	n=0
	for f in "$CORPUS"/*/*.etl "$CORPUS"/*/*.zip; do
		n=$((n + 1))
		etl2evt "$f" >"$T/c$n.evt" 2>/dev/null || true
	done
	[ "$n" -ge 10 ]
	# kinds the corpus lacks (DPC, ISR, CSwitch, ReadyThread...), synthesised
	for s in kinds cswitch threadtime-edges; do
		etlgen -o "$T/$s.etl" "$BATS_TEST_DIRNAME/scenarios/$s.yaml" 2>/dev/null
		etl2evt "$T/$s.etl" >"$T/s-$s.evt"
	done
	doc_attrs_check "$ROOT/docs/evt-format.md" "$T"/*.evt >"$T/checked" || { cat "$T/checked"; false; }
	# the rows the issue is about were checked, not skipped for want of lines
	for k in Sample DPC ISR CSwitch ReadyThread MethodLoad Event Kernel ImageID DbgID_RSDS; do
		grep -qw "$k" "$T/checked" || fail "no $k line to check"
	done
}

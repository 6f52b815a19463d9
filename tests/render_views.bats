#!/usr/bin/env bats
# render tree / callers / callees / byname / speedscope
load helpers

local_setup() {
	printf 'a;b;c 600\na;b;d 200\na;e 150\nf 50\na;b;a;b;x 100\n' > "$T/v.folded"
}

@test "tree: top-down, inclusive/exclusive/percent, children by weight, min percent, TSV" {
	render tree --tsv "$T/v.folded" > "$T/t"
	grep -qx $'0\t1100\t100.00\t0\t0.00\tROOT' "$T/t"
	grep -qx $'1\t1050\t95.45\t0\t0.00\ta' "$T/t"
	grep -qx $'2\t900\t81.82\t0\t0.00\tb' "$T/t"
	grep -qx $'3\t600\t54.55\t600\t54.55\tc' "$T/t"
	# children sorted by inclusive weight: b (900) before e (150)
	[ "$(awk -F'\t' '$1==2 {print $6}' "$T/t" | tr '\n' ' ')" = "b a e " ] ||
	    [ "$(awk -F'\t' '$1==2 {print $6}' "$T/t" | head -1)" = b ]
	# each node's inclusive = its exclusive + its children's inclusive
	python3 - "$T/t" <<-'EOF'
	import sys
	rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
	for i, r in enumerate(rows):
	    d, inc, exc = int(r[0]), float(r[1]), float(r[3])
	    kids = 0
	    for s in rows[i + 1:]:
	        if int(s[0]) <= d: break
	        if int(s[0]) == d + 1: kids += float(s[1])
	    assert abs(inc - exc - kids) < 1e-9, r
	EOF
	render tree --tsv --min-percent 10 "$T/v.folded" > "$T/p"
	! grep -q $'\tx$' "$T/p"
	! grep -q $'\tf$' "$T/p"
	grep -q $'\te$' "$T/p"
	render tree --tsv --max-depth 1 "$T/v.folded" | awk -F'\t' '!/^#/ && $1 > 1 {exit 1}'
	# aligned text for people
	render tree "$T/v.folded" > "$T/text"
	grep -q '^ *1,100 *100.00 *0 *0.00  ROOT$' "$T/text"
	grep -q '^ *600 *54.55 *600 *54.55     + c$' "$T/text"
}

@test "tree: a frame that only calls itself is shown once" {
	printf 'main;rec;rec;rec;leaf 10\nmain;other 5\n' > "$T/r"
	render tree --tsv "$T/r" > "$T/t"
	grep -qx $'2\t10\t66.67\t0\t0.00\trec' "$T/t"
	[ "$(grep -c $'\trec' "$T/t")" -eq 1 ]
	grep -qx $'3\t10\t66.67\t10\t66.67\tleaf' "$T/t"
}

@test "callers/callees: PerfView rules -- deepest occurrence, 1/N split for recursion" {
	# A->B->C->B->D, focus B: caller C, callee D (reference §2.6)
	printf 'A;B;C;B;D 10\n' > "$T/rec"
	render callers -f B --tsv "$T/rec" > "$T/c"
	# immediate callers: A and C get 1/2 each
	grep -qx $'caller\t5\t50.00\tA' "$T/c"
	grep -qx $'caller\t5\t50.00\tC' "$T/c"
	# callers tree from the deepest B: B <- C <- B <- A, callers have 0 exclusive
	sed -n '/^#tree/,$p' "$T/c" > "$T/tree"
	grep -qx $'0\t10\t100.00\t0\t0.00\tB' "$T/tree"
	grep -qx $'1\t10\t100.00\t0\t0.00\tC' "$T/tree"
	grep -qx $'2\t10\t100.00\t0\t0.00\tB' "$T/tree"
	grep -qx $'3\t10\t100.00\t0\t0.00\tA' "$T/tree"
	render callees -f B --tsv "$T/rec" > "$T/e"
	grep -qx $'callee\t5\t50.00\tC' "$T/e"
	grep -qx $'callee\t5\t50.00\tD' "$T/e"
	sed -n '/^#tree/,$p' "$T/e" > "$T/etree"
	grep -qx $'0\t10\t100.00\t0\t0.00\tB' "$T/etree"
	grep -qx $'1\t10\t100.00\t10\t100.00\tD' "$T/etree"
	[ "$(wc -l < "$T/etree")" -eq 3 ]
	# the larger example: b is called by a 900 in total
	render callers -f b --tsv "$T/v.folded" | grep -qx $'caller\t900\t81.82\ta'
	render callees -f b --tsv "$T/v.folded" > "$T/v"
	grep -qx $'callee\t600\t54.55\tc' "$T/v"
	grep -qx $'callee\t50\t4.55\tx' "$T/v"
	# a pattern focus, a missing focus, and no -f
	render callers -f 'b*' "$T/v.folded" | grep -q 'Focus b\*: inclusive 900'
	run render callers -f nosuch "$T/v.folded"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no sample contains the frame 'nosuch'"* ]]
	run render callers "$T/v.folded"
	[ "$status" -eq 2 ]
	[[ "$output" == *"needs -f FRAME"* ]]
}

@test "byname: exclusive and inclusive (once per stack under recursion), sorted by exclusive" {
	render byname --tsv "$T/v.folded" > "$T/b"
	[ "$(awk -F'\t' '!/^#/ {print $9; exit}' "$T/b")" = c ]
	awk -F'\t' '$9=="b" {print $1, $4}' "$T/b" | grep -qx '0 900'
	awk -F'\t' '$9=="a" {print $1, $4}' "$T/b" | grep -qx '0 1050'
	awk -F'\t' '$9=="x" {print $1, $4}' "$T/b" | grep -qx '100 100'
}

@test "views on evt: stackfold's options apply (roots, grouping), names unescaped" {
	{
		printf '#evt\t1\tsource=x.etl\tpointer_size=8\n'
		printf '0.5\tSample\t0\tapp.exe\t10\t20\t1\tntdll.dll!A;app.exe!main;app.exe!f%%3Bg\n'
		printf '1.5\tSample\t1\tapp.exe\t10\t21\t1\tntdll.dll!A;app.exe!main\n'
		printf '2.5\tSample\t1\tother.exe\t11\t30\t2\tntdll.dll!A;other.exe!run\n'
	} > "$T/in.evt"
	render tree --tsv --roots=process "$T/in.evt" > "$T/t"
	grep -q $'\tProcess64 app (10)$' "$T/t"
	grep -q $'\tProcess64 other (11)$' "$T/t"
	render byname --tsv --group='app.exe!->app' "$T/in.evt" > "$T/g"
	grep -q $'\tapp$' "$T/g"
	render speedscope --unit=ms "$T/in.evt" > "$T/s.json"
	python3 - "$T/s.json" <<-'EOF'
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
	names = [f["name"] for f in d["shared"]["frames"]]
	assert "app.exe!f;g" in names, names
	ps = d["profiles"]
	assert [p["name"] for p in ps] == ["app.exe (10) Thread (20)", "app.exe (10) Thread (21)",
	                                   "other.exe (11) Thread (30)"], [p["name"] for p in ps]
	for p in ps:
	    assert p["type"] == "sampled" and p["unit"] == "milliseconds"
	    for k in ("name", "unit", "startValue", "endValue", "samples", "weights"):
	        assert k in p, k
	    assert len(p["samples"]) == len(p["weights"])
	    for s in p["samples"]:
	        assert all(0 <= i < len(names) for i in s)
	assert ps[2]["weights"] == [2]
	assert [names[i] for i in ps[0]["samples"][0]] == ["ntdll.dll!A", "app.exe!main", "app.exe!f;g"]
	EOF
	render speedscope --by process "$T/in.evt" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert [p["name"] for p in d["profiles"]] == ["app.exe (10)", "other.exe (11)"]'
	render speedscope --by all --unit=ms "$T/in.evt" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["profiles"]) == 1 and sum(d["profiles"][0]["weights"]) == 4'
}

@test "speedscope: folded input, hostile names stay valid JSON" {
	printf 'a;"q"\\\\x 3\nroot;</script><script>x</script> 2\nctl%%01%%0A 1\nbad\xff 1\n' > "$T/evil"
	render speedscope "$T/evil" > "$T/s.json"
	! grep -q '</script>' "$T/s.json"
	python3 - "$T/s.json" <<-'EOF'
	import json, sys
	d = json.load(open(sys.argv[1]))
	names = [f["name"] for f in d["shared"]["frames"]]
	assert '"q"\\\\x' in names, names
	assert "</script><script>x</script>" in names, names
	assert "ctl\x01\n" in names, names
	assert "bad\ufffd" in names, names
	p = d["profiles"][0]
	assert p["unit"] == "none" and sum(p["weights"]) == 7
	EOF
}

@test "byname on evt: PerfView's When column over 32 buckets" {
	{
		printf '#evt\t1\tsource=x.etl\tduration_ms=32\n'
		for i in $(seq 0 15); do printf '%d.5\tSample\t0\tapp.exe\t10\t20\t1\tapp.exe!main;app.exe!early\n' "$i"; done
		for i in $(seq 16 31); do printf '%d.5\tSample\t0\tapp.exe\t10\t20\t1\tapp.exe!main;app.exe!late\n' "$i"; done
	} > "$T/w.evt"
	render byname --tsv "$T/w.evt" > "$T/b"
	head -1 "$T/b" | grep -q $'\twhen\tname$'
	early=$(awk -F'\t' '$NF=="app.exe!early" {print $(NF-1)}' "$T/b")
	late=$(awk -F'\t' '$NF=="app.exe!late" {print $(NF-1)}' "$T/b")
	main=$(awk -F'\t' '$NF=="app.exe!main" {print $(NF-1)}' "$T/b")
	[ ${#early} -eq 32 ]
	# early samples fill the first half only, late the second, main both
	[[ "$early" =~ ^[^_]{15}.*_{15}$ ]] || fail "early: $early"
	[[ "$late" =~ ^_{15}.*[^_]{15}$ ]] || fail "late: $late"
	[[ "$main" != *_* ]] || fail "main: $main"
}

#!/usr/bin/env bats
# render flame: SVG flame graphs from folded stacks and evt.
load helpers

boxes() { python3 "$BATS_TEST_DIRNAME/render_svg.py" "$1"; }
meta() { python3 "$BATS_TEST_DIRNAME/render_svg.py" --meta "$1"; }

# weight of the box named $2 at y=$3 (or the first one)
box_v() { awk -F'\t' -v n="$2" '$1==n {print $2; exit}' "$1"; }

@test "render: --help, --version, bad option" {
	run render --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: render"* ]]
	run render --version
	[ "$status" -eq 0 ]
	[[ "$output" == *"render (etlkit)"* ]]
	run render --no-such-option
	[ "$status" -eq 2 ]
	run render flame --colors nosuchpalette
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown palette"* ]]
}

@test "flame: merges folded lines like flamegraph.pl (sorted, duplicates summed)" {
	printf 'a;b;c 10\na;e 3\na;b;d 5\na;b;c 7\nz 1\n' > "$T/in.folded"
	render flame "$T/in.folded" > "$T/out.svg"
	boxes "$T/out.svg" > "$T/boxes"
	[ "$(box_v "$T/boxes" all)" = 26 ]
	[ "$(box_v "$T/boxes" a)" = 25 ]
	[ "$(box_v "$T/boxes" b)" = 22 ]
	[ "$(box_v "$T/boxes" c)" = 17 ]
	[ "$(box_v "$T/boxes" d)" = 5 ]
	[ "$(box_v "$T/boxes" e)" = 3 ]
	[ "$(wc -l < "$T/boxes")" -eq 7 ]
	# widths: all = 1180 px; a child starts where its parent starts; siblings sorted by name
	awk -F'\t' '$1=="all" && $5!=1180 {exit 1}' "$T/boxes"
	xa=$(awk -F'\t' '$1=="a"{print $3}' "$T/boxes"); xb=$(awk -F'\t' '$1=="b"{print $3}' "$T/boxes")
	xc=$(awk -F'\t' '$1=="c"{print $3}' "$T/boxes"); xd=$(awk -F'\t' '$1=="d"{print $3}' "$T/boxes")
	[ "$xa" = "$xb" ] && [ "$xb" = "$xc" ]
	awk -v c="$xc" -v d="$xd" 'BEGIN{exit !(d > c)}'
	# root at the bottom (largest y), leaves above
	ya=$(awk -F'\t' '$1=="all"{print $4}' "$T/boxes"); yc=$(awk -F'\t' '$1=="c"{print $4}' "$T/boxes")
	awk -v a="$ya" -v c="$yc" 'BEGIN{exit !(a > c)}'
	meta "$T/out.svg" > "$T/meta"
	grep -qx $'title\tFlame Graph' "$T/meta"
	grep -qx $'scripts\t1' "$T/meta"
	grep -qx $'frames.total\t26' "$T/meta"
}

@test "flame: the same stacks in any order give the same SVG; stdin works" {
	printf 'a;b;c 10\na;e 3\na;b;d 5\nq;r 2\n' > "$T/1"
	printf 'q;r 2\na;b;d 5\na;e 3\na;b;c 10\n' > "$T/2"
	render "$T/1" > "$T/1.svg"
	render < "$T/2" > "$T/2.svg"
	cmp "$T/1.svg" "$T/2.svg"
}

@test "flame: untrusted frame names are escaped and render as text" {
	{
		printf 'root;<script>window.pwned=1</script> 5\n'
		printf 'root;a&b "quoted" '"'"'single'"'"' 3\n'
		printf 'root;semi%%3Bcolon%%25pct 2\n'
		printf 'root;ctl%%01%%1B%%7Fend 2\n'
		printf 'root;bad\xff\xfeutf8 \xc3\xa9t\xc3\xa9 2\n'
		printf 'root;]]> <!-- --> &lt 1\n'
	} > "$T/evil.folded"
	render "$T/evil.folded" -o "$T/evil.svg" --title '<b>T&amp;</b>' --subtitle 'x"y' --notes '<!-- n -->' --countname '<cn>'
	boxes "$T/evil.svg" > "$T/boxes"
	grep -q $'^<script>window.pwned=1</script>\t5\t' "$T/boxes"
	grep -q $'^a&b "quoted" \'single\'\t3\t' "$T/boxes"
	# evt escapes decoded first: %3B is a ';' inside the frame, %25 a '%'
	grep -q $'^semi;colon%pct\t2\t' "$T/boxes"
	# control characters shown as control pictures (U+2401, U+241B, U+2421)
	grep -q $'^ctl\u2401\u241b\u2421end\t2\t' "$T/boxes"
	# invalid UTF-8 bytes become U+FFFD, valid UTF-8 is kept
	grep -q $'^bad\ufffd\ufffdutf8 \u00e9t\u00e9\t2\t' "$T/boxes"
	grep -q $'^]]> <!-- --> &lt\t1\t' "$T/boxes"
	# no raw markup from names in the file
	! grep -q '<script>window' "$T/evil.svg"
	! grep -q '<b>' "$T/evil.svg"
	meta "$T/evil.svg" > "$T/meta"
	grep -qx $'title\t<b>T&amp;</b>' "$T/meta"
	grep -qx $'subtitle\tx"y' "$T/meta"
	grep -qx $'notes\t<!-- n -->' "$T/meta"
	grep -qx $'frames.cname\t<cn>' "$T/meta"
	grep -qx $'scripts\t1' "$T/meta"
	# --no-unescape keeps the escapes as text
	render --no-unescape "$T/evil.folded" > "$T/raw.svg"
	boxes "$T/raw.svg" | grep -q $'^semi%3Bcolon%25pct\t2\t'
}

@test "flame: --minwidth prunes narrow boxes (pixels and percent) without re-attributing" {
	{ echo "a;big 10000"; for i in $(seq 1 50); do echo "a;small$i 1"; done; } > "$T/in"
	render --minwidth 0.5 "$T/in" > "$T/px.svg"
	boxes "$T/px.svg" > "$T/px"
	# 1/10050 of 1180 px = 0.117 px < 0.5: the small boxes are gone, totals are not
	! grep -q '^small' "$T/px"
	[ "$(box_v "$T/px" a)" = 10050 ]
	render --minwidth 0.1 "$T/in" > "$T/px2.svg"
	[ "$(boxes "$T/px2.svg" | grep -c '^small')" -eq 50 ]
	render --minwidth '0.009%' "$T/in" > "$T/pct.svg"
	[ "$(boxes "$T/pct.svg" | grep -c '^small')" -eq 50 ]
	render --minwidth '0.02%' "$T/in" > "$T/pct2.svg"
	[ "$(boxes "$T/pct2.svg" | grep -c '^small')" -eq 0 ]
}

@test "flame: icicle, reverse and flame chart" {
	printf 'main;a;x 4\nmain;b;x 6\nmain;a 1\n' > "$T/in"
	render --inverted "$T/in" > "$T/ice.svg"
	boxes "$T/ice.svg" > "$T/ice"
	meta "$T/ice.svg" | grep -qx $'title\tIcicle Graph'
	ya=$(awk -F'\t' '$1=="all"{print $4}' "$T/ice"); yx=$(awk -F'\t' '$1=="x"{print $4; exit}' "$T/ice")
	awk -v a="$ya" -v x="$yx" 'BEGIN{exit !(a < x)}'
	# reversed: merged from the leaves, x (10) is a root child with main above it
	render --reverse "$T/in" > "$T/rev.svg"
	boxes "$T/rev.svg" > "$T/rev"
	[ "$(box_v "$T/rev" x)" = 10 ]
	[ "$(awk -F'\t' '$1=="main"' "$T/rev" | wc -l)" -eq 3 ]
	# flame chart: input order, only adjacent lines merge
	printf 'main;a 1\nmain;b 1\nmain;a 1\nmain;a 2\n' > "$T/chart"
	render --flamechart "$T/chart" > "$T/chart.svg"
	boxes "$T/chart.svg" > "$T/c"
	meta "$T/chart.svg" | grep -qx $'title\tFlame Chart'
	[ "$(awk -F'\t' '$1=="a"' "$T/c" | wc -l)" -eq 2 ]
	[ "$(awk -F'\t' '$1=="a"{print $2}' "$T/c" | tr '\n' ' ')" = "1 3 " ]
	[ "$(awk -F'\t' '$1=="main"' "$T/c" | wc -l)" -eq 1 ]
}

@test "flame: colours are stable per name across graphs; palettes; palette file" {
	printf 'ntdll.dll!A;app.exe!B 5\nntdll.dll!A;app.exe!C 5\n' > "$T/1"
	printf 'x;y;app.exe!B 1\n' > "$T/2"
	render "$T/1" > "$T/1.svg"
	render "$T/2" > "$T/2.svg"
	c1=$(boxes "$T/1.svg" | awk -F'\t' '$1=="app.exe!B"{print $6}')
	c2=$(boxes "$T/2.svg" | awk -F'\t' '$1=="app.exe!B"{print $6}')
	[ -n "$c1" ] && [ "$c1" = "$c2" ]
	# hot: red channel 205-255, blue 0-55
	r=$((16#${c1:1:2})); b=$((16#${c1:5:2}))
	[ "$r" -ge 205 ] && [ "$b" -le 55 ]
	# etw palette: kernel modules orange-ish (blue 0), managed green
	printf 'ntoskrnl.exe!KiIdleLoop;ndis.sys!x 1\nmscorlib.dll!System.String.Concat 1\n' > "$T/3"
	render --colors etw "$T/3" > "$T/3.svg"
	boxes "$T/3.svg" > "$T/3b"
	[ "$(awk -F'\t' '$1=="ndis.sys!x"{print substr($6,6,2)}' "$T/3b")" = 00 ]
	g=$(awk -F'\t' '$1=="mscorlib.dll!System.String.Concat"{print $6}' "$T/3b")
	[ $((16#${g:3:2})) -ge 200 ]
	# consistent palette: written, and colours read back from it
	cd "$T"
	render --cp "$T/1" > /dev/null
	grep -q '^app.exe!B->rgb(' palette.map
	sed -i 's/^app.exe!B->rgb(.*/app.exe!B->rgb(1,2,3)/' palette.map
	render --cp "$T/2" > "$T/4.svg"
	[ "$(boxes "$T/4.svg" | awk -F'\t' '$1=="app.exe!B"{print $6}')" = "#010203" ]
	grep -q '^y->rgb(' palette.map
	grep -q '^ntdll.dll!A->rgb(' palette.map
}

@test "flame: count name, factor, total, width, height, fonts" {
	printf 'a;b 100\n' > "$T/in"
	render --countname us --factor 1000 --width 800 --height 20 --total 400 \
	    --fonttype 'Courier New' --fontsize 10 --nametype 'Frame:' "$T/in" > "$T/o.svg"
	meta "$T/o.svg" > "$T/m"
	grep -qx $'frames.cname\tus' "$T/m"
	grep -qx $'frames.factor\t1000' "$T/m"
	grep -qx $'frames.total\t400' "$T/m"
	grep -qx $'frames.ntype\tFrame:' "$T/m"
	grep -qx $'width\t800' "$T/m"
	# with --total 400 the root is a quarter of (800 - 20) px
	boxes "$T/o.svg" | awk -F'\t' '$1=="all" && $5==195 {f=1} END{exit !f}'
	# 3 levels (all, a, b) x 20 px + pads 3*10 + 2*10+10
	grep -qx $'height\t120' "$T/m"
	grep -q 'font-family:Courier New' "$T/o.svg"
}

@test "flame: differential, leaf delta (FlameGraph) and inclusive delta, --negate" {
	# base test: widths from the second column, delta on the line's leaf only
	printf 'a;b;c 10 30\na;b;d 20 10\na;e 5 5\na;b 0 4\n' > "$T/d"
	render "$T/d" > "$T/leaf.svg"
	boxes "$T/leaf.svg" > "$T/leaf"
	[ "$(box_v "$T/leaf" all)" = 49 ]
	[ "$(box_v "$T/leaf" c)" = 30 ]
	# c grew most: pure red; d shrank by half as much: light blue; e unchanged: white
	[ "$(awk -F'\t' '$1=="c"{print $6, $7}' "$T/leaf")" = "#ff0000 20" ]
	[ "$(awk -F'\t' '$1=="d"{print $6, $7}' "$T/leaf")" = "#6969ff -10" ]
	[ "$(awk -F'\t' '$1=="e"{print $6, $7}' "$T/leaf")" = "#ffffff 0" ]
	# b's own line grew by 4 (leaf delta), a has no line of its own
	[ "$(awk -F'\t' '$1=="b"{print $7}' "$T/leaf")" = 4 ]
	[ "$(awk -F'\t' '$1=="a"{print $6, $7}' "$T/leaf")" = "#ffffff 0" ]
	meta "$T/leaf.svg" | grep -qx $'frames.diff\tleaf'
	# inclusive: b = 20 - 10 + 4 = +14, a = +14, all = +14; max is c's 20
	render --diff inclusive "$T/d" > "$T/inc.svg"
	boxes "$T/inc.svg" > "$T/inc"
	[ "$(awk -F'\t' '$1=="b"{print $7}' "$T/inc")" = 14 ]
	[ "$(awk -F'\t' '$1=="a"{print $7}' "$T/inc")" = 14 ]
	[ "$(awk -F'\t' '$1=="a"{print $6}' "$T/inc")" = "#ff3f3f" ]
	meta "$T/inc.svg" | grep -qx $'frames.diff\tinclusive'
	# negate swaps hues
	render --negate "$T/d" > "$T/neg.svg"
	[ "$(boxes "$T/neg.svg" | awk -F'\t' '$1=="c"{print $6}')" = "#0000ff" ]
	[ "$(boxes "$T/neg.svg" | awk -F'\t' '$1=="d"{print $6}')" = "#ff6969" ]
}

@test "flame: evt input counts Sample events (samples; --unit=ms sums weights); --kind picks another kind (us)" {
	{
		printf '#evt\t1\tsource=x.etl\tcpus=2\n'
		printf '#skipped\twhat=x\tcount=1\n'
		printf '0.5\tSample\t0\tapp.exe\t1\t2\t1\tip=0x1\tntdll.dll!A;app.exe!main;app.exe!f%%3Bg\n'
		printf '1.5\tSample\t1\tapp.exe\t1\t2\t0.5\tip=0x1\tntdll.dll!A;app.exe!main\n'
		printf '2.0\tDPC\t0\tIdle\t0\t0\t0.25\troutine=ndis.sys!x\tmodule=ndis.sys\tduration_us=250\tntoskrnl.exe!KiIdleLoop;ndis.sys!x\n'
		printf '3.0\tCSwitch\t0\tapp.exe\t1\t2\t0\told_tid=3\t\n'
	} > "$T/in.evt"
	render "$T/in.evt" > "$T/o.svg"
	boxes "$T/o.svg" > "$T/b"
	[ "$(box_v "$T/b" all)" = 2 ]
	[ "$(box_v "$T/b" 'app.exe!f;g')" = 1 ]
	! grep -q 'ndis' "$T/b"
	meta "$T/o.svg" | grep -qx $'frames.cname\tsamples'
	render --unit=ms "$T/in.evt" > "$T/o.svg"
	boxes "$T/o.svg" > "$T/b"
	[ "$(box_v "$T/b" all)" = 1.5 ]
	meta "$T/o.svg" | grep -qx $'frames.cname\tms'
	render --kind DPC "$T/in.evt" > "$T/dpc.svg"
	[ "$(boxes "$T/dpc.svg" | awk -F'\t' '$1=="ndis.sys!x"{print $2}')" = 250 ]
	meta "$T/dpc.svg" | grep -qx $'frames.cname\tus'
}

@test "flame: bad lines are counted and named, no input is an error SVG with status 2" {
	printf 'a;b 3\ngarbage line\na;c x\n\na;d 2\n' > "$T/in"
	run render "$T/in" -o "$T/o.svg"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$T/in:2: not a folded stack line"* ]]
	[[ "$output" == *"$T/in:3: not a folded stack line"* ]]
	[[ "$output" == *"2 unusable input lines skipped"* ]]
	[ "$(boxes "$T/o.svg" | awk -F'\t' '$1=="all"{print $2}')" = 5 ]
	run render /dev/null -o "$T/empty.svg"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no valid input"* ]]
	grep -q 'ERROR: No valid input' "$T/empty.svg"
	run render "$T/does-not-exist"
	[ "$status" -eq 2 ]
	[[ "$output" == *"does-not-exist"* ]]
	# an evt line that does not parse names the line
	printf '#evt\t1\n1.0\tSample\tx\ta\t1\t1\t1\ta;b\n2.0\tSample\t0\ta\t1\t1\t1\ta;b\n' > "$T/bad.evt"
	run render "$T/bad.evt" -o "$T/b.svg"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad.evt:2: cpu column"* ]]
	# write errors are fatal
	run render "$T/in" -o /dev/full
	[ "$status" -eq 2 ]
}

@test "flame: gzip input, deep and wide stacks" {
	python3 -c '
import random
r = random.Random(5)
for i in range(3000):
    d = r.randint(1, 300)
    print(";".join("f%d" % r.randint(0, 40) for _ in range(d)), r.randint(1, 9))
' > "$T/big"
	gzip -c "$T/big" > "$T/big.gz"
	render "$T/big" > "$T/a.svg"
	render "$T/big.gz" > "$T/b.svg"
	cmp "$T/a.svg" "$T/b.svg"
	total=$(awk '{s+=$NF} END{print s}' "$T/big")
	[ "$(boxes "$T/a.svg" | awk -F'\t' '$1=="all"{print $2}')" = "$total" ]
}

@test "flame: CRLF lines, comment lines, no final newline; file and stdin read the same" {
	printf '# comment\r\na;b 2\r\na;c 3\r\n\r\na;b 1' > "$T/crlf"
	render "$T/crlf" > "$T/1.svg"
	render < "$T/crlf" > "$T/2.svg"
	cmp "$T/1.svg" "$T/2.svg"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" "$T/1.svg" > "$T/b"
	[ "$(awk -F'\t' '$1=="b"{print $2}' "$T/b")" = 3 ]
	[ "$(awk -F'\t' '$1=="all"{print $2}' "$T/b")" = 6 ]
	# several files are merged
	printf 'a;b 10\n' > "$T/more"
	render "$T/crlf" "$T/more" | python3 "$BATS_TEST_DIRNAME/render_svg.py" /dev/stdin | awk -F'\t' '$1=="b" && $2==13 {f=1} END{exit !f}'
}

@test "flame: differential from bin/diff; inclusive colours never overflow (root sums children)" {
	printf 'a;b 10\na;c 10\n' > "$T/base"
	printf 'a;b 20\na;c 20\n' > "$T/test"
	diff -q "$T/base" "$T/test" > "$T/d"
	grep -qx 'a;b 10 20' "$T/d"
	render --diff inclusive "$T/d" > "$T/i.svg"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" "$T/i.svg" > "$T/b"
	# a and all grew by 20, the most: pure red; b and c by 10: half intensity
	[ "$(awk -F'\t' '$1=="all"{print $6, $7}' "$T/b")" = "#ff0000 20" ]
	[ "$(awk -F'\t' '$1=="a"{print $6, $7}' "$T/b")" = "#ff0000 20" ]
	[ "$(awk -F'\t' '$1=="b"{print $6, $7}' "$T/b")" = "#ff6969 10" ]
	render "$T/d" | python3 "$BATS_TEST_DIRNAME/render_svg.py" /dev/stdin | awk -F'\t' '$1=="b"{print $6}' | grep -qx '#ff0000'
}

@test "flame: raw repeated samples and their merged form give the same SVG (line cache on and off)" {
	python3 -c '
import random
r = random.Random(7)
stacks = [";".join("m%d!f%d%s" % (r.randint(0, 5), r.randint(0, 30), "%3Bx" if r.random() < 0.05 else "")
                   for _ in range(r.randint(1, 40))) for _ in range(300)]
for i in range(20000):
    print(r.choice(stacks), r.randint(1, 3))
' > "$T/raw"
	awk '{c=$NF; $NF=""; sub(/ $/, ""); s[$0]+=c} END{for (k in s) print k, s[k]}' "$T/raw" | sort > "$T/merged"
	python3 -c '
import random
r = random.Random(8)
for i in range(6000):
    print(";".join("u%d" % r.randint(0, 10**6) for _ in range(r.randint(1, 8))), 1)
' > "$T/unique"
	render "$T/raw" > "$T/1.svg"
	render "$T/merged" > "$T/2.svg"
	cmp "$T/1.svg" "$T/2.svg"
	render --reverse "$T/raw" > "$T/3.svg"
	render --reverse "$T/merged" > "$T/4.svg"
	cmp "$T/3.svg" "$T/4.svg"
	cat "$T/unique" "$T/raw" > "$T/mixed"
	cat "$T/unique" "$T/merged" > "$T/mixed2"
	render "$T/mixed" > "$T/5.svg"
	render "$T/mixed2" > "$T/6.svg"
	cmp "$T/5.svg" "$T/6.svg"
}

@test "flame: stackfold's options shape the stacks (roots, group, fold, unit) like stackfold | render" {
	{
		printf '#evt\t1\tsource=x.etl\tpointer_size=8\n'
		printf '0.5\tSample\t0\tapp.exe\t10\t20\t1\tntdll.dll!A;app.exe!main;app.exe!f\n'
		printf '1.5\tSample\t1\tapp.exe\t10\t21\t1\tntdll.dll!A;app.exe!main\n'
		printf '2.5\tSample\t1\tother.exe\t11\t30\t2\tntdll.dll!A;other.exe!run\n'
	} > "$T/in.evt"
	render --unit=us --roots=process --group='ntdll.dll!->OS' "$T/in.evt" > "$T/a.svg"
	stackfold --unit=us --roots=process --group='ntdll.dll!->OS' "$T/in.evt" | render --countname us > "$T/b.svg"
	cmp "$T/a.svg" "$T/b.svg"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" "$T/a.svg" > "$T/x"
	grep -q $'^Process64 app (10)\t2000\t' "$T/x"
	grep -q $'^OS\t' "$T/x"
	! grep -q 'ntdll' "$T/x"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" --meta "$T/a.svg" | grep -qx $'frames.cname\tus'
	render --unit=ms --roots=thread "$T/in.evt" | python3 "$BATS_TEST_DIRNAME/render_svg.py" /dev/stdin |
	    grep -q $'^Thread (30)\t2\t'
}

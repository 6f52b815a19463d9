#!/usr/bin/env bats
# render flame graphs in headless Chromium: the SVG loads without errors,
# search and zoom work, tooltips are right, and no frame name runs as code.
# All SVGs are made in setup_file and checked in one browser start
# (tests/browser/run.sh drives tests/browser/harness.html); each test
# reads its own "case: key=value" lines.
load helpers

setup_file() {
	command -v chromium >/dev/null || { echo "chromium not installed (make deps)" >&2; return 1; }
	D="$BATS_FILE_TMPDIR"
	{
		printf 'root;<script>window.pwned=1,document.documentElement.setAttribute("pwned","1")</script> 50\n'
		printf 'root;<img src=x onerror="window.pwned=1"> 40\n'
		printf 'root;a&b "q" %%27s%%27 30\n'
		printf 'root;]]><script>window.pwned=1</script> 30\n'
		printf 'root;ctl%%01%%1Bx 20\n'
		printf 'root;bad\xff\xfe 20\n'
		printf 'root;javascript:window.pwned=1 10\n'
	} > "$D/evil.folded"
	render --title '<script>window.pwned=1</script>' "$D/evil.folded" > "$D/evil.svg"
	printf 'a;b;c 600\na;b;d 200\na;e 150\nf 50\n' > "$D/in"
	render "$D/in" > "$D/g.svg"
	render --inverted "$D/in" > "$D/i.svg"
	printf 'a;b 1234567\na;c 100\n' > "$D/big"
	render --countname us --factor 1000 "$D/big" > "$D/f.svg"
	printf 'a;b 100 300\na;c 200 100\n' > "$D/d"
	render "$D/d" > "$D/d.svg"
	cat > "$D/cases.json" <<-EOF
	[{"name": "evil", "svg": "$D/evil.svg", "search": ["script"]},
	 {"name": "search", "svg": "$D/g.svg", "search": ["^(b|c)\$", "^(c|d|e)\$", "("], "info": ["c"]},
	 {"name": "zoom", "svg": "$D/g.svg", "zoom": "b"},
	 {"name": "icicle", "svg": "$D/i.svg", "zoom": "b"},
	 {"name": "factor", "svg": "$D/f.svg", "info": ["b"]},
	 {"name": "diff", "svg": "$D/d.svg", "info": ["b", "c"]}]
	EOF
	"$BATS_TEST_DIRNAME/browser/run.sh" "$D/cases.json" > "$D/result"
	"$BATS_TEST_DIRNAME/browser/run.sh" --direct "$D/g.svg" 's=%5Ee%24' > "$D/direct.dom"
	# zoom from the URL: x inside b, y of b's row
	by=$(python3 "$BATS_TEST_DIRNAME/render_svg.py" "$D/g.svg" | awk -F'\t' '$1=="b"{print $4}')
	"$BATS_TEST_DIRNAME/browser/run.sh" --direct "$D/g.svg" "x=100&y=$by&s=d" > "$D/direct-zoom.dom"
}

# the lines of one case, without the "case: " prefix
result() { sed -n "s/^$1: //p" "$BATS_FILE_TMPDIR/result" > "$T/r"; cat "$T/r"; }

@test "browser: hostile frame names load as text, no script runs, search finds them" {
	result evil
	grep -qx 'ready=1' "$T/r"
	grep -qx 'parsererror=0' "$T/r"
	grep -qx 'pwned=0' "$T/r"
	! grep -q 'error=' "$T/r"
	grep -qxF 'title="<script>window.pwned=1,document.documentElement.setAttribute(\"pwned\",\"1\")</script>"' "$T/r"
	grep -qxF 'title="<img src=x onerror=\"window.pwned=1\">"' "$T/r"
	grep -qxF "title=\"a&b \\\"q\\\" 's'\"" "$T/r"
	grep -qxF 'title="]]><script>window.pwned=1</script>"' "$T/r"
	grep -qxF "title=\"ctl$(printf '\u2401\u241b')x\"" "$T/r"
	grep -qxF "title=\"bad$(printf '\ufffd\ufffd')\"" "$T/r"
	# 50 + 30 + 10 of 200 contain "script"
	grep -qx 'search script text=Matched: 45.0%' "$T/r"
	grep -qx 'search script reset=clear' "$T/r"
}

@test "browser: search highlights and sums without double counting nested matches" {
	result search
	grep -qx 'ready=1' "$T/r"
	grep -qxF 'search ^(b|c)$ text=Matched: 80.0%' "$T/r"
	grep -qxF 'search ^(b|c)$ highlighted=["b","c"]' "$T/r"
	grep -qxF 'search ^(c|d|e)$ text=Matched: 95.0%' "$T/r"
	grep -qxF 'search ^(c|d|e)$ return=95' "$T/r"
	grep -qx 'info=c (600 samples, 60.00%)' "$T/r"
	# an invalid regex is reported, not thrown
	grep -qF 'search ( text=Bad regex' "$T/r"
	! grep -q '^error=' "$T/r"
}

@test "browser: click-zoom rescales the subtree, fades ancestors, hides the rest; unzoom restores" {
	result zoom
	grep -qx 'zoom_found=true' "$T/r"
	grep -qx 'zoomed b=x=10.0 w=1180.0 op=1 label="b"' "$T/r"
	# c is 600/800 of b: 885 px, d follows it
	grep -qx 'zoomed c=x=10.0 w=885.0 op=1 label="c"' "$T/r"
	grep -qx 'zoomed d=x=895.0 w=295.0 op=1 label="d"' "$T/r"
	grep -qx 'zoomed a=x=10.0 w=1180.0 op=0.5 label="a"' "$T/r"
	grep -qx 'zoomed all=x=10.0 w=1180.0 op=0.5 label="all"' "$T/r"
	grep -qx 'zoomed e=hidden' "$T/r"
	grep -qx 'zoomed f=hidden' "$T/r"
	grep -qx 'unzoom_visible=true' "$T/r"
	grep -qx 'unzoom_restored=true' "$T/r"
	# icicle: the same zoom works upside down
	result icicle
	grep -qx 'zoomed c=x=10.0 w=885.0 op=1 label="c"' "$T/r"
	grep -qx 'zoomed a=x=10.0 w=1180.0 op=0.5 label="a"' "$T/r"
	grep -qx 'zoomed e=hidden' "$T/r"
	grep -qx 'unzoom_restored=true' "$T/r"
}

@test "browser: tooltips with count name, factor, thousands separators and diff deltas" {
	result factor
	grep -qx 'info=b (1,234,567,000 us, 99.99%)' "$T/r"
	result diff
	grep -qx 'info=b (300 samples, 75.00%; +50.00%)' "$T/r"
	grep -qx 'info=c (100 samples, 25.00%; -25.00%)' "$T/r"
}

@test "browser: the SVG opened directly searches and zooms from the URL (?s=, ?x=&y=)" {
	grep -q 'fg-ready="1"' "$BATS_FILE_TMPDIR/direct.dom"
	grep -q 'fg-matched="15.0"' "$BATS_FILE_TMPDIR/direct.dom"
	grep -q 'Matched: 15.0%' "$BATS_FILE_TMPDIR/direct.dom"
	# ?x=&y= zooms into the box under that point, together with a search
	grep -q 'fg-zoom="b"' "$BATS_FILE_TMPDIR/direct-zoom.dom"
	grep -q 'fg-matched="20.0"' "$BATS_FILE_TMPDIR/direct-zoom.dom"
}

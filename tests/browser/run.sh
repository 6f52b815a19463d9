#!/bin/sh
# run.sh CASES.json        -- run the cases (see harness.html) in one headless
#                             Chromium and print "NAME: key=value" lines
# run.sh --direct SVG QUERY -- load the SVG itself (?QUERY, e.g. s=REGEX) and dump its DOM
set -eu
here=$(cd "$(dirname "$0")" && pwd)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "run.sh: chromium not installed (make deps)" >&2; exit 2; }
if [ "${1:-}" = "--direct" ]; then
	svg=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
	url="file://$svg?${3:-}"
else
	url="file://$here/harness.html?cases=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(open(sys.argv[1]).read(), safe=""))' "$1")"
fi
# timeout: a hung browser must fail the test, not hang CI
dump() {
	timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--disable-background-networking --disable-component-update --disable-sync \
		--no-first-run --allow-file-access-from-files --user-data-dir="$profile" \
		--virtual-time-budget=10000 --dump-dom "$url" 2>/dev/null
}
if [ "${1:-}" = "--direct" ]; then
	dump
else
	dump | python3 -c '
import html, re, sys
dom = sys.stdin.read()
m = re.search(r"<pre id=\"result\">(.*?)</pre>", dom, re.S)
print(html.unescape(m.group(1)) if m else "no result in the dumped DOM")
'
fi

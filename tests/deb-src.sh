#!/bin/sh
# tests/deb-src.sh: lets `apt-get source` work on a fresh Debian machine
# (make deps runs it as root; tests/portable.sh then fetches the zlib and
# libyaml sources to build them for musl).  It adds deb-src twins of the
# configured Debian entries -- those whose suite is this release's codename
# or one of its -updates/-security suites -- in a file of its own, so
# nothing existing is edited and third-party repositories are left alone.
# Both formats are read: deb822 (*.sources) and one-line (sources.list,
# *.list).  Idempotent: a second run finds its file and does nothing.
# Exit 0 done (or nothing to do), 2 no Debian entry found or not root.
set -eu
dir=${APT_SOURCES_DIR:-/etc/apt/sources.list.d}
main_list=${APT_SOURCES_LIST:-/etc/apt/sources.list}
out="$dir/etlkit-deb-src.sources"
. /etc/os-release
codename=${VERSION_CODENAME:-}

if [ -e "$out" ]; then
	echo "deb-src: $out already there"
	exit 0
fi
if [ -z "$codename" ]; then
	echo "deb-src: no VERSION_CODENAME in /etc/os-release" >&2
	exit 2
fi
if grep -qsE "^[[:space:]]*(Types:.*deb-src|deb-src[[:space:]])" "$main_list" "$dir"/*.list "$dir"/*.sources; then
	echo "deb-src: source entries already configured"
	exit 0
fi

# The deb822 stanzas (blank-line separated) with Types: deb and a suite of
# this release, with Types rewritten to deb-src; one-line "deb" entries of
# this release become deb822 stanzas too.
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for f in "$dir"/*.sources; do
	[ -f "$f" ] || continue
	awk -v rel="$codename" '
		function flush() {
			if (text != "" && isdeb && ours) { sub(/\n+$/, "", text); print text; print "" }
			text = ""; isdeb = 0; ours = 0
		}
		/^[[:space:]]*$/ { flush(); next }
		/^#/ { next }
		tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") isdeb = 1; text = text "Types: deb-src\n"; next }
		tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == rel || index($i, rel "-") == 1) ours = 1 }
		{ text = text $0 "\n" }
		END { flush() }' "$f" >>"$tmp"
done
for f in "$main_list" "$dir"/*.list; do
	[ -f "$f" ] || continue
	# deb [options] URI SUITE COMPONENT...
	awk -v rel="$codename" '
		$1 == "deb" {
			key = ""; i = 2
			if ($2 ~ /^\[/) {
				for (; i <= NF; i++) {
					o = $i; gsub(/[][]/, "", o)
					if (o ~ /^signed-by=/) key = substr(o, 11)
					if ($i ~ /\]$/) break
				}
				i++
			}
			uri = $i; suite = $(i + 1); comps = ""
			for (j = i + 2; j <= NF; j++) comps = comps (comps == "" ? "" : " ") $j
			if (suite != rel && index(suite, rel "-") != 1) next
			print "Types: deb-src"; print "URIs: " uri; print "Suites: " suite
			print "Components: " comps
			if (key != "") print "Signed-By: " key
			print ""
		}' "$f" >>"$tmp"
done
if [ ! -s "$tmp" ]; then
	echo "deb-src: no Debian $codename entry found in $dir or $main_list" >&2
	exit 2
fi
{
	echo "# Added by etlkit tests/deb-src.sh: sources for apt-get source (zlib, libyaml for musl)."
	cat "$tmp"
} >"$out.tmp"
mv "$out.tmp" "$out"
chmod 644 "$out"
echo "deb-src: wrote $out"

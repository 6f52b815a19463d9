#!/usr/bin/env bash
# build-symbols.sh SCENARIO.yaml OUTDIR: stand-in images with real PDBs for
# the routines a scenario names, so traces show ndis.sys!ndisInterruptDpc
# instead of ndis.sys!0x1a2b0.
#
# etlgen --emit-c writes one C file per module with a function per named
# routine; clang-cl and lld-link build MODULE (a DLL) and its PDB into
# OUTDIR; pdbdump reads each PDB back into OUTDIR/symbols.map, which
# `etlgen --symbols` uses (routines placed inside those functions, images
# carrying the PDB's GUID/age in DbgID_RSDS).  `etl2evt --symbols OUTDIR`
# then names the frames.  Needs clang (clang-cl mode) and lld-link (make
# deps installs both); exits 3 without them so callers can fall back.
# Environment: ETLKIT_BIN (etlgen, pdbdump).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: build-symbols.sh SCENARIO.yaml OUTDIR" >&2; exit 2; }
scen=$1 out=$2
: "${ETLKIT_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
cl=
for c in clang-cl clang-cl-14 clang-cl-15 clang-cl-16 clang; do
	if command -v "$c" >/dev/null 2>&1; then cl=$c; break; fi
done
if [ -z "$cl" ] || ! command -v lld-link >/dev/null 2>&1; then
	echo "build-symbols: clang-cl or lld-link not found; frames stay module!0xRVA" >&2
	exit 3
fi
mkdir -p "$out/src" "$out/obj"
"$ETLKIT_BIN/etlgen" --emit-c "$out/src" "$scen"
: >"$out/symbols.map.tmp"
while read -r module pdb; do
	# relative paths: in cl/link syntax an absolute /path reads as an option
	(cd "$out" && "$cl" --driver-mode=cl -nologo -c /Od /Z7 /GS- "/Foobj/$module.obj" -- "src/$module.c" >/dev/null &&
	    lld-link /nologo /dll /noentry /nodefaultlib /debug /opt:noref /opt:noicf \
	    "/pdb:$pdb" "/out:obj/$module" "obj/$module.obj" >/dev/null)
	"$ETLKIT_BIN/pdbdump" "$out/$pdb" | awk -v m="$module" -v pdb="$pdb" '
	    /^# pdb / { for (i = 1; i <= NF; i++) { if ($i ~ /^guid=/) g = substr($i, 6); if ($i ~ /^age=/) a = substr($i, 5) }
	                gsub(/[{}]/, "", g); print "image", m, pdb, g, a }
	    $1 == "S_GPROC32" { for (i = 1; i <= NF; i++) { if ($i ~ /^rva=/) r = substr($i, 5); if ($i ~ /^size=/) s = substr($i, 6) }
	                        printf "func %s %s %s 0x%x\n", m, $NF, r, s }' >>"$out/symbols.map.tmp"
done <"$out/src/modules.txt"
mv "$out/symbols.map.tmp" "$out/symbols.map"

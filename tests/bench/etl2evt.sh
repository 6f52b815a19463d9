#!/usr/bin/env bash
# etl2evt throughput on the corpus's largest trace (ctf-net45-win7, 26.5 MB
# of uncompressed ETL), on the compressed one (net.4.5.2.x64, 4.9 MB that
# decompress to 23 MB, with embedded schemas) and on a synthesised DPC-heavy
# one (103 MB): MB/s of uncompressed ETL and events/s, decoded and
# written as evt to /dev/null, best of 3 (each 5 decodes), CPU time (user+sys) and wall
# time, and peak RSS (which includes the mapped file).
set -eu
bin=${ETLKIT_BIN:?}
corpus=${ETLKIT_CORPUS:?}
tmp=${BENCH_TMP:-/tmp}
python3 - "$corpus" "$tmp" <<'PY'
import sys, zipfile
c, t = sys.argv[1], sys.argv[2]
for z, m, out in (("ctf-net45-win7.etl.zip", "PerfViewData.etl", "ctf-net45-win7.etl"),
                  ("net.4.5.2.x64.etl.zip", "net.4.5.2.x64.etl", "net.4.5.2.x64.etl")):
    open(t + "/" + out, "wb").write(zipfile.ZipFile(c + "/perfview/" + z).read(m))
PY
# and the synthesised backup-server incident (24 CPUs; DPC, ISR, CSwitch and
# samples, every one with a stack: three times as much evt as ETL)
here=$(cd "$(dirname "$0")" && pwd)
"$bin/etlgen" -o "$tmp/incident-x4.etl" --repeat 4 --no-compress "$here/../scenarios/backup-incident.yaml" 2>/dev/null
for name in ctf-net45-win7 net.4.5.2.x64 incident-x4; do
	f=$tmp/$name.etl
	bytes=$(stat -c %s "$f")
	# decompressed size (sum of the buffers' filled bytes): what "MB/s of ETL" counts
	ubytes=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read(); off = tot = 0
while off + 0x48 <= len(d):
    size, saved = struct.unpack_from("<II", d, off)
    if size == 0: break
    tot += saved if struct.unpack_from("<H", d, off + 0x34)[0] & 0x40 else size
    off += size
print(tot)' "$f")
	events=$("$bin/etl2evt" "$f" | grep -vc '^#')
	runs=""
	# each measurement is 5 decodes in a row (time(1) counts in 10 ms steps)
	loop='for i in 1 2 3 4 5; do "$0" -o /dev/null "$1" || exit; done'
	for i in 1 2 3; do
		if [ -x /usr/bin/time ]; then
			runs="$runs$( { /usr/bin/time -f '%U %S %e %M' bash -c "$loop" "$bin/etl2evt" "$f"; } 2>&1 | tail -1);"
		else
			s0=$(date +%s.%N); bash -c "$loop" "$bin/etl2evt" "$f"; s1=$(date +%s.%N)
			runs="$runs$(awk -v a="$s0" -v b="$s1" 'BEGIN{print b-a, 0, b-a, 0}');"
		fi
	done
	read -r best_cpu best_wall rss <<<"$(printf '%s' "$runs" | tr ';' '\n' | awk '
		NF { c = ($1 + $2) / 5; if (bc == "" || c < bc) bc = c; if (bw == "" || $3 / 5 < bw) bw = $3 / 5; if ($4 > r) r = $4 }
		END { print bc, bw, r + 0 }')"
	awk -v n="$name" -v b="$ubytes" -v e="$events" -v c="$best_cpu" -v w="$best_wall" -v r="$rss" 'BEGIN{
		if (c < 0.002) c = 0.002; if (w < 0.002) w = 0.002
		printf "etl2evt %-16s %6.1f MB uncompressed  %8d events  cpu %.3fs = %6.0f MB/s %9.0f events/s  wall %.3fs = %6.0f MB/s  peak RSS %d MB\n",
		    n, b/1e6, e, c, b/1e6/c, e/c, w, b/1e6/w, r/1024 }'
done
rm -f "$tmp/incident-x4.etl"

#!/usr/bin/env bats
# Disk and file I/O: etl2evt's DiskIo, PageFault HardFault and FileIo
# decoding (irp=, the issuing thread, I/O time as weight, FileIo operations
# in both layouts) and render diskio / hardfaults / fileio.
#
# On the synthesised scenario tests/scenarios/diskio.yaml every expected
# table below is worked out by hand from the scenario's own numbers (its
# header comment lists each I/O); on the corpus, counts, bytes and times per
# process come from a short awk over the evt stream that pairs the starts
# with their completions itself, and fields from PerfView's own dump of the
# trace (the .baseline.txt beside it).
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios/diskio.yaml"

# scen P: the scenario as a P-byte-pointer trace, decoded (made once per file)
scen() {
	local c="$BATS_FILE_TMPDIR/diskio$1"
	if [ ! -s "$c.evt" ]; then
		etlgen -o "$c.etl" --expect "$c.exp" --pointer-size "$1" "$SCEN" 2>/dev/null
		etl2evt "$c.etl" > "$c.evt"
	fi
	echo "$c"
}

# io_match EXPECT DECODED N: every disk, fault and FileIo line etlgen expects
# (N of them) is decoded with the same fixed columns ("*" = any) and the
# listed attributes, and no other line of those kinds is decoded.
io_match() {
	awk -F'\t' -v n="$3" '
	function io(k) { return k ~ /^(Disk|FileIo|PageFaultHard$)/ }
	function fail(m) { if (++nerr <= 10) print m > "/dev/stderr" }
	FNR == NR { if (!/^#/ && io($2)) { want[++nw] = $0 }; next }
	/^#/ || !io($2) { next }
	{
		if (++ng > nw) { fail("unexpected: " $0); next }
		ne = split(want[ng], e, "\t")
		for (i = 1; i <= 7; i++)
			if (e[i] != "*" && e[i] != $i) fail("column " i ": want " e[i] " got " $i "\n  " $0)
		for (i = 8; i < ne; i++) {
			hit = 0
			for (j = 8; j < NF; j++) if ($j == e[i]) hit = 1
			if (!hit) fail("no " e[i] " on " $0)
		}
	}
	END {
		if (ng < nw) fail("missing " nw - ng " of " nw " expected lines")
		if (nw != n) fail(nw " expected I/O lines, the scenario has " n)
		exit nerr > 0
	}' "$1" "$2"
}

@test "diskio: etl2evt decodes the scenario's disk, hard fault and FileIo events (both layouts) as written, both pointer sizes" {
	n=$(grep -cE '^  - \{kind: (Disk|FileIo|PageFaultHard)' "$SCEN")
	[ "$n" -ge 25 ]
	for p in 8 4; do
		c=$(scen $p)
		io_match "$c.exp" "$c.evt" "$n" || fail "pointer size $p"
	done
	c=$(scen 8)
	# the write logged on System's thread keeps it: its WriteInit says who issued it
	awk -F'\t' '$2 == "DiskWrite" && $1 == "31.000000"' "$c.evt" | grep -q $'\tSystem\t4\t8\t1\t'
	# the version-2 FileIoRead: its thread (1208) read from the second, pointer-wide field
	awk -F'\t' '$2 == "FileIoRead" && $1 == "102.000000" { print $6 }' "$c.evt" | grep -qx 1208
}

@test "diskio: render diskio by process, file and disk: the tables worked out by hand" {
	for p in 8 4; do
		c=$(scen $p)
		# app.exe: #1 #2 #5 read 65536+4096+131072 = 200704, #6 writes 4096; I/O time
		# 4+8+20+1.5 = 33.5; service 4+6+20+1.5 = 31.5; times 1.5 4 8 20: p50 is the
		# 2nd (4), p90 and p99 the 4th (20).  indexer.exe: #3 (System's thread, but
		# its WriteInit is indexer's) and #4: 1 and 2.5 ms, p50 the 1st, p90 the 2nd.
		render diskio --tsv "$c.evt" > "$T/proc"
		cat > "$T/want" <<-'EOF'
		count	reads	writes	flushes	read_bytes	write_bytes	time_ms	service_ms	p50_ms	p90_ms	p99_ms	max_ms	process
		4	3	1	0	200704	4096	33.5	31.5	4	20	20	20	app.exe (1200)
		2	1	1	0	8192	16384	3.5	3.5	1	2.5	2.5	2.5	indexer.exe (2300)
		EOF
		textdiff "$T/want" "$T/proc" || fail "by process, pointer size $p"
		# big.db (named by the rundown at the end): #1 #3 #5, 4+1+20; app.dll: #2 #6,
		# 8 (service 6) + 1.5; the key nobody names: #4.
		render diskio --by file --tsv "$c.evt" > "$T/file"
		cat > "$T/want" <<-'EOF'
		count	reads	writes	flushes	read_bytes	write_bytes	time_ms	service_ms	p50_ms	p90_ms	p99_ms	max_ms	file
		3	2	1	0	196608	16384	25	25	4	20	20	20	\Device\HarddiskVolume2\data\big.db
		2	1	1	0	4096	4096	9.5	7.5	1.5	8	8	8	\Device\HarddiskVolume2\Windows\System32\app.dll
		1	1	0	0	8192	0	2.5	2.5	2.5	2.5	2.5	2.5	? (file 0x8a003000, not named in the trace)
		EOF
		textdiff "$T/want" "$T/file" || fail "by file, pointer size $p"
		# disk 0: #1-#5, times 1 2.5 4 8 20 (p50 the 3rd, p90 the 5th); disk 1: #6
		render diskio --by disk --tsv "$c.evt" > "$T/disk"
		cat > "$T/want" <<-'EOF'
		count	reads	writes	flushes	read_bytes	write_bytes	time_ms	service_ms	p50_ms	p90_ms	p99_ms	max_ms	disk
		5	4	1	0	208896	16384	35.5	33.5	4	20	20	20	disk 0
		1	0	1	0	0	4096	1.5	1.5	1.5	1.5	1.5	1.5	disk 1
		EOF
		textdiff "$T/want" "$T/disk" || fail "by disk, pointer size $p"
	done
}

@test "diskio: render hardfaults by file and process: the tables worked out by hand" {
	c=$(scen 4)
	# app.dll: 3 and 5 ms, 4096+8192 bytes; big.db: 1 ms
	render hardfaults --tsv "$c.evt" > "$T/f"
	cat > "$T/want" <<-'EOF'
	count	bytes	time_ms	p50_ms	p90_ms	p99_ms	max_ms	file
	2	12288	8	3	5	5	5	\Device\HarddiskVolume2\Windows\System32\app.dll
	1	4096	1	1	1	1	1	\Device\HarddiskVolume2\data\big.db
	EOF
	textdiff "$T/want" "$T/f"
	render diskio --hard-faults --tsv "$c.evt" | cmp - "$T/f"
	render hardfaults --by process --tsv "$c.evt" > "$T/p"
	cat > "$T/want" <<-'EOF'
	count	bytes	time_ms	p50_ms	p90_ms	p99_ms	max_ms	process
	2	12288	8	3	5	5	5	app.exe (1200)
	1	4096	1	1	1	1	1	indexer.exe (2300)
	EOF
	textdiff "$T/want" "$T/p"
}

@test "diskio: render fileio by file, operation and process: times from each operation to its OperationEnd, by hand" {
	for p in 8 4; do
		c=$(scen $p)
		# log.txt (named by its Create's file object; the Write and Close find it by
		# that object, their key being unnamed): Create 0.5, Write 0.25 (512 bytes),
		# Close 0.1 ms.  big.db (by key): the Read of 1208 ends after 1 ms, 2304's
		# never does (count 2, timed 1).
		render fileio --tsv "$c.evt" > "$T/f"
		cat > "$T/want" <<-'EOF'
		count	reads	writes	read_bytes	write_bytes	timed	time_ms	p50_ms	p90_ms	p99_ms	max_ms	file
		2	2	0	12288	0	1	1	1	1	1	1	\Device\HarddiskVolume2\data\big.db
		3	0	1	0	512	3	0.85	0.25	0.5	0.5	0.5	\Device\HarddiskVolume2\data\log.txt
		EOF
		textdiff "$T/want" "$T/f" || fail "by file, pointer size $p"
		render fileio --by operation --tsv "$c.evt" > "$T/o"
		cat > "$T/want" <<-'EOF'
		count	reads	writes	read_bytes	write_bytes	timed	time_ms	p50_ms	p90_ms	p99_ms	max_ms	operation
		2	2	0	12288	0	1	1	1	1	1	1	Read
		1	0	0	0	0	1	0.5	0.5	0.5	0.5	0.5	Create
		1	0	1	0	512	1	0.25	0.25	0.25	0.25	0.25	Write
		1	0	0	0	0	1	0.1	0.1	0.1	0.1	0.1	Close
		EOF
		textdiff "$T/want" "$T/o" || fail "by operation, pointer size $p"
		# app.exe: Create, Write, Read (1208), Close: 0.1 0.25 0.5 1, p50 the 2nd;
		# indexer.exe: its Read never ends, so no time and empty percentiles
		render fileio --by process --tsv "$c.evt" > "$T/p"
		printf '%s\n' \
		    $'count\treads\twrites\tread_bytes\twrite_bytes\ttimed\ttime_ms\tp50_ms\tp90_ms\tp99_ms\tmax_ms\tprocess' \
		    $'4\t1\t1\t4096\t512\t4\t1.85\t0.25\t1\t1\t1\tapp.exe (1200)' \
		    $'1\t1\t0\t8192\t0\t0\t0\t\t\t\t\tindexer.exe (2300)' > "$T/want"
		textdiff "$T/want" "$T/p" || fail "by process, pointer size $p"
	done
	# the text form says what could not be timed: one end without its operation, one still open
	render fileio "$(scen 8).evt" > "$T/text"
	grep -q '^5 file operations; .*: 1 ends without their operation, 0 operations whose IRP was reused before an end, 1 still open at the end\.$' "$T/text"
}

@test "diskio: text tables, bad --by, unreadable and malformed input" {
	c=$(scen 8)
	render diskio "$c.evt" > "$T/text"
	grep -q '^Disk I/O by Process$' "$T/text"
	grep -Eq '^ +4 +3 +1 +0 +200,704 +4,096 +33\.5 +31\.5 +4 +20 +20 +20 app\.exe \(1200\)$' "$T/text"
	# 6 completions, all paired with their start (the reused IRP too)
	grep -q '^6 disk I/Os; 6 paired with their start by irp= ' "$T/text"
	# disk 0 served 4+6+1+2.5+20 = 33.5 ms of the trace's duration_ms (the header's)
	dur=$(head -1 "$c.evt" | tr '\t' '\n' | sed -n 's/^duration_ms=//p')
	pct=$(awk -v d="$dur" 'BEGIN { printf "%.1f", 3350 / d }')
	grep -q "^disk 0: busy 33.5 ms, $pct% of the trace's " "$T/text"
	grep -q "^disk 1: busy 1.5 ms, " "$T/text"
	run render diskio --by operation "$c.evt"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--by must be process, file or disk"* ]]
	run render fileio --by disk "$c.evt"
	[ "$status" -eq 2 ]
	run render diskio "$T/nonexistent.evt"
	[ "$status" -eq 2 ]
	# a malformed line is counted and the rest still reported: exit 1
	{ cat "$c.evt"; printf '12.5\tDiskRead\tx\n'; } > "$T/bad.evt"
	run render diskio --tsv "$T/bad.evt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"1 unusable line skipped"* ]]
	[[ "$output" == *$'\tapp.exe (1200)'* ]]
}

# per_process EVT: "process (pid)<TAB>count<TAB>read bytes<TAB>write bytes<TAB>time" per
# process from the evt stream itself: each completion goes to the process of
# the start with the same irp= (the latest one before it), else its own.
per_process() {
	awk -F'\t' '
	function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	/^#/ { next }
	$2 == "DiskReadInit" || $2 == "DiskWriteInit" || $2 == "DiskFlushInit" { start[attr("irp")] = $4 " (" $5 ")"; next }
	$2 == "DiskRead" || $2 == "DiskWrite" || $2 == "DiskFlush" {
		irp = attr("irp"); p = $4 " (" $5 ")"
		if (irp in start) { p = start[irp]; delete start[irp] }
		n[p]++; t[p] += attr("elapsed_ms")
		if ($2 == "DiskRead") r[p] += attr("bytes")
		if ($2 == "DiskWrite") w[p] += attr("bytes")
	}
	END { for (p in n) printf "%s\t%d\t%d\t%d\t%.6f\n", p, n[p], r[p], w[p], t[p] }' "$1" | sort
}

@test "diskio: corpus: counts, bytes and I/O time per process agree with an awk over the evt stream, and with the census" {
	require_corpus
	for tr in net.4.5.2.x64 ctf-net45-win7; do
		etl2evt "$CORPUS/perfview/$tr.etl.zip" > "$T/$tr.evt" 2>/dev/null
		per_process "$T/$tr.evt" > "$T/want"
		[ "$(wc -l < "$T/want")" -ge 5 ] || fail "$tr: too few processes with disk I/O"
		render diskio --tsv "$T/$tr.evt" |
		    awk -F'\t' 'NR > 1 { printf "%s\t%d\t%d\t%d\t%.6f\n", $13, $1, $5, $6, $7 }' | sort > "$T/got"
		textdiff "$T/want" "$T/got" || fail "$tr: per process"
	done
	# the census counts every completion kind; by disk they all add up (one disk)
	c="$CORPUS/census/perfview-net.4.5.2.x64.txt"
	reads=$(awk '/DiskIo g=0x01 t=0x0a/ { print $1 }' "$c")
	writes=$(awk '/DiskIo g=0x01 t=0x0b/ { print $1 }' "$c")
	flushes=$(awk '/DiskIo g=0x01 t=0x0e/ { print $1 }' "$c")
	[ "$reads" -eq 1208 ] && [ "$writes" -eq 21 ] && [ "$flushes" -eq 2 ]
	render diskio --by disk --tsv "$T/net.4.5.2.x64.evt" | awk -F'\t' 'NR > 1 { print $1, $2, $3, $4 }' > "$T/disk"
	[ "$(cat "$T/disk")" = "$((reads + writes + flushes)) $reads $writes $flushes" ]
	# every completion of net.4.5.2.x64 has its start in the trace
	render diskio "$T/net.4.5.2.x64.evt" | grep -q '^1231 disk I/Os; 1231 paired with their start'
}

@test "diskio: corpus: the disk lines carry what PerfView reads from the same records (irp, file key, I/O time, issuing thread)" {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" > "$T/n.evt" 2>/dev/null
	b="$CORPUS/perfview/net.4.5.2.x64.baseline.txt"
	# PerfView's DiskIO/Read, Write and FlushBuffers lines: time, Irp, FileKey, ElapsedTimeMSec, TID
	grep -E '^EVENT [0-9,.]+: Windows Kernel/DiskIO/(Read|Write|FlushBuffers) ' "$b" |
	    sed -E 's/^EVENT ([0-9,.]+): Windows Kernel\/DiskIO\/([A-Za-z]+) .*TID=([0-9-]+);.*/\1 \2 \3 &/' |
	    awk '{ t = $1; gsub(",", "", t); kind = $2 == "FlushBuffers" ? "DiskFlush" : "Disk" $2; tid = $3
	        irp = "-"; key = "-"; el = "-"
	        for (i = 4; i <= NF; i++) {
	            if ($i ~ /^Irp=/) { irp = substr($i, 5); sub(";", "", irp) }
	            if ($i ~ /^FileKey=/) { key = substr($i, 9); sub(";", "", key) }
	            if ($i ~ /^ElapsedTimeMSec=/) { el = substr($i, 17); sub(";", "", el) }
	        }
	        print t, kind, tid, irp, key, el }' > "$T/pv"
	[ "$(wc -l < "$T/pv")" -ge 10 ] || fail "too few PerfView disk lines"
	while read -r t kind tid irp key el; do
		line=$(awk -F'\t' -v t="$t" -v k="$kind" '$2 == k && ($1 - t < 0.0006 && t - $1 < 0.0006)' "$T/n.evt")
		[ -n "$line" ] || fail "no $kind at $t"
		[[ "$line" == *$'\tirp='"$irp"$'\t'* ]] || fail "$kind at $t: irp $irp not in: $line"
		if [ "$key" != - ]; then
			[[ "$line" == *$'\tfile_object='"$key"$'\t'* ]] || fail "$kind at $t: file key $key not in: $line"
		fi
		got=$(printf '%s\n' "$line" | tr '\t' '\n' | sed -n 's/^elapsed_ms=//p')
		awk -v a="$got" -v b="$el" 'BEGIN { exit !(a - b < 0.0006 && b - a < 0.0006) }' || fail "$kind at $t: elapsed $got, PerfView $el"
		# the weight is the I/O time
		w=$(printf '%s\n' "$line" | cut -f7)
		awk -v a="$got" -v w="$w" 'BEGIN { exit !(a == w) }' || fail "$kind at $t: weight $w, elapsed $got"
		# PerfView's thread where it read a real one (its FlushBuffers thread is not)
		[ "$kind" = DiskFlush ] || [ "$(printf '%s\n' "$line" | cut -f6)" = "$tid" ] || fail "$kind at $t: tid, PerfView $tid: $line"
	done < "$T/pv"
	# the flushes go to the thread their FlushInit names (PerfView misreads it)
	awk -F'\t' '$2 == "DiskFlush" { print $4, $5, $6 }' "$T/n.evt" | sort -u > "$T/fl"
	awk -F'\t' '$2 == "DiskFlushInit" { print $4, $5, $6 }' "$T/n.evt" | sort -u | cmp - "$T/fl"
}

@test "diskio: corpus: files are named from the FileIo names, even from the rundown at the end" {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" > "$T/n.evt" 2>/dev/null
	# which completions' file keys some FileIo name line names, counted by awk
	awk -F'\t' '
	function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	$2 ~ /^FileIo(Name|FileCreate|FileDelete|Rundown|Create)$/ { named[attr("file_object")] = 1 }
	$2 == "DiskRead" || $2 == "DiskWrite" { fo[attr("file_object")] += 1 }
	END { for (k in fo) if (k in named) n += fo[k]; else u += fo[k]; print n + 0, u + 0 }' "$T/n.evt" > "$T/want"
	render diskio --by file --tsv "$T/n.evt" |
	    awk -F'\t' 'NR > 1 && $13 !~ /^\? \(no file/ { if ($13 ~ /^\? \(file /) u += $1; else n += $1 } END { print n + 0, u + 0 }' > "$T/got"
	textdiff "$T/want" "$T/got"
	read -r named unnamed < "$T/got"
	[ "$named" -gt 1000 ] || fail "only $named I/Os named"
	# mscorlib.dll is named only by the rundown at the end of the trace, after its reads
	render diskio --by file --tsv "$T/n.evt" | grep -q $'\t\\\\Device\\\\HarddiskVolume2\\\\Windows\\\\Microsoft.NET\\\\assembly\\\\GAC_64\\\\mscorlib\\\\'
	key=$(awk -F'\t' '$2 == "FileIoRundown" && /mscorlib.dll\t/ { sub(/file_object=/, "", $8); print $8; exit }' "$T/n.evt")
	[ -n "$key" ]
	rundown=$(awk -F'\t' -v k="file_object=$key" '$2 == "FileIoRundown" && $8 == k { print $1; exit }' "$T/n.evt")
	read_at=$(awk -F'\t' -v k="file_object=$key" '$2 == "DiskRead" { for (i = 8; i < NF; i++) if ($i == k) { print $1; exit } }' "$T/n.evt")
	awk -v a="$read_at" -v b="$rundown" 'BEGIN { exit !(a < b) }' || fail "mscorlib read at $read_at, rundown at $rundown"
}

@test "diskio: render diskstacks puts each I/O's time on its start's process, stack and file (scenario by hand, corpus by awk)" {
	c=$(scen 8)
	# app.exe: app.dll #2 8 ms + #6 1.5 ms, big.db #1 4 + #5 20; indexer.exe: #3 1
	# (logged on System's thread, its start is indexer's), #4 2.5 (unnamed); in us
	render diskstacks "$c.evt" > "$T/s"
	cat > "$T/want" <<-'EOF'
	app.exe (1200);Disk I/O: \Device\HarddiskVolume2\Windows\System32\app.dll 9500
	app.exe (1200);Disk I/O: \Device\HarddiskVolume2\data\big.db 24000
	indexer.exe (2300);Disk I/O: ? (file 0x8a003000, not named in the trace) 2500
	indexer.exe (2300);Disk I/O: \Device\HarddiskVolume2\data\big.db 1000
	EOF
	textdiff "$T/want" "$T/s"
	render diskstacks --unit ms "$c.evt" | awk '{ s += $NF } END { exit !(s == 37) }'
	render diskstacks "$c.evt" | render flame --countname us > "$T/f.svg"
	grep -q 'big.db' "$T/f.svg"
	run render diskstacks --by file "$c.evt"
	[ "$status" -eq 2 ]

	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" > "$T/n.evt" 2>/dev/null
	# awk: "process (pid);stack" of each start, then the completion's time on it
	awk -F'\t' '
	function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	/^#/ { next }
	$2 ~ /^Disk(Read|Write|Flush)Init$/ { s = $4 " (" $5 ")"; if ($NF != "") s = s ";" $NF; start[attr("irp")] = s; next }
	$2 == "DiskRead" || $2 == "DiskWrite" || $2 == "DiskFlush" {
		irp = attr("irp"); s = start[irp]; delete start[irp]
		if (s == "") fail = 1
		t[s] += attr("elapsed_ms")
	}
	END { if (fail) print "a completion without its start"; for (s in t) printf "%s %.6f\n", s, t[s] }' "$T/n.evt" | sort > "$T/want"
	[ "$(wc -l < "$T/want")" -ge 20 ]
	render diskstacks --unit ms "$T/n.evt" |
	    awk '{ w = $NF; s = $0; sub(/;Disk I\/O: .*/, "", s); t[s] += w } END { for (s in t) printf "%s %.6f\n", s, t[s] }' |
	    sort > "$T/got"
	textdiff "$T/want" "$T/got"
}

# many N: an evt stream of N disk reads and their starts over 64 IRPs, 5
# processes, 10 files and 100 distinct latencies, and FileIo operations with
# their ends over the same IRPs
many() {
	awk -v n="$1" 'BEGIN {
		print "#evt\t1\tsource=many"
		for (i = 0; i < n; i++) {
			t = i * 0.01; irp = sprintf("0x%x", 0x83000000 + (i % 64) * 16)
			p = i % 5; fo = sprintf("0x%x", 0x8a000000 + (i % 10) * 4096); el = (i % 100) / 100 + 0.25
			printf "%.6f\tDiskReadInit\t0\tp%d.exe\t%d\t%d\t0\tirp=%s\t\n", t, p, 100 + p, 1000 + p, irp
			printf "%.6f\tDiskRead\t0\tp%d.exe\t%d\t%d\t%s\tdisk=0\tbytes=4096\toffset=%d\tfile_object=%s\tirp=%s\telapsed_ms=%.6f\t\n", t + 0.005, p, 100 + p, 1000 + p, el, i * 4096, fo, irp, el
			printf "%.6f\tFileIoRead\t1\tp%d.exe\t%d\t%d\t0\toffset=0\tirp=%s\tfile_object=%s\tfile_key=%s\tbytes=512\tio_flags=0x0\t\n", t, p, 100 + p, 1000 + p, irp, fo, fo
			printf "%.6f\tFileIoOperationEnd\t1\t?\t-1\t-1\t0\tirp=%s\textra=0x200\tstatus=0x0\t\n", t + 0.002, irp
		}
	}'
}

@test "diskio: memory grows with processes, files, IRPs and distinct latencies, not with the number of I/Os" {
	asan && skip "RSS under ASan says nothing about the tool"
	many 20000 > "$T/small.evt"
	many 400000 > "$T/big.evt"
	for v in diskio "diskio --by file" fileio diskstacks; do
		small=$(peak_rss_kb render $v "$T/small.evt")
		big=$(peak_rss_kb render $v "$T/big.evt")
		[ "$small" -gt 0 ] && [ "$big" -gt 0 ] || fail "$v failed"
		# 20 times the I/Os: a few hundred kB more at most (the line reader's buffers)
		[ "$big" -lt $((small + 2048)) ] || fail "$v: $small kB for 20000 I/Os, $big kB for 400000"
	done
	# and the answers scale: 400000 reads, 400000 timed file reads
	render diskio --by disk --tsv "$T/big.evt" | awk -F'\t' 'NR == 2 { exit !($1 == 400000) }'
	render fileio --by operation --tsv "$T/big.evt" | awk -F'\t' 'NR == 2 { exit !($1 == 400000 && $6 == 400000) }'
}

@test "diskio: corpus: stackfold --kind sums the I/O time of disk and hard fault lines (their weight)" {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" > "$T/n.evt" 2>/dev/null
	for k in PageFaultHard DiskRead,DiskWrite,DiskFlush; do
		# the elapsed_ms attributes, in us, from the lines themselves
		want=$(awk -F'\t' -v ks=",$k," '
			index(ks, "," $2 ",") { for (i = 8; i < NF; i++) if ($i ~ /^elapsed_ms=/) { s += substr($i, 12); n++ } }
			END { printf "%d %.0f\n", n, s * 1000 }' "$T/n.evt")
		got=$(stackfold --kind "$k" "$T/n.evt" | awk '{ s += $NF } END { printf "%.0f\n", s }')
		[ "${want%% *}" -gt 100 ] || fail "$k: only ${want%% *} lines"
		# whole microseconds per stack: within one per line of the exact sum
		awk -v a="${want#* }" -v b="$got" -v n="${want%% *}" 'BEGIN { d = a - b; exit !(d <= n && -d <= n) }' ||
			fail "$k: stackfold $got us, the lines' elapsed_ms ${want#* } us"
	done
	# hard faults carry their own stacks: most of their time is on real frames
	stackfold --kind PageFaultHard "$T/n.evt" | grep -q 'ntoskrnl.exe'
}

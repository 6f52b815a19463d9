#!/usr/bin/env bats
# lib/etl/pdb.c (PDB reader) and lib/etl/symbols.c (finding PDBs, demangling),
# checked against llvm-pdbutil on real PDBs and on programs built here
# with clang-cl + lld-link.
load helpers

CPPCON="$CORPUS/perfview/CppCon.pdb"
CTF="$CORPUS/perfview/ctf-net45-win7.etl.zip"
SYSNI='symbols\System.ni.pdb\e40da7a49f8c3f0108e7c835b342f3821\System.ni.pdb'

# llvm-pdbutil dump output -> "KIND SSSS:OOOO FLAGS-or-SIZE NAME" lines
llvm_norm() {
	awk '
	function tick(s) { match(s, /`.*`/); return substr(s, RSTART + 1, RLENGTH - 2) }
	/\| S_PUB32 / { n = tick($0); getline; f = $0; sub(/^ *flags = /, "", f); sub(/, addr = .*/, "", f)
		a = $0; sub(/.*addr = /, "", a); print "S_PUB32 " a " " f " " n; next }
	/\| S_[GL]PROC32(_ID|_DPC|_DPC_ID)? / { k = $0; sub(/^ *[0-9]+ \| /, "", k); sub(/ .*/, "", k); n = tick($0); getline
		a = $0; sub(/.*addr = /, "", a); sub(/,.*/, "", a); s = $0; sub(/.*code size = /, "", s); sub(/[^0-9].*/, "", s)
		print k " " a " " s " " n; next }
	/\| S_THUNK32 / { n = tick($0); getline; getline; a = $0; sub(/.*addr = /, "", a); sub(/[^0-9:].*/, "", a)
		s = $0; sub(/.*size = /, "", s); sub(/[^0-9].*/, "", s); print "S_THUNK32 " a " " s " " n; next }' | LC_ALL=C sort
}

# pdbdump output -> the same form (drops the rva= column)
ours_norm() {
	grep '^S_' | sed -E 's/^(S_[A-Z0-9_]+) ([0-9]+:[0-9]+) rva=0x[0-9a-f]+ (flags|size)=([a-z]+( \| [a-z]+)*|[0-9]+) /\1 \2 \4 /' |
		LC_ALL=C sort
}

# section VAs from llvm-pdbutil, then check every "SSSS:OOOO rva=0x..." of pdbdump
check_rvas() {	# PDB DUMPFILE
	llvm-pdbutil dump -section-headers "$1" >"$T/sections"
	python3 - "$T/sections" "$2" <<-'EOF'
	import re, sys
	va, n = {}, None
	for l in open(sys.argv[1]):
	    m = re.search(r'SECTION HEADER #(\d+)', l)
	    if m: n = int(m.group(1))
	    m = re.match(r'\s*([0-9A-F]+) virtual address$', l)
	    if m: va[n] = int(m.group(1), 16)
	assert va, "llvm-pdbutil printed no section headers"
	bad = checked = 0
	for l in open(sys.argv[2]):
	    if not l.startswith('S_'): continue
	    f = l.split(' ')
	    sec, off = map(int, f[1].split(':'))
	    # a section past the headers (e.g. ___AbsoluteZero's 0006) has no RVA
	    want, got = (va[sec] + off if sec in va else 0), int(f[2][4:], 16)
	    checked += 1
	    if want != got: bad += 1; print('rva mismatch:', l.strip(), hex(want))
	print(checked, 'rvas checked')
	sys.exit(1 if bad or not checked else 0)
	EOF
}

@test "CppCon.pdb: every public, procedure and thunk agrees with llvm-pdbutil" {
	require_corpus
	llvm-pdbutil dump -publics -symbols "$CPPCON" | llvm_norm >"$T/llvm"
	pdbdump "$CPPCON" >"$T/dump"
	ours_norm <"$T/dump" >"$T/ours"
	[ "$(grep -c '^S_PUB32' "$T/llvm")" -eq 198 ]
	[ "$(grep -c 'PROC32' "$T/llvm")" -eq 58 ]
	[ "$(grep -c 'S_THUNK32' "$T/llvm")" -eq 30 ]
	textdiff "$T/llvm" "$T/ours" || fail "pdbdump disagrees with llvm-pdbutil"
}

@test "CppCon.pdb: GUID, age and every RVA agree with llvm-pdbutil's summary and section headers" {
	require_corpus
	pdbdump "$CPPCON" >"$T/dump"
	head -1 "$T/dump" | grep -q 'guid={12DC0A4F-BD7D-4F2A-A9BE-263BACAEB467} age=5 dbi_age=5 key=12DC0A4FBD7D4F2AA9BE263BACAEB4675 machine=0x14c'
	llvm-pdbutil dump -summary "$CPPCON" | grep -q 'GUID: {12DC0A4F-BD7D-4F2A-A9BE-263BACAEB467}'
	llvm-pdbutil dump -summary "$CPPCON" | grep -q 'Age: 5'
	run check_rvas "$CPPCON" "$T/dump"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "286 rvas checked" ]]
}

@test "CppCon.pdb: all 310 DBI section contributions agree with llvm-pdbutil" {
	require_corpus
	llvm-pdbutil dump -section-contribs "$CPPCON" |
		sed -n 's/^ *SC\[[^]]*\] *| mod = \([0-9]*\), \([0-9:]*\), size = \([0-9]*\), data crc = \([0-9]*\), reloc crc = \([0-9]*\)$/SC mod=\1 \2 size=\3 data_crc=\4 reloc_crc=\5/p' >"$T/llvm"
	pdbdump -C "$CPPCON" | grep '^SC ' | sed 's/ chars=0x[0-9a-f]*//' >"$T/ours"
	[ "$(wc -l <"$T/llvm")" -eq 310 ]
	textdiff "$T/llvm" "$T/ours"
	# the characteristics too: llvm-pdbutil names CNT_CODE|LNK_COMDAT|ALIGN_16BYTES|MEM_EXECUTE|MEM_READ
	# (0x60501020) for main's COMDAT; the stored word also has 0x2000, which it does not name
	pdbdump -C "$CPPCON" | grep -q '^SC mod=1 0001:0000 size=14 chars=0x60503020 '
}

@test "CppCon.pdb: first and last byte of each procedure resolve to it, with the offset" {
	require_corpus
	# identical procedures folded to one address (ICF) may answer with any of their names
	pdbdump -S "$CPPCON" >"$T/procs"
	python3 - "$T/procs" >"$T/want" <<-'EOF'
	import sys
	names = {}
	for l in open(sys.argv[1]):
	    f = l.rstrip('\n').split(' ', 4)
	    if 'PROC32' not in f[0]: continue
	    r, s = int(f[2][4:], 16), int(f[3][5:])
	    names.setdefault((r, s), []).append(f[4])
	for (r, s), n in sorted(names.items()):
	    print('%x 0 %s' % (r, '|'.join(n))); print('%x %x %s' % (r + s - 1, s - 1, '|'.join(n)))
	EOF
	[ "$(wc -l <"$T/want")" -ge 90 ]
	cut -d' ' -f1 "$T/want" | pdbdump -r "$CPPCON" | paste -d'\t' - "$T/want" |
		python3 -c '
import sys
bad = 0
for l in sys.stdin:
    got, want = l.rstrip("\n").split("\t")[1], l.rstrip("\n").split("\t")[2].split(" ", 2)
    name, disp = got.rsplit("+0x", 1)
    if name not in want[2].split("|") or int(disp, 16) != int(want[1], 16):
        bad += 1; print("wrong:", l.strip())
sys.exit(1 if bad else 0)'
}

@test "NGEN System.ni.pdb (from the PerfView zip): all 22,541 publics agree with llvm-pdbutil" {
	require_corpus
	unzip_member "$CTF" "$SYSNI" "$T/System.ni.pdb"
	pdbdump "$T/System.ni.pdb" >"$T/dump"
	head -1 "$T/dump" | grep -q 'key=E40DA7A49F8C3F0108E7C835B342F3821 .* rvas=guessed'
	ours_norm <"$T/dump" >"$T/ours"
	# the symbol record stream holds every S_PUB32; the name hash keeps one per name
	llvm-pdbutil dump --gsi-records "$T/System.ni.pdb" | llvm_norm >"$T/records"
	llvm-pdbutil dump -publics "$T/System.ni.pdb" | llvm_norm >"$T/hashed"
	[ "$(wc -l <"$T/ours")" -eq 22541 ]
	textdiff "$T/records" "$T/ours"
	[ "$(comm -23 "$T/hashed" "$T/ours" | wc -l)" -eq 0 ]
}

@test "a truncated PDB gives a clear error naming the file and offset, never a crash" {
	require_corpus
	# cut anywhere: either everything needed survived (same dump as the
	# whole file) or a clear error; CppCon.pdb has 173 blocks of 4096
	pdbdump "$CPPCON" | tail -n +2 >"$T/whole"
	errors=0
	for n in 0 30 100 4096 65536 200000 400000 600000 650000 664000 670000 680000 700000 708000; do
		head -c $n "$CPPCON" >"$T/cut.pdb"
		run pdbdump "$T/cut.pdb"
		echo "$n: $status ${lines[0]}"
		if [ "$status" -eq 0 ]; then
			[ "$(echo "$output" | tail -n +2)" = "$(cat "$T/whole")" ] || fail "cut at $n: silently different"
		else
			[ "$status" -eq 1 ] || [ "$status" -eq 2 ]
			[[ "$output" == *"cut.pdb: offset "* ]]
			errors=$((errors + 1))
		fi
	done
	[ "$errors" -ge 10 ]
}

@test "damaged directory sizes, block map and record lengths: clear errors, never a crash" {
	require_corpus
	# directory: block map block at superblock offset 52, first directory
	# block number there; stream sizes follow the stream count
	python3 - "$CPPCON" "$T" <<-'EOF'
	import struct, sys
	d = bytearray(open(sys.argv[1], 'rb').read()); t = sys.argv[2]
	bs, mapblk = struct.unpack_from('<I', d, 32)[0], struct.unpack_from('<I', d, 52)[0]
	dirblk = struct.unpack_from('<I', d, mapblk * bs)[0]
	dirp = dirblk * bs
	def save(name, b): open(t + '/' + name, 'wb').write(b)
	b = bytearray(d); struct.pack_into('<I', b, dirp + 4 + 4 * 3, 0x7fffff00); save('dbisize.pdb', b)
	b = bytearray(d); struct.pack_into('<I', b, dirp, 0x40000000); save('nstreams.pdb', b)
	b = bytearray(d); struct.pack_into('<I', b, 52, 0xfffff); save('mapblock.pdb', b)
	b = bytearray(d); struct.pack_into('<I', b, 44, 0xffffff); save('dirbytes.pdb', b)
	b = bytearray(d); b[0:40] = b'Microsoft C/C++ program database 2.00\r\n\x1a'; save('old.pdb', b)
	b = bytearray(d); b[100:104] = b'\0\0\0\0'; b[0:8] = b'garbage!'; save('garbage.pdb', b)
	# every stream size doubled: blocks of one stream run into the next
	b = bytearray(d); n = struct.unpack_from('<I', d, dirp)[0]
	for i in range(1, n):
	    s = struct.unpack_from('<I', b, dirp + 4 + 4 * i)[0]
	    if s != 0xffffffff: struct.pack_into('<I', b, dirp + 4 + 4 * i, s * 2 + 1)
	save('doubled.pdb', b)
	EOF
	run pdbdump "$T/dbisize.pdb"; echo "$output"
	[ "$status" -eq 2 ]; [[ "$output" == *"dbisize.pdb: offset "*"stream 3"* ]]
	run pdbdump "$T/nstreams.pdb"; echo "$output"
	[ "$status" -eq 2 ]; [[ "$output" == *"nstreams.pdb: offset "*"streams"* ]]
	run pdbdump "$T/mapblock.pdb"; echo "$output"
	[ "$status" -eq 2 ]; [[ "$output" == *"mapblock.pdb: offset 52: "*"truncated"* ]]
	run pdbdump "$T/dirbytes.pdb"; echo "$output"
	[ "$status" -eq 2 ]; [[ "$output" == *"dirbytes.pdb: offset 44: directory size"* ]]
	run pdbdump "$T/old.pdb"; echo "$output"
	[ "$status" -eq 2 ]; [[ "$output" == *"old.pdb: offset 0: old PDB 2.00 format"* ]]
	run pdbdump "$T/garbage.pdb"; echo "$output"
	[ "$status" -eq 2 ]; [[ "$output" == *"garbage.pdb: offset 0: not a PDB file"* ]]
	run pdbdump "$T/doubled.pdb"; echo "$output"
	[ "$status" -eq 1 ] || [ "$status" -eq 2 ]; [[ "$output" == *"doubled.pdb: offset "* ]]
}

@test "random corruption anywhere in a PDB never crashes the reader" {
	require_corpus
	n=300; asan && n=120
	python3 - "$CPPCON" "$T" "$n" <<-'EOF'
	import random, sys
	d = open(sys.argv[1], 'rb').read(); r = random.Random(8)
	for i in range(int(sys.argv[3])):
	    b = bytearray(d)
	    for _ in range(r.choice((1, 4, 32))):
	        at = r.randrange(len(b)) if r.random() < .5 else r.randrange(min(len(b), 0x3000))
	        b[at] = r.randrange(256)
	    open('%s/f%03d.pdb' % (sys.argv[2], i), 'wb').write(b)
	EOF
	for f in "$T"/f*.pdb; do
		pdbdump "$f" >/dev/null 2>"$T/err" && continue
		s=$?
		[ "$s" -eq 1 ] || [ "$s" -eq 2 ] || fail "$f: exit $s: $(cat "$T/err")"
		grep -q "^pdbdump: .*f[0-9]*.pdb: " "$T/err" || fail "$f: unclear error: $(cat "$T/err")"
		echo x 0 | pdbdump -r "$f" >/dev/null 2>&1 || [ $? -eq 2 ] || fail "$f: -r crashed"
	done
}

# A freestanding program: no SDK headers, no CRT.
write_c_program() {
	cat >"$1" <<-'EOF'
	static volatile int sink;
	__declspec(noinline) static int leaf_add(int a, int b) { sink = a; return a + b; }
	__declspec(noinline) int compute_sum(int n) { int s = 0; for (int i = 0; i < n; i++) s = leaf_add(s, i); return s; }
	__declspec(noinline) int busy_loop(int n) { int s = 0; while (n--) s += compute_sum(n & 7); return s; }
	__declspec(noinline) int __stdcall std_call(int a, int b) { return a * b + sink; }
	__declspec(noinline) int __fastcall fast_call(int a, int b) { return a - b + sink; }
	int mainCRTStartup(void) { return busy_loop(100) + std_call(2, 3) + fast_call(4, 5); }
	EOF
}

# build_program SRC NAME TARGET [CLFLAG...]: SRC compiled by clang-cl for
# TARGET (with CLFLAGs) and linked by lld-link into $T/NAME.exe, with its
# PDB $T/NAME.pdb and linker map $T/NAME.map.
build_program() {
	local src=$1 name=$2 target=$3
	shift 3
	/usr/lib/llvm-14/bin/clang-cl /nologo /c /O1 /Z7 /GS- "$@" --target="$target" "$src" /Fo"$T/$name.obj" >/dev/null
	lld-link /nologo /debug /nodefaultlib /entry:mainCRTStartup /subsystem:console \
		/out:"$T/$name.exe" /pdb:"$T/$name.pdb" /map:"$T/$name.map" "$T/$name.obj"
}

# Builds $T/NAME.exe/.pdb/.map for TARGET, then checks that the first,
# a middle and the last byte of every function in the .map resolve to it
# (the function runs to the next symbol in the map, or the section end).
check_built_program() {	# SRC NAME TARGET
	build_program "$1" "$2" "$3" /GR-
	[ -s "$T/$2.pdb" ]
	# map: "Preferred load address is 0000000140000000", ".text" length,
	# "0001:0000002a  name  000000014000102a  obj" for publics and statics
	python3 - "$T/$2.map" >"$T/$2.want" <<-'EOF'
	import re, sys
	base, funcs, end = 0, [], None
	for l in open(sys.argv[1]):
	    m = re.search(r'Preferred load address is ([0-9a-f]+)', l)
	    if m: base = int(m.group(1), 16)
	    m = re.match(r' 0001:00000000 ([0-9a-f]+)H \.text', l)
	    if m: end = int(m.group(1), 16)
	    m = re.match(r' 0001:([0-9a-f]{8})\s+(\S+)\s+([0-9a-f]{8,16})\s+\S+$', l)
	    if m: funcs.append((int(m.group(1), 16), int(m.group(3), 16) - base, m.group(2)))
	funcs.sort()
	for i, (off, rva, name) in enumerate(funcs):
	    n = (funcs[i + 1][0] if i + 1 < len(funcs) else end) - off
	    # 32-bit C decorations: _f, _f@8 (stdcall), @f@8 (fastcall)
	    name = re.sub(r'^[_@]([^@]+)(@\d+)?$', r'\1', name)
	    for at in (rva, rva + n // 2, rva + n - 1): print('%x %s' % (at, name))
	EOF
	[ "$(wc -l <"$T/$2.want")" -ge 12 ]
	cut -d' ' -f1 "$T/$2.want" | pdbdump -r "$T/$2.pdb" | sed -E 's/^0x//; s/\t/ /; s/\+0x[0-9a-f]+$//' >"$T/$2.got"
	textdiff "$T/$2.want" "$T/$2.got"
}

@test "clang-cl + lld-link x64 C program: every function's RVA resolves to its name (the .map is the oracle)" {
	write_c_program "$T/prog.c"
	check_built_program "$T/prog.c" prog64 x86_64-pc-windows-msvc
	grep -q ' leaf_add$' "$T/prog64.want"
}

@test "clang-cl + lld-link x86 C program: the same on 32-bit (stdcall/fastcall decorations)" {
	write_c_program "$T/prog.c"
	check_built_program "$T/prog.c" prog32 i686-pc-windows-msvc
	pdbdump -P "$T/prog32.pdb" | grep -q ' _std_call@8$'
	pdbdump -P "$T/prog32.pdb" | grep -q ' @fast_call@8$'
}

# --- demangling: a public's readable name must be its procedure's name ---

# pdbdump -d output: every decorated public that shares its address with
# a procedure must demangle to that procedure's name.  MSVC's UNDNAME
# (and so WPA) names constructors/destructors of class templates with
# the template arguments (Box<int,4>::~Box<int,4>), clang's PDBs without
# (Box<int,4>::~Box): both spellings are accepted for those.
check_demangled() {	# DUMP MIN-CHECKED
	python3 - "$1" "$2" <<-'EOF'
	import collections, re, sys
	pubs, procs = [], collections.defaultdict(set)
	for l in open(sys.argv[1]):
	    l = l.rstrip('\n')
	    if l.startswith('S_PUB32'):
	        head, dem = l.split('\t'); f = head.split(' ', 4); pubs.append((f[2], f[4], dem))
	    elif 'PROC32' in l:
	        f = l.split(' ', 4); procs[f[2]].add(f[4])
	ok = bad = 0
	for rva, raw, dem in pubs:
	    if not raw.startswith('?') or rva not in procs: continue
	    # template arguments off the last component (ctor/dtor spelling)
	    depth, cut = 0, 0
	    for i, ch in enumerate(dem):
	        depth += (ch == '<') - (ch == '>')
	        if depth == 0 and dem.startswith('::', i): cut = i + 2
	    last = dem[cut:]
	    short = dem[:cut] + (last[:last.index('<')] if '<' in last and last.endswith('>') else last)
	    # clang spells "const char *" and "long long" where UNDNAME says "char const *", "__int64"
	    clang = {re.sub(r'\bconst char \*', 'char const *', p).replace('long long', '__int64') for p in procs[rva]}
	    if dem in procs[rva] or short in procs[rva] or dem in clang or short in clang: ok += 1
	    else: bad += 1; print('wrong:', raw, '->', dem, 'procedure:', sorted(procs[rva]))
	print(ok, 'demangled names checked')
	sys.exit(1 if bad or ok < int(sys.argv[2]) else 0)
	EOF
}

write_cpp_program() {
	cat >"$1" <<-'EOF'
	extern "C" int _fltused = 0;
	static volatile int sink;
	namespace outer { namespace inner {
	template <typename T, int N> struct Box {
		T v[N];
		__declspec(noinline) Box() { for (int i = 0; i < N; i++) v[i] = T(); sink++; }
		__declspec(noinline) ~Box() { sink--; }
		__declspec(noinline) T get(int i) const { return v[i % N]; }
		__declspec(noinline) Box &operator+=(const Box &o) { for (int i = 0; i < N; i++) v[i] += o.v[i]; return *this; }
		__declspec(noinline) bool operator==(const Box &o) const { return v[0] == o.v[0]; }
		__declspec(noinline) T operator()(int i) { return v[i]; }
		__declspec(noinline) T &operator[](int i) { return v[i]; }
	};
	struct Widget { int x; __declspec(noinline) int twice() const; __declspec(noinline) static int make(const char *s, Widget *w);
		__declspec(noinline) operator bool() const; __declspec(noinline) operator const char *(); };
	__declspec(noinline) int Widget::twice() const { return 2 * x + sink; }
	__declspec(noinline) Widget::operator bool() const { return x + sink > 1; }
	__declspec(noinline) Widget::operator const char *() { return x ? "a" : "b"; }
	__declspec(noinline) int Widget::make(const char *s, Widget *w) { return s[0] + w->x; }
	template <typename F> __declspec(noinline) int apply(F f, int x) { return f(x) + sink; }
	template <typename A, typename B> __declspec(noinline) int pick(A a, B b) { return (int)a + (int)b + sink; }
	} }
	namespace { __declspec(noinline) int hidden(int a) { return a * 3 + sink; } }
	struct Pair { int a, b; };
	__declspec(noinline) int by_ref(Pair &p, const Pair *q, unsigned long long u, wchar_t w, bool b) { return p.a + q->b + (int)u + w + b; }
	__declspec(noinline) int twice_fn(int x) { return 2 * x; }
	extern "C" int mainCRTStartup(void) {
		outer::inner::Box<int, 4> a, b;
		outer::inner::Box<double, 2> d;
		outer::inner::Box<outer::inner::Widget *, 3> wp;
		outer::inner::Box<const char *, 1> cp;
		a += b;
		outer::inner::Widget w{3};
		Pair p{1, 2};
		int r = a.get(1) + (a == b) + a(2) + a[3] + (int)d.get(0) + (wp.get(0) != nullptr) + (cp.get(0) != nullptr);
		r += w.twice() + outer::inner::Widget::make("x", &w) + hidden(r) + by_ref(p, &p, 5, L'a', true);
		r += (bool)w + ((const char *)w)[0];
		r += outer::inner::apply(twice_fn, 4) + outer::inner::apply(&hidden, 2);
		r += outer::inner::pick<unsigned char, long long>(1, 2) + outer::inner::pick<short, bool>(3, true);
		return r;
	}
	EOF
}

@test "CppCon.pdb: decorated C++ publics demangle to their procedures' names" {
	require_corpus
	pdbdump -d "$CPPCON" >"$T/dump"
	run check_demangled "$T/dump" 4
	echo "$output"
	[ "$status" -eq 0 ]
	# x86 C decorations: _main -> main, @__security_check_cookie@4 -> __security_check_cookie
	grep -q "	main$" "$T/dump"
	grep -q "@__security_check_cookie@4	__security_check_cookie$" "$T/dump"
}

@test "clang-cl C++ program (x64 and x86): templates, operators, ctors, namespaces demangle to the procedure names" {
	write_cpp_program "$T/cpp.cpp"
	for tgt in x86_64-pc-windows-msvc i686-pc-windows-msvc; do
		build_program "$T/cpp.cpp" cpp "$tgt" /GR- /EHs-c-
		pdbdump -d "$T/cpp.pdb" >"$T/dump"
		run check_demangled "$T/dump" 20
		echo "$tgt: $output"
		[ "$status" -eq 0 ]
		grep -q "	outer::inner::apply<int (\*)(int)>$" "$T/dump"
		grep -q "	outer::inner::Box<int,4>::operator+=$" "$T/dump"
		grep -q "	outer::inner::Box<char const \*,1>::get$" "$T/dump"
		grep -q "	outer::inner::pick<unsigned char,__int64>$" "$T/dump"
		grep -q "	outer::inner::Widget::operator bool$" "$T/dump"
		grep -q "	outer::inner::Widget::operator char const \*$" "$T/dump"
	done
}

@test "the demangler survives every prefix and random damage of real decorated names" {
	require_corpus
	pdbdump -P "$CPPCON" | sed -E 's/^([^ ]+ ){4}//; s/^__imp_//' | grep '^?' >"$T/names"
	[ "$(wc -l <"$T/names")" -ge 15 ]
	# and forms CppCon.pdb lacks: function pointers, rvalue refs, enums, anonymous namespaces
	printf '%s\n' '??$apply@P6AHH@Z@inner@outer@@YAHP6AHH@ZH@Z' '?f@?A0x1234abcd@@YAH$$QEAH@Z' \
		'??$g@W4Color@@$0?5@ns@@YAXXZ' '??_G?$vector@V?$basic_string@_WU?$char_traits@_W@std@@@std@@@std@@UAEPAXI@Z' \
		'??__Ex@ns@@YAXXZ' \
		'??$?6D_KQ6QID_KQ6K' '??$?0U?$char_traits@D@std@@@?$basic_ostream@DU?$char_traits@D@std@@@0@AAV10@PBD@Z' >>"$T/names"
	# (the last two were found by fuzzing: reading past the end, a control byte in the name)
	python3 - "$T/names" >"$T/mutants" <<-'EOF'
	import random, sys
	r = random.Random(3)
	for n in open(sys.argv[1]).read().split():
	    for i in range(1, len(n)): print(n[:i])
	    for _ in range(20):
	        b = list(n); b[r.randrange(len(b))] = r.choice('?@$0123456789ABCDPQUVW_XZ'); print(''.join(b))
	print('?' + '?$a@' * 200); print('?a@' + '0' * 300); print('??$?6' + 'PEA' * 500)
	EOF
	pdbdump -D <"$T/mutants" >"$T/out"
	[ "$(wc -l <"$T/out")" -eq "$(wc -l <"$T/mutants")" ]
	pdbdump -D <"$T/names" >"$T/readable"
	[ "$(LC_ALL=C grep -c '[[:cntrl:]]' "$T/readable")" -eq 0 ]
	grep -qx 'outer::inner::apply<int (\*)(int)>' "$T/readable"
	grep -qx "\`anonymous namespace'::f" "$T/readable"
	grep -qx 'ns::g<Color,-6>' "$T/readable"
	grep -qx "\`dynamic initializer for 'ns::x''" "$T/readable"
	# nothing left after removing a C decoration: the raw name stays (found by fuzzing)
	[ "$(printf '%s\n' '_@8' '@@8' '_' '@' '_f@8' | pdbdump -D -x | tr '\n' ' ')" = "_@8 @@8 _ @ f " ]
	[ "$(pdbdump -D -x <"$T/mutants" | grep -cx '')" -eq 0 ]
	[ "$(pdbdump -D <"$T/mutants" | grep -cx '')" -eq 0 ]
	grep -qx "std::vector<std::basic_string<wchar_t,std::char_traits<wchar_t> > >::\`scalar deleting destructor'" "$T/readable"
}

# --- finding the right PDB (lib/etl/symbols.c, through symlookup) ---

CPPCON_ID='12DC0A4F-BD7D-4F2A-A9BE-263BACAEB467'
CPPCON_KEY=12DC0A4FBD7D4F2AA9BE263BACAEB4675

# lookups of the first byte of every CppCon procedure, and what they must print
cppcon_lookups() {	# PDBNAME AGE -> $T/in, $T/want
	pdbdump -S "$CPPCON" | grep PROC32 | python3 -c '
import sys
pdb, age = sys.argv[1], sys.argv[2]
seen = set()
with open(sys.argv[3], "w") as i, open(sys.argv[4], "w") as w:
    for l in sys.stdin:
        f = l.rstrip("\n").split(" ", 4)
        rva = int(f[2][4:], 16)
        if rva in seen: continue          # folded (ICF) procedures share an address
        seen.add(rva)
        i.write("CppCon.exe %s 12DC0A4F-BD7D-4F2A-A9BE-263BACAEB467 %s %x\n" % (pdb, age, rva))
        w.write("0x%x\n" % rva)' "$1" "$2" "$T/in" "$T/rvas"
	pdbdump -r "$CPPCON" <"$T/rvas" | sed -E 's/^0x[0-9a-f]+\t/CppCon.exe!/; s/\+0x0$//' >"$T/want"
	[ "$(wc -l <"$T/want")" -ge 40 ]
}

@test "symbol-server cache from _NT_SYMBOL_PATH (srv*CACHE*URL): found case-insensitively, URL not contacted" {
	require_corpus
	mkdir -p "$T/cache/cppcon.pdb/$(echo $CPPCON_KEY | tr A-F a-f)"
	cp "$CPPCON" "$T/cache/cppcon.pdb/$(echo $CPPCON_KEY | tr A-F a-f)/CPPCON.PDB"
	cppcon_lookups 'C:\build\Release\CppCon.pdb' 5
	_NT_SYMBOL_PATH="srv*$T/cache*https://msdl.microsoft.com/download/symbols" \
		run symlookup -e -a "$T/in"
	echo "$output" | tail -3
	[ "$status" -eq 0 ]
	echo "$output" | grep -v '^symlookup:' >"$T/got"
	textdiff "$T/want" "$T/got"
	[[ "$output" == *"symlookup: symbols: CppCon.exe: $T/cache/cppcon.pdb/"*"/CPPCON.PDB ("*" of "*" addresses named)"* ]]
	[[ "$output" == *"remote symbol server https://msdl.microsoft.com/download/symbols was not contacted"* ]]
}

@test "flat --symbols directories, two-tier (index2.txt) caches, the trace's own directory and its symbols/" {
	require_corpus
	cppcon_lookups CppCon.pdb 5
	mkdir -p "$T/flat" "$T/two/Cp/CppCon.pdb/$CPPCON_KEY" "$T/tracedir"
	cp "$CPPCON" "$T/flat/CppCon.pdb"
	touch "$T/two/index2.txt"
	cp "$CPPCON" "$T/two/Cp/CppCon.pdb/$CPPCON_KEY/CppCon.pdb"
	cp "$CPPCON" "$T/tracedir/cppcon.pdb"
	touch "$T/tracedir/t.etl"
	run symlookup -a -s "$T/nonexistent;$T/flat" "$T/in"
	[ "$status" -eq 0 ]; [[ "$output" == *"$T/flat/CppCon.pdb ("* ]]
	run symlookup -a -s "$T/flat/CppCon.pdb" "$T/in"	# a PDB file itself
	[ "$status" -eq 0 ]; [[ "$output" == *"$T/flat/CppCon.pdb ("* ]]
	run symlookup -a -s "$T/two" "$T/in"
	[ "$status" -eq 0 ]; [[ "$output" == *"$T/two/Cp/CppCon.pdb/$CPPCON_KEY/CppCon.pdb ("* ]]
	run symlookup -a -t "$T/tracedir/t.etl" "$T/in"
	[ "$status" -eq 0 ]; [[ "$output" == *"$T/tracedir/cppcon.pdb ("* ]]
	# an unpacked PerfView zip: TRACEDIR/symbols/NAME/KEY/NAME
	mkdir -p "$T/unzipped/symbols/CppCon.pdb/$CPPCON_KEY"
	cp "$CPPCON" "$T/unzipped/symbols/CppCon.pdb/$CPPCON_KEY/"
	run symlookup -a -t "$T/unzipped/PerfViewData.etl" "$T/in"
	[ "$status" -eq 0 ]; [[ "$output" == *"$T/unzipped/symbols/CppCon.pdb/$CPPCON_KEY/CppCon.pdb ("* ]]
	echo "$output" | grep -v '^symlookup:' >"$T/got"
	textdiff "$T/want" "$T/got"
}

@test "a symbol directory read after a miss still finds later PDBs, by exact name or in another case, and answers misses without a stat" {
	require_corpus
	cppcon_lookups CppCon.pdb 5
	mkdir -p "$T/exact" "$T/other" "$T/sub"
	cp "$CPPCON" "$T/exact/CppCon.pdb"
	cp "$CPPCON" "$T/other/CPPCON.pdb"
	# an image no directory has a PDB for comes first: its misses read each directory
	{ echo "Missing.dll Missing.pdb $CPPCON_ID 5 1000"; cat "$T/in"; } >"$T/in2"
	{ echo "Missing.dll!0x1000"; cat "$T/want"; } >"$T/want2"
	for d in exact other; do
		run symlookup -a -s "$T/$d" "$T/in2"
		[ "$status" -eq 1 ] || fail "$d: status $status (Missing.dll stays unresolved)"
		echo "$output" | grep -v '^symlookup:' >"$T/got"
		textdiff "$T/want2" "$T/got"
		[[ "$output" == *"CppCon.exe: $T/$d/"*".pdb ("* ]] || fail "$d: $output"
	done
	# the stats (with strace, where it may trace: the answers above are the test without it)
	if command -v strace >/dev/null &&
	    strace -f -o "$T/trace" -e trace=stat,newfstatat,statx symlookup -s "$T/exact" "$T/in2" \
	    >/dev/null 2>&1; [ -s "$T/trace" ] && grep -q "$T/exact/CppCon.pdb" "$T/trace"; then
		# asked once before the directory was read; after it, the listing answers
		[ "$(grep -c 'Missing.pdb' "$T/trace")" -le 2 ] || { grep Missing "$T/trace"; fail "stats for a name the listing lacks"; }
	fi
}

@test "a GUID braced, in lower case or without dashes names the same PDB; malformed GUIDs are refused (etl_guid_parse)" {
	require_corpus
	cppcon_lookups CppCon.pdb 5
	mkdir -p "$T/flat"
	cp "$CPPCON" "$T/flat/CppCon.pdb"
	for form in "{$CPPCON_ID}" "$(echo "$CPPCON_ID" | tr A-F a-f)" "$(echo "$CPPCON_ID" | tr -d -)"; do
		sed "s/$CPPCON_ID/$form/" "$T/in" >"$T/in2"
		run symlookup -a -s "$T/flat" "$T/in2"
		[ "$status" -eq 0 ] || fail "$form: status $status"
		echo "$output" | grep -v '^symlookup:' >"$T/got"
		textdiff "$T/want" "$T/got"
	done
	# one hex digit short or long, a non-hex digit, something after the closing brace
	for bad in 12DC0A4F-BD7D-4F2A-A9BE-263BACAEB46 12DC0A4F-BD7D-4F2A-A9BE-263BACAEB4670 \
	    12DC0A4F-BD7D-4F2A-A9BE-263BACAEB46G "{$CPPCON_ID}x"; do
		echo "CppCon.exe CppCon.pdb $bad 5 1010" >"$T/bad"
		run symlookup -s "$T/flat" "$T/bad"
		[[ "$output" == *"line 1: expected IMAGE PDB GUID AGE RVA"* ]] || fail "$bad accepted: $output"
	done
}

@test "a PDB whose GUID or age does not match is never used, and the report says why" {
	require_corpus
	cppcon_lookups CppCon.pdb 4	# the image wants age 4; the PDB has 5
	mkdir -p "$T/cache/CppCon.pdb/$CPPCON_KEY" "$T/flat"
	cp "$CPPCON" "$T/cache/CppCon.pdb/$CPPCON_KEY/CppCon.pdb"
	cp "$CPPCON" "$T/flat/CppCon.pdb"
	run symlookup -s "$T/cache;$T/flat" "$T/in"
	echo "$output" | tail -2
	[ "$status" -eq 1 ]
	# every frame stays module!0xRVA
	[ "$(echo "$output" | grep -c '^CppCon.exe!0x[0-9a-f]*$')" -eq "$(wc -l <"$T/in")" ]
	[[ "$output" == *"CppCon.exe: pdb-mismatch CppCon.pdb: "*"has only other builds (GUID+age $CPPCON_KEY), not ${CPPCON_KEY%5}4"* ]]
	[[ "$output" == *"$T/flat/CppCon.pdb has GUID/age $CPPCON_KEY, not ${CPPCON_KEY%5}4"* ]]
}

@test "damaged, missing and unidentified PDBs: each image's reason is reported, frames keep their RVA" {
	require_corpus
	mkdir -p "$T/cache/CppCon.pdb/$CPPCON_KEY"
	head -c 300000 "$CPPCON" >"$T/cache/CppCon.pdb/$CPPCON_KEY/CppCon.pdb"
	printf '%s\n' "CppCon.exe CppCon.pdb $CPPCON_ID 5 1010" \
		'ntdll.dll wntdll.pdb ec83d8df-5559-46e0-b630-133ebd979266 2 399d5' \
		'foo.dll - 00000000000000000000000000000000 0 10' >"$T/in"
	run symlookup -s "$T/cache" "$T/in"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "CppCon.exe!0x1010" ]
	[ "${lines[1]}" = "ntdll.dll!0x399d5" ]
	[ "${lines[2]}" = "foo.dll!0x10" ]
	[[ "$output" == *"CppCon.exe: pdb-damaged CppCon.pdb: $T/cache/CppCon.pdb/$CPPCON_KEY/CppCon.pdb: offset "*"truncated"* ]]
	[[ "$output" == *"ntdll.dll: pdb-not-found wntdll.pdb: wntdll.pdb/EC83D8DF555946E0B630133EBD9792662/wntdll.pdb not found in 1 symbol directory"* ]]
	[[ "$output" == *"foo.dll: no-pdb-id"*"no DbgID_RSDS"* ]]
}

@test "PerfView .etl.zip: the NGEN PDBs in its symbols\\ folder are found and used" {
	require_corpus
	for m in mscorlib System System.Xml; do
		member=$(python3 -c 'import sys, zipfile; print([n for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.startswith("symbols\\" + sys.argv[2] + ".ni.pdb\\")][0])' "$CTF" $m)
		unzip_member "$CTF" "$member" "$T/$m.pdb"
		key=$(echo "$member" | cut -d'\' -f3)
		# 200 function publics: their RVAs must come back with their names
		pdbdump -P "$T/$m.pdb" | awk -v m=$m -v k="$key" 'NR % 97 == 2 && $4 == "flags=function" {
			print m ".ni.dll " m ".ni.pdb " substr(k, 1, 32) " " substr(k, 33) " " substr($3, 7) }' | head -200 >"$T/$m.in"
		pdbdump -P "$T/$m.pdb" | awk 'NR % 97 == 2 && $4 == "flags=function"' | head -200 |
			sed -E "s/^([^ ]+ ){4}/$m.ni.dll!/" >"$T/$m.want"
		[ "$(wc -l <"$T/$m.in")" -ge 100 ]
		run symlookup -a -t "$CTF" "$T/$m.in"
		[ "$status" -eq 0 ]
		[[ "$output" == *"$m.ni.dll: $CTF:$member ("*"; NGEN PDB without section headers, section layout assumed"* ]]
		echo "$output" | grep -v '^symlookup:' >"$T/$m.got"
		# the same address may carry several names (a hot and a [COLD] part never do)
		python3 - "$T/$m.want" "$T/$m.got" "$T/$m.pdb" <<-'EOF'
		import sys
		want = open(sys.argv[1]).read().splitlines(); got = open(sys.argv[2]).read().splitlines()
		assert len(want) == len(got), (len(want), len(got))
		bad = [(w, g) for w, g in zip(want, got) if w != g]
		# a different name is only acceptable for another public at the very same address
		import subprocess
		dump = subprocess.run(['pdbdump', '-P', sys.argv[3]], capture_output=True, text=True).stdout.splitlines()
		at = {}
		for l in dump:
		    f = l.split(' ', 4)
		    if len(f) == 5: at.setdefault(f[4], f[2]); at[f[4]] = f[2]
		for w, g in bad:
		    assert at.get(w.split('!', 1)[1]) == at.get(g.split('!', 1)[1]), (w, g)
		EOF
	done
}

# --- end to end: etl2evt names frames through lib/symbols ---

# "module!name" frame counts of Sample stacks: MODULE -> "named total"
frame_share() {	# EVT MODULE
	awk -F'\t' -v m="$2!" '$2 == "Sample" { n = split($NF, f, ";")
		for (i = 1; i <= n; i++) if (index(f[i], m) == 1) { all++; if (f[i] !~ /!0x[0-9a-f]+$/) named++ } }
		END { print named + 0, all + 0 }' "$1"
}

@test "ctf-net45-win7.etl.zip: etl2evt names every sample frame in mscorlib/System/System.Xml .ni.dll through the zip's PDBs" {
	require_corpus
	run etl2evt -o "$T/ctf.evt" "$CTF"
	[ "$status" -le 1 ]
	for m in mscorlib System System.Xml; do
		set -- $(frame_share "$T/ctf.evt" $m.ni.dll)
		echo "$m.ni.dll: $1 of $2 sample frames named"
		[ "$2" -ge 5 ]
		[ "$1" -eq "$2" ]
		grep -P "^#symbols\timage=$m.ni.dll\t" "$T/ctf.evt" | grep -q "status=resolved"
		# the assumed NGEN section layout ends exactly at the image size the trace records
		member=$(python3 -c 'import sys, zipfile; print([n for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.startswith("symbols\\" + sys.argv[2] + ".ni.pdb\\")][0])' "$CTF" $m)
		unzip_member "$CTF" "$member" "$T/$m.pdb"
		end=$(pdbdump -H "$T/$m.pdb" | awk '/^SECTION/ { va = $4; sz = $5 } END { print va, sz }' |
			python3 -c 'import sys; va, sz = sys.stdin.read().split(); print(hex((int(va[3:], 16) + int(sz[5:], 16) + 0xfff) & ~0xfff))')
		echo "$m.ni.dll: assumed layout ends at $end"
		grep -P '\tImageDCStart\t' "$T/ctf.evt" | grep -i "\\\\$m.ni.dll	" | grep -q "size=$end	"
	done
	[ "$(frame_share "$T/ctf.evt" mscorlib.ni.dll | cut -d' ' -f2)" -ge 300 ]
	# named frames form real call chains (root first)
	grep -q 'mscorlib.ni.dll!System.IO.File.InternalExists(System.String);mscorlib.ni.dll!System.IO.File.FillAttributeInfo(' "$T/ctf.evt"
	grep -q 'mscorlib.ni.dll!System.Enum.GetName(System.Type, System.Object);mscorlib.ni.dll!System.RuntimeType.GetEnumName(System.Object)' "$T/ctf.evt"
	# images without a PDB keep module!0xRVA and say why
	grep -P '^#symbols\timage=ntdll.dll\t' "$T/ctf.evt" | grep -q 'status=pdb-not-found'
	run etl2evt --no-symbols -o "$T/raw.evt" "$CTF"
	[ "$(frame_share "$T/raw.evt" mscorlib.ni.dll)" = "0 $(frame_share "$T/ctf.evt" mscorlib.ni.dll | cut -d' ' -f2)" ]
}

@test "clang-cl program + synthesised trace: samples at known offsets in every function get its name in etl2evt's stacks" {
	write_c_program "$T/prog.c"
	build_program "$T/prog.c" prog x86_64-pc-windows-msvc
	key=$(pdbdump -H "$T/prog.pdb" | sed -n 's/.* key=\([0-9A-F]*\) .*/\1/p')
	guid=$(pdbdump -H "$T/prog.pdb" | sed -n 's/.* guid={\([0-9A-F-]*\)}.*/\1/p')
	mkdir -p "$T/syms/prog.pdb/$key" "$T/trace"
	cp "$T/prog.pdb" "$T/syms/prog.pdb/$key/"
	# samples: first, middle and last byte of every function in the .map
	python3 - "$T/prog.map" "$guid" "$T/trace" <<-'EOF'
	import re, sys
	base, funcs, end = 0, [], None
	for l in open(sys.argv[1]):
	    m = re.search(r'Preferred load address is ([0-9a-f]+)', l)
	    if m: base = int(m.group(1), 16)
	    m = re.match(r' 0001:00000000 ([0-9a-f]+)H \.text', l)
	    if m: end = int(m.group(1), 16)
	    m = re.match(r' 0001:([0-9a-f]{8})\s+(\S+)\s+([0-9a-f]{8,16})\s+\S+$', l)
	    if m: funcs.append((int(m.group(1), 16), int(m.group(3), 16) - base, m.group(2)))
	funcs.sort()
	samples, want = [], []
	for i, (off, rva, name) in enumerate(funcs):
	    n = (funcs[i + 1][0] if i + 1 < len(funcs) else end) - off
	    for at in (rva, rva + n // 2, rva + n - 1):
	        samples.append(at); want.append('prog.exe!' + name)
	# one more stack with every function at once, root first
	for age, tag in ((1, 'ok'), (7, 'stale')):
	    with open('%s/%s.yaml' % (sys.argv[3], tag), 'w') as y:
	        y.write('machine: {cpus: 2, duration_ms: 100}\nprocesses:\n  - name: prog.exe\n    pid: 1000\n    parent: 4\n')
	        y.write("    images:\n      - {path: '\\Device\\HarddiskVolume2\\app\\prog.exe', base: 0x140000000, size: 0x10000,\n")
	        y.write("         pdb: 'C:\\src\\prog.pdb', guid: %s, age: %d}\n" % (sys.argv[2].lower(), age))
	        y.write('    threads:\n      - {tid: 1004}\nevents:\n')
	        for k, at in enumerate(samples):
	            y.write('  - {kind: Sample, t_ms: %d, cpu: 1, tid: 1004, stack: [prog.exe+0x%x]}\n' % (k + 1, at))
	        y.write('  - {kind: Sample, t_ms: 99, cpu: 1, tid: 1004, stack: [%s]}\n' % ', '.join('prog.exe+0x%x' % (f[1] + 1) for f in reversed(funcs)))
	open(sys.argv[3] + '/want', 'w').write('\n'.join(want + [';'.join('prog.exe!' + f[2] for f in reversed(funcs))]) + '\n')
	EOF
	etlgen -o "$T/trace/ok.etl" "$T/trace/ok.yaml" 2>/dev/null
	etl2evt --symbols "$T/syms" "$T/trace/ok.etl" >"$T/ok.evt"
	awk -F'\t' '$2 == "Sample" { print $NF }' "$T/ok.evt" >"$T/got"
	[ "$(wc -l <"$T/got")" -ge 16 ]
	textdiff "$T/trace/want" "$T/got"
	grep -P '^#symbols\timage=prog.exe\t' "$T/ok.evt" | grep -q "status=resolved"
	# the same trace claiming another age: the PDB is never used
	etlgen -o "$T/trace/stale.etl" "$T/trace/stale.yaml" 2>/dev/null
	run etl2evt --symbols "$T/syms" -o "$T/stale.evt" "$T/trace/stale.etl"
	[ "$(awk -F'\t' '$2 == "Sample" && $NF ~ /^prog.exe!0x[0-9a-f]+$/' "$T/stale.evt" | wc -l)" -eq "$(($(wc -l <"$T/got") - 1))" ]
	grep -P '^#symbols\timage=prog.exe\t' "$T/stale.evt" | grep -q "status=pdb-mismatch"
}

@test "OMAP (binaries reordered after linking, as Windows system DLLs are): RVAs go through OMAP from source" {
	# A clang-cl program whose PDB is rewritten with an OMAP-from-source
	# stream that lays its functions out in reverse order, plus the
	# original section headers, as BBT-optimised Windows binaries have.
	write_c_program "$T/prog.c"
	build_program "$T/prog.c" prog x86_64-pc-windows-msvc
	python3 - "$T/prog.pdb" "$T/omap.pdb" "$T/prog.map" "$T/want" <<-'EOF'
	import re, struct, sys
	u16 = lambda b, o: struct.unpack_from('<H', b, o)[0]
	u32 = lambda b, o: struct.unpack_from('<I', b, o)[0]
	d = open(sys.argv[1], 'rb').read()
	bs, dirbytes, mapblk = u32(d, 32), u32(d, 44), u32(d, 52)
	nb = lambda n: (n + bs - 1) // bs
	dirdata = b''.join(d[u32(d, mapblk * bs + 4 * i) * bs:][:bs] for i in range(nb(dirbytes)))[:dirbytes]
	ns = u32(dirdata, 0); pos = 4 + 4 * ns; streams = []
	for i in range(ns):
	    s = u32(dirdata, 4 + 4 * i); n = 0 if s == 0xffffffff else nb(s)
	    bl = [u32(dirdata, pos + 4 * j) for j in range(n)]; pos += 4 * n
	    streams.append(b''.join(d[b * bs:][:bs] for b in bl)[:s] if n else b'')
	# functions from the map, then their new (reversed) places
	base, funcs, end = 0, [], None
	for l in open(sys.argv[3]):
	    m = re.search(r'Preferred load address is ([0-9a-f]+)', l)
	    if m: base = int(m.group(1), 16)
	    m = re.match(r' 0001:00000000 ([0-9a-f]+)H \.text', l)
	    if m: end = int(m.group(1), 16)
	    m = re.match(r' 0001:([0-9a-f]{8})\s+(\S+)\s+([0-9a-f]{8,16})\s+\S+$', l)
	    if m: funcs.append((int(m.group(3), 16) - base, m.group(2)))
	funcs.sort()
	text = funcs[0][0]
	sizes = [(funcs[i + 1][0] if i + 1 < len(funcs) else text + end) - funcs[i][0] for i in range(len(funcs))]
	omap, want, at = [], [], text
	for i in reversed(range(len(funcs))):
	    omap.append((funcs[i][0], at)); want.append((at, sizes[i], funcs[i][1])); at += sizes[i]
	omap.append((text + end, 0))
	omap.sort()
	dbi = bytearray(streams[3])
	mod, sc, smap, src, tsm, dbgsz, ec = (u32(dbi, o) for o in (24, 28, 32, 36, 40, 48, 52))
	dbg = 64 + mod + sc + smap + src + tsm + ec
	assert dbgsz >= 22, dbgsz
	streams.append(b''.join(struct.pack('<II', a, b) for a, b in omap))
	struct.pack_into('<H', dbi, dbg + 8, len(streams) - 1)		# [4] OMAP from source
	streams.append(streams[u16(dbi, dbg + 10)])			# [10] original section headers
	struct.pack_into('<H', dbi, dbg + 20, len(streams) - 1)
	streams[3] = bytes(dbi)
	# write a new MSF: superblock, two free block maps, streams, directory, block map
	blocks = [b'', b'\xff' * bs, b'\xff' * bs]
	def put(data):
	    first = len(blocks)
	    for o in range(0, len(data), bs): blocks.append(data[o:o + bs].ljust(bs, b'\0'))
	    return list(range(first, len(blocks)))
	lists = [put(s) for s in streams]
	directory = struct.pack('<I', len(streams)) + b''.join(struct.pack('<I', len(s)) for s in streams) + \
	    b''.join(struct.pack('<%dI' % len(l), *l) for l in lists)
	dirblocks = put(directory)
	mapb = put(struct.pack('<%dI' % len(dirblocks), *dirblocks))[0]
	blocks[0] = (d[:32] + struct.pack('<6I', bs, 1, len(blocks), len(directory), 0, mapb)).ljust(bs, b'\0')
	open(sys.argv[2], 'wb').write(b''.join(blocks))
	with open(sys.argv[4], 'w') as w:
	    for at, n, name in sorted(want):
	        for a in (at, at + n // 2, at + n - 1): w.write('%x %s\n' % (a, name))
	EOF
	# llvm-pdbutil still reads the rewritten file: it is a valid PDB
	llvm-pdbutil dump -summary "$T/omap.pdb" | grep -q 'Has Debug Info: true'
	cut -d' ' -f1 "$T/want" | pdbdump -r "$T/omap.pdb" | sed -E 's/^0x//; s/\t/ /; s/\+0x[0-9a-f]+$//' >"$T/got"
	textdiff "$T/want" "$T/got"
	# and without the OMAP the same addresses name other functions
	cut -d' ' -f1 "$T/want" | pdbdump -r "$T/prog.pdb" | sed -E 's/^0x//; s/\t/ /; s/\+0x[0-9a-f]+$//' >"$T/plain"
	if cmp -s "$T/want" "$T/plain"; then fail "OMAP made no difference"; fi
}

@test "a PDB with one damaged module stream is still used: publics name its functions, the damage is reported" {
	require_corpus
	mkdir -p "$T/cache/CppCon.pdb/$CPPCON_KEY"
	# the first record length of CppCon.obj's module stream becomes 0xffff
	python3 - "$CPPCON" "$T/cache/CppCon.pdb/$CPPCON_KEY/CppCon.pdb" <<-'EOF'
	import struct, sys
	u16 = lambda b, o: struct.unpack_from('<H', b, o)[0]
	u32 = lambda b, o: struct.unpack_from('<I', b, o)[0]
	d = bytearray(open(sys.argv[1], 'rb').read())
	bs, dirbytes, mapblk = u32(d, 32), u32(d, 44), u32(d, 52)
	dirp = u32(d, mapblk * bs) * bs		# one directory block here
	ns = u32(d, dirp); sizes = [u32(d, dirp + 4 + 4 * i) for i in range(ns)]
	first, pos = [], dirp + 4 + 4 * ns
	for s in sizes:
	    n = 0 if s == 0xffffffff else (s + bs - 1) // bs
	    first.append(u32(d, pos) if n else None); pos += 4 * n
	dbi = first[3] * bs
	# walk module infos properly
	off, mods = dbi + 64, []
	end = off + u32(d, dbi + 24)
	while off + 64 <= end:
	    mods.append(u16(d, off + 34))
	    z1 = d.index(b'\0', off + 64); z2 = d.index(b'\0', z1 + 1)
	    off = (z2 + 1 - dbi + 3) // 4 * 4 + dbi
	s = mods[1]
	struct.pack_into('<H', d, first[s] * bs + 4, 0xffff)
	open(sys.argv[2], 'wb').write(d)
	EOF
	printf '%s\n' "CppCon.exe CppCon.pdb $CPPCON_ID 5 1000" "CppCon.exe CppCon.pdb $CPPCON_ID 5 12ea" >"$T/in"
	run symlookup -a -s "$T/cache" "$T/in"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "CppCon.exe!main" ]
	[ "${lines[1]}" = "CppCon.exe!__security_check_cookie" ]
	[[ "$output" == *"(2 of 2 addresses named); 1 damaged records skipped, first: "*"CppCon.pdb: offset "*"module stream "*"overruns"* ]]
}

@test "a damaged or mismatched PDB inside a .etl.zip is reported with the member's name, never used" {
	require_corpus
	python3 - "$CPPCON" "$T/t.etl.zip" "$CPPCON_KEY" <<-'EOF'
	import sys, zipfile
	d = open(sys.argv[1], 'rb').read()
	with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z:
	    z.writestr('PerfViewData.etl', b'')
	    z.writestr('symbols\\CppCon.pdb\\%s\\CppCon.pdb' % sys.argv[3], d[:250000])
	    z.writestr('symbols\\Other.pdb\\%s7\\Other.pdb' % sys.argv[3][:-1], d)
	EOF
	printf '%s\n' "CppCon.exe CppCon.pdb $CPPCON_ID 5 1010" "Other.dll Other.pdb $CPPCON_ID 7 1010" >"$T/in"
	run symlookup -t "$T/t.etl.zip" "$T/in"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"CppCon.exe!0x1010"* ]]
	[[ "$output" == *"Other.dll!0x1010"* ]]
	[[ "$output" == *"CppCon.exe: pdb-damaged CppCon.pdb: $T/t.etl.zip:symbols\\CppCon.pdb\\$CPPCON_KEY\\CppCon.pdb: offset "* ]]
	[[ "$output" == *"Other.dll: pdb-mismatch Other.pdb: $T/t.etl.zip:symbols\\Other.pdb\\"*"has GUID/age $CPPCON_KEY, not ${CPPCON_KEY%5}7"* ]]
}

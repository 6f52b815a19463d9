/*
 * pdb.c - PDB (MSF 7.00) reader: streams, info, DBI, publics, module
 * procedure symbols, RVA lookup.  See pdb.h.
 *
 * Layout facts used here (all little-endian):
 *   superblock   "Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0", then u32
 *                BlockSize, FreeBlockMapBlock, NumBlocks,
 *                NumDirectoryBytes, Unknown, BlockMapAddr
 *   block map    at block BlockMapAddr: u32 block numbers of the directory
 *   directory    u32 NumStreams, u32 size[NumStreams] (0xffffffff = nil),
 *                then each stream's block numbers
 *   stream 1     PDB info: u32 version, signature, age, GUID
 *   stream 3     DBI: 64-byte header, then module infos, section
 *                contributions, section map, source info, type server
 *                map, EC info, optional debug header (u16 stream numbers;
 *                [3] OMAP to source, [4] OMAP from source, [5] section
 *                headers, [10] original section headers)
 *   publics      28-byte header (SymHash, AddrMap sizes ...), the GSI
 *                hash, then the address map: u32 offsets of S_PUB32
 *                records in the symbol record stream
 *   module       u32 signature, then CodeView records: u16 len, u16 kind
 */
#include "etl/pdb.h"
#include "base/cli.h"
#include "base/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MSF7_MAGIC "Microsoft C/C++ MSF 7.00\r\n\x1a" "DS\0\0\0"
#define MSF2_MAGIC "Microsoft C/C++ program database 2.00\r\n"
#define NIL_STREAM 0xffffffffu
#define NO_STREAM16 0xffffu

enum { DBG_OMAP_TO_SRC = 3, DBG_OMAP_FROM_SRC = 4, DBG_SECTION_HDR = 5,
	DBG_SECTION_HDR_ORIG = 10, DBG_COUNT = 11 };

struct stream {
	uint32_t size;
	uint32_t nblocks;
	const uint8_t *blocks;	/* u32 block numbers inside p->dir */
	const uint8_t *data;	/* contiguous bytes once made (stream_get) */
};

struct pdb {
	char *name;
	const uint8_t *data;
	size_t len;
	int mapped;
	struct mapfile map;		/* when mapped (a truncated file: one line, exit 2) */
	uint32_t bs;			/* block size */
	uint32_t fileblocks;		/* whole blocks present in the file */
	uint8_t *dir;
	uint32_t dirlen;
	uint32_t nstreams;
	struct stream *streams;
	uint8_t guid[16];
	uint32_t age, signature, version;

	int loaded;			/* 0 not yet, 1 done, -1 failed */
	char err[512];
	size_t damaged;
	char first_damage[512];
	uint32_t dbi_age;
	uint16_t machine;

	struct pdb_section *sec;	/* final section headers */
	size_t nsec;
	struct pdb_section *osec;	/* original headers (with OMAP) */
	size_t nosec;
	const uint8_t *omap;		/* OMAP from source: u32 pairs */
	size_t nomap;
	int guessed;

	struct pdb_symbol *syms;	/* procedures first, then publics */
	size_t nproc, npub;
	uint32_t *proc_rva, *proc_idx;	/* sorted by rva */
	size_t nproc_sorted;
	uint32_t *pub_rva, *pub_idx;
	size_t npub_sorted;
	uint32_t *proc_top, *pub_top;	/* every TOP_STEP-th rva: cache-hot */
	struct pdb_contrib *contrib;	/* section contributions */
	size_t ncontrib;

	void **bufs;			/* stream copies to free */
	size_t nbufs, capbufs;
};

static uint16_t rd16(const uint8_t *b) { return (uint16_t)(b[0] | b[1] << 8); }
static uint32_t rd32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	    (uint32_t)b[3] << 24;
}

static void fmt_err(char *err, size_t errlen, const char *name, uint64_t off,
    const char *fmt, va_list ap)
{
	int n = snprintf(err, errlen, "%s: offset %llu: ", name,
	    (unsigned long long)off);
	if (n < 0 || (size_t)n >= errlen)
		return;
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
}

__attribute__((format(printf, 3, 4)))
static int fail(struct pdb *p, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fmt_err(p->err, sizeof p->err, p->name, off, fmt, ap);
	va_end(ap);
	return -1;
}

/* Damage that costs one record or one module, not the whole PDB. */
__attribute__((format(printf, 3, 4)))
static void damage(struct pdb *p, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	if (p->damaged++ == 0) {
		va_start(ap, fmt);
		fmt_err(p->first_damage, sizeof p->first_damage, p->name, off,
		    fmt, ap);
		va_end(ap);
	}
}

/* Demotes the error in p->err to counted damage. */
static void damage_from_err(struct pdb *p)
{
	if (p->damaged++ == 0)
		snprintf(p->first_damage, sizeof p->first_damage, "%s", p->err);
	p->err[0] = 0;
}

/* File offset of byte OFF of stream S (for messages). */
static uint64_t file_off(const struct pdb *p, uint32_t s, uint32_t off)
{
	const struct stream *st;
	if (s >= p->nstreams)
		return 0;
	st = &p->streams[s];
	if (st->nblocks == 0)
		return 0;
	if (off / p->bs >= st->nblocks)
		off = st->size ? st->size - 1 : 0;
	return (uint64_t)rd32(st->blocks + 4 * (off / p->bs)) * p->bs +
	    off % p->bs;
}

static void keep_buf(struct pdb *p, void *b)
{
	if (p->nbufs == p->capbufs) {
		p->capbufs = p->capbufs ? 2 * p->capbufs : 16;
		p->bufs = xrealloc(p->bufs, p->capbufs * sizeof *p->bufs);
	}
	p->bufs[p->nbufs++] = b;
}

/*
 * Makes stream S contiguous: points into the mapping when its blocks
 * follow each other, else copies them.  Returns 0, or -1 with p->err.
 */
static int stream_get(struct pdb *p, uint32_t s, const uint8_t **out,
    uint32_t *len)
{
	const struct stream *st;
	uint32_t i, contiguous = 1;
	uint8_t *copy;

	*out = NULL;
	*len = 0;
	if (s >= p->nstreams)
		return fail(p, 0, "stream %u does not exist (%u streams)", s,
		    p->nstreams);
	st = &p->streams[s];
	if (st->data) {		/* made once: a module list may name a stream twice */
		*out = st->data;
		*len = st->size;
		return 0;
	}
	for (i = 0; i < st->nblocks; i++) {
		uint32_t b = rd32(st->blocks + 4 * i);
		if (b >= p->fileblocks)
			return fail(p, (uint64_t)b * p->bs,
			    "stream %u: block %u lies beyond the end of the "
			    "file (%u blocks; truncated?)", s, b, p->fileblocks);
		if (i > 0 && b != rd32(st->blocks + 4 * (i - 1)) + 1)
			contiguous = 0;
	}
	if (st->size == 0)
		return 0;
	if (contiguous) {
		*out = p->streams[s].data = p->data + (size_t)rd32(st->blocks) *
		    p->bs;
		*len = st->size;
		return 0;
	}
	copy = xmalloc(st->size);
	for (i = 0; i < st->nblocks; i++) {
		uint32_t n = st->size - i * p->bs;
		if (n > p->bs)
			n = p->bs;
		memcpy(copy + (size_t)i * p->bs,
		    p->data + (size_t)rd32(st->blocks + 4 * i) * p->bs, n);
	}
	keep_buf(p, copy);
	*out = p->streams[s].data = copy;
	*len = st->size;
	return 0;
}

static int read_directory(struct pdb *p)
{
	const uint8_t *h = p->data;
	uint32_t nblocks, dirbytes, mapblock, ndirblocks, i, pos;

	if (p->len >= sizeof MSF2_MAGIC - 1 &&
	    memcmp(h, MSF2_MAGIC, sizeof MSF2_MAGIC - 1) == 0)
		return fail(p, 0, "old PDB 2.00 format (Visual C++ 6 era) is "
		    "not supported; only MSF 7.00 PDBs can be read");
	if (p->len < 56 || memcmp(h, MSF7_MAGIC, 32) != 0)
		return fail(p, 0, "not a PDB file (no MSF 7.00 signature)");
	p->bs = rd32(h + 32);
	nblocks = rd32(h + 40);
	dirbytes = rd32(h + 44);
	mapblock = rd32(h + 52);
	if (p->bs < 512 || p->bs > 65536 || (p->bs & (p->bs - 1)))
		return fail(p, 32, "bad block size %u", p->bs);
	p->fileblocks = (uint32_t)(p->len / p->bs);
	if (nblocks > p->fileblocks)
		nblocks = p->fileblocks;	/* truncated: checked per use */
	if (mapblock >= p->fileblocks)
		return fail(p, 52, "directory block map at block %u lies beyond "
		    "the end of the file (%u blocks; truncated?)", mapblock,
		    p->fileblocks);
	if (dirbytes < 4)
		return fail(p, 44, "directory size %u is too small", dirbytes);
	ndirblocks = (uint32_t)(((uint64_t)dirbytes + p->bs - 1) / p->bs);
	if ((uint64_t)ndirblocks * 4 > p->bs)
		return fail(p, 44, "directory size %u needs %u blocks, more than "
		    "one block map holds", dirbytes, ndirblocks);
	p->dir = xmalloc(dirbytes);
	p->dirlen = dirbytes;
	for (i = 0; i < ndirblocks; i++) {
		uint64_t at = (uint64_t)mapblock * p->bs + 4 * i;
		uint32_t b = rd32(p->data + at), n = dirbytes - i * p->bs;
		if (b >= p->fileblocks)
			return fail(p, at, "directory block %u lies beyond the "
			    "end of the file (truncated?)", b);
		if (n > p->bs)
			n = p->bs;
		memcpy(p->dir + (size_t)i * p->bs,
		    p->data + (size_t)b * p->bs, n);
	}
	p->nstreams = rd32(p->dir);
	if (p->nstreams > (dirbytes - 4) / 4)
		return fail(p, (uint64_t)rd32(p->data + (uint64_t)mapblock *
		    p->bs) * p->bs, "directory claims %u streams, more than "
		    "its %u bytes hold", p->nstreams, dirbytes);
	p->streams = xcalloc(p->nstreams ? p->nstreams : 1, sizeof *p->streams);
	pos = 4 + 4 * p->nstreams;
	for (i = 0; i < p->nstreams; i++) {
		uint32_t size = rd32(p->dir + 4 + 4 * i);
		uint64_t nb;
		if (size == NIL_STREAM)
			size = 0;
		nb = ((uint64_t)size + p->bs - 1) / p->bs;
		if (nb > (dirbytes - pos) / 4)
			return fail(p, 0, "directory: stream %u of %u bytes needs "
			    "%llu blocks but the directory ends (damaged "
			    "directory sizes)", i, size, (unsigned long long)nb);
		if (nb > nblocks)
			return fail(p, 0, "directory: stream %u claims %u bytes, "
			    "more than the file's %u blocks", i, size, nblocks);
		p->streams[i].size = size;
		p->streams[i].nblocks = (uint32_t)nb;
		p->streams[i].blocks = p->dir + pos;
		pos += (uint32_t)nb * 4;
	}
	return 0;
}

static int read_info(struct pdb *p)
{
	const uint8_t *s;
	uint32_t len;
	if (p->nstreams < 4)
		return fail(p, 0, "only %u streams; a PDB has at least 4",
		    p->nstreams);
	if (stream_get(p, 1, &s, &len) < 0)
		return -1;
	if (len < 12)
		return fail(p, file_off(p, 1, 0), "PDB info stream is %u bytes, "
		    "too short", len);
	p->version = rd32(s);
	p->signature = rd32(s + 4);
	p->age = rd32(s + 8);
	if (len >= 28)
		memcpy(p->guid, s + 12, 16);
	return 0;
}

static struct pdb *finish_open(struct pdb *p, char *err, size_t errlen)
{
	if (read_directory(p) < 0 || read_info(p) < 0) {
		snprintf(err, errlen, "%s", p->err);
		pdb_close(p);
		return NULL;
	}
	return p;
}

/* A PDB in the mapping M (taken over, also on failure). */
static struct pdb *open_mapped(const char *name, struct mapfile *m, char *err, size_t errlen)
{
	struct pdb *p = xcalloc(1, sizeof *p);
	p->name = xstrdup(name);
	p->map = *m;
	p->data = (const uint8_t *)m->p;
	p->len = m->n;
	p->mapped = 1;
	return finish_open(p, err, errlen);
}

/* Why a file of ST cannot be a PDB, or NULL. */
static const char *not_a_pdb_file(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return "a directory, not a PDB file";
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_size == 0)
		return "offset 0: empty file";
	return NULL;
}

struct pdb *pdb_open_fd(const char *name, int fd, char *err, size_t errlen)
{
	struct mapfile m;
	struct stat st;
	const char *why;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return NULL;
	}
	if ((why = not_a_pdb_file(&st)) != NULL) {
		snprintf(err, errlen, "%s: %s", name, why);
		return NULL;
	}
	if (!mapfile_map_fd(&m, fd, 0, 0, name)) {
		snprintf(err, errlen, "%s: cannot map: %s", name, strerror(errno));
		return NULL;
	}
	return open_mapped(name, &m, err, errlen);
}

struct pdb *pdb_open(const char *path, char *err, size_t errlen)
{
	struct mapfile m;
	struct stat st;
	const char *why;

	/*
	 * Looked at before it is opened: opening a FIFO (a symbol directory
	 * is anybody's) would wait for a writer that never comes.
	 */
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if ((why = not_a_pdb_file(&st)) != NULL) {
		snprintf(err, errlen, "%s: %s", path, why);
		return NULL;
	}
	errno = 0;
	if (!mapfile_open(&m, path)) {
		snprintf(err, errlen, "%s: %s", path, errno ? strerror(errno) :
		    "cannot be mapped");
		return NULL;
	}
	return open_mapped(path, &m, err, errlen);
}

struct pdb *pdb_open_memory(const char *name, void *data, size_t len,
    char *err, size_t errlen)
{
	struct pdb *p = xcalloc(1, sizeof *p);
	p->name = xstrdup(name);
	p->data = data;
	p->len = len;
	return finish_open(p, err, errlen);
}

void pdb_close(struct pdb *p)
{
	size_t i;
	if (!p)
		return;
	if (p->mapped)
		mapfile_close(&p->map);
	else
		free((void *)p->data);
	for (i = 0; i < p->nbufs; i++)
		free(p->bufs[i]);
	free(p->bufs);
	free(p->dir);
	free(p->streams);
	free(p->sec);
	free(p->osec);
	free(p->syms);
	free(p->proc_rva);
	free(p->proc_idx);
	free(p->pub_rva);
	free(p->pub_idx);
	free(p->proc_top);
	free(p->pub_top);
	free(p->contrib);
	free(p->name);
	free(p);
}

const char *pdb_name(const struct pdb *p) { return p->name; }
const uint8_t *pdb_guid(const struct pdb *p) { return p->guid; }
uint32_t pdb_age(const struct pdb *p) { return p->age; }
const char *pdb_error(const struct pdb *p) { return p->err; }
size_t pdb_damaged(const struct pdb *p) { return p->damaged; }
const char *pdb_first_damage(const struct pdb *p) { return p->first_damage; }

void pdb_key(const uint8_t g[16], uint32_t age, char out[41])
{
	snprintf(out, 41, "%08X%04X%04X%02X%02X%02X%02X%02X%02X%02X%02X%X",
	    rd32(g), rd16(g + 4), rd16(g + 6), g[8], g[9], g[10], g[11],
	    g[12], g[13], g[14], g[15], age);
}

/* ---- DBI ---- */

static void read_section_headers(struct pdb *p, uint16_t s,
    struct pdb_section **out, size_t *n)
{
	const uint8_t *d;
	uint32_t len, i;
	*out = NULL;
	*n = 0;
	if (s == NO_STREAM16)
		return;
	if (stream_get(p, s, &d, &len) < 0) {
		damage_from_err(p);
		return;
	}
	if (len < 40)
		return;
	if (len % 40)
		damage(p, file_off(p, s, 0), "section header stream %u is %u "
		    "bytes, not a multiple of 40", s, len);
	*n = len / 40;
	*out = xcalloc(*n, sizeof **out);
	for (i = 0; i < *n; i++) {
		const uint8_t *h = d + 40 * i;
		memcpy((*out)[i].name, h, 8);
		(*out)[i].size = rd32(h + 8);
		(*out)[i].va = rd32(h + 12);
		(*out)[i].characteristics = rd32(h + 36);
	}
}

/*
 * NGEN PDBs carry no section headers, only the section map (sizes are
 * the image's SizeOfRawData).  Lay the sections out as the linker does:
 * from RVA 0x1000, each at the next 4 KB boundary.
 */
static void guess_sections(struct pdb *p, const uint8_t *map, uint32_t len)
{
	uint32_t count, i, va = 0x1000;
	if (len < 4)
		return;
	count = rd16(map);
	if (count > (len - 4) / 20)
		count = (len - 4) / 20;
	p->sec = xcalloc(count ? count : 1, sizeof *p->sec);
	for (i = 0; i < count; i++) {
		const uint8_t *e = map + 4 + 20 * i;
		uint16_t flags = rd16(e);
		uint32_t size = rd32(e + 16);
		if (flags & 0x200)	/* absolute: the sentinel entry */
			continue;
		snprintf(p->sec[p->nsec].name, sizeof p->sec[p->nsec].name,
		    "seg%u", (i + 1) & 0xffff);	/* count is a u16 */
		p->sec[p->nsec].va = va;
		p->sec[p->nsec].size = size;
		p->sec[p->nsec].characteristics =
		    (flags & 4) ? 0x60000020u : 0x40000040u;
		p->nsec++;
		va = (uint32_t)(((uint64_t)va + size + 0xfff) & ~(uint64_t)0xfff);
	}
	p->guessed = 1;
}

static uint32_t omap_map(const struct pdb *p, uint32_t rva)
{
	size_t lo = 0, hi = p->nomap;
	const uint8_t *e;
	uint32_t to;
	while (lo < hi) {		/* first entry with from > rva */
		size_t mid = (lo + hi) / 2;
		if (rd32(p->omap + 8 * mid) <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	e = p->omap + 8 * (lo - 1);
	to = rd32(e + 4);
	return to ? to + (rva - rd32(e)) : 0;
}

static uint32_t seg_rva(const struct pdb *p, uint16_t seg, uint32_t off)
{
	if (p->omap) {
		if (seg == 0 || seg > p->nosec)
			return 0;
		return omap_map(p, p->osec[seg - 1].va + off);
	}
	if (seg == 0 || seg > p->nsec)
		return 0;
	return p->sec[seg - 1].va + off;
}

struct symvec {
	struct pdb_symbol *v;
	size_t n, cap;
};

static struct pdb_symbol *push(struct symvec *sv)
{
	if (sv->n == sv->cap) {
		sv->cap = sv->cap ? 2 * sv->cap : 256;
		sv->v = xrealloc(sv->v, sv->cap * sizeof *sv->v);
	}
	memset(&sv->v[sv->n], 0, sizeof sv->v[0]);
	return &sv->v[sv->n++];
}

/* The NUL-terminated name at REC[at..end), or NULL if it is not. */
static const char *rec_name(const uint8_t *rec, size_t at, size_t end)
{
	if (at >= end || !memchr(rec + at, 0, end - at))
		return NULL;
	return (const char *)rec + at;
}

static int is_proc(uint16_t k)
{
	return k == PDB_S_GPROC32 || k == PDB_S_LPROC32 ||
	    k == PDB_S_GPROC32_ID || k == PDB_S_LPROC32_ID ||
	    k == PDB_S_LPROC32_DPC || k == PDB_S_LPROC32_DPC_ID;
}

static void read_module(struct pdb *p, uint16_t s, uint32_t symbytes,
    struct symvec *out)
{
	const uint8_t *d;
	uint32_t len, pos = 4, last_proc_off = 0;
	const char *last_proc_name = NULL;

	if (stream_get(p, s, &d, &len) < 0) {
		damage_from_err(p);
		return;
	}
	if (symbytes > len) {
		damage(p, file_off(p, s, 0), "module stream %u: %u bytes of "
		    "symbols claimed, stream has %u", s, symbytes, len);
		symbytes = len;
	}
	while (pos + 4 <= symbytes) {
		uint32_t reclen = rd16(d + pos), end = pos + 2 + reclen;
		uint16_t kind = rd16(d + pos + 2);
		const uint8_t *b = d + pos + 4;	/* record body */
		uint32_t blen = reclen - 2;
		struct pdb_symbol *sym;
		const char *name;

		if (reclen < 2 || end > symbytes) {
			damage(p, file_off(p, s, pos), "module stream %u: "
			    "symbol record of %u bytes overruns the %u-byte "
			    "symbol area", s, reclen, symbytes);
			return;
		}
		if (is_proc(kind)) {
			if (blen < 36 || !(name = rec_name(b, 35, blen))) {
				damage(p, file_off(p, s, pos), "module stream "
				    "%u: truncated procedure record", s);
			} else {
				sym = push(out);
				sym->kind = kind;
				sym->size = rd32(b + 12);
				sym->offset = rd32(b + 28);
				sym->section = rd16(b + 32);
				sym->name = name;
				last_proc_off = pos;
				last_proc_name = name;
			}
		} else if (kind == PDB_S_THUNK32) {
			if (blen < 22 || !(name = rec_name(b, 21, blen))) {
				damage(p, file_off(p, s, pos), "module stream "
				    "%u: truncated thunk record", s);
			} else {
				sym = push(out);
				sym->kind = kind;
				sym->offset = rd32(b + 12);
				sym->section = rd16(b + 16);
				sym->size = rd16(b + 18);
				sym->name = name;
			}
		} else if (kind == PDB_S_SEPCODE && blen >= 28 &&
		    last_proc_name && rd32(b) == last_proc_off) {
			/* separated (cold) code of the enclosing procedure */
			sym = push(out);
			sym->kind = kind;
			sym->size = rd32(b + 8);
			sym->offset = rd32(b + 16);
			sym->section = rd16(b + 24);
			sym->name = last_proc_name;
		}
		pos = end;
	}
}

static void read_publics(struct pdb *p, uint16_t pubs, uint16_t recs,
    struct symvec *out)
{
	const uint8_t *r, *h = NULL;
	uint32_t rlen, hlen = 0, n = 0, i, pos;
	const uint8_t *amap = NULL;

	if (recs == NO_STREAM16)
		return;
	if (stream_get(p, recs, &r, &rlen) < 0) {
		damage_from_err(p);
		return;
	}
	if (pubs != NO_STREAM16 && stream_get(p, pubs, &h, &hlen) < 0)
		damage_from_err(p);
	else if (h && hlen >= 28) {
		uint32_t symhash = rd32(h), addrmap = rd32(h + 4);
		if ((uint64_t)28 + symhash + addrmap <= hlen && addrmap % 4 == 0) {
			amap = h + 28 + symhash;
			n = addrmap / 4;
		} else {
			damage(p, file_off(p, pubs, 0), "publics stream: hash "
			    "(%u) and address map (%u) sizes exceed its %u "
			    "bytes; scanning the symbol records instead",
			    symhash, addrmap, hlen);
		}
	}
	if (amap) {
		for (i = 0; i < n; i++) {
			uint32_t off = rd32(amap + 4 * i), reclen;
			const char *name;
			struct pdb_symbol *sym;
			if ((uint64_t)off + 4 > rlen) {
				damage(p, file_off(p, pubs, 28 + 4 * i),
				    "publics address map entry %u points "
				    "outside the symbol records", i);
				continue;
			}
			reclen = rd16(r + off);
			if (rd16(r + off + 2) != PDB_S_PUB32 || reclen < 12 ||
			    (uint64_t)off + 2 + reclen > rlen ||
			    !(name = rec_name(r + off + 4, 10, reclen - 2))) {
				damage(p, file_off(p, recs, off), "publics "
				    "address map entry %u: no valid S_PUB32 "
				    "record there", i);
				continue;
			}
			sym = push(out);
			sym->kind = PDB_S_PUB32;
			sym->flags = rd32(r + off + 4);
			sym->offset = rd32(r + off + 8);
			sym->section = rd16(r + off + 12);
			sym->name = name;
		}
		return;
	}
	/* no usable address map: walk the whole symbol record stream */
	for (pos = 0; pos + 4 <= rlen;) {
		uint32_t reclen = rd16(r + pos);
		const char *name;
		struct pdb_symbol *sym;
		if (reclen < 2 || pos + 2 + reclen > rlen) {
			damage(p, file_off(p, recs, pos), "symbol record of %u "
			    "bytes overruns the stream", reclen);
			return;
		}
		if (rd16(r + pos + 2) == PDB_S_PUB32 && reclen >= 12 &&
		    (name = rec_name(r + pos + 4, 10, reclen - 2))) {
			sym = push(out);
			sym->kind = PDB_S_PUB32;
			sym->flags = rd32(r + pos + 4);
			sym->offset = rd32(r + pos + 8);
			sym->section = rd16(r + pos + 12);
			sym->name = name;
		}
		pos += 2 + reclen;
	}
}

/*
 * Lookups search a small array of every TOP_STEP-th address first (a
 * few KB, stays in cache), then one block of TOP_STEP addresses: two or
 * three cache misses instead of one per halving on big PDBs.
 */
#define TOP_STEP 32

static uint32_t *build_top(const uint32_t *a, size_t n)
{
	size_t i, k = (n + TOP_STEP - 1) / TOP_STEP;
	uint32_t *t = xmalloc((k + 1) * sizeof *t);
	for (i = 0; i < k; i++)
		t[i] = a[i * TOP_STEP];
	return t;
}

/*
 * Section contributions: u32 version, then 28-byte entries (V60) or
 * 32-byte ones (V2, with the COFF section index appended).
 */
#define SC_V60 (0xeffe0000u + 19970605u)
#define SC_V2 (0xeffe0000u + 20140516u)

static void read_contributions(struct pdb *p, const uint8_t *sc, uint32_t len,
    uint64_t at)
{
	uint32_t ver, esize, n, i;
	if (len < 4)
		return;
	ver = rd32(sc);
	if (ver != SC_V60 && ver != SC_V2) {
		damage(p, at, "section contributions: unknown version 0x%x", ver);
		return;
	}
	esize = ver == SC_V2 ? 32 : 28;
	n = (len - 4) / esize;
	if ((len - 4) % esize)
		damage(p, at, "section contributions: %u bytes are not whole "
		    "%u-byte entries", len - 4, esize);
	p->contrib = xcalloc(n ? n : 1, sizeof *p->contrib);
	for (i = 0; i < n; i++) {
		const uint8_t *e = sc + 4 + (size_t)esize * i;
		struct pdb_contrib *c = &p->contrib[i];
		c->section = rd16(e);
		c->offset = rd32(e + 4);
		c->size = rd32(e + 8);
		c->characteristics = rd32(e + 12);
		c->module = rd16(e + 16);
		c->data_crc = rd32(e + 20);
		c->reloc_crc = rd32(e + 24);
	}
	p->ncontrib = n;
}

static int cmp_contrib(const void *a, const void *b)
{
	const struct pdb_contrib *x = a, *y = b;
	if (x->section != y->section)
		return x->section < y->section ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

/* Publics get the size of the contribution that starts where they do. */
static void size_publics(struct pdb *p)
{
	struct pdb_contrib *sorted, key;
	size_t i;
	if (!p->ncontrib)
		return;
	sorted = xmalloc(p->ncontrib * sizeof *sorted);
	memcpy(sorted, p->contrib, p->ncontrib * sizeof *sorted);
	qsort(sorted, p->ncontrib, sizeof *sorted, cmp_contrib);
	memset(&key, 0, sizeof key);
	for (i = p->nproc; i < p->nproc + p->npub; i++) {
		const struct pdb_contrib *c;
		key.section = p->syms[i].section;
		key.offset = p->syms[i].offset;
		c = bsearch(&key, sorted, p->ncontrib, sizeof *sorted, cmp_contrib);
		if (c)
			p->syms[i].size = c->size;
	}
	free(sorted);
}

static const uint32_t *sort_rvas;
static int cmp_by_rva(const void *a, const void *b)
{
	uint32_t x = sort_rvas[*(const uint32_t *)a];
	uint32_t y = sort_rvas[*(const uint32_t *)b];
	if (x != y)
		return x < y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Sorted (rva, index) arrays over syms[from, from+n) with a known rva. */
static size_t build_sorted(struct pdb *p, size_t from, size_t n,
    uint32_t **rvas, uint32_t **idx)
{
	uint32_t *all = xmalloc((p->nproc + p->npub + 1) * sizeof *all);
	size_t i, k = 0;
	*idx = xmalloc((n + 1) * sizeof **idx);
	*rvas = xmalloc((n + 1) * sizeof **rvas);
	for (i = 0; i < p->nproc + p->npub; i++)
		all[i] = p->syms[i].rva;
	for (i = from; i < from + n; i++)
		if (p->syms[i].rva)
			(*idx)[k++] = (uint32_t)i;
	sort_rvas = all;
	qsort(*idx, k, sizeof **idx, cmp_by_rva);
	sort_rvas = NULL;
	for (i = 0; i < k; i++)
		(*rvas)[i] = all[(*idx)[i]];
	free(all);
	return k;
}

static int load(struct pdb *p)
{
	const uint8_t *d, *m;
	uint32_t len, modsz, scsz, mapsz, srcsz, tsmsz, ecsz, dbgsz, pos;
	uint16_t pubs, recs, dbg[DBG_COUNT];
	struct symvec procs = {0}, publics = {0};
	size_t i;

	if (stream_get(p, 3, &d, &len) < 0)
		return -1;
	if (len < 64)
		return fail(p, file_off(p, 3, 0), "DBI stream is %u bytes, "
		    "shorter than its 64-byte header", len);
	if (rd32(d) != 0xffffffffu)
		return fail(p, file_off(p, 3, 0), "DBI stream has an old "
		    "(pre-VC 7) header, not supported");
	p->dbi_age = rd32(d + 8);
	pubs = rd16(d + 16);
	recs = rd16(d + 20);
	modsz = rd32(d + 24);
	scsz = rd32(d + 28);
	mapsz = rd32(d + 32);
	srcsz = rd32(d + 36);
	tsmsz = rd32(d + 40);
	dbgsz = rd32(d + 48);
	ecsz = rd32(d + 52);
	p->machine = rd16(d + 58);
	if ((uint64_t)modsz + scsz + mapsz + srcsz + tsmsz + ecsz + dbgsz >
	    len - 64 || (modsz | scsz | mapsz | srcsz | tsmsz | ecsz | dbgsz) >> 31)
		return fail(p, file_off(p, 3, 24), "DBI substream sizes "
		    "(%u+%u+%u+%u+%u+%u+%u) exceed the stream's %u bytes",
		    modsz, scsz, mapsz, srcsz, tsmsz, ecsz, dbgsz, len - 64);

	/* optional debug header -> section headers, OMAP */
	for (i = 0; i < DBG_COUNT; i++)
		dbg[i] = NO_STREAM16;
	pos = 64 + modsz + scsz + mapsz + srcsz + tsmsz + ecsz;
	for (i = 0; i < DBG_COUNT && 2 * (i + 1) <= dbgsz; i++) {
		dbg[i] = rd16(d + pos + 2 * i);
		if (dbg[i] != NO_STREAM16 && dbg[i] >= p->nstreams) {
			damage(p, file_off(p, 3, pos + 2 * (uint32_t)i),
			    "debug header names stream %u of %u", dbg[i],
			    p->nstreams);
			dbg[i] = NO_STREAM16;
		}
	}
	read_section_headers(p, dbg[DBG_SECTION_HDR], &p->sec, &p->nsec);
	if (dbg[DBG_OMAP_FROM_SRC] != NO_STREAM16) {
		uint32_t olen = 0;
		read_section_headers(p, dbg[DBG_SECTION_HDR_ORIG], &p->osec,
		    &p->nosec);
		if (p->nosec && stream_get(p, dbg[DBG_OMAP_FROM_SRC], &p->omap,
		    &olen) < 0)
			damage_from_err(p);
		if (p->omap && olen >= 8)
			p->nomap = olen / 8;
		else
			p->omap = NULL;
	}
	if (!p->nsec)
		guess_sections(p, d + 64 + modsz + scsz, mapsz);
	read_contributions(p, d + 64 + modsz, scsz, file_off(p, 3, 64 + modsz));

	/* module infos -> procedure symbols */
	m = d + 64;
	for (pos = 0; pos + 64 <= modsz;) {
		const uint8_t *e = m + pos;
		uint16_t s = rd16(e + 34);
		uint32_t symbytes = rd32(e + 36);
		const uint8_t *names = e + 64, *z1, *z2 = NULL;
		z1 = memchr(names, 0, modsz - pos - 64);
		if (z1)
			z2 = memchr(z1 + 1, 0, (size_t)(m + modsz - z1 - 1));
		if (!z2) {
			damage(p, file_off(p, 3, 64 + pos), "module info: "
			    "names run past the end of the module list");
			break;
		}
		if (s != NO_STREAM16 && symbytes > 4)
			read_module(p, s, symbytes, &procs);
		pos = (uint32_t)(z2 + 1 - m);
		pos = (pos + 3) & ~3u;
	}
	read_publics(p, pubs, recs, &publics);

	p->nproc = procs.n;
	p->npub = publics.n;
	p->syms = xmalloc((procs.n + publics.n + 1) * sizeof *p->syms);
	if (procs.n)
		memcpy(p->syms, procs.v, procs.n * sizeof *p->syms);
	if (publics.n)
		memcpy(p->syms + procs.n, publics.v, publics.n * sizeof *p->syms);
	free(procs.v);
	free(publics.v);
	for (i = 0; i < p->nproc + p->npub; i++)
		p->syms[i].rva = seg_rva(p, p->syms[i].section,
		    p->syms[i].offset);
	size_publics(p);
	p->nproc_sorted = build_sorted(p, 0, p->nproc, &p->proc_rva,
	    &p->proc_idx);
	p->npub_sorted = build_sorted(p, p->nproc, p->npub, &p->pub_rva,
	    &p->pub_idx);
	p->proc_top = build_top(p->proc_rva, p->nproc_sorted);
	p->pub_top = build_top(p->pub_rva, p->npub_sorted);
	return 0;
}

int pdb_load(struct pdb *p)
{
	if (p->loaded == 0)
		p->loaded = load(p) < 0 ? -1 : 1;
	return p->loaded > 0 ? 0 : -1;
}

uint32_t pdb_dbi_age(struct pdb *p)
{
	pdb_load(p);
	return p->dbi_age;
}

unsigned pdb_machine(struct pdb *p)
{
	pdb_load(p);
	return p->machine;
}

size_t pdb_contributions(struct pdb *p, const struct pdb_contrib **out)
{
	pdb_load(p);
	*out = p->contrib;
	return p->ncontrib;
}

size_t pdb_sections(struct pdb *p, const struct pdb_section **out)
{
	pdb_load(p);
	*out = p->sec;
	return p->nsec;
}

int pdb_rvas_guessed(struct pdb *p)
{
	pdb_load(p);
	return p->guessed;
}

/* Loads P for a symbol list; on failure the list is empty (*OUT NULL). */
static int load_for_list(struct pdb *p, const struct pdb_symbol **out)
{
	if (pdb_load(p) == 0)
		return 1;
	*out = NULL;
	return 0;
}

size_t pdb_publics(struct pdb *p, const struct pdb_symbol **out)
{
	if (!load_for_list(p, out))
		return 0;
	*out = p->syms + p->nproc;
	return p->npub;
}

size_t pdb_procedures(struct pdb *p, const struct pdb_symbol **out)
{
	if (!load_for_list(p, out))
		return 0;
	*out = p->syms;
	return p->nproc;
}

size_t pdb_symbol_count(struct pdb *p)
{
	if (pdb_load(p) < 0)
		return 0;
	return p->nproc + p->npub;
}

size_t pdb_symbol_id(const struct pdb *p, const struct pdb_symbol *s)
{
	return (size_t)(s - p->syms);
}

/* Index of the last element of A[0..N) that is <= X, or N if none. */
static size_t last_le(const uint32_t *a, size_t n, uint32_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? n : lo - 1;
}

/* last_le() through the TOP index. */
static size_t last_le2(const uint32_t *top, const uint32_t *a, size_t n,
    uint32_t x)
{
	size_t k = (n + TOP_STEP - 1) / TOP_STEP, b = last_le(top, k, x), len;
	if (b == k)
		return n;
	len = n - b * TOP_STEP < TOP_STEP ? n - b * TOP_STEP : TOP_STEP;
	return b * TOP_STEP + last_le(a + b * TOP_STEP, len, x);
}

static const struct pdb_section *section_of(const struct pdb *p, uint32_t rva)
{
	size_t i;
	for (i = 0; i < p->nsec; i++)
		if (rva >= p->sec[i].va && rva - p->sec[i].va <
		    (p->sec[i].size ? p->sec[i].size : 1))
			return &p->sec[i];
	return NULL;
}

const struct pdb_symbol *pdb_lookup(struct pdb *p, uint32_t rva, uint32_t *disp)
{
	const struct pdb_symbol *best = NULL;
	const struct pdb_section *sec;
	size_t i;

	if (p->loaded == 0)
		pdb_load(p);
	if (p->loaded < 0)
		return NULL;
	i = last_le2(p->proc_top, p->proc_rva, p->nproc_sorted, rva);
	if (i < p->nproc_sorted) {
		/* procedures at the same start (folded): any that holds RVA */
		size_t j = i;
		for (;;) {
			const struct pdb_symbol *s = &p->syms[p->proc_idx[j]];
			if (rva - s->rva < s->size) {
				*disp = rva - s->rva;
				return s;
			}
			if (j == 0 || p->proc_rva[j - 1] != p->proc_rva[i])
				break;
			j--;
		}
		best = &p->syms[p->proc_idx[i]];
	}
	i = last_le2(p->pub_top, p->pub_rva, p->npub_sorted, rva);
	if (i < p->npub_sorted) {
		const struct pdb_symbol *s = &p->syms[p->pub_idx[i]];
		if (!best || s->rva > best->rva)
			best = s;
	}
	if (!best)
		return NULL;
	/* never let a symbol reach into the next section */
	sec = section_of(p, rva);
	if (p->nsec && (!sec || best->rva < sec->va))
		return NULL;
	*disp = rva - best->rva;
	return best;
}

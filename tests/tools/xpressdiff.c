/*
 * xpressdiff - checks lib/etl/xpress.c's MS-XCA plain LZ77 decoder against
 * the plain reference decoder of tests/tools/lib/xpress_ref.h (the
 * byte-at-a-time loop the library used before it copied literal runs and
 * matches in blocks), and times it.
 * A test tool: the fast decoder must give the same bytes, or the same
 * error message, for every input, good or damaged.
 *
 * USAGE:  xpressdiff check [--seed N] [FILE.etl...]
 *         xpressdiff bench [--ref] [--rounds N] FILE.etl
 * INPUT:  .etl files; every buffer with BufferFlag 0x40 (compressed) is
 *         taken, [0x48, BufferSize) decompressing to SavedOffset - 0x48.
 * OUTPUT: check: one line per kind of input with how many agreed, e.g.
 *           etl buffers 359 same 359
 *           truncated 1523 same 1523
 *         and the first differences on stderr; it also decodes random
 *         streams written by an encoder here (every length form, every
 *         short distance) and compares both decoders with what was encoded.
 *         bench: "bytes B buffers N" after decoding every buffer N rounds.
 * Exit: 0 all agree; 1 some differ; 2 usage or a file cannot be read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "etl/xpress.h"
#include "xorshift.h"
#include "xpress_ref.h"

/* ---------- compressed buffers of .etl files ---------- */

struct packed {
	uint8_t *data;	/* exactly the compressed bytes, so ASan sees one byte too far */
	size_t len, outlen;
};

struct packs {
	struct packed *v;
	size_t n, cap, maxout;
};

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void
load_etl(struct packs *ps, const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		cli_fatal("%s: cannot open", path);
	size_t n = 0, cap = 1 << 20, got;
	uint8_t *file = xmalloc(cap);
	while ((got = fread(file + n, 1, cap - n, fp)) > 0)
		if ((n += got) == cap)
			file = xrealloc(file, cap *= 2);
	fclose(fp);
	for (size_t off = 0; off + 0x48 <= n;) {
		uint32_t size = le32(file + off), saved = le32(file + off + 4);
		unsigned flag = file[off + 0x34] | file[off + 0x35] << 8;
		if (size < 0x48 || size > n - off)
			break;
		if ((flag & 0x40) && saved > 0x48) {
			if (ps->n == ps->cap)
				ps->v = xrealloc(ps->v, (ps->cap = ps->cap ? 2 * ps->cap : 64) * sizeof *ps->v);
			struct packed *p = &ps->v[ps->n++];
			p->len = size - 0x48;
			p->data = xmalloc(p->len ? p->len : 1);
			memcpy(p->data, file + off + 0x48, p->len);
			p->outlen = saved - 0x48;
			if (p->outlen > ps->maxout)
				ps->maxout = p->outlen;
		}
		off += size;
	}
	free(file);
}

/* ---------- comparing the two decoders ---------- */

struct tally {
	const char *what;
	size_t n, same, ok;
};

static int reported;

/* Decodes IN both ways into fresh buffers of exactly OUTLEN bytes. */
static void
compare(struct tally *t, const uint8_t *in, size_t inlen, size_t outlen, const uint8_t *expect)
{
	uint8_t *a = xmalloc(outlen), *b = xmalloc(outlen);
	uint8_t *copy = xmalloc(inlen ? inlen : 1);	/* exact size: over-reads are caught */
	const char *wa = NULL, *wb = NULL;

	memcpy(copy, in, inlen);
	int ra = xpress_ref_lz77(copy, inlen, a, outlen, &wa);
	int rb = xpress_lz77_decompress(copy, inlen, b, outlen, &wb);
	int same = ra == rb && (ra == 0 ? !memcmp(a, b, outlen) : !strcmp(wa, wb));
	if (same && expect && (ra != 0 || memcmp(a, expect, outlen)))
		same = 0;
	t->n++;
	t->same += same;
	t->ok += ra == 0;
	if (!same && reported++ < 10)
		fprintf(stderr, "xpressdiff: %s #%zu (%zu -> %zu bytes): reference %d %s, library %d %s%s\n",
		    t->what, t->n, inlen, outlen, ra, ra ? wa : "", rb, rb ? wb : "",
		    ra == 0 && rb == 0 ? " (bytes differ)" : expect ? " (or not what was encoded)" : "");
	free(a);
	free(b);
	free(copy);
}

/* ---------- an encoder for random streams ---------- */

struct enc {
	uint8_t *buf, *plain;
	size_t len, cap, plen, pcap;
	size_t flagpos, nibblepos;
	int nflags, have_nibble;
	uint32_t flags;
};

static void
put(struct enc *e, uint8_t c)
{
	if (e->len == e->cap)
		e->buf = xrealloc(e->buf, e->cap = e->cap ? 2 * e->cap : 256);
	e->buf[e->len++] = c;
}

static void
put_plain(struct enc *e, uint8_t c)
{
	if (e->plen == e->pcap)
		e->plain = xrealloc(e->plain, e->pcap = e->pcap ? 2 * e->pcap : 256);
	e->plain[e->plen++] = c;
}

static void
flush_flags(struct enc *e)
{
	for (int i = 0; i < 4; i++)
		e->buf[e->flagpos + i] = (uint8_t)(e->flags >> 8 * i);
}

/* Reserves the flag word before a group of 32 tokens. */
static void
flag(struct enc *e, int bit)
{
	if (e->nflags == 32) {
		flush_flags(e);
		e->nflags = 0;
	}
	if (e->nflags == 0) {
		e->flagpos = e->len;
		e->flags = 0;
		for (int i = 0; i < 4; i++)
			put(e, 0);
	}
	e->flags |= (uint32_t)bit << (31 - e->nflags++);
}

static void
literal(struct enc *e, uint8_t c)
{
	flag(e, 0);
	put(e, c);
	put_plain(e, c);
}

/* A match of LEN >= 3 bytes DIST back, its length in the smallest form. */
static void
match(struct enc *e, size_t dist, size_t len)
{
	size_t l = len - 3;

	flag(e, 1);
	uint32_t tok = (uint32_t)(dist - 1) << 3 | (l < 7 ? (uint32_t)l : 7);
	put(e, (uint8_t)tok);
	put(e, (uint8_t)(tok >> 8));
	if (l >= 7) {
		size_t n = l - 7 < 15 ? l - 7 : 15;
		if (!e->have_nibble) {
			e->nibblepos = e->len;
			put(e, (uint8_t)n);
			e->have_nibble = 1;
		} else {
			e->buf[e->nibblepos] |= (uint8_t)(n << 4);
			e->have_nibble = 0;
		}
		if (n == 15) {
			size_t rest = l - 22;
			if (rest < 255)
				put(e, (uint8_t)rest);
			else {
				put(e, 255);
				if (l <= 0xffff) {
					put(e, (uint8_t)l);
					put(e, (uint8_t)(l >> 8));
				} else {
					put(e, 0);
					put(e, 0);
					for (int i = 0; i < 4; i++)
						put(e, (uint8_t)(l >> 8 * i));
				}
			}
		}
	}
	for (size_t i = 0; i < len; i++)
		put_plain(e, e->plain[e->plen - dist]);
}

/* A length with every encoded form about equally likely. */
static size_t
random_length(uint64_t *rs)
{
	uint64_t r = xorshift64(rs);
	switch (r % 6) {
	case 0: return 3 + r / 8 % 7;		/* in the token */
	case 1: return 10 + r / 8 % 15;		/* the nibble */
	case 2: return 25 + r / 8 % 255;	/* the byte */
	case 3: return 280 + r / 8 % 3000;	/* 16 bits */
	case 4: return 3 + r / 8 % 40;		/* around the block sizes */
	default: return r / 8 % 4 ? 3 + r / 8 % 20 : 65536 + 22 + r / 8 % 9000; /* 32 bits */
	}
}

static void
random_stream(struct enc *e, uint64_t *rs, size_t target)
{
	memset(e, 0, sizeof *e);
	while (e->plen < target) {
		uint64_t r = xorshift64(rs);
		if (e->plen == 0 || r % 3 == 0) {
			size_t run = 1 + r / 4 % 48;
			for (size_t i = 0; i < run; i++)
				literal(e, (uint8_t)(xorshift64(rs) % 7 ? 'a' + r % 5 + i % 3 : xorshift64(rs)));
			continue;
		}
		size_t dist = r / 4 % 2 ? 1 + r / 8 % 20 : 1 + r / 8 % 8192;
		if (dist > e->plen)
			dist = e->plen;
		match(e, dist, random_length(rs));
	}
	if (e->nflags)
		flush_flags(e);
}

/* ---------- check ---------- */

static int
report(const struct tally *t)
{
	printf("%s %zu same %zu decoded %zu\n", t->what, t->n, t->same, t->ok);
	return t->n != t->same;
}

static int
check(struct packs *ps, uint64_t seed)
{
	struct tally bufs = { "etl-buffers", 0, 0, 0 }, cut = { "truncated", 0, 0, 0 },
	    flip = { "bit-flipped", 0, 0, 0 }, shrt = { "output-sizes", 0, 0, 0 },
	    rnd = { "encoded", 0, 0, 0 }, rcut = { "encoded-damaged", 0, 0, 0 },
	    junk = { "random-bytes", 0, 0, 0 };
	uint64_t rs = seed ? seed : 1;
	int bad = 0;

	for (size_t i = 0; i < ps->n; i++) {
		struct packed *p = &ps->v[i];
		compare(&bufs, p->data, p->len, p->outlen, NULL);
		/* a few cuts per buffer; every cut of the smallest ones */
		size_t step = p->len <= 2048 ? 1 : p->len / 61 + 1;
		for (size_t at = 0; at < p->len; at += step)
			compare(&cut, p->data, at, p->outlen, NULL);
		uint8_t *d = xmalloc(p->len);
		for (int k = 0; k < 8; k++) {
			memcpy(d, p->data, p->len);
			for (int f = 0; f <= k % 3; f++) {
				uint64_t r = xorshift64(&rs);
				d[r % p->len] ^= (uint8_t)(1u << (r >> 32) % 8);
			}
			compare(&flip, d, p->len, p->outlen, NULL);
		}
		free(d);
		size_t o = 1 + xorshift64(&rs) % p->outlen;
		compare(&shrt, p->data, p->len, o, NULL);		/* asked for less */
		compare(&shrt, p->data, p->len, p->outlen + 1 + o % 64, NULL);	/* more */
	}
	for (int i = 0; i < 400; i++) {
		struct enc e;
		random_stream(&e, &rs, 1 + xorshift64(&rs) % (i % 10 ? 3000 : 150000));
		compare(&rnd, e.buf, e.len, e.plen, e.plain);
		if (e.plen > 1)
			compare(&rnd, e.buf, e.len, e.plen - 1 - xorshift64(&rs) % (e.plen - 1), NULL);
		size_t step = e.len <= 600 ? 1 : e.len / 97 + 1;
		for (size_t at = 0; at < e.len; at += step)
			compare(&rcut, e.buf, at, e.plen, NULL);
		for (int k = 0; k < 16; k++) {
			uint64_t r = xorshift64(&rs);
			e.buf[r % e.len] ^= (uint8_t)(1u << (r >> 32) % 8);
			compare(&rcut, e.buf, e.len, e.plen, NULL);
		}
		free(e.buf);
		free(e.plain);
	}
	uint8_t junkbuf[512];
	for (int i = 0; i < 3000; i++) {
		size_t n = xorshift64(&rs) % sizeof junkbuf;
		for (size_t j = 0; j < n; j++)
			junkbuf[j] = (uint8_t)xorshift64(&rs);
		compare(&junk, junkbuf, n, 1 + xorshift64(&rs) % 4096, NULL);
	}
	bad |= report(&bufs);
	bad |= report(&cut);
	bad |= report(&flip);
	bad |= report(&shrt);
	bad |= report(&rnd);
	bad |= report(&rcut);
	bad |= report(&junk);
	return bad;
}

/* ---------- bench ---------- */

static int
bench(struct packs *ps, int rounds, int use_ref)
{
	uint8_t *out = xmalloc(ps->maxout ? ps->maxout : 1);
	uint64_t bytes = 0, sum = 0;
	size_t failed = 0;

	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < ps->n; i++) {
			const char *why = NULL;
			struct packed *p = &ps->v[i];
			int rc = use_ref ? xpress_ref_lz77(p->data, p->len, out, p->outlen, &why) :
			    xpress_lz77_decompress(p->data, p->len, out, p->outlen, &why);
			failed += rc != 0;
			bytes += p->outlen;
			sum += out[p->outlen - 1];
		}
	printf("bytes %llu buffers %zu failed %zu (%llu)\n", (unsigned long long)bytes, ps->n,
	    failed, (unsigned long long)sum);
	free(out);
	return failed != 0;
}

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: xpressdiff check [--seed N] [FILE.etl...]\n"
	    "       xpressdiff bench [--ref] [--rounds N] FILE.etl...\n"
	    "  --seed N     random stream for damage and encoded streams (default 1)\n"
	    "  --ref        bench the reference decoder instead of the library's\n"
	    "  --rounds N   decode every buffer N times (default 1)\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	struct packs ps = { 0 };
	int rounds = 1, use_ref = 0, i;
	uint64_t seed = 1;

	cli_init(argv[0]);
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		usage(0);
	if (argc < 2 || (strcmp(argv[1], "check") && strcmp(argv[1], "bench")))
		usage(2);
	for (i = 2; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--ref"))
			use_ref = 1;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (int)cli_integer("--rounds", argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = (uint64_t)cli_integer("--seed", argv[++i]);
		else
			usage(2);
	}
	for (; i < argc; i++)
		load_etl(&ps, argv[i]);
	int rc = !strcmp(argv[1], "check") ? check(&ps, seed) : bench(&ps, rounds, use_ref);
	for (size_t k = 0; k < ps.n; k++)
		free(ps.v[k].data);
	free(ps.v);
	return rc;
}

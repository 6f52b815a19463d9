/*
 * etlwalk - an independent check of an .etl file's structure (a test tool):
 * it walks the buffers, decompresses XPRESS and LZNT1 buffers with its own
 * decoders (written from [MS-XCA], sharing no code with lib/), checks every
 * record's header and size, sequence numbers and timestamps per CPU, and
 * counts the records by header kind, group and type.  The bats tests check
 * etl2evt against it: two readers written apart must agree.
 *
 * USAGE:  etlwalk [--buffers] FILE.etl
 *
 * OUTPUT: "buffers: B  compressed buffers: C  events: E", then a line per
 *         (header kind, group, type) with its count, e.g.
 *       1600  K PERFINFO32 g=0x18 t=0x20(32)
 *         --buffers first prints "buffer N offset O size S events E" for
 *         every buffer walked.
 *
 * Exit: 0 the structure is sound; 1 it is not (each error on stderr with
 * its byte offset); 2 usage or the file cannot be read.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"

static int
walk_fail(const char *path, uint64_t off, const char *what)
{
	fprintf(stderr, "%s: %s: offset %llu: %s\n", cli_progname(), path, (unsigned long long)off, what);
	return 1;
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t
rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/*
 * LZNT1 decoder ([MS-XCA] 2.5), written from the spec independently of
 * lib/: chunks of a 16-bit header (size - 1, bit 15 compressed) and, when
 * compressed, flag bytes for 8 items each, low bit first; a match token
 * splits 16 bits into offset and length by the position in the chunk.
 */
static int
unlznt1(const uint8_t *in, size_t n, uint8_t *out, size_t want)
{
	size_t i = 0, o = 0;

	while (o < want && i + 2 <= n) {
		unsigned hdr = (unsigned)(in[i] | in[i + 1] << 8);
		size_t len = (hdr & 0xfff) + 1, start = o, end;
		i += 2;
		if (hdr == 0)
			break;
		if (i + len > n)
			return -1;
		end = i + len;
		if (!(hdr & 0x8000)) {
			if (o + len > want)
				len = want - o;
			memcpy(out + o, in + i, len);
			o += len;
			i = end;
			continue;
		}
		while (i < end && o < want) {
			unsigned flags = in[i++], b;
			for (b = 0; b < 8 && i < end && o < want; b++) {
				if (!(flags >> b & 1)) {
					out[o++] = in[i++];
					continue;
				}
				if (i + 2 > end)
					return -1;
				unsigned tok = (unsigned)(in[i] | in[i + 1] << 8), lenbits = 12;
				i += 2;
				/* offset bits: enough for the position in the chunk, 4 at least */
				while (lenbits > 4 && ((size_t)1 << (16 - lenbits)) < o - start)
					lenbits--;
				size_t mlen = (tok & ((1u << lenbits) - 1)) + 3;
				size_t dist = (tok >> lenbits) + 1;
				if (dist > o - start || o + mlen > want)
					return -1;
				for (; mlen > 0; mlen--, o++)
					out[o] = out[o - dist];
			}
		}
		i = end;
	}
	return o == want ? 0 : -1;
}

/* MS-XCA plain LZ77 decoder, written from the spec independently of lib/. */
static int
unxpress(const uint8_t *in, size_t n, uint8_t *out, size_t want)
{
	size_t i = 0, o = 0, nib = 0;
	int have_nib = 0;

	while (o < want) {
		uint32_t flags;
		int b;
		if (i + 4 > n)
			return -1;
		flags = rd32(in + i);
		i += 4;
		for (b = 31; b >= 0 && o < want; b--) {
			size_t len, dist, k;
			if (!((flags >> b) & 1)) {
				if (i >= n)
					return -1;
				out[o++] = in[i++];
				continue;
			}
			if (i + 2 > n)
				return -1;
			len = (size_t)in[i] | (size_t)in[i + 1] << 8;
			i += 2;
			dist = (len >> 3) + 1;
			len &= 7;
			if (len == 7) {
				if (!have_nib) {
					if (i >= n) return -1;
					nib = i++;
					len = in[nib] & 15;
					have_nib = 1;
				} else {
					len = in[nib] >> 4;
					have_nib = 0;
				}
				if (len == 15) {
					if (i >= n) return -1;
					len = in[i++];
					if (len == 255) {
						if (i + 2 > n) return -1;
						len = (size_t)in[i] | (size_t)in[i + 1] << 8;
						i += 2;
						if (len == 0) {
							if (i + 4 > n) return -1;
							len = rd32(in + i);
							i += 4;
						}
						if (len < 22) return -1;
						len -= 22;
					}
					len += 15;
				}
				len += 7;
			}
			len += 3;
			if (dist > o || len > want - o)
				return -1;
			for (k = 0; k < len; k++, o++)
				out[o] = out[o - dist];
		}
	}
	return 0;
}

static const char *
hdr_name(int ht)
{
	switch (ht) {
	case 0x01: return "SYSTEM32";
	case 0x02: return "SYSTEM64";
	case 0x03: return "COMPACT32";
	case 0x04: return "COMPACT64";
	case 0x0A: return "FULL32";
	case 0x14: return "FULL64";
	case 0x0B: return "INSTANCE32";
	case 0x15: return "INSTANCE64";
	case 0x10: return "PERFINFO32";
	case 0x11: return "PERFINFO64";
	case 0x12: return "EVENT_HEADER32";
	case 0x13: return "EVENT_HEADER64";
	default: return NULL;
	}
}

/* --buffers: "buffer N offset O size S events E" for every buffer walked */
static void
walk_buffer_line(uint64_t n, uint64_t off, uint32_t size, uint64_t events)
{
	printf("buffer %llu offset %llu size %u events %llu\n", (unsigned long long)n,
	    (unsigned long long)off, size, (unsigned long long)events);
}

static int
walk(const char *path, int per_buffer)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *d, *buf;
	size_t size = 0, cap = 1 << 20, got;
	uint64_t off = 0, nbuf = 0, ncomp = 0, nev = 0;
	static uint64_t counts[0x20][256][256];
	static uint64_t lastseq[4096], lastts[4096];
	static int seen[4096];
	int err = 0, ht, g, t;

	if (!fp)
		cli_fatal("%s: %s", path, strerror(errno));
	d = xmalloc(cap);
	while ((got = fread(d + size, 1, cap - size, fp)) > 0) {
		size += got;
		if (size == cap)
			d = xrealloc(d, cap *= 2);
	}
	fclose(fp);
	buf = xmalloc(1 << 24);
	while (off + 0x48 <= size) {
		const uint8_t *h = d + off;
		uint32_t bs = rd32(h), so = rd32(h + 4), cpu;
		uint64_t nev0 = nev;
		uint16_t flags = (uint16_t)(h[0x34] | h[0x35] << 8);
		uint64_t seq = rd64(h + 0x18);
		const uint8_t *body;
		size_t p;

		if (bs == 0)
			break;
		/* header buffers may count their fill in Offset only (SavedOffset 0 or short) */
		if (!(flags & 0x40) && rd32(h + 0x30) > so && rd32(h + 0x30) <= bs)
			so = rd32(h + 0x30);
		if (bs < 0x48 || off + bs > size || so < 0x48 || so > (1u << 24) ||
		    (!(flags & 0x40) && so > bs)) {
			err |= walk_fail(path, off, "bad buffer sizes");
			break;
		}
		cpu = (flags & 0x20) ? (uint32_t)(h[0x28] | h[0x29] << 8) : h[0x28];
		if (cpu >= 4096) {
			err |= walk_fail(path, off, "processor index out of range");
			break;
		}
		if (nbuf > 0 && h[0x36] != 4) {
			if (seen[cpu] && seq <= lastseq[cpu])
				err |= walk_fail(path, off, "sequence number not increasing on its CPU");
			lastseq[cpu] = seq;
		}
		nbuf++;
		if (flags & 0x40) {
			ncomp++;
			/* the first buffer's State names the format (LZNT1 2, else XPRESS) */
			int lznt1 = (rd32(d + 0x2c) & 0xffff) == 2;
			if ((lznt1 ? unlznt1(h + 0x48, bs - 0x48, buf, so - 0x48) :
			    unxpress(h + 0x48, bs - 0x48, buf, so - 0x48)) < 0) {
				err |= walk_fail(path, off, "compressed data does not decode");
				if (per_buffer)
					walk_buffer_line(nbuf - 1, off, bs, 0);
				off += bs;
				continue;
			}
			body = buf;
		} else
			body = h + 0x48;
		for (p = 0; p + 4 <= so - 0x48u;) {
			uint32_t m = rd32(body + p);
			size_t sz, hl;
			uint64_t ets;
			if (m == 0xFFFFFFFFu)
				break;
			ht = (m >> 16) & 0xFF;
			if (!hdr_name(ht) || (m >> 24) != 0xC0) {
				err |= walk_fail(path, off + 0x48 + p, "unknown record header");
				break;
			}
			if (ht <= 4 || ht == 0x10 || ht == 0x11) {
				sz = (size_t)(body[p + 4] | body[p + 5] << 8);
				g = body[p + 7];
				t = body[p + 6];
				hl = ht <= 2 ? 0x20 : ht <= 4 ? 0x18 : 0x10;
				ets = rd64(body + p + (ht >= 0x10 ? 8 : 16));
			} else {
				sz = m & 0xFFFF;
				g = 0;
				t = ht == 0x12 || ht == 0x13 ? body[p + 45] : body[p + 4];
				hl = ht == 0x12 || ht == 0x13 ? 0x50 : 0x30;
				ets = rd64(body + p + 16);
			}
			if (sz < hl || p + sz > so - 0x48u) {
				err |= walk_fail(path, off + 0x48 + p, "record size out of bounds");
				break;
			}
			if (nbuf > 1 && seen[cpu] && ets < lastts[cpu] && !(ht == 0x12 || ht == 0x13))
				err |= walk_fail(path, off + 0x48 + p, "timestamp going back on its CPU");
			if (nbuf > 1) {
				lastts[cpu] = ets;
				seen[cpu] = 1;
			}
			counts[ht][g][t]++;
			nev++;
			p += (sz + 7) & ~(size_t)7;
		}
		if (per_buffer)
			walk_buffer_line(nbuf - 1, off, bs, nev - nev0);
		off += bs;
	}
	printf("buffers: %llu  compressed buffers: %llu  events: %llu\n",
	    (unsigned long long)nbuf, (unsigned long long)ncomp, (unsigned long long)nev);
	for (ht = 0; ht < 0x20; ht++)
		for (g = 0; g < 256; g++)
			for (t = 0; t < 256; t++)
				if (counts[ht][g][t] && hdr_name(ht))
					printf("%8llu  %s %s g=0x%02x t=0x%02x(%d)\n",
					    (unsigned long long)counts[ht][g][t],
					    (ht <= 4 || ht == 0x10 || ht == 0x11) ? "K" : "U", hdr_name(ht), g, t, t);
	free(d);
	free(buf);
	return err;
}

static void
usage(int status)
{
	fprintf(status ? stderr : stdout, "usage: etlwalk [--buffers] FILE.etl\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"buffers", no_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c, per_buffer = 0;

	cli_init(argv[0]);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': per_buffer = 1; break;
		case 'h': usage(0); break;
		case 'V': cli_version(); break;
		default: usage(2);
		}
	}
	if (optind != argc - 1)
		usage(2);
	return walk(argv[optind], per_buffer);
}

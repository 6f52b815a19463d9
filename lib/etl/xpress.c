/*
 * xpress.c - MS-XCA plain LZ77 and LZNT1 decompression for ETL buffers.
 * Written from the MS-XCA specification ([MS-XCA] 2.4 and 2.5).
 *
 * LZ77 is on etl2evt's critical path (a compressed trace such as
 * net.4.5.2.x64 is 23 MB of 1.3 million matches of about 17 bytes and 1.4
 * million literals), so its decoder copies literals and matches in 8- and
 * 16-byte blocks and checks the input once per indicator word; it must
 * still give the same bytes or the same message as the plain decoder
 * (tests/tools/lib/xpress_ref.h, checked by tests/xpress.bats and
 * fuzz_xpress) for any input, never touching a byte outside either buffer.
 */
#include <string.h>

#include "etl/xpress.h"

/*
 * Block copies below may write up to COPY_SLACK - 1 bytes past the end of a
 * literal run or a match, when OUT has that much room after it: bytes that
 * later tokens overwrite, since a buffer that decodes fills OUT to the end.
 * 16-byte memcpy calls with a constant size compile to one load and store.
 */
#define COPY_SLACK 16

static uint32_t
get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Copies LEN bytes from DIST back to D, overlap allowed (a short distance
 * repeats its pattern), writing up to COPY_SLACK - 1 bytes more: OUT must
 * have LEN + COPY_SLACK bytes of room from D on.
 */
static inline __attribute__((always_inline)) void
copy_match_wide(uint8_t *d, size_t dist, size_t len)
{
	const uint8_t *s = d - dist;
	size_t i;

	if (dist >= 16) {
		/* every block reads bytes written before it (dist >= the block) */
		memcpy(d, s, 16);
		for (i = 16; i < len; i += 16)
			memcpy(d + i, s + i, 16);
	} else if (dist >= 8) {
		memcpy(d, s, 8);
		for (i = 8; i < len; i += 8)
			memcpy(d + i, s + i, 8);
	} else if (dist == 1)
		memset(d, *s, len);
	else {
		/*
		 * Pattern widening: the output repeats every DIST bytes, so it also
		 * repeats every WIDE bytes (the first multiple of DIST >= 8), and
		 * from byte WIDE - DIST on, 8 bytes can be copied from WIDE back.
		 */
		size_t wide = dist;
		while (wide < 8)
			wide += dist;
		for (i = 0; i < wide - dist && i < len; i++)
			d[i] = s[i];
		for (; i < len; i += 8)
			memcpy(d + i, d + i - wide, 8);
	}
}

/* The same, exactly LEN bytes when ROOM (what OUT holds from D on) is short. */
static void
copy_match(uint8_t *d, size_t dist, size_t len, size_t room)
{
	const uint8_t *s = d - dist;

	if (room - len >= COPY_SLACK)
		copy_match_wide(d, dist, len);
	else if (dist >= len)
		memcpy(d, s, len);
	else
		for (size_t i = 0; i < len; i++)
			d[i] = s[i];
}

enum { MATCH_OK, MATCH_SHORT_INPUT, MATCH_BAD };

/*
 * Reads the match token at *IP and its length ([MS-XCA] 2.4: 3 bits, then a
 * nibble shared by two matches, a byte, 16 bits, 32 bits) into *DIST and
 * *LEN.  CHECK_INPUT 0 when the caller knows 10 bytes are there (the
 * branches then compile away).
 */
static inline __attribute__((always_inline)) int
read_match(const uint8_t *in, size_t inlen, size_t *ipp, size_t *nibble, int *have_nibble,
    int check_input, size_t *distp, size_t *lenp, const char **why)
{
	size_t ip = *ipp;

	if (check_input && inlen - ip < 2)
		return MATCH_SHORT_INPUT;
	uint32_t token = (uint32_t)in[ip] | (uint32_t)in[ip + 1] << 8;
	ip += 2;
	size_t len = token & 7;
	if (len == 7) {
		if (!*have_nibble) {
			if (check_input && ip >= inlen)
				return MATCH_SHORT_INPUT;
			*nibble = ip++;
			len = in[*nibble] & 15;
			*have_nibble = 1;
		} else {
			len = in[*nibble] >> 4;
			*have_nibble = 0;
		}
		if (len == 15) {
			if (check_input && ip >= inlen)
				return MATCH_SHORT_INPUT;
			len = in[ip++];
			if (len == 255) {
				if (check_input && inlen - ip < 2)
					return MATCH_SHORT_INPUT;
				len = (size_t)in[ip] | (size_t)in[ip + 1] << 8;
				ip += 2;
				if (len == 0) {
					if (check_input && inlen - ip < 4)
						return MATCH_SHORT_INPUT;
					len = get_le32(in + ip);
					ip += 4;
				}
				if (len < 15 + 7) {
					*why = "bad match length";
					return MATCH_BAD;
				}
				len -= 15 + 7;
			}
			len += 15;
		}
		len += 7;
	}
	*ipp = ip;
	*distp = (token >> 3) + 1;
	*lenp = len + 3;
	return MATCH_OK;
}

/* The checks after the length, in the reference order. */
static int
match_fits(size_t dist, size_t len, size_t op, size_t outlen, const char **why)
{
	if (dist > op) {
		*why = "match distance before start of output";
		return 0;
	}
	if (len > outlen - op) {
		*why = "match runs past the expected size";
		return 0;
	}
	return 1;
}

/*
 * Room for one indicator word's worst case without checks: the word, 32
 * matches of 10 bytes (token, nibble, byte, 16 and 32 bits), and a
 * 32-byte literal block read past the last literal.  In OUT, from the last
 * check: the literal blocks of a word (they end < 48 bytes on) and a
 * match's COPY_SLACK.
 */
#define FAST_IN (4 + 32 * 10 + 32)
#define FAST_OUT 64
/* The indicator word in the top half, a one below it: all used up when
 * only that one is left, at the top. */
#define WORD_END ((uint64_t)1 << 63)

/*
 * Two loops: a fast one over whole indicator words while the input holds a
 * word's worst case and OUT has room (no input checks, runs of literals
 * copied as blocks, the room for a match and the slack after it checked at
 * once), and the plain one ([MS-XCA] 2.4, one token at a time) for the last
 * words.  Matches are checked in the same order in both, so damaged data
 * gives the same message as the plain loop alone.
 */
int
xpress_lz77_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
    const char **why)
{
	size_t ip = 0, op = 0, nibble = 0, dist, len;
	int have_nibble = 0, nbits = 0, r;
	uint32_t flags = 0;

	while (inlen - ip >= FAST_IN && outlen - op >= FAST_OUT) {
		/* the unused indicator bits at the top, the next one is bit 63 */
		uint64_t bits = (uint64_t)get_le32(in + ip) << 32 | WORD_END >> 32;
		ip += 4;
		for (;;) {
			/*
			 * The literals before the next match, often none: copied
			 * without a branch (a match overwrites the block), since
			 * literal or match is the least predictable choice here.
			 */
			int run = __builtin_clzll(bits);	/* stops at the end marker */
			memcpy(out + op, in + ip, 8);
			if (run > 8) {
				memcpy(out + op + 8, in + ip + 8, 16);
				if (run > 24)
					memcpy(out + op + 24, in + ip + 24, 8);
			}
			ip += (size_t)run;
			op += (size_t)run;
			bits <<= run;
			if (bits == WORD_END)
				break;
			bits <<= 1;
			if (read_match(in, inlen, &ip, &nibble, &have_nibble, 0, &dist, &len, why) !=
			    MATCH_OK)
				return -1;
			if ((uint64_t)len + FAST_OUT > outlen - op || dist > op) {
				if (!match_fits(dist, len, op, outlen, why))
					return -1;
				copy_match(out + op, dist, len, outlen - op);
				op += len;
				/* the rest of this word one token at a time */
				nbits = 63 - __builtin_ctzll(bits);
				flags = (uint32_t)(bits >> 32);
				goto plain;
			}
			copy_match_wide(out + op, dist, len);
			op += len;
			if (bits == WORD_END)
				break;
		}
	}
plain:
	while (op < outlen) {
		if (nbits == 0) {
			if (inlen - ip < 4)
				goto short_input;
			flags = get_le32(in + ip);
			ip += 4;
			nbits = 32;
		}
		nbits--;
		if (!(flags >> 31)) {
			flags <<= 1;
			if (ip >= inlen)
				goto short_input;
			out[op++] = in[ip++];
			continue;
		}
		flags <<= 1;
		r = read_match(in, inlen, &ip, &nibble, &have_nibble, 1, &dist, &len, why);
		if (r == MATCH_SHORT_INPUT)
			goto short_input;
		if (r != MATCH_OK || !match_fits(dist, len, op, outlen, why))
			return -1;
		copy_match(out + op, dist, len, outlen - op);
		op += len;
	}
	return 0;
short_input:
	*why = "compressed data ends early";
	return -1;
}

int
lznt1_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
    const char **why)
{
	size_t ip = 0, op = 0;

	while (op < outlen && ip + 2 <= inlen) {
		unsigned hdr = (unsigned)in[ip] | (unsigned)in[ip + 1] << 8;
		ip += 2;
		if (hdr == 0)
			break;
		size_t csize = (hdr & 0xfff) + 1;
		if (csize > inlen - ip) {
			*why = "LZNT1 chunk runs past the buffer";
			return -1;
		}
		const uint8_t *c = in + ip, *ce = c + csize;
		ip += csize;
		if (!(hdr & 0x8000)) {
			size_t n = csize < outlen - op ? csize : outlen - op;
			memcpy(out + op, c, n);
			op += n;
			continue;
		}
		size_t chunk0 = op;
		while (c < ce && op < outlen) {
			unsigned fl = *c++;
			for (int b = 0; b < 8 && c < ce && op < outlen; b++, fl >>= 1) {
				if (!(fl & 1)) {
					out[op++] = *c++;
					continue;
				}
				if (ce - c < 2) {
					*why = "LZNT1 token cut short";
					return -1;
				}
				unsigned tok = (unsigned)c[0] | (unsigned)c[1] << 8;
				c += 2;
				unsigned shift = 12, mask = 0xfff;
				for (size_t p = op - chunk0 - 1; op > chunk0 && p >= 0x10; p >>= 1) {
					shift--;
					mask >>= 1;
				}
				size_t len = (tok & mask) + 3, dist = (tok >> shift) + 1;
				if (dist > op - chunk0) {
					*why = "LZNT1 match before chunk start";
					return -1;
				}
				if (len > outlen - op)
					len = outlen - op;
				for (size_t i = 0; i < len; i++, op++)
					out[op] = out[op - dist];
			}
		}
	}
	if (op < outlen)
		memset(out + op, 0, outlen - op);	/* LZNT1 may omit trailing zero chunks */
	return 0;
}

int
etl_decompress(int format, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
    const char **why)
{
	switch (format) {
	case COMPRESSION_FORMAT_XPRESS:
		return xpress_lz77_decompress(in, inlen, out, outlen, why);
	case COMPRESSION_FORMAT_LZNT1:
		return lznt1_decompress(in, inlen, out, outlen, why);
	case COMPRESSION_FORMAT_XPRESS_HUFF:
		*why = "Xpress-Huffman compressed buffers are not supported";
		return -1;
	default:
		*why = "unknown compression format";
		return -1;
	}
}

/*
 * xpress.c - MS-XCA plain LZ77 and LZNT1 decompression for ETL buffers.
 * Written from the MS-XCA specification ([MS-XCA] 2.4 and 2.5).
 */
#include <string.h>

#include "etl/xpress.h"

int
xpress_lz77_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
    const char **why)
{
	size_t ip = 0, op = 0, nibble = 0;
	int have_nibble = 0, nbits = 0;
	uint32_t flags = 0;

	while (op < outlen) {
		if (nbits == 0) {
			if (ip + 4 > inlen)
				goto short_input;
			flags = (uint32_t)in[ip] | (uint32_t)in[ip + 1] << 8 |
			    (uint32_t)in[ip + 2] << 16 | (uint32_t)in[ip + 3] << 24;
			ip += 4;
			nbits = 32;
		}
		nbits--;
		if (!(flags >> nbits & 1)) {
			if (ip >= inlen)
				goto short_input;
			out[op++] = in[ip++];
			continue;
		}
		if (ip + 2 > inlen)
			goto short_input;
		uint32_t token = (uint32_t)in[ip] | (uint32_t)in[ip + 1] << 8;
		ip += 2;
		size_t dist = (token >> 3) + 1, len = token & 7;
		if (len == 7) {
			if (!have_nibble) {
				if (ip >= inlen)
					goto short_input;
				nibble = ip++;
				len = in[nibble] & 15;
				have_nibble = 1;
			} else {
				len = in[nibble] >> 4;
				have_nibble = 0;
			}
			if (len == 15) {
				if (ip >= inlen)
					goto short_input;
				len = in[ip++];
				if (len == 255) {
					if (ip + 2 > inlen)
						goto short_input;
					len = (size_t)in[ip] | (size_t)in[ip + 1] << 8;
					ip += 2;
					if (len == 0) {
						if (ip + 4 > inlen)
							goto short_input;
						len = (size_t)in[ip] | (size_t)in[ip + 1] << 8 |
						    (size_t)in[ip + 2] << 16 | (size_t)in[ip + 3] << 24;
						ip += 4;
					}
					if (len < 15 + 7) {
						*why = "bad match length";
						return -1;
					}
					len -= 15 + 7;
				}
				len += 15;
			}
			len += 7;
		}
		len += 3;
		if (dist > op) {
			*why = "match distance before start of output";
			return -1;
		}
		if (len > outlen - op) {
			*why = "match runs past the expected size";
			return -1;
		}
		uint8_t *d = out + op;
		const uint8_t *s = d - dist;
		if (dist >= 8 && op + len + 8 <= outlen) {
			/* 8 bytes at a time (may write up to 7 bytes past the match, inside OUT,
			 * which later output overwrites): most matches are short */
			for (size_t i = 0; i < len; i += 8)
				memcpy(d + i, s + i, 8);
		} else if (dist >= len)
			memcpy(d, s, len);
		else
			for (size_t i = 0; i < len; i++)
				d[i] = s[i];
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

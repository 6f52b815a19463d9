/*
 * xpress_ref.h - the plain MS-XCA LZ77 decoder ([MS-XCA] 2.4: one token at a
 * time, one byte at a time), as lib/etl/xpress.c had it before it copied
 * literal runs and matches in blocks.  The reference xpressdiff and the
 * fuzz_xpress harness hold the library's decoder to: the same bytes, or the
 * same message, for every input.  Header-only, like xorshift.h.
 */
#ifndef ETLKIT_XPRESS_REF_H
#define ETLKIT_XPRESS_REF_H

#include <stddef.h>
#include <stdint.h>

static inline int
xpress_ref_lz77(const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen, const char **why)
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
		for (size_t i = 0; i < len; i++, op++)
			out[op] = out[op - dist];
	}
	return 0;
short_input:
	*why = "compressed data ends early";
	return -1;
}

#endif

/*
 * fuzz_xpress - libFuzzer harness for the ETL buffer decompressors
 * (lib/etl/xpress.c): MS-XCA LZ77 "XPRESS", LZNT1, and the dispatcher.
 *
 * INPUT:  byte 0 picks the format (2 LZNT1, 3 XPRESS, 4 Huffman, other
 *         values too), bytes 1-2 the output size (little-endian, up to
 *         64 KiB, the usual ETL buffer), the rest is compressed data.
 * CHECKS: no read or write outside either buffer (both are allocated to
 *         their exact size, so ASan sees one byte too far), a message on
 *         every failure, the same answer twice (no hidden state), and for
 *         LZ77 the answer of the plain decoder of tests/tools/lib/xpress_ref.h
 *         (the same bytes, or the same message).
 */
#include "etl/xpress.h"
#include "xpress_ref.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int format, r1, r2;
	size_t outlen, inlen;
	uint8_t *in, *out1, *out2;
	const char *why;

	if (size < 3)
		return 0;
	format = data[0] % 6;
	outlen = (size_t)(data[1] | data[2] << 8) + 1;
	inlen = size - 3;
	in = malloc(inlen ? inlen : 1);
	memcpy(in, data + 3, inlen);
	out1 = malloc(outlen);
	out2 = malloc(outlen);

	why = NULL;
	r1 = etl_decompress(format, in, inlen, out1, outlen, &why);
	if (r1 != 0 && (r1 != -1 || why == NULL || *why == '\0'))
		abort();
	why = NULL;
	r2 = etl_decompress(format, in, inlen, out2, outlen, &why);
	if (r1 != r2 || (r1 == 0 && memcmp(out1, out2, outlen) != 0))
		abort();
	/* the format-specific entry points directly, too; LZ77 as the reference does it */
	const char *ref_why = NULL;
	why = NULL;
	r1 = xpress_lz77_decompress(in, inlen, out1, outlen, &why);
	if (r1 != 0 && why == NULL)
		abort();
	r2 = xpress_ref_lz77(in, inlen, out2, outlen, &ref_why);
	if (r1 != r2 || (r1 == 0 ? memcmp(out1, out2, outlen) != 0 : strcmp(why, ref_why) != 0))
		abort();
	why = NULL;
	if (lznt1_decompress(in, inlen, out2, outlen, &why) != 0 && why == NULL)
		abort();
	free(in);
	free(out1);
	free(out2);
	return 0;
}

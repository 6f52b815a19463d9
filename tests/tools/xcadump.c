/*
 * xcadump - run lib/etl/xpress.c's decompressors on raw bytes (a test tool:
 * published MS-XCA vectors in, what etl2evt would see out).
 *
 * USAGE:  xcadump xpress|lznt1|huffman SIZE [FILE]
 * INPUT:  the compressed bytes (FILE or stdin); SIZE is the decompressed
 *         size, as an ETL buffer header gives it.
 * OUTPUT: the SIZE decompressed bytes on stdout, e.g. for the LZNT1
 *         chunk "\x0c\xb0\x00Hello wo\x00rld" and SIZE 11: "Hello world".
 * Exit: 0; 1 when the data does not decompress (the reason on stderr);
 * 2 usage.
 */
#include "base/cli.h"
#include "etl/xpress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
usage(int status)
{
	fprintf(status ? stderr : stdout, "usage: xcadump xpress|lznt1|huffman SIZE [FILE]\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	cli_init(argv[0]);
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		usage(0);
	if (argc < 3 || argc > 4)
		usage(2);
	int format = !strcmp(argv[1], "xpress") ? COMPRESSION_FORMAT_XPRESS :
	    !strcmp(argv[1], "lznt1") ? COMPRESSION_FORMAT_LZNT1 :
	    !strcmp(argv[1], "huffman") ? COMPRESSION_FORMAT_XPRESS_HUFF : -1;
	if (format < 0)
		usage(2);
	size_t outlen = (size_t)cli_integer("SIZE", argv[2]);
	if (outlen == 0 || outlen > (64u << 20))
		cli_usage_error("SIZE is 1 to 64 MiB");
	FILE *fp = argc == 4 ? fopen(argv[3], "rb") : stdin;
	if (!fp)
		cli_fatal("%s: cannot open", argv[3]);
	size_t n = 0, cap = 1 << 16, got;
	uint8_t *in = xmalloc(cap);
	while ((got = fread(in + n, 1, cap - n, fp)) > 0)
		if ((n += got) == cap)
			in = xrealloc(in, cap *= 2);
	uint8_t *out = xmalloc(outlen);
	const char *why = NULL;
	if (etl_decompress(format, in, n, out, outlen, &why) < 0) {
		cli_warn("%s", why ? why : "cannot decompress");
		return 1;
	}
	if (fwrite(out, 1, outlen, stdout) != outlen || fflush(stdout) != 0)
		cli_fatal("write error");
	free(in);
	free(out);
	return 0;
}

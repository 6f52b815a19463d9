/*
 * xpress.h - the decompressors Windows uses for compressed ETL buffers
 * (RtlDecompressBuffer formats): MS-XCA plain LZ77 ("XPRESS", format 3)
 * and LZNT1 (format 2).  Xpress-Huffman (format 4) is recognised and
 * refused with a clear error.
 *
 * All functions are bounded by both buffers and never read or write
 * outside them, whatever the input.
 */
#ifndef ETLKIT_XPRESS_H
#define ETLKIT_XPRESS_H

#include <stddef.h>
#include <stdint.h>

#define COMPRESSION_FORMAT_LZNT1 2
#define COMPRESSION_FORMAT_XPRESS 3
#define COMPRESSION_FORMAT_XPRESS_HUFF 4

/*
 * Decompresses IN[0..inlen) into OUT, producing exactly OUTLEN bytes.
 * Returns 0, or -1 with *why set to a static message (corrupt or
 * short input, unsupported format).
 */
int xpress_lz77_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
    const char **why);
int lznt1_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
    const char **why);
/* Dispatches on FORMAT (COMPRESSION_FORMAT_*). */
int etl_decompress(int format, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
    const char **why);

#endif

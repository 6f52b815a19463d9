/*
 * tracelogging.c - TraceLogging payload decoding (see tracelogging.h).  The
 * metadata layout is the one TraceLoggingProvider.h emits: u16 size,
 * tag bytes (chained by bit 7), the event name, then per field: name,
 * InType (bits 5-6: 0x20 constant count (u16 in the metadata), 0x40
 * variable count (u16 in the data), 0x60 custom; bit 7: an OutType byte
 * follows, whose bit 7 chains tag bytes).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "etl/etl.h"
#include "etl/tracelogging.h"

enum {
	TL_NULL, TL_USTR, TL_ASTR, TL_I8, TL_U8, TL_I16, TL_U16, TL_I32, TL_U32, TL_I64, TL_U64,
	TL_FLOAT, TL_DOUBLE, TL_BOOL32, TL_BINARY, TL_GUID, TL_POINTER, TL_FILETIME,
	TL_SYSTEMTIME, TL_SID, TL_HEX32, TL_HEX64, TL_CSTR, TL_CASTR, TL_STRUCT, TL_CBINARY
};

/*
 * A field's text stops at TL_VALUE_MAX - 1 bytes (a long array is cut
 * there, hex in whole pairs), as when it lived in a fixed buffer.
 */
#define TL_VALUE_MAX 8192

static void
cut_value(struct strbuf *v)
{
	if (v->len >= TL_VALUE_MAX)
		strbuf_truncate(v, TL_VALUE_MAX - 1);
}

static void
vhex(struct strbuf *v, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < n && v->len + 3 < TL_VALUE_MAX; i++) {
		strbuf_addc(v, hx[p[i] >> 4]);
		strbuf_addc(v, hx[p[i] & 15]);
	}
}

/* One value of TYPE at DATA+*off.  Returns 0 or -1 (data too short / unknown type). */
static int
one_value(int type, const uint8_t *d, size_t dlen, size_t *off, unsigned psize, struct strbuf *v)
{
	size_t o = *off, used, need;
	char tmp[1024];

	switch (type) {
	case TL_USTR:
		etl_wstr(d + o, dlen - o, tmp, sizeof tmp, &used);
		if (o + used > dlen || (used >= 2 && etl_u16(d + o + used - 2) != 0 && o + used == dlen &&
		    0))
			return -1;
		strbuf_adds(v, tmp);
		*off = o + used;
		return 0;
	case TL_ASTR:
		etl_astr(d + o, dlen - o, tmp, sizeof tmp, &used);
		strbuf_adds(v, tmp);
		*off = o + used;
		return 0;
	case TL_CSTR: case TL_CASTR: case TL_BINARY: case TL_CBINARY:
		if (o + 2 > dlen)
			return -1;
		need = etl_u16(d + o);
		o += 2;
		if (o + need > dlen)
			return -1;
		if (type == TL_CSTR) {
			etl_wstr(d + o, need, tmp, sizeof tmp, NULL);
			strbuf_adds(v, tmp);
		} else if (type == TL_CASTR) {
			etl_astr(d + o, need, tmp, sizeof tmp, NULL);
			strbuf_adds(v, tmp);
		} else
			vhex(v, d + o, need);
		*off = o + need;
		return 0;
	}
	static const unsigned char sizes[] = { 0, 0, 0, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 4, 0, 16, 0, 8,
	    16, 0, 4, 8 };
	if (type == TL_SID) {
		if (o + 8 > dlen)
			return -1;
		need = 8 + 4 * (size_t)d[o + 1];
		if (o + need > dlen)
			return -1;
		uint64_t auth = 0;
		for (int i = 2; i < 8; i++)
			auth = auth << 8 | d[o + i];
		strbuf_addf(v, "S-%u-%" PRIu64, d[o], auth);
		for (size_t i = 0; i < d[o + 1]; i++)
			strbuf_addf(v, "-%u", etl_u32(d + o + 8 + 4 * i));
		*off = o + need;
		return 0;
	}
	if (type <= TL_NULL || type >= (int)sizeof sizes)
		return -1;
	need = type == TL_POINTER ? psize : sizes[type];
	if (need == 0 || o + need > dlen)
		return -1;
	const uint8_t *p = d + o;
	switch (type) {
	case TL_I8: strbuf_addf(v, "%d", (int8_t)p[0]); break;
	case TL_U8: strbuf_addf(v, "%u", p[0]); break;
	case TL_I16: strbuf_addf(v, "%d", (int16_t)etl_u16(p)); break;
	case TL_U16: strbuf_addf(v, "%u", etl_u16(p)); break;
	case TL_I32: strbuf_addf(v, "%d", (int32_t)etl_u32(p)); break;
	case TL_U32: strbuf_addf(v, "%u", etl_u32(p)); break;
	case TL_I64: strbuf_addf(v, "%" PRId64, (int64_t)etl_u64(p)); break;
	case TL_U64: strbuf_addf(v, "%" PRIu64, etl_u64(p)); break;
	case TL_FLOAT: {
		float f;
		uint32_t u = etl_u32(p);
		memcpy(&f, &u, 4);
		strbuf_addf(v, "%.9g", (double)f);
		break;
	}
	case TL_DOUBLE: {
		double f;
		uint64_t u = etl_u64(p);
		memcpy(&f, &u, 8);
		strbuf_addf(v, "%.17g", f);
		break;
	}
	case TL_BOOL32: strbuf_add(v, etl_u32(p) ? "true" : "false", etl_u32(p) ? 4 : 5); break;
	case TL_GUID: etl_guid_str(tmp, p); strbuf_adds(v, tmp); break;
	case TL_POINTER: strbuf_addf(v, "0x%" PRIx64, psize == 8 ? etl_u64(p) : etl_u32(p)); break;
	case TL_FILETIME: etl_filetime_str(tmp, etl_u64(p)); strbuf_adds(v, tmp); break;
	case TL_SYSTEMTIME:
		strbuf_addf(v, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", etl_u16(p), etl_u16(p + 2),
		    etl_u16(p + 6), etl_u16(p + 8), etl_u16(p + 10), etl_u16(p + 12), etl_u16(p + 14));
		break;
	case TL_HEX32: strbuf_addf(v, "0x%x", etl_u32(p)); break;
	case TL_HEX64: strbuf_addf(v, "0x%" PRIx64, etl_u64(p)); break;
	default: return -1;
	}
	*off = o + need;
	return 0;
}

static int
decode_fields(const uint8_t *s, size_t slen, const uint8_t *d, size_t dlen, unsigned psize,
    char *evname, size_t evcap, tl_field_fn fn, void *ctx, struct strbuf *v)
{
	size_t q = 2, off = 0, used;
	char name[256];

	if (slen < 3)
		return -1;
	size_t total = etl_u16(s);
	if (total < slen)
		slen = total;
	while (q < slen && (s[q] & 0x80))	/* event tags */
		q++;
	q++;
	if (q >= slen)
		return -1;
	etl_astr(s + q, slen - q, evname, evcap, &used);
	q += used;
	while (q < slen) {
		etl_astr(s + q, slen - q, name, sizeof name, &used);
		q += used;
		if (q >= slen)
			return -1;
		unsigned in = s[q++], out = 0;
		if (in & 0x80) {
			if (q >= slen)
				return -1;
			out = s[q++];
			if (out & 0x80)
				while (q < slen && (s[q++] & 0x80))
					;
		}
		int type = (int)(in & 0x1f);
		unsigned cflag = in & 0x60;
		size_t count = 1;
		int array = 0;
		if (cflag == 0x20) {
			if (q + 2 > slen)
				return -1;
			count = etl_u16(s + q);
			q += 2;
			array = 1;
		} else if (cflag == 0x60)
			return -1;	/* custom serializers: no schema we can read */
		if (type == TL_STRUCT) {
			if (array)
				return -1;
			continue;	/* members follow as ordinary fields */
		}
		if (cflag == 0x40) {
			if (off + 2 > dlen)
				return -1;
			count = etl_u16(d + off);
			off += 2;
			array = 1;
		}
		strbuf_reset(v);
		if (array && (type == TL_U8 || type == TL_I8 || (type == TL_U16 && (out & 0x7f) == 2))) {
			/* byte arrays as hex, UTF-16 code unit arrays shown as a string */
			size_t bytes = count * (type == TL_U16 ? 2 : 1);
			if (off + bytes > dlen)
				return -1;
			if (type == TL_U16) {
				char tmp[4096];
				etl_wstr(d + off, bytes, tmp, sizeof tmp, NULL);
				strbuf_adds(v, tmp);
			} else
				vhex(v, d + off, bytes);
			off += bytes;
			fn(ctx, name, strbuf_str(v), v->len);
			continue;
		}
		for (size_t i = 0; i < count; i++) {
			if (i) {
				strbuf_add(v, ",", 1);
				cut_value(v);
			}
			size_t before = v->len, at = off;
			if (one_value(type, d, dlen, &off, psize, v) < 0)
				return -1;
			/* OutType: an integer shown as a boolean or in hex */
			unsigned ot = out & 0x7f;
			if ((ot == 3 || ot == 4) && type >= TL_I8 && type <= TL_U64) {
				uint64_t x = 0;
				for (size_t k = 0; k < off - at && k < 8; k++)
					x |= (uint64_t)d[at + k] << (8 * k);
				strbuf_truncate(v, before);
				if (ot == 3)
					strbuf_add(v, x ? "true" : "false", x ? 4 : 5);
				else
					strbuf_addf(v, "0x%" PRIx64, x);
			}
			cut_value(v);
		}
		(void)out;
		fn(ctx, name, strbuf_str(v), v->len);
	}
	return off == dlen ? 0 : -1;
}

int
tl_decode(const uint8_t *s, size_t slen, const uint8_t *d, size_t dlen, unsigned psize,
    char *evname, size_t evcap, tl_field_fn fn, void *ctx)
{
	struct strbuf v = STRBUF_INIT;
	int rc = decode_fields(s, slen, d, dlen, psize, evname, evcap, fn, ctx, &v);

	strbuf_release(&v);
	return rc;
}

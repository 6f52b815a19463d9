/*
 * tdhbuild.c - TRACE_EVENT_INFO blobs from a description (see tdhbuild.h),
 * in the layout lib/etl/tdh.c reads (its header comment has the offsets).
 */
#include <string.h>

#include "etl/tdhbuild.h"

struct wb {
	uint8_t *out;
	size_t cap, n;
};

static void
wb_bytes(struct wb *w, size_t at, const void *p, size_t n)
{
	if (at + n <= w->cap)
		memcpy(w->out + at, p, n);
}

static void
wb_u16(struct wb *w, size_t at, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	wb_bytes(w, at, b, 2);
}

static void
wb_u32(struct wb *w, size_t at, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	wb_bytes(w, at, b, 4);
}

/* Appends S as UTF-16Z; returns its offset (0 for NULL). */
static uint32_t
wb_str(struct wb *w, const char *s)
{
	if (!s)
		return 0;
	uint32_t at = (uint32_t)w->n;
	for (size_t i = 0; s[i]; i++)
		wb_u16(w, w->n + 2 * i, (uint8_t)s[i]);
	w->n += 2 * strlen(s);
	wb_u16(w, w->n, 0);
	w->n += 2;
	return at;
}

size_t
tdh_build_event_info(const struct tdh_event_def *d, uint8_t *out, size_t cap)
{
	struct wb w = { out, out ? cap : 0, 112 + 24 * (size_t)d->nprops };
	if (w.cap)
		memset(out, 0, w.n < w.cap ? w.n : w.cap);
	wb_bytes(&w, 0, d->guid, 16);
	wb_u16(&w, 32, d->id);
	uint8_t desc[4] = { d->version, d->channel, d->level, d->opcode };
	wb_bytes(&w, 34, desc, 4);
	wb_u16(&w, 38, d->task);
	wb_u32(&w, 40, (uint32_t)d->keyword);
	wb_u32(&w, 44, (uint32_t)(d->keyword >> 32));
	wb_u32(&w, 48, 0);	/* DecodingSourceXMLFile */
	wb_u32(&w, 52, wb_str(&w, d->provider));
	wb_u32(&w, 68, wb_str(&w, d->task_name));
	wb_u32(&w, 72, wb_str(&w, d->opcode_name));
	wb_u32(&w, 92, wb_str(&w, d->event_name));
	wb_u32(&w, 100, d->nprops);
	wb_u32(&w, 104, d->ntop ? d->ntop : d->nprops);
	wb_u32(&w, 108, 1);	/* TEMPLATE_EVENT_DATA */
	for (unsigned i = 0; i < d->nprops; i++) {
		const struct tdh_prop_def *p = &d->props[i];
		size_t at = 112 + 24 * (size_t)i;
		wb_u32(&w, at, p->flags);
		wb_u32(&w, at + 4, wb_str(&w, p->name));
		wb_u16(&w, at + 8, p->in);
		wb_u16(&w, at + 10, p->out);
		wb_u32(&w, at + 12, wb_str(&w, p->map));
		wb_u16(&w, at + 16, p->count);
		wb_u16(&w, at + 18, p->length);
		wb_u32(&w, at + 20, 0);
	}
	return w.n;
}

size_t
tdh_build_map_info(const uint8_t *guid, const char *name, int bitmap, const uint32_t *values,
    const char *const *names, size_t n, uint8_t *out, size_t cap)
{
	/* offsets in the EVENT_MAP_INFO are from its start, after the GUID */
	struct wb w = { out ? out + 16 : NULL, out && cap > 16 ? cap - 16 : 0, 16 + 8 * n };
	if (w.cap)
		memset(w.out, 0, w.n < w.cap ? w.n : w.cap);
	if (out && cap >= 16)
		memcpy(out, guid, 16);
	wb_u32(&w, 0, wb_str(&w, name));
	wb_u32(&w, 4, bitmap ? 2 : 1);
	wb_u32(&w, 8, (uint32_t)n);
	wb_u32(&w, 12, 0);	/* values are ULONGs */
	for (size_t i = 0; i < n; i++) {
		wb_u32(&w, 16 + 8 * i, wb_str(&w, names[i]));
		wb_u32(&w, 16 + 8 * i + 4, values[i]);
	}
	return 16 + w.n;
}

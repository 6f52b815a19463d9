/*
 * evtwrite.c - the evt writer's out-of-line parts: growing a line, the
 * escape table, and whole header and metadata lines (evtwrite.h has the
 * inline appenders every event line goes through).
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/cli.h"
#include "evt/evtwrite.h"

/* docs/evt-format.md §4: control bytes, DEL and '%' everywhere; ';' in the stack column */
const uint8_t evtw_escapes[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
	[0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
	[0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
	[0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
	[0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, [0x7f] = 1,
	['%'] = EVTW_ESC_ALWAYS,
	[';'] = EVTW_ESC_STACK,
};

void
evtw_grow(struct evtw_line *l, size_t k)
{
	while (l->n + k + 1 > l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		l->b = xrealloc(l->b, l->cap);
	}
}

void
evtw_free(struct evtw_line *l)
{
	free(l->b);
	l->b = NULL;
	l->n = l->cap = 0;
}

/* "\tkey=value" for each pair with a value, the newline, and out */
static void
end_with_pairs(struct evtw_line *l, struct outbuf *ob, const struct evtw_pair *kv, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (kv[i].value)
			evtw_kv_s(l, kv[i].key, kv[i].value);
	evtw_end(l);
	ob_write(ob, l->b, l->n);
	evtw_free(l);
}

void
evtw_header(struct outbuf *ob, const struct evtw_pair *kv, size_t n)
{
	struct evtw_line l = { 0 };

	evtw_str(&l, "#evt\t1");
	end_with_pairs(&l, ob, kv, n);
}

void
evtw_meta(struct outbuf *ob, const char *name, const struct evtw_pair *kv, size_t n)
{
	struct evtw_line l = { 0 };

	evtw_ch(&l, '#');
	evtw_str(&l, name);
	end_with_pairs(&l, ob, kv, n);
}

void
evtw_skipped(struct outbuf *ob, const char *what, uint64_t count, const char *detail)
{
	char n[24];

	if (count == 0)
		return;
	snprintf(n, sizeof n, "%llu", (unsigned long long)count);
	const struct evtw_pair kv[] = { { "what", what }, { "count", n }, { "detail", detail } };
	evtw_meta(ob, "skipped", kv, sizeof kv / sizeof kv[0]);
}

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

const char evtw_dec2[200] =
	"00010203040506070809"
	"10111213141516171819"
	"20212223242526272829"
	"30313233343536373839"
	"40414243444546474849"
	"50515253545556575859"
	"60616263646566676869"
	"70717273747576777879"
	"80818283848586878889"
	"90919293949596979899";

const uint64_t evtw_pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

const char evtw_hex2[512] =
	"0001020304050607"
	"08090a0b0c0d0e0f"
	"1011121314151617"
	"18191a1b1c1d1e1f"
	"2021222324252627"
	"28292a2b2c2d2e2f"
	"3031323334353637"
	"38393a3b3c3d3e3f"
	"4041424344454647"
	"48494a4b4c4d4e4f"
	"5051525354555657"
	"58595a5b5c5d5e5f"
	"6061626364656667"
	"68696a6b6c6d6e6f"
	"7071727374757677"
	"78797a7b7c7d7e7f"
	"8081828384858687"
	"88898a8b8c8d8e8f"
	"9091929394959697"
	"98999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7"
	"a8a9aaabacadaeaf"
	"b0b1b2b3b4b5b6b7"
	"b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7"
	"c8c9cacbcccdcecf"
	"d0d1d2d3d4d5d6d7"
	"d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7"
	"e8e9eaebecedeeef"
	"f0f1f2f3f4f5f6f7"
	"f8f9fafbfcfdfeff";

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

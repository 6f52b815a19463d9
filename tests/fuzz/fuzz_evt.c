/*
 * fuzz_evt - libFuzzer harness for the evt line parser (lib/evt/evt.c):
 * evt_classify, evt_parse_header, evt_parse, evt_attr, the escaping
 * round trip and the number formatters fed with parsed numbers.
 *
 * INPUT:  any bytes; split at '\n' like the line reader does.
 * CHECKS: no crash/UB, plus properties: a parsed event's fields lie
 *         inside its line, escape->unescape gives back the bytes,
 *         a formatted time parses back to the same nanoseconds.
 */
#include "evt/evt.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_escape_roundtrip(const char *s, size_t n, int in_stack)
{
	char *esc = malloc(3 * n + 1);
	size_t m, back;
	size_t i;

	m = evt_escape(esc, s, n, in_stack);
	esc[m] = '\0';
	/* escaped text never contains what the format reserves */
	for (i = 0; i < m; i++) {
		unsigned char c = (unsigned char)esc[i];

		if (c < 0x20 || c == 0x7f || (in_stack && c == ';'))
			abort();
	}
	back = evt_unescape(esc, m);
	if (back != n || memcmp(esc, s, n) != 0)
		abort();
	free(esc);
}

static void
check_number_text(const char *text, double v)
{
	char out[64];
	double again;

	/* the parser refuses what the formatters cannot hold */
	if (!(fabs(v) < 1e12))
		abort();
	/* time column: exactly 6 fraction digits, parses back to the same ns */
	evt_format_time(out, v);
	if (evt_parse_decimal(out, &again) < 0)
		abort();
	if (fabs(again - v) > 1e-6 + fabs(v) * 1e-12)
		abort();
	evt_format_weight(out, v);
	if (evt_parse_decimal(out, &again) < 0)
		abort();
	(void)text;
}

static void
one_line(char *line, size_t len)
{
	static struct evt_event ev;
	static struct evt_header h;
	const char *why = NULL;
	char *copy;
	int i;

	switch (evt_classify(line, len)) {
	case EVT_BLANK:
		return;
	case EVT_META:
		return;
	case EVT_HEADER:
		if (evt_parse_header(line, len, &h, &why) == 0) {
			if (h.version < 1 || h.version > EVT_VERSION || h.nkv > EVT_MAX_ATTRS)
				abort();
			for (i = 0; i < h.nkv; i++)
				if (h.kv[i].key < line || h.kv[i].val > line + len)
					abort();
			(void)evt_header_get(&h, "source");
		} else if (why == NULL)
			abort();
		return;
	case EVT_EVENT:
		break;
	}
	copy = malloc(len + 1);
	memcpy(copy, line, len + 1);
	if (evt_parse(line, len, &ev, &why) == 0) {
		if (ev.stack < line || ev.stack + ev.stack_len != line + len)
			abort();
		if (ev.nattr < 0 || ev.nattr > EVT_MAX_ATTRS)
			abort();
		if (ev.cpu < -1 || *ev.kind == '\0')
			abort();
		for (i = 0; i < ev.nattr; i++) {
			if (ev.attr[i].key < line || ev.attr[i].val > ev.stack)
				abort();
			if (*ev.attr[i].key == '\0')
				abort();
		}
		(void)evt_attr(&ev, "routine");
		check_number_text(ev.time_text, ev.time_ms);
		check_number_text(ev.weight_text, ev.weight);
		check_escape_roundtrip(ev.stack, ev.stack_len, 1);
		evt_unescape(ev.stack, ev.stack_len);
	} else if (why == NULL)
		abort();
	check_escape_roundtrip(copy, len, 0);
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	char *p, *end, *nl;

	memcpy(buf, data, size);
	buf[size] = '\0';
	p = buf;
	end = buf + size;
	while (p < end) {
		size_t n;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		*nl = '\0';
		n = (size_t)(nl - p);
		if (n > 0 && p[n - 1] == '\r')
			p[--n] = '\0';
		one_line(p, n);
		p = nl + 1;
	}
	/*
	 * exact nanosecond formatting of any int64 (parses back when within
	 * the 1e12 ms the parser accepts), and the formatters on any double
	 * (sums of many weights, NaN, inf): 32 bytes, no UB
	 */
	if (size >= 8) {
		int64_t ns;
		double v, d;
		char out[64];

		memcpy(&ns, data, 8);
		memcpy(&d, data, 8);
		memset(out, 'x', sizeof(out));
		evt_format_time_ns(out, ns);
		if ((ns < 900000000000000000LL && ns > -900000000000000000LL) &&
		    evt_parse_decimal(out, &v) < 0)
			abort();
		if (evt_format_time(out, d) >= 32 || strlen(out) >= 32)
			abort();
		if (evt_format_weight(out, d) >= 32 || strlen(out) >= 32)
			abort();
	}
	free(buf);
	return 0;
}

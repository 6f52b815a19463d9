/*
 * fuzz_evt - libFuzzer harness for the evt line reader (lib/evt/evt.c):
 * evt_classify, evt_parse_header, evt_split and the column parsers over
 * it, evt_parse, evt_attr, the escaping round trip and the number
 * formatters fed with parsed numbers.
 *
 * INPUT:  any bytes; split at '\n' like the line reader does.
 * CHECKS: no crash/UB, plus properties: evt_split leaves the line as it
 *         was and its columns lie inside it, a line evt_parse accepts
 *         evt_split and every column parser accept with the same values,
 *         a parsed event's fields lie inside its line, escape->unescape
 *         gives back the bytes, a formatted time parses back to the same
 *         nanoseconds.
 */
#include "evt/evt.h"
#include "fuzz.h"

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

/*
 * The splitter on LINE: the line unchanged, the columns inside it and in
 * order.  Returns 0 when it split, with the numbers of the columns in C
 * checked against what evt_parse makes of the same line later.
 */
static int
check_split(char *line, size_t len, struct evt_cols *c)
{
	char *copy = malloc(len + 1);
	const char *why = NULL;
	struct evt_span stack;
	int i, r;

	memcpy(copy, line, len + 1);
	r = evt_split(line, len, c, &why);
	if (memcmp(copy, line, len + 1) != 0)
		abort();
	free(copy);
	if (r < 0) {
		if (why == NULL)
			abort();
		return -1;
	}
	for (i = 0; i < EVT_NCOLS; i++) {
		if (c->col[i].p < line || c->col[i].p + c->col[i].n > line + len)
			abort();
		if (i > 0 && c->col[i].p != c->col[i - 1].p + c->col[i - 1].n + 1)
			abort();
	}
	stack = evt_cols_stack(c);
	if (c->attrs < line || c->attrs > stack.p || stack.p + stack.n != line + len)
		abort();
	return 0;
}

/*
 * A line evt_parse took: the splitter's parsers agree with it.  HAS_NUL:
 * the line holds a NUL byte, which ends evt_event's C strings early (a key
 * "routine\0…=v" is "routine" to evt_attr, not to the splitter); lr_next()
 * never hands out such lines, so there the lookups by key are not compared.
 */
static void
check_split_agrees(struct evt_cols *c, const struct evt_event *ev, int has_nul)
{
	struct evt_span key, val;
	const char *why = NULL, *v;
	char *at = c->attrs;
	double t, w;
	int64_t ns;
	long pid, tid;
	int cpu, n = 0, r;
	size_t vn;

	if (evt_cols_time(c, &t, &why) < 0 || t != ev->time_ms ||
	    evt_cols_weight(c, &w, &why) < 0 || w != ev->weight ||
	    evt_cols_cpu(c, &cpu, &why) < 0 || cpu != ev->cpu ||
	    evt_cols_pid(c, &pid, &why) < 0 || pid != ev->pid ||
	    evt_cols_tid(c, &tid, &why) < 0 || tid != ev->tid)
		abort();
	/* the exact weight is the double one within rounding */
	if (evt_cols_weight_ns(c, &ns, &why) == 0 && fabs((double)ns / 1e6 - w) > 1e-6 + fabs(w) * 1e-12)
		abort();
	while ((r = evt_next_attr(c, &at, &key, &val, &why)) > 0)
		n++;
	if (r < 0 || n != ev->nattr || evt_cols_stack(c).p != at)
		abort();
	v = evt_cols_attr(c, "routine", &vn);
	if (!has_nul && (v == NULL) != (evt_attr(ev, "routine") == NULL))
		abort();
}

static void
one_line(char *line, size_t len)
{
	static struct evt_event ev;
	static struct evt_header h;
	const char *why = NULL;
	struct evt_cols c;
	char *copy;
	int i, split, has_nul;

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
	has_nul = memchr(line, '\0', len) != NULL;
	split = check_split(copy, len, &c);
	if (evt_parse(line, len, &ev, &why) == 0) {
		if (split < 0)
			abort();
		check_split_agrees(&c, &ev, has_nul);
		if (ev.stack < line || ev.stack + ev.stack_len != line + len)
			abort();
		if (ev.nattr < 0 || ev.nattr > EVT_MAX_ATTRS)
			abort();
		/* a NUL byte ends a C string early: lr_next() never hands out such lines */
		if (ev.cpu < -1 || (*ev.kind == '\0' && !has_nul))
			abort();
		for (i = 0; i < ev.nattr; i++) {
			if (ev.attr[i].key < line || ev.attr[i].val > ev.stack)
				abort();
			if (*ev.attr[i].key == '\0' && !has_nul)
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
	fuzz_each_line(data, size, 1, one_line);
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
	return 0;
}

/*
 * evtrepeat - a long evt stream from a short one: the events of FILE
 * again and again, each copy shifted later in time by the trace's span,
 * so that a few MB of a real etl2evt stream becomes gigabytes of a
 * plausible one, through a pipe, without a file that size on disk (a
 * test tool, for the memory tests of the DPC/ISR reports; not installed).
 *
 * USAGE:  evtrepeat (-n COPIES | -b BYTES) FILE
 *
 * INPUT:  an evt stream (docs/evt-format.md) in a file (it is read twice).
 * OUTPUT: its #evt header, duration_ms= set to the whole stream's span;
 *         then its event lines COPIES times (or until BYTES bytes are out,
 *         at a line's end), copy k with time_ms, end_ms=, logged_ms= and
 *         ready_ms= later by k times the period: the input's span (first
 *         time to last order key) rounded up to the ms, plus 1 ms.  So the
 *         order key still never decreases (§2.2).  Other # lines come once,
 *         with the first copy.
 *
 *         $ evtrepeat -b 100000000 incident.evt | render dpc
 *         0.007500	DPC	4	?	-1	-1	0.1643	...	end_ms=0.171800	 (copy 0)
 *         10001.007500	DPC	4	?	-1	-1	0.1643	...	end_ms=10001.171800	 (copy 1)
 *
 * Exit 0, or 2 when FILE cannot be read or is not evt.
 */
#include "base/cli.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const time_attrs[] = { "end_ms=", "logged_ms=", "ready_ms=" };

/* A time in ms with up to 6 fraction digits as integer ns; END is where it stopped. */
static int64_t
parse_ns(const char *s, const char **end)
{
	int neg = *s == '-';
	int64_t v = 0, frac = 0;
	int digits = 0;

	if (neg)
		s++;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			if (digits < 6) {
				frac = frac * 10 + (*s - '0');
				digits++;
			}
	while (digits++ < 6)
		frac *= 10;
	*end = s;
	v = v * 1000000 + frac;
	return neg ? -v : v;
}

/* NS as ms with 6 fraction digits at P; returns the bytes written (at most 28). */
static size_t
fmt_ns(char *p, int64_t ns)
{
	char tmp[24];
	size_t n = 0, k = 0;
	uint64_t v = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	int d;

	if (ns < 0)
		p[n++] = '-';
	for (d = 0; d < 6; d++, v /= 10)
		tmp[k++] = (char)('0' + v % 10);
	tmp[k++] = '.';
	do
		tmp[k++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (k > 0)
		p[n++] = tmp[--k];
	return n;
}

/* The time attribute starting at P (after a tab), or -1. */
static int
time_attr(const char *p)
{
	size_t k;

	for (k = 0; k < sizeof(time_attrs) / sizeof(time_attrs[0]); k++)
		if (strncmp(p, time_attrs[k], strlen(time_attrs[k])) == 0)
			return (int)k;
	return -1;
}

/*
 * One copy, cut into pieces: text as it is, each followed by a time to
 * write shifted (has_t), the last piece of a line marked eol.
 */
struct piece {
	size_t off, len;
	int64_t t;
	int has_t, eol, meta;
};

struct copy {
	char *text;
	size_t ntext, captext;
	struct piece *p;
	size_t n, cap;
	int64_t lo, hi;		/* the first time, the last order key */
};

static void
add_piece(struct copy *c, const char *s, size_t len, int has_t, int64_t t, int eol)
{
	XGROW(c->p, c->n, c->cap, 1024);
	while (c->ntext + len > c->captext) {
		c->captext = c->captext ? 2 * c->captext : 1 << 20;
		c->text = xrealloc(c->text, c->captext);
	}
	if (len > 0)
		memcpy(c->text + c->ntext, s, len);
	c->p[c->n].off = c->ntext;
	c->p[c->n].len = len;
	c->p[c->n].t = t;
	c->p[c->n].has_t = has_t;
	c->p[c->n].eol = eol;
	c->p[c->n].meta = 0;
	c->n++;
	c->ntext += len;
	if (has_t && t > c->hi)
		c->hi = t;
}

/* Event line L (with its newline) into the copy's pieces. */
static void
add_line(struct copy *c, const char *l)
{
	const char *p, *e, *from;
	int64_t t = parse_ns(l, &e);

	if (t < c->lo)
		c->lo = t;
	add_piece(c, "", 0, 1, t, 0);
	from = e;
	for (p = strchr(e, '\t'); p != NULL; p = strchr(p + 1, '\t')) {
		int k = time_attr(p + 1);

		if (k < 0)
			continue;
		e = p + 1 + strlen(time_attrs[k]);
		t = parse_ns(e, &e);
		add_piece(c, from, (size_t)(p + 1 + strlen(time_attrs[k]) - from), 1, t, 0);
		from = e;
		p = e - 1;
	}
	add_piece(c, from, strlen(from), 0, 0, 1);
}

static char outbuf[1 << 20];
static size_t nout;

static void
out_flush(void)
{
	if (nout && fwrite(outbuf, 1, nout, stdout) != nout)
		exit(EXIT_FATAL);
	nout = 0;
}

/* Writes copy C shifted by SHIFT ns; stops at a line's end once LIMIT bytes are out. */
static void
put_copy(const struct copy *c, int64_t shift, unsigned long long *out, unsigned long long limit)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct piece *pc = &c->p[i];

		if (nout + pc->len + 32 > sizeof(outbuf))
			out_flush();
		if (pc->len > sizeof(outbuf) - 32) {
			if (fwrite(c->text + pc->off, 1, pc->len, stdout) != pc->len)
				exit(EXIT_FATAL);
		} else {
			memcpy(outbuf + nout, c->text + pc->off, pc->len);
			nout += pc->len;
		}
		*out += pc->len;
		if (pc->has_t) {
			size_t n = fmt_ns(outbuf + nout, pc->t + shift);

			nout += n;
			*out += n;
		}
		if (pc->eol && limit && *out >= limit)
			return;
	}
}

int
main(int argc, char **argv)
{
	FILE *in;
	char *line = NULL, *header = NULL;
	size_t cap = 0;
	ssize_t len;
	struct copy cp;
	int64_t period;
	long copies = 0, k;
	unsigned long long bytes = 0, out = 0;
	int c;

	cli_init("evtrepeat");
	while ((c = getopt(argc, argv, "n:b:")) != -1)
		switch (c) {
		case 'n': copies = cli_integer("-n", optarg); break;
		case 'b': bytes = (unsigned long long)cli_number("-b", optarg); break;
		default: cli_usage_error("usage: evtrepeat (-n COPIES | -b BYTES) FILE");
		}
	if (optind + 1 != argc || (copies <= 0 && bytes == 0))
		cli_usage_error("usage: evtrepeat (-n COPIES | -b BYTES) FILE");
	if ((in = fopen(argv[optind], "r")) == NULL)
		cli_fatal("%s: cannot open", argv[optind]);
	memset(&cp, 0, sizeof(cp));
	cp.lo = INT64_MAX;
	cp.hi = INT64_MIN;
	while ((len = getline(&line, &cap, in)) > 0) {
		if (line[0] == '#') {
			if (header == NULL && strncmp(line, "#evt\t", 5) == 0)
				header = xstrdup(line);
			else {	/* other metadata: once, with the first copy */
				add_piece(&cp, line, (size_t)len, 0, 0, 1);
				cp.p[cp.n - 1].meta = 1;
			}
		} else if (line[0] != '\n' && line[0] != '\r')
			add_line(&cp, line);
	}
	fclose(in);
	free(line);
	if (header == NULL || cp.lo > cp.hi)
		cli_fatal("%s: not an evt stream with events", argv[optind]);
	period = ((cp.hi - cp.lo) / 1000000 + 2) * 1000000;
	if (copies <= 0)
		copies = (long)(bytes / cp.ntext + 1);
	/* the header, with the whole span */
	{
		char *d = strstr(header, "\tduration_ms=");

		if (d != NULL) {
			char *rest = strchr(d + 1, '\t'), num[32];

			fwrite(header, 1, (size_t)(d - header) + 13, stdout);
			fwrite(num, 1, fmt_ns(num, period * (copies - 1) + (cp.hi - cp.lo)), stdout);
			fputs(rest ? rest : "\n", stdout);
		} else
			fputs(header, stdout);
	}
	for (k = 0; k < copies && !(bytes && out >= bytes); k++) {
		put_copy(&cp, period * k, &out, bytes);
		if (k == 0) {	/* the metadata lines only once */
			size_t i, j = 0;

			for (i = 0; i < cp.n; i++)
				if (!cp.p[i].meta)
					cp.p[j++] = cp.p[i];
			cp.n = j;
		}
	}
	out_flush();
	free(cp.text);
	free(cp.p);
	free(header);
	return fflush(stdout) == 0 ? 0 : EXIT_FATAL;
}

/*
 * numfmt.c - numbers for people and TSV cells (see numfmt.h).
 */
#include "report/numfmt.h"
#include "base/outbuf.h"
#include "evt/evt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int
fmt_thousands(char *out, double v, int dec)
{
	char tmp[64], *dot;
	int n, i, o = 0, intlen, start = 0;

	n = snprintf(tmp, sizeof(tmp), "%.*f", dec, v);
	if (n < 0 || n >= (int)sizeof(tmp))
		return snprintf(out, 64, "%g", v);
	if (dec > 0) {
		while (n > 0 && tmp[n - 1] == '0')
			tmp[--n] = '\0';
		if (n > 0 && tmp[n - 1] == '.')
			tmp[--n] = '\0';
	}
	if (tmp[0] == '-') {
		out[o++] = '-';
		start = 1;
	}
	dot = strchr(tmp, '.');
	intlen = (dot ? (int)(dot - tmp) : n) - start;
	for (i = 0; i < intlen; i++) {
		if (i > 0 && (intlen - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = tmp[start + i];
	}
	if (dot) {
		strcpy(out + o, dot);
		o += (int)strlen(dot);
	}
	out[o] = '\0';
	if (strcmp(out, "-0") == 0)
		strcpy(out, "0"), o = 1;
	return o;
}

int
fmt_num(char *out, double v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		return snprintf(out, 32, "%.0f", v);
	return evt_format_weight(out, v);
}

void
fmt_tsv_text(struct outbuf *ob, const char *s)
{
	for (; *s; s++)
		ob_putc(ob, (*s == '\t' || *s == '\n' || *s == '\r') ? ' ' : *s);
}

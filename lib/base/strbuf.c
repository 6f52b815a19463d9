/*
 * strbuf.c - the growable string of strbuf.h: growing, printf-style
 * adding, and handing the text over.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/cli.h"
#include "base/strbuf.h"

void
strbuf_grow(struct strbuf *sb, size_t n)
{
	size_t cap = sb->cap ? sb->cap : 64;

	if (n >= SIZE_MAX / 2 - sb->len)
		cli_fatal("out of memory: a string of %zu bytes", n);
	while (cap - sb->len <= n)
		cap *= 2;
	if (cap != sb->cap || sb->s == NULL) {
		sb->s = xrealloc(sb->s, cap);
		sb->cap = cap;
	}
}

void
strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	char tmp[128];
	va_list again;
	int n;

	/* most pieces are numbers: format on the stack, copy once */
	va_copy(again, ap);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	if (n > 0 && (size_t)n < sizeof tmp)
		strbuf_add(sb, tmp, (size_t)n);
	else if (n > 0) {
		strbuf_grow(sb, (size_t)n);
		vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, again);
		sb->len += (size_t)n;
	}
	va_end(again);
}

void
strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void
strbuf_release(struct strbuf *sb)
{
	free(sb->s);
	sb->s = NULL;
	sb->len = sb->cap = 0;
}

char *
strbuf_detach(struct strbuf *sb)
{
	char *s = sb->s ? sb->s : xstrdup("");

	sb->s = NULL;
	sb->len = sb->cap = 0;
	return s;
}

/*
 * runtext.c - malloc'ed printf and escaped names for etlkit-run's
 * messages, records and report (runtext.h).
 */
#include "run/runtext.h"
#include "base/cli.h"
#include "evt/evt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

char *
runtext_printf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

char *
runtext_escaped(const char *s)
{
	size_t n = strlen(s);
	char *e = xmalloc(3 * n + 1);

	e[evt_escape(e, s, n, 0)] = '\0';
	return e;
}

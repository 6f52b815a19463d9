/*
 * runtext.c - malloc'ed printf (a base/strbuf.h string, handed over)
 * and escaped names for etlkit-run's messages, records and report
 * (runtext.h).
 */
#include "run/runtext.h"
#include "base/cli.h"
#include "base/strbuf.h"
#include "evt/evt.h"

#include <stdarg.h>
#include <string.h>

char *
runtext_printf(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb);
}

char *
runtext_escaped(const char *s)
{
	size_t n = strlen(s);
	char *e = xmalloc(3 * n + 1);

	e[evt_escape(e, s, n, 0)] = '\0';
	return e;
}

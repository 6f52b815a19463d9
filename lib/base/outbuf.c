/*
 * outbuf.c - buffered output (see outbuf.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "base/outbuf.h"
#include "base/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* output                                                              */

#define OB_CAP (1u << 16)

void
ob_open(struct outbuf *ob, const char *path)
{
	memset(ob, 0, sizeof(*ob));
	if (path == NULL || strcmp(path, "-") == 0) {
		ob->fp = stdout;
		ob->name = "<stdout>";
	} else {
		ob->fp = fopen(path, "w");
		if (ob->fp == NULL)
			cli_fatal("%s: %s", path, strerror(errno));
		ob->name = path;
	}
	ob->cap = OB_CAP;
	ob->buf = xmalloc(ob->cap);
}

void
ob_flush(struct outbuf *ob)
{
	if (ob->len > 0) {
		if (fwrite(ob->buf, 1, ob->len, ob->fp) != ob->len)
			cli_fatal("%s: write error: %s", ob->name, strerror(errno));
		ob->len = 0;
	}
}

char *
ob_reserve(struct outbuf *ob, size_t n)
{
	if (ob->len + n > ob->cap) {
		ob_flush(ob);
		if (n > ob->cap) {
			ob->cap = n;
			ob->buf = xrealloc(ob->buf, ob->cap);
		}
	}
	return ob->buf + ob->len;
}

void
ob_commit(struct outbuf *ob, size_t n)
{
	ob->len += n;
}

void
ob_write_slow(struct outbuf *ob, const void *p, size_t n)
{
	memcpy(ob_reserve(ob, n), p, n);
	ob->len += n;
}

void
ob_puts(struct outbuf *ob, const char *s)
{
	ob_write(ob, s, strlen(s));
}

void
ob_putc(struct outbuf *ob, int c)
{
	if (ob->len == ob->cap)
		ob_flush(ob);
	ob->buf[ob->len++] = (char)c;
}

void
ob_printf(struct outbuf *ob, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(ob_reserve(ob, (size_t)n + 1), (size_t)n + 1, fmt, ap);
	va_end(ap);
	ob->len += (size_t)n;
}

void
ob_close(struct outbuf *ob)
{
	ob_flush(ob);
	if (fflush(ob->fp) != 0 || ferror(ob->fp))
		cli_fatal("%s: write error: %s", ob->name, strerror(errno));
	if (ob->fp != stdout) {
		if (fclose(ob->fp) != 0)
			cli_fatal("%s: write error: %s", ob->name, strerror(errno));
	}
	free(ob->buf);
	ob->buf = NULL;
}

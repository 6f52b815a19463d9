/*
 * strbuf.h - a growable string: the one text builder of the library
 * (names a demangler or a pattern translator puts together, field values
 * a decoder writes).  The text is always NUL-terminated, may hold NULs
 * of its own (len counts them), and grows by doubling, so building a
 * string costs amortised O(1) per byte and no fixed buffer ever cuts it.
 *
 *   struct strbuf sb = STRBUF_INIT;
 *   strbuf_adds(&sb, "name");
 *   strbuf_addf(&sb, " (%d)", pid);
 *   use(sb.s, sb.len);
 *   strbuf_release(&sb);
 *
 * s is NULL until the first add; strbuf_str() is the text or "".
 */
#ifndef ETLKIT_STRBUF_H
#define ETLKIT_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

struct strbuf {
	char *s;
	size_t len, cap;
};

#define STRBUF_INIT { NULL, 0, 0 }

/* Makes room for N more bytes and the NUL (the slow path of the adds). */
void strbuf_grow(struct strbuf *sb, size_t n);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* strbuf_addf for functions that take a format of their own (runtext_printf) */
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Frees the text; SB is empty again and may be reused. */
void strbuf_release(struct strbuf *sb);
/* The text (malloc'ed, the caller frees it), "" if nothing was added; SB is empty again. */
char *strbuf_detach(struct strbuf *sb);

/* inline: decoders append millions of short pieces */
static inline void
strbuf_add(struct strbuf *sb, const void *p, size_t n)
{
	if (sb->cap - sb->len <= n)
		strbuf_grow(sb, n);
	memcpy(sb->s + sb->len, p, n);
	sb->len += n;
	sb->s[sb->len] = '\0';
}

static inline void
strbuf_addc(struct strbuf *sb, char c)
{
	if (sb->cap - sb->len <= 1)
		strbuf_grow(sb, 1);
	sb->s[sb->len++] = c;
	sb->s[sb->len] = '\0';
}

static inline void
strbuf_adds(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

/* Cuts the text to its first LEN (<= sb->len) bytes; strbuf_reset is LEN 0. */
static inline void
strbuf_truncate(struct strbuf *sb, size_t len)
{
	sb->len = len;
	if (sb->s)
		sb->s[len] = '\0';
}

static inline void
strbuf_reset(struct strbuf *sb)
{
	strbuf_truncate(sb, 0);
}

static inline const char *
strbuf_str(const struct strbuf *sb)
{
	return sb->s ? sb->s : "";
}

#endif

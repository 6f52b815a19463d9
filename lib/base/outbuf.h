/*
 * outbuf.h - buffered output to a file or stdout that never fails
 * silently: a write error (full disk, closed pipe) exits with status 2
 * naming the file, so no tool can end "successfully" with half its output.
 */
#ifndef ETLKIT_OUTBUF_H
#define ETLKIT_OUTBUF_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct ob_behind;

struct outbuf {
	FILE *fp;
	const char *name;
	char *buf;
	size_t len, cap;
	struct ob_behind *behind;	/* ob_write_behind(): the thread writing, or NULL */
};

/* Opens PATH for writing ("-" or NULL = stdout). Exits with status 2 on failure. */
void ob_open(struct outbuf *ob, const char *path);
/* ob_write's way when the bytes do not fit in the buffer (flush first). */
void ob_write_slow(struct outbuf *ob, const void *p, size_t n);
void ob_puts(struct outbuf *ob, const char *s);
void ob_putc(struct outbuf *ob, int c);
void ob_printf(struct outbuf *ob, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Reserves N bytes and returns where to write them; commit with ob_commit. */
char *ob_reserve(struct outbuf *ob, size_t n);
void ob_commit(struct outbuf *ob, size_t n);
void ob_flush(struct outbuf *ob);
/*
 * From now on a thread of its own writes each full buffer while the
 * caller fills the next: for a large output into a pipe or a file, whose
 * copy into the kernel then runs on another core.  Nothing is done for
 * other outputs (a terminal, /dev/null) or on one CPU.  ob_flush hands
 * over; ob_close waits for everything to be written.  A write error is
 * reported (exit 2) at the next flush or at close.
 */
void ob_write_behind(struct outbuf *ob);
/*
 * A writer whose buffers hold more than text (etl2evt's thread-time
 * records): the writing thread passes each buffer, in order, through FN,
 * which says what goes out in OUT.  Started for files and devices
 * (/dev/null, a terminal: FN's work is why the thread exists), not for a
 * pipe, whose reader needs the other core.  Returns 1, or 0 when no
 * thread does it (a pipe, one CPU): the caller writes text then.  FN NULL drains
 * what was handed over and takes the filter off (before CTX is freed).
 */
/*
 * What the filter makes of one buffer: pieces written in order, each a
 * run of that buffer (kept, not copied: a thread of its own writes it,
 * so its bytes are never carried to this core for nothing) or bytes the
 * filter made.
 */
struct ob_filtered {
	char *made;
	size_t nmade, capmade;
	struct ob_piece { const char *p; size_t off, n; } *v;	/* p NULL: made + off */
	size_t nv, capv;
};
void ob_filtered_keep(struct ob_filtered *f, const char *p, size_t n);
/* Room for N bytes the filter makes; ob_filtered_made() says how many it made. */
char *ob_filtered_room(struct ob_filtered *f, size_t n);
void ob_filtered_made(struct ob_filtered *f, size_t n);
typedef void (*ob_filter_fn)(void *ctx, const char *p, size_t n, struct ob_filtered *out);
int ob_write_through(struct outbuf *ob, ob_filter_fn fn, void *ctx);
/* Flushes and closes; a write error (full disk) exits with status 2. */
void ob_close(struct outbuf *ob);

/*
 * Inline: the writers of large outputs (SVG boxes, folded lines) make
 * several small writes per line, and a call for each was a tenth of
 * their time.
 */
static inline void
ob_write(struct outbuf *ob, const void *p, size_t n)
{
	if (n <= ob->cap - ob->len) {
		memcpy(ob->buf + ob->len, p, n);
		ob->len += n;
		return;
	}
	ob_write_slow(ob, p, n);
}

/* A string literal, its length known when compiling. */
#define ob_lit(ob, s) ob_write((ob), "" s "", sizeof(s) - 1)

#endif

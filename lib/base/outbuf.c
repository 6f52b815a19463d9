/*
 * outbuf.c - buffered output (see outbuf.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "base/outbuf.h"
#include "base/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

/* ------------------------------------------------------------------ */
/* writing behind                                                      */

#define BEHIND_BUFS 4
#define BEHIND_CAP (1u << 18)	/* a quarter of the pipe stackfold asks for */
#define OB_PIPE_SIZE (1 << 20)	/* the default pipe-max-size: no privilege needed */

struct behind_buf {
	char *p;
	size_t len, cap;
};

/*
 * Buffers go round: FREE ones to the caller, full ones (the queue from
 * HEAD, N of them) to the writer, in order.  ERR: the first write error.
 */
struct ob_behind {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work, room;
	int fd, closing, err;
	struct behind_buf queue[BEHIND_BUFS], free[BEHIND_BUFS];
	size_t head, n, nfree;
};

static void *
behind_work(void *arg)
{
	struct ob_behind *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->n == 0 && !w->closing)
			pthread_cond_wait(&w->work, &w->mu);
		if (w->n == 0)
			break;
		struct behind_buf b = w->queue[w->head];
		int failed = w->err;
		pthread_mutex_unlock(&w->mu);
		int e = failed || write_full(w->fd, b.p, b.len) == 0 ? 0 : errno;	/* (after an error: dropped) */
		pthread_mutex_lock(&w->mu);
		if (e && !w->err)
			w->err = e;
		w->head = (w->head + 1) % BEHIND_BUFS;
		w->n--;
		w->free[w->nfree++] = b;
		pthread_cond_signal(&w->room);
	}
	pthread_mutex_unlock(&w->mu);
	cli_thread_cpu("outbuf: writing thread");
	return NULL;
}

void
ob_write_behind(struct outbuf *ob)
{
	struct stat st;
	int fd = fileno(ob->fp);

	if (ob->behind || cli_cores() < 2 || fd < 0 || fstat(fd, &st) != 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
		return;
	ob_flush(ob);
	if (fflush(ob->fp) != 0)
		cli_fatal("%s: write error: %s", ob->name, strerror(errno));
#ifdef F_SETPIPE_SZ
	/*
	 * Into a pipe: room for four of the writer's buffers, so that one
	 * write does not wake the reader (cat, flamegraph.pl, inferno: tools
	 * that keep the 64 KiB default) and wait for it several times.  The
	 * readers of this project ask for the same (lib/evt/evt.c); refused
	 * over the user's pipe quota, the pipe stays as it was.
	 */
	if (S_ISFIFO(st.st_mode))
		(void)fcntl(fd, F_SETPIPE_SZ, OB_PIPE_SIZE);
#endif
	struct ob_behind *w = xcalloc(1, sizeof *w);
	w->fd = fd;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->room, NULL);
	for (int i = 0; i < BEHIND_BUFS - 1; i++)
		w->free[w->nfree++] = (struct behind_buf){ xmalloc(BEHIND_CAP), 0, BEHIND_CAP };
	if (pthread_create(&w->thread, NULL, behind_work, w) != 0) {
		for (size_t i = 0; i < w->nfree; i++)
			free(w->free[i].p);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->work);
		pthread_cond_destroy(&w->room);
		free(w);
		return;
	}
	if (ob->cap < BEHIND_CAP) {
		ob->cap = BEHIND_CAP;
		ob->buf = xrealloc(ob->buf, ob->cap);
	}
	ob->behind = w;
}

/* The full buffer to the writer, a free one back (waiting for one if need be). */
static void
behind_hand(struct outbuf *ob)
{
	struct ob_behind *w = ob->behind;

	pthread_mutex_lock(&w->mu);
	w->queue[(w->head + w->n) % BEHIND_BUFS] = (struct behind_buf){ ob->buf, ob->len, ob->cap };
	w->n++;
	pthread_cond_signal(&w->work);
	while (w->nfree == 0)
		pthread_cond_wait(&w->room, &w->mu);
	struct behind_buf b = w->free[--w->nfree];
	int err = w->err;
	pthread_mutex_unlock(&w->mu);
	ob->buf = b.p;
	ob->cap = b.cap;
	ob->len = 0;
	if (err)
		cli_fatal("%s: write error: %s", ob->name, strerror(err));
}

/* Everything handed over written, the thread gone; its error, if any, reported. */
static void
behind_end(struct outbuf *ob)
{
	struct ob_behind *w = ob->behind;

	pthread_mutex_lock(&w->mu);
	w->closing = 1;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	ob->behind = NULL;
	for (size_t i = 0; i < w->nfree; i++)
		free(w->free[i].p);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->room);
	int err = w->err;
	free(w);
	if (err)
		cli_fatal("%s: write error: %s", ob->name, strerror(err));
}

void
ob_flush(struct outbuf *ob)
{
	if (ob->len > 0 && ob->behind) {
		behind_hand(ob);
		return;
	}
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
	if (ob->behind)
		behind_end(ob);
	if (fflush(ob->fp) != 0 || ferror(ob->fp))
		cli_fatal("%s: write error: %s", ob->name, strerror(errno));
	if (ob->fp != stdout) {
		if (fclose(ob->fp) != 0)
			cli_fatal("%s: write error: %s", ob->name, strerror(errno));
	}
	free(ob->buf);
	ob->buf = NULL;
}

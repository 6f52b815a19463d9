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
#include <sys/uio.h>
#include <limits.h>
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
	ob_filter_fn filter;	/* ob_write_through(): each buffer through it, into OUT */
	void *filter_ctx;
	struct ob_filtered out;
};

static void
add_piece(struct ob_filtered *f, const char *p, size_t off, size_t n)
{
	XGROW(f->v, f->nv, f->capv, 256);
	f->v[f->nv++] = (struct ob_piece){ p, off, n };
}

void
ob_filtered_keep(struct ob_filtered *f, const char *p, size_t n)
{
	struct ob_piece *last = f->nv ? &f->v[f->nv - 1] : NULL;
	if (last && last->p && last->p + last->n == p)
		last->n += n;
	else if (n)
		add_piece(f, p, 0, n);
}

char *
ob_filtered_room(struct ob_filtered *f, size_t n)
{
	if (f->capmade - f->nmade < n) {
		f->capmade = f->nmade + n > 2 * f->capmade ? f->nmade + n : 2 * f->capmade;
		f->made = xrealloc(f->made, f->capmade);
	}
	return f->made + f->nmade;
}

void
ob_filtered_made(struct ob_filtered *f, size_t n)
{
	struct ob_piece *last = f->nv ? &f->v[f->nv - 1] : NULL;
	if (last && !last->p && last->off + last->n == f->nmade)
		last->n += n;
	else if (n)
		add_piece(f, NULL, f->nmade, n);
	f->nmade += n;
}

/* iovecs a writev takes: POSIX's least (16) where the system does not say */
#if defined(IOV_MAX) && IOV_MAX < 1024
#define PIECES_PER_WRITE IOV_MAX
#elif defined(IOV_MAX)
#define PIECES_PER_WRITE 1024
#else
#define PIECES_PER_WRITE 16
#endif

/* F's pieces written in order: 0, or the errno of the failed write. */
static int
write_pieces(int fd, const struct ob_filtered *f)
{
	struct iovec iov[PIECES_PER_WRITE];
	size_t i = 0;
	while (i < f->nv) {
		int k = 0;
		for (; i < f->nv && k < (int)(sizeof iov / sizeof iov[0]); i++, k++) {
			const struct ob_piece *v = &f->v[i];
			iov[k] = (struct iovec){ (void *)(uintptr_t)(v->p ? v->p : f->made + v->off), v->n };
		}
		struct iovec *at = iov;
		while (k > 0) {
			ssize_t w = writev(fd, at, k);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return errno;
			size_t left = (size_t)w;
			for (; k > 0 && left >= at->iov_len; at++, k--)
				left -= at->iov_len;
			if (k > 0 && left) {	/* (a part of a piece written: the rest of it next) */
				at->iov_base = (char *)at->iov_base + left;
				at->iov_len -= left;
			}
		}
	}
	return 0;
}

/* Writes B (through the filter, if any): 0, or the errno of the failed write. */
static int
behind_write(struct ob_behind *w, const struct behind_buf *b, ob_filter_fn filter, void *ctx)
{
	if (!filter)
		return write_full(w->fd, b->p, b->len) == 0 ? 0 : errno;
	w->out.nmade = 0;
	w->out.nv = 0;
	filter(ctx, b->p, b->len, &w->out);
	return write_pieces(w->fd, &w->out);
}

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
		ob_filter_fn filter = w->filter;
		void *ctx = w->filter_ctx;
		pthread_mutex_unlock(&w->mu);
		int e = failed ? 0 : behind_write(w, &b, filter, ctx);	/* (after an error: dropped) */
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

/* The writing thread, for pipes and files, or ANY output: 1 once it runs. */
static int
start_behind(struct outbuf *ob, int any)
{
	struct stat st;
	int fd = fileno(ob->fp);

	if (ob->behind)
		return 1;
	if (cli_cores() < 2 || fd < 0 || fstat(fd, &st) != 0 ||
	    !(any || S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
		return 0;
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
		return 0;
	}
	if (ob->cap < BEHIND_CAP) {
		ob->cap = BEHIND_CAP;
		ob->buf = xrealloc(ob->buf, ob->cap);
	}
	ob->behind = w;
	return 1;
}

void
ob_write_behind(struct outbuf *ob)
{
	(void)start_behind(ob, 0);
}

/*
 * Into a pipe, the reader needs the cores too: a filter's work there
 * (records made into lines, cut into pieces) cost more CPU in all than
 * it took off the caller's thread, and etl2evt | cat went 17% slower.
 */
static int
into_pipe(const struct outbuf *ob)
{
	struct stat st;
	int fd = fileno(ob->fp);
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

int
ob_write_through(struct outbuf *ob, ob_filter_fn fn, void *ctx)
{
	if (fn && (into_pipe(ob) || !start_behind(ob, 1)))
		return 0;
	if (!ob->behind)
		return 0;
	/* (what was handed over before is text: through the filter or not, the same) */
	ob_flush(ob);
	struct ob_behind *w = ob->behind;
	pthread_mutex_lock(&w->mu);
	if (!fn)	/* the buffers that may hold records, through the filter first */
		while (w->n > 0)
			pthread_cond_wait(&w->room, &w->mu);
	w->filter = fn;
	w->filter_ctx = ctx;
	pthread_mutex_unlock(&w->mu);
	return fn != NULL;
}

/*
 * The full buffer to the writer, a free one back (waiting for one if need
 * be).  The writer, faster than the caller, is woken for every second
 * buffer only, unless the caller is about to wait or flushes (NOW): a
 * wake is a system call on the caller's thread, and it came once per
 * 256 KiB of output.
 */
static void
behind_hand(struct outbuf *ob, int now)
{
	struct ob_behind *w = ob->behind;

	pthread_mutex_lock(&w->mu);
	w->queue[(w->head + w->n) % BEHIND_BUFS] = (struct behind_buf){ ob->buf, ob->len, ob->cap };
	w->n++;
	if (now || w->n >= 2 || w->nfree == 0)
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
	free(w->out.made);
	free(w->out.v);
	int err = w->err;
	free(w);
	if (err)
		cli_fatal("%s: write error: %s", ob->name, strerror(err));
}

/* The buffer out, or to the writer (NOW: woken, else when it suits). */
static void
flush_buffer(struct outbuf *ob, int now)
{
	if (ob->len > 0 && ob->behind) {
		behind_hand(ob, now);
		return;
	}
	if (ob->len > 0) {
		if (fwrite(ob->buf, 1, ob->len, ob->fp) != ob->len)
			cli_fatal("%s: write error: %s", ob->name, strerror(errno));
		ob->len = 0;
	}
}

void
ob_flush(struct outbuf *ob)
{
	flush_buffer(ob, 1);
}

char *
ob_reserve(struct outbuf *ob, size_t n)
{
	if (ob->len + n > ob->cap) {
		flush_buffer(ob, 0);
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
		flush_buffer(ob, 0);
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

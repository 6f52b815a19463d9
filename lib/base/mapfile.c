/*
 * mapfile.c - read-only mappings of regular files (see mapfile.h).
 *
 * MAP_PRIVATE and PROT_READ: nothing is ever written through the
 * mapping, so no page is copied and a file changed by another process
 * while it is read shows its new bytes at worst (as read(2) would).
 *
 * A file cut shorter by another process while mapped is different: the
 * kernel takes away the pages past its new end, and touching one raises
 * SIGBUS, which would kill the tool without a word.  Each mapping is
 * remembered with its file's name, and a SIGBUS handler names the file
 * and exits 2 (the input became unusable), as the reading path would for
 * a file it cannot read.
 *
 * The mappings are as many as a tool keeps open at once (diff two,
 * etl2evt its traces and every PDB it uses), so they are kept in blocks
 * linked once made and never freed: the handler walks them without a
 * lock (it may interrupt anything), each entry's address published last;
 * threads that map and unmap take a mutex.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/mapfile.h"
#include "base/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GUARD_BLOCK 32
#define GUARDED_PATH 512

struct guarded {
	_Atomic(const char *) p;	/* the mapping, NULL: a free entry */
	size_t n;
	char path[GUARDED_PATH];
};

struct guard_block {
	struct guarded e[GUARD_BLOCK];
	_Atomic(struct guard_block *) next;
};

static struct guard_block guards;
static pthread_mutex_t guards_lock = PTHREAD_MUTEX_INITIALIZER;

/* Appends S to the message in BUF (N bytes used, CAP in all); returns the new length. */
static size_t
append(char *buf, size_t n, size_t cap, const char *s)
{
	size_t k = strlen(s);

	if (k > cap - n)
		k = cap - n;
	memcpy(buf + n, s, k);
	return n + k;
}

/*
 * Async-signal-safe: atomic loads, an atomic flag, strlen, memcpy, write,
 * pause and _exit only.  Two threads reading the mapping (etl2evt's
 * reader and its caller) can both touch the cut pages: the first one
 * names the file in one write and exits, the others wait for that exit,
 * so the message is one whole line (two had come out as
 * "etl2evtetl2evt: ...").
 */
static void
on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	static atomic_flag reporting = ATOMIC_FLAG_INIT;
	const char *addr = si->si_addr;

	(void)ctx;
	for (struct guard_block *b = &guards; b != NULL; b = atomic_load(&b->next))
		for (size_t i = 0; i < GUARD_BLOCK; i++) {
			const struct guarded *g = &b->e[i];
			const char *p = atomic_load(&g->p);

			if (p != NULL && addr >= p && addr < p + g->n) {
				if (atomic_flag_test_and_set(&reporting))
					for (;;)
						pause();	/* another thread is reporting and exiting */
				char msg[GUARDED_PATH + 256];
				size_t n = append(msg, 0, sizeof msg - 1, cli_progname());
				n = append(msg, n, sizeof msg - 1, ": ");
				n = append(msg, n, sizeof msg - 1, g->path);
				n = append(msg, n, sizeof msg - 1, ": the file became shorter while it "
				    "was read (another process changed it)");
				msg[n++] = '\n';
				ssize_t r = write(STDERR_FILENO, msg, n);
				(void)r;
				_exit(2);
			}
		}
	signal(sig, SIG_DFL);	/* not ours: die of it as we would have */
	raise(sig);
}

static void
install_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* A free entry, a new block linked when all are taken (under guards_lock). */
static struct guarded *
free_entry(void)
{
	struct guard_block *b = &guards, *next;

	for (;;) {
		for (size_t i = 0; i < GUARD_BLOCK; i++)
			if (atomic_load(&b->e[i].p) == NULL)
				return &b->e[i];
		if ((next = atomic_load(&b->next)) == NULL) {
			next = xcalloc(1, sizeof(*next));
			atomic_store(&b->next, next);
		}
		b = next;
	}
}

static void
guard(const void *map, size_t len, const char *name)
{
	static int installed;
	struct guarded *g;
	size_t n = strlen(name);

	pthread_mutex_lock(&guards_lock);
	if (!installed) {
		install_handler();
		installed = 1;
	}
	g = free_entry();
	if (n >= GUARDED_PATH)
		n = GUARDED_PATH - 1;
	memcpy(g->path, name, n);
	g->path[n] = '\0';
	g->n = len;
	atomic_store(&g->p, map);	/* last: the handler sees a whole entry */
	pthread_mutex_unlock(&guards_lock);
}

static void
unguard(const void *map)
{
	pthread_mutex_lock(&guards_lock);
	for (struct guard_block *b = &guards; b != NULL; b = atomic_load(&b->next))
		for (size_t i = 0; i < GUARD_BLOCK; i++)
			if (atomic_load(&b->e[i].p) == map)
				atomic_store(&b->e[i].p, NULL);
	pthread_mutex_unlock(&guards_lock);
}

int
mapfile_map_fd(struct mapfile *m, int fd, uint64_t offset, uint64_t len, const char *name)
{
	struct stat st;
	uint64_t page, lead;
	void *p;

	memset(m, 0, sizeof(*m));
	if (fstat(fd, &st) < 0)
		return 0;
	if (!S_ISREG(st.st_mode)) {
		errno = ENODEV;
		return 0;
	}
	if (len == 0 && (uint64_t)st.st_size > offset)
		len = (uint64_t)st.st_size - offset;
	if (len == 0) {
		errno = EINVAL;
		return 0;
	}
	/* mmap wants a page-aligned offset: the mapping starts a little before */
	page = (uint64_t)sysconf(_SC_PAGESIZE);
	lead = offset % page;
	if (len > SIZE_MAX - lead || offset - lead > (uint64_t)INTMAX_MAX) {
		errno = EFBIG;
		return 0;
	}
	p = mmap(NULL, (size_t)(len + lead), PROT_READ, MAP_PRIVATE, fd, (off_t)(offset - lead));
	if (p == MAP_FAILED)
		return 0;
	m->map = p;
	m->maplen = (size_t)(len + lead);
	m->p = (const char *)p + lead;
	m->n = (size_t)len;
	guard(m->map, m->maplen, name);
	return 1;
}

int
mapfile_open(struct mapfile *m, const char *path)
{
	struct stat st;
	int fd, ok, e;

	memset(m, 0, sizeof(*m));
	if (path == NULL || strcmp(path, "-") == 0)
		return 0;
	/*
	 * Only a regular file is opened here: opening a FIFO and closing it
	 * again would end its writer's first open, and the reading path's
	 * own open would then wait for a writer that is gone.  (O_NONBLOCK:
	 * a FIFO put there since the stat is not waited for either.)
	 */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return 0;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK)) < 0)
		return 0;
	ok = mapfile_map_fd(m, fd, 0, 0, path);
	e = errno;
	close(fd);
	errno = e;
	return ok;
}

void
mapfile_close(struct mapfile *m)
{
	if (m->map != NULL) {
		unguard(m->map);
		munmap(m->map, m->maplen);
	}
	memset(m, 0, sizeof(*m));
}

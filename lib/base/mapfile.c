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
 * remembered with its path, and a SIGBUS handler names the file and
 * exits 2 (the input became unusable), as the reading path would for a
 * file it cannot read.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/mapfile.h"
#include "base/cli.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The mappings a SIGBUS may come from: few (diff keeps two). */
#define GUARDED_MAX 8
#define GUARDED_PATH 512

static struct guarded {
	const char *p;
	size_t n;
	char path[GUARDED_PATH];
} guarded[GUARDED_MAX];

static void
write_str(const char *s)
{
	ssize_t r = write(STDERR_FILENO, s, strlen(s));

	(void)r;
}

/* Async-signal-safe: strlen, write and _exit only. */
static void
on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	const char *addr = si->si_addr;

	(void)ctx;
	for (size_t i = 0; i < GUARDED_MAX; i++) {
		const struct guarded *g = &guarded[i];

		if (g->p != NULL && addr >= g->p && addr < g->p + g->n) {
			write_str(cli_progname());
			write_str(": ");
			write_str(g->path);
			write_str(": the file became shorter while it was read (another process changed it)\n");
			_exit(2);
		}
	}
	signal(sig, SIG_DFL);	/* not ours: die of it as we would have */
	raise(sig);
}

static void
guard(const struct mapfile *m, const char *path)
{
	static int installed;

	if (!installed) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
		installed = 1;
	}
	for (size_t i = 0; i < GUARDED_MAX; i++)
		if (guarded[i].p == NULL) {
			size_t n = strlen(path);

			if (n >= GUARDED_PATH)
				n = GUARDED_PATH - 1;
			memcpy(guarded[i].path, path, n);
			guarded[i].path[n] = '\0';
			guarded[i].n = m->n;
			guarded[i].p = m->p;	/* last: the handler sees a whole entry */
			return;
		}
}

static void
unguard(const struct mapfile *m)
{
	for (size_t i = 0; i < GUARDED_MAX; i++)
		if (guarded[i].p == m->p)
			guarded[i].p = NULL;
}

int
mapfile_open(struct mapfile *m, const char *path)
{
	struct stat st;
	void *p;
	int fd;

	memset(m, 0, sizeof(*m));
	if (path == NULL || strcmp(path, "-") == 0)
		return 0;
	/*
	 * Only a regular file is opened here: opening a FIFO and closing it
	 * again would end its writer's first open, and the reading path's
	 * own open would then wait for a writer that is gone.
	 */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if ((fd = open(path, O_RDONLY)) < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uintmax_t)st.st_size > SIZE_MAX) {
		close(fd);
		return 0;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	m->p = p;
	m->n = (size_t)st.st_size;
	guard(m, path);
	return 1;
}

void
mapfile_close(struct mapfile *m)
{
	if (m->p != NULL) {
		unguard(m);
		munmap((void *)(uintptr_t)m->p, m->n);
	}
	memset(m, 0, sizeof(*m));
}

/*
 * images.c - processes, threads, images and JIT methods over time, and
 * address resolution.  See images.h.
 *
 * Everything is appended to plain arrays during the pre-pass (with a
 * hash for de-duplication: an image seen at rundown start and again at
 * rundown end is one image), then sorted once.  Pass 2 asks who owns
 * every frame of every stack, and the same few thousand addresses make
 * most stacks: the answers are kept (struct owner_memo), each with the
 * times it holds for, so that a kept one is never wrong for another time.
 * So are the texts of frames (struct frame_memo) and of whole stacks
 * (struct stack_memo), which the stack column repeats line after line,
 * and the escaped names every line or DPC writes: each process's (made
 * with it) and each image's file name (made when first asked for).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/cli.h"
#include "base/hash.h"
#include "base/hmap.h"
#include "evt/evt.h"
#include "evt/evtwrite.h"
#include "etl/images.h"
#include "base/path.h"

struct proc {
	uint32_t pid;
	uint64_t start, end;
	char *name, *cmdline;
	char *text;	/* the name escaped for the process column, made with it */
	size_t textlen;
};

struct thread {
	uint32_t tid, pid;
	uint64_t start, end;
};

struct image {
	uint32_t pid;
	uint64_t base, size, load, unload;
	char *path;		/* NT path as logged */
	const char *file;	/* file name part of path (points into path) */
	char *file_text;	/* the same escaped as an attribute's value (module=), or NULL till asked */
	size_t file_textlen;
	char *orig;		/* ImageID OriginalFileName */
	char *pdb;
	uint8_t guid[16];
	uint32_t age;
	void *symcache;		/* the symbol hook's slot for this image */
};

struct method {
	uint32_t pid;
	uint64_t start;
	uint32_t size;
	uint64_t module_id;
	char *name;
	const char *module;	/* resolved after the pass */
	const char *module_path;
};

struct clrmod {
	uint32_t pid;
	uint64_t id;
	char *file;
	char *path;
};

struct volmap {
	char *nt, *dos;
	size_t ntlen;
};

/* ImageID/DbgID seen before their image (another file of the session) */
struct pending_id {
	uint32_t pid;
	uint64_t base;
	char *orig, *pdb;
	uint8_t guid[16];
	uint32_t age;
	int is_dbg;
};

/*
 * What owns ADDR in process PID (IMG_KERNEL_PID for kernel addresses):
 * an image, a JIT method or nothing, for times in [lo, hi).  The images
 * load and unload, so an answer holds while the image it found stays
 * loaded and the images it passed over stay unloaded.  Direct-mapped:
 * a fixed size whatever the trace.
 */
#define OWNER_MEMO_BITS 12
struct owner_memo {
	uint64_t addr, lo, hi;	/* hi == 0: the slot is empty */
	uint32_t pid;
	const struct image *im;
	const struct method *me;
};

/*
 * An image frame's images_frame() text, by image, address, flags and the
 * caller's buffer size: what the symbol hook named (the stack column's
 * frames, a DPC's routine) is looked up once.
 */
#define FRAME_MEMO_BITS 12
struct frame_memo {
	const struct image *im;	/* NULL: the slot is empty */
	uint64_t addr;
	int flags, resolved;
	size_t outcap;
	char *text;
	size_t len, cap;
};

/*
 * A whole stack's text (its frames root first, escaped, ';' between), by
 * process, frames and flags, for the times every frame's owner holds
 * for.  Its runs say which lookups its frames count with the symbol hook
 * (RUN_N frames of image RUN_IM in a row, RUN_RES of them named), so that
 * a stack written from here counts as if looked up, a call per run.
 * Direct-mapped; long stacks are not kept, so the memory stays bounded.
 */
#define STACK_MEMO_BITS 12
#define STACK_MEMO_FRAMES 256
#define STACK_MEMO_TEXT 16384
struct stack_run {
	const struct image *im;
	uint32_t n, res;
};
struct stack_memo {
	uint64_t hash, lo, hi;	/* hi == 0: the slot is empty */
	uint32_t pid, n;
	int flags;
	uint32_t nruns;
	/*
	 * One block: the N frames (innermost first), the runs, then the
	 * text's LEN bytes.  A block per slot, reused while a stack's fit,
	 * not an array per part sized for the deepest stack the slot held.
	 */
	char *blk;
	size_t len, bcap;
};

static const uint64_t *
memo_addr(const struct stack_memo *e)
{
	return (const uint64_t *)(const void *)e->blk;
}

static const struct stack_run *
memo_runs(const struct stack_memo *e)
{
	return (const struct stack_run *)(const void *)(e->blk + e->n * sizeof(uint64_t));
}

static const char *
memo_text(const struct stack_memo *e)
{
	return e->blk + e->n * sizeof(uint64_t) + e->nruns * sizeof(struct stack_run);
}

struct images {
	struct pending_id *pend;
	size_t npend, cappend;
	unsigned psize;
	struct proc *p;
	size_t np, capp;
	struct thread *t;
	size_t nt, capt;
	/*
	 * After images_finish(): tid -> where its entries start in t[]
	 * (sorted by thread).  Every CSwitch, ReadyThread, DPC and
	 * thread-time line asks for its threads' processes, and a binary
	 * search over thousands of threads was among pass 2's costliest calls.
	 */
	struct hmap thread_first;
	struct image *im;
	size_t nim, capim;
	struct method *me;
	size_t nme, capme;
	struct clrmod *cm;
	size_t ncm, capcm;
	struct volmap *vm;
	size_t nvm, capvm;
	struct hmap proc_last;	/* pid → latest proc index */
	struct hmap thread_last;
	struct hmap image_at;	/* (pid, base) → image index */
	struct hmap tname;	/* tid → index into tnames */
	char **tnames;
	size_t ntn, captn;
	int finished;
	etl_symbol_fn sym;
	etl_symcount_fn symcount;
	void *symctx;
	/* NULL until images_finish(), the stack texts until the first one; they point into im[] and me[] */
	struct owner_memo *memo;
	struct frame_memo *fmemo;	/* images_frame()'s texts */
	struct frame_memo *xmemo;	/* the same escaped for the stack column (outcap unused) */
	struct stack_memo *smemo;
	struct stack_run *runs;	/* a stack's runs while its text is made */
	size_t capruns;
	/* the CLR methods' names: read-only, freed together (a trace has tens of thousands) */
	char **nameblk;
	size_t nnameblk, capnameblk;
	size_t nameat, namecap;	/* the last block's bytes used, and its size */
};

/* Forgets the kept owners and texts: the arrays they point into are about to change. */
static void
memo_drop(struct images *m)
{
	free(m->memo);
	m->memo = NULL;
	for (size_t i = 0; m->fmemo && i < (size_t)1 << FRAME_MEMO_BITS; i++)
		free(m->fmemo[i].text);
	for (size_t i = 0; m->xmemo && i < (size_t)1 << FRAME_MEMO_BITS; i++)
		free(m->xmemo[i].text);
	free(m->fmemo);
	free(m->xmemo);
	m->fmemo = m->xmemo = NULL;
	if (m->smemo)
		for (size_t i = 0; i < (size_t)1 << STACK_MEMO_BITS; i++)
			free(m->smemo[i].blk);
	free(m->smemo);
	m->smemo = NULL;
	free(m->runs);
	m->runs = NULL;
	m->capruns = 0;
}

struct images *
images_new(unsigned pointer_size)
{
	struct images *m = xcalloc(1, sizeof *m);

	m->psize = pointer_size == 4 ? 4 : 8;
	hmap_init(&m->proc_last);
	hmap_init(&m->thread_last);
	hmap_init(&m->thread_first);
	hmap_init(&m->image_at);
	hmap_init(&m->tname);
	return m;
}

void
images_free(struct images *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->np; i++) {
		free(m->p[i].name);
		free(m->p[i].text);
		free(m->p[i].cmdline);
	}
	for (size_t i = 0; i < m->nim; i++) {
		free(m->im[i].path);
		free(m->im[i].file_text);
		free(m->im[i].orig);
		free(m->im[i].pdb);
	}
	for (size_t i = 0; i < m->nnameblk; i++)
		free(m->nameblk[i]);
	free(m->nameblk);
	for (size_t i = 0; i < m->ncm; i++) {
		free(m->cm[i].file);
		free(m->cm[i].path);
	}
	for (size_t i = 0; i < m->nvm; i++) {
		free(m->vm[i].nt);
		free(m->vm[i].dos);
	}
	for (size_t i = 0; i < m->ntn; i++)
		free(m->tnames[i]);
	free(m->p);
	free(m->t);
	free(m->im);
	free(m->me);
	free(m->cm);
	free(m->vm);
	free(m->tnames);
	hmap_free(&m->proc_last);
	hmap_free(&m->thread_last);
	hmap_free(&m->thread_first);
	hmap_free(&m->image_at);
	hmap_free(&m->tname);
	memo_drop(m);
	free(m);
}

int
images_is_kernel(const struct images *m, uint64_t addr)
{
	return m->psize == 8 ? addr >= 0xffff800000000000ull : addr >= 0x80000000ull &&
	    addr <= 0xffffffffull;
}

/*
 * How many of F[0..N) are kernel addresses (a sample's kframes=): the
 * test of images_is_kernel() in one loop without a call or a branch per
 * frame.
 */
size_t
images_count_kernel(const struct images *m, const uint64_t *f, size_t n)
{
	size_t k = 0;
	if (m->psize == 8) {
		for (size_t i = 0; i < n; i++)
			k += f[i] >= 0xffff800000000000ull;
	} else {
		for (size_t i = 0; i < n; i++)
			k += f[i] - 0x80000000ull <= 0x7fffffffull;
	}
	return k;
}

/* ---------- processes and threads ---------- */

void
images_process(struct images *m, uint32_t pid, uint64_t ts, int how, const char *name,
    const char *cmdline)
{
	uint32_t *last = hmap_get(&m->proc_last, pid, 0);
	struct proc *p = last ? &m->p[*last] : NULL;

	if (how == PROC_START || !p || (p->end != TS_END && how == PROC_DCSTART) ||
	    (name && *name && p->name && strcmp(p->name, name) != 0 && p->end != TS_END)) {
		XGROW(m->p, m->np, m->capp, 64);
		p = &m->p[m->np];
		memset(p, 0, sizeof *p);
		p->pid = pid;
		p->start = how == PROC_START ? ts : TS_NONE;
		p->end = TS_END;
		hmap_put(&m->proc_last, pid, 0, (uint32_t)m->np++);
	}
	if (name && *name && !p->name) {
		p->name = xstrdup(name);
		struct evtw_line t = { 0 };
		evtw_esc(&t, name, strlen(name), 0);
		p->text = t.b;
		p->textlen = t.n;
	}
	if (cmdline && *cmdline && !p->cmdline)
		p->cmdline = xstrdup(cmdline);
	if (how == PROC_END)
		p->end = ts;
}

void
images_thread(struct images *m, uint32_t tid, uint32_t pid, uint64_t ts, int how)
{
	uint32_t *last = hmap_get(&m->thread_last, tid, 0);
	struct thread *t = last ? &m->t[*last] : NULL;

	if (how == PROC_START || !t || t->pid != pid) {
		XGROW(m->t, m->nt, m->capt, 64);
		t = &m->t[m->nt];
		t->tid = tid;
		t->pid = pid;
		t->start = how == PROC_START ? ts : TS_NONE;
		t->end = TS_END;
		hmap_put(&m->thread_last, tid, 0, (uint32_t)m->nt++);
	}
	if (how == PROC_END)
		t->end = ts;
}

int64_t
images_thread_pid_early(const struct images *m, uint32_t tid)
{
	uint32_t *last = hmap_get(&m->thread_last, tid, 0);
	return last ? (int64_t)m->t[*last].pid : -1;
}

void
images_thread_name(struct images *m, uint32_t tid, const char *name)
{
	if (!name || !*name)
		return;
	uint32_t *i = hmap_get(&m->tname, tid, 0);
	if (i) {
		free(m->tnames[*i]);
		m->tnames[*i] = xstrdup(name);
		return;
	}
	XGROW(m->tnames, m->ntn, m->captn, 64);
	m->tnames[m->ntn] = xstrdup(name);
	hmap_put(&m->tname, tid, 0, (uint32_t)m->ntn++);
}

const char *
images_thread_name_of(const struct images *m, uint32_t tid)
{
	uint32_t *i = hmap_get(&m->tname, tid, 0);
	return i ? m->tnames[*i] : NULL;
}

/* ---------- images ---------- */

static struct image *
image_slot(struct images *m, uint32_t pid, uint64_t base)
{
	if (images_is_kernel(m, base))
		pid = IMG_KERNEL_PID;
	uint32_t *i = hmap_get(&m->image_at, pid, base);
	return i ? &m->im[*i] : NULL;
}

/* IM's path and file name (its escaped file name made anew when asked for) */
static void
set_path(struct image *im, const char *path)
{
	free(im->path);
	free(im->file_text);
	im->file_text = NULL;
	im->path = xstrdup(path);
	im->file = path_base(im->path);
}

void
images_image(struct images *m, uint32_t pid, uint64_t base, uint64_t size, uint64_t ts,
    int how, const char *path)
{
	struct image *im;

	memo_drop(m);
	if (images_is_kernel(m, base))
		pid = IMG_KERNEL_PID;
	im = image_slot(m, pid, base);
	if (im && (how == PROC_START) && im->unload != TS_END)
		im = NULL;	/* loaded again after an unload: a new life */
	if (!im) {
		XGROW(m->im, m->nim, m->capim, 64);
		im = &m->im[m->nim];
		memset(im, 0, sizeof *im);
		im->pid = pid;
		im->base = base;
		im->size = size;
		im->load = how == PROC_START ? ts : TS_NONE;
		im->unload = TS_END;
		set_path(im, path && *path ? path : "?");
		hmap_put(&m->image_at, pid, base, (uint32_t)m->nim++);
	}
	if (how == PROC_END)
		im->unload = ts;
	if (size > im->size)
		im->size = size;
	if (path && *path && strcmp(im->path, "?") == 0)
		set_path(im, path);
}

static void
add_pending(struct images *m, uint32_t pid, uint64_t base, const char *orig, const char *pdb,
    const uint8_t *guid, uint32_t age)
{
	XGROW(m->pend, m->npend, m->cappend, 64);
	struct pending_id *p = &m->pend[m->npend++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->base = base;
	p->orig = orig ? xstrdup(orig) : NULL;
	p->pdb = pdb ? xstrdup(pdb) : NULL;
	p->is_dbg = pdb != NULL;
	if (guid)
		memcpy(p->guid, guid, 16);
	p->age = age;
}

void
images_image_id(struct images *m, uint32_t pid, uint64_t base, const char *orig_name)
{
	struct image *im = image_slot(m, pid, base);
	if (!im && !m->finished) {
		add_pending(m, pid, base, orig_name, NULL, NULL, 0);
		return;
	}
	if (im && !im->orig && orig_name && *orig_name)
		im->orig = xstrdup(orig_name);
}

void
images_dbgid(struct images *m, uint32_t pid, uint64_t base, const uint8_t guid[16],
    uint32_t age, const char *pdb)
{
	struct image *im = image_slot(m, pid, base);
	if (!im && !m->finished) {
		add_pending(m, pid, base, NULL, pdb ? pdb : "", guid, age);
		return;
	}
	if (!im || im->pdb)
		return;
	memcpy(im->guid, guid, 16);
	im->age = age;
	im->pdb = xstrdup(pdb ? pdb : "");
}

void
images_clr_module(struct images *m, uint32_t pid, uint64_t module_id, const char *il_path)
{
	XGROW(m->cm, m->ncm, m->capcm, 64);
	m->cm[m->ncm].pid = pid;
	m->cm[m->ncm].id = module_id;
	m->cm[m->ncm].file = xstrdup(path_base(il_path ? il_path : "?"));
	m->cm[m->ncm].path = xstrdup(il_path && *il_path ? il_path : "?");
	m->ncm++;
}

/* A copy of NAME in the name blocks: no allocation of its own, freed with the blocks. */
static char *
keep_name(struct images *m, const char *name)
{
	enum { NAMEBLK = 64 << 10 };
	size_t n = strlen(name) + 1;
	if (n > m->namecap - m->nameat) {
		size_t sz = n > NAMEBLK ? n : NAMEBLK;
		XGROW(m->nameblk, m->nnameblk, m->capnameblk, 16);
		m->nameblk[m->nnameblk++] = xmalloc(sz);
		m->namecap = sz;
		m->nameat = 0;
	}
	char *at = m->nameblk[m->nnameblk - 1] + m->nameat;
	memcpy(at, name, n);
	m->nameat += n;
	return at;
}

void
images_method(struct images *m, uint32_t pid, uint64_t start, uint32_t size, uint64_t module_id,
    const char *name)
{
	memo_drop(m);
	XGROW(m->me, m->nme, m->capme, 64);
	struct method *x = &m->me[m->nme++];
	x->pid = pid;
	x->start = start;
	x->size = size;
	x->module_id = module_id;
	x->name = keep_name(m, name);
	x->module = NULL;
}

void
images_volume(struct images *m, const char *nt, const char *dos)
{
	if (!nt || !*nt || !dos || !*dos)
		return;
	XGROW(m->vm, m->nvm, m->capvm, 64);
	m->vm[m->nvm].nt = xstrdup(nt);
	m->vm[m->nvm].dos = xstrdup(dos);
	m->vm[m->nvm].ntlen = strlen(nt);
	m->nvm++;
}

void
images_set_symbols(struct images *m, etl_symbol_fn fn, etl_symcount_fn count, void *ctx)
{
	m->sym = fn;
	m->symcount = count;
	m->symctx = ctx;
}

/* ---------- sorting ---------- */

static int
cmp_proc(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int
cmp_thread(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int
cmp_image(const void *a, const void *b)
{
	const struct image *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return x->load < y->load ? -1 : x->load > y->load;
}

static int
cmp_method(const void *a, const void *b)
{
	const struct method *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

void
images_finish(struct images *m)
{
	/* identities that arrived before their image, now that all images are known */
	for (size_t i = 0; i < m->npend; i++) {
		struct pending_id *p = &m->pend[i];
		struct image *im = image_slot(m, p->pid, p->base);
		if (im && p->is_dbg && !im->pdb) {
			memcpy(im->guid, p->guid, 16);
			im->age = p->age;
			im->pdb = xstrdup(p->pdb);
		} else if (im && !p->is_dbg && !im->orig && p->orig && *p->orig)
			im->orig = xstrdup(p->orig);
		free(p->orig);
		free(p->pdb);
	}
	free(m->pend);
	m->pend = NULL;
	m->npend = 0;
	if (m->np)
		qsort(m->p, m->np, sizeof *m->p, cmp_proc);
	if (m->nt)
		qsort(m->t, m->nt, sizeof *m->t, cmp_thread);
	for (size_t i = 0; i < m->nt; i++)
		if (i == 0 || m->t[i].tid != m->t[i - 1].tid)
			hmap_put(&m->thread_first, m->t[i].tid, 0, (uint32_t)i);
	/* CLR modules by (pid, module id), first seen wins */
	struct hmap cmods;
	hmap_init(&cmods);
	for (size_t j = m->ncm; j-- > 0;)
		hmap_put(&cmods, m->cm[j].pid, m->cm[j].id, (uint32_t)j);
	/* image file pointers point into their own path strings: safe to move */
	if (m->nim)
		qsort(m->im, m->nim, sizeof *m->im, cmp_image);
	for (size_t i = 0; i < m->nme; i++) {
		m->me[i].module = m->me[i].module_path = "?";
		uint32_t *j = hmap_get(&cmods, m->me[i].pid, m->me[i].module_id);
		if (j) {
			m->me[i].module = m->cm[*j].file;
			m->me[i].module_path = m->cm[*j].path;
		}
	}
	hmap_free(&cmods);
	if (m->nme)
		qsort(m->me, m->nme, sizeof *m->me, cmp_method);
	/* longest NT prefixes first so "\Device\HarddiskVolume10" wins over "...Volume1" */
	for (size_t i = 1; i < m->nvm; i++)
		for (size_t j = i; j > 0 && m->vm[j].ntlen > m->vm[j - 1].ntlen; j--) {
			struct volmap t = m->vm[j];
			m->vm[j] = m->vm[j - 1];
			m->vm[j - 1] = t;
		}
	memo_drop(m);
	m->memo = xcalloc((size_t)1 << OWNER_MEMO_BITS, sizeof *m->memo);
	m->fmemo = xcalloc((size_t)1 << FRAME_MEMO_BITS, sizeof *m->fmemo);
	m->finished = 1;
}

/* ---------- lookups ---------- */

static const struct proc *
find_proc(const struct images *m, uint32_t pid, uint64_t ts)
{
	size_t lo = 0, hi = m->np;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->p[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct proc *best = NULL;
	for (size_t i = lo; i < m->np && m->p[i].pid == pid; i++)
		if (!best || m->p[i].start <= ts)
			best = &m->p[i];
	return best;
}

const char *
images_process_name(const struct images *m, uint32_t pid, uint64_t ts)
{
	const struct proc *p = find_proc(m, pid, ts);
	if (p && p->name)
		return p->name;
	if (pid == 0)
		return "Idle";
	return "?";
}

const char *
images_process_text(const struct images *m, uint32_t pid, uint64_t ts, size_t *len)
{
	const struct proc *p = find_proc(m, pid, ts);
	if (p && p->name) {
		*len = p->textlen;
		return p->text;
	}
	*len = pid == 0 ? 4 : 1;
	return pid == 0 ? "Idle" : "?";
}

int64_t
images_thread_pid(const struct images *m, uint32_t tid, uint64_t ts)
{
	const uint32_t *first = hmap_get(&m->thread_first, tid, 0);
	if (!first)
		return -1;
	/* its life begun last by TS, else its first (most threads have one) */
	const struct thread *best = &m->t[*first];
	for (size_t i = *first + 1; i < m->nt && m->t[i].tid == tid; i++)
		if (m->t[i].start <= ts)
			best = &m->t[i];
	return (int64_t)best->pid;
}

/* Narrows [*LO, *HI) to [LO, HI). */
static void
narrow(uint64_t *lo, uint64_t *hi, uint64_t from, uint64_t to)
{
	if (from > *lo)
		*lo = from;
	if (to < *hi)
		*hi = to;
}

/*
 * The image of PID holding ADDR at TS: the loaded one, else any that
 * held it once.  [*LO, *HI) narrows to the times the same answer holds:
 * the one found stays loaded, the ones passed over stay unloaded.
 */
static const struct image *
find_image(const struct images *m, uint32_t pid, uint64_t addr, uint64_t ts, uint64_t *lo,
    uint64_t *hi)
{
	size_t l = 0, h = m->nim;
	/* first entry > (pid, addr) */
	while (l < h) {
		size_t mid = (l + h) / 2;
		const struct image *x = &m->im[mid];
		if (x->pid < pid || (x->pid == pid && x->base <= addr))
			l = mid + 1;
		else
			h = mid;
	}
	const struct image *any = NULL;
	for (size_t i = l, k = 0; i-- > 0 && k < 32; k++) {
		const struct image *x = &m->im[i];
		if (x->pid != pid)
			break;
		if (addr - x->base < x->size) {
			if (x->load <= ts && ts < x->unload) {
				narrow(lo, hi, x->load, x->unload);
				return x;
			}
			if (ts < x->load)
				narrow(lo, hi, 0, x->load);
			else
				narrow(lo, hi, x->unload, UINT64_MAX);
			if (!any)
				any = x;
		}
	}
	return any;
}

static const struct method *
find_method(const struct images *m, uint32_t pid, uint64_t addr)
{
	size_t lo = 0, hi = m->nme;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct method *x = &m->me[mid];
		if (x->pid < pid || (x->pid == pid && x->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++) {
		const struct method *x = &m->me[i];
		if (x->pid != pid)
			break;
		if (addr - x->start < x->size)
			return x;
	}
	return NULL;
}

const char *
images_dos_path(const struct images *m, const char *nt, char *out, size_t cap)
{
	for (size_t i = 0; i < m->nvm; i++) {
		const struct volmap *v = &m->vm[i];
		if (strncasecmp(nt, v->nt, v->ntlen) == 0) {
			const char *rest = nt + v->ntlen;
			size_t dl = strlen(v->dos);
			/* "C:" + "\Windows" or "C:\Windows\" + "System32" */
			if (dl && v->dos[dl - 1] == '\\' && *rest == '\\')
				rest++;
			snprintf(out, cap, "%s%s", v->dos, rest);
			return out;
		}
	}
	if (strncmp(nt, "\\??\\", 4) == 0 && nt[4] && nt[5] == ':')
		return nt + 4;	/* \??\C:\... */
	if (nt[0] == '\\' && strncasecmp(nt, "\\Device\\", 8) != 0) {
		/* "\Windows\System32\kernel32.dll": a path on the system volume */
		for (size_t i = 0; i < m->nvm; i++)
			if (strcasecmp(m->vm[i].nt, "\\SystemRoot\\") == 0 && m->vm[i].dos[0] &&
			    m->vm[i].dos[1] == ':') {
				snprintf(out, cap, "%.2s%s", m->vm[i].dos, nt);
				return out;
			}
	}
	return nt;
}

/*
 * What names ADDR of process PID at TS: an image (returned), a JIT method
 * (*ME, NULL returned), or nothing.  images_frame() and its callers'
 * frame caches decide alike through this.
 */
static const struct image *
find_owner(const struct images *m, uint32_t pid, uint64_t addr, uint64_t ts,
    const struct method **me, uint64_t *lo, uint64_t *hi)
{
	*me = NULL;
	if (images_is_kernel(m, addr))
		return find_image(m, IMG_KERNEL_PID, addr, ts, lo, hi);
	const struct image *im = find_image(m, pid, addr, ts, lo, hi);
	if (im)
		return im;
	if ((*me = find_method(m, pid, addr)) != NULL)
		return NULL;
	/* user-mode addresses of the kernel session's own images (ntdll of System) */
	return find_image(m, IMG_KERNEL_PID, addr, ts, lo, hi);
}

/*
 * What names ADDR of process PID at TS: an image (returned), a JIT method
 * (*ME, NULL returned), or nothing.  images_frame() and its callers'
 * frame caches decide alike through this.  Kept answers first.
 * [*LO, *HI) narrows to the times the answer holds for.
 */
static const struct image *
owner_span(const struct images *m, uint32_t pid, uint64_t addr, uint64_t ts,
    const struct method **me, uint64_t *lo, uint64_t *hi)
{
	if (!m->memo)
		return find_owner(m, pid, addr, ts, me, lo, hi);
	/* a kernel address is every process's: one slot for all of them */
	uint32_t kpid = images_is_kernel(m, addr) ? IMG_KERNEL_PID : pid;
	uint64_t h = (addr ^ (uint64_t)kpid << 40) * 0x9e3779b97f4a7c15ull;
	struct owner_memo *e = &m->memo[h >> (64 - OWNER_MEMO_BITS)];
	if (e->addr != addr || e->pid != kpid || ts < e->lo || ts >= e->hi) {
		uint64_t l = 0, u = UINT64_MAX;
		const struct image *im = find_owner(m, pid, addr, ts, me, &l, &u);
		*e = (struct owner_memo){ .addr = addr, .pid = kpid, .lo = l, .hi = u, .im = im,
		    .me = *me };
	}
	narrow(lo, hi, e->lo, e->hi);
	*me = e->me;
	return e->im;
}

static const struct image *
frame_owner(const struct images *m, uint32_t pid, uint64_t addr, uint64_t ts,
    const struct method **me)
{
	uint64_t lo = 0, hi = UINT64_MAX;
	return owner_span(m, pid, addr, ts, me, &lo, &hi);
}

/* Counts N lookups of IM with the symbol hook (RESOLVED of them named), for frame texts kept. */
static void
count_lookups(const struct images *m, const struct image *im, uint64_t n, uint64_t resolved)
{
	if (m->symcount && im->symcache)
		m->symcount(m->symctx, im->symcache, n, resolved);
}

static void
count_lookup(const struct images *m, const struct image *im, int resolved)
{
	count_lookups(m, im, 1, resolved != 0);
}

/* Keeps S[0..N) in *TEXT (of *CAP bytes, grown as needed). */
static void
keep_text(char **text, size_t *cap, const char *s, size_t n)
{
	if (*cap < n) {
		free(*text);
		*cap = n;
		*text = xmalloc(n);
	}
	memcpy(*text, s, n);
}

size_t
images_frame(const struct images *m, uint32_t pid, uint64_t addr, uint64_t ts, int flags,
    char *out, size_t cap, const char **modname, int *resolved)
{
	const struct image *im;
	const struct method *me;
	const char *mod, *sym = NULL;
	char pathbuf[1024];
	size_t n, ml;

	if (resolved)
		*resolved = 0;
	if (cap < 64)
		return 0;
	im = frame_owner(m, pid, addr, ts, &me);
	if (me) {
		if (modname)
			*modname = me->module;
		/* "module!Method", cut to CAP - 1 bytes as snprintf would */
		const char *mp = (flags & FRAME_FULL_PATHS) ? me->module_path : me->module;
		size_t nl = strlen(me->name);
		ml = strlen(mp);
		if (ml > cap - 1)
			ml = cap - 1;
		memcpy(out, mp, ml);
		n = ml;
		if (n < cap - 1)
			out[n++] = '!';
		if (nl > cap - 1 - n)
			nl = cap - 1 - n;
		memcpy(out + n, me->name, nl);
		n += nl;
		out[n] = '\0';
		return n;
	}
	if (!im) {
		if (modname)
			*modname = "?";
		if (flags & FRAME_ADDRS) {
			memcpy(out, "?!0x", 4);
			n = 4 + (size_t)evt_format_hex(out + 4, addr, 1);
		} else {
			memcpy(out, "?!?", 3);
			n = 3;
		}
		out[n] = '\0';
		return n;
	}
	struct frame_memo *ft = NULL;
	if (m->fmemo) {
		uint64_t h = ((uint64_t)(uintptr_t)im ^ addr) * 0x9e3779b97f4a7c15ull;
		ft = &m->fmemo[h >> (64 - FRAME_MEMO_BITS)];
		if (ft->im == im && ft->addr == addr && ft->flags == flags && ft->outcap == cap) {
			memcpy(out, ft->text, ft->len);
			out[ft->len] = '\0';
			if (modname)
				*modname = im->file;
			if (resolved)
				*resolved = ft->resolved;
			count_lookup(m, im, ft->resolved);	/* as the hook would have */
			return ft->len;
		}
	}
	mod = im->file;
	if (flags & FRAME_FULL_PATHS)
		mod = images_dos_path(m, im->path, pathbuf, sizeof pathbuf);
	if (modname)
		*modname = im->file;
	if (m->sym)	/* the cache slot is the hook's; the image is otherwise unchanged */
		sym = m->sym(m->symctx, &((struct image *)im)->symcache, im->path, im->pdb, im->guid,
		    im->age, addr - im->base);
	if (resolved)
		*resolved = sym != NULL;
	ml = strlen(mod);
	if (ml > cap - 40)
		ml = cap - 40;
	memcpy(out, mod, ml);
	n = ml;
	out[n++] = '!';
	if (sym) {
		size_t sl = strlen(sym);
		if (sl > cap - n - 1)
			sl = cap - n - 1;
		memcpy(out + n, sym, sl);
		n += sl;
	} else {
		out[n++] = '0';
		out[n++] = 'x';
		n += (size_t)evt_format_hex(out + n, addr - im->base, 1);
	}
	out[n] = '\0';
	if (ft) {
		keep_text(&ft->text, &ft->cap, out, n);
		ft->len = n;
		ft->im = im;
		ft->addr = addr;
		ft->flags = flags;
		ft->outcap = cap;
		ft->resolved = sym != NULL;
	}
	return n;
}

/* ---------- stack texts ---------- */

/*
 * Appends the text of frame ADDR to L, escaped; [*LO, *HI) narrows to
 * the times it holds for.  *COUNTED gets the image whose lookup it
 * counted with the symbol hook (NULL: none), *RESOLVED whether the hook
 * named it.
 */
/* frame_text()'s flag: escaped as an attribute's value (';' kept), not for the stack column */
#define FRAME_AS_ATTR 0x100

static void
frame_text(struct images *m, uint32_t pid, uint64_t addr, uint64_t ts, int flags,
    struct evtw_line *l, uint64_t *lo, uint64_t *hi, const struct image **counted, uint8_t *resolved,
    const char **modname)
{
	const struct method *me;
	const struct image *im = owner_span(m, pid, addr, ts, &me, lo, hi);
	struct frame_memo *ft = NULL;
	*counted = im;
	if (im && m->xmemo) {
		/* a frame of an image is its text, escaped once and kept */
		uint64_t h = ((uint64_t)(uintptr_t)im ^ addr ^ (uint64_t)flags << 48) *
		    0x9e3779b97f4a7c15ull;
		ft = &m->xmemo[h >> (64 - FRAME_MEMO_BITS)];
		if (ft->im == im && ft->addr == addr && ft->flags == flags) {
			evtw_mem(l, ft->text, ft->len);
			count_lookup(m, im, ft->resolved);
			*resolved = (uint8_t)ft->resolved;
			if (modname)
				*modname = im->file;	/* (what images_frame() gives) */
			return;
		}
	}
	char fbuf[2048];
	int named;
	size_t fl = images_frame(m, pid, addr, ts, flags & ~FRAME_AS_ATTR, fbuf, sizeof fbuf, modname,
	    &named);
	*resolved = (uint8_t)named;
	size_t at = l->n;
	evtw_esc(l, fbuf, fl, !(flags & FRAME_AS_ATTR));
	if (ft) {
		keep_text(&ft->text, &ft->cap, l->b + at, l->n - at);
		ft->len = l->n - at;
		ft->im = im;
		ft->addr = addr;
		ft->flags = flags;
		ft->resolved = named;
	}
}

/* The frame texts kept (both kinds), made when the first is asked for. */
static void
frame_memos(struct images *m)
{
	if (m->memo && !m->smemo) {
		m->xmemo = xcalloc((size_t)1 << FRAME_MEMO_BITS, sizeof *m->xmemo);
		m->smemo = xcalloc((size_t)1 << STACK_MEMO_BITS, sizeof *m->smemo);
	}
}

void
images_frame_attr(struct images *m, uint32_t pid, uint64_t addr, uint64_t ts, int flags,
    struct evtw_line *l, const char *modkey)
{
	const struct image *im;
	uint8_t resolved;
	uint64_t lo = 0, hi = UINT64_MAX;
	const char *modname = "?";

	frame_memos(m);
	frame_text(m, pid, addr, ts, flags | FRAME_AS_ATTR, l, &lo, &hi, &im, &resolved, &modname);
	if (!modkey)
		return;
	if (im) {	/* (an image's file name is its module name, escaped once) */
		struct image *w = (struct image *)im;	/* (as the symbol hook's slot) */
		if (!w->file_text) {
			struct evtw_line t = { 0 };
			evtw_esc(&t, w->file, strlen(w->file), 0);
			evtw_ch(&t, '\0');
			w->file_text = t.b;
			w->file_textlen = t.n - 1;
		}
		evtw_key(l, modkey);
		evtw_mem(l, w->file_text, w->file_textlen);
	} else
		evtw_kv_s(l, modkey, modname);
}

/* Room for a stack's runs while its text is made: at most one per frame, N. */
static struct stack_run *
runs_room(struct images *m, size_t n)
{
	if (m->capruns < n) {
		m->capruns = n < 64 ? 64 : n;
		free(m->runs);
		m->runs = xmalloc(m->capruns * sizeof *m->runs);
	}
	return m->runs;
}

/* Keeps in slot E the stack FRAMES[0..N), its NRUNS runs and its text T[0..LEN). */
static void
memo_keep(struct stack_memo *e, const uint64_t *frames, size_t n, const struct stack_run *runs,
    uint32_t nruns, const char *t, size_t len)
{
	size_t fb = n * sizeof *frames, rb = nruns * sizeof *runs;
	if (e->bcap < fb + rb + len) {
		e->bcap = fb + rb + len;
		free(e->blk);
		e->blk = xmalloc(e->bcap);
	}
	memcpy(e->blk, frames, fb);
	memcpy(e->blk + fb, runs, rb);
	memcpy(e->blk + fb + rb, t, len);
	e->n = (uint32_t)n;
	e->nruns = nruns;
	e->len = len;
}

const char *
images_stack_text(struct images *m, uint32_t pid, const uint64_t *frames, size_t n,
    uint64_t ts, int flags, struct evtw_line *l, size_t *len)
{
	struct stack_memo *e = NULL;
	uint64_t h = 0;

	if (n == 0) {
		*len = 0;
		return "";
	}
	if (m->memo && n <= STACK_MEMO_FRAMES) {
		frame_memos(m);
		h = hash_u64(hash_bytes(frames, n * sizeof *frames) ^ pid ^ (uint64_t)flags << 32);
		e = &m->smemo[h >> (64 - STACK_MEMO_BITS)];
		if (e->hi && e->hash == h && e->pid == pid && e->n == n && e->flags == flags &&
		    e->lo <= ts && ts < e->hi && memcmp(memo_addr(e), frames, n * sizeof *frames) == 0) {
			const struct stack_run *r = memo_runs(e);
			for (uint32_t i = 0; i < e->nruns; i++)
				count_lookups(m, r[i].im, r[i].n, r[i].res);
			*len = e->len;
			return memo_text(e);
		}
		e->hi = 0;	/* (made anew below) */
	}
	struct stack_run *runs = e ? runs_room(m, n) : NULL;
	uint32_t nruns = 0;
	const struct image *counted;
	uint8_t resolved;
	uint64_t lo = 0, hi = UINT64_MAX;
	size_t s0 = l->n;
	for (size_t i = n; i-- > 0;) {
		frame_text(m, pid, frames[i], ts, flags, l, &lo, &hi, &counted, &resolved, NULL);
		if (e && counted) {
			if (nruns == 0 || runs[nruns - 1].im != counted)
				runs[nruns++] = (struct stack_run){ counted, 0, 0 };
			runs[nruns - 1].n++;
			runs[nruns - 1].res += resolved;
		}
		if (i)
			evtw_frame_sep(l);
	}
	*len = l->n - s0;
	if (!e || *len > STACK_MEMO_TEXT)
		return l->b + s0;
	memo_keep(e, frames, n, runs, nruns, l->b + s0, *len);
	e->hash = h;
	e->pid = pid;
	e->flags = flags;
	e->lo = lo;
	e->hi = hi;
	return l->b + s0;
}

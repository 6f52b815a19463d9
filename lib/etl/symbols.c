/*
 * symbols.c - finding the right PDB for each image and turning RVAs
 * into readable function names.  See symbols.h for the search rules.
 */
#include "etl/symbols.h"
#include "base/path.h"
#include "base/cli.h"
#include "base/hash.h"
#include "etl/pdb.h"
#include "etl/zip.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIRCACHE 256

/* A directory's entries, for case-insensitive matching (see listing()). */
struct dirlist {
	char *path;
	char **names;		/* sorted case-insensitively */
	size_t n;
	int read;		/* the directory could be read: names is all it holds */
	struct dirlist *next;
};

struct sym_image {
	struct symctx *ctx;
	char *image, *pdbname, *base;	/* base: file name part of pdbname */
	uint8_t guid[16];
	uint32_t age;
	int has_id;
	char key[41];
	struct pdb *pdb;		/* NULL unless status == SYM_OK */
	char *path;
	enum sym_status status;
	char *detail;
	int x86;
	char **display;			/* per symbol id, readable names */
	uint64_t lookups, resolved;
	struct sym_image *next;		/* hash chain */
};

struct symctx {
	char **dirs;
	size_t ndirs;
	char **remote;
	size_t nremote;
	char *tracedir;
	char *zippath;
	int zipfd;
	int zipstate;			/* 0 not opened, 1 open, -1 failed */
	struct zip_archive zip;
	char ziperr[300];
	struct sym_image **images;	/* in order of first use */
	size_t nimages, capimages;
	struct sym_image *hash[1024];
	struct sym_image *last;
	struct dirlist *dirs_seen[DIRCACHE];
};

struct symctx *sym_new(void)
{
	struct symctx *c = xcalloc(1, sizeof *c);
	c->zipfd = -1;
	return c;
}

static void free_image(struct sym_image *im)
{
	size_t i, n;
	if (im->display) {
		const struct pdb_symbol *pub;
		size_t np = pdb_publics(im->pdb, &pub);
		n = pdb_symbol_count(im->pdb);
		for (i = 0; i < n; i++)
			if (im->display[i] && (i < n - np ||
			    im->display[i] != pub[i - (n - np)].name))
				free(im->display[i]);
		free(im->display);
	}
	pdb_close(im->pdb);
	free(im->image);
	free(im->pdbname);
	free(im->path);
	free(im->detail);
	free(im);
}

void sym_free(struct symctx *c)
{
	size_t i;
	if (!c)
		return;
	for (i = 0; i < c->nimages; i++)
		free_image(c->images[i]);
	free(c->images);
	for (i = 0; i < c->ndirs; i++)
		free(c->dirs[i]);
	free(c->dirs);
	for (i = 0; i < c->nremote; i++)
		free(c->remote[i]);
	free(c->remote);
	for (i = 0; i < DIRCACHE; i++)
		while (c->dirs_seen[i]) {
			struct dirlist *l = c->dirs_seen[i];
			size_t k;
			c->dirs_seen[i] = l->next;
			for (k = 0; k < l->n; k++)
				free(l->names[k]);
			free(l->names);
			free(l->path);
			free(l);
		}
	free(c->tracedir);
	free(c->zippath);
	if (c->zipstate > 0)
		zip_close(&c->zip);
	if (c->zipfd >= 0)
		close(c->zipfd);
	free(c);
}

static void add_list(char ***v, size_t *n, const char *s, size_t len)
{
	size_t i;
	char *d = xstrndup(s, len);
	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i], d) == 0) {
			free(d);
			return;
		}
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = d;
}

static int is_url(const char *s, size_t n)
{
	const char *p = memchr(s, ':', n);
	return p && (size_t)(p - s) + 2 < n && p[1] == '/' && p[2] == '/';
}

/* A local directory from a symbol path: Windows separators become '/'. */
static void add_dir(struct symctx *c, const char *s, size_t n)
{
	char *d;
	size_t i;
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n)
		return;
	if (is_url(s, n)) {
		add_list(&c->remote, &c->nremote, s, n);
		return;
	}
	d = xstrndup(s, n);
	for (i = 0; i < n; i++)
		if (d[i] == '\\')
			d[i] = '/';
	add_list(&c->dirs, &c->ndirs, d, strlen(d));
	free(d);
}

void sym_add_path(struct symctx *c, const char *spec)
{
	const char *e = spec;
	while (e && *e) {
		const char *end = strchr(e, ';'), *star;
		size_t n = end ? (size_t)(end - e) : strlen(e);
		size_t skip = 0;
		if (n >= 4 && strncasecmp(e, "srv*", 4) == 0)
			skip = 1;
		else if (n >= 6 && strncasecmp(e, "cache*", 6) == 0)
			skip = 1;
		else if (n >= 7 && strncasecmp(e, "symsrv*", 7) == 0)
			skip = 2;	/* symsrv*symsrv.dll*CACHE*URL */
		if (skip) {
			/* each '*'-separated part after the keyword(s) */
			const char *p = e, *stop = e + n;
			size_t k;
			for (k = 0; k < skip && p < stop; k++) {
				star = memchr(p, '*', (size_t)(stop - p));
				p = star ? star + 1 : stop;
			}
			while (p < stop) {
				star = memchr(p, '*', (size_t)(stop - p));
				add_dir(c, p, (size_t)((star ? star : stop) - p));
				p = star ? star + 1 : stop;
			}
		} else {
			add_dir(c, e, n);
		}
		e = end ? end + 1 : NULL;
	}
}

const char *sym_unreadable_dir(const struct symctx *c)
{
	struct stat st;
	size_t i;
	for (i = 0; i < c->ndirs; i++) {
		const char *d = c->dirs[i];
		if (stat(d, &st) < 0 || access(d, S_ISDIR(st.st_mode) ? R_OK | X_OK : R_OK) < 0)
			return d;
	}
	return NULL;
}

void sym_add_env(struct symctx *c)
{
	const char *s;
	if ((s = getenv("_NT_SYMBOL_PATH")) && *s)
		sym_add_path(c, s);
	if ((s = getenv("_NT_ALT_SYMBOL_PATH")) && *s)
		sym_add_path(c, s);
}

void sym_add_trace(struct symctx *c, const char *trace_path)
{
	const char *slash = strrchr(trace_path, '/');
	unsigned char magic[4];
	int fd;

	free(c->tracedir);
	c->tracedir = slash ? xstrndup(trace_path, (size_t)(slash - trace_path))
	    : xstrdup(".");
	if (c->tracedir[0] == 0) {
		free(c->tracedir);
		c->tracedir = xstrdup("/");
	}
	/* (never waits: a path swapped for a FIFO since etl2evt read it is passed over) */
	if ((fd = open(trace_path, O_RDONLY | O_NONBLOCK | O_NOCTTY)) < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, magic, 4, 0) == 4 &&
	    zip_magic(magic, 4)) {
		free(c->zippath);
		c->zippath = xstrdup(trace_path);
	}
	close(fd);
}

/* ---- finding files ---- */

/*
 * Directory listings for case-insensitive matches, read once per
 * directory: a trace names hundreds of images and a symbol cache can hold
 * tens of thousands of entries.
 */
static int cmp_ci(const void *a, const void *b)
{
	return strcasecmp(*(char *const *)a, *(char *const *)b);
}

static unsigned hash_str(const char *s)
{
	return (unsigned)(hash_bytes(s, strlen(s)) % DIRCACHE);
}

/* DIR's listing if it was read already, else NULL. */
static const struct dirlist *listed(const struct symctx *c, const char *dir)
{
	for (const struct dirlist *l = c->dirs_seen[hash_str(dir)]; l; l = l->next)
		if (strcmp(l->path, dir) == 0)
			return l;
	return NULL;
}

/* DIR's listing, read now (once: join_ci() asks listed() first). */
static const struct dirlist *listing(struct symctx *c, const char *dir)
{
	unsigned h = hash_str(dir);
	struct dirlist *l;
	struct dirent *e;
	size_t cap = 0;
	DIR *d;

	l = xcalloc(1, sizeof *l);
	l->path = xstrdup(dir);
	if ((d = opendir(dir))) {
		l->read = 1;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.' && (!e->d_name[1] ||
			    (e->d_name[1] == '.' && !e->d_name[2])))
				continue;
			if (l->n == cap) {
				cap = cap ? 2 * cap : 16;
				l->names = xrealloc(l->names, cap * sizeof *l->names);
			}
			l->names[l->n++] = xstrdup(e->d_name);
		}
		closedir(d);
		if (l->n > 1)	/* an empty directory has no array (qsort wants one) */
			qsort(l->names, l->n, sizeof *l->names, cmp_ci);
	}
	l->next = c->dirs_seen[h];
	c->dirs_seen[h] = l;
	return l;
}

static char **find_ci(const struct dirlist *l, const char *name)
{
	return l->n ? bsearch(&name, l->names, l->n, sizeof *l->names, cmp_ci) : NULL;
}

/*
 * DIR/NAME, matching NAME case-insensitively when not there exactly.
 * A directory read already answers "not there" without a stat: each
 * image asks for several names in each symbol directory, and most are
 * not there (900 failed stats for a trace of 150 images).
 */
static char *join_ci(struct symctx *c, const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p, **hit;
	const struct dirlist *l = listed(c, dir);
	struct stat st;

	if (l && l->read && !find_ci(l, name))
		return NULL;
	p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	if (stat(p, &st) == 0)
		return p;
	if (!l)
		l = listing(c, dir);
	hit = find_ci(l, name);
	if (hit) {
		snprintf(p, n, "%s/%s", dir, *hit);
		return p;
	}
	free(p);
	return NULL;
}

static char *join3_ci(struct symctx *ctx, const char *dir, const char *a,
    const char *b, const char *c)
{
	char *x = join_ci(ctx, dir, a), *y = NULL, *z = NULL;
	if (x)
		y = join_ci(ctx, x, b);
	if (y && c)
		z = join_ci(ctx, y, c);
	free(x);
	if (!c)
		return y;
	free(y);
	return z;
}

static void note(struct sym_image *im, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct sym_image *im, const char *fmt, ...)
{
	char buf[700];
	size_t have = im->detail ? strlen(im->detail) : 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (have > 2000)
		return;		/* enough said */
	im->detail = xrealloc(im->detail, have + strlen(buf) + 3);
	if (have)
		memcpy(im->detail + have, "; ", 3), have += 2;
	strcpy(im->detail + have, buf);
}

/*
 * Takes P if its GUID and age match the image (the age of the info
 * stream or of the DBI stream: linkers write both, tools disagree on
 * which one the image's RSDS age repeats).
 */
static int try_pdb(struct sym_image *im, struct pdb *p, const char *where)
{
	char key[41];
	if (memcmp(pdb_guid(p), im->guid, 16) == 0 &&
	    (pdb_age(p) == im->age || pdb_dbi_age(p) == im->age)) {
		if (pdb_load(p) < 0) {
			im->status = SYM_DAMAGED;
			note(im, "%s", pdb_error(p));
			pdb_close(p);
			return 0;
		}
		im->pdb = p;
		im->path = xstrdup(where);
		im->status = SYM_OK;
		if (pdb_damaged(p))	/* usable, but say what was skipped */
			note(im, "%zu damaged records skipped, first: %s",
			    pdb_damaged(p), pdb_first_damage(p));
		im->x86 = pdb_machine(p) == 0x14c;
		return 1;
	}
	pdb_key(pdb_guid(p), pdb_age(p), key);
	note(im, "%s has GUID/age %s, not %s", where, key, im->key);
	if (im->status == SYM_NOT_FOUND)
		im->status = SYM_MISMATCH;
	pdb_close(p);
	return 0;
}

static int try_file(struct sym_image *im, char *path)
{
	char err[600];
	struct pdb *p;
	int ok;
	if (!path)
		return 0;
	if (!(p = pdb_open(path, err, sizeof err))) {
		/* join_ci() found it, so it exists: unreadable or damaged */
		note(im, "%s", err);
		if (im->status == SYM_NOT_FOUND)
			im->status = SYM_DAMAGED;
		free(path);
		return 0;
	}
	ok = try_pdb(im, p, path);
	free(path);
	return ok;
}

/* The cache has DIR/BASE/ but not our key: say which builds it has. */
static void other_keys(struct sym_image *im, const char *dir)
{
	char *sub = join_ci(im->ctx, dir, im->base), list[300] = "";
	struct dirent *e;
	struct stat st;
	DIR *d;
	int n = 0;
	if (!sub || stat(sub, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    !(d = opendir(sub))) {
		free(sub);
		return;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strcasecmp(e->d_name, im->key) != 0 &&
		    n++ < 4)
			snprintf(list + strlen(list), sizeof list - strlen(list),
			    "%s%s", list[0] ? ", " : "", e->d_name);
	closedir(d);
	if (n) {
		note(im, "%s has only other builds (GUID+age %s%s), not %s", sub,
		    list, n > 4 ? ", ..." : "", im->key);
		if (im->status == SYM_NOT_FOUND)
			im->status = SYM_MISMATCH;
	}
	free(sub);
}

/* A flat DIR/BASE candidate: only a regular file counts. */
static char *flat_file(struct symctx *c, const char *dir, const char *base)
{
	char *p = join_ci(c, dir, base);
	struct stat st;
	if (p && (stat(p, &st) < 0 || !S_ISREG(st.st_mode))) {
		free(p);
		return NULL;
	}
	return p;
}

static int search_dir(struct sym_image *im, const char *dir)
{
	char *idx, two[3];
	struct stat st;
	if (stat(dir, &st) == 0 && S_ISREG(st.st_mode))	/* --symbols app.pdb */
		return strcasecmp(path_base(dir), im->base) == 0 &&
		    try_file(im, xstrdup(dir));
	if (try_file(im, join3_ci(im->ctx, dir, im->base, im->key, im->base)))
		return 1;
	other_keys(im, dir);
	idx = join_ci(im->ctx, dir, "index2.txt");
	if (idx && stat(idx, &st) == 0 && strlen(im->base) >= 2) {
		char *sub;
		memcpy(two, im->base, 2);
		two[2] = 0;
		sub = join_ci(im->ctx, dir, two);
		if (sub && try_file(im, join3_ci(im->ctx, sub, im->base,
		    im->key, im->base))) {
			free(sub);
			free(idx);
			return 1;
		}
		free(sub);
	}
	free(idx);
	return try_file(im, flat_file(im->ctx, dir, im->base));
}

/* Member name matches symbols\BASE\KEY\BASE (either separator, any case). */
static int member_is(const char *m, const char *base, const char *key)
{
	size_t nb = strlen(base), nk = strlen(key);
	if (strncasecmp(m, "symbols", 7) != 0 || (m[7] != '\\' && m[7] != '/'))
		return 0;
	m += 8;
	if (strncasecmp(m, base, nb) != 0 || (m[nb] != '\\' && m[nb] != '/'))
		return 0;
	m += nb + 1;
	if (strncasecmp(m, key, nk) != 0 || (m[nk] != '\\' && m[nk] != '/'))
		return 0;
	return strcasecmp(m + nk + 1, base) == 0;
}

static int try_member(struct sym_image *im, size_t i)
{
	struct symctx *c = im->ctx;
	char err[600], name[1200];
	FILE *tmp = tmpfile();
	struct pdb *p;

	snprintf(name, sizeof name, "%s:%s", c->zippath, c->zip.m[i].name);
	if (!tmp) {
		note(im, "%s: cannot create a temporary file: %s", name,
		    strerror(errno));
		return 0;
	}
	if (zip_extract_fd(&c->zip, i, fileno(tmp), err, sizeof err) < 0) {
		note(im, "%s: %s", name, err);
		if (im->status == SYM_NOT_FOUND)
			im->status = SYM_DAMAGED;
		fclose(tmp);
		return 0;
	}
	p = pdb_open_fd(name, fileno(tmp), err, sizeof err);
	fclose(tmp);		/* the mapping keeps the data */
	if (!p) {
		note(im, "%s", err);
		if (im->status == SYM_NOT_FOUND)
			im->status = SYM_DAMAGED;
		return 0;
	}
	return try_pdb(im, p, name);
}

static int search_zip(struct sym_image *im)
{
	struct symctx *c = im->ctx;
	size_t i;
	if (!c->zippath)
		return 0;
	if (c->zipstate == 0) {
		c->zipstate = -1;
		if ((c->zipfd = open(c->zippath, O_RDONLY)) < 0)
			snprintf(c->ziperr, sizeof c->ziperr, "%s: %s",
			    c->zippath, strerror(errno));
		else if (zip_open_fd(&c->zip, c->zipfd, c->ziperr,
		    sizeof c->ziperr) == 0)
			c->zipstate = 1;
	}
	if (c->zipstate < 0) {
		note(im, "%s", c->ziperr);
		return 0;
	}
	for (i = 0; i < c->zip.n; i++)
		if (member_is(c->zip.m[i].name, im->base, im->key))
			return try_member(im, i);
	for (i = 0; i < c->zip.n; i++)
		if (strncasecmp(c->zip.m[i].name, "symbols", 7) == 0 &&
		    strcasecmp(path_base(c->zip.m[i].name), im->base) == 0 &&
		    try_member(im, i))
			return 1;
	return 0;
}

static void find_pdb(struct sym_image *im)
{
	struct symctx *c = im->ctx;
	size_t i;
	if (!im->has_id || !im->base[0] || strcmp(im->base, ".") == 0 ||
	    strcmp(im->base, "..") == 0) {
		im->status = SYM_NO_ID;
		note(im, "the trace gives no PDB identity (no DbgID_RSDS "
		    "event) for this image");
		return;
	}
	im->status = SYM_NOT_FOUND;
	for (i = 0; i < c->ndirs; i++)
		if (search_dir(im, c->dirs[i]))
			return;
	if (c->tracedir && search_dir(im, c->tracedir))
		return;
	if (c->tracedir) {
		/* an unpacked PerfView .etl.zip: TRACEDIR/symbols/NAME/KEY/NAME */
		char *sub = join_ci(c, c->tracedir, "symbols");
		int found = sub && search_dir(im, sub);
		free(sub);
		if (found)
			return;
	}
	if (search_zip(im))
		return;
	if (im->status == SYM_NOT_FOUND) {
		note(im, "%s/%s/%s not found in %zu symbol director%s%s%s",
		    im->base, im->key, im->base, c->ndirs + (c->tracedir != NULL),
		    c->ndirs + (c->tracedir != NULL) == 1 ? "y" : "ies",
		    c->zippath ? " or the trace's zip" : "",
		    c->nremote ? " (remote symbol servers are not contacted)" : "");
	}
}

/* ---- images ---- */

static unsigned hash_id(const char *pdb, const uint8_t guid[16], uint32_t age)
{
	uint32_t h = 2166136261u;
	int i;
	for (i = 0; i < 16; i++)
		h = (h ^ guid[i]) * 16777619u;
	h = (h ^ age) * 16777619u;
	for (; *pdb; pdb++)
		h = (h ^ (unsigned char)tolower((unsigned char)*pdb)) * 16777619u;
	return h % 1024;
}

struct sym_image *sym_image(struct symctx *c, const char *image,
    const char *pdb, const uint8_t guid[16], uint32_t age)
{
	static const uint8_t zero[16];
	struct sym_image *im;
	unsigned h;

	if (!pdb)
		pdb = "";
	if (!guid)
		guid = zero;
	if (!image)
		image = "?";
	im = c->last;
	if (im && im->age == age && memcmp(im->guid, guid, 16) == 0 &&
	    strcasecmp(im->pdbname, pdb) == 0 && (im->has_id ||
	    strcasecmp(im->image, image) == 0))
		return im;
	h = hash_id(pdb[0] ? pdb : image, guid, age);
	for (im = c->hash[h]; im; im = im->next)
		if (im->age == age && memcmp(im->guid, guid, 16) == 0 &&
		    strcasecmp(im->pdbname, pdb) == 0 && (im->has_id ||
		    strcasecmp(im->image, image) == 0))
			return c->last = im;
	im = xcalloc(1, sizeof *im);
	im->ctx = c;
	im->image = xstrdup(image);
	im->pdbname = xstrdup(pdb);
	im->base = (char *)path_base(im->pdbname);
	memcpy(im->guid, guid, 16);
	im->age = age;
	im->has_id = memcmp(guid, zero, 16) != 0;
	if (im->has_id)
		pdb_key(guid, age, im->key);
	im->next = c->hash[h];
	c->hash[h] = im;
	if (c->nimages == c->capimages) {
		c->capimages = c->capimages ? 2 * c->capimages : 32;
		c->images = xrealloc(c->images, c->capimages * sizeof *c->images);
	}
	c->images[c->nimages++] = im;
	find_pdb(im);
	return c->last = im;
}

static const char *display_name(struct sym_image *im, const struct pdb_symbol *s)
{
	size_t id;
	char *d;
	if (s->kind != PDB_S_PUB32)
		return s->name;
	if (!im->display)
		im->display = xcalloc(pdb_symbol_count(im->pdb) + 1,
		    sizeof *im->display);
	id = pdb_symbol_id(im->pdb, s);
	if (im->display[id])
		return im->display[id];
	d = sym_demangle(s->name, im->x86);
	/* not decorated: the raw name itself (not freed, see free_image) */
	im->display[id] = d ? d : (char *)s->name;
	return im->display[id];
}

const char *sym_lookup(struct sym_image *im, uint32_t rva, uint32_t *disp)
{
	const struct pdb_symbol *s;
	uint32_t off;
	im->lookups++;
	if (!im->pdb || !(s = pdb_lookup(im->pdb, rva, &off)))
		return NULL;
	im->resolved++;
	if (disp)
		*disp = off;
	return display_name(im, s);
}

const char *sym_etl_hook(void *ctx, void **cache, const char *image_path, const char *pdb_name,
    const uint8_t guid[16], uint32_t age, uint64_t rva)
{
	struct sym_image *im = cache ? *cache : NULL;
	if (!im)
		im = sym_image(ctx, path_base(image_path ? image_path : "?"), pdb_name, guid, age);
	if (cache)
		*cache = im;
	if (rva > UINT32_MAX) {
		im->lookups++;
		return NULL;
	}
	return sym_lookup(im, (uint32_t)rva, NULL);
}

void sym_etl_count(void *ctx, void *cache, uint64_t lookups, uint64_t resolved)
{
	struct sym_image *im = cache;
	(void)ctx;
	im->lookups += lookups;
	im->resolved += resolved;
}

/* ---- reporting ---- */

size_t sym_image_count(const struct symctx *c) { return c->nimages; }

void sym_image_info(const struct symctx *c, size_t i, struct sym_image_info *o)
{
	const struct sym_image *im = c->images[i];
	o->image = im->image;
	o->pdb = im->pdbname;
	o->key = im->key;
	o->path = im->path;
	o->status = im->status;
	o->detail = im->detail ? im->detail : "";
	o->lookups = im->lookups;
	o->resolved = im->resolved;
}

const char *sym_status_name(enum sym_status s)
{
	switch (s) {
	case SYM_OK: return "resolved";
	case SYM_NO_ID: return "no-pdb-id";
	case SYM_NOT_FOUND: return "pdb-not-found";
	case SYM_MISMATCH: return "pdb-mismatch";
	case SYM_DAMAGED: return "pdb-damaged";
	}
	return "?";
}

/* Counted as the #symbols lines are: images whose frames were looked up. */
void sym_summary(const struct symctx *c, FILE *f, const char *prefix)
{
	unsigned long n[SYM_DAMAGED + 1] = { 0 };
	size_t i;
	for (i = 0; i < c->nimages; i++)
		if (c->images[i]->lookups > 0)
			n[c->images[i]->status]++;
	fprintf(f, "%s: symbols: %lu image%s resolved, %lu PDB%s not found, %lu PDB%s mismatched",
	    prefix, n[SYM_OK], n[SYM_OK] == 1 ? "" : "s", n[SYM_NOT_FOUND],
	    n[SYM_NOT_FOUND] == 1 ? "" : "s", n[SYM_MISMATCH], n[SYM_MISMATCH] == 1 ? "" : "s");
	if (n[SYM_DAMAGED])
		fprintf(f, ", %lu damaged", n[SYM_DAMAGED]);
	if (n[SYM_NO_ID])
		fprintf(f, ", %lu image%s without a PDB identity", n[SYM_NO_ID],
		    n[SYM_NO_ID] == 1 ? "" : "s");
	fputc('\n', f);
}

void sym_report(const struct symctx *c, FILE *f, const char *prefix, int all)
{
	size_t i;
	for (i = 0; i < c->nimages; i++) {
		const struct sym_image *im = c->images[i];
		if (im->status == SYM_OK && !all)
			continue;
		if (im->status == SYM_OK)
			fprintf(f, "%s: symbols: %s: %s (%llu of %llu addresses "
			    "named)%s%s%s\n", prefix, im->image, im->path,
			    (unsigned long long)im->resolved,
			    (unsigned long long)im->lookups,
			    pdb_rvas_guessed(im->pdb) ? "; NGEN PDB without "
			    "section headers, section layout assumed" : "",
			    im->detail ? "; " : "", im->detail ? im->detail : "");
		else
			fprintf(f, "%s: symbols: %s: %s%s%s: %s (%llu addresses)\n",
			    prefix, im->image, sym_status_name(im->status),
			    im->pdbname[0] ? " " : "", im->pdbname,
			    im->detail ? im->detail : "",
			    (unsigned long long)im->lookups);
	}
	sym_report_remote(c, f, prefix);
}

void sym_report_remote(const struct symctx *c, FILE *f, const char *prefix)
{
	size_t i;
	for (i = 0; i < c->nremote; i++)
		fprintf(f, "%s: symbols: remote symbol server %s was not "
		    "contacted (etlkit never downloads; copy the cache)\n",
		    prefix, c->remote[i]);
}

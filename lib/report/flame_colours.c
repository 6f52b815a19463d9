/*
 * flame_colours.c - the flame graph's colours: flamegraph.pl's palettes
 * (--colors), a name hashed to its shade so that a function has the
 * same colour in every graph, the palette file (--cp), the red/blue
 * scale of differential graphs and the background gradient.
 */
#include "report/flame_int.h"
#include "base/cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* palettes                                                            */

/*
 * The hash that picks a name's shade.  Not base/hash.h: its bits are in
 * every SVG (the colours), so it must stay exactly this function for
 * graphs to keep their colours from one version to the next.
 */
static uint64_t
flame_colour_hash(const char *s, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull), w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 32;
	return h;
}

static const char *const palettes[] = {
	"hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "python",
	"rust", "etw", "red", "green", "blue", "aqua", "yellow", "purple",
	"orange", NULL
};

int
flame_palette_known(const char *p)
{
	int i;

	for (i = 0; palettes[i]; i++)
		if (strcmp(p, palettes[i]) == 0)
			return 1;
	return 0;
}

static int
has_sub(const char *s, size_t n, const char *sub)
{
	size_t k = strlen(sub), i;

	for (i = 0; i + k <= n; i++)
		if (memcmp(s + i, sub, k) == 0)
			return 1;
	return 0;
}

static int
ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static void
set_rgb(unsigned char rgb[3], double r, double g, double b)
{
	rgb[0] = (unsigned char)r;
	rgb[1] = (unsigned char)g;
	rgb[2] = (unsigned char)b;
}

/* The single-hue palettes of flamegraph.pl, V1 V2 V3 in [0,1). */
static void
hue(const char *h, double v1, double v2, double v3, unsigned char rgb[3])
{
	if (strcmp(h, "hot") == 0)
		set_rgb(rgb, 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
	else if (strcmp(h, "mem") == 0)
		set_rgb(rgb, 0, 190 + (int)(50 * v2), (int)(210 * v1));
	else if (strcmp(h, "io") == 0)
		set_rgb(rgb, 80 + (int)(60 * v1), 80 + (int)(60 * v1), 190 + (int)(55 * v2));
	else if (strcmp(h, "red") == 0)
		set_rgb(rgb, 200 + (int)(55 * v1), 50 + (int)(80 * v1), 50 + (int)(80 * v1));
	else if (strcmp(h, "green") == 0)
		set_rgb(rgb, 50 + (int)(60 * v1), 200 + (int)(55 * v1), 50 + (int)(60 * v1));
	else if (strcmp(h, "blue") == 0)
		set_rgb(rgb, 80 + (int)(60 * v1), 80 + (int)(60 * v1), 205 + (int)(50 * v1));
	else if (strcmp(h, "yellow") == 0)
		set_rgb(rgb, 175 + (int)(55 * v1), 175 + (int)(55 * v1), 50 + (int)(20 * v1));
	else if (strcmp(h, "purple") == 0)
		set_rgb(rgb, 190 + (int)(65 * v1), 80 + (int)(60 * v1), 190 + (int)(65 * v1));
	else if (strcmp(h, "aqua") == 0)
		set_rgb(rgb, 50 + (int)(60 * v1), 165 + (int)(55 * v1), 165 + (int)(55 * v1));
	else if (strcmp(h, "orange") == 0)
		set_rgb(rgb, 190 + (int)(65 * v1), 90 + (int)(65 * v1), 0);
	else
		set_rgb(rgb, 160, 160, 160);
}

int
flame_annotation(const char *s, size_t n)
{
	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    strchr("kjiw", s[n - 2]))
		return s[n - 2];
	return 0;
}

/* The palette's choice of hue for a name (multi-hue palettes). */
static const char *
pick_hue(const char *pal, const char *s, size_t n, int ann)
{
	if (strcmp(pal, "wakeup") == 0)
		return "aqua";
	if (strcmp(pal, "chain") == 0)
		return ann == 'w' ? "aqua" : "blue";
	if (strcmp(pal, "java") == 0 || strcmp(pal, "js") == 0 ||
	    strcmp(pal, "perl") == 0) {
		if (ann == 'k')
			return "orange";
		if (ann == 'j')
			return "green";
		if (ann == 'i')
			return "aqua";
		if (strcmp(pal, "perl") == 0)
			return has_sub(s, n, "::") ? "yellow" :
			    (has_sub(s, n, ".pm") || has_sub(s, n, ".pl")) ? "green" : "red";
		if (strcmp(pal, "js") == 0)
			return has_sub(s, n, "/") ? "green" :
			    has_sub(s, n, "::") ? "yellow" : "red";
		return (has_sub(s, n, "/") || (n > 5 && (memcmp(s, "java.", 5) == 0 ||
		    memcmp(s, "org.", 4) == 0 || memcmp(s, "com.", 4) == 0))) ?
		    "green" : has_sub(s, n, "::") ? "yellow" : "red";
	}
	if (strcmp(pal, "python") == 0)
		return has_sub(s, n, "site-packages") ? "aqua" :
		    (has_sub(s, n, ".py") || has_sub(s, n, "python")) ? "yellow" : "red";
	if (strcmp(pal, "rust") == 0)
		return (n >= 5 && (memcmp(s, "core:", 5) == 0 || memcmp(s, "std::", 5) == 0 ||
		    (n >= 6 && memcmp(s, "alloc:", 6) == 0))) ? "orange" :
		    has_sub(s, n, "::") ? "aqua" : "red";
	if (strcmp(pal, "etw") == 0) {
		/* Windows frames "module!function": kernel, managed, native */
		const char *bang = memchr(s, '!', n);
		size_t ml = bang ? (size_t)(bang - s) : n;

		if (ann == 'k' || ends_with(s, ml, ".sys") || ends_with(s, ml, ".SYS") ||
		    (ml == 12 && memcmp(s, "ntoskrnl.exe", 12) == 0) ||
		    (ml == 7 && memcmp(s, "hal.dll", 7) == 0))
			return "orange";
		if (ann == 'j' || ends_with(s, ml, ".ni.dll") ||
		    (bang && ml == 12 && memcmp(s, "mscorlib.dll", 12) == 0) ||
		    (bang && (has_sub(bang, n - ml, "System.") || has_sub(bang, n - ml, "Microsoft."))))
			return "green";
		if (ml == 1 && s[0] == '?')
			return "grey";
		return "hot";
	}
	return pal;
}

int
flame_color(const char *pal, const char *s, size_t n, unsigned char rgb[3])
{
	int ann;
	uint64_t h;
	double v1, v2, v3;
	const char *hname;

	if (!flame_palette_known(pal))
		return -1;
	ann = flame_annotation(s, n);
	if ((n == 1 && s[0] == '-') || (n == 2 && s[0] == '-' && s[1] == '-')) {
		set_rgb(rgb, 160, 160, 160);
		return 0;
	}
	if (ann)
		n -= 4;
	/* stable per name: the same function has the same colour everywhere */
	h = flame_colour_hash(s, n, 0x5eed);
	v1 = (double)(h & 0xffff) / 65536.0;
	v2 = (double)((h >> 16) & 0xffff) / 65536.0;
	v3 = (double)((h >> 32) & 0xffff) / 65536.0;
	hname = pick_hue(pal, s, n, ann);
	hue(hname, v1, v2, v3, rgb);
	return 0;
}

/* ------------------------------------------------------------------ */
/* differential and background                                         */

void
flame_diff_colour(double delta, double maxdelta, int negate, unsigned char rgb[3])
{
	double v = negate ? -delta : delta, m = maxdelta;

	rgb[0] = rgb[1] = rgb[2] = 255;
	if (m <= 0)
		return;
	if (v > m)
		v = m;
	if (v < -m)
		v = -m;
	if (v > 0)
		rgb[1] = rgb[2] = (unsigned char)(int)(210 * (m - v) / m);
	else if (v < 0)
		rgb[0] = rgb[1] = (unsigned char)(int)(210 * (m + v) / m);
}

int
flame_valid_hex_colour(const char *s)
{
	size_t i;

	if (s == NULL || s[0] != '#' || strlen(s) != 7)
		return 0;
	for (i = 1; i < 7; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return 0;
	return 1;
}

void
flame_background(const struct flame_opts *o, int is_diff, const char **c1, const char **c2)
{
	const char *bg = o->bgcolors;

	if (bg == NULL) {
		if (is_diff)
			bg = "grey";
		else if (strcmp(o->palette, "mem") == 0)
			bg = "green";
		else if (strcmp(o->palette, "io") == 0 || strcmp(o->palette, "wakeup") == 0 ||
		    strcmp(o->palette, "chain") == 0)
			bg = "blue";
		else
			bg = "yellow";
	}
	if (strcmp(bg, "blue") == 0)
		*c1 = "#eeeeee", *c2 = "#e0e0ff";
	else if (strcmp(bg, "green") == 0)
		*c1 = "#eef2ee", *c2 = "#e0ffe0";
	else if (strcmp(bg, "grey") == 0)
		*c1 = "#f8f8f8", *c2 = "#e8e8e8";
	else if (flame_valid_hex_colour(bg))
		*c1 = *c2 = bg;
	else
		*c1 = "#eeeeee", *c2 = "#eeeeb0";
}

/* ------------------------------------------------------------------ */
/* palette file: "name->rgb(r,g,b)" lines, as flamegraph.pl --cp       */

/* The names in the string table; the colour of id K in rgb[K]. */
struct flame_palfile {
	struct intern names;
	unsigned char (*rgb)[3];
	size_t caprgb;
};

/* The colour slot of NAME; *ISNEW when it was not there before. */
static unsigned char *
palfile_slot(struct flame_palfile *pf, const char *name, size_t len, int *isnew)
{
	size_t before = pf->names.n;
	uint32_t id = intern_add(&pf->names, name, len);

	*isnew = pf->names.n != before;
	if (pf->names.n > pf->caprgb) {
		pf->caprgb = pf->caprgb ? 2 * pf->caprgb : 256;
		pf->rgb = xrealloc(pf->rgb, pf->caprgb * sizeof(*pf->rgb));
	}
	return pf->rgb[id];
}

struct flame_palfile *
flame_palfile_load(const char *path)
{
	struct flame_palfile *pf = xcalloc(1, sizeof(*pf));
	FILE *fp;
	char line[8192];
	unsigned long lineno = 0;

	intern_init(&pf->names);
	if ((fp = fopen(path, "r")) == NULL) {
		if (errno != ENOENT)
			cli_warn("%s: %s", path, strerror(errno));
		return pf;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *arrow;
		unsigned r, g, b;
		unsigned char *rgb;
		int isnew;
		size_t n = strlen(line);

		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		arrow = strstr(line, "->rgb(");
		if (arrow == NULL || sscanf(arrow + 6, "%u,%u,%u", &r, &g, &b) != 3 ||
		    r > 255 || g > 255 || b > 255) {
			if (n > 0)
				cli_warn("%s:%lu: not a palette line (name->rgb(r,g,b)), ignored",
				    path, lineno);
			continue;
		}
		rgb = palfile_slot(pf, line, (size_t)(arrow - line), &isnew);
		rgb[0] = (unsigned char)r;
		rgb[1] = (unsigned char)g;
		rgb[2] = (unsigned char)b;
	}
	fclose(fp);
	return pf;
}

void
flame_palfile_colour(struct flame_palfile *pf, const char *palette,
    const char *name, size_t len, unsigned char rgb[3])
{
	int isnew;
	unsigned char *c = palfile_slot(pf, name, len, &isnew);

	if (isnew)
		flame_color(palette, name, len, c);
	memcpy(rgb, c, 3);
}

struct palname {
	const char *s;
	size_t len;
	uint32_t id;
};

static int
palname_cmp(const void *a, const void *b)
{
	const struct palname *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

void
flame_palfile_save(struct flame_palfile *pf, const char *path)
{
	FILE *fp = fopen(path, "w");
	struct palname *v;
	size_t i, n = pf->names.n;

	if (fp == NULL) {
		cli_warn("%s: %s (palette not saved)", path, strerror(errno));
		return;
	}
	v = xmalloc((n ? n : 1) * sizeof(*v));
	for (i = 0; i < n; i++) {
		v[i].s = intern_str(&pf->names, (uint32_t)i);
		v[i].len = intern_len(&pf->names, (uint32_t)i);
		v[i].id = (uint32_t)i;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), palname_cmp);
	for (i = 0; i < n; i++) {
		const unsigned char *c = pf->rgb[v[i].id];

		/* a name with a newline cannot be stored in this format */
		if (memchr(v[i].s, '\n', v[i].len))
			continue;
		fwrite(v[i].s, 1, v[i].len, fp);
		fprintf(fp, "->rgb(%u,%u,%u)\n", c[0], c[1], c[2]);
	}
	free(v);
	if (fclose(fp) != 0)
		cli_warn("%s: write error", path);
}

void
flame_palfile_free(struct flame_palfile *pf)
{
	if (pf == NULL)
		return;
	intern_release(&pf->names);
	free(pf->rgb);
	free(pf);
}

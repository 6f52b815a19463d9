/*
 * pattern.c - PerfView's simplified frame patterns on top of POSIX regex.
 *
 * The translation follows PerfView's FilterStackSource: metacharacters
 * are literal except * % ^ | { }.  POSIX matching is leftmost-longest
 * where .NET is leftmost-first; for the patterns people write (module
 * and class prefixes) the two agree.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pattern.h"

/* growable string */
struct sbuf {
	char *s;
	size_t n, cap;
};

static void
sb_add(struct sbuf *b, const char *s)
{
	size_t k = strlen(s);

	if (b->n + k + 1 > b->cap) {
		b->cap = (b->n + k + 1) * 2 + 16;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, s, k);
	b->n += k;
	b->s[b->n] = '\0';
}

static void
sb_addc(struct sbuf *b, char c)
{
	char t[2] = { c, '\0' };

	sb_add(b, t);
}

/* the simplified syntax: everything literal except * % ^ | { } */
static void
translate_simple(struct sbuf *b, const char *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = t[i];

		switch (c) {
		case '*':
			sb_add(b, ".*");
			break;
		case '%':
			sb_add(b, "[[:alnum:]_.?]*");
			break;
		case '^':
			sb_add(b, "^");
			break;
		case '|':
			sb_add(b, "|");
			break;
		case '{':
			sb_add(b, "(");
			break;
		case '}':
			sb_add(b, ")");
			break;
		case '.': case '(': case ')': case '+': case '?': case '$':
		case '[': case '\\':
			sb_addc(b, '[');
			sb_addc(b, c);
			sb_addc(b, ']');
			break;
		case ']':
			sb_add(b, "[]]");
			break;
		default:
			sb_addc(b, c);
		}
	}
}

/*
 * A raw (.NET-flavoured) regex: translate the common escapes to POSIX.
 * A quantifier right after another one is refused, as .NET does
 * ("nested quantifier"): glibc's regcomp needs exponential memory for
 * "a++++...".  A lazy '?' after a quantifier is dropped (POSIX has none).
 */
static int
translate_raw(struct sbuf *b, const char *t, size_t n, unsigned char *capmap)
{
	size_t i;
	int inbr = 0, lastq = 0, posix = 0, dotnet = 0;

	for (i = 0; i < n; i++) {
		char c = t[i];

		if (!inbr && (c == '*' || c == '+' || c == '?' || c == '{')) {
			if (lastq == 1 && c == '?') {
				lastq = 2;	/* lazy: same match set under POSIX rules */
				continue;
			}
			if (lastq)
				return -1;
			if (c == '{') {
				size_t j = i + 1;

				while (j < n && (isdigit((unsigned char)t[j]) || t[j] == ','))
					j++;
				if (j < n && t[j] == '}' && j > i + 1) {
					char *q = xstrndup(t + i, j - i + 1);

					sb_add(b, q);
					free(q);
					i = j;
					lastq = 1;
					continue;
				}
				sb_add(b, "\\{");
				lastq = 0;
				continue;
			}
			sb_addc(b, c);
			lastq = 1;
			continue;
		}
		lastq = 0;
		if (c == '\\' && i + 1 < n) {
			char d = t[++i];
			const char *out = NULL;

			switch (d) {
			case 'd': out = inbr ? "0-9" : "[0-9]"; break;
			case 'D': out = inbr ? NULL : "[^0-9]"; break;
			case 'w': out = inbr ? "[:alnum:]_" : "[[:alnum:]_]"; break;
			case 'W': out = inbr ? NULL : "[^[:alnum:]_]"; break;
			case 's': out = inbr ? "[:space:]" : "[[:space:]]"; break;
			case 'S': out = inbr ? NULL : "[^[:space:]]"; break;
			case 't': out = "\t"; break;
			default: break;
			}
			if (out != NULL) {
				sb_add(b, out);
			} else if (inbr) {
				sb_addc(b, d);	/* backslash is literal in POSIX brackets */
			} else {
				sb_addc(b, '\\');
				sb_addc(b, d);
			}
			continue;
		}
		if (!inbr && c == '(' && i + 2 < n && t[i + 1] == '?' && t[i + 2] == ':') {
			sb_addc(b, '(');
			posix++;	/* a POSIX group that $k does not count */
			i += 2;
			continue;
		}
		if (!inbr && c == '(') {
			posix++;
			dotnet++;
			if (dotnet < PAT_MAX_CAPTURES && posix < 256)
				capmap[dotnet] = (unsigned char)posix;
		}
		if (!inbr && c == '(' && i + 3 < n && t[i + 1] == '?' && t[i + 2] == 'i' &&
		    t[i + 3] == ')') {
			i += 3;		/* (?i): we are case-insensitive anyway */
			continue;
		}
		if (!inbr && c == '[') {
			inbr = 1;
			sb_addc(b, c);
			if (i + 1 < n && t[i + 1] == '^')
				sb_addc(b, t[++i]);
			if (i + 1 < n && t[i + 1] == ']')
				sb_addc(b, t[++i]);
			continue;
		}
		if (inbr && c == ']')
			inbr = 0;
		sb_addc(b, c);
	}
	return 0;
}

static char *
to_regex(const char *text, size_t n, unsigned char *capmap)
{
	struct sbuf b = { NULL, 0, 0 };
	int i;

	for (i = 0; i < PAT_MAX_CAPTURES; i++)
		capmap[i] = (unsigned char)i;
	sb_add(&b, "");
	if (n > 0 && text[0] == '@') {
		for (i = 1; i < PAT_MAX_CAPTURES; i++)
			capmap[i] = 255;	/* set as groups are found */
		if (translate_raw(&b, text + 1, n - 1, capmap) < 0) {
			free(b.s);
			return NULL;
		}
	} else {
		translate_simple(&b, text, n);
	}
	return b.s;
}

char *
pattern_to_regex(const char *text, size_t n)
{
	unsigned char capmap[PAT_MAX_CAPTURES];

	return to_regex(text, n, capmap);
}

int
pattern_compile(struct pattern *p, const char *text, size_t n, char *err, size_t errlen)
{
	char *re = to_regex(text, n, p->capmap);
	int rc;

	p->text = xstrndup(text, n);
	if (re == NULL) {
		snprintf(err, errlen, "bad pattern '%s': nested quantifier", p->text);
		free(p->text);
		p->text = NULL;
		return -1;
	}
	rc = regcomp(&p->re, re, REG_EXTENDED | REG_ICASE);
	free(re);
	if (rc != 0) {
		char msg[128];

		regerror(rc, &p->re, msg, sizeof msg);
		snprintf(err, errlen, "bad pattern '%s': %s", p->text, msg);
		free(p->text);
		p->text = NULL;
		return -1;
	}
	return 0;
}

void
pattern_free(struct pattern *p)
{
	if (p->text != NULL) {
		regfree(&p->re);
		free(p->text);
		p->text = NULL;
	}
}

int
pattern_match(const struct pattern *p, const char *s)
{
	return regexec(&p->re, s, 0, NULL, 0) == 0;
}

int
pattern_exec(const struct pattern *p, const char *s, regmatch_t *m)
{
	regmatch_t all[256];
	size_t ng = p->re.re_nsub + 1 < 256 ? p->re.re_nsub + 1 : 256;
	int i;

	for (i = 0; i < PAT_MAX_CAPTURES; i++)
		m[i].rm_so = m[i].rm_eo = -1;
	if (regexec(&p->re, s, ng, all, 0) != 0)
		return 0;
	for (i = 0; i < PAT_MAX_CAPTURES; i++)
		if (p->capmap[i] < ng)
			m[i] = all[p->capmap[i]];
	return 1;
}

char *
pattern_expand(const char *repl, const char *s, const regmatch_t *m)
{
	struct sbuf b = { NULL, 0, 0 };
	const char *r;

	sb_add(&b, "");
	for (r = repl; *r; r++) {
		int k = -1;

		if (r[0] == '$' && r[1] == '&')
			k = 0;
		else if (r[0] == '$' && r[1] >= '1' && r[1] <= '9')
			k = r[1] - '0';
		if (k < 0) {
			sb_addc(&b, *r);
			continue;
		}
		if (m[k].rm_so >= 0) {
			char *part = xstrndup(s + m[k].rm_so, (size_t)(m[k].rm_eo - m[k].rm_so));

			sb_add(&b, part);
			free(part);
		}
		r++;
	}
	return b.s;
}

int
pattern_split(const char *list, int (*fn)(void *arg, const char *s, size_t n), void *arg)
{
	const char *p = list;

	while (*p) {
		const char *e = strchr(p, ';'), *a = p, *z;
		int rc;

		if (e == NULL)
			e = p + strlen(p);
		z = e;
		while (a < z && isspace((unsigned char)*a))
			a++;
		while (z > a && isspace((unsigned char)z[-1]))
			z--;
		if (z > a && (rc = fn(arg, a, (size_t)(z - a))) != 0)
			return rc;
		p = *e ? e + 1 : e;
	}
	return 0;
}

struct addctx {
	struct patlist *pl;
	char *err;
	size_t errlen;
};

static int
add_one(void *arg, const char *s, size_t n)
{
	struct addctx *c = arg;
	struct patlist *pl = c->pl;

	if (pl->n == pl->cap) {
		pl->cap = pl->cap ? pl->cap * 2 : 8;
		pl->pat = xrealloc(pl->pat, (size_t)pl->cap * sizeof *pl->pat);
	}
	if (pattern_compile(&pl->pat[pl->n], s, n, c->err, c->errlen) < 0)
		return -1;
	pl->n++;
	return 0;
}

int
patlist_add(struct patlist *pl, const char *list, char *err, size_t errlen)
{
	struct addctx c = { pl, err, errlen };

	return pattern_split(list, add_one, &c);
}

int
patlist_first(const struct patlist *pl, const char *s)
{
	int i;

	for (i = 0; i < pl->n; i++)
		if (pattern_match(&pl->pat[i], s))
			return i;
	return -1;
}

void
patlist_free(struct patlist *pl)
{
	int i;

	for (i = 0; i < pl->n; i++)
		pattern_free(&pl->pat[i]);
	free(pl->pat);
	pl->pat = NULL;
	pl->n = pl->cap = 0;
}

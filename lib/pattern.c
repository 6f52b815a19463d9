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

/*
 * The simplified syntax: everything literal except * % ^ | { }.  The
 * result is written in the raw syntax below (escapes, not POSIX
 * brackets, for literals) so that one parser checks both.
 */
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
		case '|':
			sb_addc(b, c);
			break;
		case '{':
			sb_addc(b, '(');
			break;
		case '}':
			sb_addc(b, ')');
			break;
		case '.': case '(': case ')': case '+': case '?': case '$':
		case '[': case ']': case '\\':
			sb_addc(b, '\\');
			sb_addc(b, c);
			break;
		default:
			sb_addc(b, c);
		}
	}
}

/*
 * The raw (.NET-flavoured) syntax is parsed, checked and written out as
 * a POSIX ERE in one recursive descent.  Untrusted patterns must not
 * make glibc's regcomp (memory quadratic in the expanded program) or
 * regexec (back-references backtrack) blow up, so the parser knows the
 * size of the program glibc will build and refuses what can explode;
 * see docs/hardening.md, "Patterns".
 */
struct size_info {
	size_t size;		/* program nodes after expanding repetitions */
	int nullable;		/* can match the empty string */
	int unbounded;		/* contains * + or {m,} */
};

enum atom_kind { ATOM_NONE, ATOM_ANCHOR, ATOM_CHAR, ATOM_GROUP };

struct parser {
	const char *t;
	size_t n, i;
	struct sbuf *out;
	unsigned char *capmap;
	int depth, groups, captures;
	const char *why;	/* the refusal, NULL while fine */
	size_t at;		/* its byte offset in the pattern */
};

static int parse_alt(struct parser *P, struct size_info *si);

static int
refuse(struct parser *P, size_t at, const char *why)
{
	if (P->why == NULL) {
		P->why = why;
		P->at = at;
	}
	return -1;
}

static int
peek(const struct parser *P, size_t k)
{
	return P->i + k < P->n ? (unsigned char)P->t[P->i + k] : -1;
}

/* Adds, saturating: sizes past PAT_MAX_PROGRAM are refused anyway. */
static size_t
size_add(size_t a, size_t b)
{
	return a > PAT_MAX_PROGRAM || b > PAT_MAX_PROGRAM ? PAT_MAX_PROGRAM + 1 : a + b;
}

static size_t
size_mul(size_t a, size_t b)
{
	if (a > PAT_MAX_PROGRAM || b > PAT_MAX_PROGRAM || (b && a > (PAT_MAX_PROGRAM + 1) / b))
		return PAT_MAX_PROGRAM + 1;
	return a * b;
}

static const char *const posix_classes[] = {
	"alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower",
	"print", "punct", "space", "upper", "xdigit", NULL
};

static int
known_class(const char *s, size_t n)
{
	int k;

	for (k = 0; posix_classes[k] != NULL; k++)
		if (strlen(posix_classes[k]) == n && memcmp(posix_classes[k], s, n) == 0)
			return 1;
	return 0;
}

/* A character as a range end inside a POSIX bracket. */
static void
bracket_endpoint(struct sbuf *b, char c)
{
	if (c == ']' || c == '[' || c == '-' || c == '^') {
		sb_add(b, "[.");
		sb_addc(b, c);
		sb_add(b, ".]");
	} else {
		sb_addc(b, c);
	}
}

/* The characters that are special at some place inside a POSIX bracket. */
struct bracket_specials {
	int rbracket, lbracket, caret, dash;
};

static int
bracket_special(struct bracket_specials *sp, char c)
{
	switch (c) {
	case ']': sp->rbracket = 1; return 1;
	case '[': sp->lbracket = 1; return 1;
	case '^': sp->caret = 1; return 1;
	case '-': sp->dash = 1; return 1;
	default: return 0;
	}
}

/*
 * One member of a .NET class at P->i: [:name:], [.x.], [=x=], an escape
 * or a character.  Sets *C and returns 1 for a single character, writes
 * a class to BODY and returns 0, or returns -1.
 */
static int
bracket_item(struct parser *P, struct sbuf *body, char *c)
{
	size_t at = P->i;
	int d;

	if (peek(P, 0) == '[' && (peek(P, 1) == ':' || peek(P, 1) == '.' || peek(P, 1) == '=')) {
		char kind = P->t[P->i + 1];
		size_t j = P->i + 2;
		char *tok;

		while (j + 1 < P->n && !(P->t[j] == kind && P->t[j + 1] == ']'))
			j++;
		if (j + 1 >= P->n)
			return refuse(P, at, "unterminated [: :] in [ ]");
		if (kind == ':' && !known_class(P->t + P->i + 2, j - P->i - 2))
			return refuse(P, at, "unknown character class");
		tok = xstrndup(P->t + P->i, j + 2 - P->i);
		sb_add(body, tok);
		free(tok);
		P->i = j + 2;
		return 0;
	}
	if (peek(P, 0) != '\\') {
		*c = P->t[P->i++];
		return 1;
	}
	d = peek(P, 1);
	P->i += 2;
	switch (d) {
	case -1:
		return refuse(P, at, "trailing backslash");
	case 'd': sb_add(body, "0-9"); return 0;
	case 'w': sb_add(body, "[:alnum:]_"); return 0;
	case 's': sb_add(body, "[:space:]"); return 0;
	case 'D': case 'W': case 'S':
		return refuse(P, at, "negated class escape inside [ ]");
	case 't': *c = '\t'; return 1;
	default: *c = (char)d; return 1;	/* \] \\ \- \^ ...: the character */
	}
}

/*
 * A .NET character class, written as a POSIX bracket: ']' first, '['
 * '^' '-' last, so that no member is taken for syntax.
 */
static int
parse_bracket(struct parser *P)
{
	struct sbuf body = { NULL, 0, 0 };
	struct bracket_specials sp = { 0, 0, 0, 0 };
	size_t at = P->i;
	int neg = 0, first = 1, rc = 0;

	sb_add(&body, "");
	P->i++;
	if (peek(P, 0) == '^') {
		neg = 1;
		P->i++;
	}
	for (;;) {
		char lo, hi;
		int k;

		if (peek(P, 0) == -1) {
			rc = refuse(P, at, "missing ]");
			break;
		}
		if (peek(P, 0) == ']' && !first) {
			P->i++;
			break;
		}
		first = 0;
		if ((k = bracket_item(P, &body, &lo)) < 0) {
			rc = -1;
			break;
		}
		if (k == 0)
			continue;
		if (peek(P, 0) != '-' || peek(P, 1) == ']' || peek(P, 1) == -1) {
			if (!bracket_special(&sp, lo))
				sb_addc(&body, lo);
			continue;
		}
		P->i++;
		if ((k = bracket_item(P, &body, &hi)) <= 0) {
			rc = k < 0 ? -1 : refuse(P, at, "a class as a range end");
			break;
		}
		bracket_endpoint(&body, lo);
		sb_addc(&body, '-');
		bracket_endpoint(&body, hi);
	}
	if (rc == 0 && !neg && !sp.rbracket && body.n == 0 && !sp.lbracket && sp.caret &&
	    !sp.dash) {
		sb_add(P->out, "\\^");	/* [^] would be a negation */
	} else if (rc == 0) {
		sb_add(P->out, neg ? "[^" : "[");
		if (sp.rbracket)
			sb_addc(P->out, ']');
		sb_add(P->out, body.s);
		if (sp.lbracket)
			sb_addc(P->out, '[');
		if (sp.dash && !neg && !sp.rbracket && body.n == 0 && !sp.lbracket)
			sb_add(P->out, sp.caret ? "-^" : "-");
		else
			sb_add(P->out, sp.caret ? (sp.dash ? "^-" : "^") : (sp.dash ? "-" : ""));
		sb_addc(P->out, ']');
	}
	free(body.s);
	return rc;
}

/* An escape outside a class at P->i. */
static int
parse_escape(struct parser *P, enum atom_kind *kind)
{
	size_t at = P->i;
	int d = peek(P, 1);
	const char *out = NULL;

	*kind = ATOM_CHAR;
	switch (d) {
	case -1:
		return refuse(P, at, "trailing backslash");
	case '1': case '2': case '3': case '4': case '5':
	case '6': case '7': case '8': case '9':
		return refuse(P, at, "back-reference");
	case 'd': out = "[0-9]"; break;
	case 'D': out = "[^0-9]"; break;
	case 'w': out = "[[:alnum:]_]"; break;
	case 'W': out = "[^[:alnum:]_]"; break;
	case 's': out = "[[:space:]]"; break;
	case 'S': out = "[^[:space:]]"; break;
	case 't': out = "\t"; break;
	case 'b': case 'B': case '<': case '>': case '`': case '\'':
		*kind = ATOM_ANCHOR;	/* GNU word and buffer anchors */
		break;
	default:
		break;
	}
	P->i += 2;
	if (out != NULL) {
		sb_add(P->out, out);
	} else {
		sb_addc(P->out, '\\');
		sb_addc(P->out, (char)d);
	}
	return 0;
}

/* A group at P->i: ( ), (?: ), or the flag (?i) that is no atom. */
static int
parse_group(struct parser *P, struct size_info *si, enum atom_kind *kind)
{
	size_t at = P->i;
	int capture = 1;

	if (peek(P, 1) == '?') {
		if (peek(P, 2) == 'i' && peek(P, 3) == ')') {
			P->i += 4;	/* we are case-insensitive anyway */
			*kind = ATOM_NONE;
			si->size = 0;
			si->nullable = 1;
			return 0;
		}
		if (peek(P, 2) != ':')
			return refuse(P, at, "unsupported (? construct");
		capture = 0;
		P->i += 2;
	}
	if (P->depth >= PAT_MAX_DEPTH)
		return refuse(P, at, "groups nested too deep");
	if (++P->groups > PAT_MAX_GROUPS)
		return refuse(P, at, "too many groups");
	if (capture && ++P->captures < PAT_MAX_CAPTURES)
		P->capmap[P->captures] = (unsigned char)P->groups;
	P->i++;
	P->depth++;
	sb_addc(P->out, '(');
	if (parse_alt(P, si) < 0)
		return -1;
	if (peek(P, 0) != ')')
		return refuse(P, at, "missing )");
	P->i++;
	P->depth--;
	sb_addc(P->out, ')');
	si->size = size_add(si->size, 2);
	*kind = ATOM_GROUP;
	return 0;
}

/*
 * A counted repetition {m}, {m,}, {,n} or {m,n} at P->i: 1 with *MIN
 * and *MAX (-1 unbounded), 0 when the brace is a literal, -1 refused.
 */
static int
parse_count(struct parser *P, long *min, long *max)
{
	size_t at = P->i, j = P->i + 1;
	long v[2] = { -1, -1 };
	int k = 0;

	while (j < P->n && (isdigit((unsigned char)P->t[j]) || P->t[j] == ',')) {
		if (P->t[j] == ',' && k == 1)
			k = 2;	/* a second comma: bad, once we know it is a count */
		else if (P->t[j] == ',')
			k = 1;
		else if (k < 2)
			v[k] = (v[k] < 0 ? 0 : v[k]) * 10 + (P->t[j] - '0') > PAT_MAX_REPEAT ?
			    PAT_MAX_REPEAT + 1 : (v[k] < 0 ? 0 : v[k]) * 10 + (P->t[j] - '0');
		j++;
	}
	if (j >= P->n || P->t[j] != '}' || j == P->i + 1)
		return 0;	/* a literal '{', as .NET reads it */
	if (k == 2 || (v[0] < 0 && v[1] < 0))
		return refuse(P, at, "bad {m,n}");
	if (v[0] > PAT_MAX_REPEAT || v[1] > PAT_MAX_REPEAT)
		return refuse(P, at, "repetition count over " PAT_STR(PAT_MAX_REPEAT));
	*min = v[0] < 0 ? 0 : v[0];
	*max = k == 1 ? v[1] : v[0];
	if (*max >= 0 && *max < *min)
		return refuse(P, at, "bad {m,n}");
	P->i = j + 1;
	return 1;
}

/* A quantifier at P->i: 1 with the counts, 0 when there is none. */
static int
parse_quantifier(struct parser *P, long *min, long *max)
{
	switch (peek(P, 0)) {
	case '*': *min = 0; *max = -1; break;
	case '+': *min = 1; *max = -1; break;
	case '?': *min = 0; *max = 1; break;
	case '{': return parse_count(P, min, max);
	default: return 0;
	}
	P->i++;
	return 1;
}

/* The size of ATOM repeated MIN..MAX times, as glibc expands it. */
static void
repeat_size(struct size_info *si, long min, long max)
{
	size_t copies = max < 0 ? (size_t)(min > 0 ? min : 1) + 1 : (size_t)(max > 0 ? max : 1);

	si->size = size_add(size_mul(si->size, copies), copies);
	if (min == 0)
		si->nullable = 1;
	if (max < 0)
		si->unbounded = 1;
}

/* The text of a quantifier just parsed, from FROM to P->i. */
static void
emit_quantifier(struct parser *P, size_t from)
{
	char *q = xstrndup(P->t + from, P->i - from);

	sb_add(P->out, q);
	free(q);
}

static int
parse_atom(struct parser *P, struct size_info *si, enum atom_kind *kind)
{
	int c = peek(P, 0);
	long min, max;
	size_t at = P->i;

	si->size = 1;
	si->nullable = 0;
	si->unbounded = 0;
	*kind = ATOM_CHAR;
	switch (c) {
	case '(':
		return parse_group(P, si, kind);
	case '[':
		return parse_bracket(P);
	case '\\':
		if (parse_escape(P, kind) < 0)
			return -1;
		si->nullable = *kind == ATOM_ANCHOR;
		return 0;
	case '^': case '$':
		*kind = ATOM_ANCHOR;
		si->nullable = 1;
		sb_addc(P->out, (char)c);
		P->i++;
		return 0;
	case '*': case '+': case '?':
		return refuse(P, at, "quantifier follows nothing");
	case '{':
		if (parse_count(P, &min, &max) != 0)
			return refuse(P, at, "quantifier follows nothing");
		sb_add(P->out, "\\{");
		P->i++;
		return 0;
	case ')':	/* unmatched: a literal, as in POSIX */
		sb_add(P->out, "\\)");
		P->i++;
		return 0;
	default:
		sb_addc(P->out, (char)c);
		P->i++;
		return 0;
	}
}

/*
 * An atom and its quantifier.  Refused: a quantifier after nothing, an
 * anchor or another quantifier (.NET's "nested quantifier"); a repeated
 * group that can match empty; an unbounded repetition of a group that
 * holds one.  A lazy '?' is dropped: POSIX has none and the set of
 * texts matched is the same.
 */
static int
parse_piece(struct parser *P, struct size_info *si)
{
	enum atom_kind kind;
	size_t at;
	long min, max;
	int q;

	if (parse_atom(P, si, &kind) < 0)
		return -1;
	at = P->i;
	if ((q = parse_quantifier(P, &min, &max)) <= 0)
		return q;
	if (kind == ATOM_NONE || kind == ATOM_ANCHOR)
		return refuse(P, at, "quantifier follows nothing");
	if (kind == ATOM_GROUP && si->nullable && !(min == 0 && max == 1))
		return refuse(P, at, "repeated group can match empty");
	if (kind == ATOM_GROUP && si->unbounded && max < 0)
		return refuse(P, at, "nested quantifier");
	emit_quantifier(P, at);
	repeat_size(si, min, max);
	if (peek(P, 0) == '?')
		P->i++;
	at = P->i;
	if (parse_quantifier(P, &min, &max) != 0)
		return refuse(P, at, "nested quantifier");
	return 0;
}

static int
parse_concat(struct parser *P, struct size_info *si)
{
	si->size = 0;
	si->nullable = 1;
	si->unbounded = 0;
	while (peek(P, 0) != -1 && peek(P, 0) != '|' && !(peek(P, 0) == ')' && P->depth > 0)) {
		struct size_info piece;

		if (parse_piece(P, &piece) < 0)
			return -1;
		si->size = size_add(si->size, piece.size);
		si->nullable &= piece.nullable;
		si->unbounded |= piece.unbounded;
		if (si->size > PAT_MAX_PROGRAM)
			return refuse(P, P->i, "program over " PAT_STR(PAT_MAX_PROGRAM) " nodes");
	}
	return 0;
}

static int
parse_alt(struct parser *P, struct size_info *si)
{
	if (parse_concat(P, si) < 0)
		return -1;
	while (peek(P, 0) == '|') {
		struct size_info branch;

		P->i++;
		sb_addc(P->out, '|');
		if (parse_concat(P, &branch) < 0)
			return -1;
		si->size = size_add(si->size, branch.size + 1);
		si->nullable |= branch.nullable;
		si->unbounded |= branch.unbounded;
		if (si->size > PAT_MAX_PROGRAM)
			return refuse(P, P->i, "program over " PAT_STR(PAT_MAX_PROGRAM) " nodes");
	}
	return 0;
}

/*
 * TEXT[0..N) as a POSIX ERE (caller frees), or NULL with *WHY and *AT
 * saying what was refused where (an offset in TEXT).
 */
static char *
to_regex(const char *text, size_t n, unsigned char *capmap, const char **why, size_t *at)
{
	struct sbuf simple = { NULL, 0, 0 }, out = { NULL, 0, 0 };
	struct size_info si;
	struct parser P;
	int raw = n > 0 && text[0] == '@', i;

	*why = NULL;
	*at = 0;
	if (n > PAT_MAX_LENGTH) {
		*why = "longer than " PAT_STR(PAT_MAX_LENGTH) " bytes";
		return NULL;
	}
	for (i = 0; i < PAT_MAX_CAPTURES; i++)
		capmap[i] = i == 0 ? 0 : 255;	/* set as groups are found */
	memset(&P, 0, sizeof P);
	sb_add(&out, "");
	if (raw) {
		P.t = text + 1;
		P.n = n - 1;
	} else {
		sb_add(&simple, "");
		translate_simple(&simple, text, n);
		P.t = simple.s;
		P.n = simple.n;
	}
	P.out = &out;
	P.capmap = capmap;
	if (parse_alt(&P, &si) < 0) {
		*why = P.why;
		/* an offset in the simple syntax's translation is no use to the user */
		*at = raw ? P.at + 1 : 0;
		free(out.s);
		out.s = NULL;
	}
	free(simple.s);
	return out.s;
}

char *
pattern_to_regex(const char *text, size_t n)
{
	unsigned char capmap[PAT_MAX_CAPTURES];
	const char *why;
	size_t at;

	return to_regex(text, n, capmap, &why, &at);
}

int
pattern_compile(struct pattern *p, const char *text, size_t n, char *err, size_t errlen)
{
	const char *why;
	size_t at;
	char *re = to_regex(text, n, p->capmap, &why, &at);
	int rc;

	p->text = xstrndup(text, n);
	if (re == NULL) {
		if (at > 0)
			snprintf(err, errlen, "bad pattern '%s': %s at offset %zu", p->text, why, at);
		else
			snprintf(err, errlen, "bad pattern '%s': %s", p->text, why);
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

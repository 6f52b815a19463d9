/*
 * pattern.c - PerfView's simplified frame patterns, and raw regexes,
 * matched by a small Pike VM of our own.
 *
 * The translation follows PerfView's FilterStackSource: metacharacters
 * are literal except * % ^ | { }.  Matching is leftmost-first and
 * greedy, as in .NET; whether a pattern matches is what a POSIX ERE
 * (pattern_to_regex) says.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/strbuf.h"
#include "stacks/pattern.h"

/*
 * The simplified syntax: everything literal except * % ^ | { }.  The
 * result is written in the raw syntax below (escapes, not POSIX
 * brackets, for literals) so that one parser checks both.
 */
static void
translate_simple(struct strbuf *b, const char *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = t[i];

		switch (c) {
		case '*':
			strbuf_adds(b, ".*");
			break;
		case '%':
			strbuf_adds(b, "[[:alnum:]_.?]*");
			break;
		case '^':
		case '|':
			strbuf_addc(b, c);
			break;
		case '{':
			strbuf_addc(b, '(');
			break;
		case '}':
			strbuf_addc(b, ')');
			break;
		case '.': case '(': case ')': case '+': case '?': case '$':
		case '[': case ']': case '\\':
			strbuf_addc(b, '\\');
			strbuf_addc(b, c);
			break;
		default:
			strbuf_addc(b, c);
		}
	}
}

/*
 * The raw (.NET-flavoured) syntax is parsed once, by recursive descent,
 * into a program for a Pike VM (Thompson's construction; threads carry
 * the captures): matching is linear in the subject times the program,
 * whatever the pattern, and takes memory proportional to the program.
 * Untrusted patterns cannot make it blow up, and the parser refuses
 * what would make the program large (docs/hardening.md, "Patterns").
 * The parser also writes the POSIX ERE that the pattern means, for
 * pattern_to_regex().
 */
enum opcode {
	OP_SET,		/* the byte is in sets[arg] */
	OP_SPLIT,	/* go to x, and (lower priority) to y */
	OP_JMP,		/* go to x */
	OP_SAVE,	/* cap[arg] = here */
	OP_ASSERT,	/* zero-width test arg */
	OP_MATCH
};

enum assertion { AS_BOL, AS_EOL, AS_WORDB, AS_NWORDB, AS_WORDSTART, AS_WORDEND };

struct pattern_inst {
	unsigned char op, arg2;
	unsigned short arg;
	int x, y;
};

struct pattern_set {
	unsigned char bit[32];
};

enum atom_kind { ATOM_NONE, ATOM_ANCHOR, ATOM_CHAR, ATOM_GROUP };

/* What a piece of pattern can do, for the refusals. */
struct traits {
	int nullable;		/* can match the empty string */
	int unbounded;		/* holds * + or {m,} */
};

struct parser {
	const char *t;
	size_t n, i;
	struct strbuf *out;	/* the POSIX ERE */
	struct pattern_prog *prog;
	int depth, groups, captures;
	const char *why;	/* the refusal, NULL while fine */
	size_t at;		/* its byte offset in the pattern */
};

static int parse_alt(struct parser *P, struct traits *tr);

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

/* ---------------------------------------------------------------- program */

static int
emit(struct parser *P, enum opcode op, int arg, int x, int y)
{
	struct pattern_prog *g = P->prog;

	if (g->len == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 32;
		g->code = xrealloc(g->code, (size_t)g->cap * sizeof *g->code);
	}
	g->code[g->len].op = (unsigned char)op;
	g->code[g->len].arg2 = 0;
	g->code[g->len].arg = (unsigned short)arg;
	g->code[g->len].x = x;
	g->code[g->len].y = y;
	return g->len++;
}

static struct pattern_set *
new_set(struct parser *P, int *idx)
{
	struct pattern_prog *g = P->prog;

	if (g->nsets == g->setcap) {
		g->setcap = g->setcap ? g->setcap * 2 : 8;
		g->sets = xrealloc(g->sets, (size_t)g->setcap * sizeof *g->sets);
	}
	memset(&g->sets[g->nsets], 0, sizeof g->sets[0]);
	*idx = g->nsets;
	return &g->sets[g->nsets++];
}

static void
set_add(struct pattern_set *cs, int c)
{
	cs->bit[c >> 3] |= (unsigned char)(1u << (c & 7));
}

static int
set_has(const struct pattern_set *cs, int c)
{
	return cs->bit[c >> 3] >> (c & 7) & 1;
}

/*
 * Matching is case-insensitive, as glibc's REG_ICASE in the C locale:
 * a set holds both cases of its members, before any negation.
 */
static void
set_finish(struct parser *P, struct pattern_set *cs, int idx, int neg)
{
	int c;

	for (c = 0; c < 256; c++)
		if (set_has(cs, c)) {
			set_add(cs, tolower(c));
			set_add(cs, toupper(c));
		}
	if (neg)
		for (c = 0; c < 32; c++)
			cs->bit[c] = (unsigned char)~cs->bit[c];
	cs->bit[0] &= 0xfe;	/* the subject's NUL ends it */
	emit(P, OP_SET, idx, 0, 0);
}

static void
emit_char(struct parser *P, int c)
{
	int idx;
	struct pattern_set *cs = new_set(P, &idx);

	set_add(cs, c);
	set_finish(P, cs, idx, 0);
}

/* Inserts K instructions at AT, moving the code after it (the last atom). */
static void
insert_code(struct parser *P, int at, int k)
{
	struct pattern_prog *g = P->prog;
	int i;

	while (g->len + k > g->cap) {
		g->cap = g->cap ? g->cap * 2 : 32;
		g->code = xrealloc(g->code, (size_t)g->cap * sizeof *g->code);
	}
	memmove(g->code + at + k, g->code + at, (size_t)(g->len - at) * sizeof *g->code);
	g->len += k;
	for (i = at + k; i < g->len; i++) {
		if (g->code[i].op == OP_SPLIT || g->code[i].op == OP_JMP) {
			if (g->code[i].x >= at)
				g->code[i].x += k;
			if (g->code[i].op == OP_SPLIT && g->code[i].y >= at)
				g->code[i].y += k;
		}
	}
}

/* Appends a copy of the code BODY[0..N) (made at FROM), its jumps moved. */
static void
append_copy(struct parser *P, const struct pattern_inst *body, int n, int from)
{
	int i, pc;

	for (i = 0; i < n; i++) {
		pc = emit(P, (enum opcode)body[i].op, body[i].arg, body[i].x, body[i].y);
		P->prog->code[pc].arg2 = body[i].arg2;
		if (body[i].op == OP_SPLIT || body[i].op == OP_JMP)
			P->prog->code[pc].x += pc - i - from;
		if (body[i].op == OP_SPLIT)
			P->prog->code[pc].y += pc - i - from;
	}
}

/*
 * Rewrites the atom's code at [FROM, end) as MIN..MAX (MAX -1:
 * unbounded) greedy repetitions: MIN copies, then a loop or MAX-MIN
 * nested optional copies, as glibc expands them.
 */
static int
repeat_code(struct parser *P, int from, long min, long max, size_t at)
{
	struct pattern_prog *g = P->prog;
	int n = g->len - from, i, pc, top;
	long copies = max < 0 ? min + 1 : max;
	struct pattern_inst *body;

	if ((long)from + copies * (n + 2) > PAT_MAX_PROGRAM)
		return refuse(P, at, "program over " PAT_STR(PAT_MAX_PROGRAM) " instructions");
	body = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *body);
	memcpy(body, g->code + from, (size_t)n * sizeof *body);
	g->len = from;
	for (i = 0; i < min; i++)
		append_copy(P, body, n, from);
	if (max < 0) {
		top = emit(P, OP_SPLIT, 0, g->len + 1, 0);
		append_copy(P, body, n, from);
		emit(P, OP_JMP, 0, top, 0);
		g->code[top].y = g->len;
	} else {
		int first = g->len;

		for (i = (int)min; i < max; i++) {
			emit(P, OP_SPLIT, 0, g->len + 1, -1);
			append_copy(P, body, n, from);
		}
		for (pc = first; pc < g->len; pc++)
			if (g->code[pc].op == OP_SPLIT && g->code[pc].y == -1)
				g->code[pc].y = g->len;
	}
	free(body);
	return 0;
}

/*
 * The character that \D stands for: .NET's control escapes, any other
 * punctuation or byte as itself; -1 for the letters and digits .NET does
 * not know (refused, as .NET does: they mean nothing portable).
 */
static int
escaped_char(int d)
{
	switch (d) {
	case 't': return '\t';
	case 'n': return '\n';
	case 'r': return '\r';
	case 'f': return '\f';
	case 'v': return '\v';
	default: return d < 128 && isalnum(d) ? -1 : d;
	}
}

/* ---------------------------------------------------------------- classes */

static const char *const posix_classes[] = {
	"alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower",
	"print", "punct", "space", "upper", "xdigit", NULL
};

static int (*const class_test[])(int) = {
	isalnum, isalpha, isblank, iscntrl, isdigit, isgraph, islower,
	isprint, ispunct, isspace, isupper, isxdigit
};

static int
class_index(const char *s, size_t n)
{
	int k;

	for (k = 0; posix_classes[k] != NULL; k++)
		if (strlen(posix_classes[k]) == n && memcmp(posix_classes[k], s, n) == 0)
			return k;
	return -1;
}

static void
set_add_class(struct pattern_set *cs, int k)
{
	int c;

	for (c = 1; c < 256; c++)
		if (class_test[k](c))
			set_add(cs, c);
}

static void
set_add_word(struct pattern_set *cs)
{
	set_add_class(cs, class_index("alnum", 5));
	set_add(cs, '_');
}

/* A character as a range end inside a POSIX bracket. */
static void
bracket_endpoint(struct strbuf *b, char c)
{
	if (c == ']' || c == '[' || c == '-' || c == '^') {
		strbuf_adds(b, "[.");
		strbuf_addc(b, c);
		strbuf_adds(b, ".]");
	} else {
		strbuf_addc(b, c);
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
 * or a character.  Sets *C and returns 1 for a single character, adds a
 * class to CS and BODY and returns 0, or returns -1.
 */
static int
bracket_item(struct parser *P, struct pattern_set *cs, struct strbuf *body, char *c)
{
	size_t at = P->i, j;
	int d, k;

	if (peek(P, 0) == '[' && (peek(P, 1) == ':' || peek(P, 1) == '.' || peek(P, 1) == '=')) {
		char kind = P->t[P->i + 1];

		for (j = P->i + 2; j + 1 < P->n && !(P->t[j] == kind && P->t[j + 1] == ']'); j++)
			continue;
		if (j + 1 >= P->n)
			return refuse(P, at, "unterminated [: :] in [ ]");
		if (kind != ':') {
			if (j != P->i + 3)
				return refuse(P, at, "multi-character collating element");
			*c = P->t[P->i + 2];
			P->i = j + 2;
			return 1;
		}
		if ((k = class_index(P->t + P->i + 2, j - P->i - 2)) < 0)
			return refuse(P, at, "unknown character class");
		set_add_class(cs, k);
		strbuf_adds(body, "[:");
		strbuf_adds(body, posix_classes[k]);
		strbuf_adds(body, ":]");
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
	case 'd':
		set_add_class(cs, class_index("digit", 5));
		strbuf_adds(body, "0-9");
		return 0;
	case 'w':
		set_add_word(cs);
		strbuf_adds(body, "[:alnum:]_");
		return 0;
	case 's':
		set_add_class(cs, class_index("space", 5));
		strbuf_adds(body, "[:space:]");
		return 0;
	case 'D': case 'W': case 'S':
		return refuse(P, at, "negated class escape inside [ ]");
	default:
		if ((k = escaped_char(d)) < 0)
			return refuse(P, at, "unsupported escape");
		*c = (char)k;	/* \] \\ \- \^ \t ...: the character */
		return 1;
	}
}

/* Writes the POSIX bracket: ']' first, '[' '^' '-' last, so that no member is syntax. */
static void
write_bracket(struct strbuf *out, int neg, const struct bracket_specials *sp, const struct strbuf *body)
{
	int lone = !neg && !sp->rbracket && body->len == 0 && !sp->lbracket;

	if (lone && sp->caret && !sp->dash) {
		strbuf_adds(out, "\\^");	/* [^] would be a negation */
		return;
	}
	strbuf_adds(out, neg ? "[^" : "[");
	if (sp->rbracket)
		strbuf_addc(out, ']');
	strbuf_adds(out, strbuf_str(body));
	if (sp->lbracket)
		strbuf_addc(out, '[');
	if (lone && sp->dash)
		strbuf_adds(out, sp->caret ? "-^" : "-");
	else
		strbuf_adds(out, sp->caret ? (sp->dash ? "^-" : "^") : (sp->dash ? "-" : ""));
	strbuf_addc(out, ']');
}

/* A .NET character class at P->i. */
static int
parse_bracket(struct parser *P)
{
	struct strbuf body = STRBUF_INIT;
	struct bracket_specials sp = { 0, 0, 0, 0 };
	struct pattern_set cs;
	size_t at = P->i;
	int neg = 0, first = 1, rc = 0, idx;

	memset(&cs, 0, sizeof cs);
	P->i++;
	if (peek(P, 0) == '^') {
		neg = 1;
		P->i++;
	}
	for (;;) {
		char lo, hi;
		int k, c;

		if (peek(P, 0) == -1) {
			rc = refuse(P, at, "missing ]");
			break;
		}
		if (peek(P, 0) == ']' && !first) {
			P->i++;
			break;
		}
		first = 0;
		if ((k = bracket_item(P, &cs, &body, &lo)) < 0) {
			rc = -1;
			break;
		}
		if (k == 0)
			continue;
		if (peek(P, 0) != '-' || peek(P, 1) == ']' || peek(P, 1) == -1) {
			set_add(&cs, (unsigned char)lo);
			if (!bracket_special(&sp, lo))
				strbuf_addc(&body, lo);
			continue;
		}
		P->i++;
		if ((k = bracket_item(P, &cs, &body, &hi)) <= 0) {
			rc = k < 0 ? -1 : refuse(P, at, "a class as a range end");
			break;
		}
		if ((unsigned char)hi < (unsigned char)lo) {
			rc = refuse(P, at, "range out of order");
			break;
		}
		for (c = (unsigned char)lo; c <= (unsigned char)hi; c++)
			set_add(&cs, c);
		bracket_endpoint(&body, lo);
		strbuf_addc(&body, '-');
		bracket_endpoint(&body, hi);
	}
	if (rc == 0) {
		write_bracket(P->out, neg, &sp, &body);
		*new_set(P, &idx) = cs;
		set_finish(P, &P->prog->sets[idx], idx, neg);
	}
	strbuf_release(&body);
	return rc;
}

/* ---------------------------------------------------------------- atoms */

static void
emit_class_escape(struct parser *P, int d)
{
	int idx, neg = isupper(d);
	struct pattern_set *cs = new_set(P, &idx);

	switch (tolower(d)) {
	case 'd':
		set_add_class(cs, class_index("digit", 5));
		strbuf_adds(P->out, neg ? "[^0-9]" : "[0-9]");
		break;
	case 'w':
		set_add_word(cs);
		strbuf_adds(P->out, neg ? "[^[:alnum:]_]" : "[[:alnum:]_]");
		break;
	default:
		set_add_class(cs, class_index("space", 5));
		strbuf_adds(P->out, neg ? "[^[:space:]]" : "[[:space:]]");
		break;
	}
	set_finish(P, cs, idx, neg);
}

/* An escape outside a class at P->i. */
static int
parse_escape(struct parser *P, enum atom_kind *kind)
{
	static const char anchors[] = "bB<>`'";
	static const enum assertion anchor_op[] = {
		AS_WORDB, AS_NWORDB, AS_WORDSTART, AS_WORDEND, AS_BOL, AS_EOL
	};
	size_t at = P->i;
	int d = peek(P, 1);
	const char *a;

	*kind = ATOM_CHAR;
	if (d == -1)
		return refuse(P, at, "trailing backslash");
	if (d >= '1' && d <= '9')
		return refuse(P, at, "back-reference");
	P->i += 2;
	if (d != 0 && strchr("dDwWsS", d) != NULL) {
		emit_class_escape(P, d);
		return 0;
	}
	if (d != 0 && (a = strchr(anchors, d)) != NULL) {
		strbuf_addc(P->out, '\\');
		strbuf_addc(P->out, (char)d);
		*kind = ATOM_ANCHOR;	/* GNU word and buffer anchors */
		emit(P, OP_ASSERT, anchor_op[a - anchors], 0, 0);
		return 0;
	}
	if ((d = escaped_char(d)) < 0)
		return refuse(P, at, "unsupported escape");
	if (isalnum(d) || d < 32 || d >= 127) {
		strbuf_addc(P->out, (char)d);
	} else {
		strbuf_addc(P->out, '\\');
		strbuf_addc(P->out, (char)d);
	}
	emit_char(P, d);
	return 0;
}

/* A group at P->i: ( ), (?: ), or the flag (?i) that is no atom. */
static int
parse_group(struct parser *P, struct traits *tr, enum atom_kind *kind)
{
	size_t at = P->i;
	int capture = 1, slot = -1;

	if (peek(P, 1) == '?') {
		if (peek(P, 2) == 'i' && peek(P, 3) == ')') {
			P->i += 4;	/* we are case-insensitive anyway */
			*kind = ATOM_NONE;
			tr->nullable = 1;
			return 0;
		}
		if (peek(P, 2) != ':')
			return refuse(P, at, "unsupported (? construct");
		capture = 0;
		P->i += 2;
	}
	if (P->depth >= PAT_MAX_DEPTH)
		return refuse(P, at, "groups nested deeper than " PAT_STR(PAT_MAX_DEPTH));
	if (++P->groups > PAT_MAX_GROUPS)
		return refuse(P, at, "more than " PAT_STR(PAT_MAX_GROUPS) " groups");
	if (capture && ++P->captures < PAT_MAX_CAPTURES)
		slot = P->captures;	/* $1..$9: the first nine capturing groups */
	P->i++;
	P->depth++;
	strbuf_addc(P->out, '(');
	if (slot >= 0)
		emit(P, OP_SAVE, 2 * slot, 0, 0);
	if (parse_alt(P, tr) < 0)
		return -1;
	if (peek(P, 0) != ')')
		return refuse(P, at, "missing )");
	if (slot >= 0)
		emit(P, OP_SAVE, 2 * slot + 1, 0, 0);
	P->i++;
	P->depth--;
	strbuf_addc(P->out, ')');
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

	for (; j < P->n && (isdigit((unsigned char)P->t[j]) || P->t[j] == ','); j++) {
		if (P->t[j] == ',')
			k = k == 0 ? 1 : 2;	/* a second comma: bad, once we know it is a count */
		else if (k < 2 && (v[k] = (v[k] < 0 ? 0 : v[k]) * 10 + (P->t[j] - '0')) > PAT_MAX_REPEAT)
			v[k] = PAT_MAX_REPEAT + 1;
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

static int
parse_atom(struct parser *P, struct traits *tr, enum atom_kind *kind)
{
	int c = peek(P, 0);
	long min, max;
	size_t at = P->i;

	tr->nullable = 0;
	tr->unbounded = 0;
	*kind = ATOM_CHAR;
	switch (c) {
	case '(':
		return parse_group(P, tr, kind);
	case '[':
		return parse_bracket(P);
	case '\\':
		if (parse_escape(P, kind) < 0)
			return -1;
		tr->nullable = *kind == ATOM_ANCHOR;
		return 0;
	case '^': case '$':
		*kind = ATOM_ANCHOR;
		tr->nullable = 1;
		strbuf_addc(P->out, (char)c);
		emit(P, OP_ASSERT, c == '^' ? AS_BOL : AS_EOL, 0, 0);
		P->i++;
		return 0;
	case '*': case '+': case '?':
		return refuse(P, at, "quantifier follows nothing");
	case '{':
		if (parse_count(P, &min, &max) != 0)
			return refuse(P, at, "quantifier follows nothing");
		strbuf_adds(P->out, "\\{");
		break;
	case ')':	/* unmatched: a literal, as in POSIX */
		strbuf_adds(P->out, "\\)");
		break;
	case '.':
		strbuf_addc(P->out, '.');
		{
			int idx;
			struct pattern_set *all = new_set(P, &idx);

			set_finish(P, all, idx, 1);	/* the empty set, negated */
		}
		P->i++;
		return 0;
	default:
		strbuf_addc(P->out, (char)c);
		break;
	}
	emit_char(P, c);
	P->i++;
	return 0;
}

/*
 * An atom and its quantifier.  Refused: a quantifier after nothing, an
 * anchor or another quantifier (.NET's "nested quantifier"); a repeated
 * group that can match empty (other than '?'); an unbounded repetition
 * of a group that holds one.  A lazy '?' is dropped: the texts matched
 * are the same, and captures stay greedy as they always were.
 */
static int
parse_piece(struct parser *P, struct traits *tr)
{
	enum atom_kind kind;
	int from = P->prog->len;
	size_t at;
	long min, max;
	int q;

	if (parse_atom(P, tr, &kind) < 0)
		return -1;
	at = P->i;
	if ((q = parse_quantifier(P, &min, &max)) <= 0)
		return q;
	if (kind == ATOM_NONE || kind == ATOM_ANCHOR)
		return refuse(P, at, "quantifier follows nothing");
	if (kind == ATOM_GROUP && tr->nullable && !(min == 0 && max == 1))
		return refuse(P, at, "repeated group can match empty");
	if (kind == ATOM_GROUP && tr->unbounded && max < 0)
		return refuse(P, at, "nested quantifier");
	{
		char *text = xstrndup(P->t + at, P->i - at);

		strbuf_adds(P->out, text);
		free(text);
	}
	if (repeat_code(P, from, min, max, at) < 0)
		return -1;
	if (min == 0)
		tr->nullable = 1;
	if (max < 0)
		tr->unbounded = 1;
	if (peek(P, 0) == '?')
		P->i++;
	at = P->i;
	if (parse_quantifier(P, &min, &max) != 0)
		return refuse(P, at, "nested quantifier");
	return 0;
}

static int
parse_concat(struct parser *P, struct traits *tr)
{
	tr->nullable = 1;
	tr->unbounded = 0;
	while (peek(P, 0) != -1 && peek(P, 0) != '|' && !(peek(P, 0) == ')' && P->depth > 0)) {
		struct traits piece;

		if (parse_piece(P, &piece) < 0)
			return -1;
		tr->nullable &= piece.nullable;
		tr->unbounded |= piece.unbounded;
		if (P->prog->len > PAT_MAX_PROGRAM)
			return refuse(P, P->i, "program over " PAT_STR(PAT_MAX_PROGRAM) " instructions");
	}
	return 0;
}

/*
 * Alternatives a|b|c: SPLIT a, (SPLIT b, c), each branch but the last
 * ending in a jump past the others.
 */
static int
parse_alt(struct parser *P, struct traits *tr)
{
	int start = P->prog->len, *jumps = NULL, njumps = 0, k;

	if (parse_concat(P, tr) < 0)
		return -1;
	while (peek(P, 0) == '|') {
		struct traits branch;

		insert_code(P, start, 1);
		P->prog->code[start].op = OP_SPLIT;
		P->prog->code[start].x = start + 1;
		jumps = xrealloc(jumps, (size_t)(njumps + 1) * sizeof *jumps);
		jumps[njumps++] = emit(P, OP_JMP, 0, -1, 0);
		P->prog->code[start].y = P->prog->len;
		start = P->prog->len;
		P->i++;
		strbuf_addc(P->out, '|');
		if (parse_concat(P, &branch) < 0) {
			free(jumps);
			return -1;
		}
		tr->nullable |= branch.nullable;
		tr->unbounded |= branch.unbounded;
	}
	for (k = 0; k < njumps; k++)
		P->prog->code[jumps[k]].x = P->prog->len;
	free(jumps);
	return 0;
}

/*
 * The bytes a match starting at START can start with, as a new set's
 * index, or -1 when an assertion or an empty match can come first.
 */
static int
first_bytes(struct parser *P, int start)
{
	struct pattern_prog *g = P->prog;
	struct pattern_set first;
	unsigned char *seen = xcalloc((size_t)g->len, 1);
	int *stack = xmalloc((size_t)g->len * 2 * sizeof *stack), sp = 0, ok = 1, c, idx = -1;

	memset(&first, 0, sizeof first);
	stack[sp++] = start;
	while (sp > 0 && ok) {
		int pc = stack[--sp];
		const struct pattern_inst *in = &g->code[pc];

		if (seen[pc])
			continue;
		seen[pc] = 1;
		switch (in->op) {
		case OP_SAVE: stack[sp++] = pc + 1; break;
		case OP_JMP: stack[sp++] = in->x; break;
		case OP_SPLIT: stack[sp++] = in->x; stack[sp++] = in->y; break;
		case OP_SET:
			for (c = 0; c < 32; c++)
				first.bit[c] |= g->sets[in->arg].bit[c];
			break;
		default: ok = 0;
		}
	}
	if (ok)
		*new_set(P, &idx) = first;
	free(seen);
	free(stack);
	return idx;
}

/* Is the code at PC the loop of a '.*' (SPLIT, any byte, JMP back)? */
static int
is_any_loop(const struct pattern_prog *g, int pc)
{
	const struct pattern_set *cs;
	int c;

	if (pc + 3 > g->len || g->code[pc].op != OP_SPLIT || g->code[pc].x != pc + 1 ||
	    g->code[pc].y != pc + 3 || g->code[pc + 1].op != OP_SET ||
	    g->code[pc + 2].op != OP_JMP || g->code[pc + 2].x != pc)
		return 0;
	cs = &g->sets[g->code[pc + 1].arg];
	for (c = 1; c < 256; c++)
		if (!set_has(cs, c))
			return 0;
	return 1;
}

/*
 * What lets the matcher skip ahead where no thread is alive: the bytes a
 * match can start with, or that a leading '^' anchors it.  A yes/no test
 * (no captures) also skips a leading '.*': an unanchored search finds a
 * match without it exactly when it finds one with it.
 */
static void
find_start(struct parser *P)
{
	struct pattern_prog *g = P->prog;

	g->anchored = g->code[1].op == OP_ASSERT && g->code[1].arg == AS_BOL;
	g->first = first_bytes(P, 0);
	g->test_start = is_any_loop(g, 1) ? 4 : 0;
	g->test_first = g->test_start ? first_bytes(P, g->test_start) : g->first;
}

/*
 * Parses TEXT[0..N) into PROG, writing the POSIX ERE to OUT.  Returns 0,
 * or -1 with *WHY and *AT saying what was refused where (an offset in
 * TEXT, 0 when there is no useful one).
 */
static int
parse_pattern(const char *text, size_t n, struct pattern_prog *prog, struct strbuf *out,
    const char **why, size_t *at)
{
	struct strbuf simple = STRBUF_INIT;
	struct traits tr;
	struct parser P;
	int raw = n > 0 && text[0] == '@', rc = 0;

	*why = NULL;
	*at = 0;
	if (n > PAT_MAX_LENGTH) {
		*why = "longer than " PAT_STR(PAT_MAX_LENGTH) " bytes";
		return -1;
	}
	memset(&P, 0, sizeof P);
	if (raw) {
		P.t = text + 1;
		P.n = n - 1;
	} else {
		translate_simple(&simple, text, n);
		P.t = strbuf_str(&simple);
		P.n = simple.len;
	}
	P.out = out;
	P.prog = prog;
	emit(&P, OP_SAVE, 0, 0, 0);
	if (parse_alt(&P, &tr) < 0) {
		*why = P.why;
		/* an offset in the simple syntax's translation is no use to the user */
		*at = raw ? P.at + 1 : 0;
		rc = -1;
	} else {
		emit(&P, OP_SAVE, 1, 0, 0);
		emit(&P, OP_MATCH, 0, 0, 0);
		find_start(&P);
	}
	strbuf_release(&simple);
	return rc;
}

static void
prog_free(struct pattern_prog *g)
{
	free(g->code);
	free(g->sets);
	memset(g, 0, sizeof *g);
}

char *
pattern_to_regex(const char *text, size_t n)
{
	struct pattern_prog g = { NULL, 0, 0, NULL, 0, 0, -1, 0, 0, -1 };
	struct strbuf out = STRBUF_INIT;
	const char *why;
	size_t at;
	int rc = parse_pattern(text, n, &g, &out, &why, &at);

	prog_free(&g);
	if (rc < 0) {
		strbuf_release(&out);
		return NULL;
	}
	return strbuf_detach(&out);
}

int
pattern_compile(struct pattern *p, const char *text, size_t n, char *err, size_t errlen)
{
	struct strbuf out = STRBUF_INIT;
	const char *why;
	size_t at;

	memset(p, 0, sizeof *p);
	if (parse_pattern(text, n, &p->prog, &out, &why, &at) < 0) {
		/* a long pattern is shown cut, so that the reason still shows */
		int shown = n > 80 ? 80 : (int)n;
		const char *more = n > 80 ? "..." : "";

		if (at > 0)
			snprintf(err, errlen, "bad pattern '%.*s%s': %s at offset %zu", shown, text,
			    more, why, at);
		else
			snprintf(err, errlen, "bad pattern '%.*s%s': %s", shown, text, more, why);
		strbuf_release(&out);
		prog_free(&p->prog);
		return -1;
	}
	strbuf_release(&out);
	p->text = xstrndup(text, n);
	return 0;
}

void
pattern_free(struct pattern *p)
{
	free(p->text);
	p->text = NULL;
	prog_free(&p->prog);
}

/* ---------------------------------------------------------------- matching */

static int
is_word(int c)
{
	return c == '_' || isalnum(c);
}

static int
assertion_holds(int as, const unsigned char *s, size_t pos)
{
	int before = pos > 0 && is_word(s[pos - 1]), after = is_word(s[pos]);

	switch (as) {
	case AS_BOL: return pos == 0;
	case AS_EOL: return s[pos] == '\0';
	case AS_WORDB: return before != after;
	case AS_NWORDB: return before == after;
	case AS_WORDSTART: return !before && after;
	default: return before && !after;
	}
}

/* A list of threads, in priority order, each with its NCAP capture slots. */
struct threads {
	int n;
	int *pc;
	int *cap;
};

struct vm {
	const struct pattern_prog *g;
	const unsigned char *s;
	int ncap;
	unsigned *mark, gen;	/* mark[pc] == gen: pc is on the list being built */
	int *stack;		/* the closure's pending work */
};

/*
 * Adds the thread at PC with captures CAP (at POS) to L, following the
 * jumps, splits, saves and assertions, first branch first.  Iterative:
 * an explicit stack of pcs, with "restore cap[k] to v" entries for saves.
 */
static void
add_thread(struct vm *V, struct threads *L, int pc, int *cap, size_t pos)
{
	int sp = 0;

	V->stack[sp++] = pc;
	while (sp > 0) {
		const struct pattern_inst *in;

		pc = V->stack[--sp];
		if (pc < 0) {	/* a restore: -1 - slot, then the old value */
			int slot = -1 - pc;

			cap[slot] = V->stack[--sp];
			continue;
		}
		if (V->mark[pc] == V->gen)
			continue;
		V->mark[pc] = V->gen;
		in = &V->g->code[pc];
		switch (in->op) {
		case OP_JMP:
			V->stack[sp++] = in->x;
			break;
		case OP_SPLIT:
			V->stack[sp++] = in->y;
			V->stack[sp++] = in->x;
			break;
		case OP_SAVE:
			if (in->arg < V->ncap) {
				V->stack[sp++] = cap[in->arg];
				V->stack[sp++] = -1 - in->arg;
				cap[in->arg] = (int)pos;
			}
			V->stack[sp++] = pc + 1;
			break;
		case OP_ASSERT:
			if (assertion_holds(in->arg, V->s, pos))
				V->stack[sp++] = pc + 1;
			break;
		default:
			L->pc[L->n] = pc;
			if (V->ncap)
				memcpy(L->cap + (size_t)L->n * V->ncap, cap, (size_t)V->ncap * sizeof *cap);
			L->n++;
		}
	}
}

/*
 * Runs P on S: leftmost match, first by priority (greedy), as .NET does.
 * With CAP (NCAP slots) fills the captures.  Time: subject length times
 * program length; memory: a few ints per instruction.
 */
static int
vm_run(const struct pattern *p, const char *s, int *cap, int ncap)
{
	const struct pattern_prog *g = &p->prog;
	struct vm V;
	struct threads a, b, *cur = &a, *next = &b, *t;
	int len = g->len, matched = 0, i, k;
	int start = ncap ? 0 : g->test_start, first = ncap ? g->first : g->test_first;
	int init[2 * PAT_MAX_CAPTURES];
	size_t pos;
	/* small programs, the usual ones, need no allocation */
	int small[8 * 64 + 4 * 64 * 2 * PAT_MAX_CAPTURES];
	int *mem, need = len * 6 + 2 + 2 * len * ncap;

	mem = need <= (int)(sizeof small / sizeof small[0]) ? small :
	    xmalloc((size_t)need * sizeof *mem);
	V.g = g;
	V.s = (const unsigned char *)s;
	V.ncap = ncap;
	V.mark = (unsigned *)mem;
	V.stack = mem + len;		/* 3 entries at most per instruction */
	a.pc = mem + 4 * len + 2;
	b.pc = mem + 5 * len + 2;
	a.cap = mem + 6 * len + 2;
	b.cap = mem + 6 * len + 2 + len * ncap;
	memset(V.mark, 0, (size_t)len * sizeof *V.mark);
	V.gen = 1;
	a.n = b.n = 0;
	for (k = 0; k < ncap; k++)
		init[k] = -1;
	for (pos = 0;; pos++) {
		int c;

		if (!matched) {
			if (cur->n == 0 && pos > 0 && g->anchored)
				break;
			if (cur->n == 0 && first >= 0)
				while (V.s[pos] != '\0' && !set_has(&g->sets[first], V.s[pos]))
					pos++;
			for (k = 0; k < ncap; k++)
				init[k] = -1;
			add_thread(&V, cur, start, init, pos);	/* last: the lowest priority */
		}
		c = V.s[pos];
		V.gen++;
		next->n = 0;
		for (i = 0; i < cur->n; i++) {
			const struct pattern_inst *in = &g->code[cur->pc[i]];
			int *tc = cur->cap + (size_t)i * ncap;

			if (in->op == OP_MATCH) {
				matched = 1;
				if (ncap)
					memcpy(cap, tc, (size_t)ncap * sizeof *cap);
				break;	/* lower-priority threads lose */
			}
			if (c != '\0' && set_has(&g->sets[in->arg], c))
				add_thread(&V, next, cur->pc[i] + 1, tc, pos + 1);
		}
		if (matched && (ncap == 0 || next->n == 0))
			break;
		if (c == '\0')
			break;
		t = cur;
		cur = next;
		next = t;
	}
	if (mem != small)
		free(mem);
	return matched;
}

int
pattern_match(const struct pattern *p, const char *s)
{
	return vm_run(p, s, NULL, 0);
}

int
pattern_exec(const struct pattern *p, const char *s, regmatch_t *m)
{
	int cap[2 * PAT_MAX_CAPTURES], i;

	for (i = 0; i < PAT_MAX_CAPTURES; i++)
		m[i].rm_so = m[i].rm_eo = -1;
	/* most frames match no group: find that out the fast way first */
	if (!vm_run(p, s, NULL, 0) || !vm_run(p, s, cap, 2 * PAT_MAX_CAPTURES))
		return 0;
	for (i = 0; i < PAT_MAX_CAPTURES; i++)
		if (cap[2 * i] >= 0 && cap[2 * i + 1] >= cap[2 * i]) {
			m[i].rm_so = cap[2 * i];
			m[i].rm_eo = cap[2 * i + 1];
		}
	return 1;
}

char *
pattern_expand(const char *repl, const char *s, const regmatch_t *m)
{
	struct strbuf b = STRBUF_INIT;
	const char *r;

	for (r = repl; *r; r++) {
		int k = -1;

		if (r[0] == '$' && r[1] == '&')
			k = 0;
		else if (r[0] == '$' && r[1] >= '1' && r[1] <= '9')
			k = r[1] - '0';
		if (k < 0) {
			strbuf_addc(&b, *r);
			continue;
		}
		if (m[k].rm_so >= 0)
			strbuf_add(&b, s + m[k].rm_so, (size_t)(m[k].rm_eo - m[k].rm_so));
		r++;
	}
	return strbuf_detach(&b);
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

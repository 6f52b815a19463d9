/*
 * demangle.c - a small MSVC C++ demangler for public symbol names:
 * the qualified name only (no parameters, no return type), spelled the
 * way PDB procedure symbols spell it, so that a function known only by
 * its S_PUB32 reads like one known by its S_GPROC32:
 *
 *   ??1sentry@?$basic_ostream@DU?$char_traits@D@std@@@std@@QAE@XZ
 *     -> std::basic_ostream<char,std::char_traits<char> >::sentry::~sentry
 *
 * Covered: nested scopes, name back-references, class templates and
 * function templates (with their own back-reference context), type
 * arguments (builtins, classes/structs/unions/enums, pointers and
 * references with const/volatile), integer arguments, constructors,
 * destructors, operators and the common compiler-generated names,
 * anonymous namespaces.  Anything else returns NULL and the caller keeps
 * the raw name: a wrong name is worse than an ugly one.
 */
#include "etl/symbols.h"
#include "base/cli.h"
#include "base/strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Back-reference tables: names (0-9) and types (0-9). */
struct ctx {
	char *names[10];
	int nnames;
	char *types[10];
	int ntypes;
};

struct dm {
	const char *s;
	int fail;
	int depth;
};

static void ctx_free(struct ctx *c)
{
	int i;
	for (i = 0; i < c->nnames; i++)
		free(c->names[i]);
	for (i = 0; i < c->ntypes; i++)
		free(c->types[i]);
}

static void remember_name(struct ctx *c, const char *n)
{
	int i;
	for (i = 0; i < c->nnames; i++)
		if (strcmp(c->names[i], n) == 0)
			return;
	if (c->nnames < 10)
		c->names[c->nnames++] = xstrdup(n);
}

static void remember_type(struct ctx *c, const char *t)
{
	if (c->ntypes < 10)
		c->types[c->ntypes++] = xstrdup(t);
}

static char *fail(struct dm *d)
{
	d->fail = 1;
	return NULL;
}

static char *qualified_name(struct dm *d, struct ctx *c);
static char *type(struct dm *d, struct ctx *c);
static char *function_pointer(struct dm *d, struct ctx *c, const char *self_cv);
static const char *cv_name(char ch);
static char *conversion_type(struct dm *d, struct ctx *c);

/* "name@" */
static char *simple_name(struct dm *d)
{
	const char *at = strchr(d->s, '@');
	char *n;
	if (!at || at == d->s)
		return fail(d);
	n = xstrndup(d->s, (size_t)(at - d->s));
	d->s = at + 1;
	return n;
}

/* Encoded number: '?' negates; '0'-'9' mean 1-10; else hex A-P ending '@'. */
static int number(struct dm *d, long long *v)
{
	int neg = 0;
	unsigned long long x = 0;
	if (*d->s == '?') {
		neg = 1;
		d->s++;
	}
	if (*d->s >= '0' && *d->s <= '9') {
		x = (unsigned long long)(*d->s++ - '0') + 1;
	} else {
		int digits = 0;
		while (*d->s >= 'A' && *d->s <= 'P' && digits < 16) {
			x = x * 16 + (unsigned long long)(*d->s++ - 'A');
			digits++;
		}
		if (*d->s != '@')
			return -1;	/* never step past the end */
		d->s++;
	}
	*v = neg ? -(long long)x : (long long)x;
	return 0;
}

struct opname {
	const char *code, *name;
};

/* Operator and special-name codes after '?' (and '?_'). */
static const struct opname ops[] = {
	{ "2", "operator new" }, { "3", "operator delete" },
	{ "4", "operator=" }, { "5", "operator>>" }, { "6", "operator<<" },
	{ "7", "operator!" }, { "8", "operator==" }, { "9", "operator!=" },
	{ "A", "operator[]" }, { "C", "operator->" }, { "D", "operator*" },
	{ "E", "operator++" }, { "F", "operator--" }, { "G", "operator-" },
	{ "H", "operator+" }, { "I", "operator&" }, { "J", "operator->*" },
	{ "K", "operator/" }, { "L", "operator%" }, { "M", "operator<" },
	{ "N", "operator<=" }, { "O", "operator>" }, { "P", "operator>=" },
	{ "Q", "operator," }, { "R", "operator()" }, { "S", "operator~" },
	{ "T", "operator^" }, { "U", "operator|" }, { "V", "operator&&" },
	{ "W", "operator||" }, { "X", "operator*=" }, { "Y", "operator+=" },
	{ "Z", "operator-=" }, { "_0", "operator/=" }, { "_1", "operator%=" },
	{ "_2", "operator>>=" }, { "_3", "operator<<=" }, { "_4", "operator&=" },
	{ "_5", "operator|=" }, { "_6", "operator^=" },
	{ "_7", "`vftable'" }, { "_8", "`vbtable'" }, { "_9", "`vcall'" },
	{ "_A", "`typeof'" }, { "_B", "`local static guard'" },
	{ "_D", "`vbase destructor'" },
	{ "_E", "`vector deleting destructor'" },
	{ "_F", "`default constructor closure'" },
	{ "_G", "`scalar deleting destructor'" },
	{ "_H", "`vector constructor iterator'" },
	{ "_I", "`vector destructor iterator'" },
	{ "_J", "`vector vbase constructor iterator'" },
	{ "_K", "`virtual displacement map'" },
	{ "_L", "`eh vector constructor iterator'" },
	{ "_M", "`eh vector destructor iterator'" },
	{ "_N", "`eh vector vbase constructor iterator'" },
	{ "_O", "`copy constructor closure'" },
	{ "_S", "`local vftable'" },
	{ "_T", "`local vftable constructor closure'" },
	{ "_U", "operator new[]" }, { "_V", "operator delete[]" },
	{ "_X", "`placement delete closure'" },
	{ "_Y", "`placement delete[] closure'" },
	{ "__L", "operator co_await" }, { "__M", "operator<=>" },
	{ NULL, NULL }
};

/*
 * After '?': an operator name; ctor/dtor/conversion are returned as
 * "\1" / "\2" / "\3" (they need the class name or the return type).
 */
static char *operator_name(struct dm *d)
{
	const struct opname *o;
	if (*d->s == 'B') {
		d->s++;
		return xstrdup("\3");
	}
	if (*d->s == '0') {
		d->s++;
		return xstrdup("\1");
	}
	if (*d->s == '1') {
		d->s++;
		return xstrdup("\2");
	}
	for (o = ops; o->code; o++) {
		size_t n = strlen(o->code);
		if (strncmp(d->s, o->code, n) == 0) {
			d->s += n;
			return xstrdup(o->name);
		}
	}
	return fail(d);	/* ?_C strings, ?__E initializers ... */
}

static int ends_with_gt(const struct strbuf *s)
{
	return s->len && s->s[s->len - 1] == '>';
}

/* After "?$": NAME@ARGS@ -> "NAME<ARGS>" (own back-reference context). */
static char *template_name(struct dm *d)
{
	struct ctx inner = {0};
	struct strbuf s = STRBUF_INIT;
	char *name;
	int nargs = 0;

	if (++d->depth > 32)
		return fail(d);
	if (*d->s == '?') {
		d->s++;
		name = operator_name(d);
		if (name && (unsigned char)name[0] < 4) {
			/* constructor/destructor/conversion templates: not handled */
			free(name);
			name = fail(d);
		}
	} else {
		name = simple_name(d);
	}
	if (!name)
		return NULL;
	remember_name(&inner, name);
	strbuf_adds(&s, name);
	free(name);
	strbuf_adds(&s, "<");
	while (!d->fail && *d->s && *d->s != '@') {
		char *a = NULL;
		if (strncmp(d->s, "$$V", 3) == 0 || strncmp(d->s, "$$Z", 3) == 0) {
			d->s += 3;	/* empty parameter pack */
			continue;
		}
		if (strncmp(d->s, "$S", 2) == 0) {
			d->s += 2;
			continue;
		}
		if (d->s[0] == '$' && d->s[1] == '0') {
			long long v;
			char buf[32];
			d->s += 2;
			if (number(d, &v) < 0) {
				fail(d);
				break;
			}
			snprintf(buf, sizeof buf, "%lld", v);
			a = xstrdup(buf);
		} else {
			a = type(d, &inner);
		}
		if (!a)
			break;
		if (nargs++)
			strbuf_adds(&s, ",");
		strbuf_adds(&s, a);
		free(a);
	}
	ctx_free(&inner);
	d->depth--;
	if (d->fail || *d->s != '@') {
		strbuf_release(&s);
		return fail(d);
	}
	d->s++;
	strbuf_adds(&s, ends_with_gt(&s) ? " >" : ">");
	return strbuf_detach(&s);
}

/* One scope fragment of a qualified name (after the first). */
static char *fragment(struct dm *d, struct ctx *c)
{
	char *n;
	if (*d->s >= '0' && *d->s <= '9') {
		int i = *d->s++ - '0';
		return i < c->nnames ? xstrdup(c->names[i]) : fail(d);
	}
	if (d->s[0] == '?' && d->s[1] == '$') {
		d->s += 2;
		n = template_name(d);
		if (n)
			remember_name(c, n);
		return n;
	}
	if (d->s[0] == '?' && d->s[1] == 'A') {	/* ?A0x1234abcd@ */
		const char *at = strchr(d->s, '@');
		if (!at)
			return fail(d);
		d->s = at + 1;
		n = xstrdup("`anonymous namespace'");
		remember_name(c, n);
		return n;
	}
	if (*d->s == '?')
		return fail(d);	/* local scopes, nested mangled names */
	n = simple_name(d);
	if (n)
		remember_name(c, n);
	return n;
}

/*
 * The return type of a member function's encoding (after its name):
 * access [this-qualifiers] calling-convention [?A|?B] TYPE.
 */
static char *conversion_type(struct dm *d, struct ctx *c)
{
	char a = *d->s;
	if (a < 'A' || a > 'Z')
		return fail(d);
	d->s++;
	if (!strchr("CDKLST", a)) {	/* not static: this-qualifiers */
		while (*d->s == 'E' || *d->s == 'I' || *d->s == 'F')
			d->s++;
		if (!cv_name(*d->s))
			return fail(d);
		d->s++;
	}
	if (!*d->s || !strchr("ABCDEFGHIJKQ", *d->s))
		return fail(d);
	d->s++;
	if (d->s[0] == '?' && (d->s[1] == 'A' || d->s[1] == 'B'))
		d->s += 2;
	return type(d, c);
}

/* NAME SCOPE... @  ->  "scope::...::name" (ctor/dtor resolved). */
static char *qualified_name(struct dm *d, struct ctx *c)
{
	char *first, *scopes[32];
	int n = 0, i;
	struct strbuf s = STRBUF_INIT;

	if (d->s[0] == '?' && d->s[1] == '$') {
		d->s += 2;
		first = template_name(d);
		if (first)
			remember_name(c, first);
	} else if (d->s[0] == '?') {
		d->s++;
		first = operator_name(d);
	} else {
		first = fragment(d, c);
	}
	if (!first)
		return fail(d);
	while (!d->fail && *d->s && *d->s != '@' && n < 32) {
		char *f = fragment(d, c);
		if (!f)
			break;
		scopes[n++] = f;
	}
	if (d->fail || *d->s != '@' ||
	    ((first[0] == '\1' || first[0] == '\2' || first[0] == '\3') &&
	    n == 0)) {
		for (i = 0; i < n; i++)
			free(scopes[i]);
		free(first);
		return fail(d);
	}
	d->s++;
	for (i = n - 1; i >= 0; i--) {
		strbuf_adds(&s, scopes[i]);
		strbuf_adds(&s, "::");
	}
	if (first[0] == '\1' || first[0] == '\2') {
		/* constructor / destructor: named after the class */
		if (first[0] == '\2')
			strbuf_adds(&s, "~");
		strbuf_adds(&s, scopes[0]);
	} else if (first[0] == '\3') {
		/* conversion: "operator TYPE", the type is the return type */
		char *t = conversion_type(d, c);
		if (!t) {
			for (i = 0; i < n; i++)
				free(scopes[i]);
			free(first);
			strbuf_release(&s);
			return fail(d);
		}
		strbuf_adds(&s, "operator ");
		strbuf_adds(&s, t);
		free(t);
	} else {
		strbuf_adds(&s, first);
	}
	for (i = 0; i < n; i++)
		free(scopes[i]);
	free(first);
	return strbuf_detach(&s);
}

static const char *builtin(char ch)
{
	switch (ch) {
	case 'C': return "signed char";
	case 'D': return "char";
	case 'E': return "unsigned char";
	case 'F': return "short";
	case 'G': return "unsigned short";
	case 'H': return "int";
	case 'I': return "unsigned int";
	case 'J': return "long";
	case 'K': return "unsigned long";
	case 'M': return "float";
	case 'N': return "double";
	case 'O': return "long double";
	case 'X': return "void";
	}
	return NULL;
}

static const char *builtin_ext(char ch)
{
	switch (ch) {
	case 'D': return "__int8";
	case 'E': return "unsigned __int8";
	case 'F': return "__int16";
	case 'G': return "unsigned __int16";
	case 'H': return "__int32";
	case 'I': return "unsigned __int32";
	case 'J': return "__int64";
	case 'K': return "unsigned __int64";
	case 'N': return "bool";
	case 'Q': return "char8_t";
	case 'S': return "char16_t";
	case 'U': return "char32_t";
	case 'W': return "wchar_t";
	}
	return NULL;
}

static const char *cv_name(char ch)
{
	switch (ch) {
	case 'A': return "";
	case 'B': return " const";
	case 'C': return " volatile";
	case 'D': return " const volatile";
	}
	return NULL;
}

/* After "P6": CALLCONV RET ARGS@ Z  ->  "RET (*)(ARGS)" */
static char *function_pointer(struct dm *d, struct ctx *c, const char *self_cv)
{
	struct strbuf s = STRBUF_INIT;
	char *t;
	int n = 0;
	d->s++;
	if (!strchr("ABCDEFGHIJKQ", *d->s) || !*d->s)
		return fail(d);
	d->s++;
	if (d->s[0] == '?' && (d->s[1] == 'A' || d->s[1] == 'B'))
		d->s += 2;	/* cv of a returned class */
	if (!(t = type(d, c)))
		return NULL;
	strbuf_adds(&s, t);
	strbuf_adds(&s, " (*");
	strbuf_adds(&s, self_cv);
	strbuf_adds(&s, ")(");
	free(t);
	if (*d->s == 'X') {
		d->s++;
	} else {
		while (!d->fail && *d->s && *d->s != '@' && *d->s != 'Z') {
			if (!(t = type(d, c)))
				break;
			if (n++)
				strbuf_adds(&s, ",");
			strbuf_adds(&s, t);
			free(t);
		}
		if (*d->s == 'Z') {
			strbuf_adds(&s, n ? ",..." : "...");
			d->s++;
		} else if (*d->s == '@') {
			d->s++;
		} else {
			fail(d);
		}
	}
	if (d->fail || *d->s != 'Z') {	/* the throw specification */
		strbuf_release(&s);
		return fail(d);
	}
	d->s++;
	strbuf_adds(&s, ")");
	return strbuf_detach(&s);
}

/* P/Q/R/S pointers, A references, $$Q rvalue references. */
static char *pointer(struct dm *d, struct ctx *c, const char *sigil,
    const char *self_cv)
{
	const char *cv;
	char *t;
	struct strbuf s = STRBUF_INIT;
	if (*d->s == '6' && sigil[0] == '*')
		return function_pointer(d, c, self_cv);
	while (*d->s == 'E' || *d->s == 'I' || *d->s == 'F')
		d->s++;		/* __ptr64, __restrict, __unaligned */
	if (!(cv = cv_name(*d->s)))
		return fail(d);	/* member pointers */
	d->s++;
	if (!(t = type(d, c)))
		return NULL;
	strbuf_adds(&s, t);
	strbuf_adds(&s, cv);
	strbuf_adds(&s, " ");
	strbuf_adds(&s, sigil);
	strbuf_adds(&s, self_cv);
	free(t);
	return strbuf_detach(&s);
}

static char *type(struct dm *d, struct ctx *c)
{
	const char *b, *start = d->s;
	char *t = NULL, ch = *d->s;

	if (!ch)
		return fail(d);	/* the name ended: never step past it */
	if (++d->depth > 64)
		return fail(d);
	if (ch >= '0' && ch <= '9') {
		d->s++;
		d->depth--;
		return ch - '0' < c->ntypes ? xstrdup(c->types[ch - '0']) : fail(d);
	}
	if ((b = builtin(ch))) {
		d->s++;
		d->depth--;
		return xstrdup(b);
	}
	if (ch == '_' && (b = builtin_ext(d->s[1]))) {
		d->s += 2;
		d->depth--;
		return xstrdup(b);
	}
	d->s++;
	switch (ch) {
	case 'T': case 'U': case 'V':
		t = qualified_name(d, c);
		break;
	case 'W':
		if (*d->s < '0' || *d->s > '7')
			return fail(d);
		d->s++;
		t = qualified_name(d, c);
		break;
	case 'P': t = pointer(d, c, "*", ""); break;
	case 'Q': t = pointer(d, c, "*", " const"); break;
	case 'R': t = pointer(d, c, "*", " volatile"); break;
	case 'S': t = pointer(d, c, "*", " const volatile"); break;
	case 'A': t = pointer(d, c, "&", ""); break;
	case 'B': t = pointer(d, c, "&", " volatile"); break;
	case '$':
		if (d->s[0] == '$' && d->s[1] == 'Q') {
			d->s += 2;
			t = pointer(d, c, "&&", "");
		} else if (d->s[0] == '$' && d->s[1] == 'C') {
			const char *cv;
			d->s += 2;
			if ((cv = cv_name(*d->s))) {
				char *in;
				d->s++;
				if ((in = type(d, c))) {
					struct strbuf s = STRBUF_INIT;
					strbuf_adds(&s, in);
					strbuf_adds(&s, cv);
					free(in);
					t = strbuf_detach(&s);
				}
			} else {
				fail(d);
			}
		} else {
			fail(d);
		}
		break;
	default:
		fail(d);
	}
	d->depth--;
	if (!t)
		return fail(d);
	if (d->s - start > 1)
		remember_type(c, t);
	return t;
}

/* x86 C decorations: _f, _f@8 (stdcall), @f@8 (fastcall). */
static char *undecorate_c(const char *name)
{
	const char *at, *end;
	if ((name[0] != '_' && name[0] != '@') || !name[1])
		return NULL;
	if (name[0] == '_' && name[1] == '_' && strncmp(name, "__imp_", 6) == 0)
		return NULL;
	end = name + strlen(name);
	at = strrchr(name + 1, '@');
	if (at) {
		const char *p;
		for (p = at + 1; *p; p++)
			if (!isdigit((unsigned char)*p))
				return NULL;
		if (at[1] == 0)
			return NULL;
		end = at;
	} else if (name[0] == '@') {
		return NULL;
	}
	if (end == name + 1 || memchr(name + 1, '@', (size_t)(end - name - 1)))
		return NULL;	/* nothing left ("_@8"), or not a C decoration */
	return xstrndup(name + 1, (size_t)(end - name - 1));
}

char *sym_demangle(const char *name, int x86)
{
	struct dm d = { name, 0, 0 };
	struct ctx c = {0};
	char *r;

	if (name[0] != '?')
		return x86 ? undecorate_c(name) : NULL;
	if (name[1] == '?' && name[2] == '_' && (name[3] == 'C' ||
	    name[3] == 'R'))
		return NULL;	/* string literals, RTTI descriptors */
	if (strncmp(name, "??__E", 5) == 0 || strncmp(name, "??__F", 5) == 0) {
		/* `dynamic initializer for 'x'' / `dynamic atexit destructor for 'x'' */
		struct strbuf s = STRBUF_INIT;
		d.s = name + 5;
		if (*d.s == '?' || !(r = qualified_name(&d, &c))) {
			ctx_free(&c);
			return NULL;
		}
		strbuf_adds(&s, name[4] == 'E' ? "`dynamic initializer for '" :
		    "`dynamic atexit destructor for '");
		strbuf_adds(&s, r);
		strbuf_adds(&s, "''");
		free(r);
		ctx_free(&c);
		return strbuf_detach(&s);
	}
	d.s = name + 1;
	r = qualified_name(&d, &c);
	ctx_free(&c);
	if (d.fail || !r || !r[0]) {	/* never an empty name */
		free(r);
		return NULL;
	}
	return r;
}

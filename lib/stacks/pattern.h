/*
 * pattern.h - PerfView's simplified frame patterns (reference-semantics §2.2).
 *
 * A pattern is compiled for lib/stacks/pattern.c's own matcher (linear time,
 * bounded memory) and matched case-insensitively and unanchored
 * (substring search); pattern_to_regex gives the POSIX ERE it means:
 *   *      any run of characters          (.*)
 *   %      a run of word characters, digits, '.' and '?'
 *   ^      start anchor, wherever it appears
 *   |      alternation
 *   { }    a capture group ($1..$9 in replacements, $& = whole match)
 *   @re    the rest is a raw regex in .NET's syntax (\d, \w, \s, (?:,
 *          classes); back-references, look-arounds and patterns that
 *          could blow up are refused (docs/hardening.md, "Patterns")
 * every other character is literal.
 *
 * A pattern list is ';'-separated; entries are trimmed, empty ones skipped.
 */
#ifndef ETLKIT_PATTERN_H
#define ETLKIT_PATTERN_H

#include <regex.h>	/* regmatch_t */
#include <stddef.h>

#define PAT_MAX_CAPTURES 10	/* $& and $1..$9 */

/*
 * Patterns are untrusted (command lines, YAML pipelines): past these
 * bounds a pattern is refused (docs/hardening.md, "Patterns").
 */
#define PAT_MAX_LENGTH 4096	/* bytes of pattern text */
#define PAT_MAX_REPEAT 255	/* m and n in {m,n} */
#define PAT_MAX_DEPTH 32	/* groups inside groups */
#define PAT_MAX_GROUPS 100	/* groups in a pattern */
#define PAT_MAX_PROGRAM 2000	/* regex nodes once repetitions are expanded */
#define PAT_STR_(x) #x
#define PAT_STR(x) PAT_STR_(x)

struct pattern_inst;
struct pattern_set;

/* The compiled pattern: a program for lib/stacks/pattern.c's matcher. */
struct pattern_prog {
	struct pattern_inst *code;
	int len, cap;
	struct pattern_set *sets;	/* the character sets the program tests */
	int nsets, setcap;
	int first;		/* sets[first] holds every byte a match can start with, or -1 */
	int anchored;		/* a match can only start at the subject's start */
	int test_start;		/* where a yes/no match starts: past a leading .* */
	int test_first;		/* first, from there */
};

struct pattern {
	char *text;		/* the pattern as written */
	struct pattern_prog prog;
};

/*
 * Compiles TEXT[0..N).  Returns 0, or -1 with a message in ERR (size
 * ERRLEN) naming the pattern.
 */
int pattern_compile(struct pattern *p, const char *text, size_t n,
    char *err, size_t errlen);
void pattern_free(struct pattern *p);

/* Translates TEXT to the POSIX ERE used (caller frees); NULL if refused. */
char *pattern_to_regex(const char *text, size_t n);

/* Does P match anywhere in S?  S must be NUL-terminated. */
int pattern_match(const struct pattern *p, const char *s);

/*
 * Matches and fills M[0..PAT_MAX_CAPTURES) (rm_so = -1 when unset).
 * Returns 1 on a match.
 */
int pattern_exec(const struct pattern *p, const char *s, regmatch_t *m);

/*
 * Expands REPL with $1..$9 and $& from the match M on S into a new
 * string (caller frees).  Unset captures expand to nothing; a '$' not
 * followed by a digit or '&' is literal.
 */
char *pattern_expand(const char *repl, const char *s, const regmatch_t *m);

/* A ';'-separated list of patterns (IncPats, ExcPats, FoldPats). */
struct patlist {
	int n, cap;
	struct pattern *pat;
};

/* Appends the entries of LIST.  Returns 0 or -1 with ERR set. */
int patlist_add(struct patlist *pl, const char *list, char *err, size_t errlen);
/* Index of the first entry matching S, or -1. */
int patlist_first(const struct patlist *pl, const char *s);
void patlist_free(struct patlist *pl);

/*
 * Splits a ';'-separated list: calls FN for each trimmed non-empty entry.
 * Returns the first non-zero FN result, else 0.
 */
int pattern_split(const char *list,
    int (*fn)(void *arg, const char *s, size_t n), void *arg);

#endif

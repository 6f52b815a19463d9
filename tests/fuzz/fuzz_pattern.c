/*
 * fuzz_pattern - libFuzzer harness for PerfView-style frame patterns
 * (lib/stacks/pattern.c): translation to a POSIX regex, compiling, matching,
 * $1..$9/$& expansion and ';'-separated pattern lists.
 *
 * INPUT:  line 1 the pattern (or list), line 2 a replacement, every
 *         further line a frame name to match.
 * CHECKS: no crash/UB/leak/hang; a message for every pattern refused;
 *         capture offsets lie inside the subject; whether a pattern
 *         matches is what glibc says of the POSIX ERE it translates to
 *         (on short subjects: glibc's own DFA cache is what we bound).
 */
#include "stacks/pattern.h"

#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *
next_line(char **p, char *end)
{
	char *s = *p, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(end - s));
	if (nl == NULL)
		nl = end;
	*nl = '\0';
	*p = nl + 1;
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *p, *end, *pat, *repl, *subj, *ere;
	regex_t posix;
	int have_posix = 0;
	size_t checked = 0;
	struct pattern pt;
	struct patlist pl;
	char err[512];
	regmatch_t m[PAT_MAX_CAPTURES];
	int compiled, i;

	memcpy(buf, data, size);
	buf[size] = '\0';
	p = buf;
	end = buf + size;
	pat = next_line(&p, end);
	if (pat == NULL) {
		free(buf);
		return 0;
	}
	repl = next_line(&p, end);
	ere = pattern_to_regex(pat, strlen(pat));
	err[0] = '\0';
	compiled = pattern_compile(&pt, pat, strlen(pat), err, sizeof(err)) == 0;
	if (!compiled && err[0] == '\0')
		abort();
	if ((ere != NULL) != compiled)
		abort();	/* translated exactly when compiled */
	if (ere != NULL)
		have_posix = regcomp(&posix, ere, REG_EXTENDED | REG_ICASE | REG_NOSUB) == 0;
	free(ere);
	memset(&pl, 0, sizeof(pl));
	err[0] = '\0';
	if (patlist_add(&pl, pat, err, sizeof(err)) != 0 && err[0] == '\0')
		abort();
	while ((subj = next_line(&p, end)) != NULL) {
		size_t n = strlen(subj);

		(void)patlist_first(&pl, subj);
		if (!compiled)
			continue;
		if (pattern_match(&pt, subj) != pattern_exec(&pt, subj, m))
			abort();
		if (have_posix && n <= 256 && (checked += n) <= 4096 &&
		    pattern_match(&pt, subj) != (regexec(&posix, subj, 0, NULL, 0) == 0))
			abort();
		if (pattern_exec(&pt, subj, m) == 1) {
			for (i = 0; i < PAT_MAX_CAPTURES; i++) {
				if (m[i].rm_so == -1)
					continue;
				if (m[i].rm_so < 0 || m[i].rm_eo < m[i].rm_so || (size_t)m[i].rm_eo > n)
					abort();
			}
			if (repl != NULL)
				free(pattern_expand(repl, subj, m));
		}
	}
	if (have_posix)
		regfree(&posix);
	if (compiled)
		pattern_free(&pt);
	patlist_free(&pl);
	free(buf);
	return 0;
}

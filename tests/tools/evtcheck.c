/*
 * evtcheck - validate an evt stream or folded stacks against the exact
 * grammars (a test tool; not installed).  Lines go through the tools'
 * own readers (evt_split and the column parsers via evt_parse,
 * folded_parse), so it refuses what they refuse in their words, and
 * then checks what only a writer must get right (6 fraction digits,
 * the characters of kinds and keys, empty frames).
 *
 * USAGE:  evtcheck [-c] [--folded=flamegraph|inferno|speedscope] [FILE]
 *
 * INPUT:  evt (docs/evt-format.md), or folded stacks with --folded.
 * OUTPUT: with -c, "KIND<TAB>COUNT<TAB>WEIGHT" per kind (evt) or
 *         "lines N total W" (folded); nothing otherwise.
 *         Exit 0 when every line is valid, 1 at the first invalid line
 *         (reported as "evtcheck: FILE:LINE: why").
 *
 * Folded grammars (../shared/docs/reference-semantics.md 3.1):
 *   flamegraph  stack, whitespace, unsigned decimal (fraction allowed)
 *   inferno     same, integer count
 *   speedscope  exactly one space, then an integer count; no second column
 * All: no ';' at the ends or doubled (empty frame), no tab, no control chars.
 */
#include "base/cli.h"
#include "evt/evt.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kindstat {
	char name[64];
	unsigned long count;
	double weight;
};

static struct kindstat kinds[512];
static int nkinds;

static void
usage(void)
{
	fprintf(stderr, "usage: evtcheck [-c] [--folded=flamegraph|inferno|speedscope] [file]\n");
	exit(EXIT_FATAL);
}

static void
count_kind(const char *kind, double w)
{
	int i;

	for (i = 0; i < nkinds; i++)
		if (strcmp(kinds[i].name, kind) == 0)
			break;
	if (i == nkinds) {
		if (nkinds == 512)
			return;
		snprintf(kinds[i].name, sizeof(kinds[i].name), "%s", kind);
		nkinds++;
	}
	kinds[i].count++;
	kinds[i].weight += w;
}

static const char *
check_kind(const char *k)
{
	for (; *k; k++)
		if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') ||
		    (*k >= '0' && *k <= '9') || strchr("_./-", *k)))
			return "kind has a character outside [A-Za-z0-9_./-]";
	return NULL;
}

static const char *
check_evt(char *line, size_t len, double *w)
{
	struct evt_event ev;
	const char *why;
	size_t i;
	int a;

	for (i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 && line[i] != '\t')
			return "unescaped control character";
	if (evt_parse(line, len, &ev, &why) < 0)
		return why;
	if ((why = check_kind(ev.kind)) != NULL)
		return why;
	if (strlen(ev.time_text) < 8 || strchr(ev.time_text, '.') == NULL ||
	    strlen(strchr(ev.time_text, '.') + 1) != 6)
		return "time column must have exactly 6 fraction digits";
	for (a = 0; a < ev.nattr; a++) {
		const char *k;

		for (k = ev.attr[a].key; *k; k++)
			if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') ||
			    (*k >= '0' && *k <= '9') || strchr("_.:-", *k)))
				return "attribute key has a character outside [A-Za-z0-9_.:-]";
	}
	if (ev.stack_len > 0) {
		if (ev.stack[0] == ';' || ev.stack[ev.stack_len - 1] == ';' ||
		    strstr(ev.stack, ";;"))
			return "empty frame in stack";
	}
	count_kind(ev.kind, ev.weight);
	*w = ev.weight;
	return NULL;
}

static const char *
check_folded(char *line, size_t len, const char *mode, double *w)
{
	char *stack, *sp;
	size_t slen, i;
	double c1, c2;
	int has2;

	for (i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			return "control character or tab in a folded line";
	sp = strrchr(line, ' ');
	if (sp == NULL)
		return "no space before the count";
	if (strcmp(mode, "speedscope") == 0 || strcmp(mode, "inferno") == 0) {
		const char *d = sp + 1;

		if (*d == '\0')
			return "empty count";
		for (; *d; d++)
			if (*d < '0' || *d > '9')
				return "count is not an unsigned integer";
	}
	if (strcmp(mode, "speedscope") == 0 && sp > line && sp[-1] == ' ')
		return "more than one space before the count";
	if (folded_parse(line, len, &stack, &slen, &c1, &c2, &has2) < 0)
		return "not 'stack count'";
	if (has2 && strcmp(mode, "speedscope") == 0)
		return "two count columns (speedscope reads only one)";
	if (slen == 0 || stack[0] == ';' || stack[slen - 1] == ';' ||
	    strstr(stack, ";;"))
		return "empty frame in stack";
	*w = has2 ? c2 : c1;
	return NULL;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "folded", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *folded = NULL, *why;
	struct linereader *lr;
	unsigned long lines = 0;
	double total = 0, w;
	int ch, counts = 0, seen_header = 0, i;
	char *line;
	size_t len;

	cli_init(argv[0]);
	while ((ch = getopt_long(argc, argv, "ch", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			counts = 1;
			break;
		case 'f':
			folded = optarg;
			if (strcmp(folded, "flamegraph") && strcmp(folded, "inferno") &&
			    strcmp(folded, "speedscope"))
				usage();
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		usage();
	lr = lr_open(argc ? argv[0] : "-");
	if (lr == NULL)
		cli_fatal("%s: cannot open", argv[0]);
	while ((line = lr_next(lr, &len)) != NULL) {
		enum evt_linetype t = evt_classify(line, len);

		why = NULL;
		w = 0;
		if (folded) {
			if (t == EVT_BLANK)
				continue;
			why = check_folded(line, len, folded, &w);
		} else if (t == EVT_HEADER) {
			struct evt_header h;

			if (lr_lineno(lr) != 1)
				why = "#evt header not on the first line";
			else if (evt_parse_header(line, len, &h, &why) == 0)
				seen_header = 1;
		} else if (t == EVT_EVENT) {
			if (!seen_header)
				why = "event before the #evt header";
			else
				why = check_evt(line, len, &w);
		} else
			continue;
		if (why) {
			fprintf(stderr, "evtcheck: %s:%lu: %s\n", lr_name(lr), lr_lineno(lr), why);
			return 1;
		}
		lines++;
		total += w;
	}
	if (lr_error(lr))
		cli_fatal("%s: %s", lr_name(lr), lr_error(lr));
	if (lr_skipped(lr)) {	/* too long or NUL bytes: not valid text (the reader said where) */
		fprintf(stderr, "evtcheck: %s: %lu line(s) skipped\n", lr_name(lr), lr_skipped(lr));
		return 1;
	}
	if (!folded && !seen_header) {
		fprintf(stderr, "evtcheck: %s: no #evt header\n", lr_name(lr));
		return 1;
	}
	if (counts) {
		if (folded)
			printf("lines %lu total %.6f\n", lines, total);
		else
			for (i = 0; i < nkinds; i++)
				printf("%s\t%lu\t%.6f\n", kinds[i].name, kinds[i].count,
				    kinds[i].weight);
	}
	return 0;
}

/*
 * symlookup - resolve image RVAs to function names through lib/etl/symbols.c
 * the way etl2evt does (a test and benchmark tool).
 *
 * USAGE:  symlookup [-s SYMPATH]... [-t TRACE] [-e] [-a] [-q] [FILE]
 *   -s  symbol path (';'-separated dirs, srv*CACHE*URL ...), repeatable
 *   -t  the trace: its directory and, for a .etl.zip, its symbols\ members
 *   -e  also use $_NT_SYMBOL_PATH
 *   -a  report resolved images too
 *   -q  benchmark: no output lines; reads all lookups, then prints the CPU
 *       time lib/symbols needs to load the PDBs and to make the lookups
 *
 * INPUT:  one lookup a line: IMAGE PDBNAME GUID AGE RVA (hex), e.g.
 *   CppCon.exe CppCon.pdb 12DC0A4F-BD7D-4F2A-A9BE-263BACAEB467 5 1010
 * OUTPUT: the frame as evt writes it, "CppCon.exe!std::operator<<<...>" or
 *   "CppCon.exe!0x1010"; then the symbol report on stderr.
 * Exit: 0, or 1 when some image stayed unresolved.
 */
#include "base/cli.h"
#include "etl/etl.h"
#include "etl/symbols.h"

#include <getopt.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
	fprintf(stderr, "usage: symlookup [-s SYMPATH]... [-t TRACE] [-eaq] [FILE]\n");
	exit(EXIT_FATAL);
}

struct lookup {
	char *img, *pdb;
	uint8_t guid[16];
	uint32_t age, rva;
};

static double cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Whether Q's image was looked up before (the warm-up pass loads each once). */
static int seen_image(struct symctx *c, const struct lookup *q)
{
	size_t n = sym_image_count(c);
	(void)sym_image(c, q->img, q->pdb, q->guid, q->age);
	return sym_image_count(c) == n;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "symbols", required_argument, NULL, 's' },
		{ "trace", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct symctx *c = sym_new();
	int ch, all = 0, quiet = 0, env = 0, unresolved = 0;
	char line[4096], img[1024], pdb[1024], guid[64];
	unsigned long lineno = 0, named = 0;
	struct lookup *queue = NULL;
	size_t nq = 0, capq = 0;
	FILE *in = stdin;
	size_t i;

	cli_init("symlookup");
	while ((ch = getopt_long(argc, argv, "s:t:eaqh", longopts, NULL)) != -1) {
		switch (ch) {
		case 's': sym_add_path(c, optarg); break;
		case 't': sym_add_trace(c, optarg); break;
		case 'e': env = 1; break;
		case 'a': all = 1; break;
		case 'q': quiet = 1; break;
		case 'V': cli_version(); break;
		default: usage();
		}
	}
	if (env)
		sym_add_env(c);
	if (optind < argc && !(in = fopen(argv[optind], "r")))
		cli_fatal("%s: cannot open", argv[optind]);
	while (fgets(line, sizeof line, in)) {
		unsigned long age, rva;
		uint8_t g[16];
		const char *name;
		lineno++;
		if (sscanf(line, "%1023s %1023s %63s %lu %lx", img, pdb, guid, &age,
		    &rva) != 5 || etl_guid_parse(guid, g) < 0) {
			cli_warn("line %lu: expected IMAGE PDB GUID AGE RVA", lineno);
			continue;
		}
		if (quiet) {	/* benchmark: collect, look up after reading */
			struct lookup *q;
			if (nq == capq) {
				capq = capq ? 2 * capq : 4096;
				queue = xrealloc(queue, capq * sizeof *queue);
			}
			q = &queue[nq++];
			q->img = xstrdup(img);
			q->pdb = xstrdup(pdb);
			memcpy(q->guid, g, 16);
			q->age = (uint32_t)age;
			q->rva = (uint32_t)rva;
			continue;
		}
		name = sym_lookup(sym_image(c, img, pdb, g, (uint32_t)age),
		    (uint32_t)rva, NULL);
		if (name)
			printf("%s!%s\n", img, name);
		else
			printf("%s!0x%lx\n", img, rva);
	}
	fflush(stdout);
	if (quiet) {
		/*
		 * Two timed passes (process CPU time, one clock read per pass):
		 * the first lookup of each image finds, maps and parses its
		 * PDB; then every lookup, as etl2evt would make them.
		 */
		double t0 = cpu_seconds(), t1, t2;
		for (i = 0; i < nq; i++)
			if (!seen_image(c, &queue[i]))
				(void)sym_lookup(sym_image(c, queue[i].img,
				    queue[i].pdb, queue[i].guid, queue[i].age),
				    queue[i].rva, NULL);
		t1 = cpu_seconds();
		for (i = 0; i < nq; i++)
			named += sym_lookup(sym_image(c, queue[i].img,
			    queue[i].pdb, queue[i].guid, queue[i].age),
			    queue[i].rva, NULL) != NULL;
		t2 = cpu_seconds();
		fprintf(stderr, "symlookup: %zu lookups (%lu named) in %zu images: "
		    "%.3f s CPU finding and loading the PDBs, then %.3f s CPU "
		    "for the lookups (%.0f ns each)\n", nq, named,
		    sym_image_count(c), t1 - t0, t2 - t1,
		    nq ? (t2 - t1) * 1e9 / (double)nq : 0.0);
		for (i = 0; i < nq; i++) {
			free(queue[i].img);
			free(queue[i].pdb);
		}
		free(queue);
	}
	sym_report(c, stderr, "symlookup", all);
	for (i = 0; i < sym_image_count(c); i++) {
		struct sym_image_info info;
		sym_image_info(c, i, &info);
		if (info.status != SYM_OK)
			unresolved = 1;
	}
	sym_free(c);
	return unresolved ? EXIT_PARTIAL : 0;
}

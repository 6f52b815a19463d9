/*
 * etlkit - the front command: runs one etlkit tool, git-style.
 *
 * USAGE:  etlkit TOOL [ARG...]
 *         etlkit --help | --version | --exec-path
 *
 * INPUT:  whatever TOOL reads; the arguments go to it unchanged:
 *           etlkit etl2evt trace.etl | etlkit stackfold | etlkit render flame >cpu.svg
 *
 * OUTPUT: TOOL's.  etlkit replaces itself with TOOL (execv), so TOOL's exit
 *         status is etlkit's.
 *
 * Why: the tools' short names (diff, render, ...) would shadow system
 * commands if installed in PREFIX/bin, so they live in
 * PREFIX/libexec/etlkit/ (lib/base/exec_path.h) and are reached as `etlkit diff`
 * or through the links PREFIX/bin/etlkit-diff.  Only the names in TOOLS
 * below are run: an argument never becomes a path.
 *
 * Exit status: TOOL's; 2 for an unknown tool or one that cannot be run.
 */
#define _POSIX_C_SOURCE 200809L	/* setenv */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/exec_path.h"

static const struct tool {
	const char *name;	/* as typed after "etlkit" */
	const char *file;	/* in the exec path */
	const char *does;
} TOOLS[] = {
	{ "etl2evt", "etl2evt", "decode .etl, .etl.zip and .diagsession into evt" },
	{ "evtfilter", "evtfilter", "select events: process, thread, CPU, kind, time, frames" },
	{ "stackfold", "stackfold", "PerfView grouping and folding: evt or folded to folded" },
	{ "aggregate", "aggregate", "sum folded stacks of many scenarios (SaveScenario)" },
	{ "diff", "diff", "compare two sets of stacks: base vs test" },
	{ "overweight", "overweight", "PerfView's overweight report of a regression" },
	{ "render", "render", "flame graphs, trees, tables, speedscope, DPC/ISR reports" },
	{ "run", "etlkit-run", "run a YAML pipeline over many traces (nightly jobs)" },
};
#define NTOOLS (sizeof(TOOLS) / sizeof(TOOLS[0]))

static void
usage_to(FILE *fp)
{
	fprintf(fp, "usage: etlkit TOOL [ARG...] | --help | --version | --exec-path\n");
}

static void
help(void)
{
	size_t i;

	usage_to(stdout);
	printf("Runs one etlkit tool; 'etlkit TOOL --help' for its options, man etlkit-TOOL.\n"
	    "The tools are also installed as etlkit-TOOL (etlkit-run for run).\n\n");
	for (i = 0; i < NTOOLS; i++)
		printf("  %-11s %s\n", TOOLS[i].name, TOOLS[i].does);
	printf("\n  --exec-path  print the directory the tools are run from\n"
	    "\nEnvironment: ETLKIT_EXEC_PATH overrides that directory.\n"
	    "Exit status: the tool's; 2 when it cannot be run.\n");
	exit(0);
}

static const struct tool *
lookup(const char *name)
{
	size_t i;

	for (i = 0; i < NTOOLS; i++)
		if (strcmp(TOOLS[i].name, name) == 0 || strcmp(TOOLS[i].file, name) == 0)
			return &TOOLS[i];
	return NULL;
}

/* The tool's own messages say "etlkit-diff: ...", as when run directly. */
static char *
display_name(const struct tool *t)
{
	size_t n = strlen("etlkit-") + strlen(t->file) + 1;
	char *s = xmalloc(n);

	if (strncmp(t->file, "etlkit-", 7) == 0)
		snprintf(s, n, "%s", t->file);
	else
		snprintf(s, n, "etlkit-%s", t->file);
	return s;
}

int
main(int argc, char **argv)
{
	const struct tool *t;
	char *self_dir, *path;

	cli_init(argv[0]);
	if (argc < 2) {
		usage_to(stderr);
		return EXIT_FATAL;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		help();
	if (strcmp(argv[1], "--version") == 0)
		cli_version();
	self_dir = exec_path_self_dir(argv[0]);
	if (strcmp(argv[1], "--exec-path") == 0) {
		path = exec_path_find(self_dir, "etl2evt");
		if (path == NULL)
			cli_fatal("the tools are not where they should be (beside %s, "
			    "or ../libexec/etlkit)", self_dir ? self_dir : "this program");
		*strrchr(path, '/') = '\0';
		printf("%s\n", path);
		return 0;
	}
	if ((t = lookup(argv[1])) == NULL)
		cli_usage_error("'%s' is not an etlkit tool (etlkit --help lists them)", argv[1]);
	if ((path = exec_path_find(self_dir, t->file)) == NULL)
		cli_fatal("%s: not installed beside etlkit (etlkit --exec-path)", t->file);
	argv[1] = display_name(t);
	/* etlkit-run runs more tools: from the same directory, whatever argv[0] says */
	*strrchr(path, '/') = '\0';
	setenv("ETLKIT_EXEC_PATH", path, 1);
	path[strlen(path)] = '/';
	execv(path, argv + 1);
	cli_fatal("%s: %s", path, strerror(errno));
}

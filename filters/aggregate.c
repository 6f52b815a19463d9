/*
 * aggregate - many scenarios into one view (PerfView's scenario sets).
 *
 * USAGE:  aggregate [-S] [-m sum|mean] [-p GLOB] [-n NAME] [-b FILE] [-o FILE] FILE...
 *         aggregate -l LIST           (LIST: "NAME<TAB>FILE" lines)
 *         aggregate -M PARTIAL...     (merge partial aggregates)
 *
 * INPUT:  evt streams or folded stacks, plain or gzip, one scenario per
 *         file.  The scenario's name comes from the file name: --match is
 *         a glob over the base name whose '*' runs are $1..$9 in --name
 *         (default "$1"; without --match, $1 is the base name without
 *         ".etl.zip", ".evt.gz", ".folded"... suffixes).  From evt, the
 *         stacks are made exactly as stackfold(1) makes them (lib/stacks:
 *         kinds, units, grouping and folding options are stackfold's), with
 *         the process name as root frame by default (--roots=comm):
 *             0.104200 Sample 0 Backup.exe 2212 4100 1 ip=0x1 ntdll.dll!A;Backup.exe!0x1c3d4
 *         becomes  Backup.exe;ntdll.dll!A;Backup.exe!0x1c3d4 1000
 *
 * OUTPUT: folded stacks with the scenario as a pseudo-frame above the
 *         process, sorted by scenario then stack:
 *             nightly-17;Backup.exe;ntdll.dll!A;Backup.exe!0x1c3d4 12000
 *         (-S: without it, summed over the scenarios).  -b writes the
 *         by-name table with the per-scenario breakdown and PerfView's
 *         Which histogram.  Totals are exact: weights are summed as
 *         integers in millionths, so sum-mode output adds up to the
 *         input to the last digit, and merging partial aggregates (-M)
 *         gives the same result as one run over all inputs.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/atomicfile.h"
#include "base/cli.h"
#include "evt/evt.h"
#include "report/scenagg.h"
#include "report/views.h"
#include "stacks/stacks.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: aggregate [-SMi] [-m sum|mean] [-p glob] [-n name] [-l list] "
	    "[-k kinds] [-b file] [-o file] [stackfold options] file...\n");
}

static void
help(void)
{
	usage(stdout);
	fputs("Sums many scenarios' stacks into one folded view (PerfView scenario sets).\n"
	    "  -n, --name PATTERN       scenario name; $1..$9 = '*' of --match, $0 = base name [$1]\n"
	    "  -p, --match GLOB         glob over each file's base name (a '/' in it: the whole path)\n"
	    "  -l, --list FILE          scenarios from FILE: one \"NAME<TAB>PATH\" per line\n"
	    "  -S, --no-scenario-frame  no scenario pseudo-frame: sum the scenarios\n"
	    "  -m, --mode sum|mean      sum (default) or mean over the scenarios\n"
	    "  -i, --integer            round to integers, keeping the rounded total exact\n"
	    "  -M, --merge              inputs are partial aggregates (scenario frame first)\n"
	    "  -k, --kind LIST          evt kinds that count: Sample (default), dpc, isr, all...\n"
	    "  -u, --unit us|ms|samples unit of evt weights in the output [samples for Sample\n"
	    "                           only, else us, as stackfold]\n"
	    "      --keep-idle          keep the Idle process's samples (removed, and said, as stackfold)\n"
	    "      --pid                process frame \"name-pid\" (same as --roots=pid)\n"
	    "  stackfold's options shape the stacks of every input (Fold% per file):\n  "
	    STK_OPTIONS_HELP "\n"
	    "  -b, --by-name FILE       write the by-name table (TSV) with Which histogram\n"
	    "  -o, --output FILE        write the folded stacks to FILE (atomically) [stdout]\n"
	    "  -h, --help, --version\n"
	    "Exit: 0 ok, 1 some input unreadable or malformed (skipped, counted),\n"
	    "      2 fatal (no input readable at all, output not writable, usage).\n",
	    stdout);
	exit(0);
}

struct input {
	char *name;		/* scenario, or NULL: from the header or the pattern */
	char *path;
};

static struct input *inputs;
static size_t ninputs, capinputs;

static void
add_input(const char *name, const char *path)
{
	if (ninputs == capinputs) {
		capinputs = capinputs ? 2 * capinputs : 64;
		inputs = xrealloc(inputs, capinputs * sizeof(*inputs));
	}
	inputs[ninputs].name = name ? xstrdup(name) : NULL;
	inputs[ninputs].path = xstrdup(path);
	ninputs++;
}

/* Reads "NAME<TAB>PATH" lines; returns the number of malformed lines. */
static int
read_list(const char *file)
{
	struct linereader *lr = lr_open(file);
	char *line;
	size_t len;
	int bad = 0;

	if (lr == NULL)
		cli_fatal("%s: %s", file, strerror(errno));
	while ((line = lr_next(lr, &len)) != NULL) {
		char *tab;

		if (len == 0 || line[0] == '#')
			continue;
		tab = strchr(line, '\t');
		if (tab == NULL || tab == line || tab[1] == '\0') {
			cli_warn("%s:%lu: expected \"NAME<TAB>PATH\"", file, lr_lineno(lr));
			bad++;
			continue;
		}
		*tab = '\0';
		add_input(line, tab + 1);
	}
	bad += (int)lr_skipped(lr);	/* too long, NUL bytes: reported by the reader */
	if (lr_error(lr))
		cli_fatal("%s: %s", file, lr_error(lr));
	lr_close(lr);
	return bad;
}

/* Copies standard input into a temporary file; returns its name. */
static char *
spool_stdin(void)
{
	const char *dir = getenv("TMPDIR");
	char *path, buf[1 << 16];
	ssize_t r;
	int fd;

	path = xmalloc(strlen(dir ? dir : "/tmp") + 32);
	sprintf(path, "%s/aggregate.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		cli_fatal("%s: %s", path, strerror(errno));
	while ((r = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || write(fd, buf, (size_t)r) != r) {
			unlink(path);
			cli_fatal("<stdin>: %s", strerror(errno));
		}
	}
	close(fd);
	return path;
}

/*
 * Whether PATH can be read, checked before it becomes a scenario: an
 * unreadable file is skipped, not aggregated as a scenario of no weight
 * (which would count one more file in --mode mean).  errno tells why not.
 */
static int
input_readable(const char *path)
{
	struct stat sb;
	int fd, ok;

	if ((fd = open(path, O_RDONLY)) < 0)
		return 0;
	ok = fstat(fd, &sb) == 0;
	if (ok && S_ISDIR(sb.st_mode)) {
		errno = EISDIR;
		ok = 0;
	}
	close(fd);
	return ok;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "match", required_argument, NULL, 'p' },
		{ "list", required_argument, NULL, 'l' },
		{ "no-scenario-frame", no_argument, NULL, 'S' },
		{ "mode", required_argument, NULL, 'm' },
		{ "integer", no_argument, NULL, 'i' },
		{ "merge", no_argument, NULL, 'M' },
		{ "kinds", required_argument, NULL, 'k' },
		{ "pid", no_argument, NULL, 'P' },
		STK_LONGOPTS,
		{ "by-name", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *name_pat = NULL, *match = NULL, *byname = NULL, *output = NULL;
	struct scenagg_out_opts oo = { 1, 0, 0 };
	struct stk_config cfg;
	int roots_set = 0, shaping;
	char *spool = NULL;
	struct scenagg *sa;
	struct atomicfile out, bn;
	int merge = 0, status = 0, ch;
	size_t i, unreadable = 0;
	int64_t idle_events = 0, idle_weight = 0, read_weight = 0;

	cli_init(argv[0]);
	stk_config_init(&cfg);
	while ((ch = getopt_long(argc, argv, "n:p:l:Sm:iMk:u:b:o:hV", longopts, NULL)) != -1) {
		if (ch == STK_OPT_ROOTS)
			roots_set = 1;
		if (ch == 'k')
			ch = STK_OPT_KIND;
		if (ch == 'u')
			ch = STK_OPT_UNIT;
		if (stk_option(&cfg, ch, optarg))
			continue;
		switch (ch) {
		case 'n':
			name_pat = optarg;
			break;
		case 'p':
			match = optarg;
			break;
		case 'l':
			if (read_list(optarg) > 0)
				status = EXIT_PARTIAL;
			break;
		case 'S':
			oo.scenario_frame = 0;
			break;
		case 'm':
			if (strcmp(optarg, "sum") == 0)
				oo.mean = 0;
			else if (strcmp(optarg, "mean") == 0)
				oo.mean = 1;
			else
				cli_usage_error("--mode: 'sum' or 'mean', not '%s'", optarg);
			break;
		case 'i':
			oo.integer = 1;
			break;
		case 'M':
			merge = 1;
			break;
		case 'P':
			cfg.roots = STK_ROOTS_PID;
			roots_set = 1;
			break;
		case 'b':
			byname = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			help();
			break;
		case 'V':
			cli_version();
			break;
		default:
			usage(stderr);
			exit(EXIT_FATAL);
		}
	}
	for (i = (size_t)optind; i < (size_t)argc; i++)
		add_input(NULL, argv[i]);
	if (ninputs == 0)
		cli_usage_error("no input files (give files, or --list)");
	if (merge && (name_pat || match))
		cli_usage_error("--merge takes scenario names from the partial aggregates; no --name/--match");
	shaping = cfg.group || cfg.fold || cfg.include || cfg.exclude || cfg.fold_pct > 0;
	if (merge && shaping)
		cli_usage_error("--merge sums partial aggregates as they are; group and fold before");
	if (!roots_set)
		cfg.roots = STK_ROOTS_COMM;	/* the scenario frame sits above the process */
	cfg.no_scenario = 1;		/* the header's scenario= is the scenario, not one more frame */
	for (i = 0; i < ninputs; i++)
		if (strcmp(inputs[i].path, "-") == 0) {
			/* stdin is read twice (evt or folded?), so it is kept in a file first */
			if (spool == NULL)
				spool = spool_stdin();
			free(inputs[i].path);
			inputs[i].path = xstrdup(spool);
			if (inputs[i].name == NULL && !merge) {
				inputs[i].name = scenagg_name_from_path("stdin", match, name_pat);
				if (inputs[i].name == NULL)
					inputs[i].name = xstrdup("stdin");
			}
		}

	sa = scenagg_new();
	for (i = 0; i < ninputs; i++) {
		struct scenagg_file_stats st;
		char *scen = NULL;
		int id = SCENAGG_MERGE, evt;

		if (!input_readable(inputs[i].path)) {
			cli_warn("%s: %s; skipped", inputs[i].path, strerror(errno));
			unreadable++;
			status = EXIT_PARTIAL;
			continue;
		}
		if (!merge) {
			if (inputs[i].name)
				scen = xstrdup(inputs[i].name);
			else if (name_pat == NULL && match == NULL)
				scen = scenagg_header_scenario(inputs[i].path);
			if (scen == NULL) {
				scen = scenagg_name_from_path(inputs[i].path, match, name_pat);
				if (scen == NULL) {
					cli_warn("%s: file name does not match --match '%s'; skipped",
					    inputs[i].path, match);
					status = EXIT_PARTIAL;
					continue;
				}
			}
			id = scenagg_scenario(sa, scen);
			scenagg_count_file(sa, id);
		}
		evt = merge ? 0 : scenagg_is_evt(inputs[i].path);
		if (evt < 0 || (evt || shaping ?
		    scenagg_read_stacks(sa, id, inputs[i].path, &cfg, &st) :
		    scenagg_read(sa, id, inputs[i].path, &st)) < 0) {
			cli_warn("%s: %s; skipped", inputs[i].path, strerror(errno));
			status = EXIT_PARTIAL;
		} else {
			idle_events += st.idle_events;	/* one line for all inputs, below */
			idle_weight += st.idle_weight;
			read_weight += st.read_weight;
			if (st.skipped > 0)
				cli_warn("%s: %lu malformed line%s skipped", inputs[i].path,
				    st.skipped, st.skipped == 1 ? "" : "s");
			if (st.skipped > 0 || st.error)
				status = EXIT_PARTIAL;
		}
		free(scen);
	}
	if (merge) {
		/* a merged scenario counts the partials it came from */
		for (ch = 0; ch < scenagg_nscenarios(sa); ch++)
			scenagg_count_file(sa, ch);
	}
	view_idle_note(NULL, idle_events, (double)idle_weight / 1e6, (double)read_weight / 1e6,
	    stk_unit_text(stk_config_unit(&cfg)));
	/* nothing could be read: a fatal error, not an empty aggregate */
	if (unreadable == ninputs)
		exit(EXIT_FATAL);

	atomicfile_open(&out, output);
	scenagg_write_folded(sa, &out.ob, &oo);
	atomicfile_commit(&out);
	if (byname) {
		atomicfile_open(&bn, byname);
		scenagg_write_byname(sa, &bn.ob, &oo);
		atomicfile_commit(&bn);
	}
	scenagg_free(sa);
	if (spool) {
		unlink(spool);
		free(spool);
	}
	stk_config_free(&cfg);
	for (i = 0; i < ninputs; i++) {
		free(inputs[i].name);
		free(inputs[i].path);
	}
	free(inputs);
	return status;
}

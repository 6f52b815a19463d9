/*
 * etlgen - write a synthetic .etl from a scenario (what no public trace has:
 * DPC, ThreadedDPC, TimerDPC, ISR, CSwitch, ReadyThread, compact headers,
 * 32-bit kernels, lost events).
 *
 * USAGE:  etlgen [-o OUT.etl] [--expect FILE] [--pointer-size 4|8]
 *                [--compress|--lznt1|--no-compress] [--stacks full|keys|split]
 *                [--key-cache N] [--seed N] SCENARIO.yaml
 *         etlgen --truth FILE [options] SCENARIO.yaml   (with a timeline:)
 *         etlgen --emit-c DIR SCENARIO.yaml
 *         (the independent check of the files written is tests/tools/etlwalk.c)
 *
 * INPUT:  a YAML scenario (docs/scenario-format.md): machine, processes with
 *         threads and images, routines, stacks, explicit events and
 *         generators ("163000 DPCs of ndis.sys on CPUs 0,2,4,6").
 *
 * OUTPUT: an .etl in the kernel logger's layout (tests/tools/lib/etlwrite.c), and with
 *         --expect the evt lines etl2evt must decode from it, e.g.
 *   0.200000	DPC	2	*	*	*	0.2205	routine=ndis.sys!0x1a2b0	module=ndis.sys	duration_us=220.500	end_ms=0.420500	*
 *         "*" = a column the scenario does not decide (compared as "any").
 *         With --truth, the thread-time intervals of the scenario's timeline
 *         (Running/Ready/Waiting, docs/scenario-format.md), one TSV line each:
 *   6104	6100	app.exe	Waiting	2.000000	4.000000	2000.000	0	-	-	UserRequest	user	Waiting	9	4.000000	6108	6100	app.exe	0	thread	-	app.exe!0x1a40;...;BLOCKED_TIME	...
 *
 * The work is in tests/tools/lib: scenario.c reads the YAML into the
 * model, generate.c adds the generated events, scenwrite.c writes the
 * .etl and the expected evt; this file parses the options and calls them.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "generate.h"
#include "scenario.h"
#include "scenwrite.h"
#include "timeline.h"

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: etlgen [-o OUT.etl] [--expect FILE] [--pointer-size 4|8] [--compress|--lznt1|--no-compress] [--stacks full|split|keys] [--key-cache N] [--user-delay MS] [--seed N] [--symbols MAP] [--repeat N] [--truth FILE] SCENARIO.yaml | --emit-c DIR SCENARIO.yaml\n"
	    "  -o FILE            the trace (default out.etl)\n"
	    "  --expect FILE      also the evt lines etl2evt must decode from it (\"*\" = any)\n"
	    "  --truth FILE       also the thread-time intervals of the scenario's timeline: (TSV)\n"
	    "  --pointer-size N   4 or 8 (overrides machine: pointer_size)\n"
	    "  --compress, --lznt1, --no-compress   XPRESS, LZNT1 or no buffer compression\n"
	    "  --stacks MODE      full, split or keys: how stacks are recorded\n"
	    "  --key-cache N      keys: a stack key cache of N entries (KeyDelete on eviction)\n"
	    "  --user-delay MS    split/keys: the user part of a kernel stack comes MS later\n"
	    "  --seed N           the generators' random seed\n"
	    "  --symbols MAP      name routines from build-symbols.sh's map\n"
	    "  --repeat N         the trace body N times (benchmarks; not with --expect/--truth)\n"
	    "  --emit-c DIR       write stand-in C sources for the named routines and exit\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"expect", required_argument, NULL, 'e'},
		{"pointer-size", required_argument, NULL, 'p'},
		{"compress", no_argument, NULL, 'z'},
		{"no-compress", no_argument, NULL, 'Z'},
		{"lznt1", no_argument, NULL, 'L'},
		{"stacks", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'},
		{"key-cache", required_argument, NULL, 'K'},
		{"repeat", required_argument, NULL, 'R'},
		{"user-delay", required_argument, NULL, 'D'},
		{"symbols", required_argument, NULL, 'y'},
		{"emit-c", required_argument, NULL, 'c'},
		{"truth", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *out = "out.etl", *expect = NULL, *symbols = NULL, *emit_c = NULL, *truth = NULL;
	int c;
	uint64_t bytes;

	cli_init(argv[0]);
	scen.compress = -1;
	scen.stack_mode = -1;
	scen.key_cache = -1;
	scen.repeat = 1;
	scen.user_delay_ms = -1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'e': expect = optarg; break;
		case 'p':
			scen.psize = (int)cli_integer("--pointer-size", optarg);
			if (scen.psize != 4 && scen.psize != 8)
				cli_usage_error("--pointer-size is 4 or 8");
			break;
		case 'z': scen.compress = 1; break;
		case 'Z': scen.compress = 0; break;
		case 'L': scen.compress = 2; break;
		case 'D':
			scen.user_delay_ms = strtod(optarg, NULL);
			if (!(scen.user_delay_ms >= 0 && scen.user_delay_ms <= 60000))
				cli_usage_error("--user-delay is 0 to 60000 ms");
			break;
		case 's':
			scen.stack_mode = !strcmp(optarg, "full") ? 0 : !strcmp(optarg, "keys") ? 1 :
			    !strcmp(optarg, "split") ? 2 : -1;
			if (scen.stack_mode < 0)
				cli_usage_error("--stacks is full, split or keys");
			break;
		case 'S': scen.seed = (uint64_t)cli_integer("--seed", optarg); break;
		case 'K': scen.key_cache = (int)cli_integer("--key-cache", optarg); break;
		case 'R':
			scen.repeat = cli_integer("--repeat", optarg);
			if (scen.repeat < 1 || scen.repeat > 100000)
				cli_usage_error("--repeat is 1..100000");
			break;
		case 'y': symbols = optarg; break;
		case 'c': emit_c = optarg; break;
		case 't': truth = optarg; break;
		case 'h': usage(0); break;
		case 'V': cli_version(); break;
		default: usage(2);
		}
	}
	if (optind != argc - 1)
		usage(2);
	if (scen.repeat > 1 && (expect || truth))
		cli_usage_error("--expect and --truth describe one period; they cannot be used with --repeat");

	scen_load(argv[optind], symbols);
	if (emit_c) {
		scen_emit_sources(emit_c);
		return 0;
	}
	scen_parse_events();
	generate_events();
	if (truth && !scen_section("timeline"))
		cli_usage_error("--truth: %s has no timeline:", argv[optind]);
	bytes = scenwrite_trace(out, expect);
	if (truth)
		timeline_truth(truth);
	fprintf(stderr, "%s: %s: %llu events, %llu bytes\n", cli_progname(), out,
	    (unsigned long long)scen.nev, (unsigned long long)bytes);
	scen_free();
	return 0;
}

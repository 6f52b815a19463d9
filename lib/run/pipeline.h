/*
 * pipeline.h - the YAML pipelines of etlkit-run (docs/pipelines.md).
 *
 * pipeline_load() reads and validates a pipeline file completely: unknown keys,
 * wrong types, missing required keys and references to undefined
 * products are all reported as "FILE:LINE: message" before anything runs.
 * Values from the file are only ever used as single argv elements or
 * paths, never given to a shell.
 */
#ifndef ETLKIT_PIPELINE_H
#define ETLKIT_PIPELINE_H

#define PIPELINE_VERSION 1
/* Lists and mappings nest at most this deep (a pipeline needs 4). */
#define PIPELINE_MAX_DEPTH 64

/* The per-trace tools, in pipe order. */
enum pipeline_tool { PIPELINE_ETL2EVT, PIPELINE_EVTFILTER, PIPELINE_STACKFOLD, PIPELINE_NTOOLS };

struct pipeline_strings {
	char **v;
	int n;
};

struct pipeline_scenario {
	struct pipeline_strings files;	/* globs, absolute after loading */
	struct pipeline_strings exclude;	/* globs over the path, absolute */
	char *name;			/* name pattern, "$1" by default */
	char *process;			/* NULL or "*" = all, "auto" = PerfView's heuristic (evtfilter) */
	int has_start, has_end;
	double start_ms, end_ms;
	int line;
};

struct pipeline_product {
	char *name;
	int has_step[PIPELINE_NTOOLS];
	struct pipeline_strings args[PIPELINE_NTOOLS];
	int scenario_process;		/* apply the scenario's process (default yes) */
	int line;
};

enum pipeline_output_type {
	PIPELINE_OUT_FOLDED, PIPELINE_OUT_BYNAME, PIPELINE_OUT_FLAMEGRAPH, PIPELINE_OUT_DPC_REPORT,
	PIPELINE_OUT_DIFF, PIPELINE_OUT_OVERWEIGHT, PIPELINE_OUT_NTYPES
};

struct pipeline_output {
	enum pipeline_output_type type;
	char *path;			/* absolute; may contain {scenario} (per-scenario outputs) */
	char *from;			/* product name */
	int product;			/* index into products */
	int scenario_frame;
	int mean;
	int integer;
	char *baseline;			/* diff/overweight: absolute path */
	struct pipeline_strings args;		/* extra options for render/diff/overweight */
	int line;
};

struct pipeline {
	char *file;			/* as given */
	char *dir;			/* absolute directory of the file */
	char *cache;			/* absolute */
	char *outdir;			/* absolute */
	int jobs;			/* 0 = number of CPUs */
	int verify;			/* hash every trace even when size and mtime agree */
	double timeout_s;		/* per trace, 0 = none */
	struct pipeline_scenario *scen;
	int nscen;
	struct pipeline_product *prod;
	int nprod;
	struct pipeline_output *out;
	int nout;
};


/*
 * Loads PATH.  On errors, prints each as "PROG: PATH:LINE: message" on
 * stderr and returns NULL.
 */
struct pipeline *pipeline_load(const char *path);
void pipeline_free(struct pipeline *pl);

/* Index of the product called NAME, or -1. */
int pipeline_product_index(const struct pipeline *pl, const char *name);

/*
 * A step or output argument A with "{dir}" replaced by the pipeline's
 * directory, so a path next to the pipeline works from any working
 * directory.  Nothing else is interpreted.  malloc'ed.
 */
char *pipeline_expand_arg(const struct pipeline *pl, const char *a);

#endif

/*
 * pipeline.h - the YAML pipelines of etlkit-run (docs/pipelines.md).
 *
 * pl_load() reads and validates a pipeline file completely: unknown keys,
 * wrong types, missing required keys and references to undefined
 * products are all reported as "FILE:LINE: message" before anything runs.
 * Values from the file are only ever used as single argv elements or
 * paths, never given to a shell.
 */
#ifndef ETLKIT_PIPELINE_H
#define ETLKIT_PIPELINE_H

#define PL_VERSION 1
/* Lists and mappings nest at most this deep (a pipeline needs 4). */
#define PL_MAX_DEPTH 64

/* The per-trace tools, in pipe order. */
enum pl_tool { PL_ETL2EVT, PL_EVTFILTER, PL_STACKFOLD, PL_NTOOLS };

struct pl_strings {
	char **v;
	int n;
};

struct pl_scenario {
	struct pl_strings files;	/* globs, absolute after loading */
	struct pl_strings exclude;	/* globs over the path, absolute */
	char *name;			/* name pattern, "$1" by default */
	char *process;			/* NULL or "*" = all, "auto" = PerfView's heuristic (evtfilter) */
	int has_start, has_end;
	double start_ms, end_ms;
	int line;
};

struct pl_product {
	char *name;
	int has_step[PL_NTOOLS];
	struct pl_strings args[PL_NTOOLS];
	int scenario_process;		/* apply the scenario's process (default yes) */
	int line;
};

enum pl_output_type {
	PL_OUT_FOLDED, PL_OUT_BYNAME, PL_OUT_FLAMEGRAPH, PL_OUT_DPC_REPORT,
	PL_OUT_DIFF, PL_OUT_OVERWEIGHT, PL_OUT_NTYPES
};

struct pl_output {
	enum pl_output_type type;
	char *path;			/* absolute; may contain {scenario} (per-scenario outputs) */
	char *from;			/* product name */
	int product;			/* index into products */
	int scenario_frame;
	int mean;
	int integer;
	char *baseline;			/* diff/overweight: absolute path */
	struct pl_strings args;		/* extra options for render/diff/overweight */
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
	struct pl_scenario *scen;
	int nscen;
	struct pl_product *prod;
	int nprod;
	struct pl_output *out;
	int nout;
};

extern const char *const pl_tool_names[PL_NTOOLS];
extern const char *const pl_output_names[PL_OUT_NTYPES];

/*
 * Loads PATH.  On errors, prints each as "PROG: PATH:LINE: message" on
 * stderr and returns NULL.
 */
struct pipeline *pl_load(const char *path);
void pl_free(struct pipeline *pl);

/* Index of the product called NAME, or -1. */
int pl_product_index(const struct pipeline *pl, const char *name);

#endif

/*
 * fuzz_pipeline - libFuzzer harness for the YAML pipeline loader of
 * etlkit-run (lib/run/pipeline.c, on libyaml).
 *
 * INPUT:  a pipeline file (any bytes), written to a private scratch file
 *         because pipeline_load() takes a path and resolves relative paths
 *         against the file's directory.
 * CHECKS: no crash/UB/leak/hang; a loaded pipeline is consistent: every
 *         output names a product that exists, counts are non-negative,
 *         every string is there.  (Errors go to stderr as FILE:LINE.)
 */
#include "run/pipeline.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[256];

static void
check_strings(const struct pipeline_strings *s)
{
	int i;

	if (s->n < 0)
		abort();
	for (i = 0; i < s->n; i++)
		(void)strlen(s->v[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pipeline *pl;
	FILE *fp;
	int i, t;

	if (path[0] == '\0') {
		char dir[] = "/tmp/fuzz_pipeline.XXXXXX";

		if (mkdtemp(dir) == NULL)
			abort();
		snprintf(path, sizeof(path), "%s/p.yaml", dir);
	}
	fp = fopen(path, "wb");
	if (fp == NULL || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
		abort();
	pl = pipeline_load(path);
	if (pl == NULL)
		return 0;
	if (pl->nscen < 0 || pl->nprod < 0 || pl->nout < 0 || pl->jobs < 0)
		abort();
	for (i = 0; i < pl->nscen; i++) {
		check_strings(&pl->scen[i].files);
		check_strings(&pl->scen[i].exclude);
	}
	for (i = 0; i < pl->nprod; i++) {
		(void)strlen(pl->prod[i].name);
		if (pipeline_product_index(pl, pl->prod[i].name) < 0)
			abort();
		for (t = 0; t < PIPELINE_NTOOLS; t++)
			check_strings(&pl->prod[i].args[t]);
	}
	for (i = 0; i < pl->nout; i++) {
		const struct pipeline_output *o = &pl->out[i];

		if (o->type < 0 || o->type >= PIPELINE_OUT_NTYPES || o->path == NULL)
			abort();
		if (o->product < 0 || o->product >= pl->nprod)
			abort();	/* validated: refers to a defined product */
		check_strings(&o->args);
	}
	pipeline_free(pl);
	return 0;
}

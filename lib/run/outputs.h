/*
 * outputs.h - what etlkit-run writes from the cache: the pipeline's
 * outputs (aggregated folded stacks, by-name tables, and what render,
 * diff and overweight make of them, per scenario or over all), the run
 * report OUTDIR/run-report.tsv, and the folded result of one job for
 * --run-job --emit.  Every file is written whole or not at all
 * (atomicfile.h).
 */
#ifndef ETLKIT_OUTPUTS_H
#define ETLKIT_OUTPUTS_H

#include "run/jobs.h"

/*
 * Reports (FILE:LINE: message) every file two "{scenario}" outputs, or
 * a "{scenario}" output and another, would both write.  Returns how many.
 */
int outputs_collisions(const struct run *r);

/*
 * Writes every output of the pipeline into its outdir from the usable
 * jobs (a job whose cached result is unusable becomes partial).
 * Returns 0, or -1 when an output was not written (reported).
 */
int outputs_write(struct run *r);

/* Writes OUTDIR/run-report.tsv: one row per job. */
void outputs_write_report(const struct run *r);

/*
 * Prints job J's result as folded stacks with the scenario frame (a
 * mapper's output), each line "STEP<TAB>" first when TAGGED (folded
 * lines hold no tab); 0 or 1 (unusable).
 */
int outputs_emit_job(const struct run *r, const struct job *j, int tagged);

#endif

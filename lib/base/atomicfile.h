/*
 * atomicfile.h - outputs that appear whole or not at all.
 *
 * Writing goes to ".NAME.tmp.PID" beside NAME; commit flushes, fsyncs and
 * renames it over NAME.  A run killed half-way leaves at most that
 * temporary file, never a truncated NAME that a later run would trust.
 */
#ifndef ETLKIT_ATOMICFILE_H
#define ETLKIT_ATOMICFILE_H

#include "base/outbuf.h"

struct atomicfile {
	struct outbuf ob;
	char *path;		/* NULL for stdout */
	char *tmp;
};

/* Opens PATH ("-" or NULL = stdout) for writing; exits 2 on failure. */
void atomicfile_open(struct atomicfile *ao, const char *path);
/* Flushes, syncs and renames into place; exits 2 on failure. */
void atomicfile_commit(struct atomicfile *ao);
/* Removes the temporary file (error paths). */
void atomicfile_abort(struct atomicfile *ao);

/* Temporary name for PATH in the same directory (malloc'ed). */
char *atomicfile_tmpname(const char *path);
/* fsync(2) PATH's directory so a rename survives a crash; best effort. */
void atomicfile_sync_dir(const char *path);

#endif

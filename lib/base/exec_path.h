/*
 * exec_path.h - where the etlkit tools are, for the programs that run
 * other etlkit tools (the etlkit front command, etlkit-run).
 *
 * Installed, the tools keep their short names (diff, render, ...) in
 * PREFIX/libexec/etlkit/, where they shadow nothing; PREFIX/bin holds only
 * names that start with "etlkit".  In the build tree they sit side by side
 * in bin/.  A tool is therefore looked up, like git's exec-path, in
 * $ETLKIT_EXEC_PATH, then beside the running executable (symlinks
 * resolved), then in ../libexec/etlkit from it.  Never along $PATH: there
 * "diff" is the system's diff(1).
 */
#ifndef ETLKIT_EXEC_PATH_H
#define ETLKIT_EXEC_PATH_H

/*
 * The directory of the running executable, symlinks resolved (ARGV0 is
 * used where the system cannot say): a malloc'd string, or NULL.
 */
char *exec_path_self_dir(const char *argv0);

/*
 * The path of the etlkit tool NAME (a malloc'd string), or NULL when that
 * directory has no executable NAME.  SELF_DIR may be NULL.
 */
char *exec_path_find(const char *self_dir, const char *name);

#endif

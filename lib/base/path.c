/*
 * path.c - the file name of a path from a trace: after the last slash of
 * either kind, since Windows, NT and zip paths use both (path.h).
 */
#include "base/path.h"

const char *
path_base(const char *path)
{
	const char *base = path;

	for (const char *p = path; *p; p++)
		if (*p == '\\' || *p == '/')
			base = p + 1;
	return base;
}

/*
 * path.h - file names inside paths taken from traces, which use either
 * slash: Windows paths (C:\Windows\System32\ntdll.dll), NT paths
 * (\Device\HarddiskVolume2\...), and zip member names.
 */
#ifndef ETLKIT_PATH_H
#define ETLKIT_PATH_H

/* The last component of PATH, after its last '\' or '/' ("C:\a\b.dll" -> "b.dll"). */
const char *path_base(const char *path);

#endif

/* File helpers for the tools. */
#ifndef PM_CLI_FILE_H
#define PM_CLI_FILE_H

#include <stddef.h>

#include "posematch/posematch.h"

/* Whole file as NUL-terminated text (malloc'd), or NULL with the error filled. Regular files
 * and pipes only: "PATH: is a directory", "PATH: not a regular file (...)". */
char *pm_cli_read_text(const char *path, size_t *size, pm_error *error);
/* Why a file of this st_mode cannot be read or replaced as a regular file ("is a directory",
 * "not a regular file (a FIFO)", ...), or NULL for a regular file. */
const char *pm_cli_file_kind_problem(unsigned long mode);
/* Writes bytes to path through a temporary file and a rename: all or nothing. A symbolic link
 * is written through (the file it names is replaced, the link stays); an existing target that
 * is not a regular file is refused ("PATH: not a regular file (...)"). */
pm_result pm_cli_write_file(const char *path, const void *data, size_t size, pm_error *error);
/* The same for several files that belong together: each is written to a temporary file and
 * none is renamed into place unless all were written. */
pm_result pm_cli_write_files(int count, const char *const *paths, const void *const *data, const size_t *sizes,
                             pm_error *error);
/* Checks up front that path can be written (its directory exists and is writable, it is not a
 * directory or another non-regular file, through symbolic links), so that long commands fail
 * before their work rather than after it. */
pm_result pm_cli_check_output(const char *path, pm_error *error);
/* Expands directories into their .bvh files (recursively, sorted by path so that the order
 * never depends on the file system); plain files (.json blend spaces among them) are kept as
 * given. A directory without .bvh files is an error. Returns a malloc'd array of malloc'd
 * strings. */
pm_result pm_cli_expand_inputs(char ***out, int *out_count, char **inputs, int count, pm_error *error);
void pm_cli_free_list(char **list, int count);
/* 1 when path ends with suffix (case-insensitive). */
int pm_cli_has_suffix(const char *path, const char *suffix);

#endif

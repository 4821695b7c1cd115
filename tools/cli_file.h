/* File helpers for the tools. */
#ifndef PM_CLI_FILE_H
#define PM_CLI_FILE_H

#include <stddef.h>

#include "posematch/posematch.h"

/* Whole file as NUL-terminated text (malloc'd), or NULL with the error filled. */
char *pm_cli_read_text(const char *path, size_t *size, pm_error *error);
/* Writes bytes to path through a temporary file and a rename: all or nothing. */
pm_result pm_cli_write_file(const char *path, const void *data, size_t size, pm_error *error);
/* Checks up front that path can be written (its directory exists and is writable, it is not a
 * directory), so that long commands fail before their work rather than after it. */
pm_result pm_cli_check_output(const char *path, pm_error *error);
/* Expands directories into their .bvh files (recursively, sorted by path so that the order
 * never depends on the file system); plain files (.json blend spaces among them) are kept as
 * given. Returns a malloc'd array of malloc'd strings. */
pm_result pm_cli_expand_inputs(char ***out, int *out_count, char **inputs, int count, pm_error *error);
void pm_cli_free_list(char **list, int count);
/* 1 when path ends with suffix (case-insensitive). */
int pm_cli_has_suffix(const char *path, const char *suffix);

#endif

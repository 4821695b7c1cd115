/* File helpers for the tools. Outputs are written with the library's pm_file_write,
 * pm_file_write_all and pm_file_check_output (posematch/file.h), as the library's own files are. */
#ifndef PM_CLI_FILE_H
#define PM_CLI_FILE_H

#include <stddef.h>

#include "posematch/posematch.h"

/* Whole file as NUL-terminated text (malloc'd), or NULL with the error filled. Regular files
 * and pipes only: "PATH: is a directory", "PATH: not a regular file (...)". */
char *pm_cli_read_text(const char *path, size_t *size, pm_error *error);
/* pm_cli_read_text for a JSON file (schemas, blend spaces): a NUL byte is refused with its line,
 * "PATH:LINE: a NUL byte (a JSON file is text)", since cJSON would stop reading there. */
char *pm_cli_read_json_text(const char *path, pm_error *error);
/* Expands directories into their .bvh files (recursively, sorted by path so that the order
 * never depends on the file system; a directory reached again through a symbolic link is not
 * scanned again); plain files (.json blend spaces among them) are kept as given. A directory
 * without .bvh files is an error, and so is anything the scan cannot look into (an unreadable
 * directory, a path longer than the system allows, a broken link named *.bvh). Returns a
 * malloc'd array of malloc'd strings. */
pm_result pm_cli_expand_inputs(char ***out, int *out_count, char **inputs, int count, pm_error *error);
void pm_cli_free_list(char **list, int count);
/* Refuses to write `output` when it is one of the `count` inputs (the same file by any name: a
 * link, another spelling, a hard link): "OUTPUT: the output is also an input ...". PM_OK when it
 * is none of them or does not exist yet. */
pm_result pm_cli_check_not_input(const char *output, const char *const *inputs, int count, pm_error *error);
/* Refuses an output whose name ends in the extension of another kind of file the tool reads or
 * writes (.bvh, .json, .f32, .pmdb) than `want` (".pmdb" for a database, ".bvh" for a clip):
 * "-o walk.bvh" on a build is a slip that would replace a clip with a database, or leave one a
 * later build of the folder takes for a clip. Other names, and none, are the user's choice. */
pm_result pm_cli_check_output_extension(const char *output, const char *want, const char *what, pm_error *error);
/* A directory the command will create or use (build --cache): PM_OK when `dir` is one, or when it
 * does not exist and its parent is a directory; else "DIR: OPTION: not a directory (a regular
 * file)" or "...: its parent directory does not exist". Whether it can be written is left to the
 * writes (a read-only cache still serves what it holds). */
pm_result pm_cli_check_directory_target(const char *dir, const char *option, pm_error *error);
/* `path` made absolute (from the working directory) and without empty, "." and ".." components,
 * ".." taken by name rather than through links: the folders a clip's asset name is read from, so
 * that "x/", "./x", "x//walk.bvh" and a clip given from inside its own folder name it alike.
 * malloc'd; NULL when out of memory or when the working directory cannot be read. */
char *pm_cli_absolute_path(const char *path);
/* 1 when path ends with suffix (case-insensitive). */
int pm_cli_has_suffix(const char *path, const char *suffix);

#endif

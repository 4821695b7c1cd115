/* posematch - safe file reading and writing.
 *
 * Reading (pm_file_read): what the library's loaders use (pm_database_load, pm_bvh_read_file),
 * public for the same reason as the writing below.
 *
 * Writing: what the library uses to write its own files (pm_database_save, pm_bvh_write_file), made
 * public so that programs writing files next to them (the posematch CLI's feature matrices,
 * query sets, copied databases) get the same guarantees instead of a second copy of the code:
 *
 * - A reader never sees a half-written file: the bytes go to a new file in the target's
 *   directory, which gets a unique hidden name (".pm-XXXXXXXX.tmp", short enough for any legal
 *   target name) and is then renamed over the target. On failure the temporary file is removed
 *   and the target is left as it was. On Linux the new file has no name at all until its bytes
 *   are written (O_TMPFILE), so a writer killed outright (SIGKILL, the OOM killer) while writing
 *   leaves nothing behind; where the file system lacks O_TMPFILE (or /proc is not mounted) the
 *   file is created under its temporary name (exclusively), which such a kill leaves behind.
 *   There is no fsync: this protects against failed and interrupted writes, not against power
 *   loss.
 * - An existing target that is not a regular file (a directory, a FIFO, a device) is refused
 *   before anything is written: the rename would replace a FIFO or a device node with a plain
 *   file, and opening one for writing could block or write to the device.
 * - A symbolic link is written through (the file the last of a chain of links names is
 *   replaced and the links stay; a dangling link gets its file created where it points),
 *   because renaming over the link itself would turn it into a plain file. Relative link
 *   targets are relative to the link's directory; more than 40 hops is "Too many levels of
 *   symbolic links".
 * - Links are followed only as the kernel's fs.protected_symlinks rule would follow them: a
 *   link in a sticky world-writable directory (such as /tmp) is followed only when it belongs
 *   to the caller (the effective user) or to the directory's owner. The links are resolved
 *   here rather than by the kernel (whose rule therefore does not apply), so without this a
 *   link planted in /tmp by another user would make a program run by root replace whatever
 *   file that link names. Refused: "PATH: not followed: a symbolic link in a shared sticky
 *   directory owned by another user".
 *
 * Messages name the path as given: "PATH: is a directory", "PATH: not a regular file (a
 * FIFO)", "PATH: cannot create: <reason>", "PATH: cannot write: <reason>", "PATH: cannot rename
 * into place: <reason>" (all PM_ERR_IO), "PATH: out of memory"; bad arguments (NULL, an empty
 * path, count < 1) are PM_ERR_INVALID_ARGUMENT naming the function. */
#ifndef POSEMATCH_FILE_H
#define POSEMATCH_FILE_H

#include "base.h"

PM_EXTERN_C_BEGIN

/* Reads all of the file at `path` into a buffer from `allocator` (NULL = the default), 64-byte
 * aligned, with a NUL byte after its *out_size bytes (so that text is a C string); free it with
 * pm_free_buffer. A directory, a device or a socket is refused ("PATH: is a directory",
 * "PATH: not a regular file (...)"), and so is a FIFO unless flags has PM_FILE_READ_PIPES (then
 * it is read to its end, as a shell's <(...) is); any other flag bit is PM_ERR_INVALID_ARGUMENT.
 * Other errors: "PATH: cannot open: <reason>", "PATH: read error: <reason>", "PATH: out of
 * memory", "PATH: file too large", "PATH: read N of M bytes (the file shrank while being read)".
 * *out is NULL on failure. */
enum { PM_FILE_READ_PIPES = 1 };
PM_API pm_result pm_file_read(void **out, size_t *out_size, const char *path, unsigned flags, const pm_allocator *allocator,
                              pm_error *error);

/* Replaces the file at `path` (through symbolic links) with `size` bytes of `data` (which may
 * be NULL when size is 0): all or nothing. A path ending in '/' names no file and is refused. */
PM_API pm_result pm_file_write(const char *path, const void *data, size_t size, pm_error *error);

/* The same for `count` files that belong together (a matrix and its description, query sets):
 * each is written to its temporary file first, and none is renamed into place unless all were
 * written, so a failure (a full disk, a target that is a directory) leaves every target as it
 * was and no temporary file behind. Only a failing rename itself, after the earlier ones
 * succeeded, can leave a partial set; rename within a directory fails only in rare cases.
 * Each file waiting without a name holds a descriptor: at most the first 64 files of a set wait
 * so, and should the process run out of descriptors, those are named at once; files named early
 * are ones a writer killed outright leaves behind (as without O_TMPFILE). */
/* Every path must name a different file: the same path twice, or two spellings of one (a link
 * and the file it names, "a" and "./a"), is PM_ERR_INVALID_ARGUMENT with every target left as
 * it was. */
PM_API pm_result pm_file_write_all(int count, const char *const *paths, const void *const *data,
                                   const size_t *sizes, pm_error *error);

/* Checks up front that pm_file_write(path, ...) should succeed, so that long commands fail
 * before their work rather than after it: the path must name a file (not be empty or end in
 * '/'), the links it goes through must be followable (see above), the file they lead to must be
 * missing or a regular file, and its directory must exist and be writable. Nothing is created. */
PM_API pm_result pm_file_check_output(const char *path, pm_error *error);

PM_EXTERN_C_END

#endif

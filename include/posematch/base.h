/* posematch - motion matching runtime. Base types shared by every module. */
#ifndef POSEMATCH_BASE_H
#define POSEMATCH_BASE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(POSEMATCH_SHARED)
#if defined(POSEMATCH_BUILDING)
#define PM_API __declspec(dllexport)
#else
#define PM_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && defined(POSEMATCH_SHARED)
#define PM_API __attribute__((visibility("default")))
#else
#define PM_API
#endif

#ifdef __cplusplus
#define PM_EXTERN_C_BEGIN extern "C" {
#define PM_EXTERN_C_END }
#else
#define PM_EXTERN_C_BEGIN
#define PM_EXTERN_C_END
#endif

#define PM_VERSION_MAJOR 0
#define PM_VERSION_MINOR 4
#define PM_VERSION_PATCH 0

PM_EXTERN_C_BEGIN

/* Every fallible function returns a pm_result; 0 is success. */
typedef enum pm_result {
    PM_OK = 0,
    PM_ERR_INVALID_ARGUMENT = 1, /* a parameter or def field is out of range */
    PM_ERR_IO = 2,               /* a file could not be opened, read or written */
    PM_ERR_PARSE = 3,            /* a text input (BVH, JSON) is malformed */
    PM_ERR_OUT_OF_MEMORY = 4,
    PM_ERR_LIMIT = 5,            /* input exceeds a documented limit */
    PM_ERR_CORRUPT = 6,          /* a binary file failed validation or its checksum */
    PM_ERR_VERSION = 7,          /* a binary file has an unsupported format version */
    PM_ERR_MISMATCH = 8,         /* inputs that must agree do not (skeletons, schemas, a buffer
                                    and the size its size function gives) */
    PM_ERR_NOT_FOUND = 9,        /* a named joint, channel, curve or asset does not exist */
    PM_ERR_NUMERIC = 10,         /* NaN, Inf or a degenerate value where a finite one is needed */
    PM_ERR_CANCELLED = 11        /* a progress callback asked a long job to stop */
} pm_result;

/* Filled by a failing call: the code plus one line naming the file, line/field and problem.
 * Pass NULL where the message is not wanted. */
#define PM_ERROR_MESSAGE_SIZE 512
typedef struct pm_error {
    pm_result code;
    char message[PM_ERROR_MESSAGE_SIZE];
} pm_error;

/* Allocation hooks. Every object that owns memory records the allocator it was created with and
 * frees with it; temporary memory comes from the allocator of what a call works on (a clip's, a
 * space's, a database's or its def's), but for the few path buffers of file writing (file.h,
 * pm_database_save, pm_bvh_write_file), which come from the C library.
 * - A NULL allocator pointer means the C library's aligned allocation, except in the calls that
 *   derive an object from another - pm_skeleton_copy, pm_clip_copy, pm_animation_build,
 *   pm_root_track_extract - where NULL means the source's allocator. Calls without an allocator
 *   parameter that make a clip from clips (resample, trim, mirror, pm_clip_extract_additive) use
 *   their source's, pm_blend_space_bake the space's.
 * - An allocator whose alloc or free is NULL counts as a NULL allocator: both are needed.
 * - Threads: an allocator is called on the thread that called the library, except by
 *   pm_database_build with threads > 1, whose worker threads copy, resample and read the clips with
 *   each clip's own allocator at the same time. Those allocators must be thread-safe then (the
 *   def's allocator is only called on the building thread). */
typedef struct pm_allocator {
    void *(*alloc)(size_t size, size_t alignment, void *user);
    void (*free)(void *ptr, void *user);
    void *user;
} pm_allocator;
/* Output arguments (the `out` of pm_database_build, pm_bvh_read_file, pm_clip_resample, ...) are
 * written over, never freed: an object or buffer they held before is the caller's to destroy
 * first, or it leaks. */

/* Frees a buffer the library allocated for the caller with `allocator` (NULL = the default):
 * pm_bvh_write_memory's text, pm_database_clip_queries' rows, pm_file_read's bytes. */
PM_API void pm_free_buffer(void *data, const pm_allocator *allocator);

/* Short, static name of a result code ("invalid argument", ...). */
PM_API const char *pm_result_string(pm_result result);

/* Library version as "major.minor.patch". */
PM_API const char *pm_version_string(void);

PM_EXTERN_C_END

#endif

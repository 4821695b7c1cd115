/* posematch - BVH reader and writer.
 *
 * The reader accepts what real files contain: position channels that replace OFFSET, a
 * rotation order per joint (mixed within a file), 6 channels on every joint, scientific
 * notation, tabs, CRLF, ".0083" numbers, several ROOTs. Everything it cannot read is an error
 * naming the file, line and field; nothing is half-built on failure. On success the clip is
 * Y-up and in metres, with the detected (or given) unit scale and up axis recorded.
 *
 * Frames are one per line, as every exporter writes them: a line with too few or too many
 * values (a frame split over two lines, two frames on one) is an error, and so is a Frames:
 * count the lines do not match either way (the file ends early, or frame data follows the
 * last declared frame); blank lines between frames are skipped. The values of "Frames:" and
 * "Frame Time:" are on the label's line, glued to the colon or not. The text is ASCII or UTF-8
 * (a byte order mark is skipped); UTF-16 and UTF-32 are refused as such. Numbers are read
 * whatever the C locale, and a position or offset is the float nearest its decimal text, as
 * strtof rounds it in the C locale, however many digits it has (so is a frame time). */
#ifndef POSEMATCH_BVH_H
#define POSEMATCH_BVH_H

#include "anim.h"

PM_EXTERN_C_BEGIN

typedef struct pm_bvh_def {
    float unit_scale;        /* metres per file unit; 0 = detect from the hip height */
    int up_axis;             /* -1 = detect, else PM_UP_Y or PM_UP_Z */
    const pm_allocator *allocator;
} pm_bvh_def;
PM_API pm_bvh_def pm_default_bvh_def(void);

/* Shortest Frame Time the reader accepts, in seconds (100 kHz); shorter is refused as
 * "FILE:LINE: Frame Time: ... is below 1e-05 s". */
#define PM_BVH_MIN_FRAME_TIME 1e-5
/* Longest, in seconds (a frame an hour): longer is a corrupt header, whose clip would last
 * longer than a float can say ("FILE:LINE: Frame Time: ... is above 3600 s"). */
#define PM_BVH_MAX_FRAME_TIME 3600.0

/* Before allocating the clip, the reader refuses a Frames: count the rest of the file has too
 * few bytes for, and motion of more than 64 MiB with fewer than one channel per 4 joints (a clip
 * stores 28 bytes per joint and frame however few channels the file has), both as
 * "FILE:LINE: Frames: ...": what a file can make the reader allocate stays proportional to its
 * size. Joint names are at most 1024 bytes. */

/* Reads a BVH file into `out` (which the caller later frees with pm_clip_destroy). The clip
 * name is the file name without directory and extension, cut to at most 255 bytes at a UTF-8
 * character boundary, with control characters (a newline is legal in a file name but not in a
 * clip name) replaced by '_'. */
PM_API pm_result pm_bvh_read_file(pm_clip *out, const char *path, const pm_bvh_def *def, pm_error *error);
/* Same from memory; `source_name` is used in messages and, derived as above, as the clip name. */
PM_API pm_result pm_bvh_read_memory(pm_clip *out, const char *data, size_t size, const char *source_name,
                                    const pm_bvh_def *def, pm_error *error);

typedef struct pm_bvh_write_def {
    float unit_scale;        /* metres per written unit (0.01 writes centimetres); 0 = the clip's unit_scale */
    int up_axis;             /* PM_UP_Y or PM_UP_Z; -1 = the clip's source_up */
    int precision;           /* significant digits, 1..9; 0 = 9: the shortest text (at most 9 digits) that reads
                              * back to the same float. Always a '.', whatever the C locale. */
} pm_bvh_write_def;
PM_API pm_bvh_write_def pm_default_bvh_write_def(void);

/* Writes the clip with each joint's original channel layout (joints whose translation moves
 * get position channels; clips built in code get Xposition Yposition Zposition Zrotation
 * Xrotation Yrotation on moving joints and Zrotation Xrotation Yrotation elsewhere). The file
 * is written as pm_file_write writes (file.h): a failure leaves no partial file. What the reader
 * would refuse is refused before anything is written, with an error naming the joint or field:
 * a joint name over 1024 bytes, with a control character, a brace or outer blanks
 * (PM_ERR_LIMIT, PM_ERR_INVALID_ARGUMENT), a frame time written below PM_BVH_MIN_FRAME_TIME or above
 * PM_BVH_MAX_FRAME_TIME, or a
 * value beyond the float range in the written units (PM_ERR_NUMERIC), a hierarchy deeper than
 * PM_MAX_JOINT_DEPTH and motion the reader's 64 MiB rule above refuses (PM_ERR_LIMIT). */
PM_API pm_result pm_bvh_write_file(const pm_clip *clip, const char *path, const pm_bvh_write_def *def,
                                   pm_error *error);

/* Writes into a buffer the library allocates with the clip's allocator; free it with pm_free_buffer. */
PM_API pm_result pm_bvh_write_memory(char **out_data, size_t *out_size, const pm_clip *clip,
                                     const pm_bvh_write_def *def, pm_error *error);

/* BVH name of a pm_channel ("Xposition", ..., "Zrotation"); "?" when out of range. */
PM_API const char *pm_bvh_channel_name(int channel);
/* Short name of a unit the reader detects from its scale in metres per unit: "m", "cm", "mm",
 * "in" (inches), "cmu" (CMU units, 1/0.45 inch), or "custom" for any other scale. */
PM_API const char *pm_bvh_unit_name(float unit_scale);

PM_EXTERN_C_END

#endif

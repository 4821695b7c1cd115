/* build's clip files read on several threads: each file is parsed on its own, so a clip is the
 * same whichever thread reads it, and the command uses the results in input order (its first
 * failing file, in that order, is the error it reports, as when reading one by one). */
#ifndef PM_CLI_CLIP_READER_H
#define PM_CLI_CLIP_READER_H

#include <stdatomic.h>

#include "posematch/posematch.h"

typedef struct pm_cli_read_slot {
    pm_clip clip;     /* zeroed unless read */
    pm_result result; /* PM_OK when read; set only for files taken */
    pm_error error;
    int taken;        /* 0: not read (not wanted, or reading stopped first) */
} pm_cli_read_slot;

/* Reads files[i] into slots[i] for every i with wanted[i] != 0, on up to `threads` threads (the
 * caller's reading only when no other thread starts; with several, it watches them). Stops
 * taking files once *stop is non-zero (the number of the signal whose handler set it, a handler
 * installed without SA_RESTART) or a file has failed: files after a failure need not be read.
 * A reader still blocked opening a file (a FIFO no one writes) once *stop is set is sent that
 * signal, which ends the open() with EINTR. slots must be zeroed. */
void pm_cli_read_clips(pm_cli_read_slot *slots, char *const *files, const int *wanted, int count, const pm_bvh_def *def,
                       int threads, const atomic_int *stop);
/* Destroys every clip still in slots[0..count) (NULL: nothing). */
void pm_cli_read_slots_free(pm_cli_read_slot *slots, int count);

#endif

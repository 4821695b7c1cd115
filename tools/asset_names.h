/* build's asset names and inputs: what makes every asset name unique and storable, and every
 * input file distinct. Each check prints a one-line error and returns 0 on failure, else 1. */
#ifndef PM_CLI_ASSET_NAMES_H
#define PM_CLI_ASSET_NAMES_H

#include "posematch/posematch.h"

/* The BVH file clip i was read from, NULL for a clip baked from a blend space (from[i] its JSON). */
const char *pm_cli_bvh_file(const char *const *from, int i);
/* Clips of `n` whose names repeat (subject1/walk.bvh, subject2/walk.bvh) are renamed by as many
 * trailing components of their absolute path as tell them apart; from[i] is clip i's input. */
int pm_cli_name_apart(pm_clip *clips, const char *const *from, int n);
/* Asset names, ".mirror" included with `mirror`, must fit PM_MAX_ASSET_NAME. */
int pm_cli_check_name_lengths(const pm_clip *clips, const char *const *from, int n, int mirror);
/* Asset names must be unique, mirrored copies' names included with `mirror`. */
int pm_cli_check_unique_names(const pm_clip *clips, const char *const *from, int n, int mirror);
/* The same file (device and inode) given twice, by any paths, is refused. */
int pm_cli_check_distinct_inputs(char **files, int count);

#endif

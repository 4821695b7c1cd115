/* Private: what clip sampling and the runtime animation share about clips. */
#ifndef PM_CLIP_INTERNAL_H
#define PM_CLIP_INTERNAL_H

#include "posematch/anim.h"

/* Where a looping clip's first frame lies one cycle on, for joint j: the last frame plus one
 * average step (the mean of the last and the first step). Root motion continues across the wrap
 * through it (clip sampling, the runtime animation's end key); constant or in-place
 * translations come back to (nearly) the first frame's. Needs 2 frames. */
pm_vec3 pm_clip_loop_end_translation(const pm_clip *clip, int j);

#endif

/* Procedural locomotion clips: a small humanoid walking, running, turning and idling. For the
 * demo and tests on machines without the real motion capture; not a substitute for it. */
#ifndef PM_SYNTH_H
#define PM_SYNTH_H

#include "posematch/posematch.h"

typedef struct pm_synth_def {
    float duration;   /* seconds */
    float fps;
    float speed;      /* metres per second along the path; 0 = idle sway */
    float turn_rate;  /* radians per second of heading change */
    float lateral;    /* sideways speed, metres per second (side-stepping) */
    unsigned seed;    /* variations in phase, arm swing and noise */
    int looping;
} pm_synth_def;

pm_synth_def pm_default_synth_def(void);

/* A 17-joint humanoid (Hips, Spine, Chest, Neck, Head, Left/Right UpLeg, Leg, Foot, ToeBase,
 * Left/Right Arm, ForeArm) in metres, Y up, facing +Z at rest. */
pm_result pm_synth_skeleton(pm_skeleton *out, pm_error *error);

/* A clip following the def; named `name`. */
pm_result pm_synth_clip(pm_clip *out, const pm_synth_def *def, const char *name, pm_error *error);

/* The def of clip `index` of a varied set (walks, runs, turns, side-steps, idles, turning runs
 * by index % 6) from a seed: same index and seed, same def. */
pm_synth_def pm_synth_variant(int index, unsigned seed);

#endif

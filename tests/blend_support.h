/* Helpers shared by the blend-space tests (test_blend_space*.c). */
#ifndef PM_TESTS_BLEND_SUPPORT_H
#define PM_TESTS_BLEND_SUPPORT_H

#include "support.h"

/* A skeleton of clips and the clips over it (fixture_init is each test's own: the clips differ). */
typedef struct pm_test_blend_fixture {
    pm_skeleton sk;
    pm_clip clips[64];
    int count;
} pm_test_blend_fixture;

/* A skeleton of `joints` joints named "j<k>", rest translations (0, 1, 0) for the root and
 * (0, 0.3, 0) for the others. */
void pm_test_blend_skeleton(pm_skeleton *sk, int joints);
/* A looping clip of `frames` frames whose joint 1 swings as sin(2 pi phase) * amplitude about X; the
 * others carry an id so blends can be told apart. */
void pm_test_blend_swing_clip(pm_clip *clip, const pm_skeleton *sk, int frames, float amplitude, float id);
/* `count` swing clips of 20 + 3i frames and amplitude 0.5 + 0.1i over a `joints`-joint skeleton. */
void pm_test_blend_fixture_swing(pm_test_blend_fixture *fx, int joints, int count);
/* Destroys the fixture's `count` clips and its skeleton. */
void pm_test_blend_fixture_free(pm_test_blend_fixture *fx);
/* Writes the fixture's first `count` clips as "clip<i>.bvh" in the scratch directory. */
void pm_test_blend_write_clips(const pm_test_blend_fixture *fx, int count);

/* A `dims`-dimensional space (1 or 2) named "test" over fx->clips[order[i]] at points[order[i]]
 * (order NULL: the first n in turn), samples named "s<k>", axes [-1, 2], no alignment. */
pm_result pm_test_blend_make_space(pm_blend_space **out, pm_test_blend_fixture *fx, int dims, const float (*points)[2],
                                   const int *order, int n, pm_error *e);

/* Blend spaces whose sample names are "s<index>": weights as a dense array over samples. */
void pm_test_dense_weights(float *out, int n, const pm_blend_space *s, const pm_blend_space_weights *w);
/* Weights are positive, distinct samples, at most the space's maximum, summing to 1. */
void pm_test_check_weights(const pm_blend_space *s, const pm_blend_space_weights *w);
/* Two spaces of the same n samples (listed in different orders) give bit-identical weights and
 * blended poses at `params`. */
void pm_test_same_blend(const pm_blend_space *ref, const pm_blend_space *s, const float *params, int n,
                        pm_soa_transform *scratch, int soa, pm_soa_transform *out_ref, pm_soa_transform *out);

#endif

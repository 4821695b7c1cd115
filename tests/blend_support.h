/* Helpers shared by the blend-space tests (test_blend_space*.c). */
#ifndef PM_TESTS_BLEND_SUPPORT_H
#define PM_TESTS_BLEND_SUPPORT_H

#include "blend_space_json.h"
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

/* Defs of the first `n` fixture clips at points[i], unnamed (the clips' names then). */
void pm_test_blend_samples(pm_blend_sample_def *out, pm_test_blend_fixture *fx, const float (*points)[2], int n);
/* A `dims`-dimensional space def over the `n` samples: unnamed, axes spanning the samples, no
 * alignment (the test skeletons have no legs to take a facing from). */
pm_blend_space_def pm_test_blend_def(const pm_blend_sample_def *samples, int n, int dims);

/* The right triangle (0, 0), (1, 0), (0, 1): the samples of the small 2D spaces. */
extern const float pm_test_triangle[3][2];
/* Three swing clips over `joints` joints into fx (pm_test_blend_fixture_swing), and the "test"
 * space over them at pm_test_triangle (pm_test_blend_make_space). */
pm_blend_space *pm_test_blend_triangle_space(pm_test_blend_fixture *fx, int joints);

/* A `dims`-dimensional space (1 or 2) named "test" over fx->clips[order[i]] at points[order[i]]
 * (order NULL: the first n in turn), samples named "s<k>", axes [-1, 2], no alignment. */
pm_result pm_test_blend_make_space(pm_blend_space **out, pm_test_blend_fixture *fx, int dims, const float (*points)[2],
                                   const int *order, int n, pm_error *e);

/* A 1D space of clip a at 0 and clip b at 1 (samples "a" and "b"), synced and aligned as given. */
pm_blend_space *pm_test_blend_pair(const pm_clip *a, const pm_clip *b, pm_blend_sync sync, pm_blend_align align);

/* A `dims`-dimensional space (2 or 3) over `n` samples of `clip`, sample i at the point
 * points + stride * order[i] (order NULL: in turn) and named "s<order[i]>", phase sync, no
 * alignment, allocator `a` (NULL: the default). widen > 0 sets each axis that fraction of the
 * samples' span (1 when they do not spread along it) beyond them on either side; 0 keeps the
 * default axes. */
pm_result pm_test_blend_points_space(pm_blend_space **out, const pm_clip *clip, int dims, const float *points, int stride,
                                     const int *order, int n, float widen, const pm_allocator *a, pm_error *e);

/* Poses for blend-space jobs over `joints` joints: scratch for the most weights any space blends,
 * an output and a reference. */
typedef struct pm_test_blend_poses {
    int soa; /* groups of four joints in one pose */
    pm_soa_transform *scratch, *out, *ref;
} pm_test_blend_poses;
void pm_test_blend_poses_alloc(pm_test_blend_poses *p, int joints);
void pm_test_blend_poses_free(pm_test_blend_poses *p);
/* A job for `s` at `params` and `phase` into p->out, with all of p->scratch. */
pm_blend_space_job pm_test_blend_job(const pm_blend_space *s, const float *params, float phase,
                                     const pm_test_blend_poses *p);
/* Fails unless p->out is sample `i` of `s` played alone at `phase` (into p->ref), bit for bit. */
void pm_test_assert_plays_sample(const pm_blend_space *s, int i, float phase, const pm_test_blend_poses *p);

/* Loads the document `json` as "space.json" in the scratch directory, where
 * pm_test_blend_write_clips puts the clips it names. */
pm_result pm_test_blend_load_json(pm_blend_space_file *f, const char *json, pm_error *e);
/* The same, failing the test with the loader's message unless the document loads. */
void pm_test_blend_load_json_ok(pm_blend_space_file *f, const char *json);
/* A document the loader must refuse, and words its message must hold. */
typedef struct pm_test_bad_json {
    const char *json, *expect;
} pm_test_bad_json;
/* Each of the `n` documents is refused, with a message naming "space.json" and its words, and
 * leaves no space behind. */
void pm_test_blend_expect_bad_json(const pm_test_bad_json *bad, size_t n);

/* Blend spaces whose sample names are "s<index>": weights as a dense array over samples. */
void pm_test_dense_weights(float *out, int n, const pm_blend_space *s, const pm_blend_space_weights *w);
/* Dense weights (n <= 256) at `a` and at `b` each within tol of those at `at`, sample by sample:
 * the blend is continuous across where they lie. */
void pm_test_assert_weights_near(const pm_blend_space *s, int n, const float *at, const float *a, const float *b,
                                 float tol);
/* Weights are positive, distinct samples, at most the space's maximum, summing to 1. */
void pm_test_check_weights(const pm_blend_space *s, const pm_blend_space_weights *w);
/* Fails unless the cell lookup (pm_blend_space_weights_at) gives at q what testing every cell
 * and hull element in order gives (pm_blend_space_weights_brute), bit for bit: cell, samples,
 * weights and the clamped parameters. `what` names the layout in the message. */
void pm_test_assert_lookup_is_brute(const pm_blend_space *s, const float *q, const char *what);
/* Two spaces of the same n samples (listed in different orders) give bit-identical weights and
 * blended poses at `params` (into p->ref and p->out). */
void pm_test_same_blend(const pm_blend_space *ref, const pm_blend_space *s, const float *params, int n,
                        const pm_test_blend_poses *p);

#endif

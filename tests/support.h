/* Shared helpers for the cmocka tests. */
#ifndef PM_TESTS_SUPPORT_H
#define PM_TESTS_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "posematch/posematch.h"

/* Directory of the real clips (PM_MOCAP_DIR, else ../shared/mocap), or NULL when absent. */
const char *pm_test_mocap_dir(void);
/* For binaries that need the real clips: exits 77 (ctest: skipped) with one clear message. */
void pm_test_require_mocap(const char *test_name);
/* "<mocap>/<relative>" in a static buffer. */
const char *pm_test_mocap_path(const char *relative);
/* A fresh scratch directory under PM_TMP (or /tmp), created on first use. */
const char *pm_test_tmp_dir(void);
/* "<tmp>/<name>" in a static rotating buffer. */
const char *pm_test_tmp_path(const char *name);
/* Writes bytes to a file, asserting success. */
void pm_test_write_file(const char *path, const void *data, size_t size);
/* Reads a whole file (malloc'd, NUL-terminated); asserts success. */
char *pm_test_read_file(const char *path, size_t *size);
/* pm_test_write_file of a string (without its NUL); the file's whole content must be `text`. */
void pm_test_put_text(const char *path, const char *text);
void pm_test_assert_file_text(const char *path, const char *text);
/* Deterministic pseudo-random numbers for property tests. */
typedef struct pm_test_rng { uint64_t state; } pm_test_rng;
uint32_t pm_test_rng_u32(pm_test_rng *rng);
float pm_test_rng_float(pm_test_rng *rng); /* [0, 1) */
float pm_test_rng_normal(pm_test_rng *rng);

/* A uniformly random unit rotation (a normalised Gaussian 4-vector). */
pm_quat pm_test_random_quat(pm_test_rng *rng);
/* The same rotation up to sign: |dot(a, b)| > 1 - tol. */
int pm_test_quat_same(pm_quat a, pm_quat b, float tol);
/* Fails unless every component of a and b differs by at most tol (tol 0: equal). */
void pm_test_assert_vec3_near(pm_vec3 a, pm_vec3 b, float tol);
/* The unit vector along axis 0 (x), 1 (y) or 2 (z). */
pm_vec3 pm_test_unit_axis(int axis);

/* Two databases hold the same bytes (same size, non-empty). */
void pm_test_assert_same_database(const pm_database *a, const pm_database *b);

/* A small legged skeleton walking straight, carrying `dims` curves "c0".."c{dims-1}" of
 * Gaussian values (clustered around a few centres so that the data has structure), so that a
 * schema of curve channels (pm_test_curve_schema) gives arbitrary feature rows. */
void pm_test_random_clip(pm_clip *out, int frames, int dims, uint64_t seed);
void pm_test_curve_schema(pm_schema *out, int dims);
/* A skeleton of `count` joints with these names and, unless `parents` is NULL, these parents
 * (rest transforms as pm_skeleton_create leaves them). */
void pm_test_named_skeleton(pm_skeleton *s, int count, const char *const *names, const int *parents);
/* The hand-made walks' walker: Hips 1 m up, LeftUpLeg, LeftFoot, RightUpLeg, RightFoot (hips
 * joints 0.1 m to each side, feet 0.9 m below them); under a joint "Root" at the origin when
 * `root` is set, every other index then one higher. */
void pm_test_walker(pm_skeleton *s, int root);
/* A 9-joint biped (hips, two legs of three, spine, head) named by `names`, e.g. pm_test_biped_names. */
void pm_test_biped(pm_skeleton *s, const char *const *names);
extern const char *const pm_test_biped_names[];
/* A clip over pm_test_biped (pm_test_biped_names) of `frames` frames at `frame_time`, as
 * pm_clip_create leaves them. */
void pm_test_biped_clip(pm_clip *c, int frames, float frame_time);
/* A pm_test_biped clip of `frames` frames whose hips move 1 m per frame along +X, at `frame_time`. */
void pm_test_ramp_clip(pm_clip *c, int frames, float frame_time);
/* A pm_test_biped clip (created over *s) of `frames` frames at 30 fps: every joint bent by 0.3 of a
 * random rotation, the hips moving forward and jittering sideways; the same clip for one seed. */
pm_clip pm_test_random_biped_clip(pm_skeleton *s, int frames, uint64_t seed);

/* A custom allocator for tests: counts the allocations it hands out and the frees it takes back,
 * refuses allocations once `fail_after` have succeeded (-1: never) and requests above `cap` bytes
 * (0: any size), and records the largest request. Zero-initialise it (fail_after -1 to never
 * fail) and pass pm_test_allocator_hooks(&it) to the library. */
typedef struct pm_test_allocator {
    long allocs, frees, fail_after;
    size_t cap, largest;
} pm_test_allocator;
pm_allocator pm_test_allocator_hooks(pm_test_allocator *counter);
/* An allocator that refuses one request, the refuse-th (1-based; 0: none), and serves every
 * other: a failure in the middle of growing several arrays leaves some grown and some not, where
 * pm_test_allocator's refusals, once begun, refuse everything after. `live` counts blocks handed
 * out and not yet freed. Zero-initialise it, set refuse, pass pm_test_refusal_hooks(&it). */
typedef struct pm_test_refusal {
    long requests, refuse, live;
} pm_test_refusal;
pm_allocator pm_test_refusal_hooks(pm_test_refusal *refusal);

/* Temporary files a write left in `dir` (".pm-XXXXXXXX.tmp" names, pm_file_write's). */
int pm_test_count_temp_files(const char *dir);

#define PM_ASSERT_OK(expr)                                                                          \
    do {                                                                                            \
        pm_result pm_test_r_ = (expr);                                                              \
        if (pm_test_r_ != PM_OK) fail_msg("%s failed: %s", #expr, pm_result_string(pm_test_r_));     \
    } while (0)

#endif

/* Blend-space root motion (src/blend_space_root.c) on walks whose answers are known by
 * construction: start headings blended the short way round across the +-180 degree seam.
 * (Real turns and curves: test_blend_mocap.c; feet sync: test_blend_sync.c.) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "blend_support.h"

enum { HIPS, LUP, LFOOT, RUP, RFOOT, JOINTS };

/* A looping walk of one 40-frame stride at 30 fps along +Z, 1 m per stride, turned by `yaw`
 * about the vertical (every frame's hips rotated and moved with it). */
static void make_walk(pm_clip *c, float yaw) {
    pm_skeleton s;
    PM_ASSERT_OK(pm_skeleton_create(&s, JOINTS, NULL, NULL));
    const char *names[JOINTS] = {"Hips", "LeftUpLeg", "LeftFoot", "RightUpLeg", "RightFoot"};
    const int parents[JOINTS] = {-1, HIPS, LUP, HIPS, RUP};
    const pm_vec3 off[JOINTS] = {{0, 1, 0}, {0.1f, 0, 0}, {0, -0.9f, 0}, {-0.1f, 0, 0}, {0, -0.9f, 0}};
    for (int j = 0; j < JOINTS; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(&s, j, names[j], NULL));
        s.parents[j] = parents[j];
        s.rest_translations[j] = off[j];
    }
    const int n = 40;
    PM_ASSERT_OK(pm_clip_create(c, &s, n, 1.0f / 30.0f, NULL, NULL));
    pm_skeleton_destroy(&s);
    c->looping = 1;
    pm_quat turn = pm_quat_from_yaw(yaw);
    for (int f = 0; f < n; f++) {
        float u = (float)f / (float)n;
        for (int j = 0; j < JOINTS; j++) c->translations[(size_t)f * JOINTS + j] = off[j];
        c->translations[(size_t)f * JOINTS + LFOOT].y += u < 0.5f ? 0.0f : 0.15f * sinf(2.0f * PM_PI * (u - 0.5f));
        c->translations[(size_t)f * JOINTS + RFOOT].y += u >= 0.5f ? 0.0f : 0.15f * sinf(2.0f * PM_PI * u);
        c->translations[(size_t)f * JOINTS + HIPS] = pm_quat_rotate(turn, pm_vec3_make(0.0f, 1.0f, u));
        c->rotations[(size_t)f * JOINTS + HIPS] = turn;
    }
}

/* A 1D space of a at 0 and b at 1, phase sync. */
static pm_blend_space *two_sample_space(const pm_clip *a, const pm_clip *b) {
    pm_blend_sample_def samples[2] = {pm_default_blend_sample_def(), pm_default_blend_sample_def()};
    samples[0].clip = a, samples[0].name = "a";
    samples[1].clip = b, samples[1].name = "b", samples[1].params[0] = 1.0f;
    pm_blend_space_def def = pm_default_blend_space_def();
    def.samples = samples, def.sample_count = 2, def.sync = PM_BLEND_SYNC_PHASE;
    def.align = PM_BLEND_ALIGN_NONE; /* headings as made */
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    return s;
}

/* The hips' model-space placement of the space's blend at `param` and `phase`. */
static pm_transform hips_at(const pm_blend_space *s, float param, float phase) {
    pm_test_blend_poses p;
    pm_test_blend_poses_alloc(&p, JOINTS);
    pm_blend_space_job job = pm_test_blend_job(s, &param, phase, &p);
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    pm_transform t = {pm_pose_rotation(p.out, HIPS), pm_pose_translation(p.out, HIPS)};
    pm_test_blend_poses_free(&p);
    return t;
}

/* Samples 20 degrees apart blend their headings the short way round, wherever the +-180 degree
 * seam of the heading the space reads falls (which of the hips' level axes it reads is the
 * space's choice): facing 170 and -170 degrees, halfway between them the blend faces 180 degrees,
 * not 0; and 80 and 100 degrees give 90 whichever axis is read. */
static void test_start_headings_the_short_way(void **state) {
    (void)state;
    const float deg = PM_PI / 180.0f, firsts[2] = {170.0f, 80.0f};
    for (int pair = 0; pair < 2; pair++) {
        pm_clip a, b;
        make_walk(&a, firsts[pair] * deg);
        make_walk(&b, (firsts[pair] + 20.0f) * deg);
        pm_blend_space *s = two_sample_space(&a, &b);
        for (int k = 0; k <= 4; k++) {
            float param = 0.25f * (float)k, yaw = (firsts[pair] + 20.0f * param) * deg;
            pm_transform h = hips_at(s, param, 0.1f);
            pm_vec3 forward = pm_quat_rotate(h.rotation, pm_vec3_make(0, 0, 1));
            if (!(fabsf(forward.x - sinf(yaw)) < 1e-3f && fabsf(forward.z - cosf(yaw)) < 1e-3f))
                fail_msg("at %g the hips face (%g, %g), expected (%g, %g)", (double)param, (double)forward.x,
                         (double)forward.z, (double)sinf(yaw), (double)cosf(yaw));
        }
        pm_blend_space_destroy(s);
        pm_clip_destroy(&a);
        pm_clip_destroy(&b);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start_headings_the_short_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Blend-space time synchronisation on feet: looping cycles that start at different points of the
 * gait are restarted at their left foot's touchdown, and clips of several strides are cut into
 * gait cycles, so a blend keeps its feet in step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blend_support.h"

enum { HIPS, LUP, LFOOT, RUP, RFOOT, JOINTS, FRAMES = 40 };

/* A looping walk of `strides` strides, stride i `lens[i]` frames long, started `start` frames
 * into it: in each stride each foot lifts (a sine arch up to `lift` metres) during half of it,
 * the right one half a stride after the left; the root walks 1 m per stride. The left foot
 * touches down at the start of every stride. */
static void make_walk(pm_clip *c, const int *lens, int strides, int start, float lift) {
    pm_skeleton s;
    pm_test_walker(&s, 0);
    int n = 0;
    for (int i = 0; i < strides; i++) n += lens[i];
    PM_ASSERT_OK(pm_clip_create(c, &s, n, 1.0f / 30.0f, NULL, NULL));
    pm_skeleton_destroy(&s);
    c->looping = 1;
    for (int f = 0; f < n; f++) {
        int g = (f + start) % n, stride = 0;
        while (g >= lens[stride]) g -= lens[stride++];
        float u = (float)g / (float)lens[stride]; /* stride phase */
        float left = u < 0.5f ? 0.0f : lift * sinf(2.0f * PM_PI * (u - 0.5f));
        float right = u >= 0.5f ? 0.0f : lift * sinf(2.0f * PM_PI * u);
        float walked = (float)stride + u + (f + start >= n ? (float)strides : 0.0f);
        c->translations[(size_t)f * JOINTS + HIPS] = pm_vec3_make(0.0f, 1.0f, walked);
        c->translations[(size_t)f * JOINTS + LFOOT].y += left;
        c->translations[(size_t)f * JOINTS + RFOOT].y += right;
    }
}

/* One looping stride of FRAMES frames, started `start` frames into it. */
static void make_stride(pm_clip *c, int start) {
    const int len = FRAMES;
    make_walk(c, &len, 1, start, 0.15f);
}

static pm_blend_space *two_sample_space(const pm_clip *a, const pm_clip *b, pm_blend_sync sync) {
    return pm_test_blend_pair(a, b, sync, pm_default_blend_space_def().align);
}

/* Largest difference of the left foot's height between a 50/50 blend of the two cycles and the
 * first cycle, over one baked cycle. */
static float blend_error(pm_blend_sync sync) {
    pm_clip a, b;
    make_stride(&a, 0);
    make_stride(&b, 13);
    pm_blend_space *s = two_sample_space(&a, &b, sync);
    float p0 = 0.0f, half = 0.5f;
    pm_clip ref, mid;
    PM_ASSERT_OK(pm_blend_space_bake(&ref, s, &p0, 30.0f, NULL));
    PM_ASSERT_OK(pm_blend_space_bake(&mid, s, &half, 30.0f, NULL));
    assert_int_equal(ref.frame_count, mid.frame_count);
    pm_transform wr[JOINTS], wm[JOINTS];
    float worst = 0.0f;
    for (int f = 0; f < ref.frame_count; f++) {
        PM_ASSERT_OK(pm_clip_frame_world(wr, &ref, f, NULL));
        PM_ASSERT_OK(pm_clip_frame_world(wm, &mid, f, NULL));
        worst = fmaxf(worst, fabsf(wr[LFOOT].translation.y - wm[LFOOT].translation.y));
    }
    pm_clip_destroy(&ref);
    pm_clip_destroy(&mid);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&a);
    pm_clip_destroy(&b);
    return worst;
}

static void test_feet_sync_restarts_cycles(void **state) {
    (void)state;
    assert_int_equal(pm_default_blend_space_def().sync, PM_BLEND_SYNC_FEET);
    /* Started 13 frames apart, phase sync averages a lifted foot with a planted one. */
    float phase = blend_error(PM_BLEND_SYNC_PHASE), feet = blend_error(PM_BLEND_SYNC_FEET);
    printf("left foot height, 50/50 blend against one cycle: phase sync %.4f m, feet sync %.4f m\n", (double)phase,
           (double)feet);
    assert_true(phase > 0.05f);
    assert_true(feet < 0.005f);
}

/* Two strides of one length, and a looping sample shorter than they are (the second's first 30
 * frames). */
static void make_strides_and_shorter(pm_clip *a, pm_clip *b, pm_clip *shorter) {
    make_stride(a, 0);
    make_stride(b, 5);
    PM_ASSERT_OK(pm_clip_trim(shorter, b, 0, 30, NULL));
    shorter->looping = 1;
}

/* Without phase sync, looping samples of other lengths do not close the blend's cycle: it is
 * baked as a one-shot; samples of one length still loop. */
static void test_sync_none_loops_only_when_lengths_agree(void **state) {
    (void)state;
    pm_clip a, b, shorter;
    make_strides_and_shorter(&a, &b, &shorter);
    for (int k = 0; k < 2; k++) {
        pm_blend_space *s = two_sample_space(&a, k ? &shorter : &b, PM_BLEND_SYNC_NONE);
        float half = 0.5f;
        pm_clip out;
        PM_ASSERT_OK(pm_blend_space_bake(&out, s, &half, 30.0f, NULL));
        assert_int_equal(out.looping, k ? 0 : 1);
        pm_clip_destroy(&out);
        pm_blend_space_destroy(s);
    }
    pm_clip_destroy(&shorter);
    pm_clip_destroy(&a);
    pm_clip_destroy(&b);
}

/* Without phase sync the job does not take phases modulo the wrap of 1 (blend_space.h): samples
 * of one length give phase 1 + f as phase f, a shorter sample is elsewhere in its loop then. */
static void test_sync_none_does_not_wrap_phases(void **state) {
    (void)state;
    pm_clip a, b, shorter;
    make_strides_and_shorter(&a, &b, &shorter);
    enum { GROUPS = (JOINTS + 3) / 4 };
    pm_soa_transform scratch[2 * GROUPS], first[GROUPS], second[GROUPS];
    for (int k = 0; k < 2; k++) {
        pm_blend_space *s = two_sample_space(&a, k ? &shorter : &b, PM_BLEND_SYNC_NONE);
        assert_int_equal(pm_blend_space_phase_wrap(s), 1);
        float half = 0.5f;
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &half, NULL));
        assert_int_equal(pm_blend_space_loops(s, &w), k ? 0 : 1);
        pm_blend_space_job job = pm_default_blend_space_job();
        job.space = s, job.params = &half, job.scratch = scratch, job.scratch_count = 2 * GROUPS;
        job.output_count = GROUPS;
        job.phase = 0.3f, job.output = first;
        PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
        job.phase = 1.3f, job.output = second;
        PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
        float dy = fabsf(pm_pose_translation(first, LFOOT).y - pm_pose_translation(second, LFOOT).y);
        if (k == 0) assert_true(dy < 1e-5f);
        else if (!(dy > 1e-3f)) fail_msg("a shorter sample: the left foot moved %g between phases 0.3 and 1.3", (double)dy);
        pm_blend_space_destroy(s);
    }
    pm_clip_destroy(&shorter);
    pm_clip_destroy(&a);
    pm_clip_destroy(&b);
}

/* A looping stride on an arc (the hips turn half a radian per stride) restarted at its touchdown
 * goes on turning smoothly: the moved frames are carried through the cycle's turn, not only its
 * displacement. */
static void test_feet_sync_keeps_a_turning_loop_smooth(void **state) {
    (void)state;
    pm_clip c;
    make_stride(&c, 13);
    const float turn = 0.5f, radius = 1.0f / turn;
    for (int f = 0; f < FRAMES; f++) {
        float a = turn * (float)(f + 13) / FRAMES;
        c.translations[(size_t)f * JOINTS + HIPS] = pm_vec3_make(radius * (1.0f - cosf(a)), 1.0f, radius * sinf(a));
        c.rotations[(size_t)f * JOINTS + HIPS] = pm_quat_from_yaw(a);
    }
    pm_blend_sample_def sample = pm_default_blend_sample_def();
    sample.clip = &c, sample.name = "arc";
    pm_blend_space_def def = pm_default_blend_space_def();
    def.samples = &sample, def.sample_count = 1, def.align = PM_BLEND_ALIGN_NONE;
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    float p = 0.0f;
    pm_clip out;
    PM_ASSERT_OK(pm_blend_space_bake(&out, s, &p, 30.0f, NULL));
    float prev = 0.0f, worst_turn = 0.0f, worst_move = 0.0f;
    pm_vec3 last = pm_vec3_zero();
    for (int f = 0; f < out.frame_count; f++) {
        pm_quat q = out.rotations[(size_t)f * JOINTS + HIPS];
        float yaw = 2.0f * atan2f(q.y, q.w);
        pm_vec3 t = out.translations[(size_t)f * JOINTS + HIPS];
        if (f > 0) {
            float d = fabsf(yaw - prev);
            worst_turn = fmaxf(worst_turn, fminf(d, 2.0f * PM_PI - d));
            worst_move = fmaxf(worst_move, pm_vec3_length(pm_vec3_sub(t, last)));
        }
        prev = yaw;
        last = t;
    }
    /* A frame's turn is half a radian / 40 (0.7 degrees), its step 2.5 cm. */
    assert_true(worst_turn < 0.02f);
    assert_true(worst_move < 0.03f);
    pm_clip_destroy(&out);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&c);
}

/* The left foot's height above its stance in one stride of make_walk, at stride phase u. */
static float arch(float u) {
    u -= floorf(u);
    return u < 0.5f ? 0.0f : 0.15f * sinf(2.0f * PM_PI * (u - 0.5f));
}

/* How far a baked clip's left foot strays from `strides` even strides of make_walk: the largest
 * height difference, at the best start of the strides (the clip starts where the touchdown was
 * detected, a little before the stride's own start). */
static float strides_error(const pm_clip *baked, int strides) {
    int n = baked->frame_count, steps = baked->looping ? n : n - 1;
    float *h = (float *)malloc((size_t)n * sizeof(float));
    assert_non_null(h);
    pm_transform w[JOINTS];
    for (int f = 0; f < n; f++) {
        PM_ASSERT_OK(pm_clip_frame_world(w, baked, f, NULL));
        h[f] = w[LFOOT].translation.y - 0.1f;
    }
    float best = INFINITY;
    for (int k = -100; k <= 100; k++) {
        float worst = 0.0f;
        for (int f = 0; f < n; f++) worst = fmaxf(worst, fabsf(h[f] - arch((float)strides * f / steps + 0.001f * k)));
        best = fminf(best, worst);
    }
    free(h);
    return best;
}

/* A walk of two strides blended with a run of one: with feet sync the blend's phase counts gait
 * cycles, and the walk plays one of its strides in each, so both touch down together; a phase
 * normalised over whole clips has the walk take two strides while the run takes one. */
static void test_samples_of_several_strides_keep_feet_in_step(void **state) {
    (void)state;
    const int walk_lens[2] = {40, 40}, run_len = 30;
    pm_clip walk, run;
    make_walk(&walk, walk_lens, 2, 7, 0.15f);
    make_walk(&run, &run_len, 1, 11, 0.15f);
    float errors[2];
    for (int k = 0; k < 2; k++) {
        pm_blend_space *s = two_sample_space(&walk, &run, k ? PM_BLEND_SYNC_PHASE : PM_BLEND_SYNC_FEET);
        assert_int_equal(pm_blend_space_sample_cycles(s, 0), k ? 1 : 2);
        assert_int_equal(pm_blend_space_sample_cycles(s, 1), 1);
        float half = 0.5f;
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &half, NULL));
        pm_clip baked;
        PM_ASSERT_OK(pm_blend_space_bake(&baked, s, &half, 30.0f, NULL));
        assert_true(baked.looping);
        if (k == 0) {
            /* Two cycles of (40 + 30) / 2 frames, each the mean of a walk stride and the run's. */
            assert_int_equal(pm_blend_space_period(s, &w), 2);
            for (int c = 0; c < 2; c++) assert_true(fabsf(pm_blend_space_cycle_duration(s, &w, c) - 35.0f / 30.0f) < 1e-5f);
            assert_int_equal(baked.frame_count, 70);
        }
        errors[k] = strides_error(&baked, k ? 1 : 2);
        pm_clip_destroy(&baked);
        pm_blend_space_destroy(s);
    }
    printf("left foot height against even strides, walk of 2 strides with a run of 1: feet sync %.4f m, phase sync %.4f m\n",
           (double)errors[0], (double)errors[1]);
    /* A frame of touchdown detection is worth about 2.5 cm of arch at these stride lengths. */
    assert_true(errors[0] < 0.03f);
    assert_true(errors[1] > 0.1f);
    pm_clip_destroy(&walk);
    pm_clip_destroy(&run);
}

/* The blend job plays on through the walk's strides and its loop without a jump in the feet or
 * the root, and at every whole phase both samples touch down; a whole phase c is the end of
 * cycle c - 1. */
static void test_cycles_join_without_a_jump(void **state) {
    (void)state;
    const int walk_lens[2] = {40, 40}, run_len = 30;
    pm_clip walk, run;
    make_walk(&walk, walk_lens, 2, 7, 0.15f);
    make_walk(&run, &run_len, 1, 11, 0.15f);
    pm_blend_space *s = two_sample_space(&walk, &run, PM_BLEND_SYNC_FEET);
    enum { GROUPS = (JOINTS + 3) / 4 };
    pm_soa_transform scratch[2 * GROUPS], out[GROUPS];
    assert_int_equal(pm_blend_space_scratch_count(s), 2 * GROUPS);
    float half = 0.5f;
    pm_blend_space_job job = pm_default_blend_space_job();
    job.space = s, job.params = &half, job.scratch = scratch, job.scratch_count = 2 * GROUPS;
    job.output = out, job.output_count = GROUPS;
    for (int c = 1; c <= 4; c++) {
        float y[3];
        const float at[3] = {(float)c - 2e-3f, (float)c, (float)c + 2e-3f};
        for (int k = 0; k < 3; k++) {
            job.phase = at[k];
            PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
            y[k] = pm_pose_translation(out, LFOOT).y + 0.9f;
        }
        assert_true(fabsf(y[0] - y[1]) < 2e-3f && fabsf(y[2] - y[1]) < 2e-3f);
        assert_true(y[1] < 0.05f); /* touching down (the touchdown is found a little before the stride starts) */
    }
    /* The root walks on through the whole period (two cycles), though the run wraps at phase 1:
     * its root is carried on by its loop's move. Phase 2 ends the period, both samples two strides
     * (2 m) on; beyond it the blend starts again. */
    float z[5];
    const float at[5] = {0.0f, 1.0f - 1e-3f, 1.0f, 1.0f + 1e-3f, 2.0f};
    for (int k = 0; k < 5; k++) {
        job.phase = at[k];
        PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
        z[k] = pm_pose_translation(out, HIPS).z;
    }
    assert_true(fabsf(z[2] - z[0] - 1.0f) < 0.02f);
    assert_true(fabsf(z[1] - z[2]) < 0.01f && fabsf(z[3] - z[2]) < 0.01f);
    assert_true(fabsf(z[4] - z[0] - 2.0f) < 0.02f);
    job.phase = 2.5f;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    float wrapped = pm_pose_translation(out, HIPS).z;
    job.phase = 0.5f;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    assert_true(fabsf(wrapped - pm_pose_translation(out, HIPS).z) < 1e-5f);
    /* A negative phase counts back from the wrap's end (blend_space.h): -0.5 is 1.5, the whole
     * pose, bit for bit. */
    pm_soa_transform back[GROUPS];
    job.phase = -0.5f, job.output = back;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    job.phase = 1.5f, job.output = out;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    assert_memory_equal(back, out, sizeof out);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&walk);
    pm_clip_destroy(&run);
}

/* At parameter `at` of the 1D space s: the blend's period must be `period` cycles; it is baked
 * at 30 fps into `baked`. */
static void bake_period(pm_clip *baked, const pm_blend_space *s, float at, int period) {
    pm_blend_space_weights w;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, s, &at, NULL));
    assert_int_equal(pm_blend_space_period(s, &w), period);
    PM_ASSERT_OK(pm_blend_space_bake(baked, s, &at, 30.0f, NULL));
}

/* The blend repeats after the least common multiple of the samples' cycle counts; beyond
 * PM_BLEND_SPACE_MAX_PERIOD (unless that is one sample's own count) it is baked as a one-shot of
 * the most cycles any sample has. */
static void test_period_of_the_blend(void **state) {
    (void)state;
    const int lens[7] = {30, 30, 30, 30, 30, 30, 30};
    pm_clip two, three, five, seven;
    make_walk(&two, lens, 2, 0, 0.15f);
    make_walk(&three, lens, 3, 0, 0.15f);
    make_walk(&five, lens, 5, 0, 0.15f);
    make_walk(&seven, lens, 7, 0, 0.15f);
    const float half = 0.5f, one = 1.0f;
    pm_clip baked;

    pm_blend_space *s = two_sample_space(&two, &three, PM_BLEND_SYNC_FEET);
    bake_period(&baked, s, half, 6);
    assert_true(baked.looping);
    assert_int_equal(baked.frame_count, 180);
    pm_clip_destroy(&baked);
    /* On a sample: its own cycles, its own clip. */
    bake_period(&baked, s, one, 3);
    assert_int_equal(baked.frame_count, 90);
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(s);

    /* A period beyond PM_BLEND_SPACE_MAX_PERIOD: a one-shot of the seven cycles, its root carried
     * on at every wrap of the five-stride sample (strides of 1 m: no jump between frames). */
    s = two_sample_space(&five, &seven, PM_BLEND_SYNC_FEET);
    bake_period(&baked, s, half, 35);
    assert_false(baked.looping);
    assert_int_equal(baked.frame_count, 7 * 30 + 1);
    for (int f = 1; f < baked.frame_count; f++) {
        float step = baked.translations[(size_t)f * JOINTS + HIPS].z - baked.translations[(size_t)(f - 1) * JOINTS + HIPS].z;
        assert_true(fabsf(step - 1.0f / 30.0f) < 0.01f);
    }
    pm_clip_destroy(&baked);
    /* On the seven-stride sample alone its period is its own cycles, however many: a loop. */
    bake_period(&baked, s, one, 7);
    assert_true(baked.looping);
    assert_int_equal(baked.frame_count, 7 * 30);
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(s);
    /* ... even past PM_BLEND_SPACE_MAX_PERIOD: a sample of 17 strides baked alone loops. */
    const int lens17[17] = {20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20};
    pm_clip seventeen;
    make_walk(&seventeen, lens17, 17, 0, 0.15f);
    s = two_sample_space(&two, &seventeen, PM_BLEND_SYNC_FEET);
    bake_period(&baked, s, one, 17);
    assert_true(baked.looping);
    assert_int_equal(baked.frame_count, 17 * 20);
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&seventeen);

    /* With a one-shot sample the blend runs from phase 0 to 1 once: period 1, one cycle baked. */
    pm_clip once;
    PM_ASSERT_OK(pm_clip_copy(&once, &three, NULL, NULL));
    once.looping = 0;
    s = two_sample_space(&two, &once, PM_BLEND_SYNC_FEET);
    bake_period(&baked, s, half, 1);
    assert_false(baked.looping);
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&once);

    /* Malformed weights and out-of-range samples. */
    pm_blend_space_weights w;
    memset(&w, 0, sizeof w);
    assert_int_equal(pm_blend_space_period(NULL, &w), 0);
    w.count = 0;
    assert_int_equal(pm_blend_space_period(s = two_sample_space(&two, &three, PM_BLEND_SYNC_FEET), &w), 0);
    assert_true(pm_blend_space_cycle_duration(s, &w, 0) == 0.0f);
    assert_int_equal(pm_blend_space_sample_cycles(s, 2), 0);
    assert_int_equal(pm_blend_space_sample_cycles(s, -1), 0);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&two);
    pm_clip_destroy(&three);
    pm_clip_destroy(&five);
    pm_clip_destroy(&seven);
}

/* Strides are only counted where they are trustworthy: a foot that barely lifts (a shuffle, an
 * idle's sway) or strides of very different lengths leave the clip one cycle, as does any sync
 * but feet. */
static void test_cycles_only_from_real_strides(void **state) {
    (void)state;
    const int even[2] = {40, 40}, uneven[2] = {40, 12};
    pm_clip shuffle, limp, walk;
    make_walk(&shuffle, even, 2, 0, 0.01f);
    make_walk(&limp, uneven, 2, 0, 0.15f);
    make_walk(&walk, even, 2, 0, 0.15f);
    pm_blend_space *s = two_sample_space(&shuffle, &limp, PM_BLEND_SYNC_FEET);
    assert_int_equal(pm_blend_space_sample_cycles(s, 0), 1);
    assert_int_equal(pm_blend_space_sample_cycles(s, 1), 1);
    pm_blend_space_destroy(s);
    s = two_sample_space(&walk, &limp, PM_BLEND_SYNC_FEET);
    assert_int_equal(pm_blend_space_sample_cycles(s, 0), 2);
    pm_blend_space_destroy(s);
    s = two_sample_space(&walk, &limp, PM_BLEND_SYNC_NONE);
    assert_int_equal(pm_blend_space_sample_cycles(s, 0), 1);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&shuffle);
    pm_clip_destroy(&limp);
    pm_clip_destroy(&walk);
}

/* Root motion over several cycles is blended as motion on the ground: a walk that curves (a
 * radian per stride, three strides) blended 50/50 with a straight one (two strides) turns half a
 * radian in every blended cycle of its six - where averaging world placements leaves the two
 * samples facing apart after a few strides, their mean standing still and flipping round. */
static void test_curving_and_straight_strides_turn_halfway(void **state) {
    (void)state;
    const int lens[3] = {40, 40, 40};
    const float turn = 1.0f, radius = 1.0f / turn;
    pm_clip curve, straight;
    make_walk(&curve, lens, 3, 0, 0.15f);
    make_walk(&straight, lens, 2, 0, 0.15f);
    for (int f = 0; f < curve.frame_count; f++) {
        float a = turn * (float)f / 40.0f;
        curve.translations[(size_t)f * JOINTS + HIPS] = pm_vec3_make(radius * (1.0f - cosf(a)), 1.0f, radius * sinf(a));
        curve.rotations[(size_t)f * JOINTS + HIPS] = pm_quat_from_yaw(a);
    }
    pm_blend_space *s = two_sample_space(&curve, &straight, PM_BLEND_SYNC_FEET);
    assert_int_equal(pm_blend_space_sample_cycles(s, 0), 3);
    assert_int_equal(pm_blend_space_sample_cycles(s, 1), 2);
    float half = 0.5f;
    pm_clip baked;
    PM_ASSERT_OK(pm_blend_space_bake(&baked, s, &half, 30.0f, NULL));
    assert_int_equal(baked.frame_count, 240);
    float worst_turn = 0.0f, worst_cycle = 0.0f, prev = 0.0f, start = 0.0f;
    for (int f = 0; f < baked.frame_count; f++) {
        pm_quat q = baked.rotations[(size_t)f * JOINTS + HIPS];
        float yaw = 2.0f * atan2f(q.y, q.w);
        if (f == 0) start = yaw;
        else worst_turn = fmaxf(worst_turn, fabsf(remainderf(yaw - prev, 2.0f * PM_PI)));
        if (f % 40 == 0) worst_cycle = fmaxf(worst_cycle, fabsf(remainderf(yaw - start - 0.5f * (float)(f / 40), 2.0f * PM_PI)));
        prev = yaw;
    }
    printf("50/50 of a curving and a straight walk over six cycles: heading off half a radian per cycle by at most "
           "%.4f rad, largest turn between frames %.4f rad\n", (double)worst_cycle, (double)worst_turn);
    assert_true(worst_cycle < 0.02f);
    assert_true(worst_turn < 0.03f); /* a frame's share of the turn is 0.5 / 40 */
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&curve);
    pm_clip_destroy(&straight);
}

/* make_walk's clip under a new root joint "Root": `carry` 0 leaves the motion in the hips under a
 * still Root turned by `turn` (a Z-up file's dummy root reads back turned -90 degrees about x);
 * `carry` 1 moves the motion on the ground (heading, floor position) into the Root, as rigs that
 * carry root motion in their root joint do. The world pose is the same. */
static void under_root(pm_clip *out, const pm_clip *c, int carry, pm_quat turn) {
    pm_skeleton s;
    PM_ASSERT_OK(pm_skeleton_create(&s, JOINTS + 1, NULL, NULL));
    PM_ASSERT_OK(pm_skeleton_set_name(&s, 0, "Root", NULL));
    s.parents[0] = -1;
    for (int j = 0; j < JOINTS; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(&s, j + 1, c->skeleton.names[j], NULL));
        s.parents[j + 1] = c->skeleton.parents[j] + 1;
        s.rest_translations[j + 1] = c->skeleton.rest_translations[j];
    }
    PM_ASSERT_OK(pm_clip_create(out, &s, c->frame_count, c->frame_time, NULL, NULL));
    pm_skeleton_destroy(&s);
    out->looping = c->looping;
    for (int f = 0; f < c->frame_count; f++) {
        size_t a = (size_t)f * JOINTS, b = (size_t)f * (JOINTS + 1);
        for (int j = 0; j < JOINTS; j++) {
            out->rotations[b + 1 + j] = c->rotations[a + j];
            out->translations[b + 1 + j] = c->translations[a + j];
        }
        pm_transform hips = {c->rotations[a + HIPS], c->translations[a + HIPS]}, root = {turn, pm_vec3_zero()};
        if (carry) {
            pm_vec3 fwd = pm_quat_rotate(hips.rotation, pm_vec3_make(0.0f, 0.0f, 1.0f));
            root.rotation = pm_quat_from_yaw(atan2f(fwd.x, fwd.z));
            root.translation = pm_vec3_make(hips.translation.x, 0.0f, hips.translation.z);
        }
        pm_transform local = pm_transform_mul(pm_transform_inverse(root), hips);
        out->rotations[b] = root.rotation, out->translations[b] = root.translation;
        out->rotations[b + 1 + HIPS] = local.rotation, out->translations[b + 1 + HIPS] = local.translation;
    }
}

/* Root motion blends the same whichever joint carries it: the curving and straight walks of the
 * test above, under a still root turned -90 degrees about x, or with the curving one's motion in
 * its root joint and the straight one's in its hips, give the hips the same path. */
static void test_root_motion_in_any_joint(void **state) {
    (void)state;
    const int lens[3] = {40, 40, 40};
    pm_clip curve, straight;
    make_walk(&curve, lens, 3, 0, 0.15f);
    make_walk(&straight, lens, 2, 0, 0.15f);
    for (int f = 0; f < curve.frame_count; f++) {
        float a = (float)f / 40.0f;
        curve.translations[(size_t)f * JOINTS + HIPS] = pm_vec3_make(1.0f - cosf(a), 1.0f, sinf(a));
        curve.rotations[(size_t)f * JOINTS + HIPS] = pm_quat_from_yaw(a);
    }
    float half = 0.5f;
    pm_clip plain;
    pm_blend_space *s = two_sample_space(&curve, &straight, PM_BLEND_SYNC_FEET);
    PM_ASSERT_OK(pm_blend_space_bake(&plain, s, &half, 30.0f, NULL));
    pm_blend_space_destroy(s);
    const pm_quat tilted = pm_quat_from_axis_angle(pm_vec3_make(1.0f, 0.0f, 0.0f), -0.5f * PM_PI);
    for (int variant = 0; variant < 2; variant++) {
        pm_clip c2, s2, baked;
        under_root(&c2, &curve, variant, variant ? pm_quat_identity() : tilted);
        under_root(&s2, &straight, 0, variant ? pm_quat_identity() : tilted);
        s = two_sample_space(&c2, &s2, PM_BLEND_SYNC_FEET);
        PM_ASSERT_OK(pm_blend_space_bake(&baked, s, &half, 30.0f, NULL));
        assert_int_equal(baked.frame_count, plain.frame_count);
        pm_transform wp[JOINTS], wb[JOINTS + 1];
        float worst = 0.0f;
        for (int f = 0; f < plain.frame_count; f++) {
            PM_ASSERT_OK(pm_clip_frame_world(wp, &plain, f, NULL));
            PM_ASSERT_OK(pm_clip_frame_world(wb, &baked, f, NULL));
            worst = fmaxf(worst, pm_vec3_length(pm_vec3_sub(wp[HIPS].translation, wb[1 + HIPS].translation)));
        }
        printf("%s: hips path %.5f m from the plain rig's at most\n", variant ? "root carries the curve" : "still tilted root",
               (double)worst);
        assert_true(worst < 1e-3f);
        if (variant == 1) {
            /* The root joint carries as much root motion as the samples that keep it there weigh:
             * a thousandth of the curving walk's weight moves it a hair, not all the way. */
            enum { G = (JOINTS + 1 + 3) / 4 };
            pm_soa_transform scratch[2 * G], out[G];
            pm_blend_space_job job = pm_default_blend_space_job();
            job.space = s, job.scratch = scratch, job.scratch_count = 2 * G, job.output = out, job.output_count = G;
            job.phase = 2.4f;
            float at[2] = {1.0f, 0.999f};
            pm_vec3 root[2];
            for (int k = 0; k < 2; k++) {
                job.params = &at[k];
                PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
                root[k] = pm_pose_translation(out, 0);
            }
            assert_true(pm_vec3_length(pm_vec3_sub(root[0], root[1])) < 0.01f);
        }
        pm_clip_destroy(&baked);
        pm_blend_space_destroy(s);
        pm_clip_destroy(&c2);
        pm_clip_destroy(&s2);
    }
    pm_clip_destroy(&plain);
    pm_clip_destroy(&curve);
    pm_clip_destroy(&straight);
}

/* Samples placed as recorded ("align": "none") facing 0, 170 and -170 degrees along a line: the
 * last two are 20 degrees apart and blend the short way round (facing 180 degrees), not through
 * 0 - headings are unwrapped across the space's cells, each within half a turn of its neighbour. */
static void test_start_headings_blend_the_short_way(void **state) {
    (void)state;
    const int len = FRAMES;
    const float yaws[3] = {0.0f, 170.0f * PM_PI / 180.0f, -170.0f * PM_PI / 180.0f};
    pm_clip clips[3];
    pm_blend_sample_def samples[3];
    for (int k = 0; k < 3; k++) {
        make_walk(&clips[k], &len, 1, 0, 0.15f);
        pm_quat turn = pm_quat_from_yaw(yaws[k]);
        for (int f = 0; f < FRAMES; f++) {
            size_t h = (size_t)f * JOINTS + HIPS;
            clips[k].rotations[h] = pm_quat_mul(turn, clips[k].rotations[h]);
            clips[k].translations[h] = pm_quat_rotate(turn, clips[k].translations[h]);
        }
        samples[k] = pm_default_blend_sample_def();
        samples[k].clip = &clips[k];
        samples[k].params[0] = (float)k;
    }
    pm_blend_space_def def = pm_default_blend_space_def();
    def.samples = samples, def.sample_count = 3, def.align = PM_BLEND_ALIGN_NONE;
    pm_blend_space *s = NULL;
    PM_ASSERT_OK(pm_blend_space_create(&s, &def, NULL));
    enum { G = (JOINTS + 3) / 4 };
    pm_soa_transform scratch[2 * G], out[G];
    pm_blend_space_job job = pm_default_blend_space_job();
    float x = 1.5f;
    job.space = s, job.params = &x, job.phase = 0.0f;
    job.scratch = scratch, job.scratch_count = 2 * G, job.output = out, job.output_count = G;
    PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
    pm_quat q = pm_pose_rotation(out, HIPS);
    float yaw = 2.0f * atan2f(q.y, q.w);
    printf("samples facing 170 and -170 degrees, 50/50: facing %.1f degrees\n", (double)(yaw * 180.0f / PM_PI));
    assert_true(fabsf(remainderf(yaw - PM_PI, 2.0f * PM_PI)) < 0.02f);
    pm_blend_space_destroy(s);
    for (int k = 0; k < 3; k++) pm_clip_destroy(&clips[k]);
}

/* The root walks on through every cycle of the phase wrap, however many: here a two-stride walk
 * blended in a space whose three-stride sample makes the wrap 6. On the walk alone (period 2)
 * the phases past the first period skip whole periods at once rather than walk cycle by cycle;
 * each phase's hips are still exactly one stride (1 m) further than the phase before, and a
 * whole wrap on the phase is the start again. */
static void test_root_walks_on_through_the_wrap(void **state) {
    (void)state;
    const int lens[3] = {30, 30, 30};
    pm_clip two, three;
    make_walk(&two, lens, 2, 0, 0.15f);
    make_walk(&three, lens, 3, 0, 0.15f);
    pm_blend_space *s = two_sample_space(&two, &three, PM_BLEND_SYNC_FEET);
    assert_int_equal(pm_blend_space_phase_wrap(s), 6);
    enum { GROUPS = (JOINTS + 3) / 4 };
    pm_soa_transform scratch[2 * GROUPS], out[GROUPS];
    float at = 0.0f;
    pm_blend_space_job job = pm_default_blend_space_job();
    job.space = s, job.params = &at, job.scratch = scratch, job.scratch_count = 2 * GROUPS;
    job.output = out, job.output_count = GROUPS;
    float z[7];
    for (int k = 0; k < 7; k++) {
        job.phase = 0.25f + (float)k;
        PM_ASSERT_OK(pm_blend_space_job_run(&job, NULL));
        z[k] = pm_pose_translation(out, HIPS).z;
        assert_true(fabsf(pm_pose_translation(out, HIPS).x) < 1e-4f);
    }
    for (int k = 1; k < 6; k++)
        if (fabsf(z[k] - z[k - 1] - 1.0f) > 1e-3f)
            fail_msg("phase %g: hips at %g, phase %g: %g", 0.25 + k - 1, (double)z[k - 1], 0.25 + k, (double)z[k]);
    assert_true(fabsf(z[6] - z[0]) < 1e-5f);
    pm_blend_space_destroy(s);
    pm_clip_destroy(&two);
    pm_clip_destroy(&three);
}

/* A sample clip's curves do not take part in the blend: it is the same bits with them as
 * without. */
static void test_samples_with_curves_blend_alike(void **state) {
    (void)state;
    pm_clip a, b, curved;
    make_stride(&a, 13);
    make_stride(&b, 5);
    PM_ASSERT_OK(pm_clip_copy(&curved, &a, NULL, NULL));
    float speed[FRAMES];
    for (int f = 0; f < FRAMES; f++) speed[f] = (float)f;
    PM_ASSERT_OK(pm_clip_add_curve(&curved, "speed", speed, NULL));
    pm_blend_space *plain = two_sample_space(&a, &b, PM_BLEND_SYNC_FEET);
    pm_blend_space *with = two_sample_space(&curved, &b, PM_BLEND_SYNC_FEET);
    float half = 0.5f;
    pm_clip x, y;
    PM_ASSERT_OK(pm_blend_space_bake(&x, plain, &half, 30.0f, NULL));
    PM_ASSERT_OK(pm_blend_space_bake(&y, with, &half, 30.0f, NULL));
    assert_int_equal(x.frame_count, y.frame_count);
    assert_memory_equal(x.rotations, y.rotations, (size_t)x.frame_count * JOINTS * sizeof(pm_quat));
    assert_memory_equal(x.translations, y.translations, (size_t)x.frame_count * JOINTS * sizeof(pm_vec3));
    pm_clip_destroy(&x);
    pm_clip_destroy(&y);
    pm_blend_space_destroy(plain);
    pm_blend_space_destroy(with);
    pm_clip_destroy(&curved);
    pm_clip_destroy(&a);
    pm_clip_destroy(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feet_sync_restarts_cycles),
        cmocka_unit_test(test_sync_none_loops_only_when_lengths_agree),
        cmocka_unit_test(test_sync_none_does_not_wrap_phases),
        cmocka_unit_test(test_feet_sync_keeps_a_turning_loop_smooth),
        cmocka_unit_test(test_samples_of_several_strides_keep_feet_in_step),
        cmocka_unit_test(test_cycles_join_without_a_jump),
        cmocka_unit_test(test_period_of_the_blend),
        cmocka_unit_test(test_cycles_only_from_real_strides),
        cmocka_unit_test(test_curving_and_straight_strides_turn_halfway),
        cmocka_unit_test(test_root_motion_in_any_joint),
        cmocka_unit_test(test_start_headings_blend_the_short_way),
        cmocka_unit_test(test_root_walks_on_through_the_wrap),
        cmocka_unit_test(test_samples_with_curves_blend_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

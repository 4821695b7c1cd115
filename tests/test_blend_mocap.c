/* Blending on real motion capture (../shared/mocap): a walk/run blend space keeps the root speed
 * between its sources, mirrored clips work as samples, the JSON loader reads real files, and
 * layered blends mask the rigs of each naming scheme. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blend_space_json.h"
#include "support.h"

#define WALK "bandai-namco/dataset-2/dataset-2_walk_normal_001.bvh" /* 9.1 s, ~1.2 m/s */
#define RUN "bandai-namco/dataset-2/dataset-2_run_normal_010.bvh"   /* 2.7 s, ~3.2 m/s */
#define TURN "bandai-namco/dataset-2/dataset-2_walk-turn-left_normal_006.bvh"
#define TURN_RIGHT "bandai-namco/dataset-2/dataset-2_walk-turn-right_normal_006.bvh"

static void read_clip(pm_clip *clip, const char *rel) {
    pm_error e;
    if (pm_bvh_read_file(clip, pm_test_mocap_path(rel), NULL, &e) != PM_OK) fail_msg("%s: %s", rel, e.message);
}

/* Mean horizontal hips speed over the clip, m/s. */
static float hips_speed(const pm_clip *clip) {
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &clip->skeleton);
    assert_true(roles.hips >= 0);
    pm_transform *w = malloc(sizeof(pm_transform) * (size_t)clip->skeleton.joint_count);
    PM_ASSERT_OK(pm_clip_frame_world(w, clip, 0, NULL));
    pm_vec3 a = w[roles.hips].translation;
    PM_ASSERT_OK(pm_clip_frame_world(w, clip, clip->frame_count - 1, NULL));
    pm_vec3 b = w[roles.hips].translation;
    free(w);
    float d = hypotf(b.x - a.x, b.z - a.z);
    return d / ((float)(clip->frame_count - 1) * clip->frame_time);
}

static pm_blend_space *walk_run_space(const pm_clip *walk, const pm_clip *run) {
    pm_blend_sample_def s[2] = {pm_default_blend_sample_def(), pm_default_blend_sample_def()};
    s[0].clip = walk;
    s[0].name = "walk";
    s[0].params[0] = 1.2f;
    s[1].clip = run;
    s[1].name = "run";
    s[1].params[0] = 3.2f;
    pm_blend_space_def def = pm_default_blend_space_def();
    def.name = "locomotion";
    def.dimensions = 1;
    def.axis_names[0] = "speed";
    def.axis_min[0] = 0.0f;
    def.axis_max[0] = 4.0f;
    def.samples = s;
    def.sample_count = 2;
    pm_blend_space *space;
    pm_error e;
    if (pm_blend_space_create(&space, &def, &e) != PM_OK) fail_msg("create: %s", e.message);
    return space;
}

static void test_walk_run_root_speed(void **state) {
    (void)state;
    pm_clip walk, run;
    read_clip(&walk, WALK);
    read_clip(&run, RUN);
    pm_blend_space *space = walk_run_space(&walk, &run);
    float speeds[5];
    const float params[5] = {1.2f, 1.7f, 2.2f, 2.7f, 3.2f};
    for (int i = 0; i < 5; i++) {
        pm_clip baked;
        PM_ASSERT_OK(pm_blend_space_bake(&baked, space, &params[i], 30.0f, NULL));
        PM_ASSERT_OK(pm_clip_validate(&baked, NULL));
        speeds[i] = hips_speed(&baked);
        /* Aligned: every blend starts above the origin. */
        pm_skeleton_roles roles;
        pm_skeleton_find_roles(&roles, &baked.skeleton);
        pm_transform *w = malloc(sizeof(pm_transform) * (size_t)baked.skeleton.joint_count);
        PM_ASSERT_OK(pm_clip_frame_world(w, &baked, 0, NULL));
        assert_true(hypotf(w[roles.hips].translation.x, w[roles.hips].translation.z) < 0.15f);
        free(w);
        pm_clip_destroy(&baked);
    }
    float walk_speed = hips_speed(&walk), run_speed = hips_speed(&run);
    printf("hips speed: walk %.3f, run %.3f; blends %.3f %.3f %.3f %.3f %.3f m/s\n", (double)walk_speed, (double)run_speed,
           (double)speeds[0], (double)speeds[1], (double)speeds[2], (double)speeds[3], (double)speeds[4]);
    /* The ends reproduce the sources; in between the speed lies strictly between and rises with
     * the parameter. */
    assert_true(fabsf(speeds[0] - walk_speed) < 0.02f * walk_speed);
    assert_true(fabsf(speeds[4] - run_speed) < 0.02f * run_speed);
    for (int i = 1; i < 4; i++) {
        assert_true(speeds[i] > walk_speed && speeds[i] < run_speed);
        assert_true(speeds[i] > speeds[i - 1]);
    }
    pm_blend_space_destroy(space);
    pm_clip_destroy(&walk);
    pm_clip_destroy(&run);
}

/* The audit's case on real clips: a looping walk blended with a one-shot run. The blend does not
 * loop and is baked to phase 1, where the walk is at its cycle's end: the hips move on at their
 * pace on the last frame instead of jumping back by the walk's whole displacement. */
static void test_mixed_looping_root(void **state) {
    (void)state;
    pm_clip full, walk, run;
    read_clip(&full, WALK);
    read_clip(&run, RUN);
    /* About one gait cycle, as a looping sample is usually trimmed. */
    PM_ASSERT_OK(pm_clip_trim(&walk, &full, 30, 36, NULL));
    pm_clip_destroy(&full);
    walk.looping = 1;
    pm_blend_space *space = walk_run_space(&walk, &run);
    float p = 2.0f;
    pm_clip baked;
    PM_ASSERT_OK(pm_blend_space_bake(&baked, space, &p, 30.0f, NULL));
    assert_false(baked.looping);
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &baked.skeleton);
    pm_transform *w = malloc(sizeof(pm_transform) * (size_t)baked.skeleton.joint_count);
    int n = baked.frame_count;
    float prev[2] = {0, 0}, steps[3];
    for (int k = 0; k < 4; k++) {
        PM_ASSERT_OK(pm_clip_frame_world(w, &baked, n - 4 + k, NULL));
        pm_vec3 h = w[roles.hips].translation;
        if (k > 0) steps[k - 1] = hypotf(h.x - prev[0], h.z - prev[1]);
        prev[0] = h.x;
        prev[1] = h.z;
    }
    free(w);
    printf("hips steps over the last frames: %.4f %.4f %.4f m\n", (double)steps[0], (double)steps[1], (double)steps[2]);
    /* About 2 m/s at 30 fps: steps of a few centimetres, the last like the ones before. */
    assert_true(steps[0] > 0.02f && steps[0] < 0.15f);
    assert_true(steps[2] < 2.0f * steps[0] + 0.01f && steps[2] > 0.5f * steps[0]);
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(space);
    pm_clip_destroy(&walk);
    pm_clip_destroy(&run);
}

/* Mean horizontal hips speed along the path, m/s: ground distances over steps of `step` frames
 * (long enough to skip the sway of each stride), so a walk that turns keeps its pace. */
static float hips_path_speed(const pm_clip *clip, int step) {
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &clip->skeleton);
    assert_true(roles.hips >= 0);
    pm_transform *w = malloc(sizeof(pm_transform) * (size_t)clip->skeleton.joint_count);
    float path = 0.0f, px = 0.0f, pz = 0.0f;
    int last = 0;
    for (int f = 0; f < clip->frame_count; f += step) {
        PM_ASSERT_OK(pm_clip_frame_world(w, clip, f, NULL));
        pm_vec3 h = w[roles.hips].translation;
        if (f > 0) path += hypotf(h.x - px, h.z - pz);
        px = h.x, pz = h.z, last = f;
    }
    free(w);
    return path / ((float)last * clip->frame_time);
}

/* The longest horizontal hips step from one frame to the next, m. */
static float hips_longest_step(const pm_clip *clip) {
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &clip->skeleton);
    pm_transform *w = malloc(sizeof(pm_transform) * (size_t)clip->skeleton.joint_count);
    float most = 0.0f, px = 0.0f, pz = 0.0f;
    for (int f = 0; f < clip->frame_count; f++) {
        PM_ASSERT_OK(pm_clip_frame_world(w, clip, f, NULL));
        pm_vec3 h = w[roles.hips].translation;
        if (f > 0) most = fmaxf(most, hypotf(h.x - px, h.z - pz));
        px = h.x, pz = h.z;
    }
    free(w);
    return most;
}

/* Two one-shots whose paths part: a walk turning 90 degrees left and one turning right. Their
 * root motion blends per slice of the clip (a one-shot is one cycle of many slices), so at 50/50
 * the hips walk straight on at the samples' pace over the whole clip. Blended as one displacement
 * from the clip's start they cancelled sideways and the blend nearly stopped after the turn while
 * the legs kept stepping (0.62 m/s against about 1.01 for each sample). */
static void test_one_shot_turns_keep_their_speed(void **state) {
    (void)state;
    pm_clip left, right;
    read_clip(&left, TURN);
    read_clip(&right, TURN_RIGHT);
    assert_false(left.looping || right.looping);
    pm_blend_space *space = walk_run_space(&left, &right); /* left at 1.2, right at 3.2 */
    float p = 2.2f;
    pm_clip baked;
    PM_ASSERT_OK(pm_blend_space_bake(&baked, space, &p, 30.0f, NULL));
    PM_ASSERT_OK(pm_clip_validate(&baked, NULL));
    int step = (int)lrintf(0.25f / baked.frame_time);
    float sl = hips_path_speed(&left, (int)lrintf(0.25f / left.frame_time));
    float sr = hips_path_speed(&right, (int)lrintf(0.25f / right.frame_time));
    float sb = hips_path_speed(&baked, step), mean = 0.5f * (sl + sr);
    /* And over the clip's last half, after the turn, where the blend used to stop. */
    pm_clip tail;
    PM_ASSERT_OK(pm_clip_trim(&tail, &baked, baked.frame_count / 2, baked.frame_count - baked.frame_count / 2, NULL));
    float st = hips_path_speed(&tail, step);
    printf("one-shot turns: hips %.3f (left) %.3f (right) m/s; 50/50 blend %.3f m/s, %.3f over its last half\n",
           (double)sl, (double)sr, (double)sb, (double)st);
    assert_true(fabsf(sb - mean) < 0.15f * mean);
    assert_true(fabsf(st - mean) < 0.15f * mean);
    /* No jump where a slice ends: no frame's hips step is far beyond the samples' longest. */
    float most = fmaxf(hips_longest_step(&left), hips_longest_step(&right)), worst = hips_longest_step(&baked);
    printf("longest hips step a frame: samples %.4f m, blend %.4f m\n", (double)most, (double)worst);
    assert_true(worst < 1.25f * most);
    pm_clip_destroy(&tail);
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(space);
    pm_clip_destroy(&left);
    pm_clip_destroy(&right);
}

/* A walk that turns left (three strides, about 90 degrees) blended with a straight walk (two
 * strides) over their six-cycle period: root motion blended on the ground curves steadily - no
 * heading flip, the hips walking on at a walk's pace - where averaging world placements had the
 * two walkers facing apart after a few strides and their mean turning on the spot. */
static void test_turning_and_straight_walks(void **state) {
    (void)state;
    pm_clip full, turn, walk;
    read_clip(&full, TURN);
    PM_ASSERT_OK(pm_clip_trim(&turn, &full, 45, 90, NULL)); /* 1.5 - 4.5 s */
    pm_clip_destroy(&full);
    read_clip(&full, WALK);
    PM_ASSERT_OK(pm_clip_trim(&walk, &full, 30, 66, NULL)); /* 1.0 - 3.2 s */
    pm_clip_destroy(&full);
    turn.looping = walk.looping = 1;
    pm_blend_space *space = walk_run_space(&turn, &walk); /* turn at 1.2, walk at 3.2 */
    float mid = 2.2f;
    pm_blend_space_weights w;
    PM_ASSERT_OK(pm_blend_space_weights_at(&w, space, &mid, NULL));
    assert_int_equal(pm_blend_space_period(space, &w), 6);
    pm_clip baked;
    PM_ASSERT_OK(pm_blend_space_bake(&baked, space, &mid, 30.0f, NULL));
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &baked.skeleton);
    pm_transform *wt = malloc(sizeof(pm_transform) * (size_t)baked.skeleton.joint_count);
    assert_non_null(wt);
    float prev_yaw = 0.0f, px = 0.0f, pz = 0.0f, worst_turn = 0.0f, total_turn = 0.0f, walked = 0.0f;
    for (int f = 0; f < baked.frame_count; f++) {
        PM_ASSERT_OK(pm_clip_frame_world(wt, &baked, f, NULL));
        pm_vec3 d = pm_vec3_sub(wt[roles.right_upleg].translation, wt[roles.left_upleg].translation);
        float yaw = atan2f(-d.z, d.x);
        pm_vec3 h = wt[roles.hips].translation;
        if (f > 0) {
            float t = fabsf(remainderf(yaw - prev_yaw, 2.0f * PM_PI));
            worst_turn = fmaxf(worst_turn, t);
            total_turn += t;
            walked += hypotf(h.x - px, h.z - pz);
        }
        prev_yaw = yaw, px = h.x, pz = h.z;
    }
    free(wt);
    float mean_turn = total_turn / (float)(baked.frame_count - 1);
    float speed = walked / ((float)(baked.frame_count - 1) * baked.frame_time);
    printf("turning and straight walks over six cycles: hips %.3f m/s, heading change per frame %.2f deg mean, "
           "%.2f deg at most\n", (double)speed, (double)(mean_turn * 180.0f / PM_PI), (double)(worst_turn * 180.0f / PM_PI));
    assert_true(worst_turn < 0.1f); /* under 6 degrees a frame: no flip */
    assert_true(speed > 0.9f);      /* the walks' pace (about 1.1 m/s), not a shuffle on the spot */
    pm_clip_destroy(&baked);
    pm_blend_space_destroy(space);
    pm_clip_destroy(&turn);
    pm_clip_destroy(&walk);
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Height of the left foot over a clip's frames (followed by the same heights sorted), and its
 * range (10th to 90th percentile). */
static float *left_foot_heights(const pm_clip *clip, float *lo, float *hi) {
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &clip->skeleton);
    assert_true(roles.left_foot >= 0);
    int n = clip->frame_count;
    float *h = malloc(sizeof(float) * (size_t)n * 2);
    pm_transform *w = malloc(sizeof(pm_transform) * (size_t)clip->skeleton.joint_count);
    assert_non_null(h);
    assert_non_null(w);
    for (int f = 0; f < n; f++) {
        PM_ASSERT_OK(pm_clip_frame_world(w, clip, f, NULL));
        h[f] = h[n + f] = w[roles.left_foot].translation.y;
    }
    free(w);
    qsort(h + n, (size_t)n, sizeof(float), cmp_float);
    *lo = h[n + n / 10];
    *hi = h[n + (9 * n) / 10];
    return h;
}

/* Samples trimmed to several strides, as takes often are: a walk of two strides is cut into two
 * gait cycles at its left foot's touchdowns and a run of one stays one, so at every whole phase
 * of their blend both touch down with the left foot - where a phase normalised over whole clips
 * has the walk at its second touchdown while the run is mid-stride - and the hips walk on
 * where the run wraps and the walk does not. */
static void test_walk_of_two_strides_with_a_run_of_one(void **state) {
    (void)state;
    pm_clip full, walk, run;
    read_clip(&full, WALK);
    PM_ASSERT_OK(pm_clip_trim(&walk, &full, 30, 66, NULL)); /* 2.2 s: two strides */
    pm_clip_destroy(&full);
    read_clip(&full, RUN);
    PM_ASSERT_OK(pm_clip_trim(&run, &full, 24, 21, NULL)); /* 0.7 s: one stride */
    pm_clip_destroy(&full);
    walk.looping = run.looping = 1;
    float mid = 2.2f, low[2];
    for (int k = 0; k < 2; k++) {
        pm_blend_space *space = walk_run_space(&walk, &run);
        if (k == 1) {
            pm_blend_space_destroy(space);
            pm_blend_sample_def s[2] = {pm_default_blend_sample_def(), pm_default_blend_sample_def()};
            s[0].clip = &walk, s[0].params[0] = 1.2f;
            s[1].clip = &run, s[1].params[0] = 3.2f;
            pm_blend_space_def def = pm_default_blend_space_def();
            def.samples = s, def.sample_count = 2, def.sync = PM_BLEND_SYNC_PHASE;
            PM_ASSERT_OK(pm_blend_space_create(&space, &def, NULL));
        }
        assert_int_equal(pm_blend_space_sample_cycles(space, 0), k == 0 ? 2 : 1);
        assert_int_equal(pm_blend_space_sample_cycles(space, 1), 1);
        pm_blend_space_weights w;
        PM_ASSERT_OK(pm_blend_space_weights_at(&w, space, &mid, NULL));
        pm_clip baked;
        PM_ASSERT_OK(pm_blend_space_bake(&baked, space, &mid, 30.0f, NULL));
        assert_true(baked.looping);
        float lo, hi;
        float *h = left_foot_heights(&baked, &lo, &hi);
        /* Where the walk's second stride starts: the blend's second cycle (feet), its half (phase). */
        int second = k == 0 ? (int)lrintf(pm_blend_space_cycle_duration(space, &w, 0) * 30.0f) : baked.frame_count / 2;
        if (k == 0) {
            assert_int_equal(pm_blend_space_period(space, &w), 2);
            float both = pm_blend_space_cycle_duration(space, &w, 0) + pm_blend_space_cycle_duration(space, &w, 1);
            assert_true(fabsf(pm_clip_duration(&baked) - both) < 0.5f / 30.0f);
        }
        /* The lowest height over the few frames after each start (the touchdown is found as the
         * foot comes down, a little before it lands), in the foot's range. */
        float l0 = INFINITY, l1 = INFINITY;
        for (int f = 0; f <= 4; f++) {
            l0 = fminf(l0, h[f]);
            l1 = fminf(l1, h[second + f]);
        }
        low[k] = (fmaxf(l0, l1) - lo) / (hi - lo);
        /* The hips walk on through the bake, though the run wraps mid-way: no step between frames
         * more than twice the mean. */
        pm_skeleton_roles roles;
        pm_skeleton_find_roles(&roles, &baked.skeleton);
        pm_transform *wt = malloc(sizeof(pm_transform) * (size_t)baked.skeleton.joint_count);
        assert_non_null(wt);
        float prev[2] = {0, 0}, longest = 0.0f, total = 0.0f;
        for (int f = 0; f < baked.frame_count; f++) {
            PM_ASSERT_OK(pm_clip_frame_world(wt, &baked, f, NULL));
            pm_vec3 p = wt[roles.hips].translation;
            if (f > 0) {
                float step = hypotf(p.x - prev[0], p.z - prev[1]);
                longest = fmaxf(longest, step);
                total += step;
            }
            prev[0] = p.x, prev[1] = p.z;
        }
        free(wt);
        assert_true(longest < 2.0f * total / (float)(baked.frame_count - 1));
        free(h);
        pm_clip_destroy(&baked);
        pm_blend_space_destroy(space);
    }
    printf("left foot where the walk's strides start, in its range of heights: feet sync %.2f, phase sync %.2f\n",
           (double)low[0], (double)low[1]);
    assert_true(low[0] < 0.15f);
    assert_true(low[1] > 0.3f);
    pm_clip_destroy(&walk);
    pm_clip_destroy(&run);
}

static void test_mirrored_sample(void **state) {
    (void)state;
    pm_clip walk, mirrored, run;
    read_clip(&walk, WALK);
    read_clip(&run, RUN);
    PM_ASSERT_OK(pm_clip_mirror(&mirrored, &walk, NULL, -1, NULL));
    pm_blend_space *a = walk_run_space(&walk, &run), *b = walk_run_space(&mirrored, &run);
    float p = 1.2f;
    pm_clip ca, cb;
    PM_ASSERT_OK(pm_blend_space_bake(&ca, a, &p, 30.0f, NULL));
    PM_ASSERT_OK(pm_blend_space_bake(&cb, b, &p, 30.0f, NULL));
    /* Mirroring keeps the speed; the mirrored clip is a sample like any other. */
    assert_true(fabsf(hips_speed(&ca) - hips_speed(&cb)) < 0.03f * hips_speed(&ca));
    /* It animates the same skeleton in the same joint frames (Bandai's bones run along +X, its
     * zero-rotation pose is no T-pose): every bone offset comes out as the source's, so a blend
     * of the clip with its mirror keeps its bones (else it averages frames turned half a turn
     * against each other: a 16 cm spine became 0). */
    int jc = walk.skeleton.joint_count;
    for (int f = 0; f < walk.frame_count; f += 7)
        for (int j = 1; j < jc; j++) {
            pm_vec3 t0 = walk.translations[(size_t)f * jc + j], t1 = mirrored.translations[(size_t)f * jc + j];
            float len = pm_vec3_length(t0);
            /* (Bones, not root motion: joints whose translation is their rest offset.) */
            if (len < 1e-3f || pm_vec3_length(pm_vec3_sub(t0, walk.skeleton.rest_translations[j])) > 0.01f * len) continue;
            if (pm_vec3_length(pm_vec3_sub(t0, t1)) > 0.05f * len)
                fail_msg("mirrored frame %d joint %s: offset (%g %g %g), source (%g %g %g)", f, walk.skeleton.names[j],
                         (double)t1.x, (double)t1.y, (double)t1.z, (double)t0.x, (double)t0.y, (double)t0.z);
        }
    pm_blend_sample_def both[2] = {pm_default_blend_sample_def(), pm_default_blend_sample_def()};
    both[0].clip = &walk, both[0].name = "walk";
    both[1].clip = &mirrored, both[1].name = "mirrored", both[1].params[0] = 1.0f;
    pm_blend_space_def def = pm_default_blend_space_def();
    def.dimensions = 1, def.samples = both, def.sample_count = 2, def.align = PM_BLEND_ALIGN_NONE;
    pm_blend_space *half = NULL;
    PM_ASSERT_OK(pm_blend_space_create(&half, &def, NULL));
    float mid = 0.5f;
    pm_clip hb;
    PM_ASSERT_OK(pm_blend_space_bake(&hb, half, &mid, 30.0f, NULL));
    int spine = pm_skeleton_find_joint(&hb.skeleton, "Spine");
    assert_true(spine > 0);
    pm_transform *wb = malloc(sizeof(pm_transform) * (size_t)jc);
    for (int f = 0; f < hb.frame_count; f += 5) {
        PM_ASSERT_OK(pm_clip_frame_world(wb, &hb, f, NULL));
        float bone = pm_vec3_length(pm_vec3_sub(wb[spine].translation, wb[hb.skeleton.parents[spine]].translation));
        float want = pm_vec3_length(walk.skeleton.rest_translations[spine]);
        if (fabsf(bone - want) > 0.02f * want) fail_msg("50/50 blend with the mirror, frame %d: spine %g m, not %g", f, (double)bone, (double)want);
    }
    free(wb);
    pm_clip_destroy(&hb);
    pm_blend_space_destroy(half);
    pm_clip_destroy(&ca);
    pm_clip_destroy(&cb);
    pm_blend_space_destroy(a);
    pm_blend_space_destroy(b);
    pm_clip_destroy(&walk);
    pm_clip_destroy(&mirrored);
    pm_clip_destroy(&run);
}

/* A held pose as a sample (one frame, or one frame repeated: every joint static) is aligned as a
 * moving clip is - its hips above the origin - and played on it, every other joint keeps the
 * clip's own transforms. The alignment once moved the leaves instead (the head, hands and toes
 * metres off the body). */
static void test_held_pose_sample(void **state) {
    (void)state;
    pm_clip walk;
    read_clip(&walk, WALK);
    const int jc = walk.skeleton.joint_count, src = 100;
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, &walk.skeleton);
    assert_true(roles.hips >= 0);
    pm_transform *w = malloc(sizeof(pm_transform) * (size_t)jc);
    PM_ASSERT_OK(pm_clip_frame_world(w, &walk, src, NULL));
    const pm_vec3 hips_at = w[roles.hips].translation;
    assert_true(hypotf(hips_at.x, hips_at.z) > 0.5f); /* captured away from the origin */
    const int frame_counts[2] = {30, 1};
    const pm_blend_align aligns[2] = {PM_BLEND_ALIGN_POSITION, PM_BLEND_ALIGN_POSITION_FACING};
    for (int c = 0; c < 2; c++)
        for (int a = 0; a < 2; a++) {
            pm_clip held;
            PM_ASSERT_OK(pm_clip_create(&held, &walk.skeleton, frame_counts[c], walk.frame_time, NULL, NULL));
            for (int f = 0; f < held.frame_count; f++) {
                memcpy(held.rotations + (size_t)f * jc, walk.rotations + (size_t)src * jc, sizeof(pm_quat) * (size_t)jc);
                memcpy(held.translations + (size_t)f * jc, walk.translations + (size_t)src * jc, sizeof(pm_vec3) * (size_t)jc);
            }
            pm_blend_sample_def s[2] = {pm_default_blend_sample_def(), pm_default_blend_sample_def()};
            s[0].clip = &held, s[0].name = "held";
            s[1].clip = &walk, s[1].name = "walk", s[1].params[0] = 1.0f;
            pm_blend_space_def def = pm_default_blend_space_def();
            def.dimensions = 1, def.samples = s, def.sample_count = 2, def.align = aligns[a];
            pm_blend_space *space;
            pm_error e;
            if (pm_blend_space_create(&space, &def, &e) != PM_OK) fail_msg("create: %s", e.message);
            const float at = 0.0f;
            pm_clip baked;
            PM_ASSERT_OK(pm_blend_space_bake(&baked, space, &at, 30.0f, NULL));
            PM_ASSERT_OK(pm_clip_frame_world(w, &baked, 0, NULL));
            const pm_vec3 h = w[roles.hips].translation;
            if (hypotf(h.x, h.z) > 1e-3f || fabsf(h.y - hips_at.y) > 1e-4f)
                fail_msg("%d frames, align %d: hips at (%g %g %g), want (0 %g 0)", frame_counts[c], (int)aligns[a], (double)h.x,
                         (double)h.y, (double)h.z, (double)hips_at.y);
            for (int j = 0; j < jc; j++) {
                if (j == roles.hips) continue;
                const size_t i = (size_t)src * jc + j;
                if (!pm_test_quat_same(baked.rotations[j], walk.rotations[i], 1e-5f) ||
                    pm_vec3_length(pm_vec3_sub(baked.translations[j], walk.translations[i])) > 1e-4f)
                    fail_msg("%d frames, align %d: joint %s moved", frame_counts[c], (int)aligns[a], walk.skeleton.names[j]);
            }
            pm_clip_destroy(&baked);
            pm_blend_space_destroy(space);
            pm_clip_destroy(&held);
        }
    free(w);
    pm_clip_destroy(&walk);
}

static void test_json_with_real_clips(void **state) {
    (void)state;
    /* Absolute paths: relative clip paths are resolved against the JSON file's directory. */
    char walk[4096], run[4096], cwd[2048];
    assert_non_null(getcwd(cwd, sizeof cwd));
    const char *w = pm_test_mocap_path(WALK), *r = pm_test_mocap_path(RUN);
    snprintf(walk, sizeof walk, "%s%s%s", w[0] == '/' ? "" : cwd, w[0] == '/' ? "" : "/", w);
    snprintf(run, sizeof run, "%s%s%s", r[0] == '/' ? "" : cwd, r[0] == '/' ? "" : "/", r);
    char json[16384];
    snprintf(json, sizeof json,
             "{ \"name\": \"walkrun\", \"axes\": [{\"name\": \"speed\", \"min\": 0, \"max\": 4}],\n"
             "  \"fps\": 30, \"grid\": [5],\n"
             "  \"samples\": [\n"
             "    {\"name\": \"walk\", \"clip\": \"%s\", \"params\": [1.2], \"start\": 1.0, \"end\": 3.0},\n"
             "    {\"name\": \"walk_mirrored\", \"clip\": \"%s\", \"params\": [0.8], \"start\": 1.0, \"end\": 3.0, \"mirror\": true},\n"
             "    {\"name\": \"run\", \"clip\": \"%s\", \"params\": 3.2}\n"
             "  ] }\n",
             walk, walk, run);
    const char *path = pm_test_tmp_path("walkrun.json");
    pm_test_write_file(path, json, strlen(json));
    pm_blend_space_file file;
    pm_error e;
    if (pm_blend_space_load_json(&file, path, NULL, &e) != PM_OK) fail_msg("%s", e.message);
    assert_int_equal(pm_blend_space_sample_count(file.space), 3);
    assert_string_equal(pm_blend_space_sample_name(file.space, 1), "walk_mirrored");
    assert_string_equal(pm_blend_space_axis_name(file.space, 0), "speed");
    /* The trimmed walk lasts 2 s. */
    assert_true(fabsf(pm_blend_space_sample_animation(file.space, 0)->duration - 2.0f) < 0.02f);
    /* Grid of 5 over [0, 4]: 0 and 4 lie outside the samples' span [0.8, 3.2] and are skipped. */
    pm_clip *clips;
    int count;
    PM_ASSERT_OK(pm_blend_space_file_bake_grid(&clips, &count, NULL, 0, &file, 0.0f, NULL));
    assert_int_equal(count, 3);
    for (int i = 0; i < count; i++) {
        PM_ASSERT_OK(pm_clip_validate(&clips[i], NULL));
        assert_true(fabsf(1.0f / clips[i].frame_time - 30.0f) < 1.0f);
    }
    assert_string_equal(clips[1].name, "walkrun@2");
    pm_blend_space_free_clips(clips, count);
    pm_blend_space_file_free(&file);
}

/* A pose of a clip's frame in job layout. */
static pm_soa_transform *frame_pose(const pm_clip *clip, int frame) {
    int jc = clip->skeleton.joint_count;
    pm_soa_transform *pose = pm_pose_alloc(jc, NULL);
    assert_non_null(pose);
    size_t at = (size_t)frame * (size_t)jc;
    PM_ASSERT_OK(pm_pose_from_aos(pose, jc, clip->rotations + at, clip->translations + at, NULL));
    return pose;
}

static int same_joint(const pm_soa_transform *a, const pm_soa_transform *b, int j) {
    pm_quat qa = pm_pose_rotation(a, j), qb = pm_pose_rotation(b, j);
    pm_vec3 ta = pm_pose_translation(a, j), tb = pm_pose_translation(b, j);
    return qa.x == qb.x && qa.y == qb.y && qa.z == qb.z && qa.w == qb.w && ta.x == tb.x && ta.y == tb.y && ta.z == tb.z;
}

/* Layered blends on the naming schemes of the real rigs: an upper-body mask from the first spine
 * joint (CMU's Spine above LowerBack, Daz's abdomen, LAFAN1's Spine, Bandai Namco's Spine under a
 * static joint_Root) with a three-level ramp leaves hips and legs the base's bit for bit and puts
 * the overlay on the arms and head; a full-body layer leaves the root motion at the hips - the
 * joint pm_skeleton_find_roles names, which on Bandai Namco is not joint 0 - to the base. */
static void test_layered_on_real_rigs(void **state) {
    (void)state;
    static const struct {
        const char *clip, *overlay, *spine, *arm, *leg;
    } rigs[] = {
        {"cmu/01_01.bvh", NULL, "Spine", "LeftForeArm", "RightLeg"},
        {"cmu/02_01_daz.bvh", NULL, "abdomen", "lForeArm", "rShin"},
        {"lafan1/walk1_subject1_trim.bvh", NULL, "Spine", "LeftForeArm", "RightLeg"},
        {WALK, "bandai-namco/dataset-1/dataset-1_bye_normal_001.bvh", "Spine", "LowerArm_L", "LowerLeg_R"},
    };
    for (size_t r = 0; r < sizeof rigs / sizeof rigs[0]; r++) {
        pm_clip clip, other;
        read_clip(&clip, rigs[r].clip);
        const pm_clip *over_clip = &clip;
        if (rigs[r].overlay) {
            read_clip(&other, rigs[r].overlay);
            assert_true(pm_skeleton_same_topology(&clip.skeleton, &other.skeleton));
            over_clip = &other;
        }
        const pm_skeleton *sk = &clip.skeleton;
        int jc = sk->joint_count;
        pm_skeleton_roles roles;
        pm_skeleton_find_roles(&roles, sk);
        assert_true(roles.hips >= 0);
        int spine = pm_skeleton_find_joint(sk, rigs[r].spine), arm = pm_skeleton_find_joint(sk, rigs[r].arm);
        int leg = pm_skeleton_find_joint(sk, rigs[r].leg);
        assert_true(spine > roles.hips && arm > spine && leg > roles.hips);

        float *mask = malloc(sizeof(float) * (size_t)jc);
        pm_branch_filter f = pm_default_branch_filter();
        f.bone = rigs[r].spine;
        f.blend_depth = 3;
        PM_ASSERT_OK(pm_branch_filters_expand(mask, sk, &f, 1, NULL));
        assert_true(fabsf(mask[spine] - 1.0f / 3.0f) < 1e-6f);
        assert_true(mask[arm] == 1.0f && mask[leg] == 0.0f && mask[roles.hips] == 0.0f);

        pm_soa_transform *base = frame_pose(&clip, 0), *over = frame_pose(over_clip, over_clip->frame_count / 2);
        pm_soa_transform *out = pm_pose_alloc(jc, NULL);
        pm_blend_layer layer = {over, 1.0f, mask};
        pm_layered_blend_job job = pm_default_layered_blend_job();
        job.base = base, job.layers = &layer, job.layer_count = 1, job.joint_count = jc, job.output = out;
        job.root_joint = roles.hips;
        PM_ASSERT_OK(pm_layered_blend_job_run(&job, NULL));
        for (int j = 0; j < jc; j++) {
            if (mask[j] == 0.0f && !same_joint(out, base, j)) fail_msg("%s: %s is not the base's", rigs[r].clip, sk->names[j]);
            if (mask[j] == 1.0f) {
                pm_quat a = pm_pose_rotation(out, j), b = pm_pose_rotation(over, j);
                if (!(fabsf(fabsf(pm_quat_dot(a, b)) - 1.0f) < 1e-6f))
                    fail_msg("%s: %s is not the overlay's", rigs[r].clip, sk->names[j]);
            }
        }
        /* The ramp's first joint turns part of the way from the base to the overlay. */
        pm_quat qb = pm_pose_rotation(base, spine), qo = pm_pose_rotation(over, spine), q = pm_pose_rotation(out, spine);
        float full = fabsf(pm_quat_dot(qb, qo)), part = fabsf(pm_quat_dot(qb, q));
        assert_true(full < 1.0f - 1e-6f && part > full && part < 1.0f);

        /* A full-body layer at half weight: every rotation blends, the hips' translation stays the base's. */
        layer.joint_weights = NULL;
        layer.weight = 0.5f;
        PM_ASSERT_OK(pm_layered_blend_job_run(&job, NULL));
        pm_vec3 tb = pm_pose_translation(base, roles.hips), to = pm_pose_translation(out, roles.hips);
        assert_true(tb.x == to.x && tb.y == to.y && tb.z == to.z);
        assert_false(same_joint(out, base, leg));
        job.blend_root_motion = 1;
        PM_ASSERT_OK(pm_layered_blend_job_run(&job, NULL));
        pm_vec3 t1 = pm_pose_translation(over, roles.hips), tm = pm_pose_translation(out, roles.hips);
        assert_true(fabsf(tm.x - 0.5f * (tb.x + t1.x)) < 1e-4f && fabsf(tm.z - 0.5f * (tb.z + t1.z)) < 1e-4f);

        free(mask);
        pm_pose_free(base, NULL);
        pm_pose_free(over, NULL);
        pm_pose_free(out, NULL);
        if (rigs[r].overlay) pm_clip_destroy(&other);
        pm_clip_destroy(&clip);
    }
}

int main(void) {
    pm_test_require_mocap("test_blend_mocap");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_run_root_speed),
        cmocka_unit_test(test_mixed_looping_root),
        cmocka_unit_test(test_walk_of_two_strides_with_a_run_of_one),
        cmocka_unit_test(test_turning_and_straight_walks),
        cmocka_unit_test(test_one_shot_turns_keep_their_speed),
        cmocka_unit_test(test_mirrored_sample),
        cmocka_unit_test(test_held_pose_sample),
        cmocka_unit_test(test_json_with_real_clips),
        cmocka_unit_test(test_layered_on_real_rigs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

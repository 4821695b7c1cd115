/* The blending runtime on several threads, as a game's job system runs it: one blend space and its
 * animations shared, every thread evaluating the same characters with its own buffers (blend-space
 * weights and job, sampling, layered blend, additive extract and apply, local-to-model). Every
 * thread must produce the main thread's bits for every character; under ThreadSanitizer (`make
 * test`'s TSan build) any write to shared state is reported as a race. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "blend_support.h"

enum { JOINTS = 23, CHARACTERS = 96, THREADS = 4 };

typedef struct shared {
    const pm_blend_space *space;
    pm_animation anims[3];
    float mask[JOINTS];
    int32_t parents[JOINTS];
} shared;

/* What one character ends with: its model-space joints. */
typedef struct character_out {
    pm_transform model[JOINTS];
} character_out;

typedef struct worker {
    const shared *sh;
    character_out *out; /* CHARACTERS */
    int failed;
    pthread_t thread;
} worker;

/* Character k's frame: a point of the space, a phase, a clip time, layer and additive weights. */
static int evaluate(const shared *sh, int k, pm_test_blend_poses *p, pm_soa_transform *tmp[3], character_out *out) {
    const float params[2] = {(float)(k % 7) / 5.0f - 0.2f, (float)(k % 5) / 4.0f};
    pm_blend_space_weights weights;
    pm_blend_space_job bj = pm_test_blend_job(sh->space, params, (float)k / (float)CHARACTERS, p);
    bj.out_weights = &weights;
    if (pm_blend_space_job_run(&bj, NULL) != PM_OK) return 0;

    pm_sampling_job sj = pm_default_sampling_job();
    sj.animation = &sh->anims[k % 3];
    sj.time = 0.37f * (float)k * sj.animation->duration;
    sj.rotation = k % 2 ? PM_ROTATION_SLERP : PM_ROTATION_NLERP;
    sj.output = tmp[0];
    sj.output_count = p->soa;
    if (pm_sampling_job_run(&sj, NULL) != PM_OK) return 0;

    pm_blend_layer layer = {tmp[0], 0.25f + 0.5f * (float)(k % 3) / 2.0f, sh->mask};
    pm_layered_blend_job lj = pm_default_layered_blend_job();
    lj.base = p->out;
    lj.layers = &layer;
    lj.layer_count = 1;
    lj.joint_count = JOINTS;
    lj.output = tmp[1];
    if (pm_layered_blend_job_run(&lj, NULL) != PM_OK) return 0;

    pm_additive_extract_job ej = pm_default_additive_extract_job();
    ej.source = tmp[0];
    ej.base = p->out;
    ej.joint_count = JOINTS;
    ej.output = tmp[2];
    if (pm_additive_extract_job_run(&ej, NULL) != PM_OK) return 0;
    pm_additive_apply_job aj = pm_default_additive_apply_job();
    aj.target = tmp[1];
    aj.delta = tmp[2];
    aj.weight = (float)(k % 4) * 0.4f; /* 0, 0.4, 0.8 and 1.2: skipped, fractions, beyond 1 */
    aj.joint_count = JOINTS;
    aj.output = tmp[1];
    if (pm_additive_apply_job_run(&aj, NULL) != PM_OK) return 0;

    pm_local_to_model_job mj = pm_default_local_to_model_job();
    mj.parents = sh->parents;
    mj.joint_count = JOINTS;
    mj.input = tmp[1];
    mj.output = out->model;
    return pm_local_to_model_job_run(&mj, NULL) == PM_OK;
}

/* Every character, with buffers of its own (allocated before the loop: the jobs allocate nothing). */
static int evaluate_all(const shared *sh, character_out *out) {
    pm_test_blend_poses p;
    pm_test_blend_poses_alloc(&p, JOINTS);
    pm_soa_transform *tmp[3] = {pm_pose_alloc(JOINTS, NULL), pm_pose_alloc(JOINTS, NULL), pm_pose_alloc(JOINTS, NULL)};
    int ok = tmp[0] && tmp[1] && tmp[2];
    for (int round = 0; ok && round < 3; round++)
        for (int k = 0; ok && k < CHARACTERS; k++) ok = evaluate(sh, k, &p, tmp, &out[k]);
    for (int i = 0; i < 3; i++) pm_pose_free(tmp[i], NULL);
    pm_test_blend_poses_free(&p);
    return ok;
}

static void *worker_main(void *arg) {
    worker *w = (worker *)arg;
    w->failed = !evaluate_all(w->sh, w->out);
    return NULL;
}

static void test_threads_share_a_space_and_animations(void **state) {
    (void)state;
    pm_test_blend_fixture fx;
    pm_blend_space *space = pm_test_blend_triangle_space(&fx, JOINTS);
    shared sh;
    sh.space = space;
    for (int i = 0; i < 3; i++) PM_ASSERT_OK(pm_animation_build(&sh.anims[i], &fx.clips[i], NULL, NULL));
    pm_branch_filter f = pm_default_branch_filter();
    f.bone = "j3";
    f.blend_depth = 4;
    PM_ASSERT_OK(pm_branch_filters_expand(sh.mask, &fx.sk, &f, 1, NULL));
    memcpy(sh.parents, fx.sk.parents, sizeof sh.parents);

    character_out *ref = calloc(CHARACTERS, sizeof *ref);
    assert_non_null(ref);
    assert_true(evaluate_all(&sh, ref));
    worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t].sh = &sh;
        workers[t].out = calloc(CHARACTERS, sizeof(character_out));
        workers[t].failed = 0;
        assert_non_null(workers[t].out);
    }
    for (int t = 0; t < THREADS; t++) assert_int_equal(pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]), 0);
    for (int t = 0; t < THREADS; t++) assert_int_equal(pthread_join(workers[t].thread, NULL), 0);
    for (int t = 0; t < THREADS; t++) {
        assert_false(workers[t].failed);
        for (int k = 0; k < CHARACTERS; k++)
            if (memcmp(workers[t].out[k].model, ref[k].model, sizeof ref[k].model) != 0)
                fail_msg("thread %d, character %d: not the main thread's pose", t, k);
        free(workers[t].out);
    }
    free(ref);
    for (int i = 0; i < 3; i++) pm_animation_destroy(&sh.anims[i]);
    pm_blend_space_destroy(space);
    pm_test_blend_fixture_free(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_share_a_space_and_animations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

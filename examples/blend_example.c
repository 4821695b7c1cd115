/* Runtime blending example: a walk and a run in a 1D blend space, played for two seconds while
 * the speed parameter ramps from walk to run, each frame posed in model space.
 *   build/examples/blend_example WALK.bvh RUN.bvh
 * Everything is allocated before the loop; the per-frame jobs allocate nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "posematch/posematch.h"

static int fail(const pm_error *err) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: blend_example WALK.bvh RUN.bvh\n");
        return 2;
    }
    pm_error err;
    pm_clip clips[2];
    for (int i = 0; i < 2; i++) {
        if (pm_bvh_read_file(&clips[i], argv[1 + i], NULL, &err) != PM_OK) {
            for (int k = 0; k < i; k++) pm_clip_destroy(&clips[k]);
            return fail(&err);
        }
        clips[i].looping = 1; /* gait cycles: the space keeps their feet in step */
    }

    /* The space copies what it needs: the clips could be freed now. */
    pm_blend_sample_def samples[2];
    for (int i = 0; i < 2; i++) {
        samples[i] = pm_default_blend_sample_def();
        samples[i].clip = &clips[i];
        samples[i].params[0] = (float)i; /* 0 = walk, 1 = run */
    }
    pm_blend_space_def def = pm_default_blend_space_def();
    def.name = "locomotion";
    def.dimensions = 1;
    def.axis_names[0] = "speed";
    def.samples = samples;
    def.sample_count = 2;
    pm_blend_space *space = NULL;
    pm_result r = pm_blend_space_create(&space, &def, &err);
    for (int i = 0; i < 2; i++) pm_clip_destroy(&clips[i]);
    if (r != PM_OK) return fail(&err);

    /* Caller-owned buffers, sized once from the space. */
    const pm_skeleton *skeleton = pm_blend_space_skeleton(space);
    const int joints = skeleton->joint_count, groups = pm_soa_count(joints);
    const int scratch_count = pm_blend_space_scratch_count(space);
    pm_soa_transform *local = pm_pose_alloc(joints, NULL);
    pm_soa_transform *scratch = aligned_alloc(16, (size_t)scratch_count * sizeof *scratch);
    pm_transform *model = malloc((size_t)joints * sizeof *model);
    pm_skeleton_roles roles;
    pm_skeleton_find_roles(&roles, skeleton);
    if (!local || !scratch || !model) {
        fprintf(stderr, "out of memory\n");
        r = PM_ERR_OUT_OF_MEMORY;
        goto done;
    }

    const float dt = 1.0f / 60.0f;
    float phase = 0.0f, speed = 0.0f;
    for (int frame = 0; frame <= 120 && r == PM_OK; frame++) {
        speed = (float)frame / 120.0f;
        pm_blend_space_weights weights;
        pm_blend_space_job job = pm_default_blend_space_job();
        job.space = space;
        job.params = &speed;
        job.phase = phase;
        job.scratch = scratch;
        job.scratch_count = scratch_count;
        job.output = local;
        job.output_count = groups;
        job.out_weights = &weights;
        if ((r = pm_blend_space_job_run(&job, &err)) != PM_OK) break;

        pm_local_to_model_job l2m = pm_default_local_to_model_job();
        l2m.parents = skeleton->parents;
        l2m.joint_count = joints;
        l2m.input = local;
        l2m.output = model;
        if ((r = pm_local_to_model_job_run(&l2m, &err)) != PM_OK) break;

        if (frame % 15 == 0) {
            printf("t %.2f s  speed %.2f  phase %.3f  weights", (double)(frame * dt), (double)speed, (double)phase);
            for (int k = 0; k < weights.count; k++)
                printf(" %s=%.2f", pm_blend_space_sample_name(space, weights.samples[k]), (double)weights.weights[k]);
            /* Heights only: the root's travel is motion to accumulate from frame to frame. */
            if (roles.hips >= 0) printf("  hips %.2f m", (double)model[roles.hips].translation.y);
            if (roles.left_foot >= 0) printf("  left foot %.2f m", (double)model[roles.left_foot].translation.y);
            printf("\n");
        }
        /* The phase counts cycles: advance it by the current blend's cycle duration, and keep it
         * below the wrap, where the space's loops all restart. */
        float cycle = pm_blend_space_cycle_duration(space, &weights, (int)phase);
        phase += cycle > 0.0f ? dt / cycle : 0.0f;
        int wrap = pm_blend_space_phase_wrap(space);
        if (wrap > 0 && phase >= (float)wrap) phase -= (float)wrap;
    }
    if (r != PM_OK) fail(&err);
done:
    free(model);
    free(scratch);
    pm_pose_free(local, NULL);
    pm_blend_space_destroy(space);
    return r == PM_OK ? 0 : 1;
}

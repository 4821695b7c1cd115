/* Private: the pose jobs' kernels (sampling, blend, layered blend, additive extract and apply).
 * src/blend_kernels.h holds them once; it is compiled twice - for the baseline (SSE2 on x86-64,
 * NEON on ARM) and, on x86-64, for AVX2, whose VEX encoding of the same 4-lane operations (no
 * FMA) gives the baseline's bits a little faster - and the jobs pick a build at run time, as the
 * local-to-model job and the search do. */
#ifndef PM_BLEND_INTERNAL_H
#define PM_BLEND_INTERNAL_H

#include "pose_kernels.h"

/* A layer the layered blend reads (weight > 0). */
typedef struct active_layer {
    const pm_soa_transform *pose;
    const float *joint_weights;
    float weight;
} active_layer;

/* One build of the kernels. The jobs check their arguments first; a kernel only computes. */
typedef struct pm_pose_kernels {
    void (*sample_nlerp)(pm_soa_transform *out, const pm_soa_transform *g0, const pm_soa_transform *g1, float alpha,
                         int count);
    void (*sample_slerp)(pm_soa_transform *out, const pm_soa_transform *g0, const pm_soa_transform *g1, float alpha,
                         int count);
    /* raw: the inputs' weights, the heaviest first; total: their sum. */
    void (*blend2)(pm_soa_transform *out, const pm_soa_transform *a, const pm_soa_transform *b, const float *raw,
                   float total, int groups);
    void (*blend3)(pm_soa_transform *out, const pm_soa_transform *const *p, const float *raw, float total, int groups);
    void (*blend_n)(pm_soa_transform *out, const pm_soa_transform *const *p, const float *raw, float total, int n,
                    int groups);
    void (*layered_one)(const pm_layered_blend_job *job, const active_layer *layer, soa_weight_check *check);
    void (*layered_n)(const pm_layered_blend_job *job, const active_layer *layers, int n, soa_weight_check *check);
    void (*additive_extract)(const pm_additive_extract_job *job, int groups);
    void (*apply_full)(const pm_additive_apply_job *job, int groups);
    void (*apply_uniform)(const pm_additive_apply_job *job, int groups);
    void (*apply_masked)(const pm_additive_apply_job *job, int groups, soa_weight_check *check);
    void (*apply_extended)(const pm_additive_apply_job *job, int groups, soa_weight_check *check);
} pm_pose_kernels;

extern const pm_pose_kernels pm_pose_kernels_baseline;
#if defined(PM_SIMD_SSE) && defined(PM_HAVE_AVX2_KERNELS)
#define PM_POSE_KERNELS_HAVE_AVX2 1
extern const pm_pose_kernels pm_pose_kernels_avx2;
#endif

/* The build for PM_KERNEL_AUTO (AVX2 when the CPU has it), _BASELINE or _AVX2 (the baseline where
 * the build or the CPU lacks it). */
const pm_pose_kernels *pm_pose_kernels_pick(int kernel);

/* The jobs' run functions with a chosen kernel build: the public ones pass PM_KERNEL_AUTO; tests
 * compare the builds bit for bit and the bench times the baseline. */
pm_result pm_sampling_job_run_kernel(const pm_sampling_job *job, int kernel, pm_error *error);
pm_result pm_blend_job_run_kernel(const pm_blend_job *job, int kernel, pm_error *error);
pm_result pm_layered_blend_job_run_kernel(const pm_layered_blend_job *job, int kernel, pm_error *error);
pm_result pm_additive_extract_job_run_kernel(const pm_additive_extract_job *job, int kernel, pm_error *error);
pm_result pm_additive_apply_job_run_kernel(const pm_additive_apply_job *job, int kernel, pm_error *error);

#endif

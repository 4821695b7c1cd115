/* The N-pose blend job and the local-to-model job. */
#include <math.h>

#include "core.h"
#include "pose_kernels.h"

static pm_result check_joint_count(int joint_count, const char *job, pm_error *error) {
    if (joint_count < 1 || joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_LIMIT, "%s: joint_count %d is outside 1..%d", job, joint_count, PM_MAX_JOINTS);
    return PM_OK;
}

/* ---- blend job ---- */

pm_blend_job pm_default_blend_job(void) {
    pm_blend_job j;
    memset(&j, 0, sizeof j);
    return j;
}

/* Checks the job and collects the contributing inputs with normalised weights, in one pass (the
 * job runs every frame; its bookkeeping should cost little next to the blend). */
static pm_result blend_prepare(const pm_blend_job *job, const pm_soa_transform **poses, float *weights, float *total,
                               int *count, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: NULL job");
    pm_result r = check_joint_count(job->joint_count, "blend job", error);
    if (r != PM_OK) return r;
    if (!job->output) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: output is NULL");
    if (!pm_pose_aligned(job->output)) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: output%s", PM_ALIGN_HINT);
    if (!job->inputs || job->input_count < 1 || job->input_count > PM_BLEND_MAX_INPUTS)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: %d inputs is outside 1..%d", job->inputs ? job->input_count : 0,
                       PM_BLEND_MAX_INPUTS);
    float sum = 0.0f;
    int n = 0;
    for (int i = 0; i < job->input_count; i++) {
        float w = job->inputs[i].weight;
        if (!isfinite(w)) return pm_fail(error, PM_ERR_NUMERIC, "blend job: input %d has a non-finite weight (%g)", i, (double)w);
        if (w < 0.0f) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: input %d has a negative weight (%g)", i, (double)w);
        if (w == 0.0f) continue; /* never read */
        const pm_soa_transform *pose = job->inputs[i].pose;
        if (!pose) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: input %d has weight %g but no pose", i, (double)w);
        if (!pm_pose_aligned(pose)) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: input %d%s", i, PM_ALIGN_HINT);
        poses[n] = pose;
        weights[n] = w;
        n++;
        sum += w;
    }
    if (n == 0) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "blend job: every weight is zero (nothing to blend)");
    if (!isfinite(sum)) return pm_fail(error, PM_ERR_NUMERIC, "blend job: the weights sum to infinity");
    /* Weights stay raw here; each kernel scales them (normalised for translations, relative to
     * the first input's for rotations) with two independent divisions. */
    *total = sum;
    *count = n;
    return PM_OK;
}

pm_result pm_blend_job_validate(const pm_blend_job *job, pm_error *error) {
    const pm_soa_transform *poses[PM_BLEND_MAX_INPUTS];
    float weights[PM_BLEND_MAX_INPUTS], total = 0.0f;
    int n = 0;
    return blend_prepare(job, poses, weights, &total, &n, error);
}

/* Rotations: the hemisphere sign goes into the weight (one xor instead of four), and the weights
 * are taken relative to the first input's (the normalisation absorbs the scale), which saves
 * multiplying the first rotation. Translations use the true weights. */
/* Groups per chunk of the sign pre-passes below (1-2 KB of signed weights on the stack). */
#define PM_BLEND_CHUNK 64

static void blend2(pm_soa_transform *out, const pm_soa_transform *a, const pm_soa_transform *b, const float *raw,
                   float total, int groups) {
    float inv = 1.0f / total, inv0 = 1.0f / raw[0];
    const pm_f4 w0 = f4_set1(raw[0] * inv), w1 = f4_set1(raw[1] * inv), r1 = f4_set1(raw[1] * inv0);
    pm_f4 signed_w[PM_BLEND_CHUNK];
    for (int start = 0; start < groups; start += PM_BLEND_CHUNK) {
        int end = PM_MIN(groups, start + PM_BLEND_CHUNK);
        for (int g = start; g < end; g++)
            signed_w[g - start] = soa_signed_weight(r1, soa_load_rotation(b + g), soa_load_rotation(a + g));
        for (int g = start; g < end; g++) {
            soa_quat q = soa_quat_madd(soa_load_rotation(a + g), soa_load_rotation(b + g), signed_w[g - start]);
            soa_vec3 t0 = soa_load_translation(a + g), t1 = soa_load_translation(b + g), t;
            t.x = f4_madd(t1.x, w1, f4_mul(t0.x, w0));
            t.y = f4_madd(t1.y, w1, f4_mul(t0.y, w0));
            t.z = f4_madd(t1.z, w1, f4_mul(t0.z, w0));
            soa_store(out + g, soa_quat_normalize(q), t);
        }
    }
}

static void blend3(pm_soa_transform *out, const pm_soa_transform *const *p, const float *raw, float total, int groups) {
    float inv = 1.0f / total, inv0 = 1.0f / raw[0];
    const pm_f4 w0 = f4_set1(raw[0] * inv), w1 = f4_set1(raw[1] * inv), w2 = f4_set1(raw[2] * inv);
    const pm_f4 r1 = f4_set1(raw[1] * inv0), r2 = f4_set1(raw[2] * inv0);
    pm_f4 signed_w[2][PM_BLEND_CHUNK];
    for (int start = 0; start < groups; start += PM_BLEND_CHUNK) {
        int end = PM_MIN(groups, start + PM_BLEND_CHUNK);
        /* The hemisphere tests first, in their own pass: fused into the blend their dot -> sign ->
         * multiply chain held back every group (a third slower). */
        for (int g = start; g < end; g++) {
            soa_quat q0 = soa_load_rotation(p[0] + g);
            signed_w[0][g - start] = soa_signed_weight(r1, soa_load_rotation(p[1] + g), q0);
            signed_w[1][g - start] = soa_signed_weight(r2, soa_load_rotation(p[2] + g), q0);
        }
        for (int g = start; g < end; g++) {
            soa_quat q = soa_quat_madd(soa_load_rotation(p[0] + g), soa_load_rotation(p[1] + g), signed_w[0][g - start]);
            q = soa_quat_madd(q, soa_load_rotation(p[2] + g), signed_w[1][g - start]);
            soa_vec3 t0 = soa_load_translation(p[0] + g), t1 = soa_load_translation(p[1] + g);
            soa_vec3 t2 = soa_load_translation(p[2] + g), t;
            t.x = f4_madd(t2.x, w2, f4_madd(t1.x, w1, f4_mul(t0.x, w0)));
            t.y = f4_madd(t2.y, w2, f4_madd(t1.y, w1, f4_mul(t0.y, w0)));
            t.z = f4_madd(t2.z, w2, f4_madd(t1.z, w1, f4_mul(t0.z, w0)));
            soa_store(out + g, soa_quat_normalize(q), t);
        }
    }
}

static void blend_n(pm_soa_transform *out, const pm_soa_transform *const *p, const float *raw, float total, int n,
                    int groups) {
    float w[PM_BLEND_MAX_INPUTS], inv = 1.0f / total;
    for (int i = 0; i < n; i++) w[i] = raw[i] * inv;
    for (int g = 0; g < groups; g++) {
        pm_f4 w0 = f4_set1(w[0]);
        soa_quat ref = soa_load_rotation(p[0] + g);
        soa_vec3 t0 = soa_load_translation(p[0] + g);
        soa_quat q = soa_quat_scale(ref, w0);
        soa_vec3 t;
        t.x = f4_mul(t0.x, w0);
        t.y = f4_mul(t0.y, w0);
        t.z = f4_mul(t0.z, w0);
        for (int i = 1; i < n; i++) {
            pm_f4 wi = f4_set1(w[i]);
            soa_quat qi = soa_load_rotation(p[i] + g);
            q = soa_quat_madd(q, qi, soa_signed_weight(wi, qi, ref));
            soa_vec3 ti = soa_load_translation(p[i] + g);
            t.x = f4_madd(ti.x, wi, t.x);
            t.y = f4_madd(ti.y, wi, t.y);
            t.z = f4_madd(ti.z, wi, t.z);
        }
        soa_store(out + g, soa_quat_normalize(q), t);
    }
}

pm_result pm_blend_job_run(const pm_blend_job *job, pm_error *error) {
    const pm_soa_transform *poses[PM_BLEND_MAX_INPUTS];
    float weights[PM_BLEND_MAX_INPUTS], total = 0.0f;
    int n = 0;
    pm_result r = blend_prepare(job, poses, weights, &total, &n, error);
    if (r != PM_OK) return r;
    int groups = pm_soa_count(job->joint_count);
    if (n == 1) {
        /* One contributor: its pose unchanged, so a blend-space sample reproduces its clip exactly. */
        if (job->output != poses[0]) memmove(job->output, poses[0], (size_t)groups * sizeof(pm_soa_transform));
        return PM_OK;
    }
    /* Relative weights stay below 1e6 (a first weight a million times smaller than another would
     * scale rotations towards overflow); beyond that the plain weighted path is used. */
    int relative_ok = 1;
    for (int i = 1; i < n; i++) relative_ok &= weights[i] <= 1e6f * weights[0];
    if (n == 2 && relative_ok) blend2(job->output, poses[0], poses[1], weights, total, groups);
    else if (n == 3 && relative_ok) blend3(job->output, poses, weights, total, groups);
    else blend_n(job->output, poses, weights, total, n, groups);
    return PM_OK;
}

/* ---- local to model ---- */

pm_local_to_model_job pm_default_local_to_model_job(void) {
    pm_local_to_model_job j;
    memset(&j, 0, sizeof j);
    return j;
}

static pm_result l2m_check_sizes(const pm_local_to_model_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "local-to-model job: NULL job");
    pm_result r = check_joint_count(job->joint_count, "local-to-model job", error);
    if (r != PM_OK) return r;
    if (!job->parents || !job->input || !job->output)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "local-to-model job: parents, input and output must be set");
    if (!pm_pose_aligned(job->input))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "local-to-model job: input%s", PM_ALIGN_HINT);
    return PM_OK;
}

pm_result pm_local_to_model_job_validate(const pm_local_to_model_job *job, pm_error *error) {
    pm_result r = l2m_check_sizes(job, error);
    if (r != PM_OK) return r;
    for (int j = 0; j < job->joint_count; j++)
        if (job->parents[j] < -1 || job->parents[j] >= j)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "local-to-model job: joint %d has parent %d (parents must come before their children)", j,
                           (int)job->parents[j]);
    if (job->root) {
        const pm_transform *t = job->root;
        if (!isfinite(t->rotation.x + t->rotation.y + t->rotation.z + t->rotation.w + t->translation.x +
                      t->translation.y + t->translation.z))
            return pm_fail(error, PM_ERR_NUMERIC, "local-to-model job: the root transform is not finite");
    }
    return PM_OK;
}

static pm_result l2m_bad_parent(int j, int p, pm_error *error) {
    return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                   "local-to-model job: joint %d has parent %d (parents must come before their children)", j, p);
}

#if defined(PM_SIMD_VECTOR)

/* Model-space transforms are computed joint by joint (a child needs its parent), one quaternion
 * or vector per register: the locals of four joints are transposed out of their group at once, then
 * each joint composes with its parent using lane shuffles instead of scalar arithmetic. */
PM_SIMD_INLINE pm_f4 aos_quat_mul(pm_f4 p, pm_f4 l) {
    const pm_i4 s1 = {0, PM_SIGN_BIT, 0, PM_SIGN_BIT};
    const pm_i4 s2 = {0, 0, PM_SIGN_BIT, PM_SIGN_BIT};
    const pm_i4 s3 = {PM_SIGN_BIT, 0, 0, PM_SIGN_BIT};
    pm_f4 px = I4_SHUFFLE(p, 0, 0, 0, 0), py = I4_SHUFFLE(p, 1, 1, 1, 1);
    pm_f4 pz = I4_SHUFFLE(p, 2, 2, 2, 2), pw = I4_SHUFFLE(p, 3, 3, 3, 3);
    pm_f4 a = f4_xor(I4_SHUFFLE(l, 3, 2, 1, 0), s1);
    pm_f4 b = f4_xor(I4_SHUFFLE(l, 2, 3, 0, 1), s2);
    pm_f4 c = f4_xor(I4_SHUFFLE(l, 1, 0, 3, 2), s3);
    return (pw * l + px * a) + (py * b + pz * c);
}

/* Rotates v (lanes x, y, z; lane w ignored) by unit quaternion q: v + w t + u x t, t = 2 u x v. */
PM_SIMD_INLINE pm_f4 aos_quat_rotate(pm_f4 q, pm_f4 v) {
    pm_f4 q_yzx = I4_SHUFFLE(q, 1, 2, 0, 3);
    pm_f4 c = q * I4_SHUFFLE(v, 1, 2, 0, 3) - q_yzx * v; /* (u x v).zxy */
    c = c + c;
    pm_f4 t = I4_SHUFFLE(c, 1, 2, 0, 3);               /* 2 u x v */
    pm_f4 d = q * I4_SHUFFLE(t, 1, 2, 0, 3) - q_yzx * t; /* (u x t).zxy */
    return v + I4_SHUFFLE(q, 3, 3, 3, 3) * t + I4_SHUFFLE(d, 1, 2, 0, 3);
}

/* Translations move as 8 + 4 bytes both ways, so that a child's load is forwarded from its
 * parent's stores (one 16-byte access across two stores would stall on every branching joint). */
PM_SIMD_INLINE pm_f4 load_vec3(const pm_vec3 *v) { return f4_unpacklo64(f4_load2(&v->x), f4_load1(&v->z)); }

PM_SIMD_INLINE void store_transform(pm_transform *out, pm_f4 q, pm_f4 t) {
    f4_store(&out->rotation.x, q);
    memcpy(&out->translation.x, &t, 2 * sizeof(float));
    out->translation.z = f4_lane(I4_SHUFFLE(t, 2, 2, 2, 2), 0);
}

/* One joint: its parent from registers (the previous joint), the root, or memory. */
#define L2M_JOINT(LQ, LT)                                                                                              \
    do {                                                                                                               \
        int p = parents[j];                                                                                            \
        pm_f4 pq = prev_q, pt = prev_t;                                                                                \
        if (p != j - 1 || p < 0) {                                                                                     \
            if (p < 0) {                                                                                               \
                if (PM_UNLIKELY(p != -1)) return l2m_bad_parent(j, p, error);                                          \
                pq = root_q;                                                                                           \
                pt = root_t;                                                                                           \
            } else {                                                                                                   \
                if (PM_UNLIKELY(p >= j)) return l2m_bad_parent(j, p, error);                                           \
                pq = f4_load(&out[p].rotation.x);                                                                      \
                pt = load_vec3(&out[p].translation);                                                                   \
            }                                                                                                          \
        }                                                                                                              \
        prev_q = aos_quat_mul(pq, (LQ));                                                                               \
        prev_t = pt + aos_quat_rotate(pq, (LT));                                                                       \
        store_transform(o++, prev_q, prev_t);                                                                          \
        j++;                                                                                                           \
    } while (0)

static pm_result l2m_run(const pm_local_to_model_job *job, pm_error *error) {
    const int n = job->joint_count;
    const int32_t *parents = job->parents;
    pm_transform *out = job->output;
    pm_transform root = job->root ? *job->root : pm_transform_identity();
    const pm_f4 root_q = f4_set(root.rotation.x, root.rotation.y, root.rotation.z, root.rotation.w);
    const pm_f4 root_t = f4_set(root.translation.x, root.translation.y, root.translation.z, 0.0f);
    /* The previous joint's result stays in registers: chains (parent = j - 1) never reload it. */
    pm_f4 prev_q = root_q, prev_t = root_t;
    pm_transform *o = out; /* out + j, kept apart: cheaper than j * 28 per joint */
    for (int g = 0, j = 0; j < n; g++) {
        const pm_soa_transform *in = job->input + g;
        pm_f4 qx = f4_load_a(in->qx), qy = f4_load_a(in->qy), qz = f4_load_a(in->qz), qw = f4_load_a(in->qw);
        pm_f4 tx = f4_load_a(in->tx), ty = f4_load_a(in->ty), tz = f4_load_a(in->tz), zero = f4_zero();
        /* 4x4 transposes: lane k of the SoA vectors becomes vector k. */
        pm_f4 a0 = f4_unpacklo32(qx, qy), a1 = f4_unpacklo32(qz, qw);
        pm_f4 a2 = f4_unpackhi32(qx, qy), a3 = f4_unpackhi32(qz, qw);
        pm_f4 b0 = f4_unpacklo32(tx, ty), b1 = f4_unpacklo32(tz, zero);
        pm_f4 b2 = f4_unpackhi32(tx, ty), b3 = f4_unpackhi32(tz, zero);
        if (j + 4 <= n) {
            /* A full group, unrolled: the locals stay in registers. */
            L2M_JOINT(f4_unpacklo64(a0, a1), f4_unpacklo64(b0, b1));
            L2M_JOINT(f4_unpackhi64(a0, a1), f4_unpackhi64(b0, b1));
            L2M_JOINT(f4_unpacklo64(a2, a3), f4_unpacklo64(b2, b3));
            L2M_JOINT(f4_unpackhi64(a2, a3), f4_unpackhi64(b2, b3));
        } else {
            pm_f4 lq[4] = {f4_unpacklo64(a0, a1), f4_unpackhi64(a0, a1),
                           f4_unpacklo64(a2, a3), f4_unpackhi64(a2, a3)};
            pm_f4 lt[4] = {f4_unpacklo64(b0, b1), f4_unpackhi64(b0, b1),
                           f4_unpacklo64(b2, b3), f4_unpackhi64(b2, b3)};
            for (int k = 0; j < n; k++) L2M_JOINT(lq[k], lt[k]);
        }
    }
    return PM_OK;
}

#else

static pm_result l2m_run(const pm_local_to_model_job *job, pm_error *error) {
    pm_transform root = job->root ? *job->root : pm_transform_identity();
    for (int j = 0; j < job->joint_count; j++) {
        int p = job->parents[j];
        if (p < -1 || p >= j) return l2m_bad_parent(j, p, error);
        pm_transform local;
        local.rotation = pm_pose_rotation(job->input, j);
        local.translation = pm_pose_translation(job->input, j);
        job->output[j] = pm_transform_mul(p < 0 ? root : job->output[p], local);
    }
    return PM_OK;
}

#endif

pm_result pm_local_to_model_job_run(const pm_local_to_model_job *job, pm_error *error) {
    /* The hierarchy is checked inside the loop (one predictable branch per joint) rather than by a
     * separate pass; on error the output is partly written. */
    pm_result r = l2m_check_sizes(job, error);
    if (r != PM_OK) return r;
    return l2m_run(job, error);
}

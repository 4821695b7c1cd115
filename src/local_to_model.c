/* The local-to-model job: model-space transforms and/or 4x4 matrices from a local pose. */
#include <math.h>

#include "core.h"
#include "pose_kernels.h"

pm_local_to_model_job pm_default_local_to_model_job(void) {
    pm_local_to_model_job j;
    memset(&j, 0, sizeof j);
    return j;
}

static pm_result l2m_check_sizes(const pm_local_to_model_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "local-to-model job: NULL job");
    pm_result r = pm_check_joint_count(job->joint_count, "local-to-model job", error);
    if (r != PM_OK) return r;
    if (!job->parents || !job->input)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "local-to-model job: parents and input must be set");
    if (!job->output && !job->output_matrices)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "local-to-model job: no output (set output, output_matrices or both)");
    if (!pm_pose_aligned(job->input))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "local-to-model job: input%s", PM_ALIGN_HINT);
    if (job->output_matrices && !pm_pose_aligned(job->output_matrices))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "local-to-model job: output_matrices is not 16-byte aligned (each matrix is four aligned "
                       "columns)");
    /* No output may share memory with what the job reads (or with the other output): joints are
     * written while later ones are still to be read, so an overlap gives a wrong pose silently. */
    const size_t n = (size_t)job->joint_count, in_size = (size_t)pm_soa_count(job->joint_count) * sizeof(pm_soa_transform);
    const void *outs[2] = {job->output, job->output_matrices};
    const size_t out_sizes[2] = {n * sizeof(pm_transform), n * 16 * sizeof(float)};
    const char *out_names[2] = {"output", "output_matrices"};
    for (int k = 0; k < 2; k++) {
        if (!outs[k]) continue;
        const char *what = pm_bytes_overlap(outs[k], out_sizes[k], job->input, in_size)            ? "the input"
                           : pm_bytes_overlap(outs[k], out_sizes[k], job->parents, n * sizeof(int32_t)) ? "parents"
                           : k == 0 && outs[1] && pm_bytes_overlap(outs[0], out_sizes[0], outs[1], out_sizes[1])
                               ? "output_matrices"
                           : job->root && pm_bytes_overlap(outs[k], out_sizes[k], job->root, sizeof *job->root) ? "the root"
                                                                                                                 : NULL;
        if (what)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "local-to-model job: %s overlaps %s (outputs need buffers of their own)",
                           out_names[k], what);
    }
    /* The root is one transform: checked on every run, as the sizes are. A rotation that is not
     * unit would scale and shear every joint below it. */
    if (job->root) {
        const pm_transform *t = job->root;
        const pm_quat q = t->rotation;
        if (!isfinite(q.x + q.y + q.z + q.w + t->translation.x + t->translation.y + t->translation.z))
            return pm_fail(error, PM_ERR_NUMERIC, "local-to-model job: the root transform is not finite");
        double n2 = (double)q.x * q.x + (double)q.y * q.y + (double)q.z * q.z + (double)q.w * q.w;
        if (!(fabs(n2 - 1.0) <= 1e-3))
            return pm_fail(error, PM_ERR_NUMERIC, "local-to-model job: the root rotation is not a unit quaternion (norm %g)",
                           sqrt(n2));
    }
    return PM_OK;
}

pm_result pm_local_to_model_job_validate(const pm_local_to_model_job *job, pm_error *error) {
    pm_result r = l2m_check_sizes(job, error);
    if (r != PM_OK) return r;
    /* Run calls this on every pose: one vectorised pass (in the widest build the CPU has), and the
     * joint at fault is looked for only on failure. */
    const int32_t *parents = job->parents;
    if (pm_l2m_parents_bad(parents, job->joint_count, PM_KERNEL_AUTO))
        for (int j = 0; j < job->joint_count; j++)
            if (parents[j] < -1 || parents[j] >= j) return pm_l2m_bad_parent(j, (int)parents[j], error);
    return PM_OK;
}

pm_result pm_l2m_bad_parent(int j, int p, pm_error *error) {
    return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                   "local-to-model job: joint %d has parent %d (parents must come before their children)", j, p);
}

#if defined(PM_SIMD_VECTOR)

/* ---- matrices ---- */

/* A group's locals as matrices: m[0..8] the rotations (soa_rotation_matrices), m[9..11] the
 * translations. */
PM_SIMD_INLINE void soa_to_matrices(const pm_soa_transform *in, pm_f4 *m) {
    soa_rotation_matrices(f4_load_a(in->qx), f4_load_a(in->qy), f4_load_a(in->qz), f4_load_a(in->qw), m);
    m[9] = f4_load_a(in->tx);
    m[10] = f4_load_a(in->ty);
    m[11] = f4_load_a(in->tz);
}

/* Model matrices are composed joint by joint (a child needs its parent): each column of
 * model[parent] * local is three broadcast-multiply-adds of the parent's columns by the local's
 * elements (PM_L2M_MATRIX_JOINT), which the SoA conversion leaves one per lane, so each broadcast
 * is one shuffle. About 39 vector operations per joint; with SSE2 the 12 broadcasts share
 * the shuffle/adder ports with the 9 additions, which bounds the loop (the AVX2 kernel loads them
 * instead; docs/BENCHMARKS.md has the measurements, including the variants that did not pay). */
#define BC(v, k) I4_SHUFFLE(v, k, k, k, k)

/* Element i of lane K's local, broadcast by a shuffle; one joint is PM_L2M_MATRIX_JOINT. */
#define L2M_SSE_ELEMENT(K, i) BC(m[i], K)
#define L2M_MAT_JOINT(K) PM_L2M_MATRIX_JOINT(L2M_SSE_ELEMENT, K)

static pm_result l2m_run_matrices(const pm_local_to_model_job *job, pm_error *error) {
    const int n = job->joint_count;
    const int32_t *parents = job->parents;
    float *mats = job->output_matrices;
    PM_ALIGN16 float root_m[16];
    pm_transform_to_matrix(root_m, job->root ? *job->root : pm_transform_identity());
    /* The previous joint's columns; for joint 0 (parent -1 = j - 1) the root's. */
    pm_f4 c0 = f4_load_a(root_m), c1 = f4_load_a(root_m + 4), c2 = f4_load_a(root_m + 8), c3 = f4_load_a(root_m + 12);
    float *o = mats;
    for (int g = 0, j = 0; j < n; g++) {
        pm_f4 m[12];
        soa_to_matrices(job->input + g, m);
        if (j + 4 <= n) {
            L2M_MAT_JOINT(0);
            L2M_MAT_JOINT(1);
            L2M_MAT_JOINT(2);
            L2M_MAT_JOINT(3);
        } else {
            int rest = n - j;
            L2M_MAT_JOINT(0);
            if (rest > 1) L2M_MAT_JOINT(1);
            if (rest > 2) L2M_MAT_JOINT(2);
        }
    }
    return PM_OK;
}

/* ---- transforms ---- */

/* Model-space transforms are computed joint by joint (a child needs its parent), one quaternion
 * or vector per register (aos_compose_rotation / _translation in pose_kernels.h, shared with the
 * AVX2 kernel): the local's components are broadcast from their SoA vectors with one shuffle each,
 * off the chain (BC); its translation is also transposed out of the group, four joints at once. */

/* One joint, lane K of the group (local translation LT): its parent from registers (the previous
 * joint), the root, or memory. */
#define L2M_JOINT(K, LT, LAST)                                                                                         \
    do {                                                                                                               \
        int p = parents[j];                                                                                            \
        pm_f4 pq = prev_q, pt = prev_t;                                                                                \
        if (PM_UNLIKELY(p != j - 1)) {                                                                                 \
            if (p < 0) {                                                                                               \
                if (PM_UNLIKELY(p != -1)) return pm_l2m_bad_parent(j, p, error);                                       \
                pq = root_q;                                                                                           \
                pt = root_t;                                                                                           \
            } else {                                                                                                   \
                if (PM_UNLIKELY(p >= j)) return pm_l2m_bad_parent(j, p, error);                                        \
                pq = f4_load(&out[p].rotation.x);                                                                      \
                pt = load_vec3(&out[p].translation);                                                                   \
            }                                                                                                          \
        }                                                                                                              \
        aos_perms pp = aos_perms_of(pq);                                                                               \
        prev_q = aos_compose_rotation(pq, pp, BC(qx, K), BC(qy, K), f4_xor(BC(qz, K), sign_k), BC(qw, K));             \
        prev_t = aos_compose_translation(pq, pp, BC(pq, 3), pt, BC(tx2, K), BC(ty2, K), f4_xor(BC(tz2, K), sign_k),    \
                                         (LT));                                                                        \
        f4_store(&o->rotation.x, prev_q);                                                                              \
        store_translation(o++, prev_t, (LAST));                                                                        \
        j++;                                                                                                           \
    } while (0)

/* Four rows of four lanes transposed and stored as the same column of four consecutive matrices. */
PM_SIMD_INLINE void store_column4(float *dst, pm_f4 r0, pm_f4 r1, pm_f4 r2, pm_f4 r3) {
    pm_f4 a0 = f4_unpacklo32(r0, r1), a1 = f4_unpacklo32(r2, r3);
    pm_f4 a2 = f4_unpackhi32(r0, r1), a3 = f4_unpackhi32(r2, r3);
    f4_store_a(dst, f4_unpacklo64(a0, a1));
    f4_store_a(dst + 16, f4_unpackhi64(a0, a1));
    f4_store_a(dst + 32, f4_unpacklo64(a2, a3));
    f4_store_a(dst + 48, f4_unpackhi64(a2, a3));
}

static pm_result l2m_run_transforms(const pm_local_to_model_job *job, pm_error *error) {
    const int n = job->joint_count;
    const int32_t *parents = job->parents;
    pm_transform *out = job->output;
    pm_transform root = job->root ? *job->root : pm_transform_identity();
    const pm_f4 root_q = f4_set(root.rotation.x, root.rotation.y, root.rotation.z, root.rotation.w);
    const pm_f4 root_t = f4_set(root.translation.x, root.translation.y, root.translation.z, 0.0f);
    /* The previous joint's result stays in registers: chains (parent = j - 1) never reload it. */
    pm_f4 prev_q = root_q, prev_t = root_t;
    const pm_i4 sign_k = {0, PM_SIGN_BIT, 0, PM_SIGN_BIT};
    pm_transform *o = out; /* out + j, kept apart: cheaper than j * 28 per joint */
    for (int g = 0, j = 0; j < n; g++) {
        const pm_soa_transform *in = job->input + g;
        pm_f4 qx = f4_load_a(in->qx), qy = f4_load_a(in->qy), qz = f4_load_a(in->qz), qw = f4_load_a(in->qw);
        pm_f4 tx = f4_load_a(in->tx), ty = f4_load_a(in->ty), tz = f4_load_a(in->tz), zero = f4_zero();
        pm_f4 tx2 = tx + tx, ty2 = ty + ty, tz2 = tz + tz;
        /* 4x4 transpose: lane k of the SoA translations becomes vector k. */
        pm_f4 b0 = f4_unpacklo32(tx, ty), b1 = f4_unpacklo32(tz, zero);
        pm_f4 b2 = f4_unpackhi32(tx, ty), b3 = f4_unpackhi32(tz, zero);
        if (j + 4 < n) {
            L2M_JOINT(0, f4_unpacklo64(b0, b1), 0);
            L2M_JOINT(1, f4_unpackhi64(b0, b1), 0);
            L2M_JOINT(2, f4_unpacklo64(b2, b3), 0);
            L2M_JOINT(3, f4_unpackhi64(b2, b3), 0);
        } else {
            /* The last group: its last joint stores its translation without spilling over. */
            int rest = n - j;
            L2M_JOINT(0, f4_unpacklo64(b0, b1), rest == 1);
            if (rest > 1) L2M_JOINT(1, f4_unpackhi64(b0, b1), rest == 2);
            if (rest > 2) L2M_JOINT(2, f4_unpacklo64(b2, b3), rest == 3);
            if (rest > 3) L2M_JOINT(3, f4_unpackhi64(b2, b3), 1);
        }
    }
    return PM_OK;
}

#undef BC

/* With both outputs: the matrices of the transforms just written, four at a time (transposed to
 * SoA, converted, transposed back), so that both outputs describe exactly the same pose. A pass of
 * its own: fused into the composition loop, which already keeps the vector ports busy, it was
 * slower (570 against 524 ns for both outputs of 65 joints). */
static void l2m_matrices_of_transforms(float *mats, const pm_transform *t, int n) {
    const pm_f4 zero = f4_zero(), one = f4_set1(1.0f);
    int j = 0;
    for (; j + 4 <= n; j += 4, mats += 64) {
        pm_f4 q0 = f4_load(&t[j].rotation.x), q1 = f4_load(&t[j + 1].rotation.x);
        pm_f4 q2 = f4_load(&t[j + 2].rotation.x), q3 = f4_load(&t[j + 3].rotation.x);
        pm_f4 p0 = load_vec3(&t[j].translation), p1 = load_vec3(&t[j + 1].translation);
        pm_f4 p2 = load_vec3(&t[j + 2].translation), p3 = load_vec3(&t[j + 3].translation);
        pm_f4 a0 = f4_unpacklo32(q0, q1), a1 = f4_unpacklo32(q2, q3);
        pm_f4 a2 = f4_unpackhi32(q0, q1), a3 = f4_unpackhi32(q2, q3);
        pm_f4 b0 = f4_unpacklo32(p0, p1), b1 = f4_unpacklo32(p2, p3);
        pm_f4 b2 = f4_unpackhi32(p0, p1), b3 = f4_unpackhi32(p2, p3);
        pm_f4 m[9];
        soa_rotation_matrices(f4_unpacklo64(a0, a1), f4_unpackhi64(a0, a1), f4_unpacklo64(a2, a3),
                              f4_unpackhi64(a2, a3), m);
        store_column4(mats, m[0], m[1], m[2], zero);
        store_column4(mats + 4, m[3], m[4], m[5], zero);
        store_column4(mats + 8, m[6], m[7], m[8], zero);
        store_column4(mats + 12, f4_unpacklo64(b0, b1), f4_unpackhi64(b0, b1), f4_unpacklo64(b2, b3), one);
    }
    for (; j < n; j++, mats += 16) pm_transform_to_matrix(mats, t[j]);
}

#else

static pm_result l2m_run_matrices(const pm_local_to_model_job *job, pm_error *error) {
    PM_ALIGN16 float root_m[16];
    pm_transform_to_matrix(root_m, job->root ? *job->root : pm_transform_identity());
    float *mats = job->output_matrices;
    for (int j = 0; j < job->joint_count; j++) {
        int p = job->parents[j];
        if (p < -1 || p >= j) return pm_l2m_bad_parent(j, p, error);
        pm_transform local;
        local.rotation = pm_pose_rotation(job->input, j);
        local.translation = pm_pose_translation(job->input, j);
        float l[16];
        pm_transform_to_matrix(l, local);
        const float *a = p < 0 ? root_m : mats + 16 * (size_t)p;
        float *m = mats + 16 * (size_t)j;
        for (int c = 0; c < 4; c++)
            for (int r = 0; r < 4; r++)
                m[4 * c + r] =
                    a[r] * l[4 * c] + a[4 + r] * l[4 * c + 1] + a[8 + r] * l[4 * c + 2] + a[12 + r] * l[4 * c + 3];
    }
    return PM_OK;
}

static pm_result l2m_run_transforms(const pm_local_to_model_job *job, pm_error *error) {
    pm_transform root = job->root ? *job->root : pm_transform_identity();
    for (int j = 0; j < job->joint_count; j++) {
        int p = job->parents[j];
        if (p < -1 || p >= j) return pm_l2m_bad_parent(j, p, error);
        pm_transform local;
        local.rotation = pm_pose_rotation(job->input, j);
        local.translation = pm_pose_translation(job->input, j);
        job->output[j] = pm_transform_mul(p < 0 ? root : job->output[p], local);
    }
    return PM_OK;
}

static void l2m_matrices_of_transforms(float *mats, const pm_transform *t, int n) {
    for (int j = 0; j < n; j++) pm_transform_to_matrix(mats + 16 * (size_t)j, t[j]);
}

#endif

int pm_l2m_avx2_supported(void) {
#if defined(PM_L2M_HAVE_AVX2)
    return pm_cpu_has_avx2();
#else
    return 0;
#endif
}

int pm_l2m_avx512_supported(void) {
#if defined(PM_L2M_HAVE_AVX512)
    return pm_cpu_has_avx2() && pm_cpu_has_avx512();
#else
    return 0;
#endif
}

#if defined(PM_L2M_HAVE_AVX2)
/* One x86 build's kernels (AVX2 or AVX-512). */
typedef struct l2m_avx_kernels {
    pm_result (*matrices)(const pm_local_to_model_job *job, pm_error *error);
    pm_result (*transforms)(const pm_local_to_model_job *job, pm_error *error);
    int (*matrices_of_transforms)(float *mats, const pm_transform *t, int n);
    uint32_t (*parents_bad)(const int32_t *parents, int n);
} l2m_avx_kernels;

static const l2m_avx_kernels l2m_avx2 = {pm_l2m_matrices_avx2, pm_l2m_transforms_avx2,
                                         pm_l2m_matrices_of_transforms_avx2, pm_l2m_parents_bad_avx2};
#if defined(PM_L2M_HAVE_AVX512)
static const l2m_avx_kernels l2m_avx512 = {pm_l2m_matrices_avx512, pm_l2m_transforms_avx512,
                                           pm_l2m_matrices_of_transforms_avx512, pm_l2m_parents_bad_avx512};
#endif

/* The x86 build a kernel choice runs (the widest the build and the CPU have, no wider than asked),
 * or NULL for the baseline kernels. */
static const l2m_avx_kernels *l2m_pick(int kernel) {
    if (kernel == PM_KERNEL_BASELINE || !pm_l2m_avx2_supported()) return NULL;
#if defined(PM_L2M_HAVE_AVX512)
    if (kernel != PM_KERNEL_AVX2 && pm_l2m_avx512_supported()) return &l2m_avx512;
#endif
    return &l2m_avx2;
}
#endif

uint32_t pm_l2m_parents_bad(const int32_t *parents, int n, int kernel) {
#if defined(PM_L2M_HAVE_AVX2)
    const l2m_avx_kernels *k = l2m_pick(kernel);
    if (k) return k->parents_bad(parents, n);
#else
    (void)kernel;
#endif
    return pm_l2m_parents_bad_inline(parents, n);
}

pm_result pm_local_to_model_job_run_kernel(const pm_local_to_model_job *job, int kernel, pm_error *error) {
    /* Everything validate checks, the hierarchy included, before a joint is written: the kernels'
     * own checks of each parent (one predictable branch a joint) only guard their reads, and
     * would leave the joints before a bad parent written. A pass over the parents costs a few
     * nanoseconds of a 65-joint pose's couple of hundred. */
    pm_result r = pm_local_to_model_job_validate(job, error);
    if (r != PM_OK) return r;
    const int n = job->joint_count;
    /* With both outputs the transforms are composed and then converted: the two agree exactly, and
     * the conversion costs less than a second chain. */
#if defined(PM_L2M_HAVE_AVX2)
    const l2m_avx_kernels *k = l2m_pick(kernel);
    if (k) {
        if (!job->output) return k->matrices(job, error);
        r = k->transforms(job, error);
        if (r == PM_OK && job->output_matrices) {
            int done = k->matrices_of_transforms(job->output_matrices, job->output, n);
            l2m_matrices_of_transforms(job->output_matrices + 16 * (size_t)done, job->output + done, n - done);
        }
        return r;
    }
#else
    (void)kernel;
#endif
    if (!job->output) return l2m_run_matrices(job, error);
    r = l2m_run_transforms(job, error);
    if (r == PM_OK && job->output_matrices) l2m_matrices_of_transforms(job->output_matrices, job->output, n);
    return r;
}

pm_result pm_local_to_model_job_run(const pm_local_to_model_job *job, pm_error *error) {
    return pm_local_to_model_job_run_kernel(job, PM_KERNEL_AUTO, error);
}

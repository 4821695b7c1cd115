/* Additive poses (SPEC BL5): extraction and application, in local space, right-multiplied. */
#include <math.h>
#include <stdio.h>

#include "clip_internal.h"
#include "core.h"
#include "pose_kernels.h"

/* ---- extract ---- */

pm_additive_extract_job pm_default_additive_extract_job(void) {
    pm_additive_extract_job j;
    memset(&j, 0, sizeof j);
    return j;
}

pm_result pm_additive_extract_job_validate(const pm_additive_extract_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive extract job: NULL job");
    pm_result r = pm_check_joint_count(job->joint_count, "additive extract job", error);
    if (r != PM_OK) return r;
    if (!job->source || !job->base || !job->output)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive extract job: source, base and output must be set");
    if (!pm_pose_aligned(job->source) || !pm_pose_aligned(job->base) || !pm_pose_aligned(job->output))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive extract job: a pose%s", PM_ALIGN_HINT);
    const int groups = pm_soa_count(job->joint_count);
    const char *overlapped = pm_poses_overlap_apart(job->output, job->source, groups) ? "the source"
                             : pm_poses_overlap_apart(job->output, job->base, groups) ? "the base"
                                                                                       : NULL;
    if (overlapped)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "additive extract job: output overlaps %s without being it (the output may be the source or the "
                       "base, not part of one)",
                       overlapped);
    return PM_OK;
}

pm_result pm_additive_extract_job_run(const pm_additive_extract_job *job, pm_error *error) {
    pm_result r = pm_additive_extract_job_validate(job, error);
    if (r != PM_OK) return r;
    int groups = pm_soa_count(job->joint_count);
    for (int g = 0; g < groups; g++) {
        soa_quat s = soa_load_rotation(job->source + g), b = soa_load_rotation(job->base + g);
        soa_vec3 st = soa_load_translation(job->source + g), bt = soa_load_translation(job->base + g);
        soa_vec3 dt;
        dt.x = f4_sub(st.x, bt.x);
        dt.y = f4_sub(st.y, bt.y);
        dt.z = f4_sub(st.z, bt.z);
        /* base^-1 * source: the offset that base * delta turns back into source. */
        soa_store(job->output + g, soa_quat_mul(soa_quat_conjugate(b), s), dt);
    }
    return PM_OK;
}

/* ---- apply ---- */

pm_additive_apply_job pm_default_additive_apply_job(void) {
    pm_additive_apply_job j;
    memset(&j, 0, sizeof j);
    j.weight = 1.0f;
    return j;
}

/* Everything but the mask's values: run checks those as it goes (or first, in place). */
static pm_result check_apply(const pm_additive_apply_job *job, pm_error *error) {
    if (!job) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: NULL job");
    pm_result r = pm_check_joint_count(job->joint_count, "additive apply job", error);
    if (r != PM_OK) return r;
    if (!job->target || !job->output)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: target and output must be set");
    if (!isfinite(job->weight)) return pm_fail(error, PM_ERR_NUMERIC, "additive apply job: the weight is not finite");
    if (fabsf(job->weight) > PM_ADDITIVE_MAX_WEIGHT)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: weight %s is outside [-%g, %g]",
                       pm_float_text(job->weight).text, (double)PM_ADDITIVE_MAX_WEIGHT, (double)PM_ADDITIVE_MAX_WEIGHT);
    if (job->scaling != PM_ADDITIVE_POWER && job->scaling != PM_ADDITIVE_NLERP)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: unknown scaling %d", (int)job->scaling);
    if (job->weight != 0.0f && !job->delta)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: weight %g but no delta pose", (double)job->weight);
    if (!pm_pose_aligned(job->target) || !pm_pose_aligned(job->output) || (job->weight != 0.0f && !pm_pose_aligned(job->delta)))
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive apply job: a pose%s", PM_ALIGN_HINT);
    const int groups = pm_soa_count(job->joint_count);
    const char *overlapped = pm_poses_overlap_apart(job->output, job->target, groups) ? "the target"
                             : job->weight != 0.0f && pm_poses_overlap_apart(job->output, job->delta, groups) ? "the delta"
                                                                                                               : NULL;
    if (overlapped)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                       "additive apply job: output overlaps %s without being it (the output may be the target or the "
                       "delta, not part of one)",
                       overlapped);
    return PM_OK;
}

static pm_result check_apply_mask(const pm_additive_apply_job *job, pm_error *error) {
    return pm_check_joint_weights(job->joint_weights, job->joint_count, "additive apply job: the weight of joint", error);
}

pm_result pm_additive_apply_job_validate(const pm_additive_apply_job *job, pm_error *error) {
    pm_result r = check_apply(job, error);
    /* A zero-weight job reads neither the delta nor the mask. */
    if (r == PM_OK && job->weight != 0.0f && job->joint_weights) r = check_apply_mask(job, error);
    return r;
}

/* delta^w for a fractional weight without asin, sin, cos, square root or division. With c = |q.w|
 * = cos(a), a the half angle, on the short arc
 *     delta^w = (v sin(w a) / sin(a), cos(w a)) = (v A, B),
 * and for a given w both A and B are smooth functions of c on [0, 1]. They are written
 *     A = w + w (1 - w) (1 - c) PA(c, w),   B = 1 + w^2 (1 - c) PB(c, w)
 * so that w = 0, the identity and (for A) w = 1 come out exact, with PA and PB polynomials of
 * degree 5 in c and in w: weighted least-squares fits refined towards minimax over c in [0, 1],
 * w in [0, 1]. Evaluated in single precision the rotation is within 2e-6 rad of the exact power and
 * |delta^w| within 1.5e-6 of 1 for a unit delta (tests/test_blend_precision.c measures both against
 * a double-precision power). Row j holds the coefficients of w^j: PA's of c^0..c^5, then PB's. */
static const float pm_pow_coef[6][12] = {
    {0.570803853f, -0.428934928f, 0.350626366f, -0.273161532f, 0.159913661f, -0.0462935076f, -1.23374288f,
     0.337272993f, -0.164212634f, 0.101215416f, -0.059222368f, 0.0189151134f},
    {0.570674138f, -0.42834749f, 0.349485618f, -0.271962556f, 0.159247165f, -0.046144971f, 0.000439707366f,
     -0.00237497004f, 0.020020973f, -0.0775689146f, 0.115133625f, -0.056933935f},
    {-0.0745945911f, 0.155755549f, -0.156171668f, 0.131620818f, -0.080142124f, 0.0237410422f, 0.251838872f,
     -0.383156064f, 0.162040755f, 0.0912607644f, -0.263902437f, 0.14549581f},
    {-0.0766016516f, 0.16493065f, -0.174558995f, 0.152521305f, -0.0936158388f, 0.0275439496f, 0.00400466125f,
     -0.0182869335f, 0.0940504461f, -0.322408281f, 0.46706333f, -0.229577377f},
    {0.00648142722f, -0.0244101709f, 0.0421293339f, -0.0453382386f, 0.0302650008f, -0.00920033732f,
     -0.0257666476f, 0.0798720695f, -0.146474999f, 0.285376936f, -0.358401498f, 0.169042642f},
    {0.00324341694f, -0.00948633549f, 0.0115614534f, -0.00895387031f, 0.00507826107f, -0.00145631439f,
     0.00322614578f, -0.0133272182f, 0.0345752774f, -0.0778767733f, 0.0993352173f, -0.0469470572f},
};

/* The polynomials' coefficients in c for weights w, and the weight terms they are scaled by. Every
 * value is computed by the same operations whether w is one weight for the whole job (once per job)
 * or one per lane (per-joint weights), so that a joint gets the same bits either way. */
typedef struct power_coef {
    pm_f4 k[12];
    pm_f4 w, wa, wb; /* w, w (1 - w), w^2 */
} power_coef;

PM_SIMD_INLINE pm_f4 pow_horner(pm_f4 w, pm_f4 c0, pm_f4 c1, pm_f4 c2, pm_f4 c3, pm_f4 c4, pm_f4 c5) {
    return f4_madd(f4_madd(f4_madd(f4_madd(f4_madd(c5, w, c4), w, c3), w, c2), w, c1), w, c0);
}

PM_SIMD_INLINE void power_weight_terms(power_coef *p, pm_f4 w) {
    p->w = w;
    p->wa = f4_mul(w, f4_sub(f4_set1(1.0f), w));
    p->wb = f4_mul(w, w);
}

/* One weight: four coefficients per vector, then each spread over the lanes. */
static void power_coef_uniform(power_coef *p, float weight) {
    const pm_f4 w = f4_set1(weight);
    power_weight_terms(p, w);
    for (int v = 0; v < 3; v++) {
#define PM_POW_ROW(j) f4_load(&pm_pow_coef[j][4 * v])
        pm_f4 k = pow_horner(w, PM_POW_ROW(0), PM_POW_ROW(1), PM_POW_ROW(2), PM_POW_ROW(3), PM_POW_ROW(4), PM_POW_ROW(5));
#undef PM_POW_ROW
        for (int i = 0; i < 4; i++) p->k[4 * v + i] = f4_set1(f4_lane(k, i));
    }
}

/* A weight per lane: every coefficient per lane. */
PM_SIMD_INLINE void power_coef_lanes(power_coef *p, pm_f4 w) {
    power_weight_terms(p, w);
    for (int i = 0; i < 12; i++) {
#define PM_POW_ROW(j) f4_set1(pm_pow_coef[j][i])
        p->k[i] = pow_horner(w, PM_POW_ROW(0), PM_POW_ROW(1), PM_POW_ROW(2), PM_POW_ROW(3), PM_POW_ROW(4), PM_POW_ROW(5));
#undef PM_POW_ROW
    }
}

/* Degree 5 in c by Estrin's scheme: the polynomials sit on each group's critical path. */
PM_SIMD_INLINE pm_f4 pow_estrin(const pm_f4 *k, pm_f4 c, pm_f4 c2) {
    pm_f4 e0 = f4_madd(k[1], c, k[0]), e1 = f4_madd(k[3], c, k[2]), e2 = f4_madd(k[5], c, k[4]);
    return f4_madd(f4_madd(e2, c2, e1), c2, e0);
}

PM_SIMD_INLINE soa_quat power_from_identity(soa_quat q, const power_coef *p) {
    pm_f4 c = f4_abs(q.w), c2 = f4_mul(c, c), omc = f4_sub(f4_set1(1.0f), c);
    pm_f4 a = f4_madd(f4_mul(p->wa, omc), pow_estrin(p->k, c, c2), p->w);
    pm_f4 b = f4_madd(f4_mul(p->wb, omc), pow_estrin(p->k + 6, c, c2), f4_set1(1.0f));
    /* The short arc's sign goes into A: one xor instead of four. */
    a = f4_xor(a, f4_sign(q.w));
    soa_quat r;
    r.x = f4_mul(q.x, a);
    r.y = f4_mul(q.y, a);
    r.z = f4_mul(q.z, a);
    r.w = b;
    return r;
}

/* nlerp(identity, q, w) on q's short arc: (w v, 1 - w + w |q.w|), normalised; ozz's and UE's
 * scaling. The hemisphere sign goes into w (one xor instead of four). */
PM_SIMD_INLINE soa_quat nlerp_from_identity(soa_quat q, pm_f4 w) {
    pm_f4 ws = f4_xor(w, f4_sign(q.w));
    soa_quat r;
    r.x = f4_mul(q.x, ws);
    r.y = f4_mul(q.y, ws);
    r.z = f4_mul(q.z, ws);
    r.w = f4_add(f4_sub(f4_set1(1.0f), w), f4_mul(q.w, ws));
    return soa_quat_normalize(r);
}

/* Full weight: the delta itself, no scaling at all. */
static void apply_full(const pm_additive_apply_job *job, int groups) {
    for (int g = 0; g < groups; g++) {
        soa_vec3 tt = soa_load_translation(job->target + g), dt = soa_load_translation(job->delta + g), t;
        t.x = f4_add(tt.x, dt.x);
        t.y = f4_add(tt.y, dt.y);
        t.z = f4_add(tt.z, dt.z);
        soa_store(job->output + g, soa_quat_mul(soa_load_rotation(job->target + g), soa_load_rotation(job->delta + g)), t);
    }
}

/* Groups per pass below: the scaled deltas of a chunk go to the stack first. In a pass of their own
 * the polynomial (or normalisation) chains of many groups overlap; fused with the products they
 * held every group back (power 17 %, nlerp 27 % slower). */
#define PM_ADDITIVE_CHUNK 32

/* out = target * scaled, the translation moved by w times the delta's. */
PM_SIMD_INLINE void apply_group(const pm_additive_apply_job *job, int g, soa_quat scaled, pm_f4 w) {
    soa_vec3 tt = soa_load_translation(job->target + g), dt = soa_load_translation(job->delta + g), v;
    v.x = f4_madd(dt.x, w, tt.x);
    v.y = f4_madd(dt.y, w, tt.y);
    v.z = f4_madd(dt.z, w, tt.z);
    soa_store(job->output + g, soa_quat_mul(soa_load_rotation(job->target + g), scaled), v);
}

static void apply_uniform(const pm_additive_apply_job *job, int groups) {
    const pm_f4 w = f4_set1(job->weight);
    power_coef pc;
    const int power = job->scaling == PM_ADDITIVE_POWER;
    if (power) power_coef_uniform(&pc, job->weight);
    soa_quat scaled[PM_ADDITIVE_CHUNK];
    for (int start = 0; start < groups; start += PM_ADDITIVE_CHUNK) {
        int end = PM_MIN(groups, start + PM_ADDITIVE_CHUNK);
        if (power)
            for (int g = start; g < end; g++) scaled[g - start] = power_from_identity(soa_load_rotation(job->delta + g), &pc);
        else
            for (int g = start; g < end; g++) scaled[g - start] = nlerp_from_identity(soa_load_rotation(job->delta + g), w);
        for (int g = start; g < end; g++) apply_group(job, g, scaled[g - start], w);
    }
}

static void apply_masked(const pm_additive_apply_job *job, int groups, soa_weight_check *check) {
    const int power = job->scaling == PM_ADDITIVE_POWER;
    const pm_f4 weight = f4_set1(job->weight);
    soa_quat scaled[PM_ADDITIVE_CHUNK];
    pm_f4 ws[PM_ADDITIVE_CHUNK];
    for (int start = 0; start < groups; start += PM_ADDITIVE_CHUNK) {
        int end = PM_MIN(groups, start + PM_ADDITIVE_CHUNK);
        for (int g = start; g < end; g++) {
            pm_f4 jw = soa_load_joint_weights(job->joint_weights, g, job->joint_count);
            soa_weight_check_add(check, jw);
            pm_f4 w = f4_mul(weight, jw);
            soa_quat d = soa_load_rotation(job->delta + g);
            if (power) {
                power_coef pc;
                power_coef_lanes(&pc, w);
                scaled[g - start] = power_from_identity(d, &pc);
            } else scaled[g - start] = nlerp_from_identity(d, w);
            ws[g - start] = w;
        }
        for (int g = start; g < end; g++) apply_group(job, g, scaled[g - start], ws[g - start]);
    }
}

/* delta^n for a whole n >= 0 by squaring (n <= PM_ADDITIVE_MAX_WEIGHT: at most 7 squarings), renormalised
 * once so that the products' rounding does not grow the quaternion. */
static pm_quat quat_whole_power(pm_quat q, int n) {
    if (n == 0) return pm_quat_identity();
    if (n == 1) return q;
    pm_quat r = pm_quat_identity();
    for (; n > 0; n >>= 1) {
        if (n & 1) r = pm_quat_mul(r, q);
        q = pm_quat_mul(q, q);
    }
    return pm_quat_normalize(r);
}

/* Weights outside [0, 1], per lane: a negative weight applies the inverse delta (the conjugate) with
 * |w|, undoing what the delta adds; a weight above 1 exaggerates it. |w| = n + f splits into the
 * whole power delta^n, exact by products, and the fraction delta^f by the job's scaling; both turn
 * about the delta's axis, so their product is delta^|w| whatever the order. The short arc of
 * delta^f and the whole power meet at integer weights (f = 0 gives the identity exactly), so the
 * rotation is continuous in w. Rare enough (exaggeration, subtraction) that the whole powers are
 * taken lane by lane in scalar code. */
static void apply_extended(const pm_additive_apply_job *job, int groups, soa_weight_check *check) {
    const pm_f4 weight = f4_set1(job->weight);
    const int power = job->scaling == PM_ADDITIVE_POWER;
    for (int g = 0; g < groups; g++) {
        pm_f4 w = weight;
        if (job->joint_weights) {
            pm_f4 jw = soa_load_joint_weights(job->joint_weights, g, job->joint_count);
            soa_weight_check_add(check, jw);
            w = f4_mul(weight, jw);
        }
        soa_quat d = soa_load_rotation(job->delta + g);
        pm_i4 negative = f4_sign(w);
        d.x = f4_xor(d.x, negative);
        d.y = f4_xor(d.y, negative);
        d.z = f4_xor(d.z, negative);
        pm_f4 u = f4_abs(w);
        float whole[4], frac[4], ix[4], iy[4], iz[4], iw[4];
        for (int k = 0; k < 4; k++) {
            float uk = f4_lane(u, k);
            /* A lane of a bad mask may hold anything: it is reported afterwards, never looped on. */
            whole[k] = uk <= PM_ADDITIVE_MAX_WEIGHT ? floorf(uk) : 0.0f;
            frac[k] = uk <= PM_ADDITIVE_MAX_WEIGHT ? uk - whole[k] : 0.0f;
            pm_quat p = quat_whole_power(pm_quat_make(f4_lane(d.x, k), f4_lane(d.y, k), f4_lane(d.z, k), f4_lane(d.w, k)),
                                         (int)whole[k]);
            ix[k] = p.x;
            iy[k] = p.y;
            iz[k] = p.z;
            iw[k] = p.w;
        }
        pm_f4 f = f4_load(frac);
        soa_quat scaled;
        if (power) {
            power_coef pc;
            power_coef_lanes(&pc, f);
            scaled = power_from_identity(d, &pc);
        } else scaled = nlerp_from_identity(d, f);
        soa_quat ip = {f4_load(ix), f4_load(iy), f4_load(iz), f4_load(iw)};
        apply_group(job, g, soa_quat_mul(ip, scaled), w);
    }
}

pm_result pm_additive_apply_job_run(const pm_additive_apply_job *job, pm_error *error) {
    pm_result r = check_apply(job, error);
    if (r != PM_OK) return r;
    int groups = pm_soa_count(job->joint_count);
    if (job->weight == 0.0f) {
        /* A zero-weight additive is not read at all. */
        if (job->output != job->target) memmove(job->output, job->target, (size_t)groups * sizeof(pm_soa_transform));
        return PM_OK;
    }
    const int extended = job->weight < 0.0f || job->weight > 1.0f;
    if (!job->joint_weights && !extended) {
        if (job->weight == 1.0f) apply_full(job, groups);
        else apply_uniform(job, groups);
        return PM_OK;
    }
    /* A bad mask is normally caught by the running check after the blend, which only spoils the
     * output; writing over the target or the delta, it must be caught before anything is written. */
    int in_place = pm_poses_overlap(job->output, job->target, groups) || pm_poses_overlap(job->output, job->delta, groups);
    if (job->joint_weights && in_place && (r = check_apply_mask(job, error)) != PM_OK) return r;
    soa_weight_check check;
    soa_weight_check_init(&check);
    if (extended) apply_extended(job, groups, &check);
    else apply_masked(job, groups, &check);
    if (job->joint_weights && !soa_weight_check_ok(&check)) return check_apply_mask(job, error);
    return PM_OK;
}

/* ---- offline: additive clips ---- */

pm_result pm_clip_extract_additive(pm_clip *out, const pm_clip *source, const pm_clip *base, int base_frame,
                                   pm_error *error) {
    if (!out || !source || !base) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_clip_extract_additive: NULL argument");
    /* out may be source or base: the result is built aside and replaces out only on success. */
    const int aliased = out == source || out == base;
    pm_result r = pm_clip_validate(source, error);
    if (r == PM_OK) r = pm_clip_validate(base, error);
    if (r != PM_OK) return pm_clip_fail_into(out, aliased, r);
    const char *sname = source->name ? source->name : "source", *bname = base->name ? base->name : "base";
    if (!pm_skeleton_same_topology(&source->skeleton, &base->skeleton))
        return pm_clip_fail_into(out, aliased,
                                 pm_fail(error, PM_ERR_MISMATCH, "additive: '%s' and '%s' have different skeletons", sname,
                                         bname));
    if (base_frame >= base->frame_count)
        return pm_clip_fail_into(out, aliased,
                                 pm_fail(error, PM_ERR_INVALID_ARGUMENT, "additive: base frame %d is outside '%s' (%d frames)",
                                         base_frame, bname, base->frame_count));
    pm_clip add;
    memset(&add, 0, sizeof add);
    int jc = source->skeleton.joint_count;
    pm_quat *brot = (pm_quat *)pm_alloc_array(&source->allocator, (size_t)jc, sizeof(pm_quat), 16);
    pm_vec3 *btr = (pm_vec3 *)pm_alloc_array(&source->allocator, (size_t)jc, sizeof(pm_vec3), 16);
    if (!brot || !btr) {
        r = pm_fail(error, PM_ERR_OUT_OF_MEMORY, "additive: out of memory");
        goto done;
    }
    if ((r = pm_clip_copy(&add, source, NULL, error)) != PM_OK) goto done;
    char name[256];
    snprintf(name, sizeof name, "%s-additive", sname);
    if ((r = pm_clip_set_name(&add, name, error)) != PM_OK) goto done;
    float sdur = pm_clip_duration(source), bdur = pm_clip_duration(base);
    /* A fixed base frame is sampled once. */
    if (base_frame >= 0 && (r = pm_clip_sample(brot, btr, base, (float)base_frame * base->frame_time, error)) != PM_OK)
        goto done;
    for (int f = 0; f < source->frame_count; f++) {
        if (base_frame < 0) {
            float phase = sdur > 0.0f ? (float)f * source->frame_time / sdur : 0.0f;
            if ((r = pm_clip_sample(brot, btr, base, phase * bdur, error)) != PM_OK) goto done;
        }
        size_t at = (size_t)f * jc;
        for (int j = 0; j < jc; j++) {
            add.rotations[at + j] = pm_quat_normalize(pm_quat_mul(pm_quat_conjugate(brot[j]), source->rotations[at + j]));
            add.translations[at + j] = pm_vec3_sub(source->translations[at + j], btr[j]);
        }
    }
done:
    pm_free(&source->allocator, brot);
    pm_free(&source->allocator, btr);
    if (r != PM_OK) {
        pm_clip_destroy(&add);
        return pm_clip_fail_into(out, aliased, r);
    }
    pm_clip_move_into(out, &add, aliased);
    return PM_OK;
}

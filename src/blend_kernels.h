/* The pose jobs' kernels, included once by src/blend_kernels.c (the baseline build) and once by
 * src/blend_kernels_avx2.c (the AVX2 build): the same source, so the same lane operations and the
 * same bits either way (src/blend_internal.h). Each file makes its table of them at the end. */
#include <math.h>

#include "blend_internal.h"

/* ---- sampling ---- */

/* Translations are lerped alike whichever way the rotations are interpolated. */
PM_SIMD_INLINE soa_vec3 lerp_translation(soa_vec3 a, soa_vec3 b, pm_f4 t) {
    soa_vec3 v;
    v.x = f4_madd(f4_sub(b.x, a.x), t, a.x);
    v.y = f4_madd(f4_sub(b.y, a.y), t, a.y);
    v.z = f4_madd(f4_sub(b.z, a.z), t, a.z);
    return v;
}

/* The same on the four components, before normalisation (nlerp). */
PM_SIMD_INLINE soa_quat lerp_rotation(soa_quat a, soa_quat b, pm_f4 t) {
    soa_quat q;
    q.x = f4_madd(f4_sub(b.x, a.x), t, a.x);
    q.y = f4_madd(f4_sub(b.y, a.y), t, a.y);
    q.z = f4_madd(f4_sub(b.z, a.z), t, a.z);
    q.w = f4_madd(f4_sub(b.w, a.w), t, a.w);
    return q;
}

/* Keys are hemisphere-aligned at build time, so no sign test is needed between neighbours. */
static void interp_nlerp(pm_soa_transform *out, const pm_soa_transform *g0, const pm_soa_transform *g1, float alpha,
                         int count) {
    pm_f4 t = f4_set1(alpha);
    for (int g = 0; g < count; g++) {
        soa_quat q = lerp_rotation(soa_load_rotation(g0 + g), soa_load_rotation(g1 + g), t);
        soa_vec3 v = lerp_translation(soa_load_translation(g0 + g), soa_load_translation(g1 + g), t);
        soa_store(out + g, soa_quat_normalize(q), v);
    }
}

static void interp_slerp(pm_soa_transform *out, const pm_soa_transform *g0, const pm_soa_transform *g1, float alpha,
                         int count) {
    pm_f4 t = f4_set1(alpha);
    for (int g = 0; g < count; g++) {
        soa_quat a = soa_load_rotation(g0 + g), b = soa_load_rotation(g1 + g);
        soa_vec3 ta = soa_load_translation(g0 + g), tb = soa_load_translation(g1 + g);
        pm_f4 wa, wb;
        soa_slerp_weights(soa_quat_dot(a, b), t, &wa, &wb);
        soa_quat q = soa_quat_madd(soa_quat_scale(a, wa), b, wb);
        soa_vec3 v = lerp_translation(ta, tb, t);
        /* Slerp of unit quaternions is unit up to the polynomial error; renormalising is cheap. */
        soa_store(out + g, soa_quat_normalize(q), v);
    }
}

/* ---- blend ---- */

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

/* ---- layered blend ---- */

PM_SIMD_INLINE pm_f4 layer_weights(const active_layer *l, int g, int joint_count, soa_weight_check *check) {
    pm_f4 w = f4_set1(l->weight);
    if (!l->joint_weights) return w;
    pm_f4 jw = soa_load_joint_weights(l->joint_weights, g, joint_count);
    soa_weight_check_add(check, jw);
    return f4_mul(w, jw);
}

/* Finishes a joint group: lanes no layer touched (total 0) keep the base bit for bit because
 * their normalisation factor is exactly 1 and their sums are base * 1 + layer * 0, which is 0 for
 * a finite layer (the header asks for finite layers rather than pay a select per lane). */
PM_SIMD_INLINE void store_layered(pm_soa_transform *o, soa_quat q, soa_vec3 t, pm_f4 total) {
    pm_f4 len = f4_sqrt(soa_quat_dot(q, q));
    pm_f4 inv = f4_select(f4_eq(total, f4_zero()), f4_set1(1.0f), f4_div(f4_set1(1.0f), len));
    soa_store(o, soa_quat_scale(q, inv), t);
}

#define PM_LAYER_CHUNK 64

/* One layer, the common case: a per-joint lerp between base and layer. Mask weights and
 * hemisphere signs first, in their own pass (fused, the dot -> sign -> multiply chain held back
 * every group), then the blend. Groups the mask leaves alone are blended too (their lanes come out
 * as the base): a branch per group cost more than the arithmetic it would skip. */
static void layered_one(const pm_layered_blend_job *job, const active_layer *layer, soa_weight_check *check_out) {
    soa_weight_check local = *check_out, *check = &local; /* in registers, not through memory */
    const int groups = pm_soa_count(job->joint_count);
    const pm_f4 one = f4_set1(1.0f);
    pm_f4 weight[PM_LAYER_CHUNK], signed_w[PM_LAYER_CHUNK];
    for (int start = 0; start < groups; start += PM_LAYER_CHUNK) {
        int end = PM_MIN(groups, start + PM_LAYER_CHUNK);
        for (int g = start; g < end; g++) {
            pm_f4 w = layer_weights(layer, g, job->joint_count, check);
            weight[g - start] = w;
            signed_w[g - start] = soa_signed_weight(w, soa_load_rotation(layer->pose + g), soa_load_rotation(job->base + g));
        }
        for (int g = start; g < end; g++) {
            const pm_soa_transform *b = job->base + g;
            pm_f4 w = weight[g - start], wb = f4_sub(one, w);
            soa_quat q = soa_quat_madd(soa_quat_scale(soa_load_rotation(b), wb), soa_load_rotation(layer->pose + g),
                                       signed_w[g - start]);
            soa_vec3 t0 = soa_load_translation(b), t1 = soa_load_translation(layer->pose + g), t;
            t.x = f4_madd(t1.x, w, f4_mul(t0.x, wb));
            t.y = f4_madd(t1.y, w, f4_mul(t0.y, wb));
            t.z = f4_madd(t1.z, w, f4_mul(t0.z, wb));
            store_layered(job->output + g, q, t, w);
        }
    }
    *check_out = local;
}

/* Several layers. The weights come first (they decide the base's share), then the base's weighted
 * rotation starts the sum and each layer is brought to the hemisphere of the sum so far: where the
 * base weighs nothing (over-full layers) or lies half a turn from the layers, a test against the
 * base alone would leave the sign of a near-zero dot to flip one of two layers that hold the same
 * rotation, and the two would cancel into a rotation neither has. */
static void layered_n(const pm_layered_blend_job *job, const active_layer *layers, int n, soa_weight_check *check_out) {
    soa_weight_check local = *check_out, *check = &local; /* in registers, not through memory */
    const int groups = pm_soa_count(job->joint_count);
    const pm_f4 one = f4_set1(1.0f), zero = f4_zero();
    pm_f4 w[PM_BLEND_MAX_INPUTS];
    for (int g = 0; g < groups; g++) {
        const pm_soa_transform *b = job->base + g;
        pm_f4 total = zero;
        for (int i = 0; i < n; i++) {
            w[i] = layer_weights(&layers[i], g, job->joint_count, check);
            total = f4_add(total, w[i]);
        }
        /* Over-full layers are normalised among themselves and leave the base out. */
        pm_f4 scale = f4_select(f4_lt(one, total), f4_div(one, total), one);
        pm_f4 wb = f4_max(f4_sub(one, total), zero);
        soa_quat acc_q = soa_quat_scale(soa_load_rotation(b), wb);
        soa_vec3 t0 = soa_load_translation(b), acc_t;
        acc_t.x = f4_mul(t0.x, wb);
        acc_t.y = f4_mul(t0.y, wb);
        acc_t.z = f4_mul(t0.z, wb);
        for (int i = 0; i < n; i++) {
            const pm_soa_transform *l = layers[i].pose + g;
            pm_f4 wi = f4_mul(w[i], scale);
            soa_quat q = soa_load_rotation(l);
            acc_q = soa_quat_madd(acc_q, q, soa_signed_weight(wi, q, acc_q));
            soa_vec3 t = soa_load_translation(l);
            acc_t.x = f4_madd(t.x, wi, acc_t.x);
            acc_t.y = f4_madd(t.y, wi, acc_t.y);
            acc_t.z = f4_madd(t.z, wi, acc_t.z);
        }
        store_layered(job->output + g, acc_q, acc_t, total);
    }
    *check_out = local;
}

/* ---- additive ---- */

static void additive_extract(const pm_additive_extract_job *job, int groups) {
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

static void apply_masked(const pm_additive_apply_job *job, int groups, soa_weight_check *check_out) {
    soa_weight_check local = *check_out, *check = &local; /* in registers, not through memory */
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
    *check_out = local;
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
static void apply_extended(const pm_additive_apply_job *job, int groups, soa_weight_check *check_out) {
    soa_weight_check local = *check_out, *check = &local; /* in registers, not through memory */
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
    *check_out = local;
}

/* The table of this build, named by the including file (PM_POSE_KERNELS_NAME). */
const pm_pose_kernels PM_POSE_KERNELS_NAME = {
    .sample_nlerp = interp_nlerp,
    .sample_slerp = interp_slerp,
    .blend2 = blend2,
    .blend3 = blend3,
    .blend_n = blend_n,
    .layered_one = layered_one,
    .layered_n = layered_n,
    .additive_extract = additive_extract,
    .apply_full = apply_full,
    .apply_uniform = apply_uniform,
    .apply_masked = apply_masked,
    .apply_extended = apply_extended,
};

#include "synth.h"

#include <math.h>
#include <string.h>

#include "cli_common.h"

enum {
    J_HIPS, J_SPINE, J_CHEST, J_NECK, J_HEAD,
    J_LUPLEG, J_LLEG, J_LFOOT, J_LTOE,
    J_RUPLEG, J_RLEG, J_RFOOT, J_RTOE,
    J_LARM, J_LFOREARM, J_RARM, J_RFOREARM,
    J_COUNT
};

static const struct {
    const char *name;
    int parent;
    float x, y, z;
} joints[J_COUNT] = {
    {"Hips", -1, 0.0f, 0.95f, 0.0f},      {"Spine", J_HIPS, 0.0f, 0.1f, 0.0f},
    {"Chest", J_SPINE, 0.0f, 0.2f, 0.0f}, {"Neck", J_CHEST, 0.0f, 0.2f, 0.0f},
    {"Head", J_NECK, 0.0f, 0.1f, 0.02f},  {"LeftUpLeg", J_HIPS, 0.1f, -0.05f, 0.0f},
    {"LeftLeg", J_LUPLEG, 0.0f, -0.42f, 0.0f}, {"LeftFoot", J_LLEG, 0.0f, -0.42f, 0.0f},
    {"LeftToeBase", J_LFOOT, 0.0f, -0.05f, 0.13f}, {"RightUpLeg", J_HIPS, -0.1f, -0.05f, 0.0f},
    {"RightLeg", J_RUPLEG, 0.0f, -0.42f, 0.0f}, {"RightFoot", J_RLEG, 0.0f, -0.42f, 0.0f},
    {"RightToeBase", J_RFOOT, 0.0f, -0.05f, 0.13f}, {"LeftArm", J_CHEST, 0.18f, 0.15f, 0.0f},
    {"LeftForeArm", J_LARM, 0.0f, -0.28f, 0.0f}, {"RightArm", J_CHEST, -0.18f, 0.15f, 0.0f},
    {"RightForeArm", J_RARM, 0.0f, -0.28f, 0.0f},
};

pm_synth_def pm_default_synth_def(void) {
    pm_synth_def d;
    memset(&d, 0, sizeof d);
    d.duration = 4.0f;
    d.fps = 30.0f;
    d.speed = 1.3f;
    d.seed = 1;
    return d;
}

pm_result pm_synth_skeleton(pm_skeleton *out, pm_error *error) {
    pm_result r = pm_skeleton_create(out, J_COUNT, NULL, error);
    if (r != PM_OK) return r;
    for (int j = 0; j < J_COUNT; j++) {
        out->parents[j] = joints[j].parent;
        out->rest_translations[j] = pm_vec3_make(joints[j].x, joints[j].y, joints[j].z);
        if ((r = pm_skeleton_set_name(out, j, joints[j].name, error)) != PM_OK) {
            pm_skeleton_destroy(out);
            return r;
        }
    }
    return PM_OK;
}

/* Smooth deterministic noise: a few sines with seed-derived frequencies and phases. */
static float wobble(unsigned seed, int channel, float t) {
    float v = 0.0f;
    for (int k = 0; k < 3; k++) {
        unsigned h = seed * 2654435761u + (unsigned)channel * 40503u + (unsigned)k * 97u;
        h ^= h >> 13;
        h *= 0x5bd1e995u;
        h ^= h >> 15;
        float f = 0.15f + (float)(h % 1000) / 1000.0f * (0.6f + (float)k);
        float ph = (float)((h >> 10) % 6283) / 1000.0f;
        v += pm_sinf(2.0f * PM_PI * f * t + ph) / (float)(k + 1);
    }
    return v;
}

static pm_quat euler_xyz(float x, float y, float z) {
    pm_quat qx = pm_quat_from_axis_angle(pm_vec3_make(1, 0, 0), x);
    pm_quat qy = pm_quat_from_axis_angle(pm_vec3_make(0, 1, 0), y);
    pm_quat qz = pm_quat_from_axis_angle(pm_vec3_make(0, 0, 1), z);
    return pm_quat_mul(qy, pm_quat_mul(qx, qz));
}

pm_result pm_synth_clip(pm_clip *out, const pm_synth_def *d, const char *name, pm_error *error) {
    if (!out || !d || !(d->duration > 0.0f && d->duration < 3600.0f) || !(d->fps > 0.0f && d->fps <= 1000.0f) ||
        !isfinite(d->speed) || !isfinite(d->turn_rate) || !isfinite(d->lateral))
        return pm_cli_set_error(error, PM_ERR_INVALID_ARGUMENT, "synth: duration, fps, speed or turn rate out of range");
    pm_skeleton sk;
    pm_result r = pm_synth_skeleton(&sk, error);
    if (r != PM_OK) return r;
    int frames = (int)floorf(d->duration * d->fps) + 1;
    r = pm_clip_create(out, &sk, frames, 1.0f / d->fps, NULL, error);
    pm_skeleton_destroy(&sk);
    if (r != PM_OK) return r;
    if ((r = pm_clip_set_name(out, name ? name : "synth", error)) != PM_OK) {
        pm_clip_destroy(out);
        return r;
    }
    out->looping = d->looping;
    float speed = d->speed;
    float moving = fminf(1.0f, sqrtf(speed * speed + d->lateral * d->lateral) / 0.3f);
    float cadence = 0.75f + 0.35f * fminf(speed, 4.0f); /* gait cycles per second */
    float swing = moving * fminf(0.25f + 0.12f * speed, 0.75f);
    float knee = moving * (0.25f + 0.35f * fminf(speed / 3.0f, 1.0f));
    float phase0 = (float)(d->seed % 628) / 100.0f;
    float heading = (float)((d->seed * 7919u) % 628) / 100.0f;
    pm_vec3 pos = pm_vec3_make((float)((d->seed * 31u) % 200) / 100.0f - 1.0f, 0.0f, (float)((d->seed * 17u) % 200) / 100.0f - 1.0f);
    float dt = 1.0f / d->fps;
    for (int f = 0; f < frames; f++) {
        float t = (float)f * dt;
        float ph = phase0 + 2.0f * PM_PI * cadence * t;
        float yaw = heading + d->turn_rate * t + 0.03f * wobble(d->seed, 0, t);
        pm_quat *rot = out->rotations + (size_t)f * J_COUNT;
        pm_vec3 *tr = out->translations + (size_t)f * J_COUNT;
        float bob = 0.02f * moving * pm_sinf(2.0f * ph) - 0.06f * fminf(speed / 4.0f, 1.0f);
        float sway = (1.0f - moving) * 0.04f * wobble(d->seed, 1, t) + 0.015f * moving * pm_sinf(ph);
        pm_vec3 left = pm_quat_rotate(pm_quat_from_yaw(yaw), pm_vec3_make(1, 0, 0));
        tr[J_HIPS] = pm_vec3_add(pm_vec3_add(pos, pm_vec3_scale(left, sway)), pm_vec3_make(0, 0.95f + bob, 0));
        rot[J_HIPS] = pm_quat_mul(pm_quat_from_yaw(yaw + 0.08f * moving * pm_sinf(ph)),
                                  euler_xyz(0.05f * fminf(speed / 3.0f, 1.0f) + 0.02f * wobble(d->seed, 2, t),
                                            0.0f, 0.04f * moving * pm_sinf(ph)));
        rot[J_SPINE] = euler_xyz(0.02f * wobble(d->seed, 3, t), -0.1f * moving * pm_sinf(ph), 0.0f);
        rot[J_CHEST] = euler_xyz(0.03f * fminf(speed / 3.0f, 1.0f), -0.05f * moving * pm_sinf(ph), 0.02f * wobble(d->seed, 4, t));
        rot[J_NECK] = euler_xyz(0.02f * wobble(d->seed, 5, t), 0.1f * wobble(d->seed, 6, t), 0.0f);
        rot[J_HEAD] = euler_xyz(0.05f * wobble(d->seed, 7, t), 0.2f * wobble(d->seed, 8, t), 0.0f);
        for (int side = 0; side < 2; side++) {
            float p = ph + (side ? PM_PI : 0.0f);
            int up = side ? J_RUPLEG : J_LUPLEG;
            /* Negative pitch swings the leg forward (+Z). */
            rot[up] = euler_xyz(-swing * pm_sinf(p), 0.0f, (side ? -1.0f : 1.0f) * 0.03f * (1.0f - moving) * wobble(d->seed, 9 + side, t));
            rot[up + 1] = euler_xyz(knee * fmaxf(0.0f, pm_sinf(p - 0.5f * PM_PI)) + 0.05f, 0.0f, 0.0f);
            rot[up + 2] = euler_xyz(-0.2f * moving * pm_sinf(p + 0.5f), 0.0f, 0.0f);
            rot[up + 3] = euler_xyz(0.3f * moving * fmaxf(0.0f, -pm_sinf(p)), 0.0f, 0.0f);
            int arm = side ? J_RARM : J_LARM;
            rot[arm] = euler_xyz(0.6f * swing * pm_sinf(p), 0.0f, (side ? -1.0f : 1.0f) * (0.12f + 0.03f * wobble(d->seed, 11 + side, t)));
            rot[arm + 1] = euler_xyz(-0.3f - 0.4f * fminf(speed / 3.0f, 1.0f), 0.0f, 0.0f);
        }
        /* Advance the root along the heading: forward speed plus side-stepping. */
        pm_vec3 fwd = pm_quat_rotate(pm_quat_from_yaw(yaw), pm_vec3_make(0, 0, 1));
        float v = speed * (1.0f + 0.05f * moving * pm_sinf(2.0f * ph));
        pos = pm_vec3_add(pos, pm_vec3_add(pm_vec3_scale(fwd, v * dt), pm_vec3_scale(left, d->lateral * dt)));
    }
    return PM_OK;
}

pm_synth_def pm_synth_variant(int index, unsigned seed) {
    pm_synth_def d = pm_default_synth_def();
    unsigned h = seed * 2246822519u + (unsigned)index * 3266489917u;
    h ^= h >> 15;
    float u = (float)(h % 10000) / 10000.0f, v = (float)((h / 10000) % 1000) / 1000.0f;
    d.seed = h;
    d.duration = 3.0f + 4.0f * v;
    switch (index % 6) {
    case 0: d.speed = 1.0f + 0.6f * u; break;                          /* walk */
    case 1: d.speed = 2.6f + 1.2f * u; break;                          /* run */
    case 2: d.speed = 1.2f; d.turn_rate = (u - 0.5f) * 1.6f; break;    /* turning walk */
    case 3: d.speed = 0.0f; d.duration = 5.0f; break;                  /* idle */
    case 4: d.speed = 0.3f; d.lateral = (u < 0.5f ? -1.0f : 1.0f) * 0.8f; break; /* side-step */
    default: d.speed = 3.0f; d.turn_rate = (u - 0.5f) * 2.4f; break;  /* turning run */
    }
    return d;
}

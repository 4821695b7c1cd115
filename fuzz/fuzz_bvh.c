/* libFuzzer target for the BVH reader: any input either parses or fails with a message naming
 * the source, leaving the clip zeroed; whatever parses must write and read back. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "posematch/posematch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_zeroed(const pm_clip *clip) {
    pm_clip zero;
    memset(&zero, 0, sizeof zero);
    return memcmp(clip, &zero, sizeof zero) == 0;
}

/* The written text must read back to the same structure (detection switched off: it is the
 * writer's units and axes that are checked here, not the heuristics). */
static void check_round_trip(const pm_clip *clip) {
    char *text;
    size_t size;
    pm_error err;
    pm_result r = pm_bvh_write_memory(&text, &size, clip, NULL, &err);
    if (r == PM_ERR_NUMERIC) return; /* a value that no longer fits a float once converted back */
    if (r != PM_OK) abort();
    pm_bvh_def def = pm_default_bvh_def();
    def.unit_scale = clip->unit_scale;
    def.up_axis = (int)clip->source_up;
    pm_clip back;
    r = pm_bvh_read_memory(&back, text, size, "roundtrip.bvh", &def, &err);
    /* Converting back to Z-up and the file's unit can overflow what was finite in metres. */
    if (r == PM_ERR_NUMERIC) {
        pm_free_buffer(text, &clip->allocator);
        return;
    }
    if (r != PM_OK) abort();
    if (back.frame_count != clip->frame_count || !pm_skeleton_same_topology(&back.skeleton, &clip->skeleton)) abort();
    /* ...and to the same poses, within what 9 significant digits and a unit conversion keep. */
    size_t n = (size_t)clip->frame_count * (size_t)clip->skeleton.joint_count;
    for (size_t i = 0; i < n; i++) {
        pm_quat a = clip->rotations[i], b = back.rotations[i];
        float s = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w < 0.0f ? -1.0f : 1.0f;
        if (fabsf(a.x - s * b.x) > 1e-4f || fabsf(a.y - s * b.y) > 1e-4f || fabsf(a.z - s * b.z) > 1e-4f ||
            fabsf(a.w - s * b.w) > 1e-4f)
            abort();
        pm_vec3 t = clip->translations[i], u = back.translations[i];
        float tol = 1e-5f * fmaxf(1.0f, fmaxf(fabsf(t.x), fmaxf(fabsf(t.y), fabsf(t.z))));
        if (fabsf(t.x - u.x) > tol || fabsf(t.y - u.y) > tol || fabsf(t.z - u.z) > tol) abort();
    }
    pm_clip_destroy(&back);
    pm_free_buffer(text, &clip->allocator);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pm_clip clip;
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_result r = pm_bvh_read_memory(&clip, (const char *)data, size, "fuzz.bvh", NULL, &err);
    if (r != PM_OK) {
        if (!is_zeroed(&clip) || err.code != r || strncmp(err.message, "fuzz.bvh", 8) != 0) abort();
        return 0;
    }
    check_round_trip(&clip);
    pm_clip_destroy(&clip);
    return 0;
}

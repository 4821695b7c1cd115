/* Clip preparation shared by database assets and query clips: the rest-pose lead-in trimmed,
 * the mirror applied, the loop flag set and the clip resampled to the database's rate, so that a
 * query clip's frames become the features an asset made of the same clip would have. */
#include <math.h>
#include <string.h>

#include "clip_internal.h"
#include "database_internal.h"

pm_result pm_clip_lead_in_frames(int *out, const pm_clip *src, const pm_database_def *def, pm_error *e) {
    *out = 0;
    if (!def->trim_rest_first_frame || src->frame_count <= 2) return PM_OK;
    return pm_clip_rest_lead_in(out, src, e);
}

int pm_clip_needs_resample(const pm_clip *clip, const pm_database_def *def) {
    return fabsf(1.0f / clip->frame_time - def->fps) > 1e-3f * def->fps;
}

/* Trims a rest-pose lead-in, mirrors, sets the loop flag and resamples to the database rate:
 * the same preparation for assets and for query clips. Each step reads the one before in place
 * (the source itself when nothing came before): only the steps taken allocate, and a clip that
 * is only resampled is read once, where a copy first took a fifth of a build's preparation. */
pm_result pm_prepare_clip_from(pm_clip *out, const pm_clip *src, int lead_in, const pm_database_def *def,
                               const pm_prepare_mirror *mirror, int looping, pm_error *e) {
    pm_clip tmp; /* what the steps so far made, when they made anything */
    memset(&tmp, 0, sizeof tmp);
    memset(out, 0, sizeof *out);
    const pm_clip *cur = src;
    pm_result r;
    if (lead_in) {
        if ((r = pm_clip_trim(&tmp, src, 1, src->frame_count - 1, e)) != PM_OK) return r;
        cur = &tmp;
    }
    if (mirror) {
        pm_clip m;
        r = pm_clip_mirror_used(&m, mirror->out_map, mirror->out_axis, cur, mirror->map, mirror->axis, e);
        pm_clip_destroy(&tmp);
        if (r != PM_OK) return r;
        tmp = m;
        cur = &tmp;
    }
    /* The loop flag as the asset says, on a view of what there is (its arrays are not copied). */
    pm_clip view = *cur;
    view.looping = looping;
    if (pm_clip_needs_resample(&view, def)) {
        r = pm_clip_resample(out, &view, def->fps, e);
        pm_clip_destroy(&tmp);
        return r;
    }
    if (cur == src && (r = pm_clip_copy(&tmp, src, NULL, e)) != PM_OK) return r;
    *out = tmp;
    out->looping = looping;
    out->frame_time = 1.0f / def->fps;
    return PM_OK;
}

pm_result pm_prepare_clip(pm_clip *out, int *out_lead_in, const pm_clip *src, const pm_database_def *def,
                          const pm_prepare_mirror *mirror, int looping, pm_error *e) {
    memset(out, 0, sizeof *out);
    int first;
    pm_result r = pm_clip_lead_in_frames(&first, src, def, e);
    if (r != PM_OK) return r;
    if (out_lead_in) *out_lead_in = first;
    return pm_prepare_clip_from(out, src, first, def, mirror, looping, e);
}

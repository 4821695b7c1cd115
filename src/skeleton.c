/* Skeleton storage, validation, joint roles and left/right maps. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>

#include "clip_internal.h"
#include "core.h"
#include "posematch/anim.h"
#include "posematch/bvh.h" /* pm_bvh_channel_name */

pm_result pm_skeleton_create(pm_skeleton *out, int joint_count, const pm_allocator *allocator, pm_error *error) {
    if (!out) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_skeleton_create: out is NULL");
    memset(out, 0, sizeof *out);
    if (joint_count < 1 || joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_LIMIT, "skeleton: %d joints is outside 1..%d", joint_count, PM_MAX_JOINTS);
    out->allocator = pm_allocator_resolve(allocator);
    const pm_allocator *a = &out->allocator;
    size_t n = (size_t)joint_count;
    out->names = (char **)pm_alloc_array(a, n, sizeof(char *), 0);
    out->parents = (int32_t *)pm_alloc_array(a, n, sizeof(int32_t), 0);
    out->rest_translations = (pm_vec3 *)pm_alloc_array(a, n, sizeof(pm_vec3), 0);
    out->rest_rotations = (pm_quat *)pm_alloc_array(a, n, sizeof(pm_quat), 0);
    out->channel_counts = (uint8_t *)pm_alloc_array(a, n, 1, 0);
    out->channels = (uint8_t *)pm_alloc_array(a, n, 6, 0);
    out->has_end_site = (uint8_t *)pm_alloc_array(a, n, 1, 0);
    out->end_sites = (pm_vec3 *)pm_alloc_array(a, n, sizeof(pm_vec3), 0);
    if (!out->names || !out->parents || !out->rest_translations || !out->rest_rotations || !out->channel_counts ||
        !out->channels || !out->has_end_site || !out->end_sites) {
        pm_skeleton_destroy(out);
        return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "skeleton: out of memory for %d joints", joint_count);
    }
    out->joint_count = joint_count;
    for (int j = 0; j < joint_count; j++) {
        out->parents[j] = j - 1;
        out->rest_rotations[j] = pm_quat_identity();
    }
    return PM_OK;
}

pm_result pm_skeleton_set_name(pm_skeleton *s, int joint, const char *name, pm_error *error) {
    if (!s) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_skeleton_set_name: skeleton is NULL");
    if (!name) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_skeleton_set_name: name is NULL (joint %d)", joint);
    if (!s->names) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_skeleton_set_name: the skeleton is not initialised");
    if (joint < 0 || joint >= s->joint_count)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_skeleton_set_name: joint %d is outside 0..%d", joint,
                       s->joint_count - 1);
    char *copy = pm_strdup(&s->allocator, name);
    if (!copy) return pm_fail(error, PM_ERR_OUT_OF_MEMORY, "skeleton: out of memory for a joint name");
    pm_free(&s->allocator, s->names[joint]);
    s->names[joint] = copy;
    return PM_OK;
}

void pm_skeleton_destroy(pm_skeleton *s) {
    if (!s) return;
    const pm_allocator *a = &s->allocator;
    if (s->names)
        for (int j = 0; j < s->joint_count; j++) pm_free(a, s->names[j]);
    pm_free(a, s->names);
    pm_free(a, s->parents);
    pm_free(a, s->rest_translations);
    pm_free(a, s->rest_rotations);
    pm_free(a, s->channel_counts);
    pm_free(a, s->channels);
    pm_free(a, s->has_end_site);
    pm_free(a, s->end_sites);
    memset(s, 0, sizeof *s);
}

/* Copies a skeleton that passed pm_skeleton_validate into `out` (not src). */
pm_result pm_skeleton_copy_valid(pm_skeleton *out, const pm_skeleton *src, const pm_allocator *allocator,
                                 pm_error *error) {
    pm_result r = pm_skeleton_create(out, src->joint_count, pm_allocator_or(allocator, &src->allocator), error);
    if (r != PM_OK) return r;
    size_t n = (size_t)src->joint_count;
    memcpy(out->parents, src->parents, n * sizeof(int32_t));
    memcpy(out->rest_translations, src->rest_translations, n * sizeof(pm_vec3));
    memcpy(out->rest_rotations, src->rest_rotations, n * sizeof(pm_quat));
    memcpy(out->channel_counts, src->channel_counts, n);
    memcpy(out->channels, src->channels, n * 6);
    memcpy(out->has_end_site, src->has_end_site, n);
    memcpy(out->end_sites, src->end_sites, n * sizeof(pm_vec3));
    for (int j = 0; j < src->joint_count; j++) {
        r = pm_skeleton_set_name(out, j, src->names[j], error);
        if (r != PM_OK) {
            pm_skeleton_destroy(out);
            return r;
        }
    }
    return PM_OK;
}

pm_result pm_skeleton_copy(pm_skeleton *out, const pm_skeleton *src, const pm_allocator *allocator, pm_error *error) {
    if (!out || !src) return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "pm_skeleton_copy: NULL argument");
    /* Checked before anything is allocated: the copy reads every array over joint_count. */
    pm_result r = pm_skeleton_validate(src, error);
    if (r != PM_OK) {
        pm_error_prefix(error, "pm_skeleton_copy");
        if (out != src) memset(out, 0, sizeof *out);
        return r;
    }
    /* Built aside, so that out may be src: its arrays are released only once the copy exists. */
    pm_skeleton copy;
    r = pm_skeleton_copy_valid(&copy, src, allocator, error);
    if (r != PM_OK) {
        if (out != src) memset(out, 0, sizeof *out);
        return r;
    }
    if (out == src) pm_skeleton_destroy(out);
    *out = copy;
    return PM_OK;
}

static int finite3(pm_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

static int unit_quat(pm_quat q) {
    float len2 = pm_quat_dot(q, q);
    return isfinite(len2) && fabsf(len2 - 1.0f) <= 1e-3f;
}

/* Names come first so that every later message may quote them: they are non-empty and free of
 * control characters (a newline would break a one-line message and a BVH file alike). */
static pm_result validate_joint_name(const pm_skeleton *s, int j, pm_error *error) {
    if (!s->names[j] || !s->names[j][0])
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "skeleton: joint %d has no name", j);
    char what[64];
    snprintf(what, sizeof what, "skeleton: joint %d's name", j);
    return pm_check_name(s->names[j], what, error);
}

/* Channels index per-channel tables (the BVH writer's values, Euler orders): each must be a
 * pm_channel, listed once, as the BVH reader requires. */
static pm_result validate_channels(const pm_skeleton *s, int j, pm_error *error) {
    if (s->channel_counts[j] > 6)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "skeleton: joint '%s' has %d channels (at most 6)", s->names[j],
                       s->channel_counts[j]);
    int seen = 0;
    for (int i = 0; i < s->channel_counts[j]; i++) {
        int ch = s->channels[(size_t)j * 6 + (size_t)i];
        if (ch > PM_CHANNEL_ZROTATION)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT,
                           "skeleton: joint '%s' channel %d is %d (must be a pm_channel, 0..%d)", s->names[j], i, ch,
                           PM_CHANNEL_ZROTATION);
        if (seen & (1 << ch))
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "skeleton: joint '%s' lists channel %d (%s) twice",
                           s->names[j], ch, pm_bvh_channel_name(ch));
        seen |= 1 << ch;
    }
    return PM_OK;
}

pm_result pm_skeleton_validate(const pm_skeleton *s, pm_error *error) {
    if (!s || !s->names || !s->parents || !s->rest_translations || !s->rest_rotations || !s->channel_counts ||
        !s->channels || !s->has_end_site || !s->end_sites)
        return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "skeleton: not initialised (create it with pm_skeleton_create)");
    if (s->joint_count < 1 || s->joint_count > PM_MAX_JOINTS)
        return pm_fail(error, PM_ERR_LIMIT, "skeleton: %d joints is outside 1..%d", s->joint_count, PM_MAX_JOINTS);
    pm_result r;
    for (int j = 0; j < s->joint_count; j++)
        if ((r = validate_joint_name(s, j, error)) != PM_OK) return r;
    for (int j = 0; j < s->joint_count; j++) {
        const char *name = s->names[j];
        if (s->parents[j] < -1 || s->parents[j] >= j)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "skeleton: joint %d has parent %d (parents must come first)", j,
                           (int)s->parents[j]);
        if (!finite3(s->rest_translations[j]))
            return pm_fail(error, PM_ERR_NUMERIC, "skeleton: joint '%s' has a non-finite offset", name);
        pm_quat q = s->rest_rotations[j];
        if (!unit_quat(q))
            return pm_fail(error, PM_ERR_NUMERIC, "skeleton: joint '%s' rest_rotation (%g, %g, %g, %g) is not a unit quaternion",
                           name, (double)q.x, (double)q.y, (double)q.z, (double)q.w);
        if ((r = validate_channels(s, j, error)) != PM_OK) return r;
        if (s->has_end_site[j] > 1)
            return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "skeleton: joint '%s' has_end_site is %d (must be 0 or 1)", name,
                           s->has_end_site[j]);
        if (!finite3(s->end_sites[j]))
            return pm_fail(error, PM_ERR_NUMERIC, "skeleton: joint '%s' has a non-finite End Site offset", name);
    }
    /* Names must be unique: BVH lookups and mirror maps depend on it. Quadratic is fine for
     * PM_MAX_JOINTS-sized skeletons built offline. */
    for (int j = 0; j < s->joint_count; j++)
        for (int k = j + 1; k < s->joint_count; k++)
            if (strcmp(s->names[j], s->names[k]) == 0)
                return pm_fail(error, PM_ERR_INVALID_ARGUMENT, "skeleton: joint name '%s' is used twice", s->names[j]);
    return PM_OK;
}

/* What the lookups below read, short of pm_skeleton_validate's full (quadratic) check. */
static int names_readable(const pm_skeleton *s) {
    return s && s->names && s->joint_count >= 1 && s->joint_count <= PM_MAX_JOINTS;
}

int pm_skeleton_find_joint(const pm_skeleton *s, const char *name) {
    if (!names_readable(s) || !name) return -1;
    for (int j = 0; j < s->joint_count; j++)
        if (s->names[j] && strcmp(s->names[j], name) == 0) return j;
    return -1;
}

int pm_skeleton_same_topology(const pm_skeleton *a, const pm_skeleton *b) {
    if (!names_readable(a) || !names_readable(b) || !a->parents || !b->parents || a->joint_count != b->joint_count)
        return 0;
    for (int j = 0; j < a->joint_count; j++) {
        if (a->parents[j] != b->parents[j]) return 0;
        if (!a->names[j] || !b->names[j] || strcmp(a->names[j], b->names[j]) != 0) return 0;
    }
    return 1;
}

/* ---- name analysis ---- */

typedef enum side { SIDE_NONE = 0, SIDE_LEFT = 1, SIDE_RIGHT = 2 } side;

static void lower_copy(char *dst, size_t cap, const char *src) {
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++) dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = '\0';
}

static int is_sep(char c) { return c == '_' || c == '.' || c == ' ' || c == '-' || c == ':' || c == '|'; }

/* Side of a joint name and, in *counterpart (when not NULL), the joint named with its side marker
 * replaced by the other side's (-1 when `s` has none). Recognised markers, in order:
 * Left/Right anywhere, L/R as a separated token (_L, .L, L_, l_); then three weak ones, which
 * also match centre names (Root, Reference, LowerBack, a namespace such as "Rig:Head" or
 * "RIG:Head") and so mean a side only where the counterpart exists in `s` (else the next is
 * tried): an l/r or L/R prefix before an upper-case letter (lFoot, rThigh, LHipJoint, RThumb), an
 * L/R suffix after a lower-case letter (HandL), an L/R prefix before one (Lhand). */
static side name_side(const pm_skeleton *s, const char *name, int *counterpart) {
    if (counterpart) *counterpart = -1;
    char swapped[300];
    const size_t cap = sizeof swapped;
    size_t n = strlen(name);
    char low[256];
    lower_copy(low, sizeof low, name);
    if (n >= sizeof low) return SIDE_NONE;
    side sd = SIDE_NONE;
    const char *p;
    if ((p = strstr(low, "left")) != NULL) {
        size_t at = (size_t)(p - low);
        /* Keep the case pattern of the original: Left -> Right, LEFT -> RIGHT, left -> right. */
        const char *repl = name[at] == 'L' ? (name[at + 1] == 'E' ? "RIGHT" : "Right") : "right";
        snprintf(swapped, cap, "%.*s%s%s", (int)at, name, repl, name + at + 4);
        sd = SIDE_LEFT;
    } else if ((p = strstr(low, "right")) != NULL) {
        size_t at = (size_t)(p - low);
        const char *repl = name[at] == 'R' ? (name[at + 1] == 'I' ? "LEFT" : "Left") : "left";
        snprintf(swapped, cap, "%.*s%s%s", (int)at, name, repl, name + at + 5);
        sd = SIDE_RIGHT;
    }
    for (size_t i = 0; i < n && sd == SIDE_NONE; i++) {
        char c = low[i];
        if (c != 'l' && c != 'r') continue;
        int before = i == 0 || is_sep(name[i - 1]);
        int after = i + 1 == n || is_sep(name[i + 1]);
        if (before && after && (i > 0 || n > 1)) {
            memcpy(swapped, name, n + 1);
            char other = c == 'l' ? 'r' : 'l';
            swapped[i] = isupper((unsigned char)name[i]) ? (char)toupper(other) : other;
            sd = c == 'l' ? SIDE_LEFT : SIDE_RIGHT;
        }
    }
    if (sd != SIDE_NONE) {
        if (counterpart) *counterpart = pm_skeleton_find_joint(s, swapped);
        return sd;
    }
    /* The weak markers: the character at `at` is the side letter. lFoot, rThigh, LHipJoint,
     * RFingers (CMU); HandL, UpLegR; Lhand, Rfoot. */
    const char c0 = name[0], last = name[n - 1];
    size_t at_candidates[3];
    int count = 0;
    if (n >= 2 && (c0 == 'l' || c0 == 'r' || c0 == 'L' || c0 == 'R') && isupper((unsigned char)name[1]))
        at_candidates[count++] = 0;
    if (n >= 2 && (last == 'L' || last == 'R') && islower((unsigned char)name[n - 2])) at_candidates[count++] = n - 1;
    if (n >= 2 && (c0 == 'L' || c0 == 'R') && islower((unsigned char)name[1])) at_candidates[count++] = 0;
    for (int k = 0; k < count; k++) {
        size_t at = at_candidates[k];
        char c = (char)tolower((unsigned char)name[at]), other = c == 'l' ? 'r' : 'l';
        memcpy(swapped, name, n + 1);
        swapped[at] = isupper((unsigned char)name[at]) ? (char)toupper(other) : other;
        int found = pm_skeleton_find_joint(s, swapped);
        if (found >= 0) {
            if (counterpart) *counterpart = found;
            return c == 'l' ? SIDE_LEFT : SIDE_RIGHT;
        }
    }
    return SIDE_NONE;
}

int pm_skeleton_find_mirror_map(int32_t *out_map, const pm_skeleton *s) {
    if (!out_map || !names_readable(s)) return 0;
    for (int j = 0; j < s->joint_count; j++) out_map[j] = j;
    for (int j = 0; j < s->joint_count; j++) {
        if (!s->names[j]) continue;
        int other;
        (void)name_side(s, s->names[j], &other);
        if (other >= 0 && other != j) out_map[j] = other;
    }
    /* A map must be an involution; drop anything one-sided, and count what is left. */
    int pairs = 0;
    for (int j = 0; j < s->joint_count; j++)
        if (out_map[out_map[j]] != j) out_map[j] = j;
    for (int j = 0; j < s->joint_count; j++) pairs += out_map[j] > j;
    return pairs;
}

/* Score how well a lower-cased name matches a role keyword list, 0 = no match. */
static int contains_any(const char *low, const char *const *words) {
    for (int i = 0; words[i]; i++)
        if (strstr(low, words[i])) return i + 1;
    return 0;
}

void pm_skeleton_find_roles(pm_skeleton_roles *out, const pm_skeleton *s) {
    if (!out) return;
    out->hips = out->left_upleg = out->right_upleg = -1;
    out->left_foot = out->right_foot = out->left_toe = out->right_toe = out->head = -1;
    static const char *const hips_words[] = {"hips", "hip", "pelvis", NULL};
    static const char *const toe_words[] = {"toe", "ball", NULL};
    static const char *const foot_words[] = {"foot", "ankle", NULL};
    static const char *const upleg_words[] = {"upleg", "upperleg", "thigh", "up_leg", "upper_leg", "femur", NULL};
    static const char *const head_words[] = {"head", "face", NULL};
    if (!names_readable(s) || !s->parents) return;
    /* The walks up the hierarchy below need parents before children (or they read out of
     * bounds or never end); a skeleton without them has no roles. */
    for (int j = 0; j < s->joint_count; j++)
        if (s->parents[j] < -1 || s->parents[j] >= j) return;
    int hips_rank = 100;
    for (int j = 0; j < s->joint_count; j++) {
        char low[256];
        if (!s->names[j]) continue;
        lower_copy(low, sizeof low, s->names[j]);
        side sd = name_side(s, s->names[j], NULL);
        if (sd == SIDE_NONE) {
            int h = contains_any(low, hips_words);
            /* "hip" alone also matches LHipJoint; only centre joints count, best word wins,
             * then the shallowest joint. */
            if (h && h < hips_rank) {
                hips_rank = h;
                out->hips = j;
            }
            if (out->head < 0 && contains_any(low, head_words)) out->head = j;
            continue;
        }
        int *foot = sd == SIDE_LEFT ? &out->left_foot : &out->right_foot;
        int *toe = sd == SIDE_LEFT ? &out->left_toe : &out->right_toe;
        int *upleg = sd == SIDE_LEFT ? &out->left_upleg : &out->right_upleg;
        if (*toe < 0 && contains_any(low, toe_words)) *toe = j;
        else if (*foot < 0 && contains_any(low, foot_words) && !contains_any(low, toe_words)) *foot = j;
        else if (*upleg < 0 && contains_any(low, upleg_words)) *upleg = j;
    }
    /* Upper legs not named as such (CMU's LeftUpLeg is, Daz's lThigh is; LAFAN's LeftUpLeg
     * too): walk up from the foot two joints (foot <- knee <- upper leg). */
    int *uplegs[2] = {&out->left_upleg, &out->right_upleg};
    int feet[2] = {out->left_foot, out->right_foot};
    for (int i = 0; i < 2; i++) {
        if (*uplegs[i] >= 0 || feet[i] < 0) continue;
        int knee = s->parents[feet[i]];
        if (knee >= 0 && s->parents[knee] >= 0) *uplegs[i] = s->parents[knee];
    }
    if (out->hips < 0 && s->joint_count > 0) {
        /* No named hips: the common ancestor of both upper legs, else the first root. */
        int a = out->left_upleg, b = out->right_upleg;
        if (a >= 0 && b >= 0) {
            while (a != b && a >= 0 && b >= 0) {
                if (a > b) a = s->parents[a];
                else b = s->parents[b];
            }
            out->hips = a >= 0 ? a : 0;
        } else out->hips = 0;
    }
}

#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int dir_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *pm_test_mocap_dir(void) {
    const char *env = getenv("PM_MOCAP_DIR");
    if (env && dir_exists(env)) return env;
    if (dir_exists("../shared/mocap")) return "../shared/mocap";
    return NULL;
}

void pm_test_require_mocap(const char *test_name) {
    if (!pm_test_mocap_dir()) {
        printf("SKIP %s: the real clips (../shared/mocap or $PM_MOCAP_DIR) are not on this machine\n", test_name);
        exit(77);
    }
}

const char *pm_test_mocap_path(const char *relative) {
    static char buf[4][1024];
    static int slot;
    char *b = buf[slot++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", pm_test_mocap_dir() ? pm_test_mocap_dir() : "../shared/mocap", relative);
    return b;
}

const char *pm_test_tmp_dir(void) {
    static char dir[1024];
    if (dir[0]) return dir;
    const char *base = getenv("PM_TMP");
    if (!base || !*base) base = "/tmp";
    mkdir(base, 0755);
    snprintf(dir, sizeof dir, "%s/pmtest-%ld", base, (long)getpid());
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "cannot create %s\n", dir);
        abort();
    }
    return dir;
}

const char *pm_test_tmp_path(const char *name) {
    static char buf[8][1024];
    static int slot;
    char *b = buf[slot++ & 7];
    snprintf(b, sizeof buf[0], "%s/%s", pm_test_tmp_dir(), name);
    return b;
}

void pm_test_write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

char *pm_test_read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)n + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    data[n] = '\0';
    if (size) *size = (size_t)n;
    return data;
}

void pm_test_put_text(const char *path, const char *text) { pm_test_write_file(path, text, strlen(text)); }

void pm_test_assert_file_text(const char *path, const char *text) {
    size_t size = 0;
    char *data = pm_test_read_file(path, &size);
    if (size != strlen(text) || memcmp(data, text, size) != 0) fail_msg("%s holds '%s', not '%s'", path, data, text);
    free(data);
}

uint32_t pm_test_rng_u32(pm_test_rng *rng) {
    rng->state = rng->state * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t x = rng->state;
    return (uint32_t)((x ^ (x >> 22)) >> (22 + (x >> 61)));
}

float pm_test_rng_float(pm_test_rng *rng) { return (float)(pm_test_rng_u32(rng) >> 8) * (1.0f / 16777216.0f); }

float pm_test_rng_normal(pm_test_rng *rng) {
    float u1 = pm_test_rng_float(rng);
    float u2 = pm_test_rng_float(rng);
    if (u1 < 1e-7f) u1 = 1e-7f;
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
}

void pm_test_random_clip(pm_clip *c, int frames, int dims, uint64_t seed) {
    pm_skeleton s;
    assert_int_equal(pm_skeleton_create(&s, 3, NULL, NULL), PM_OK);
    pm_skeleton_set_name(&s, 0, "Hips", NULL);
    pm_skeleton_set_name(&s, 1, "LeftUpLeg", NULL);
    pm_skeleton_set_name(&s, 2, "RightUpLeg", NULL);
    s.parents[1] = 0;
    s.parents[2] = 0;
    s.rest_translations[0] = pm_vec3_make(0, 1, 0);
    s.rest_translations[1] = pm_vec3_make(0.1f, 0, 0);
    s.rest_translations[2] = pm_vec3_make(-0.1f, 0, 0);
    assert_int_equal(pm_clip_create(c, &s, frames, 1.0f / 30.0f, NULL, NULL), PM_OK);
    pm_skeleton_destroy(&s);
    char name[32];
    snprintf(name, sizeof name, "random%llu", (unsigned long long)seed);
    pm_clip_set_name(c, name, NULL);
    for (int f = 0; f < frames; f++) c->translations[(size_t)f * 3] = pm_vec3_make(0, 1, 0.05f * (float)f);
    pm_test_rng rng = {seed * 0x9E3779B97F4A7C15ull + 7};
    float *v = malloc((size_t)frames * sizeof(float));
    float centres[4][64];
    for (int k = 0; k < 4; k++)
        for (int d = 0; d < dims && d < 64; d++) centres[k][d] = 3.0f * pm_test_rng_normal(&rng);
    int *cluster = malloc((size_t)frames * sizeof(int));
    for (int f = 0; f < frames; f++) cluster[f] = (int)(pm_test_rng_u32(&rng) % 4);
    for (int d = 0; d < dims; d++) {
        for (int f = 0; f < frames; f++)
            v[f] = centres[cluster[f]][d % 64] + pm_test_rng_normal(&rng) * (d < 3 ? 2.0f : 0.5f);
        char cn[16];
        snprintf(cn, sizeof cn, "c%d", d);
        assert_int_equal(pm_clip_add_curve(c, cn, v, NULL), PM_OK);
    }
    free(v);
    free(cluster);
}

void pm_test_curve_schema(pm_schema *s, int dims) {
    pm_schema_init(s);
    snprintf(s->name, sizeof s->name, "curves%d", dims);
    for (int d = 0; d < dims; d++) {
        pm_channel_def c = pm_default_channel_def(PM_FEATURE_CURVE);
        snprintf(c.curve, sizeof c.curve, "c%d", d);
        snprintf(c.group, sizeof c.group, "g%d", d % 3);
        c.weight = 0.5f + (float)(d % 4);
        assert_true(pm_schema_add(s, &c, NULL) >= 0);
    }
}

pm_quat pm_test_random_quat(pm_test_rng *rng) {
    return pm_quat_normalize(pm_quat_make(pm_test_rng_normal(rng), pm_test_rng_normal(rng), pm_test_rng_normal(rng),
                                          pm_test_rng_normal(rng)));
}

int pm_test_quat_same(pm_quat a, pm_quat b, float tol) { return fabsf(pm_quat_dot(a, b)) > 1.0f - tol; }

pm_vec3 pm_test_unit_axis(int axis) {
    return pm_vec3_make(axis == 0 ? 1.0f : 0.0f, axis == 1 ? 1.0f : 0.0f, axis == 2 ? 1.0f : 0.0f);
}

void pm_test_assert_vec3_near(pm_vec3 a, pm_vec3 b, float tol) {
    if (!(fabsf(a.x - b.x) <= tol && fabsf(a.y - b.y) <= tol && fabsf(a.z - b.z) <= tol)) /* NaN fails too */
        fail_msg("(%g %g %g) != (%g %g %g) (tolerance %g)", (double)a.x, (double)a.y, (double)a.z, (double)b.x, (double)b.y,
                 (double)b.z, (double)tol);
}

void pm_test_assert_same_database(const pm_database *a, const pm_database *b) {
    assert_non_null(a);
    assert_non_null(b);
    size_t na = 0, nb = 0;
    const void *ba = pm_database_bytes(a, &na), *bb = pm_database_bytes(b, &nb);
    assert_non_null(ba);
    assert_non_null(bb);
    assert_true(na > 0);
    assert_int_equal(na, nb);
    assert_memory_equal(ba, bb, na);
}

int pm_test_count_temp_files(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL)
        if (!strncmp(e->d_name, ".pm-", 4)) n++;
    if (errno) fail_msg("%s: cannot list the directory: %s", dir, strerror(errno));
    closedir(d);
    return n;
}

/* ---- animation data ---- */

void pm_test_named_skeleton(pm_skeleton *s, int count, const char *const *names, const int *parents) {
    PM_ASSERT_OK(pm_skeleton_create(s, count, NULL, NULL));
    for (int j = 0; j < count; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(s, j, names[j], NULL));
        if (parents) s->parents[j] = parents[j];
    }
}

void pm_test_walker(pm_skeleton *s, int root) {
    static const char *const names[] = {"Root", "Hips", "LeftUpLeg", "LeftFoot", "RightUpLeg", "RightFoot"};
    static const int parents[] = {-1, 0, 1, 2, 1, 4};
    static const float off[][3] = {{0, 0, 0}, {0, 1, 0}, {0.1f, 0, 0}, {0, -0.9f, 0}, {-0.1f, 0, 0}, {0, -0.9f, 0}};
    const int first = root ? 0 : 1, count = 6 - first;
    PM_ASSERT_OK(pm_skeleton_create(s, count, NULL, NULL));
    for (int j = 0; j < count; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(s, j, names[first + j], NULL));
        s->parents[j] = parents[first + j] < 0 ? -1 : parents[first + j] - first;
        s->rest_translations[j] = pm_vec3_make(off[first + j][0], off[first + j][1], off[first + j][2]);
    }
}

/* A biped with the given left/right naming pattern ("%sFoot" with "Left"/"Right" etc.). */
void pm_test_biped(pm_skeleton *s, const char *const *names) {
    static const int parents[] = {-1, 0, 1, 2, 0, 4, 5, 0, 7};
    static const float off[][3] = {{0, 0.95f, 0},     {0.1f, -0.05f, 0},  {0, -0.42f, 0}, {0, -0.42f, 0.02f},
                                   {-0.1f, -0.05f, 0}, {0, -0.42f, 0},     {0, -0.42f, 0.02f}, {0, 0.2f, 0},
                                   {0, 0.4f, 0}};
    PM_ASSERT_OK(pm_skeleton_create(s, 9, NULL, NULL));
    for (int j = 0; j < 9; j++) {
        PM_ASSERT_OK(pm_skeleton_set_name(s, j, names[j], NULL));
        s->parents[j] = parents[j];
        s->rest_translations[j] = pm_vec3_make(off[j][0], off[j][1], off[j][2]);
    }
}

const char *const pm_test_biped_names[] = {"Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot",
                                          "Spine", "Head"};

void pm_test_biped_clip(pm_clip *c, int frames, float frame_time) {
    pm_skeleton s;
    pm_test_biped(&s, pm_test_biped_names);
    PM_ASSERT_OK(pm_clip_create(c, &s, frames, frame_time, NULL, NULL));
    pm_skeleton_destroy(&s);
}

/* A biped clip of `frames` frames whose hips move 1 m per frame along +X, at `frame_time`. */
void pm_test_ramp_clip(pm_clip *c, int frames, float frame_time) {
    pm_test_biped_clip(c, frames, frame_time);
    for (int f = 0; f < frames; f++) c->translations[(size_t)f * 9] = pm_vec3_make((float)f, 0.95f, 0);
}

/* What the test allocators hand out once they decide to serve a request. */
static void *aligned_block(size_t size, size_t alignment) {
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    void *p = NULL;
    return posix_memalign(&p, alignment, size ? size : 1) == 0 ? p : NULL;
}

static void *counting_alloc(size_t size, size_t alignment, void *user) {
    pm_test_allocator *c = (pm_test_allocator *)user;
    if (size > c->largest) c->largest = size;
    if (c->fail_after >= 0 && c->allocs >= c->fail_after) return NULL;
    if (c->cap && size > c->cap) return NULL;
    void *p = aligned_block(size, alignment);
    if (p) c->allocs++;
    return p;
}

static void counting_free(void *ptr, void *user) {
    ((pm_test_allocator *)user)->frees++;
    free(ptr);
}

pm_allocator pm_test_allocator_hooks(pm_test_allocator *counter) {
    pm_allocator a = {counting_alloc, counting_free, counter};
    return a;
}

static void *refusing_alloc(size_t size, size_t alignment, void *user) {
    pm_test_refusal *f = (pm_test_refusal *)user;
    if (++f->requests == f->refuse) return NULL;
    void *p = aligned_block(size, alignment);
    if (p) f->live++;
    return p;
}

static void refusing_free(void *ptr, void *user) {
    ((pm_test_refusal *)user)->live--;
    free(ptr);
}

pm_allocator pm_test_refusal_hooks(pm_test_refusal *refusal) {
    pm_allocator a = {refusing_alloc, refusing_free, refusal};
    return a;
}

pm_clip pm_test_random_biped_clip(pm_skeleton *s, int frames, uint64_t seed) {
    pm_test_biped(s, pm_test_biped_names);
    pm_clip c;
    PM_ASSERT_OK(pm_clip_create(&c, s, frames, 1.0f / 30.0f, NULL, NULL));
    pm_test_rng rng = {seed};
    for (int f = 0; f < frames; f++)
        for (int j = 0; j < 9; j++) {
            c.rotations[(size_t)f * 9 + j] = pm_quat_pow(pm_test_random_quat(&rng), 0.3f);
            if (j == 0) c.translations[(size_t)f * 9] = pm_vec3_make(pm_test_rng_float(&rng), 0.95f, 0.1f * (float)f);
        }
    return c;
}

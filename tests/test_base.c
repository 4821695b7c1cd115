/* The base API: result names and the version, error messages longer than pm_error holds, the
 * half floats poses store their cost addends in (pm_asset_def.cost_addend), every one of them, and
 * which allocator a call uses. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE in <sys/mman.h> */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#if defined(__linux__)
#include <sys/mman.h> /* MADV_HUGEPAGE: where the library asks for huge pages */
#endif
#include "database_support.h"

/* Every code has its own short name; a value no code has is "unknown error", not a crash. */
static void test_result_strings(void **state) {
    (void)state;
    static const char *const names[] = {"ok",           "invalid argument", "i/o error", "parse error",
                                        "out of memory", "limit exceeded",   "corrupt data", "unsupported version",
                                        "mismatch",     "not found",        "non-finite or degenerate value",
                                        "cancelled"};
    for (int r = PM_OK; r <= PM_ERR_CANCELLED; r++) assert_string_equal(pm_result_string((pm_result)r), names[r]);
    assert_string_equal(pm_result_string((pm_result)(PM_ERR_CANCELLED + 1)), "unknown error");
    assert_string_equal(pm_result_string((pm_result)-1), "unknown error");
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", PM_VERSION_MAJOR, PM_VERSION_MINOR, PM_VERSION_PATCH);
    assert_string_equal(pm_version_string(), version);
}

/* A message longer than pm_error holds keeps its start and its end (the problem, after a long
 * path) around "...", for texts up to 8 KB; with a long prefix, the prefix's start and the old
 * message's end. */
static void test_long_messages(void **state) {
    (void)state;
    static char path[4097];
    for (int i = 0; i < 4096; i++) path[i] = i % 201 == 0 ? '/' : 'a' + i % 26;
    memcpy(path + 4096 - 6, "/x.bvh", 6);
    pm_error e;
    assert_int_equal(pm_fail(&e, PM_ERR_PARSE, "%s:%d: the file ends inside joint '%s'", path, 12, "Hips"), PM_ERR_PARSE);
    assert_int_equal(e.code, PM_ERR_PARSE);
    assert_int_equal(strlen(e.message), PM_ERROR_MESSAGE_SIZE - 1);
    assert_memory_equal(e.message, path, 160);
    assert_memory_equal(e.message + 160, "...", 3);
    const char *end = "/x.bvh:12: the file ends inside joint 'Hips'";
    assert_string_equal(e.message + strlen(e.message) - strlen(end), end);
    /* A prefix of 4 KB before a message that already fills pm_error. */
    pm_error_prefix(&e, "%s", path);
    assert_int_equal(strlen(e.message), PM_ERROR_MESSAGE_SIZE - 1);
    assert_memory_equal(e.message, path, 160);
    assert_string_equal(e.message + strlen(e.message) - strlen(end), end);
    /* Short ones are whole; a prefix joins with ": ". */
    pm_fail(&e, PM_ERR_IO, "%s: cannot open", "walk.bvh");
    pm_error_prefix(&e, "asset '%s'", "walk");
    assert_string_equal(e.message, "asset 'walk': walk.bvh: cannot open");
    /* Cuts fall between UTF-8 characters: no continuation byte right after the "...". */
    static char wide[3000];
    for (int i = 0; i + 2 < (int)sizeof wide; i += 2) wide[i] = (char)0xC3, wide[i + 1] = (char)0xA9; /* U+00E9 */
    pm_fail(&e, PM_ERR_PARSE, "x%s: bad", wide);
    const char *dots = strstr(e.message, "...");
    assert_non_null(dots);
    assert_int_equal((unsigned char)dots[3] & 0xC0, 0xC0);
    assert_int_equal((unsigned char)dots[-1], 0xA9);
    assert_string_equal(e.message + strlen(e.message) - 5, ": bad");
    pm_fail(NULL, PM_ERR_PARSE, "%s", path); /* no error wanted: nothing written */
    /* A prefix replaces the head of a long message: none of the old head is left before the cut,
     * whether the old message was already cut or only prefix and message together overflow. */
    static char zs[300];
    memset(zs, 'Z', sizeof zs - 1);
    pm_fail(&e, PM_ERR_PARSE, "%s:%d: the file ends inside joint '%s'", path, 12, "Hips");
    pm_error_prefix(&e, "%s", zs);
    assert_memory_equal(e.message, zs, 160);
    assert_string_equal(e.message + strlen(e.message) - strlen(end), end);
    static char ys[201];
    memset(ys, 'Y', sizeof ys - 1);
    pm_fail(&e, PM_ERR_PARSE, "%s: bad", path + 4096 - 400);
    pm_error_prefix(&e, "%s", ys);
    assert_int_equal(strlen(e.message), PM_ERROR_MESSAGE_SIZE - 1);
    assert_memory_equal(e.message, ys, 160);
    assert_string_equal(e.message + strlen(e.message) - 5, ": bad");
    /* Bytes that are all continuation bytes (a path is any bytes, not always UTF-8): the head
     * backs off to nothing rather than past the text's start. */
    static char cont[701];
    memset(cont, 0x80, sizeof cont - 1);
    pm_fail(&e, PM_ERR_IO, "%s: x", cont);
    assert_string_equal(e.message, "...: x"); /* the tail skips them too */
    /* Texts are formatted whole up to 16 x PM_ERROR_MESSAGE_SIZE bytes: one byte short of that
     * keeps its start and end; at that length and beyond only the start pm_error already holds. */
    enum { LONGEST = 16 * PM_ERROR_MESSAGE_SIZE };
    static char huge[LONGEST + 1];
    for (int i = 0; i < LONGEST; i++) huge[i] = (char)('a' + i % 26);
    for (int extra = 0; extra < 2; extra++) {
        size_t n = LONGEST - 1 + (size_t)extra;
        pm_fail(&e, PM_ERR_PARSE, "%.*s", (int)n, huge);
        assert_int_equal(strlen(e.message), PM_ERROR_MESSAGE_SIZE - 1);
        assert_memory_equal(e.message, huge, 160);
        if (extra) {
            assert_null(strstr(e.message, "..."));
            assert_memory_equal(e.message, huge, PM_ERROR_MESSAGE_SIZE - 1);
        } else {
            assert_memory_equal(e.message + 160, "...", 3);
            const char *tail = e.message + 163;
            assert_memory_equal(tail, huge + n - strlen(tail), strlen(tail));
        }
    }
}

/* The hash behind `.pmdb` checksums, database keys and cache entries: the same value on every
 * machine and in every version (a change would make every cached database a miss and every
 * file's checksum wrong), and the same whether the input comes in one piece or several. */
static void test_hash_values(void **state) {
    (void)state;
    unsigned char b[200];
    for (int i = 0; i < 200; i++) b[i] = (unsigned char)(i * 37 + 11);
    static const size_t lengths[12] = {0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 100, 200};
    static const uint64_t seeds[2] = {0, 0x9E3779B97F4A7C15ull};
    static const uint64_t want[2][12] = {
        {0xc8167590e3a5cbebull, 0x62f7ba4b1f3d993eull, 0x5b705d5c4d8ab8dfull, 0xa285e3d28504852aull, 0x1da9e23af008f005ull,
         0x9edac889e0da9633ull, 0xa64743f5dcdb9a3cull, 0x7916dba2c308c2b5ull, 0x3e4b5531471cfdcfull, 0xc2e72a07f8821ba9ull,
         0x5406fb43a899ee67ull, 0x0d4182b0ccbddb30ull},
        {0x344cd0013fb7316bull, 0xeca2959a1cc3cb3aull, 0xe4a2735f20e4cf28ull, 0x8e22b47392eb630cull, 0xf99e4c7163e5ccb1ull,
         0x26f3604e7f0092c3ull, 0xc54bbe6ba34b659aull, 0x3a92b29c97b11d87ull, 0x3806901be58e5b48ull, 0xd6461d78cbe5f434ull,
         0x005183fa56fd7a87ull, 0x9f5fdef2ba9c0dc7ull}};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 12; i++) {
            uint64_t h = pm_hash64(b, lengths[i], seeds[s]);
            if (h != want[s][i])
                fail_msg("hash of %zu bytes, seed %d: 0x%016llx", lengths[i], s, (unsigned long long)h);
            /* Streamed in pieces of 1, 5, 17, 31, ... bytes (some crossing 32-byte blocks). */
            pm_hasher st;
            pm_hasher_init(&st, seeds[s]);
            size_t at = 0;
            for (size_t piece = 1; at < lengths[i]; piece = piece * 3 + 2) {
                size_t take = lengths[i] - at < piece ? lengths[i] - at : piece;
                pm_hasher_update(&st, b + at, take);
                pm_hasher_update(&st, b, 0);
                at += take;
            }
            assert_true(pm_hasher_final(&st) == h);
        }
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Float to half rounds to the nearest half, ties to the even one, across normal and subnormal
 * halves alike (addends below 6.1e-5 are subnormal): every finite half comes back as itself, the
 * midpoint between two neighbours goes to the even one and a float either side of it to the
 * nearer. Beyond the largest half is infinity, below half the smallest subnormal a signed zero. */
static void test_half_rounding(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 0x7C00u; h++) { /* every finite positive half */
        for (uint32_t sign = 0; sign <= 0x8000u; sign += 0x8000u) {
            uint16_t x = (uint16_t)(h | sign);
            float f = pm_half_to_float(x);
            if (pm_float_to_half(f) != x) fail_msg("half 0x%04x (%g) comes back as 0x%04x", x, (double)f, pm_float_to_half(f));
            if (h == 0x7BFFu) continue;
            /* Neighbours' midpoint: 12 significant bits, exact in a float. */
            float next = pm_half_to_float((uint16_t)(x + 1));
            float mid = (float)(((double)f + (double)next) / 2.0);
            uint16_t even = (h & 1u) ? (uint16_t)(x + 1) : x;
            if (pm_float_to_half(mid) != even)
                fail_msg("midpoint %g after half 0x%04x rounds to 0x%04x", (double)mid, x, pm_float_to_half(mid));
            float below = nextafterf(mid, 0.0f), above = nextafterf(mid, sign ? -INFINITY : INFINITY);
            if (pm_float_to_half(below) != x || pm_float_to_half(above) != (uint16_t)(x + 1))
                fail_msg("either side of the midpoint after half 0x%04x: 0x%04x and 0x%04x", x, pm_float_to_half(below),
                         pm_float_to_half(above));
        }
    }
    assert_true(pm_half_to_float(1) == ldexpf(1.0f, -24)); /* the smallest subnormal */
    assert_int_equal(pm_float_to_half(ldexpf(1.0f, -25)), 0);            /* half of it: a tie, to even 0 */
    assert_int_equal(pm_float_to_half(nextafterf(ldexpf(1.0f, -25), 1.0f)), 1);
    assert_int_equal(pm_float_to_half(1e-30f), 0);
    assert_int_equal(pm_float_to_half(-1e-30f), 0x8000);
    assert_int_equal(pm_float_to_half(1e-5f), 168); /* 1e-5 * 2^24 = 167.77 */
    assert_int_equal(pm_float_to_half(65504.0f), 0x7BFF);
    assert_int_equal(pm_float_to_half(65520.0f), 0x7C00); /* the tie past the largest: infinity */
    assert_int_equal(pm_float_to_half(-1e10f), 0xFC00);
    assert_int_equal(pm_float_to_half(INFINITY), 0x7C00);
    assert_true(isnan(pm_half_to_float(pm_float_to_half(NAN))));
    assert_int_equal(float_bits(pm_half_to_float(0x8000)), 0x80000000u);
}

/* What a database stores for a small addend is that rounding: a subnormal half, read back as
 * the nearest multiple of 2^-24 (one that would round to 0 is refused: test_database_errors). */
static void test_small_cost_addends(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 30);
    const float addends[3] = {1e-5f, -3e-6f, 4e-8f};
    for (int i = 0; i < 3; i++) f.assets[i].cost_addend = addends[i];
    pm_database *db = build(&f, 1);
    const float expect[3] = {168.0f / 16777216.0f, -50.0f / 16777216.0f, 1.0f / 16777216.0f};
    for (int i = 0; i < 3; i++) {
        pm_asset_info a;
        PM_ASSERT_OK(pm_database_asset(&a, db, i, NULL));
        if (a.cost_addend != expect[i])
            fail_msg("asset %d: addend %.9g, expected %.9g", i, (double)a.cost_addend, (double)expect[i]);
        pm_pose_info p;
        PM_ASSERT_OK(pm_database_pose(&p, db, a.first_pose + 3, NULL));
        assert_true(p.cost_addend == expect[i]);
    }
    pm_database_destroy(db);
    fixture_free(&f);
}

/* base.h's allocator rules: derived objects take their source's allocator when given NULL, a
 * clip made from clips its source's, and an allocator missing one of its functions is the
 * default one (nothing reaches its other function). */
static void test_allocator_rules(void **state) {
    (void)state;
    pm_test_allocator counter = {0, 0, -1, 0, 0};
    pm_allocator hooks = pm_test_allocator_hooks(&counter);
    pm_skeleton biped;
    pm_test_biped(&biped, pm_test_biped_names);
    pm_clip clip;
    PM_ASSERT_OK(pm_clip_create(&clip, &biped, 12, 1.0f / 30.0f, &hooks, NULL));
    for (int f = 0; f < 12; f++) clip.translations[(size_t)f * 9] = pm_vec3_make(0.05f * (float)f, 0.95f, 0.0f);
    long before = counter.allocs;
    pm_skeleton skeleton;
    pm_clip copy, resampled;
    pm_animation anim;
    pm_root_track track;
    PM_ASSERT_OK(pm_skeleton_copy(&skeleton, &clip.skeleton, NULL, NULL));
    PM_ASSERT_OK(pm_clip_copy(&copy, &clip, NULL, NULL));
    PM_ASSERT_OK(pm_clip_resample(&resampled, &clip, 60.0f, NULL));
    PM_ASSERT_OK(pm_animation_build(&anim, &clip, NULL, NULL));
    PM_ASSERT_OK(pm_root_track_extract(&track, &clip, NULL, NULL, NULL));
    assert_ptr_equal(skeleton.allocator.user, &counter);
    assert_ptr_equal(copy.allocator.user, &counter);
    assert_ptr_equal(resampled.allocator.user, &counter);
    assert_ptr_equal(anim.allocator.user, &counter);
    assert_ptr_equal(track.allocator.user, &counter);
    assert_true(counter.allocs > before);
    pm_root_track_destroy(&track);
    pm_animation_destroy(&anim);
    pm_clip_destroy(&resampled);
    pm_clip_destroy(&copy);
    pm_skeleton_destroy(&skeleton);
    pm_clip_destroy(&clip);
    assert_int_equal(counter.frees, counter.allocs);

    /* An alloc without a free: the default allocator, not half of this one. */
    pm_allocator half = hooks;
    half.free = NULL;
    before = counter.allocs;
    PM_ASSERT_OK(pm_clip_create(&clip, &biped, 3, 1.0f / 30.0f, &half, NULL));
    assert_int_equal(counter.allocs, before);
    assert_null(clip.allocator.user);
    pm_clip_destroy(&clip);

    /* Where NULL means the source's allocator, a half allocator does too. */
    PM_ASSERT_OK(pm_clip_create(&clip, &biped, 12, 1.0f / 30.0f, &hooks, NULL));
    for (int f = 0; f < 12; f++) clip.translations[(size_t)f * 9] = pm_vec3_make(0.05f * (float)f, 0.95f, 0.0f);
    for (int k = 0; k < 2; k++) {
        pm_allocator part = hooks;
        if (k) part.alloc = NULL;
        else part.free = NULL;
        PM_ASSERT_OK(pm_skeleton_copy(&skeleton, &clip.skeleton, &part, NULL));
        PM_ASSERT_OK(pm_clip_copy(&copy, &clip, &part, NULL));
        PM_ASSERT_OK(pm_animation_build(&anim, &clip, &part, NULL));
        PM_ASSERT_OK(pm_root_track_extract(&track, &clip, NULL, &part, NULL));
        assert_ptr_equal(skeleton.allocator.user, &counter);
        assert_ptr_equal(copy.allocator.user, &counter);
        assert_ptr_equal(anim.allocator.user, &counter);
        assert_ptr_equal(track.allocator.user, &counter);
        pm_root_track_destroy(&track);
        pm_animation_destroy(&anim);
        pm_clip_destroy(&copy);
        pm_skeleton_destroy(&skeleton);
    }
    pm_clip_destroy(&clip);
    pm_skeleton_destroy(&biped);

    /* The same rule where the library allocates on the caller's behalf: a loaded database's image
     * and pm_file_read's buffer come from the default allocator too (its free is what frees them). */
    fixture f;
    fixture_init(&f, 30);
    pm_database *db = build(&f, 1);
    const char *path = pm_test_tmp_path("half_allocator.pmdb");
    half = hooks;
    half.free = NULL;
    before = counter.allocs;
    PM_ASSERT_OK(pm_database_save(db, path, NULL));
    pm_database_destroy(db);
    fixture_free(&f);
    PM_ASSERT_OK(pm_database_load(&db, path, &half, NULL));
    void *bytes = NULL;
    size_t n = 0;
    PM_ASSERT_OK(pm_file_read(&bytes, &n, path, 0, &half, NULL));
    assert_int_equal(counter.allocs, before);
    pm_free_buffer(bytes, &half);
    pm_database_destroy(db);
    half = hooks;
    half.alloc = NULL; /* a free without an alloc: nothing reaches it either */
    PM_ASSERT_OK(pm_file_read(&bytes, &n, path, 0, &half, NULL));
    pm_free_buffer(bytes, &half);
    assert_int_equal(counter.frees, counter.allocs);
    remove(path);
}

/* A caller's allocator whose blocks hold junk, as reused memory does. */
static void *junk_alloc(size_t size, size_t alignment, void *user) {
    (void)user;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    void *p = aligned_alloc(alignment, (size + alignment) / alignment * alignment); /* a whole multiple */
    if (p) memset(p, 0x5A, size);
    return p;
}
static void junk_free(void *p, void *user) {
    (void)user;
    free(p);
}

/* Large database images from the default allocator start on a 2 MB boundary (advised as huge
 * pages on Linux); a caller's allocator is asked for the usual alignment, and its blocks are
 * freed by it. */
static void test_image_alignment(void **state) {
    (void)state;
    const size_t big = (size_t)5 << 20;
    uint8_t *p = (uint8_t *)pm_alloc_large(NULL, big, 64);
    assert_non_null(p);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    assert_int_equal((uintptr_t)p % ((size_t)2 << 20), 0);
#endif
    p[0] = 1;
    p[big - 1] = 2;
    pm_free(NULL, p);
    pm_test_allocator counter = {0, 0, -1, 0, 0};
    pm_allocator hooks = pm_test_allocator_hooks(&counter);
    p = (uint8_t *)pm_alloc_large(&hooks, big, 64);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 64, 0);
    assert_int_equal(counter.allocs, 1);
    pm_free(&hooks, p);
    assert_int_equal(counter.frees, 1);
    p = (uint8_t *)pm_alloc_large(NULL, 100, 64); /* small: an ordinary block, aligned as asked */
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 64, 0);
    pm_free(NULL, p);
    /* The builder's working arrays: zeroed whatever the memory held before (an allocator handing
     * out blocks full of junk; fresh pages from the system would be zero anyway), and a count
     * whose bytes overflow is refused as pm_alloc_array refuses it. */
    const pm_allocator junk = {junk_alloc, junk_free, NULL};
    float *f = (float *)pm_alloc_large_array(&junk, big / sizeof(float), sizeof(float), 64);
    assert_non_null(f);
    for (size_t i = 0; i < big / sizeof(float); i++)
        if (f[i] != 0.0f) fail_msg("float %zu of a large array is not zeroed", i);
    pm_free(&junk, f);
    assert_null(pm_alloc_large_array(NULL, SIZE_MAX / 2, 4, 64));
    assert_null(pm_alloc_large_array(&hooks, SIZE_MAX / 2, 4, 64));
    assert_int_equal(counter.allocs, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result_strings),
        cmocka_unit_test(test_long_messages),
        cmocka_unit_test(test_hash_values),
        cmocka_unit_test(test_half_rounding),
        cmocka_unit_test(test_small_cost_addends),
        cmocka_unit_test(test_allocator_rules),
        cmocka_unit_test(test_image_alignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

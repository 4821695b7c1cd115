/* Build progress and cancellation (pm_progress_fn in database.h): the calls a build makes, from
 * which thread, in which order, and a cancel at each of them, which leaves nothing behind; and the
 * prepared clips a build holds while it runs. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database_support.h"

#define MAX_CALLS 256

typedef struct recorder {
    int calls;
    const char *stage[MAX_CALLS];
    float fraction[MAX_CALLS];
    int foreign_thread; /* a call from another thread than the builder's */
    int overlapping;    /* a call while another was running */
    int inside;
    pthread_t builder;
    int cancel_at; /* the call that returns non-zero; -1 never */
} recorder;

static int record(void *user, const char *stage, float fraction) {
    recorder *r = (recorder *)user;
    if (r->inside++) r->overlapping = 1;
    if (!pthread_equal(pthread_self(), r->builder)) r->foreign_thread = 1;
    if (r->calls < MAX_CALLS) {
        r->stage[r->calls] = stage;
        r->fraction[r->calls] = fraction;
    }
    int stop = r->calls++ == r->cancel_at;
    r->inside--;
    return stop;
}

/* Eight assets: the fixture's four and their mirrored copies. */
static pm_result build_recorded(pm_database **out, fixture *f, int threads, recorder *r, int cancel_at,
                                const pm_allocator *allocator, pm_error *err) {
    memset(r, 0, sizeof *r);
    r->builder = pthread_self();
    r->cancel_at = cancel_at;
    pm_database_def d = f->def;
    d.threads = threads;
    d.mirror = 1;
    d.progress = record;
    d.progress_user = r;
    d.allocator = allocator;
    return pm_database_build(out, &d, f->assets, 4, err);
}

static void test_progress_calls(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 90);
    f.def.mirror = 1;
    pm_database *plain = build(&f, 1);
    static const char *const order[] = {"prepare", "features", "normalise", "dedup", "pca", "trees", "write", "done"};
    for (int threads = 1; threads <= 2; threads++) {
        recorder r;
        pm_database *db = NULL;
        PM_ASSERT_OK(build_recorded(&db, &f, threads, &r, -1, NULL, NULL));
        pm_test_assert_same_database(db, plain); /* watching changes nothing */
        assert_int_equal(r.foreign_thread, 0);
        assert_int_equal(r.overlapping, 0);
        assert_true(r.calls >= 11 && r.calls <= MAX_CALLS);
        assert_string_equal(r.stage[0], "prepare");
        assert_true(r.fraction[0] == 0.0f);
        assert_string_equal(r.stage[r.calls - 1], "done");
        assert_true(r.fraction[r.calls - 1] == 1.0f);
        int next = 0, prepare = 0, features = 0;
        for (int i = 0; i < r.calls; i++) {
            if (i) assert_true(r.fraction[i] >= r.fraction[i - 1]);
            assert_true(r.fraction[i] >= 0.0f && r.fraction[i] <= 1.0f);
            if (strcmp(r.stage[i], order[next])) {
                next++;
                assert_true(next < 8);
                assert_string_equal(r.stage[i], order[next]);
            }
            prepare += !strcmp(r.stage[i], "prepare");
            features += !strcmp(r.stage[i], "features");
        }
        assert_int_equal(next, 7);
        /* One at each stage's start, then one per asset the calling thread finished: all eight
         * on one thread, any number on two (the other thread may take them all). */
        if (threads == 1) {
            assert_int_equal(prepare, 9);
            assert_int_equal(features, 9);
            /* Asset by asset each stage runs to its end, where the next one starts. */
            assert_string_equal(r.stage[8], "prepare");
            assert_true(r.fraction[8] == r.fraction[9] && !strcmp(r.stage[9], "features"));
            assert_string_equal(r.stage[17], "features");
            assert_true(r.fraction[17] == r.fraction[18] && !strcmp(r.stage[18], "normalise"));
        } else {
            assert_true(prepare >= 1 && prepare <= 9 && features >= 1 && features <= 9);
        }
        pm_database_destroy(db);
    }
    pm_database_destroy(plain);
    fixture_free(&f);
}

/* A cancel at any call before "done" ends the build with PM_ERR_CANCELLED and *out NULL, every
 * allocation returned; at "done" the database is complete and kept. */
static void test_cancel_at_every_call(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 90);
    pm_test_allocator counter = {0, 0, -1, 0, 0};
    pm_allocator hooks = pm_test_allocator_hooks(&counter);
    /* The prepared copies of the clips come from the clips' allocators: counted too, on one
     * thread (the counter is not thread-safe: two threads build from the C library's clips). */
    pm_clip counted[4];
    for (int i = 0; i < 4; i++) PM_ASSERT_OK(pm_clip_copy(&counted[i], &f.clips[i], &hooks, NULL));
    recorder r;
    pm_database *db = NULL;
    PM_ASSERT_OK(build_recorded(&db, &f, 1, &r, -1, NULL, NULL));
    const int calls = r.calls;
    pm_database_destroy(db);
    for (int threads = 1; threads <= 2; threads++)
        for (int k = 0; k < calls; k++) {
            const long allocs = counter.allocs, frees = counter.frees;
            pm_error err;
            db = (pm_database *)&err;
            for (int i = 0; i < 4; i++) f.assets[i].clip = threads == 1 ? &counted[i] : &f.clips[i];
            pm_result res = build_recorded(&db, &f, threads, &r, k, threads == 1 ? &hooks : NULL, &err);
            if (threads == 1) assert_true(counter.allocs > allocs);
            /* "done" is too late to cancel; two threads make fewer calls (the calling thread
             * finishes fewer assets), so theirs may come before call k. */
            if (k == calls - 1 || (res == PM_OK && threads == 2 && (r.calls <= k || !strcmp(r.stage[k], "done")))) {
                assert_int_equal(res, PM_OK);
                assert_non_null(db);
                pm_database_destroy(db);
            } else {
                if (res != PM_ERR_CANCELLED)
                    fail_msg("cancel at call %d (%s) on %d threads: %s", k, r.stage[k], threads, pm_result_string(res));
                assert_null(db);
                assert_string_equal(err.message, "database: the build was cancelled by its progress callback");
                /* It stopped at once: no call after the one that cancelled (one thread), or at
                 * most those of the assets still running (two). */
                if (threads == 1) assert_int_equal(r.calls, k + 1);
            }
            assert_int_equal(counter.allocs - allocs, counter.frees - frees);
        }
    for (int i = 0; i < 4; i++) pm_clip_destroy(&counted[i]);
    fixture_free(&f);
}

/* An allocator that knows its live bytes (each block's size in a header before it). */
typedef struct sized_allocator {
    size_t live, peak;
} sized_allocator;

static void *sized_alloc(size_t size, size_t alignment, void *user) {
    sized_allocator *s = (sized_allocator *)user;
    if (alignment < 16) alignment = 16;
    size_t head = alignment < 64 ? 64 : alignment;
    char *p = NULL;
    if (posix_memalign((void **)&p, head, head + (size ? size : 1)) != 0) return NULL;
    memcpy(p + head - sizeof(size_t) * 2, &size, sizeof size);
    memcpy(p + head - sizeof(size_t), &head, sizeof head);
    s->live += size;
    if (s->live > s->peak) s->peak = s->live;
    return p + head;
}

static void sized_free(void *ptr, void *user) {
    sized_allocator *s = (sized_allocator *)user;
    size_t size, head;
    memcpy(&size, (char *)ptr - sizeof(size_t) * 2, sizeof size);
    memcpy(&head, (char *)ptr - sizeof(size_t), sizeof head);
    s->live -= size;
    free((char *)ptr - head);
}

/* The build prepares a clip (trimmed, mirrored, resampled: from the clip's allocator), extracts
 * its rows and frees it before the next: on one thread, never the eight prepared clips of four
 * mirrored assets at once, which held more than the database itself on real data. Here each is
 * resampled to four times its frames, so one prepared clip is four sources; the peak above the
 * sources allows two (a mirrored copy's resampling reads the mirrored clip) and what the feature
 * extraction of one asset allocates. */
static void test_prepared_clips_one_at_a_time(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 400);
    sized_allocator sized = {0, 0};
    pm_allocator hooks = {sized_alloc, sized_free, &sized};
    pm_clip counted[4];
    for (int i = 0; i < 4; i++) {
        PM_ASSERT_OK(pm_clip_copy(&counted[i], &f.clips[i], &hooks, NULL));
        f.assets[i].clip = &counted[i];
    }
    const size_t sources = sized.live;
    sized.peak = sources;
    pm_database_def d = f.def;
    d.threads = 1;
    d.mirror = 1;
    d.fps = 4.0f / f.clips[0].frame_time;
    pm_database *db = NULL;
    pm_error err;
    if (pm_database_build(&db, &d, f.assets, 4, &err) != PM_OK) fail_msg("build: %s", err.message);
    assert_int_equal(sized.live, sources); /* all returned */
    const size_t largest_source = sources / 4 + sources / 8; /* the clips differ by 7 frames */
    const size_t held = sized.peak - sources;
    if (held > 3 * 4 * largest_source)
        fail_msg("the build held %zu bytes of prepared clips at once (one is about %zu)", held, 4 * largest_source);
    assert_true(pm_database_pose_count(db) >= 8 * 4 * 400); /* resampled to four times the frames */
    pm_database_destroy(db);
    for (int i = 0; i < 4; i++) pm_clip_destroy(&counted[i]);
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_calls),
        cmocka_unit_test(test_cancel_at_every_call),
        cmocka_unit_test(test_prepared_clips_one_at_a_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

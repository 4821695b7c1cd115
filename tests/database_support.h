/* Helpers shared by the database tests (test_database*.c): a fixture of four random-curve clips
 * and its database. Header-only: each test binary is one file. */
#ifndef PM_TESTS_DATABASE_SUPPORT_H
#define PM_TESTS_DATABASE_SUPPORT_H

#include <string.h>

#include "support.h"

#define DIMS 6

typedef struct fixture {
    pm_clip clips[4];
    pm_asset_def assets[4];
    pm_schema schema;
    pm_database_def def; /* def.schema = &schema */
} fixture;

static inline void fixture_init(fixture *f, int frames) {
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 4; i++) {
        pm_test_random_clip(&f->clips[i], frames + 7 * i, DIMS, (uint64_t)i + 1);
        f->assets[i] = pm_default_asset_def(&f->clips[i]);
    }
    f->def = pm_default_database_def();
    pm_test_curve_schema(&f->schema, DIMS);
    f->def.schema = &f->schema;
    f->def.pca_components = 3;
    f->def.exact_components = 3;
    f->def.exact_leaf_size = 16;
}

static inline void fixture_free(fixture *f) {
    for (int i = 0; i < 4; i++) pm_clip_destroy(&f->clips[i]);
}

/* The fixture's assets built with `d` (the fixture's def, changed). */
static inline pm_database *build_def(const fixture *f, const pm_database_def *d) {
    pm_database *db = NULL;
    pm_error err;
    if (pm_database_build(&db, d, f->assets, 4, &err) != PM_OK) fail_msg("build: %s", err.message);
    return db;
}

static inline pm_database *build(const fixture *f, int threads) {
    pm_database_def d = f->def;
    d.threads = threads;
    return build_def(f, &d);
}

#endif

/* Database images to damage, for the tests of loading and verification (test_database_load.c,
 * test_database_verify.c): a section's bytes, a database's image with a scratch copy to edit one
 * change at a time, and the two ways a crafted copy must fail. Header-only, as
 * database_support.h. */
#ifndef PM_TESTS_DATABASE_IMAGE_H
#define PM_TESTS_DATABASE_IMAGE_H

#include <stdlib.h>
#include <string.h>

#include "database_internal.h"
#include "database_support.h"

/* The bytes of a section of a database image. */
static inline uint8_t *section_data(uint8_t *image, uint32_t id) {
    pmdb_header h;
    memcpy(&h, image, sizeof h);
    for (uint32_t k = 0; k < h.section_count; k++) {
        pmdb_section sec;
        memcpy(&sec, image + h.header_size + k * sizeof sec, sizeof sec);
        if (sec.id == id) return image + sec.offset;
    }
    fail_msg("section %u not found", id);
    return NULL;
}

/* A database's image and a scratch copy of it to damage, one edit at a time. */
typedef struct db_image {
    pm_database *db;
    const uint8_t *bytes;
    size_t n;
    uint8_t *copy;
    pmdb_header h;
} db_image;

/* Takes over `db`: its bytes, their header, and room for the copy. */
static inline void image_of(db_image *im, pm_database *db) {
    im->db = db;
    im->bytes = pm_database_bytes(db, &im->n);
    im->copy = malloc(im->n);
    memcpy(&im->h, im->bytes, sizeof im->h);
}

/* The copy, undamaged again. */
static inline uint8_t *image_fresh_copy(db_image *im) {
    memcpy(im->copy, im->bytes, im->n);
    return im->copy;
}

/* The fixture of `frames`-frame clips and the image of its database. */
static inline void image_build(db_image *im, fixture *f, int frames) {
    fixture_init(f, frames);
    image_of(im, build(f, 1));
}

static inline void image_free(db_image *im) {
    free(im->copy);
    pm_database_destroy(im->db);
}

/* Swaps values a and b of `v` when they differ: 1 if it did. */
static inline int swap_if_different(float *v, size_t a, size_t b) {
    if (v[a] == v[b]) return 0;
    float t = v[a];
    v[a] = v[b];
    v[b] = t;
    return 1;
}

/* In the copy, the first bound-tree leaf point and another of its leaf that differs from it in
 * `lane` (a PCA coordinate, or the residual norm at lane exact_components) trade that lane: both
 * stay inside the leaf's box. Fails when no leaf holds two such points. */
static inline void bt_leaf_swap(db_image *im, int lane) {
    const pmdb_bt_node *nodes = (const pmdb_bt_node *)section_data(im->copy, PMDB_BT_NODES);
    float *points = (float *)section_data(im->copy, PMDB_BT_POINTS);
    const int rows = (int)im->h.bt_block_rows;
    for (uint32_t i = 0; i < im->h.bt_node_count; i++) {
        if (nodes[i].left || nodes[i].count < 2) continue;
        for (uint32_t v = nodes[i].first + 1; v < nodes[i].first + nodes[i].count; v++)
            if (swap_if_different(points, pm_bt_at(rows, nodes[i].first, lane), pm_bt_at(rows, v, lane))) return;
    }
    fail_msg("no bound-tree leaf holds two points that differ in lane %d", lane);
}

/* Loads (as a file resealed with a valid checksum would) and must fail verification naming
 * `words`. */
static inline void expect_unverified(const db_image *im, const char *words) {
    pm_database *x = NULL;
    pm_error err;
    if (pm_database_load_memory(&x, im->copy, im->n, PM_LOAD_SKIP_CHECKSUM, NULL, &err) != PM_OK)
        fail_msg("the crafted file should load: %s", err.message);
    if (pm_database_verify(x, &err) != PM_ERR_CORRUPT) fail_msg("verification passed a file crafted to fail with '%s'", words);
    if (!strstr(err.message, words)) fail_msg("expected '%s' in: %s", words, err.message);
    pm_database_destroy(x);
}

/* Loads with the checksum skipped (a file resealed after editing) and must be refused with
 * PM_ERR_CORRUPT naming `words`. */
static inline void expect_refused(const db_image *im, const char *words) {
    pm_database *x = (pm_database *)&x;
    pm_error err;
    memset(&err, 0, sizeof err);
    pm_result r = pm_database_load_memory(&x, im->copy, im->n, PM_LOAD_SKIP_CHECKSUM, NULL, &err);
    if (r != PM_ERR_CORRUPT) fail_msg("expected corrupt data for '%s', got %s (%s)", words, pm_result_string(r), err.message);
    if (!strstr(err.message, words)) fail_msg("expected '%s' in: %s", words, err.message);
    assert_null(x);
}

#endif

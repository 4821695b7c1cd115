/* .pmdb files: truncated, damaged and crafted images refused on load, and what loads but fails
 * verification. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database_image.h"

static void test_corrupt_files(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 50);
    pm_error err;
    pm_database *x = NULL;
    /* Truncation at every 97th length and a few special ones: always an error. */
    for (size_t len = 0; len < im.n; len += (len < 512 ? 1 : 97)) {
        assert_int_not_equal(pm_database_load_memory(&x, im.bytes, len, 0, NULL, &err), PM_OK);
        assert_null(x);
    }
    /* Flags it does not know are refused, not ignored; the database stays NULL. */
    x = (pm_database *)&err;
    assert_int_equal(pm_database_load_memory(&x, im.bytes, im.n, 6u, NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_null(x);
    assert_string_equal(err.message,
                        "pm_database_load_memory: unknown flags 0x4 (only PM_LOAD_SKIP_CHECKSUM and PM_LOAD_IN_PLACE)");
    /* A flipped byte anywhere fails the checksum. */
    pm_test_rng rng = {99};
    for (int i = 0; i < 300; i++) {
        image_fresh_copy(&im);
        size_t at = pm_test_rng_u32(&rng) % im.n;
        im.copy[at] ^= (uint8_t)(1u + pm_test_rng_u32(&rng) % 255u);
        assert_int_equal(pm_database_load_memory(&x, im.copy, im.n, 0, NULL, &err), PM_ERR_CORRUPT);
        assert_null(x);
    }
    /* Without the checksum the structural checks must hold on their own: random damage either
     * loads (a searchable database) or is refused, never crashes. */
    pm_search_def sd = pm_default_search_def();
    for (int i = 0; i < 3000; i++) {
        image_fresh_copy(&im);
        int flips = 1 + (int)(pm_test_rng_u32(&rng) % 4);
        for (int k = 0; k < flips; k++) {
            size_t at = i % 3 == 0 ? pm_test_rng_u32(&rng) % 1024 : pm_test_rng_u32(&rng) % im.n;
            im.copy[at % im.n] ^= (uint8_t)(1u << (pm_test_rng_u32(&rng) % 8));
        }
        if (pm_database_load_memory(&x, im.copy, im.n, PM_LOAD_SKIP_CHECKSUM, NULL, &err) == PM_OK) {
            /* What loads may still state wrong numbers; what also verifies answers every exact
             * mode with brute force's optimum of its own values. */
            int verified = pm_database_verify(x, &err) == PM_OK;
            if (!verified) assert_int_equal(err.code, PM_ERR_CORRUPT);
            float q[DIMS] = {0};
            pm_search_result r[4];
            for (int m = 0; m < 4; m++) {
                sd.mode = (pm_search_mode)m;
                size_t ss = pm_search_scratch_size(x, &sd);
                void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64);
                pm_search(&r[m], x, q, &sd, scratch, ss, &err);
                free(scratch);
            }
            if (verified) {
                assert_int_equal(r[PM_SEARCH_EXACT].pose, r[PM_SEARCH_BRUTEFORCE].pose);
                assert_int_equal(r[PM_SEARCH_VPTREE].pose, r[PM_SEARCH_BRUTEFORCE].pose);
                assert_true(r[PM_SEARCH_EXACT].cost == r[PM_SEARCH_BRUTEFORCE].cost);
            }
            pm_database_destroy(x);
        } else {
            assert_null(x);
            assert_true(strlen(err.message) > 0);
        }
    }
    /* An inverted value box is refused: it would bound too high and prune the answer away. */
    image_fresh_copy(&im);
    uint8_t *vboxes = section_data(im.copy, PMDB_BT_VALUE_BOXES);
    float hi;
    memcpy(&hi, vboxes + (size_t)im.h.stride * sizeof(float), sizeof hi);
    hi += 1.0f; /* node 0, dimension 0: lo above hi */
    memcpy(vboxes, &hi, sizeof hi);
    assert_int_equal(pm_database_load_memory(&x, im.copy, im.n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "inverted"));
    /* A node shared by two parents (here both children of the root) is refused: a walk would
     * push it twice and overrun its node-sized heap. */
    image_fresh_copy(&im);
    pmdb_bt_node root;
    uint8_t *nodes = section_data(im.copy, PMDB_BT_NODES);
    memcpy(&root, nodes, sizeof root);
    assert_true(root.left != 0);
    root.right = root.left;
    memcpy(nodes, &root, sizeof root);
    assert_int_equal(pm_database_load_memory(&x, im.copy, im.n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "two parents"));
    /* A future version is reported as such. */
    image_fresh_copy(&im);
    im.copy[8] = 99;
    assert_int_equal(pm_database_load_memory(&x, im.copy, im.n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_VERSION);
    assert_non_null(strstr(err.message, "version"));
    /* Files: missing, and garbage. */
    assert_int_equal(pm_database_load(&x, pm_test_tmp_path("missing.pmdb"), NULL, &err), PM_ERR_IO);
    assert_non_null(strstr(err.message, "missing.pmdb"));
    pm_test_write_file(pm_test_tmp_path("garbage.pmdb"), "hello, world, not a database", 28);
    assert_int_equal(pm_database_load(&x, pm_test_tmp_path("garbage.pmdb"), NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "garbage.pmdb"));
    /* An empty path names the call rather than an unnamed file (": cannot open"). */
    x = (pm_database *)&x;
    assert_int_equal(pm_database_load(&x, "", NULL, &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_load: path is empty");
    assert_null(x);
    pm_database *db = build(&f, 1);
    assert_int_equal(pm_database_save(db, "", &err), PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_save: path is empty");
    pm_database_destroy(db);
    image_free(&im);
    fixture_free(&f);
}

/* A header may not ask for more exact components than the builder can split on (its per-node
 * sums are sized for PM_MAX_PCA_COMPONENTS), even when the cardinality has room for them. */
static void test_exact_components_limit(void **state) {
    (void)state;
    enum { WIDE = PM_MAX_PCA_COMPONENTS + 2 };
    pm_clip clips[2];
    pm_asset_def assets[2];
    for (int i = 0; i < 2; i++) {
        pm_test_random_clip(&clips[i], 40, WIDE, (uint64_t)i + 9);
        assets[i] = pm_default_asset_def(&clips[i]);
    }
    pm_database_def def = pm_default_database_def();
    pm_schema schema_storage;
    pm_test_curve_schema(&schema_storage, WIDE);
    def.schema = &schema_storage;
    def.exact_components = PM_MAX_PCA_COMPONENTS;
    def.threads = 1;
    pm_database *db = NULL;
    pm_error err;
    PM_ASSERT_OK(pm_database_build(&db, &def, assets, 2, &err));
    db_image im;
    image_of(&im, db);
    uint8_t *copy = image_fresh_copy(&im);
    pmdb_header h = im.h;
    assert_int_equal(h.exact_components, PM_MAX_PCA_COMPONENTS);
    h.exact_components = PM_MAX_PCA_COMPONENTS + 1;
    h.bt_block_rows = h.exact_components + 1;
    memcpy(copy, &h, sizeof h);
    pm_database *x = NULL;
    assert_int_equal(pm_database_load_memory(&x, copy, im.n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_null(x);
    assert_non_null(strstr(err.message, "65 exact components"));
    image_free(&im);
    for (int i = 0; i < 2; i++) pm_clip_destroy(&clips[i]);
}

static void test_verify(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 120);
    pm_error err;
    assert_int_equal(pm_database_verify(im.db, &err), PM_OK);
    assert_int_equal(pm_database_verify(NULL, &err), PM_ERR_INVALID_ARGUMENT);
    const int D = (int)im.h.cardinality;

    /* Two points of one leaf trade a coordinate: both stay inside the leaf's box, so loading
     * cannot tell, but each is no longer the projection of its values. */
    image_fresh_copy(&im);
    bt_leaf_swap(&im, 0);
    expect_unverified(&im, "not the projection");

    /* A VP-tree radius shrunk to zero: its inside shell would be pruned from every query. */
    image_fresh_copy(&im);
    pmdb_vp_node *vp = (pmdb_vp_node *)section_data(im.copy, PMDB_VP_NODES);
    assert_true(vp[0].inside != 0 && vp[0].mu > 0.0f);
    vp[0].mu = 0.0f;
    expect_unverified(&im, "radius");

    /* A KD-tree split moved past its low side. */
    image_fresh_copy(&im);
    pmdb_kd_node *kd = (pmdb_kd_node *)section_data(im.copy, PMDB_KD_NODES);
    assert_true(kd[0].dim >= 0);
    kd[0].split -= 1000.0f;
    expect_unverified(&im, "split");

    /* A basis that stretches: projected distances could exceed the costs they bound. */
    image_fresh_copy(&im);
    float *basis = (float *)section_data(im.copy, PMDB_PCA_BASIS);
    for (int d = 0; d < D; d++) basis[d] *= 1.001f;
    expect_unverified(&im, "orthonormal");

    /* A PCA mean far from the data: every coordinate large, and its float rounding larger than
     * the search's margins. */
    image_fresh_copy(&im);
    float *mean = (float *)section_data(im.copy, PMDB_PCA_MEAN);
    mean[0] += 1000.0f;
    expect_unverified(&im, "PCA mean");

    /* A VP-tree leaf item listed twice hides the vector it replaced. */
    image_fresh_copy(&im);
    uint32_t *items = (uint32_t *)section_data(im.copy, PMDB_VP_ITEMS);
    vp = (pmdb_vp_node *)section_data(im.copy, PMDB_VP_NODES);
    uint32_t leaf = 0;
    while (leaf < im.h.vp_node_count && (vp[leaf].inside || vp[leaf].outside < 2)) leaf++;
    assert_true(leaf < im.h.vp_node_count);
    items[vp[leaf].vp + 1] = items[vp[leaf].vp];
    expect_unverified(&im, "twice");
    image_free(&im);

    /* Loading itself refuses what no build writes and the kernels would sum: padding lanes of
     * the PCA boxes that are not zero (5 exact-mode rows in 8 lanes here) and rows whose padding
     * dimensions are not zero. */
    f.def.exact_components = 4;
    image_of(&im, build(&f, 1));
    image_fresh_copy(&im);
    float *boxes = (float *)section_data(im.copy, PMDB_BT_BOXES);
    const int P = pm_bt_box_lanes(4);
    assert_int_equal(P, 8);
    boxes[6] = boxes[P + 6] = 100.0f;
    pm_database *x = NULL;
    assert_int_equal(pm_database_load_memory(&x, im.copy, im.n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "padding lane"));
    image_fresh_copy(&im);
    float *values = (float *)section_data(im.copy, PMDB_VALUES);
    assert_true(im.h.stride > im.h.cardinality);
    values[im.h.cardinality] = 1.0f;
    assert_int_equal(pm_database_load_memory(&x, im.copy, im.n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "padding dimension"));
    image_free(&im);
    fixture_free(&f);
}

/* The section table of an image, in place. */
static pmdb_section *section_table(uint8_t *image) {
    pmdb_header h;
    memcpy(&h, image, sizeof h);
    return (pmdb_section *)(image + h.header_size);
}

/* Structure the checksum would not catch in a resealed file: a section left out of the table,
 * trees missing for searchable vectors, the vector->pose map not starting at pose 0, header pose
 * counts that disagree with the poses' flags, header settings that disagree with the settings
 * section, a KD-tree node whose two children are one. */
static void test_crafted_structure(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 60);
    /* The last section of the table dropped, then the strings moved to the end and dropped. */
    const uint32_t last = im.h.section_count - 1;
    const pmdb_section *table = (const pmdb_section *)(im.bytes + im.h.header_size);
    static const char *const expect_missing[] = {[PMDB_MIRROR_MAPS] = "section mirror maps is missing"};
    assert_true(table[last].id == PMDB_MIRROR_MAPS);
    image_fresh_copy(&im);
    pmdb_header e = im.h;
    e.section_count = last;
    memcpy(im.copy, &e, sizeof e);
    expect_refused(&im, expect_missing[table[last].id]);
    uint32_t strings = 0;
    while (table[strings].id != PMDB_STRINGS) strings++;
    pmdb_section *t = section_table(im.copy);
    t[strings] = table[last];
    expect_refused(&im, "section strings is missing");

    /* No KD-tree though vectors are searchable. */
    image_fresh_copy(&im);
    e = im.h;
    e.kd_node_count = 0;
    memcpy(im.copy, &e, sizeof e);
    expect_refused(&im, "trees do not match the searchable vectors");

    /* The vector->pose map starting past pose 0. */
    image_fresh_copy(&im);
    uint32_t *starts = (uint32_t *)section_data(im.copy, PMDB_VEC_POSE_START);
    starts[0] = 1;
    expect_refused(&im, "vector->pose map does not cover the poses");

    /* One searchable pose counted as blocked in the header. */
    image_fresh_copy(&im);
    e = im.h;
    e.searchable_poses--;
    e.block_transition_poses++;
    memcpy(im.copy, &e, sizeof e);
    expect_refused(&im, "pose flags disagree with the header counts");

    /* The header's rate (what results' times are computed with) apart from the settings' (what
     * query clips are prepared at): an audit's flipped bit turned 30 fps into 7.5 unnoticed. The
     * same for the components the header repeats. */
    image_fresh_copy(&im);
    e = im.h;
    e.fps *= 0.25f;
    memcpy(im.copy, &e, sizeof e);
    expect_refused(&im, "settings fps 30, header 7.5");
    image_fresh_copy(&im);
    pmdb_settings *settings = (pmdb_settings *)section_data(im.copy, PMDB_SETTINGS);
    settings->pca_components++;
    expect_refused(&im, "settings PCA components");

    /* A KD-tree node whose children are the same node. */
    image_fresh_copy(&im);
    pmdb_kd_node *kd = (pmdb_kd_node *)section_data(im.copy, PMDB_KD_NODES);
    assert_true(kd[0].dim >= 0);
    kd[0].b = kd[0].a;
    expect_refused(&im, "KD-tree node 0: a child has two parents");
    image_free(&im);
    fixture_free(&f);
}

/* PM_LOAD_IN_PLACE: the database uses the caller's bytes without a copy and never frees them,
 * loaded or refused; they must be 64-byte aligned. */
static void test_load_in_place(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 60);
    const size_t room = (im.n + 64 + 63) / 64 * 64;
    uint8_t *buffer = aligned_alloc(64, room);
    memcpy(buffer, im.bytes, im.n);
    pm_test_allocator counter = {0, 0, -1, 0, 0};
    pm_allocator hooks = pm_test_allocator_hooks(&counter);
    pm_database *db = NULL;
    pm_error err;
    PM_ASSERT_OK(pm_database_load_memory(&db, buffer, im.n, PM_LOAD_IN_PLACE, &hooks, NULL));
    size_t n = 0;
    assert_ptr_equal(pm_database_bytes(db, &n), buffer);
    assert_int_equal(n, im.n);
    /* One allocation fewer than a copying load: no image. */
    const long in_place_allocs = counter.allocs;
    pm_database *copied = NULL;
    PM_ASSERT_OK(pm_database_load_memory(&copied, buffer, im.n, 0, &hooks, NULL));
    assert_int_equal(counter.allocs - in_place_allocs, in_place_allocs + 1);
    assert_ptr_not_equal(pm_database_bytes(copied, NULL), buffer);
    pm_database_destroy(copied);
    pm_test_assert_same_database(db, im.db);
    pm_database_destroy(db);
    assert_int_equal(counter.allocs, counter.frees);
    assert_memory_equal(buffer, im.bytes, im.n); /* read, never written */
    /* Refused: the bytes stay the caller's (ASan would report a free of them). */
    buffer[im.n / 2] ^= 0x40;
    db = (pm_database *)&err;
    assert_int_equal(pm_database_load_memory(&db, buffer, im.n, PM_LOAD_IN_PLACE, NULL, &err), PM_ERR_CORRUPT);
    assert_null(db);
    assert_string_equal(err.message, "checksum mismatch: the file is corrupted");
    assert_int_equal(pm_database_load_memory(&db, buffer, 100, PM_LOAD_IN_PLACE, NULL, &err), PM_ERR_CORRUPT);
    buffer[im.n / 2] ^= 0x40;
    memmove(buffer + 16, buffer, im.n);
    assert_int_equal(pm_database_load_memory(&db, buffer + 16, im.n, PM_LOAD_IN_PLACE, NULL, &err),
                     PM_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "pm_database_load_memory: in place, data must be 64-byte aligned (it is 16 byte(s) past)");
    assert_null(db);
    /* Copied, misaligned bytes load. */
    PM_ASSERT_OK(pm_database_load_memory(&db, buffer + 16, im.n, 0, NULL, NULL));
    pm_database_destroy(db);
    free(buffer);
    image_free(&im);
    fixture_free(&f);
}

/* The records of the clips assets were made from, edited: mirrored copies are played with these
 * maps, so one that is no left/right swap, a copy that disagrees with its source, or mirror
 * fields on an unmirrored asset are refused. Assets: 0, 1, 1.mirror, 2, 3. */
static void test_crafted_sources(void **state) {
    (void)state;
    fixture f;
    db_image im;
    fixture_init(&f, 60);
    f.assets[1].mirror = 1;
    image_of(&im, build(&f, 1));
    assert_int_equal(im.h.asset_count, 5);
    pmdb_asset_source *src;
    int32_t *map;
    pmdb_asset *assets;
#define EDIT(stmt, words)                                                                                              \
    do {                                                                                                               \
        image_fresh_copy(&im);                                                                                         \
        src = (pmdb_asset_source *)section_data(im.copy, PMDB_ASSET_SOURCES);                                          \
        map = (int32_t *)section_data(im.copy, PMDB_MIRROR_MAPS);                                                      \
        assets = (pmdb_asset *)section_data(im.copy, PMDB_ASSETS);                                                     \
        stmt;                                                                                                          \
        expect_refused(&im, words);                                                                                    \
    } while (0)
    EDIT(map[1] = 1, "asset 2: mirror map entry 2 (1) is not a left/right swap");
    EDIT(map[0] = 3, "asset 2: mirror map entry 0 (3) is not a left/right swap");
    EDIT(map[0] = -1, "asset 2: mirror map entry 0 (-1) is not a left/right swap");
    EDIT(src[2].mirror_axis = 3, "asset 2: mirror map at 0 (expected 0) or axis 3 out of range");
    EDIT(src[2].mirror_map = 1, "asset 2: mirror map at 1 (expected 0)");
    EDIT(src[2].motion_hash ^= 1, "asset 2: its source asset 1 was made from another clip");
    EDIT(src[1].skeleton_hash ^= 1, "asset 2: its source asset 1 was made from another clip");
    EDIT(src[2].frame_count--, "asset 2: its source asset 1 was made from another clip");
    EDIT(src[2].frame_time *= 2.0f, "asset 2: its source asset 1 was made from another clip");
    EDIT(assets[0].flags |= 4, "asset 0: fields out of range");
    EDIT(src[0].mirror_axis = 0, "asset 0: mirror fields on an asset that is not mirrored");
    EDIT(src[3].mirror_map = 0, "asset 3: mirror fields on an asset that is not mirrored");
    EDIT(assets[3].source_asset = 1, "asset 3: mirror fields on an asset that is not mirrored");
    EDIT(assets[2].source_asset = 2, "asset 2: a mirrored copy whose source asset 2 is not an unmirrored asset");
    EDIT(src[4].frame_time = NAN, "asset 4: source clip of 3 joints and");
    EDIT(src[0].reserved = 1, "asset 0: source clip of 3 joints");
    /* The maps' section is as long as the mirrored copies' joints. */
    EDIT(src[2].joint_count = 4, "section mirror maps: 3 elements, expected 4");
    EDIT(src[0].joint_count = 0, "asset 0: source clip of 0 joints");
#undef EDIT
    image_free(&im);
    fixture_free(&f);
}

/* What loads but fails verification: a value past MAX_DEVIATION scales (its value boxes widened
 * so that loading accepts it), a bound-tree root that does not hold every searchable vector,
 * children that do not split their parent's range. */
static void test_verify_values_and_ranges(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 120);
    const int S = (int)im.h.stride;

    image_fresh_copy(&im);
    float *values = (float *)section_data(im.copy, PMDB_VALUES);
    float *vboxes = (float *)section_data(im.copy, PMDB_BT_VALUE_BOXES);
    values[3 * S + 1] = 2e4f;
    for (uint32_t i = 0; i < im.h.bt_node_count; i++) vboxes[(size_t)i * 2 * S + S + 1] = 2e4f;
    expect_unverified(&im, "vector 3: value 1 (20000) lies beyond 10000 scales from the mean");

    image_fresh_copy(&im);
    pmdb_bt_node *nodes = (pmdb_bt_node *)section_data(im.copy, PMDB_BT_NODES);
    assert_true(nodes[0].left != 0 && nodes[0].count == im.h.searchable_vectors && nodes[0].count > PM_BT_BLOCK);
    nodes[0].count -= PM_BT_BLOCK;
    char words[96];
    snprintf(words, sizeof words, "bound tree: the root holds %u of %u searchable vectors",
             im.h.searchable_vectors - PM_BT_BLOCK, im.h.searchable_vectors);
    expect_unverified(&im, words);

    image_fresh_copy(&im);
    nodes = (pmdb_bt_node *)section_data(im.copy, PMDB_BT_NODES);
    pmdb_bt_node *right = &nodes[nodes[0].right];
    assert_true(right->count > PM_BT_BLOCK);
    right->first += PM_BT_BLOCK; /* a gap between the two halves */
    right->count -= PM_BT_BLOCK;
    expect_unverified(&im, "bound tree: node 0's children do not split its range");
    image_free(&im);
    fixture_free(&f);
}

/* Bounds the search relies on, each broken alone in a resealed file (the checksum skipped): the
 * load must refuse every one, naming it. A bound-tree box or addend lane that does not hold what
 * it bounds would prune the answer away; a KD-tree node pointing back up or past its points would
 * loop or read past the file; a section table that reaches past the end of the data, a padded
 * file or another version's format would be read as something it is not. */
static void test_crafted_bounds(void **state) {
    (void)state;
    fixture f;
    db_image im;
    fixture_init(&f, 60);
    f.assets[3] = pm_default_asset_def(&f.clips[0]); /* asset 3 repeats asset 0: shared value rows */
    image_of(&im, build(&f, 1));
    pm_database *x = NULL;
    pm_error err;
    const int ke = (int)im.h.exact_components, rows = ke + 1, P = pm_bt_box_lanes(ke), bs = pm_bt_box_stride(ke);
    const int S = (int)im.h.stride;

    /* An older format version is reported as such, as a future one is. */
    image_fresh_copy(&im);
    pmdb_header e = im.h;
    e.version = PMDB_VERSION - 1;
    memcpy(im.copy, &e, sizeof e);
    assert_int_equal(pm_database_load_memory(&x, im.copy, im.n, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_VERSION);
    assert_null(x);

    /* Bytes past the size the header states. */
    uint8_t *padded = calloc(1, im.n + 64);
    memcpy(padded, im.bytes, im.n);
    assert_int_equal(pm_database_load_memory(&x, padded, im.n + 64, PM_LOAD_SKIP_CHECKSUM, NULL, &err), PM_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "truncated or padded"));
    assert_null(x);
    free(padded);

    /* Sections: one past the end, one running 64 bytes past it, one listed twice. */
    image_fresh_copy(&im);
    pmdb_section *t = section_table(im.copy);
    uint32_t mean = 0;
    while (t[mean].id != PMDB_PCA_MEAN) mean++;
    t[mean].offset = im.n + 64;
    expect_refused(&im, "offset");
    image_fresh_copy(&im);
    t = section_table(im.copy);
    t[mean].offset = im.n - 64;
    t[mean].count = 128 / t[mean].elem_size;
    expect_refused(&im, "runs past the end of the file");
    image_fresh_copy(&im);
    t = section_table(im.copy);
    t[mean] = t[0];
    expect_refused(&im, "appears twice");

    /* A negative weight square root: the query would be projected unlike the stored points. */
    image_fresh_copy(&im);
    float *wsqrt = (float *)section_data(im.copy, PMDB_DIM_WSQRT);
    assert_true(wsqrt[0] > 0.0f);
    wsqrt[0] = -wsqrt[0];
    expect_refused(&im, "scale or weight out of range");

    /* A pose listed twice under its vector (and so another one never). */
    image_fresh_copy(&im);
    const uint32_t *starts = (const uint32_t *)section_data(im.copy, PMDB_VEC_POSE_START);
    uint32_t *list = (uint32_t *)section_data(im.copy, PMDB_VEC_POSES);
    uint32_t shared = 0;
    while (shared < im.h.vector_count && starts[shared + 1] - starts[shared] < 2) shared++;
    assert_true(shared < im.h.vector_count);
    list[starts[shared] + 1] = list[starts[shared]];
    expect_refused(&im, "vector->pose map: entry");

    /* Bound-tree boxes: the root's addend lane above its children's, a leaf's above its rows', a
     * child's PCA box reaching above its parent's, a leaf's PCA and value boxes below a point. */
    const pmdb_bt_node *bt = (const pmdb_bt_node *)section_data((uint8_t *)im.bytes, PMDB_BT_NODES);
    assert_true(bt[0].left != 0);
    uint32_t leaf = 0;
    while (bt[leaf].left) leaf = bt[leaf].left;
    image_fresh_copy(&im);
    float *boxes = (float *)section_data(im.copy, PMDB_BT_BOXES);
    boxes[2 * P] += 1.0f;
    expect_refused(&im, "smallest addend above a child's");
    image_fresh_copy(&im);
    boxes = (float *)section_data(im.copy, PMDB_BT_BOXES);
    boxes[(size_t)leaf * bs + 2 * P] += 1.0f;
    expect_refused(&im, "smallest addend above row");
    image_fresh_copy(&im);
    boxes = (float *)section_data(im.copy, PMDB_BT_BOXES);
    float *child = boxes + (size_t)bt[0].left * bs;
    child[P] = boxes[P] + 1.0f;
    expect_refused(&im, "child box outside");
    for (int c = 0; c < rows; c++) {
        image_fresh_copy(&im);
        boxes = (float *)section_data(im.copy, PMDB_BT_BOXES);
        float *box = boxes + (size_t)leaf * bs;
        if (!(box[P + c] > box[c])) continue;
        box[P + c] = box[c];
        expect_refused(&im, "outside its box");
    }
    for (int d = 0; d < (int)im.h.cardinality; d++) {
        image_fresh_copy(&im);
        float *vbox = (float *)section_data(im.copy, PMDB_BT_VALUE_BOXES) + (size_t)leaf * 2 * S;
        if (!(vbox[S + d] > vbox[d])) continue;
        vbox[S + d] = vbox[d];
        expect_refused(&im, "outside its value box");
    }
    /* A leaf starting inside a block: its blocks would be read from the wrong rows. */
    image_fresh_copy(&im);
    pmdb_bt_node *btc = (pmdb_bt_node *)section_data(im.copy, PMDB_BT_NODES);
    assert_true(btc[leaf].count > 1);
    btc[leaf].first++;
    btc[leaf].count--;
    expect_refused(&im, "range out of bounds");

    /* KD-tree: a node whose child is itself, a leaf reaching past the points. */
    image_fresh_copy(&im);
    pmdb_kd_node *kd = (pmdb_kd_node *)section_data(im.copy, PMDB_KD_NODES);
    assert_true(kd[0].dim >= 0);
    kd[0].a = 0;
    expect_refused(&im, "children or split out of range");
    image_fresh_copy(&im);
    kd = (pmdb_kd_node *)section_data(im.copy, PMDB_KD_NODES);
    uint32_t kl = 0;
    while (kl < im.h.kd_node_count && !(kd[kl].dim < 0 && kd[kl].a > 0)) kl++;
    assert_true(kl < im.h.kd_node_count);
    kd[kl].b = im.h.kd_point_count;
    expect_refused(&im, "leaf range out of bounds");

    /* Vectors named by the trees one past the searchable ones. */
    image_fresh_copy(&im);
    uint32_t *kd_vecs = (uint32_t *)section_data(im.copy, PMDB_KD_POINT_VECS);
    kd_vecs[0] = im.h.searchable_vectors;
    expect_refused(&im, "KD-tree point vector 0 out of range");
    image_fresh_copy(&im);
    uint32_t *vp_items = (uint32_t *)section_data(im.copy, PMDB_VP_ITEMS);
    vp_items[0] = im.h.searchable_vectors;
    expect_refused(&im, "VP-tree item 0 out of range");
    /* Smallest addends below what the poses hold: exact, or the file is not the one built. */
    image_fresh_copy(&im);
    float *vec_add = (float *)section_data(im.copy, PMDB_VEC_MIN_ADDEND);
    vec_add[0] -= 1.0f;
    expect_refused(&im, "vector 0: smallest addend disagrees with its poses");
    image_fresh_copy(&im);
    e = im.h;
    e.min_cost_addend -= 1.0f;
    memcpy(im.copy, &e, sizeof e);
    expect_refused(&im, "the header's smallest addend disagrees with the poses");
    /* More PCA components than dimensions: the projection would read past the basis. */
    image_fresh_copy(&im);
    e = im.h;
    e.pca_components = e.cardinality + 1;
    memcpy(im.copy, &e, sizeof e);
    expect_refused(&im, "PCA components");
    /* Settings a rebuild could not use: exact-mode leaves smaller than a block. */
    image_fresh_copy(&im);
    pmdb_settings *st = (pmdb_settings *)section_data(im.copy, PMDB_SETTINGS);
    st->exact_leaf_size = PM_BT_BLOCK - 1;
    expect_refused(&im, "settings are not valid");
    /* Bound-tree rows per block that are not the exact components and the residual. */
    image_fresh_copy(&im);
    e = im.h;
    e.bt_block_rows++;
    memcpy(im.copy, &e, sizeof e);
    expect_refused(&im, "bound-tree block rows");
    image_free(&im);
    fixture_free(&f);
}

/* The header's flag for cost addends (docs/FORMAT.md) is for readers of the file: set exactly
 * when some pose carries a non-zero addend, the asset's own or a range's. */
static uint32_t built_header_flags(const fixture *f) {
    pm_database *db = build(f, 1);
    pmdb_header h;
    memcpy(&h, pm_database_bytes(db, NULL), sizeof h);
    pm_database_destroy(db);
    return h.flags;
}

static void test_header_addend_flag(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 60);
    assert_int_equal(built_header_flags(&f), 0);
    for (int with_range = 0; with_range < 2; with_range++) {
        const pm_asset_range r = {0.5f, 1.0f, 0.5f, 0};
        f.assets[3].cost_addend = with_range ? 0.0f : 0.25f;
        f.assets[3].ranges = &r;
        f.assets[3].range_count = with_range;
        assert_int_equal(built_header_flags(&f), 1);
    }
    fixture_free(&f);
}

/* pm_database_structure_stats reports the bytes each mode reads (the bench's memory figures):
 * brute force the searchable rows, the pose metadata and the vector->pose map; the VP-tree
 * adds its nodes and items; the KD-tree its nodes, points, point->vector map and the PCA mean,
 * eigenvalues and basis. Each part counted once, at its stored width. */
static void test_structure_bytes(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, 200);
    pm_database *db = build(&f, 1);
    const pmdb_header *h = db->header;
    const size_t vs = h->searchable_vectors, card = (size_t)db->card;
    const size_t base = vs * (size_t)db->stride * sizeof(float) + (size_t)h->pose_count * sizeof(uint64_t) +
                        (size_t)(h->vector_count + 1 + h->pose_count) * sizeof(uint32_t);
    double ms;
    size_t bytes = 0;
    PM_ASSERT_OK(pm_database_structure_stats(&ms, &bytes, db, PM_SEARCH_BRUTEFORCE, NULL));
    assert_int_equal(bytes, base);
    PM_ASSERT_OK(pm_database_structure_stats(&ms, &bytes, db, PM_SEARCH_VPTREE, NULL));
    assert_int_equal(bytes, base + (size_t)h->vp_node_count * sizeof(pmdb_vp_node) + (size_t)h->vp_item_count * sizeof(uint32_t));
    PM_ASSERT_OK(pm_database_structure_stats(&ms, &bytes, db, PM_SEARCH_PCAKDTREE, NULL));
    const size_t np = h->kd_point_count;
    assert_int_equal(bytes, base + (size_t)h->kd_node_count * sizeof(pmdb_kd_node) + np * h->pca_components * sizeof(float) +
                                (np + 1 + vs) * sizeof(uint32_t) + card * (card + 2) * sizeof(float));
    /* Either output missing is refused before anything is written. */
    bytes = 7;
    assert_int_equal(pm_database_structure_stats(NULL, &bytes, db, PM_SEARCH_EXACT, NULL), PM_ERR_INVALID_ARGUMENT);
    assert_int_equal(bytes, 7);
    pm_database_destroy(db);
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corrupt_files),
        cmocka_unit_test(test_exact_components_limit),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_crafted_structure),
        cmocka_unit_test(test_crafted_sources),
        cmocka_unit_test(test_load_in_place),
        cmocka_unit_test(test_verify_values_and_ranges),
        cmocka_unit_test(test_crafted_bounds),
        cmocka_unit_test(test_header_addend_flag),
        cmocka_unit_test(test_structure_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* pm_database_verify against files crafted to load (valid structure, a checksum that would be
 * resealed) yet state numbers the builder would not write: each invariant it recomputes - the
 * basis's orthonormality row by row, the PCA mean, the KD-tree's leaves tiling its points and its
 * splits on both sides, every projection and residual norm, the bound tree's ranges, the VP-tree's
 * radii on both sides and its coverage. Also the loader's own edges: the checksum's last byte, an
 * empty image without data, and pm_database_bytes of NULL; `posematch info --verify` on such a
 * file, resealed with a valid checksum. (Damage the loader itself refuses and
 * the first verification cases: test_database_load.c.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "database_image.h"

/* The KD-tree leaf whose points start at point `point`, or -1. */
static int kd_leaf_at(const db_image *im, const pmdb_kd_node *kd, uint32_t point) {
    for (uint32_t i = 0; i < im->h.kd_node_count; i++)
        if (kd[i].dim < 0 && kd[i].a == point) return (int)i;
    return -1;
}

static void test_verify_basis_rows(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 120);
    const int D = (int)im.h.cardinality;
    assert_true(D >= 4);
    /* The last component leans 1.5e-6 towards every other one: each of their rows is off by that
     * (within the 4e-6 allowed), the last row by D - 1 times it (beyond). */
    image_fresh_copy(&im);
    float *basis = (float *)section_data(im.copy, PMDB_PCA_BASIS);
    const float *b0 = (const float *)section_data((uint8_t *)im.bytes, PMDB_PCA_BASIS);
    for (int d = 0; d < D; d++) {
        double lean = 0.0;
        for (int i = 0; i < D - 1; i++) lean += (double)b0[(size_t)i * D + d];
        basis[(size_t)(D - 1) * D + d] = (float)((double)b0[(size_t)(D - 1) * D + d] + 1.5e-6 * lean);
    }
    char words[64];
    snprintf(words, sizeof words, "component %d is off", D - 1);
    expect_unverified(&im, words);
    image_free(&im);
    fixture_free(&f);
}

static void test_verify_mean_and_projections(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 120);
    const int S = (int)im.h.stride, k = (int)im.h.pca_components;
    /* The mean of dimension 0 moved by 1e-4 of its spread: far beyond rounding. */
    image_fresh_copy(&im);
    const float *values = (const float *)section_data(im.copy, PMDB_VALUES), *w = (const float *)section_data(im.copy, PMDB_DIM_WSQRT);
    double sum = 0.0, sum2 = 0.0;
    for (uint32_t v = 0; v < im.h.searchable_vectors; v++) {
        double y = (double)(values[(size_t)v * S] * w[0]);
        sum += y, sum2 += y * y;
    }
    double mean = sum / im.h.searchable_vectors, spread = fabs(mean) + sqrt(fmax(sum2 / im.h.searchable_vectors - mean * mean, 0.0));
    float *pca_mean = (float *)section_data(im.copy, PMDB_PCA_MEAN);
    pca_mean[0] = (float)(pca_mean[0] + 1e-4 * spread);
    expect_unverified(&im, "PCA mean");

    /* Two points of one bound-tree leaf trade their residual norms: still inside the leaf's box. */
    image_fresh_copy(&im);
    bt_leaf_swap(&im, (int)im.h.exact_components);
    expect_unverified(&im, "residual norm");

    /* Two points of one KD-tree leaf trade a coordinate: both still on their side of every split. */
    image_fresh_copy(&im);
    const pmdb_kd_node *kd = (const pmdb_kd_node *)section_data(im.copy, PMDB_KD_NODES);
    float *kp = (float *)section_data(im.copy, PMDB_KD_POINTS);
    int swapped = 0;
    for (uint32_t i = 0; i < im.h.kd_node_count && !swapped; i++) {
        if (kd[i].dim >= 0 || kd[i].b < 2) continue;
        for (uint32_t p = kd[i].a + 1; p < kd[i].a + kd[i].b && !swapped; p++)
            swapped = swap_if_different(kp, (size_t)kd[i].a * k, (size_t)p * k);
    }
    assert_true(swapped);
    expect_unverified(&im, "KD-tree point");
    image_free(&im);
    fixture_free(&f);
}

static void test_verify_kd_tree(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 120);
    /* A split moved past its high side (moved past its low side: test_database_load.c). */
    image_fresh_copy(&im);
    pmdb_kd_node *kd = (pmdb_kd_node *)section_data(im.copy, PMDB_KD_NODES);
    assert_true(kd[0].dim >= 0);
    kd[0].split += 1000.0f;
    expect_unverified(&im, "split");
    /* The first leaf one point shorter: a point no leaf holds, the next leaf starting after it. */
    image_fresh_copy(&im);
    kd = (pmdb_kd_node *)section_data(im.copy, PMDB_KD_NODES);
    int first = kd_leaf_at(&im, kd, 0);
    assert_true(first >= 0 && kd[first].b >= 2);
    kd[first].b--;
    expect_unverified(&im, "leaf");
    /* The last leaf one point shorter: the leaves stop short of the last point. */
    image_fresh_copy(&im);
    kd = (pmdb_kd_node *)section_data(im.copy, PMDB_KD_NODES);
    int last = -1;
    for (uint32_t i = 0; i < im.h.kd_node_count; i++)
        if (kd[i].dim < 0 && kd[i].a + kd[i].b == im.h.kd_point_count) last = (int)i;
    assert_true(last >= 0 && kd[last].b >= 2);
    kd[last].b--;
    expect_unverified(&im, "leaves cover");
    image_free(&im);
    fixture_free(&f);
}

static void test_verify_bound_and_vp_trees(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 120);
    /* A bound-tree leaf one vector shorter than its parent's range says. */
    image_fresh_copy(&im);
    pmdb_bt_node *nodes = (pmdb_bt_node *)section_data(im.copy, PMDB_BT_NODES);
    int shortened = 0;
    for (uint32_t i = 0; i < im.h.bt_node_count && !shortened; i++) {
        pmdb_bt_node *r = &nodes[nodes[i].right];
        if (!nodes[i].left || r->left || r->count < 2) continue;
        r->count--;
        shortened = 1;
    }
    assert_true(shortened);
    expect_unverified(&im, "do not split its range");
    /* A VP-tree radius grown past its outside shell: those vectors would be searched as inside. */
    image_fresh_copy(&im);
    pmdb_vp_node *vp = (pmdb_vp_node *)section_data(im.copy, PMDB_VP_NODES);
    assert_true(vp[0].inside != 0);
    vp[0].mu = vp[0].mu * 4.0f + 1000.0f;
    expect_unverified(&im, "radius");
    /* A VP-tree leaf one item shorter: its last vector in no node. */
    image_fresh_copy(&im);
    vp = (pmdb_vp_node *)section_data(im.copy, PMDB_VP_NODES);
    uint32_t leaf = 0;
    while (leaf < im.h.vp_node_count && (vp[leaf].inside || vp[leaf].outside < 2)) leaf++;
    assert_true(leaf < im.h.vp_node_count);
    vp[leaf].outside--;
    expect_unverified(&im, "in no node");
    image_free(&im);
    fixture_free(&f);
}

static void test_load_edges(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 50);
    pm_database *x = NULL;
    pm_error err;
    /* The checksum covers the image to its last byte (padding included). */
    image_fresh_copy(&im);
    im.copy[im.n - 1] ^= 0x40;
    assert_int_equal(pm_database_load_memory(&x, im.copy, im.n, 0, NULL, &err), PM_ERR_CORRUPT);
    assert_null(x);
    assert_non_null(strstr(err.message, "checksum"));
    /* No data with size 0 is an empty image: corrupt (truncated), not a NULL argument. */
    assert_int_equal(pm_database_load_memory(&x, NULL, 0, 0, NULL, &err), PM_ERR_CORRUPT);
    assert_null(x);
    assert_non_null(strstr(err.message, "truncated"));
    size_t size = 123;
    assert_null(pm_database_bytes(NULL, &size));
    assert_int_equal(size, 0);
    image_free(&im);
    fixture_free(&f);
}

/* A valid checksum for the edited image, as a file resealed after editing would hold. */
static void reseal(uint8_t *image, size_t size) {
    pmdb_header h;
    memcpy(&h, image, sizeof h);
    h.checksum = pm_database_image_checksum(image, size);
    memcpy(image, &h, sizeof h);
}

/* A crafted file with a valid checksum: `info` shows it, `info --verify` refuses it. */
static void test_cli_info_verify(void **state) {
    (void)state;
    fixture f;
    db_image im;
    image_build(&im, &f, 120);
    image_fresh_copy(&im);
    pmdb_vp_node *vp = (pmdb_vp_node *)section_data(im.copy, PMDB_VP_NODES);
    assert_true(vp[0].inside != 0 && vp[0].mu > 0.0f);
    vp[0].mu = 0.0f;
    reseal(im.copy, im.n);
    const char *path = pm_test_tmp_path("crafted.pmdb");
    pm_test_write_file(path, im.copy, im.n);
    pm_database *x = NULL;
    PM_ASSERT_OK(pm_database_load(&x, path, NULL, NULL)); /* the checksum holds */
    pm_database_destroy(x);
    char *plain[] = {"info", (char *)path, NULL}, *verify[] = {"info", (char *)path, "--verify", NULL},
         *verify_json[] = {"info", "--json", "--verify", (char *)path, NULL};
    assert_int_equal(pm_cmd_info(2, plain), 0);
    assert_int_not_equal(pm_cmd_info(3, verify), 0);
    assert_int_not_equal(pm_cmd_info(4, verify_json), 0);
    fflush(stdout);
    image_free(&im);
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify_basis_rows),
        cmocka_unit_test(test_verify_mean_and_projections),
        cmocka_unit_test(test_verify_kd_tree),
        cmocka_unit_test(test_verify_bound_and_vp_trees),
        cmocka_unit_test(test_load_edges),
        cmocka_unit_test(test_cli_info_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

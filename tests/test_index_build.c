/* The tree builders on their own: the exact mode's bound tree must keep the invariants the search
 * and the loader rely on (blocks, coverage, boxes, balance, depth) whatever the data's shape -
 * skewed, clustered, identical - and for every leaf size the settings allow; every tree fits the
 * node capacity its max_nodes function gives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index_build.h"
#include "support.h"

typedef struct tree {
    uint32_t n, count;
    int dims;
    float *coords, *rho, *addend, *boxes;
    pmdb_bt_node *nodes;
    uint32_t *perm;
} tree;

static void tree_alloc(tree *t, uint32_t n, int dims) {
    memset(t, 0, sizeof *t);
    t->n = n;
    t->dims = dims;
    t->coords = calloc((size_t)n * dims + 1, sizeof(float));
    t->rho = calloc(n + 1, sizeof(float));
    t->addend = calloc(n + 1, sizeof(float));
    t->nodes = calloc(2 * (size_t)n + 1, sizeof(pmdb_bt_node));
    t->boxes = calloc((2 * (size_t)n + 1) * pm_bt_box_stride(dims), sizeof(float));
    t->perm = calloc(n + 1, sizeof(uint32_t));
}

static void tree_free(tree *t) {
    free(t->coords);
    free(t->rho);
    free(t->addend);
    free(t->nodes);
    free(t->boxes);
    free(t->perm);
}

/* Walks the tree from the root and checks every node; returns the depth. */
static int check_tree(const tree *t, int leaf_size) {
    const int P = pm_bt_box_lanes(t->dims), bs = pm_bt_box_stride(t->dims);
    uint32_t stack[128], depth_of[128], sp = 0, leaves_points = 0;
    int max_depth = 0;
    char *seen = calloc(t->n, 1);
    for (uint32_t i = 0; i < t->n; i++) {
        assert_true(t->perm[i] < t->n);
        assert_int_equal(seen[t->perm[i]], 0); /* a permutation */
        seen[t->perm[i]] = 1;
    }
    free(seen);
    assert_int_equal(t->nodes[0].first, 0);
    assert_int_equal(t->nodes[0].count, t->n);
    stack[sp] = 0;
    depth_of[sp++] = 0;
    while (sp) {
        uint32_t id = stack[--sp], depth = depth_of[sp];
        assert_true(id < t->count);
        if ((int)depth > max_depth) max_depth = (int)depth;
        assert_true(depth < 64);
        const pmdb_bt_node *nd = &t->nodes[id];
        const float *lo = t->boxes + (size_t)id * bs, *hi = lo + P;
        float min_add = INFINITY;
        for (uint32_t i = nd->first; i < nd->first + nd->count; i++) {
            uint32_t p = t->perm[i];
            for (int d = 0; d <= t->dims; d++) {
                float v = d < t->dims ? t->coords[(size_t)p * t->dims + d] : t->rho[p];
                assert_true(lo[d] <= v && v <= hi[d]);
            }
            if (t->addend[p] < min_add) min_add = t->addend[p];
        }
        assert_true(hi[P] == min_add);
        if (!nd->left) {
            leaves_points += nd->count;
            continue;
        }
        const pmdb_bt_node *a = &t->nodes[nd->left], *b = &t->nodes[nd->right];
        assert_true(nd->count > (uint32_t)leaf_size);
        assert_int_equal(a->first, nd->first);
        assert_int_equal(b->first, nd->first + a->count);
        assert_int_equal(a->count + b->count, nd->count);
        assert_int_equal(a->count % PM_BT_BLOCK, 0); /* every leaf starts a block */
        assert_true(a->count > 0 && b->count > 0);
        /* Balanced to within the middle half (a block either way for small nodes). */
        uint32_t big = a->count > b->count ? a->count : b->count;
        assert_true(big <= nd->count - nd->count / 4 + PM_BT_BLOCK);
        stack[sp] = nd->right;
        depth_of[sp++] = depth + 1;
        stack[sp] = nd->left;
        depth_of[sp++] = depth + 1;
    }
    assert_int_equal(leaves_points, t->n);
    return max_depth;
}

/* Builds with the capacity the database build gives (pm_bound_tree_max_nodes) and checks the
 * tree; the buffers hold 2n + 1 nodes, so a tree past that capacity would show here. */
static void build_and_check(tree *t, int leaf_size) {
    uint32_t cap = pm_bound_tree_max_nodes(t->n, leaf_size);
    assert_true(cap <= 2 * t->n + 1);
    t->count = pm_bound_tree_build(t->nodes, t->boxes, cap, t->perm, t->coords, t->rho, t->addend, t->n, t->dims, leaf_size);
    assert_true(t->count >= 1 && t->count <= cap);
    check_tree(t, leaf_size);
}

static void test_skewed_and_clustered(void **state) {
    (void)state;
    const uint32_t n = 6007;
    const int dims = 7;
    tree t;
    tree_alloc(&t, n, dims);
    pm_test_rng rng = {11};
    for (uint32_t i = 0; i < n; i++) {
        /* A dense cluster (a third of the points, nearly identical), an exponential tail on
         * the first coordinate, and a few far outliers on the last. */
        int cluster = i % 3 == 0;
        for (int d = 0; d < dims; d++) {
            float g = pm_test_rng_normal(&rng);
            float v = cluster ? 0.001f * g : g * (float)(dims - d);
            if (d == 0 && !cluster) v = expf(2.0f * fabsf(g));
            if (d == dims - 1 && i % 997 == 0) v = 1e4f;
            t.coords[(size_t)i * dims + d] = v;
        }
        t.rho[i] = fabsf(pm_test_rng_normal(&rng));
        t.addend[i] = i % 5 == 0 ? -0.5f : 0.0f;
    }
    for (int leaf = PM_BT_BLOCK; leaf <= 256; leaf *= 2) build_and_check(&t, leaf);
    /* The same shapes mirrored: tails below the bulk push the mean the other way. */
    for (size_t i = 0; i < (size_t)n * dims; i++) t.coords[i] = -t.coords[i];
    for (int leaf = PM_BT_BLOCK; leaf <= 256; leaf *= 2) build_and_check(&t, leaf);
    /* The same inputs give the same tree. */
    pmdb_bt_node *nodes = malloc((2 * (size_t)n + 1) * sizeof *nodes);
    uint32_t *perm = malloc(n * sizeof *perm);
    build_and_check(&t, 128);
    memcpy(nodes, t.nodes, t.count * sizeof *nodes);
    memcpy(perm, t.perm, n * sizeof *perm);
    uint32_t count = t.count;
    build_and_check(&t, 128);
    assert_int_equal(count, t.count);
    assert_memory_equal(nodes, t.nodes, count * sizeof *nodes);
    assert_memory_equal(perm, t.perm, n * sizeof *perm);
    free(nodes);
    free(perm);
    tree_free(&t);
}

static void test_degenerate(void **state) {
    (void)state;
    tree t;
    /* Identical points: no coordinate spreads, any split is as good (index order)... */
    tree_alloc(&t, 1000, 3);
    for (uint32_t i = 0; i < 3000; i++) t.coords[i] = 2.5f;
    build_and_check(&t, 16);
    /* ...unless the residual norms differ: then the root splits them, small ones left. */
    for (uint32_t i = 0; i < 1000; i++) t.rho[i] = (float)(i % 17);
    build_and_check(&t, 16);
    const pmdb_bt_node *root = &t.nodes[0], *left = &t.nodes[root->left];
    float left_max = -INFINITY, right_min = INFINITY;
    for (uint32_t i = 0; i < t.n; i++) {
        float r = t.rho[t.perm[i]];
        if (i < left->count) left_max = r > left_max ? r : left_max;
        else right_min = r < right_min ? r : right_min;
    }
    assert_true(left_max <= right_min);
    assert_true(left_max < 16.0f); /* a real cut, not index order */
    tree_free(&t);
    /* Eight points far away, the rest on top of each other: the mean falls outside the middle
     * half, on either side. */
    tree_alloc(&t, 4096, 2);
    for (uint32_t i = 0; i < 4096; i++) t.coords[2 * i] = i < 8 ? 1e6f : 0.0f;
    build_and_check(&t, PM_BT_BLOCK);
    for (uint32_t i = 0; i < 8; i++) t.coords[2 * i] = -1e6f;
    build_and_check(&t, PM_BT_BLOCK);
    tree_free(&t);
    /* Sizes around the block: 1 point, one block, a block and one. */
    for (uint32_t n = 1; n <= 2 * PM_BT_BLOCK + 1; n++) {
        tree_alloc(&t, n, 2);
        for (uint32_t i = 0; i < 2 * n; i++) t.coords[i] = (float)((i * 7) % 5);
        build_and_check(&t, PM_BT_BLOCK);
        tree_free(&t);
    }
}

/* The capacity pm_bound_tree_max_nodes gives holds every tree the splits can make: points
 * whose coordinate grows geometrically put the mean at the edge of the middle half at every
 * node (the most uneven split allowed), for leaf sizes on and around the block multiples; a
 * capacity one node short is refused, with nothing written past it. */
static void test_node_capacity(void **state) {
    (void)state;
    const int leaf_sizes[] = {PM_BT_BLOCK, 9, 30, 31, 32, 33, 63, 64, 127, 128, 129, 255, 1000, 4095, 4096};
    const uint32_t sizes[] = {1, 7, 8, 9, 100, 1000, 5003, 20000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        tree t;
        tree_alloc(&t, sizes[si], 2);
        for (uint32_t i = 0; i < t.n; i++) {
            t.coords[2 * i] = expf(40.0f * (float)i / (float)t.n); /* a tail that drags the mean */
            t.coords[2 * i + 1] = (float)(i % 3);
        }
        for (size_t li = 0; li < sizeof leaf_sizes / sizeof leaf_sizes[0]; li++) {
            const int leaf = leaf_sizes[li];
            build_and_check(&t, leaf);
            /* At most one node fewer than twice the leaves, each of at least a quarter of a
             * splitting node, in whole blocks: no more than 2n/8 nodes once leaves reach 31. */
            if (leaf >= 31) assert_true(pm_bound_tree_max_nodes(t.n, leaf) <= (t.n >= 8 ? 2 * (t.n / 8) - 1 : 1));
            const uint32_t full = t.count;
            if (full < 2) continue;
            pmdb_bt_node guard = {0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu};
            t.nodes[full - 1] = guard;
            uint32_t r = pm_bound_tree_build(t.nodes, t.boxes, full - 1, t.perm, t.coords, t.rho, t.addend, t.n, 2, leaf);
            assert_int_equal(r, UINT32_MAX);
            assert_memory_equal(&t.nodes[full - 1], &guard, sizeof guard);
        }
        tree_free(&t);
    }
}

/* The KD-tree and the VP-tree fit the capacities their max_nodes functions give, for leaf sizes
 * around the bounds' roundings, on spread, skewed and tied points; one node less is refused with
 * nothing written past it. */
static void test_kd_vp_capacity(void **state) {
    (void)state;
    const uint32_t sizes[] = {1, 2, 3, 17, 100, 1000, 4099};
    const int leaves[] = {1, 2, 3, 4, 7, 8, 15, 16, 17, 33, 200, 1024};
    enum { K = 3, STRIDE = 8 };
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const uint32_t n = sizes[si];
        float *points = calloc((size_t)n * STRIDE, sizeof(float));
        float *scratch = calloc(n, sizeof(float));
        uint32_t *perm = calloc(n, sizeof(uint32_t));
        pmdb_kd_node *kd = calloc(2 * (size_t)n + 1, sizeof *kd);
        pmdb_vp_node *vp = calloc(2 * (size_t)n + 1, sizeof *vp);
        const float wsqrt[STRIDE] = {1, 1, 1, 0, 0, 0, 0, 0};
        pm_test_rng rng = {n + 3};
        for (int shape = 0; shape < 3; shape++) {
            for (uint32_t i = 0; i < n; i++)
                for (int d = 0; d < K; d++) {
                    float g = pm_test_rng_normal(&rng);
                    /* spread; a geometric tail; a few distinct values (ties at every median) */
                    points[(size_t)i * STRIDE + d] = shape == 0 ? g : shape == 1 ? expf(20.0f * (float)i / (float)n) : (float)(i % 3);
                }
            /* The KD-tree reads rows of K coordinates: pack them. */
            float *packed = calloc((size_t)n * K, sizeof(float));
            for (uint32_t i = 0; i < n; i++) memcpy(packed + (size_t)i * K, points + (size_t)i * STRIDE, K * sizeof(float));
            pm_vp_rows rows = {points, wsqrt, STRIDE};
            for (size_t li = 0; li < sizeof leaves / sizeof leaves[0]; li++) {
                const int leaf = leaves[li];
                uint32_t cap = pm_kd_tree_max_nodes(n, leaf);
                assert_true(cap <= 2 * n + 1);
                uint32_t count = pm_kd_tree_build(kd, cap, perm, packed, n, K, leaf);
                assert_true(count >= 1 && count <= cap);
                if (count > 1) {
                    pmdb_kd_node guard = {0xdeadbeefu, 0xdeadbeefu, -7, 1.5f};
                    kd[count - 1] = guard;
                    assert_int_equal(pm_kd_tree_build(kd, count - 1, perm, packed, n, K, leaf), UINT32_MAX);
                    assert_memory_equal(&kd[count - 1], &guard, sizeof guard);
                }
                if (leaf > 64) continue; /* (the VP-tree's leaves are PM_VP_LEAF_SIZE in databases) */
                cap = pm_vp_tree_max_nodes(n, leaf);
                assert_true(cap <= 2 * n + 1);
                count = pm_vp_tree_build(vp, cap, perm, scratch, n, leaf, pm_vp_row_distance, &rows);
                assert_true(count >= 1 && count <= cap);
                if (count > 1) {
                    pmdb_vp_node guard = {0xdeadbeefu, 2.5f, 0xdeadbeefu, 0xdeadbeefu};
                    vp[count - 1] = guard;
                    assert_int_equal(pm_vp_tree_build(vp, count - 1, perm, scratch, n, leaf, pm_vp_row_distance, &rows),
                                     UINT32_MAX);
                    assert_memory_equal(&vp[count - 1], &guard, sizeof guard);
                }
            }
            free(packed);
        }
        /* Leaves of the database's sizes need far fewer than 2n + 1 nodes. */
        if (n >= 1000) {
            assert_true(pm_kd_tree_max_nodes(n, 16) <= n / 4);
            assert_true(pm_vp_tree_max_nodes(n, PM_VP_LEAF_SIZE) <= 2 * n / 7);
        }
        free(points);
        free(scratch);
        free(perm);
        free(kd);
        free(vp);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skewed_and_clustered),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_node_capacity),
        cmocka_unit_test(test_kd_vp_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

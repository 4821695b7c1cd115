/* The database scans, baseline build (SSE2 on x86-64, NEON on ARM): a leaf block's 8 lanes are
 * two 4-lane halves. */
#include "search_internal.h"

static inline unsigned block_keys(float keys[PM_BT_BLOCK], const float *block, const float *qz, int rows, float r2,
                                  const float *addend, float lim) {
    /* As the AVX2 build (src/search_kernels_avx2.c): pointer-stepped rows, the query lanes
     * broadcast from memory, even rows into the *0 sums and odd ones into the *1 sums. */
    const pm_v4f zero = {0, 0, 0, 0}, limv = zero + lim;
    pm_v4f lo0 = zero, lo1 = zero, hi0 = zero, hi1 = zero;
    const float *q = qz, *half = qz + PM_BT_EARLY_ROWS(rows), *pairs = qz + (rows & ~1);
    for (const float *stop = half;; stop = pairs) {
        for (; q < stop; q += 2, block += 2 * PM_BT_BLOCK) {
            pm_v4f q0 = {q[0], q[0], q[0], q[0]}, q1 = {q[1], q[1], q[1], q[1]};
            pm_v4f d0 = q0 - pm_v4_load(block), d1 = q0 - pm_v4_load(block + 4);
            pm_v4f d2 = q1 - pm_v4_load(block + 8), d3 = q1 - pm_v4_load(block + 12);
            lo0 += d0 * d0;
            hi0 += d1 * d1;
            lo1 += d2 * d2;
            hi1 += d3 * d3;
        }
        if (stop == pairs) break;
        /* Sums of squares only grow: a block already past the limit halfway stays past it. */
        pm_v4f klo = (lo0 + lo1) * r2 + pm_v4_load(addend), khi = (hi0 + hi1) * r2 + pm_v4_load(addend + 4);
        if (!(pm_v4_mask(klo <= limv) | pm_v4_mask(khi <= limv))) return 0;
    }
    if (rows & 1) {
        pm_v4f q0 = {q[0], q[0], q[0], q[0]};
        pm_v4f d0 = q0 - pm_v4_load(block), d1 = q0 - pm_v4_load(block + 4);
        lo0 += d0 * d0;
        hi0 += d1 * d1;
    }
    pm_v4f klo = (lo0 + lo1) * r2 + pm_v4_load(addend), khi = (hi0 + hi1) * r2 + pm_v4_load(addend + 4);
    memcpy(keys, &klo, sizeof klo);
    memcpy(keys + 4, &khi, sizeof khi);
    return pm_v4_mask(klo <= limv) | pm_v4_mask(khi <= limv) << 4;
}

#include "search_kernels.h"

void pm_search_exact_baseline(search_state *s, const float *qz, heap_item *heap) { exact_walk(s, qz, heap); }
void pm_search_bruteforce_baseline(search_state *s) { bruteforce_scan(s); }

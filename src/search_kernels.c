/* The database scans, baseline build (SSE2 on x86-64, NEON on ARM): a leaf block's 8 lanes are
 * two 4-lane halves. */
#include "search_internal.h"

static inline unsigned block_keys(float keys[PM_BT_BLOCK], const float *block, const float *qz, int rows, float r2,
                                  const float *addend, float lim) {
    const pm_v4f zero = {0, 0, 0, 0};
    pm_v4f lo0 = zero, lo1 = zero, hi0 = zero, hi1 = zero;
    int c = 0;
    for (int stop = PM_BT_EARLY_ROWS(rows);; stop = rows) {
        for (; c + 2 <= stop; c += 2, block += 2 * PM_BT_BLOCK) {
            pm_v4f q0 = zero + qz[c], q1 = zero + qz[c + 1];
            pm_v4f d0 = q0 - pm_v4_load(block), d1 = q0 - pm_v4_load(block + 4);
            pm_v4f d2 = q1 - pm_v4_load(block + 8), d3 = q1 - pm_v4_load(block + 12);
            lo0 += d0 * d0;
            hi0 += d1 * d1;
            lo1 += d2 * d2;
            hi1 += d3 * d3;
        }
        if (stop == rows) break;
        /* Sums of squares only grow: a block already past the limit halfway stays past it. */
        pm_v4f limv = zero + lim;
        pm_v4f klo = (lo0 + lo1) * r2 + pm_v4_load(addend), khi = (hi0 + hi1) * r2 + pm_v4_load(addend + 4);
        if (!(pm_v4_mask(klo <= limv) | pm_v4_mask(khi <= limv))) return 0;
    }
    if (c < rows) {
        pm_v4f q0 = zero + qz[c];
        pm_v4f d0 = q0 - pm_v4_load(block), d1 = q0 - pm_v4_load(block + 4);
        lo0 += d0 * d0;
        hi0 += d1 * d1;
    }
    pm_v4f klo = (lo0 + lo1) * r2 + pm_v4_load(addend), khi = (hi0 + hi1) * r2 + pm_v4_load(addend + 4);
    memcpy(keys, &klo, sizeof klo);
    memcpy(keys + 4, &khi, sizeof khi);
    pm_v4f limv = zero + lim;
    return pm_v4_mask(klo <= limv) | pm_v4_mask(khi <= limv) << 4;
}

#include "search_kernels.h"

void pm_search_exact_baseline(search_state *s, const float *qz, heap_item *heap) { exact_walk(s, qz, heap); }
void pm_search_bruteforce_baseline(search_state *s) { bruteforce_scan(s); }

/* The database scans, AVX2 build (no FMA): a leaf block's 8 lanes are one register, and the
 * exact costs use the AVX2 form of the shared cost kernel. Picked at run time by src/search.c;
 * its bounds and costs are the baseline build's bits (see src/search_kernels.h). */
#include "search_internal.h"

#if defined(PM_HAVE_AVX2_KERNELS)
#include <immintrin.h>

PM_AVX2_BEGIN

static inline unsigned block_keys(float keys[PM_BT_BLOCK], const float *block, const float *qz, int rows, float r2,
                                  const float *addend, float lim) {
    const pm_v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
    pm_v8f a0 = zero, a1 = zero;
    int c = 0;
    for (int stop = PM_BT_EARLY_ROWS(rows);; stop = rows) {
        for (; c + 2 <= stop; c += 2, block += 2 * PM_BT_BLOCK) {
            pm_v8f d0 = (zero + qz[c]) - pm_v8_load(block), d1 = (zero + qz[c + 1]) - pm_v8_load(block + PM_BT_BLOCK);
            a0 += d0 * d0;
            a1 += d1 * d1;
        }
        if (stop == rows) break;
        /* Sums of squares only grow: a block already past the limit halfway stays past it. */
        pm_v8f k = (a0 + a1) * r2 + pm_v8_load(addend);
        if (!_mm256_movemask_ps((__m256)(k <= zero + lim))) return 0;
    }
    if (c < rows) {
        pm_v8f d0 = (zero + qz[c]) - pm_v8_load(block);
        a0 += d0 * d0;
    }
    pm_v8f k = (a0 + a1) * r2 + pm_v8_load(addend);
    memcpy(keys, &k, sizeof k);
    return (unsigned)_mm256_movemask_ps((__m256)(k <= zero + lim));
}

#include "search_kernels.h"

void pm_search_exact_avx2(search_state *s, const float *qz, heap_item *heap) { exact_walk(s, qz, heap); }
void pm_search_bruteforce_avx2(search_state *s) { bruteforce_scan(s); }

PM_AVX2_END

#else
typedef int pm_search_kernels_avx2_unused; /* ISO C: a translation unit must declare something */
#endif

/* The database scans, AVX2 build (no FMA): a leaf block's 8 lanes are one register, and the
 * exact costs use the AVX2 form of the shared cost kernel. Picked at run time by src/search.c;
 * its bounds and costs are the baseline build's bits (see src/search_kernels.h). */
#include "search_internal.h"

#if defined(PM_HAVE_AVX2_KERNELS)
#include <immintrin.h> /* before the target region: the intrinsics carry their own targets */

PM_AVX2_BEGIN

#include "search_block_keys_x86.h"

#include "search_kernels.h"

void pm_search_exact_avx2(search_state *s, const float *qz, heap_item *heap) { exact_walk(s, qz, heap); }
void pm_search_bruteforce_avx2(search_state *s) { bruteforce_scan(s); }

PM_AVX2_END

#else
typedef int pm_search_kernels_avx2_unused; /* ISO C: a translation unit must declare something */
#endif

/* Deterministic partial ordering of index arrays (no reliance on qsort's instability). */
#ifndef PM_SELECT_H
#define PM_SELECT_H

#include <stdint.h>

/* Reorders idx[0..n) so that idx[k] holds the element of rank k under the total order
 * (key[idx], idx), everything before it ranks lower and everything after ranks higher.
 * key is indexed by the values stored in idx. */
void pm_select_by_key(uint32_t *idx, uint32_t n, uint32_t k, const float *key, uint32_t key_stride);

#endif

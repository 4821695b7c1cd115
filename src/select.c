#include "select.h"

static inline int less(const float *key, uint32_t stride, uint32_t a, uint32_t b) {
    float ka = key[(uint64_t)a * stride], kb = key[(uint64_t)b * stride];
    return ka < kb || (ka == kb && a < b);
}

static inline void swap_u32(uint32_t *a, uint32_t *b) {
    uint32_t t = *a;
    *a = *b;
    *b = t;
}

void pm_select_by_key(uint32_t *idx, uint32_t n, uint32_t k, const float *key, uint32_t stride) {
    uint32_t lo = 0, hi = n; /* the k-th element lies in [lo, hi) */
    while (hi - lo > 1) {
        /* Median of three as pivot, moved to hi - 1; Lomuto partition on the strict order. */
        uint32_t mid = lo + (hi - lo) / 2, last = hi - 1;
        if (less(key, stride, idx[mid], idx[lo])) swap_u32(&idx[mid], &idx[lo]);
        if (less(key, stride, idx[last], idx[lo])) swap_u32(&idx[last], &idx[lo]);
        if (less(key, stride, idx[mid], idx[last])) swap_u32(&idx[mid], &idx[last]);
        uint32_t pivot = idx[last];
        uint32_t store = lo;
        for (uint32_t i = lo; i < last; i++)
            if (less(key, stride, idx[i], pivot)) swap_u32(&idx[i], &idx[store++]);
        swap_u32(&idx[store], &idx[last]);
        if (store == k) return;
        if (k < store) hi = store;
        else lo = store + 1;
    }
}

/* Database images on transparent huge pages. A loaded database is tens of megabytes that every
 * search visits in no particular order (tree nodes, leaf points, rows): on 4 KB pages most of
 * those visits also miss the TLB. Linux gives 2 MB pages to memory that asks for them
 * (transparent_hugepage "madvise", a common default), so an image from the C library allocator
 * is placed on a 2 MB boundary and advised before anything touches it. Only images: the
 * builder's large working arrays, advised the same way, built more slowly (the first touch of
 * each huge page waits for the kernel to find and clear 2 MB). Advice only: where the system has
 * no such pages or declines, nothing changes. */
#define _DEFAULT_SOURCE /* madvise and MADV_HUGEPAGE (Linux) */
#include "core.h"

#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((size_t)2 << 20)

void *pm_alloc_image(const pm_allocator *allocator, size_t size, size_t alignment) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* From two huge pages up: below that the 2 MB boundary could cost more than it saves. */
    if (!pm_allocator_or(allocator, NULL) && size >= 2 * HUGE_PAGE && alignment <= HUGE_PAGE) {
        uint8_t *p = (uint8_t *)pm_alloc(NULL, size, HUGE_PAGE);
        if (p) (void)madvise(p, size / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE);
        return p;
    }
#endif
    return pm_alloc(allocator, size, alignment);
}

/* Large blocks on transparent huge pages. A loaded database is tens of megabytes that every
 * search visits in no particular order (tree nodes, leaf points, rows): on 4 KB pages most of
 * those visits also miss the TLB. A build writes a few hundred megabytes of fresh working arrays
 * and image once each: on 4 KB pages that is one page fault per 4 KB, and in a virtual machine a
 * fault is dear (about a fifth of a 230,000-pose build's time went to them on an AMD EPYC
 * guest). Linux gives 2 MB pages to memory that asks for them (transparent_hugepage "madvise", a
 * common default), so a large block from the C library allocator is placed on a 2 MB boundary
 * and advised before anything touches it. Advice only: where the system has no such pages or
 * declines, nothing changes. */
#define _DEFAULT_SOURCE /* madvise and MADV_HUGEPAGE (Linux) */
#include "core.h"

#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((size_t)2 << 20)

void *pm_alloc_large(const pm_allocator *allocator, size_t size, size_t alignment) {
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

void *pm_alloc_large_array(const pm_allocator *allocator, size_t count, size_t elem_size, size_t alignment) {
    if (elem_size != 0 && count > SIZE_MAX / elem_size) return NULL;
    void *p = pm_alloc_large(allocator, count * elem_size, alignment);
    /* Zeroed as pm_alloc_array's blocks: padding that reaches a file must not be whatever the
     * memory held (the same inputs give the same bytes). */
    if (p) memset(p, 0, count * elem_size);
    return p;
}

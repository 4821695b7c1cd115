/* The pose jobs' kernels, baseline build (SSE2 on x86-64, NEON on ARM), and the pick between the
 * builds. */
#define PM_POSE_KERNELS_NAME pm_pose_kernels_baseline
#include "blend_kernels.h"

const pm_pose_kernels *pm_pose_kernels_pick(int kernel) {
#if defined(PM_POSE_KERNELS_HAVE_AVX2)
    if (kernel != PM_KERNEL_BASELINE && pm_cpu_has_avx2()) return &pm_pose_kernels_avx2;
#else
    (void)kernel;
#endif
    return &pm_pose_kernels_baseline;
}

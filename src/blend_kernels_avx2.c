/* The pose jobs' kernels, AVX2 build (no FMA: the baseline build's bits), picked at run time by
 * pm_pose_kernels_pick on CPUs that have AVX2. */
#include "blend_internal.h"

#if defined(PM_POSE_KERNELS_HAVE_AVX2)
PM_AVX2_BEGIN
#define PM_POSE_KERNELS_NAME pm_pose_kernels_avx2
#include "blend_kernels.h"
PM_AVX2_END
#endif

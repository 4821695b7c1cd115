// Compiles every public header as C++ (with -Wall -Wextra -pedantic); nothing runs.
#include "posematch/posematch.h"

int pm_cxx_header_check_symbol();
int pm_cxx_header_check_symbol() {
    pm_quat q = pm_quat_mul(pm_quat_identity(), pm_quat_identity());
    return q.w > 0.5f ? 0 : 1;
}

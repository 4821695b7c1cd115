/* Commands not written yet; each file tools/cmd_<name>.c replaces its stub here. */
#include "cli_common.h"
#include "commands.h"

#define PM_STUB(fn, name) \
    int fn(int argc, char **argv) { (void)argc; (void)argv; return pm_cli_fail("%s: not implemented yet", name); }
PM_STUB(pm_cmd_inspect, "inspect")
PM_STUB(pm_cmd_build, "build")
PM_STUB(pm_cmd_info, "info")
PM_STUB(pm_cmd_search, "search")
PM_STUB(pm_cmd_export_features, "export-features")
PM_STUB(pm_cmd_bench, "bench")
PM_STUB(pm_cmd_blend, "blend")

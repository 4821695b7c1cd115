/* Commands not written yet; each file tools/cmd_<name>.c replaces its stub here. */
#include "cli_common.h"
#include "commands.h"

#define PM_STUB(fn, name) \
    int fn(int argc, char **argv) { (void)argc; (void)argv; return pm_cli_fail("%s: not implemented yet", name); }

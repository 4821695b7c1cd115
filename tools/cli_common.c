#include "cli_common.h"

#include <stdarg.h>

int pm_cli_fail(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fputs("posematch: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    return 1;
}

int pm_cli_fail_error(const pm_error *error) { return pm_cli_fail("%s", error->message); }

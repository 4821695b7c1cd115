/* Helpers shared by the posematch command-line tools. */
#ifndef PM_CLI_COMMON_H
#define PM_CLI_COMMON_H

#include <stdio.h>

#include "posematch/posematch.h"

#define PM_CLI_MIN(a, b) ((a) < (b) ? (a) : (b))

/* Prints "posematch: <message>" on one stderr line and returns 1 (the exit code). */
int pm_cli_fail(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Same for a library error. */
int pm_cli_fail_error(const pm_error *error);

#endif

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

/* The number in an option's argument: 1 on success, else prints
 * "posematch: COMMAND: OPTION 'TEXT' must be ..." and returns 0. `integer` requires a whole
 * number. */
int pm_cli_number(double *out, const char *command, const char *option, const char *text, double lo, double hi,
                  int integer);

/* The BVH reading options every command that reads clips takes (--unit-scale M, --up y|z).
 * argv[*i] is the option; returns 1 when it was one of them (consuming its argument), 0 when
 * not, -1 after printing an error. */
int pm_cli_bvh_option(pm_bvh_def *def, const char *command, int argc, char **argv, int *i);

#endif

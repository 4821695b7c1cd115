/* Helpers shared by the posematch command-line tools. */
#ifndef PM_CLI_COMMON_H
#define PM_CLI_COMMON_H

#include <stdio.h>

#include "posematch/posematch.h"

#define PM_CLI_MIN(a, b) ((a) < (b) ? (a) : (b))

/* Whether option argv[i] has a value after it: an argument that exists and is no long option (a
 * value starting with "--" is taken for a forgotten value, so that "-o --quiet" is an incomplete
 * option rather than a file named "--quiet"; "-1" stays a value, and an empty value is the
 * option's own error to report). */
int pm_cli_has_value(int argc, char **argv, int i);

/* Prints "posematch: <message>" on one stderr line and returns 1 (the exit code). */
int pm_cli_fail(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Same for a library error. */
int pm_cli_fail_error(const pm_error *error);

/* Queues "posematch: <message>" (one line, as pm_cli_fail's) for pm_cli_warnings_end: a warning
 * printed as it arose would make a second stderr line when the command then fails. */
void pm_cli_warn(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Prints the queued warnings on stderr when `print` (the command succeeded), else drops them;
 * empties the queue either way. */
void pm_cli_warnings_end(int print);

/* The key each schema channel of db goes under in JSON (search's breakdown, export-features'
 * channels): its name, with " #2", " #3"... when an earlier channel's key is the same. Groups hold
 * no values (no breakdown entry): they keep their plain name and take no key from the others.
 * Returns channel_count keys (malloc'd: free), or NULL with *error filled. */
#define PM_CLI_CHANNEL_KEY 160
typedef char pm_cli_channel_key[PM_CLI_CHANNEL_KEY];
pm_cli_channel_key *pm_cli_channel_keys(const pm_database *db, pm_error *error);

/* Fills *error (when not NULL) with code and the formatted message; returns code. */
pm_result pm_cli_set_error(pm_error *error, pm_result code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The 1-based line of `at` in text (cJSON_GetErrorPtr() after a failed parse; NULL = line 1). */
int pm_cli_text_line(const char *text, const char *at);

/* Rounds to `digits` significant digits for printing: float fields such as 0.0333333f would
 * otherwise print as 0.0333332997560501. */
double pm_cli_round_sig(double v, int digits);

/* End of a plain decimal number at p ([+-]digits[.digits][e[+-]digits]), or NULL when there is
 * none. */
const char *pm_cli_scan_decimal(const char *p);

/* The number in an option's argument, written in decimal: 1 on success, else prints
 * "posematch: COMMAND: OPTION 'TEXT' must be ..." and returns 0. `integer` requires a whole
 * number. */
int pm_cli_number(double *out, const char *command, const char *option, const char *text, double lo, double hi,
                  int integer);
/* The same into an int (a whole number) or a float; *out is left alone on failure. */
int pm_cli_int(int *out, const char *command, const char *option, const char *text, double lo, double hi);
int pm_cli_float(float *out, const char *command, const char *option, const char *text, double lo, double hi);

/* The names of the modes in a PM_SEARCH_MODE_BIT set, in enum order: "exact, bruteforce" with
 * last_separator ", ", "exact or bruteforce" with " or ". */
typedef struct pm_cli_text {
    char text[64];
} pm_cli_text;
pm_cli_text pm_cli_mode_list(unsigned modes, const char *last_separator);

/* The single-value options a command was given so far (zero-initialise one per parse). Taking
 * the last of two values silently would hide a mistake in a script, so a second one is refused. */
#define PM_CLI_SEEN_MAX 32
typedef struct pm_cli_seen {
    const char *option[PM_CLI_SEEN_MAX];
    const char *value[PM_CLI_SEEN_MAX];
    int count;
} pm_cli_seen;

/* Records single-value option `option` (as typed; -o and --output count as one, so do -q and
 * --quiet) with its argument `value`: 1 the first time, else prints "posematch: COMMAND: OPTION
 * given twice ('A' and 'B')" and returns 0. A flag is recorded with `value` NULL, and its second
 * time reads "COMMAND: FLAG given twice". */
int pm_cli_once(pm_cli_seen *seen, const char *command, const char *option, const char *value);
/* pm_cli_once for option argv[i] when it is one of `options` (NULL-terminated) and has a value
 * after it; 1 otherwise. Called first thing for each argument, before the option is taken. */
int pm_cli_once_listed(pm_cli_seen *seen, const char *command, const char *const *options, int argc, char **argv,
                       int i);
/* pm_cli_once for argv[i] == `arg` when it is one of the `flags` (options without a value,
 * NULL-terminated); 1 otherwise. A flag given twice is refused like a value given twice: in a
 * script it is most often a copy-paste that dropped or meant another option. */
int pm_cli_flag_once(pm_cli_seen *seen, const char *command, const char *const *flags, const char *arg);
/* Whether single-value option `option` was recorded in `seen`. */
int pm_cli_seen_has(const pm_cli_seen *seen, const char *option);

/* The BVH reading options every command that reads clips takes (--unit-scale M, --up y|z), each
 * at most once (recorded in `seen`). argv[*i] is the option; returns 1 when it was one of them
 * (consuming its argument), 0 when not, -1 after printing an error. */
int pm_cli_bvh_option(pm_bvh_def *def, pm_cli_seen *seen, const char *command, int argc, char **argv, int *i);
/* Whether --unit-scale or --up set anything in `def` (else every clip is read as detected). */
int pm_cli_bvh_forced(const pm_bvh_def *def);

/* A clip whose hips stand where no person's do (outside 0.3..3 m above its feet): units or an up
 * axis read otherwise than the clip's, which a database built from clips read right would match
 * to nonsense. 1 with the height in *out_height; 0 for a plausible clip or one without hips. */
int pm_cli_clip_scale_odd(const pm_clip *clip, float *out_height);
/* Warns on stderr when pm_cli_clip_scale_odd finds the clip at `path` so. */
void pm_cli_warn_clip_scale(const pm_clip *clip, const char *command, const char *path);

/* An asset as JSON: name, first_pose, poses, looping, mirrored (what info and export-features
 * both list; info adds more). */
struct cJSON;
struct cJSON *pm_cli_asset_json(const pm_asset_info *asset);
/* Why pm_cli_json_parse refused a text, and at which line. */
enum {
    PM_CLI_JSON_MALFORMED,  /* cJSON could not read it (cJSON_GetErrorPtr() says where) */
    PM_CLI_JSON_TRAILING,   /* more than blanks after the value: a file's tail is not ignored */
    PM_CLI_JSON_NUL_ESCAPE, /* a \u0000 escape in a string, where cJSON would cut it short */
    PM_CLI_JSON_TOO_DEEP,   /* arrays and objects nested past cJSON's limit */
    PM_CLI_JSON_NUMBER      /* a number cJSON reads but JSON does not allow ("01", "1.") */
};
typedef struct pm_cli_json_problem {
    int why, line;
    char number[32]; /* PM_CLI_JSON_NUMBER: the number as written (cut at 24 characters) */
} pm_cli_json_problem;
/* Parses one JSON document, strictly: NULL with *problem filled when it is not JSON as RFC 8259
 * writes it or when cJSON would read it otherwise than written. */
struct cJSON *pm_cli_json_parse(const char *text, pm_cli_json_problem *problem);
/* The problem in words, without file or line, for every kind but PM_CLI_JSON_MALFORMED (there
 * "not valid JSON": callers say more with cJSON_GetErrorPtr()). Returns buf. */
const char *pm_cli_json_problem_text(char *buf, size_t cap, const pm_cli_json_problem *problem);

/* A JSON document as text (formatted or on one line), malloc'd (free()), NULL when out of
 * memory. Names copied from files may hold bytes that are not UTF-8, which cJSON copies as they
 * are: each such byte becomes \ufffd, so the output is always valid JSON. */
char *pm_cli_json_print(const struct cJSON *json, int formatted);
/* Prints a document with pm_cli_json_print and a newline; 1 after printing an error. */
int pm_cli_json_puts(const struct cJSON *json);

/* Offset of the first control character (below 0x20, or DEL) in a name read from a file, or -1:
 * the library refuses such names, and a file's loader names the field first. */
long pm_cli_control_char(const char *text);
/* Replaces control characters in a name made from a file name with '_', as the BVH reader does
 * for clip names: a name is quoted in one-line messages and listings. */
void pm_cli_clean_name(char *name);

#endif

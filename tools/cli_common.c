#include "cli_common.h"

#include <cjson/cJSON.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* `text` with its control characters as escapes (\n, \r, \x1b, ...; a tab stays a tab) into out
 * (cap bytes, always NUL-terminated, cut when short); returns the length the whole needs. File
 * names and option values are quoted into messages, and a newline in one would break the
 * message's single line in two. */
static size_t escape_controls(char *out, size_t cap, const char *text) {
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        char e[8];
        if (*c == '\n') snprintf(e, sizeof e, "\\n");
        else if (*c == '\r') snprintf(e, sizeof e, "\\r");
        else if ((*c < 0x20 && *c != '\t') || *c == 0x7f) snprintf(e, sizeof e, "\\x%02x", *c);
        else e[0] = (char)*c, e[1] = '\0';
        for (const char *k = e; *k; k++, n++)
            if (n + 1 < cap) out[n] = *k;
    }
    if (cap) out[n < cap ? n : cap - 1] = '\0';
    return n;
}

/* "posematch: <text>" as one stderr write, control characters escaped. Long texts (two long paths
 * quoted) are whole when memory allows, else cut. */
static void put_line(const char *text) {
    char line[4096], *big = NULL;
    size_t n = escape_controls(line, sizeof line, text);
    if (n >= sizeof line && (big = malloc(n + 1)) != NULL) escape_controls(big, n + 1, text);
    fprintf(stderr, "posematch: %s\n", big ? big : line);
    free(big);
}

int pm_cli_fail(const char *format, ...) {
    char text[4096], *big = NULL;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(text, sizeof text, format, args);
    va_end(args);
    if (n >= (int)sizeof text && (big = malloc((size_t)n + 1)) != NULL) {
        va_start(args, format);
        vsnprintf(big, (size_t)n + 1, format, args);
        va_end(args);
    }
    put_line(big ? big : text);
    free(big);
    return 1;
}

/* The warnings queue: a fixed buffer, so that queueing needs no memory (the CLI also warns after
 * allocations failed); what does not fit is counted. */
static struct {
    char text[16384];
    size_t used;
    int dropped;
} warnings;

void pm_cli_warn(const char *format, ...) {
    char text[2048], line[4096];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    size_t n = escape_controls(line, sizeof line, text);
    if (n >= sizeof line) n = sizeof line - 1;
    if (warnings.used + strlen("posematch: ") + n + 1 >= sizeof warnings.text) { /* + line + "\n" */
        warnings.dropped++;
        return;
    }
    warnings.used += (size_t)snprintf(warnings.text + warnings.used, sizeof warnings.text - warnings.used,
                                      "posematch: %s\n", line);
}

void pm_cli_warnings_end(int print) {
    if (print && warnings.used) fputs(warnings.text, stderr);
    if (print && warnings.dropped) fprintf(stderr, "posematch: ... and %d more warning(s)\n", warnings.dropped);
    warnings.used = 0;
    warnings.text[0] = '\0';
    warnings.dropped = 0;
}

pm_cli_channel_key *pm_cli_channel_keys(const pm_database *db, pm_error *error) {
    const pm_schema *schema = pm_database_schema(db);
    int n = schema ? schema->channel_count : 0;
    pm_cli_channel_key *keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
    if (!keys) {
        pm_cli_set_error(error, PM_ERR_OUT_OF_MEMORY, "out of memory for %d channel names", n);
        return NULL;
    }
    for (int c = 0; c < n; c++) {
        char name[128];
        if (pm_database_channel_name(name, sizeof name, db, c, error) != PM_OK) {
            free(keys);
            return NULL;
        }
        snprintf(keys[c], sizeof keys[c], "%s", name);
        if (schema->channels[c].kind == PM_FEATURE_GROUP) continue;
        for (int k = 2;; k++) {
            int taken = 0;
            for (int e = 0; e < c && !taken; e++)
                taken = schema->channels[e].kind != PM_FEATURE_GROUP && strcmp(keys[e], keys[c]) == 0;
            if (!taken) break;
            snprintf(keys[c], sizeof keys[c], "%s #%d", name, k);
        }
    }
    return keys;
}

int pm_cli_has_value(int argc, char **argv, int i) {
    return i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0;
}

int pm_cli_fail_error(const pm_error *error) { return pm_cli_fail("%s", error->message); }

pm_result pm_cli_set_error(pm_error *error, pm_result code, const char *format, ...) {
    if (error) {
        va_list args, again;
        va_start(args, format);
        va_copy(again, args);
        error->code = code;
        int n = vsnprintf(error->message, sizeof error->message, format, args);
        /* Too long for pm_error (a long path, or a file name before a library message that
         * already fills it): its start and end around "...", as the library's pm_fail keeps
         * them, so that the problem at the end is not what is cut. */
        char *full = n >= (int)sizeof error->message ? malloc((size_t)n + 1) : NULL;
        if (full) {
            vsnprintf(full, (size_t)n + 1, format, again);
            size_t head = 160, tail = sizeof error->message - 1 - head - 3;
            while (head > 0 && ((unsigned char)full[head] & 0xC0) == 0x80) head--;
            const char *end = full + n - tail;
            while (((unsigned char)*end & 0xC0) == 0x80) end++, tail--;
            snprintf(error->message, sizeof error->message, "%.*s...%s", (int)head, full, end);
            free(full);
        }
        va_end(again);
        va_end(args);
    }
    return code;
}

/* What cJSON reads differently from JSON, found by one pass over the text: the first \u0000
 * escape inside a string (cJSON ends the string there, silently: a name "x\u0000y" read as "x"),
 * the first bracket past cJSON's nesting limit (cJSON only says it stopped there) and the first
 * number JSON does not allow but cJSON reads (a leading zero, "01"; a '.' with no digit after it,
 * "1." - most likely a typo, not the number meant). */
typedef struct json_scan {
    const char *nul_escape, *too_deep, *bad_number, *bad_number_end;
} json_scan;

static const char *digits_end(const char *p, const char *end) {
    while (p < end && isdigit((unsigned char)*p)) p++;
    return p;
}

/* Whether text[p, end) is a number in JSON's form: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int json_number_form(const char *p, const char *end) {
    if (p < end && *p == '-') p++;
    if (p == end || !isdigit((unsigned char)*p)) return 0;
    p = *p == '0' ? p + 1 : digits_end(p, end);
    if (p < end && *p == '.') {
        if (++p == end || !isdigit((unsigned char)*p)) return 0;
        p = digits_end(p, end);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        if (++p < end && (*p == '+' || *p == '-')) p++;
        if (p == end || !isdigit((unsigned char)*p)) return 0;
        p = digits_end(p, end);
    }
    return p == end;
}

static void json_scan_text(json_scan *out, const char *text) {
    memset(out, 0, sizeof *out);
    int in_string = 0;
    long long depth = 0; /* (a text of 2^31 brackets must not overflow it) */
    for (const char *c = text; *c; c++) {
        if (in_string) {
            if (*c == '"') in_string = 0;
            else if (*c == '\\') {
                if (!out->nul_escape && c[1] == 'u' && c[2] == '0' && c[3] == '0' && c[4] == '0' && c[5] == '0')
                    out->nul_escape = c;
                if (c[1]) c++; /* the escaped character: \" does not end the string */
            }
        } else if (*c == '"') in_string = 1;
        else if (*c == '[' || *c == '{') {
            if (++depth > CJSON_NESTING_LIMIT && !out->too_deep) out->too_deep = c;
        } else if (*c == ']' || *c == '}') depth--;
        else if (isdigit((unsigned char)*c) || *c == '-') {
            /* cJSON's number: the longest run of these characters. */
            const char *e = c + strspn(c, "0123456789+-.eE");
            if (!out->bad_number && !json_number_form(c, e)) out->bad_number = c, out->bad_number_end = e;
            c = e - 1;
        }
    }
}

static cJSON *json_problem(pm_cli_json_problem *problem, int why, const char *text, const char *at) {
    problem->why = why;
    problem->line = pm_cli_text_line(text, at);
    return NULL;
}

cJSON *pm_cli_json_parse(const char *text, pm_cli_json_problem *problem) {
    memset(problem, 0, sizeof *problem);
    json_scan scan;
    json_scan_text(&scan, text);
    if (scan.nul_escape) return json_problem(problem, PM_CLI_JSON_NUL_ESCAPE, text, scan.nul_escape);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        /* Too deep when cJSON stopped at (or after) the bracket past its limit, not at an error
         * before it. */
        if (scan.too_deep && at && at >= scan.too_deep)
            return json_problem(problem, PM_CLI_JSON_TOO_DEEP, text, scan.too_deep);
        return json_problem(problem, PM_CLI_JSON_MALFORMED, text, at);
    }
    if (end) {
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
        if (*end) {
            cJSON_Delete(root);
            return json_problem(problem, PM_CLI_JSON_TRAILING, text, end);
        }
    }
    if (scan.bad_number) {
        cJSON_Delete(root);
        int n = (int)(scan.bad_number_end - scan.bad_number);
        snprintf(problem->number, sizeof problem->number, "%.*s%s", n < 24 ? n : 24, scan.bad_number,
                 n < 24 ? "" : "...");
        return json_problem(problem, PM_CLI_JSON_NUMBER, text, scan.bad_number);
    }
    return root;
}

const char *pm_cli_json_problem_text(char *buf, size_t cap, const pm_cli_json_problem *problem) {
    switch (problem->why) {
    case PM_CLI_JSON_TRAILING: snprintf(buf, cap, "text after the top-level JSON value"); break;
    case PM_CLI_JSON_NUL_ESCAPE:
        snprintf(buf, cap, "a \\u0000 escape in a JSON string (names and paths cannot hold NUL)");
        break;
    case PM_CLI_JSON_TOO_DEEP: snprintf(buf, cap, "JSON nested deeper than %d levels", CJSON_NESTING_LIMIT); break;
    case PM_CLI_JSON_NUMBER:
        snprintf(buf, cap, "'%s' is not a JSON number (no leading zeros; digits after a '.')", problem->number);
        break;
    default: snprintf(buf, cap, "not valid JSON"); break;
    }
    return buf;
}

int pm_cli_text_line(const char *text, const char *at) {
    int line = 1;
    for (const char *c = text; at && c < at && *c; c++) line += *c == '\n';
    return line;
}

double pm_cli_round_sig(double v, int digits) {
    char text[64];
    snprintf(text, sizeof text, "%.*g", digits, v);
    return strtod(text, NULL);
}

/* A range bound as written: whole numbers in full (2147483647, not %g's 2.14748e+09). */
static const char *bound_text(char *buf, size_t cap, double v) {
    if (v == floor(v) && fabs(v) < 1e15) snprintf(buf, cap, "%.0f", v);
    else snprintf(buf, cap, "%g", v);
    return buf;
}

const char *pm_cli_scan_decimal(const char *p) {
    int digits = 0;
    if (*p == '+' || *p == '-') p++;
    for (; isdigit((unsigned char)*p); p++) digits++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++) digits++;
    if (!digits) return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p)) p++;
    }
    return p;
}

int pm_cli_number(double *out, const char *command, const char *option, const char *text, double lo, double hi,
                  int integer) {
    char *end = NULL;
    errno = 0;
    /* Decimal only: strtod alone would read "0x10" as 16 and take "inf", "nan" and leading blanks. */
    const char *stop = pm_cli_scan_decimal(text);
    double v = stop ? strtod(text, &end) : 0.0;
    if (!stop || *stop || end != stop || errno || !isfinite(v) || v < lo || v > hi || (integer && v != floor(v))) {
        char lo_text[32], hi_text[32];
        pm_cli_fail("%s: %s '%s' must be %s in %s..%s", command, option, text,
                    integer ? "a decimal integer" : "a decimal number", bound_text(lo_text, sizeof lo_text, lo),
                    bound_text(hi_text, sizeof hi_text, hi));
        return 0;
    }
    *out = v;
    return 1;
}

int pm_cli_int(int *out, const char *command, const char *option, const char *text, double lo, double hi) {
    double v;
    if (!pm_cli_number(&v, command, option, text, lo, hi, 1)) return 0;
    *out = (int)v;
    return 1;
}

int pm_cli_float(float *out, const char *command, const char *option, const char *text, double lo, double hi) {
    double v;
    if (!pm_cli_number(&v, command, option, text, lo, hi, 0)) return 0;
    *out = (float)v;
    return 1;
}

/* -o and --output are one option: "-o a --output b" is the same mistake as "-o a -o b". */
static const char *option_key(const char *option) {
    if (!strcmp(option, "--output")) return "-o";
    if (!strcmp(option, "--quiet")) return "-q";
    return option;
}

int pm_cli_once(pm_cli_seen *seen, const char *command, const char *option, const char *value) {
    const char *key = option_key(option);
    for (int k = 0; k < seen->count; k++)
        if (!strcmp(seen->option[k], key)) {
            if (value) pm_cli_fail("%s: %s given twice ('%s' and '%s')", command, option, seen->value[k], value);
            else pm_cli_fail("%s: %s given twice", command, option);
            return 0;
        }
    /* A command has fewer single-value options than slots; were one added past them, it would go
     * unchecked rather than refused. */
    if (seen->count < PM_CLI_SEEN_MAX) {
        seen->option[seen->count] = key;
        seen->value[seen->count++] = value;
    }
    return 1;
}

int pm_cli_once_listed(pm_cli_seen *seen, const char *command, const char *const *options, int argc, char **argv,
                       int i) {
    if (!pm_cli_has_value(argc, argv, i)) return 1;
    for (int k = 0; options[k]; k++)
        if (!strcmp(argv[i], options[k])) return pm_cli_once(seen, command, argv[i], argv[i + 1]);
    return 1;
}

int pm_cli_flag_once(pm_cli_seen *seen, const char *command, const char *const *flags, const char *arg) {
    for (int k = 0; flags[k]; k++)
        if (!strcmp(arg, flags[k])) return pm_cli_once(seen, command, arg, NULL);
    return 1;
}

int pm_cli_seen_has(const pm_cli_seen *seen, const char *option) {
    for (int k = 0; k < seen->count; k++)
        if (!strcmp(seen->option[k], option)) return 1;
    return 0;
}

int pm_cli_bvh_forced(const pm_bvh_def *def) { return def->unit_scale != 0.0f || def->up_axis >= 0; }

int pm_cli_clip_scale_odd(const pm_clip *clip, float *out_height) {
    pm_clip_survey survey;
    if (pm_clip_survey_compute(&survey, clip, NULL) != PM_OK || !(survey.hip_height > 0.0f)) return 0;
    *out_height = survey.hip_height;
    return survey.hip_height < 0.3f || survey.hip_height > 3.0f;
}

void pm_cli_warn_clip_scale(const pm_clip *clip, const char *command, const char *path) {
    float height;
    if (!pm_cli_clip_scale_odd(clip, &height)) return;
    pm_cli_warn("%s: warning: %s: the hips stand %.3g m above the feet (read at %g m per file unit, %s up), "
                "a person's about 0.9 m: check --unit-scale and --up",
                command, path, (double)height, (double)clip->unit_scale, clip->source_up == PM_UP_Z ? "Z" : "Y");
}

int pm_cli_bvh_option(pm_bvh_def *def, pm_cli_seen *seen, const char *command, int argc, char **argv, int *i) {
    const char *s = argv[*i];
    if (!pm_cli_has_value(argc, argv, *i)) return 0;
    if ((!strcmp(s, "--unit-scale") || !strcmp(s, "--up")) && !pm_cli_once(seen, command, s, argv[*i + 1])) return -1;
    if (!strcmp(s, "--unit-scale")) return pm_cli_float(&def->unit_scale, command, s, argv[++*i], 1e-6, 1e6) ? 1 : -1;
    if (!strcmp(s, "--up")) {
        const char *u = argv[++*i];
        if (!strcmp(u, "y") || !strcmp(u, "Y")) def->up_axis = PM_UP_Y;
        else if (!strcmp(u, "z") || !strcmp(u, "Z")) def->up_axis = PM_UP_Z;
        else {
            pm_cli_fail("%s: --up '%s' must be y or z", command, u);
            return -1;
        }
        return 1;
    }
    return 0;
}

cJSON *pm_cli_asset_json(const pm_asset_info *a) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", a->name);
    cJSON_AddNumberToObject(x, "first_pose", a->first_pose);
    cJSON_AddNumberToObject(x, "poses", a->pose_count);
    cJSON_AddBoolToObject(x, "looping", a->looping);
    cJSON_AddBoolToObject(x, "mirrored", a->mirrored);
    return x;
}

static int is_control(char c) { return (unsigned char)c < 0x20 || c == 0x7f; }

long pm_cli_control_char(const char *text) {
    for (const char *c = text; *c; c++)
        if (is_control(*c)) return (long)(c - text);
    return -1;
}

void pm_cli_clean_name(char *name) {
    for (char *c = name; *c; c++)
        if (is_control(*c)) *c = '_';
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when the byte there starts none: overlong
 * forms, surrogates and code points past U+10FFFF are invalid too. */
static int utf8_length(const unsigned char *s) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (n == 0 || c > 0xf4 || c == 0xc0 || c == 0xc1) return 0;
    unsigned cp = c & (0x7fu >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

char *pm_cli_json_print(const cJSON *json, int formatted) {
    char *text = formatted ? cJSON_Print(json) : cJSON_PrintUnformatted(json);
    if (!text) return NULL;
    size_t bad = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        int k = utf8_length(p);
        bad += k == 0;
        p += k ? k : 1;
    }
    if (!bad) return text;
    /* Bytes outside ASCII only occur inside strings, where an escape is as good as the byte. */
    size_t len = strlen(text);
    char *out = malloc(len + 5 * bad + 1);
    if (out) {
        char *o = out;
        for (const unsigned char *p = (const unsigned char *)text; *p;) {
            int k = utf8_length(p);
            if (k) {
                memcpy(o, p, (size_t)k);
                o += k;
                p += k;
            } else {
                memcpy(o, "\\ufffd", 6);
                o += 6;
                p++;
            }
        }
        *o = '\0';
    }
    cJSON_free(text);
    return out;
}

int pm_cli_json_puts(const cJSON *json) {
    char *text = pm_cli_json_print(json, 1);
    if (!text) return pm_cli_fail("out of memory printing JSON");
    puts(text);
    free(text);
    return 0;
}

pm_cli_text pm_cli_mode_list(unsigned modes, const char *last_separator) {
    pm_cli_text t;
    size_t at = 0;
    int left = 0;
    t.text[0] = '\0';
    for (int m = 0; m <= PM_SEARCH_VPTREE; m++) left += (modes & PM_SEARCH_MODE_BIT(m)) != 0;
    for (int m = 0; m <= PM_SEARCH_VPTREE; m++) {
        if (!(modes & PM_SEARCH_MODE_BIT(m))) continue;
        const char *sep = at == 0 ? "" : left == 1 ? last_separator : ", ";
        int n = snprintf(t.text + at, sizeof t.text - at, "%s%s", sep, pm_search_mode_name((pm_search_mode)m));
        if (n > 0) at += (size_t)n < sizeof t.text - at ? (size_t)n : sizeof t.text - at - 1;
        left--;
    }
    return t;
}

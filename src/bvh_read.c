/* BVH parser: an iterative tokenizer over a memory buffer (no recursion, so hierarchy depth is
 * bounded by PM_MAX_JOINT_DEPTH and not by the C stack), then the frame lines.
 *
 * Semantics (the common reading of BVH, checked by FK against CMU, LAFAN1 and Bandai-Namco):
 * position channels REPLACE the matching OFFSET component; the local rotation is the product
 * of the rotation channels, in degrees, in the order listed (R = R_first R_second R_third). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "bvh_internal.h"
#include "core.h"
#include "euler.h"

typedef struct bvh_joint {
    const char *name; /* points into the source text; not NUL-terminated */
    size_t name_len;
    int parent;
    int line;         /* line of its ROOT/JOINT keyword */
    int has_offset;
    double offset[3];
    int channel_count; /* -1 until CHANNELS is seen */
    uint8_t channels[6];
    int has_end_site;
    double end_site[3];
} bvh_joint;

typedef struct bvh_token {
    const char *s;
    size_t n;
    int line;
} bvh_token;

typedef struct bvh_parser {
    const char *cur, *end;
    int line;
    const char *source;
    pm_error *error;
    const pm_allocator *allocator;
    bvh_joint *joints;
    int joint_count, joint_cap;
    int stack[PM_MAX_JOINT_DEPTH];
    int depth;
    int total_channels;
    int frame_count;
    int frames_line; /* where Frames: is, which a missing frame line's error names */
    float frame_time;
    char tok_buf[2][96];
    int tok_slot;
} bvh_parser;

/* ---- errors ---- */

static pm_result bvh_fail(bvh_parser *p, pm_result code, int line, const char *field, const char *format, ...)
    PM_PRINTF(5, 6);
static pm_result bvh_fail(bvh_parser *p, pm_result code, int line, const char *field, const char *format, ...) {
    char problem[PM_ERROR_MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(problem, sizeof problem, format, args);
    va_end(args);
    return pm_fail(p->error, code, "%s:%d: %s: %s", p->source, line, field, problem);
}

/* ---- characters and tokens ---- */

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
static int is_space(char c) { return is_blank(c) || c == '\n' || c == '\r'; }
static int is_brace(char c) { return c == '{' || c == '}'; }
static char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

static int at_eol(const bvh_parser *p) { return p->cur == p->end || *p->cur == '\n' || *p->cur == '\r'; }

/* Consumes one line break: "\r\n", "\n" or a lone "\r". The count saturates: only messages use it. */
static void skip_eol(bvh_parser *p) {
    if (p->cur == p->end) return;
    if (*p->cur == '\r') {
        p->cur++;
        if (p->cur != p->end && *p->cur == '\n') p->cur++;
    } else if (*p->cur == '\n') p->cur++;
    else return;
    if (p->line < INT_MAX) p->line++;
}

static void skip_blanks(bvh_parser *p) {
    while (p->cur != p->end && is_blank(*p->cur)) p->cur++;
}

static void skip_space(bvh_parser *p) {
    for (;;) {
        skip_blanks(p);
        if (p->cur == p->end || !is_space(*p->cur)) return;
        skip_eol(p);
    }
}

/* Next whitespace-separated token; braces are tokens of their own. n == 0 at the end. */
static bvh_token next_token(bvh_parser *p) {
    skip_space(p);
    bvh_token t = {p->cur, 0, p->line};
    if (p->cur == p->end) return t;
    if (is_brace(*p->cur)) {
        p->cur++;
        t.n = 1;
        return t;
    }
    while (p->cur != p->end && !is_space(*p->cur) && !is_brace(*p->cur)) p->cur++;
    t.n = (size_t)(p->cur - t.s);
    return t;
}

static bvh_token peek_token(bvh_parser *p) {
    const char *cur = p->cur;
    int line = p->line;
    bvh_token t = next_token(p);
    p->cur = cur;
    p->line = line;
    return t;
}

static int tok_is(bvh_token t, const char *word) {
    size_t n = strlen(word);
    if (t.n != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (ascii_lower(t.s[i]) != ascii_lower(word[i])) return 0;
    return 1;
}

static int tok_ends_with(bvh_token t, const char *suffix) {
    size_t n = strlen(suffix);
    if (t.n < n) return 0;
    bvh_token tail = {t.s + t.n - n, n, t.line};
    return tok_is(tail, suffix);
}

/* A token quoted for a message, cut short (it can be megabytes of garbage); two slots so that
 * one message can quote two tokens. */
static const char *tok_text(bvh_parser *p, bvh_token t) {
    if (t.n == 0) return "the end of the file";
    char *buf = p->tok_buf[p->tok_slot++ & 1];
    size_t n = t.n > 40 ? 40 : t.n;
    /* Copied, not printed with "%.*s": a NUL (binary files have runs of them) would end the
     * quote there, and a message saying "found ''" names nothing. */
    buf[0] = '\'';
    memcpy(buf + 1, t.s, n);
    snprintf(buf + 1 + n, sizeof p->tok_buf[0] - 1 - n, "%s'", t.n > 40 ? "..." : "");
    /* Control bytes would garble a one-line message, and bytes that are not UTF-8 (a binary
     * file given as BVH) would put raw binary in it; well-formed UTF-8 names stay readable. */
    for (unsigned char *c = (unsigned char *)buf + 1; c < (unsigned char *)buf + 1 + n; c++) {
        if (*c < 0x20 || *c == 0x7f) *c = '?';
        else if (*c >= 0x80) {
            int len = *c >= 0xF0 && *c < 0xF5 ? 4 : *c >= 0xE0 && *c < 0xF0 ? 3 : *c >= 0xC2 && *c < 0xE0 ? 2 : 0;
            int ok = len > 0;
            for (int k = 1; ok && k < len; k++) ok = (c[k] & 0xC0) == 0x80;
            if (!ok) *c = '?';
            else c += len - 1;
        }
    }
    /* A word cut by the end of the file ("Fr" of "Frames:") reads as a typo without this. */
    if (t.s + t.n == p->end) strncat(buf, " where the file ends", sizeof p->tok_buf[0] - strlen(buf) - 1);
    return buf;
}

/* ---- numbers (the decimal parser itself is in bvh_number.c) ---- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Why a number that parsed (r 0) or did not (r 2: NaN, Inf) is refused. */
static const char *not_a_float(int r) {
    return r == 2 ? "is not a finite number" : "is beyond the float range (magnitudes below 3.4e38)";
}

/* A number that must fit a float, or an error naming `field`. */
static pm_result read_number(bvh_parser *p, double *out, const char *field) {
    bvh_token t = next_token(p);
    if (t.n == 0) return bvh_fail(p, PM_ERR_PARSE, t.line, field, "expected a number, found the end of the file");
    int r = pm_bvh_parse_double(out, t.s, t.n);
    if (r == 1) return bvh_fail(p, PM_ERR_PARSE, t.line, field, "expected a number, found %s", tok_text(p, t));
    if (r == 2 || !(fabs(*out) < PM_BVH_FLOAT_LIMIT))
        return bvh_fail(p, PM_ERR_NUMERIC, t.line, field, "%s %s", tok_text(p, t), not_a_float(r));
    return PM_OK;
}

/* Whole number for counts; saturates at INT64-ish sizes so "99999999999" is reported as such. */
static int parse_count(long long *out, bvh_token t) {
    size_t i = 0;
    if (t.n && t.s[0] == '+') i++;
    if (i == t.n) return 0;
    long long v = 0;
    for (; i < t.n; i++) {
        if (!is_digit(t.s[i])) return 0;
        if (v < 1000000000000000LL) v = v * 10 + (t.s[i] - '0');
    }
    *out = v;
    return 1;
}

/* ---- hierarchy ---- */

#define NAME_ARG(j) (int)PM_MIN((j)->name_len, (size_t)PM_BVH_NAME_QUOTE), (j)->name

static bvh_joint *top_joint(bvh_parser *p) { return p->depth > 0 ? &p->joints[p->stack[p->depth - 1]] : NULL; }

static pm_result grow_joints(bvh_parser *p) {
    if (p->joint_count < p->joint_cap) return PM_OK;
    int cap = p->joint_cap ? p->joint_cap * 2 : 64;
    if (cap > PM_MAX_JOINTS) cap = PM_MAX_JOINTS;
    bvh_joint *j = (bvh_joint *)pm_alloc_array(p->allocator, (size_t)cap, sizeof(bvh_joint), 0);
    if (!j) return bvh_fail(p, PM_ERR_OUT_OF_MEMORY, p->line, "HIERARCHY", "out of memory for %d joints", cap);
    if (p->joint_count) memcpy(j, p->joints, (size_t)p->joint_count * sizeof(bvh_joint));
    pm_free(p->allocator, p->joints);
    p->joints = j;
    p->joint_cap = cap;
    return PM_OK;
}

/* The joint name is the rest of the line up to a '{' (names with spaces, as 3ds Max's
 * "Bip01 L Thigh", are common), trimmed. */
static pm_result read_joint_name(bvh_parser *p, bvh_token keyword, const char **name, size_t *len) {
    skip_blanks(p);
    const char *s = p->cur;
    while (!at_eol(p) && *p->cur != '{') p->cur++;
    const char *e = p->cur;
    while (e > s && is_blank(e[-1])) e--;
    if (e == s) return bvh_fail(p, PM_ERR_PARSE, keyword.line, "JOINT", "%.*s without a name", (int)keyword.n, keyword.s);
    if (e - s > PM_BVH_MAX_NAME_LENGTH)
        return bvh_fail(p, PM_ERR_LIMIT, keyword.line, "JOINT", "a name of %zu bytes (at most %d)", (size_t)(e - s),
                        PM_BVH_MAX_NAME_LENGTH);
    for (const char *c = s; c < e; c++)
        if (!pm_bvh_name_byte_ok(*c)) {
            /* Quoted as tokens are: printed raw, the control character itself (a NUL, an
             * escape) would cut or garble the message. */
            bvh_token name_token = {s, (size_t)(e - s), keyword.line};
            return bvh_fail(p, PM_ERR_PARSE, keyword.line, "JOINT", "the name %s contains a control character or '}'",
                            tok_text(p, name_token));
        }
    *name = s;
    *len = (size_t)(e - s);
    return PM_OK;
}

static pm_result expect_open_brace(bvh_parser *p, const char *field) {
    bvh_token t = next_token(p);
    if (t.n == 1 && t.s[0] == '{') return PM_OK;
    return bvh_fail(p, PM_ERR_PARSE, t.line, field, "expected '{', found %s", tok_text(p, t));
}

static pm_result open_joint(bvh_parser *p, bvh_token keyword, int is_root) {
    bvh_joint *parent = top_joint(p);
    if (is_root && parent)
        return bvh_fail(p, PM_ERR_PARSE, keyword.line, "ROOT",
                        "ROOT inside joint '%.*s' of line %d (unbalanced braces: a '}' is missing)",
                        NAME_ARG(parent), parent->line);
    if (!is_root && !parent)
        return bvh_fail(p, PM_ERR_PARSE, keyword.line, "JOINT", "JOINT outside any ROOT (unbalanced braces?)");
    if (p->joint_count >= PM_MAX_JOINTS)
        return bvh_fail(p, PM_ERR_LIMIT, keyword.line, "JOINT", "more than %d joints", PM_MAX_JOINTS);
    if (p->depth >= PM_MAX_JOINT_DEPTH)
        return bvh_fail(p, PM_ERR_LIMIT, keyword.line, "JOINT", "the hierarchy is deeper than %d joints",
                        PM_MAX_JOINT_DEPTH);
    const char *name = NULL;
    size_t len = 0;
    pm_result r = read_joint_name(p, keyword, &name, &len);
    if (r == PM_OK) r = grow_joints(p);
    if (r != PM_OK) return r;
    bvh_joint *j = &p->joints[p->joint_count];
    memset(j, 0, sizeof *j);
    j->name = name;
    j->name_len = len;
    j->parent = parent ? p->stack[p->depth - 1] : -1;
    j->line = keyword.line;
    j->channel_count = -1;
    if ((r = expect_open_brace(p, is_root ? "ROOT" : "JOINT")) != PM_OK) return r;
    p->stack[p->depth++] = p->joint_count++;
    return PM_OK;
}

static pm_result read_offset(bvh_parser *p, double out[3], const char *field) {
    for (int i = 0; i < 3; i++) {
        pm_result r = read_number(p, &out[i], field);
        if (r != PM_OK) return r;
    }
    return PM_OK;
}

static pm_result parse_end_site(bvh_parser *p, bvh_token keyword) {
    bvh_token site = next_token(p);
    if (!tok_is(site, "Site"))
        return bvh_fail(p, PM_ERR_PARSE, keyword.line, "End Site", "expected 'Site' after 'End', found %s",
                        tok_text(p, site));
    bvh_joint *j = top_joint(p);
    if (!j) return bvh_fail(p, PM_ERR_PARSE, keyword.line, "End Site", "End Site outside any joint");
    if (j->has_end_site)
        return bvh_fail(p, PM_ERR_PARSE, keyword.line, "End Site", "joint '%.*s' has a second End Site", NAME_ARG(j));
    pm_result r = expect_open_brace(p, "End Site");
    if (r != PM_OK) return r;
    bvh_token t = next_token(p);
    if (!tok_is(t, "OFFSET"))
        return bvh_fail(p, PM_ERR_PARSE, t.line, "End Site", "expected OFFSET, found %s", tok_text(p, t));
    if ((r = read_offset(p, j->end_site, "End Site OFFSET")) != PM_OK) return r;
    t = next_token(p);
    if (!(t.n == 1 && t.s[0] == '}'))
        return bvh_fail(p, PM_ERR_PARSE, t.line, "End Site", "expected '}' after the OFFSET, found %s",
                        tok_text(p, t));
    j->has_end_site = 1;
    return PM_OK;
}

static int channel_of_token(bvh_token t) {
    for (int c = 0; c < 6; c++)
        if (tok_is(t, pm_bvh_channel_name(c))) return c;
    return -1;
}

static int looks_like_channel(bvh_token t) { return tok_ends_with(t, "position") || tok_ends_with(t, "rotation"); }

static pm_result parse_channels(bvh_parser *p, bvh_token keyword) {
    bvh_joint *j = top_joint(p);
    if (!j) return bvh_fail(p, PM_ERR_PARSE, keyword.line, "CHANNELS", "CHANNELS outside any joint");
    if (j->channel_count >= 0)
        return bvh_fail(p, PM_ERR_PARSE, keyword.line, "CHANNELS", "joint '%.*s' has CHANNELS twice", NAME_ARG(j));
    bvh_token t = next_token(p);
    long long count;
    if (!parse_count(&count, t))
        return bvh_fail(p, PM_ERR_PARSE, t.line, "CHANNELS", "expected a channel count, found %s", tok_text(p, t));
    if (count > 6)
        return bvh_fail(p, PM_ERR_PARSE, t.line, "CHANNELS", "%lld channels on joint '%.*s' (at most 6)", count,
                        NAME_ARG(j));
    int seen = 0;
    for (int i = 0; i < (int)count; i++) {
        t = next_token(p);
        int c = channel_of_token(t);
        if (c < 0 && looks_like_channel(t))
            return bvh_fail(p, PM_ERR_PARSE, keyword.line, "CHANNELS", "unknown channel %s", tok_text(p, t));
        if (c < 0)
            return bvh_fail(p, PM_ERR_PARSE, keyword.line, "CHANNELS", "%lld channels declared but %d names follow (then %s)",
                            count, i, tok_text(p, t));
        if (seen & (1 << c))
            return bvh_fail(p, PM_ERR_PARSE, keyword.line, "CHANNELS", "channel %s is listed twice", tok_text(p, t));
        seen |= 1 << c;
        j->channels[i] = (uint8_t)c;
    }
    t = peek_token(p);
    if (channel_of_token(t) >= 0 || looks_like_channel(t))
        return bvh_fail(p, PM_ERR_PARSE, keyword.line, "CHANNELS", "%lld channels declared but more names follow (%s)",
                        count, tok_text(p, t));
    j->channel_count = (int)count;
    p->total_channels += (int)count;
    return PM_OK;
}

static pm_result parse_joint_offset(bvh_parser *p, bvh_token keyword) {
    bvh_joint *j = top_joint(p);
    if (!j) return bvh_fail(p, PM_ERR_PARSE, keyword.line, "OFFSET", "OFFSET outside any joint");
    if (j->has_offset)
        return bvh_fail(p, PM_ERR_PARSE, keyword.line, "OFFSET", "joint '%.*s' has OFFSET twice", NAME_ARG(j));
    j->has_offset = 1;
    return read_offset(p, j->offset, "OFFSET");
}

static pm_result close_joint(bvh_parser *p, bvh_token brace) {
    bvh_joint *j = top_joint(p);
    if (!j) return bvh_fail(p, PM_ERR_PARSE, brace.line, "HIERARCHY", "'}' without a matching '{' (unbalanced braces)");
    if (!j->has_offset)
        return bvh_fail(p, PM_ERR_PARSE, brace.line, "OFFSET", "joint '%.*s' (line %d) has no OFFSET", NAME_ARG(j), j->line);
    if (j->channel_count < 0) j->channel_count = 0;
    p->depth--;
    return PM_OK;
}

static pm_result hierarchy_truncated(bvh_parser *p, bvh_token t) {
    bvh_joint *j = top_joint(p);
    if (j)
        return bvh_fail(p, PM_ERR_PARSE, t.line, "HIERARCHY",
                        "the file ends inside joint '%.*s' (line %d): %d '}' missing", NAME_ARG(j), j->line,
                        p->depth);
    if (p->joint_count == 0) return bvh_fail(p, PM_ERR_PARSE, t.line, "HIERARCHY", "no ROOT joint");
    return bvh_fail(p, PM_ERR_PARSE, t.line, "MOTION", "the file ends after the hierarchy (no MOTION section)");
}

/* 16 or 32 for UTF-16 or UTF-32 text, 0 otherwise: a byte order mark of either order, or text
 * that opens with ASCII characters each paired with a NUL (UTF-16 without a mark). No BVH file
 * holds a NUL, so nothing readable is refused. */
static int wide_text_bits(const char *cur, const char *end) {
    if (end - cur < 2) return 0;
    const unsigned char *u = (const unsigned char *)cur;
    if (end - cur >= 4 && ((u[0] == 0xFF && u[1] == 0xFE && u[2] == 0 && u[3] == 0) ||
                           (u[0] == 0 && u[1] == 0 && u[2] == 0xFE && u[3] == 0xFF)))
        return 32;
    if ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)) return 16;
    if (end - cur < 8) return 0;
    for (int zero = 0; zero < 2; zero++) {
        int pairs = 0;
        for (int i = 0; i < 8; i += 2) {
            const unsigned char c = u[i + 1 - zero], z = u[i + zero];
            pairs += z == 0 && c != 0 && c < 0x80;
        }
        if (pairs == 4) return 16;
    }
    return 0;
}

static pm_result parse_hierarchy(bvh_parser *p) {
    /* A UTF-8 byte order mark from Windows editors. */
    if (p->end - p->cur >= 3 && memcmp(p->cur, "\xEF\xBB\xBF", 3) == 0) p->cur += 3;
    /* Windows editors also save "Unicode" text as UTF-16: every ASCII byte followed or preceded
     * by a NUL (UTF-32, rarer, by three). Read as bytes it is garbage, so say what it is and what
     * to do. */
    const int wide = wide_text_bits(p->cur, p->end);
    if (wide)
        return bvh_fail(p, PM_ERR_PARSE, 1, "HIERARCHY",
                        "the file is UTF-%d text; save it as UTF-8 or ASCII (BVH is plain text)", wide);
    bvh_token t = next_token(p);
    if (t.n == 0) return bvh_fail(p, PM_ERR_PARSE, t.line, "HIERARCHY", "the file is empty");
    if (!tok_is(t, "HIERARCHY"))
        return bvh_fail(p, PM_ERR_PARSE, t.line, "HIERARCHY", "expected HIERARCHY, found %s (not a BVH file?)",
                        tok_text(p, t));
    for (;;) {
        t = next_token(p);
        pm_result r;
        if (t.n == 0) return hierarchy_truncated(p, t);
        if (tok_is(t, "ROOT") || tok_is(t, "JOINT")) r = open_joint(p, t, tok_is(t, "ROOT"));
        else if (tok_is(t, "End")) r = parse_end_site(p, t);
        else if (tok_is(t, "OFFSET")) r = parse_joint_offset(p, t);
        else if (tok_is(t, "CHANNELS")) r = parse_channels(p, t);
        else if (t.n == 1 && t.s[0] == '}') r = close_joint(p, t);
        else if (tok_is(t, "MOTION")) {
            bvh_joint *j = top_joint(p);
            if (j)
                return bvh_fail(p, PM_ERR_PARSE, t.line, "MOTION",
                                "MOTION inside joint '%.*s' (line %d): %d '}' missing (unbalanced braces)",
                                NAME_ARG(j), j->line, p->depth);
            if (p->joint_count == 0) return bvh_fail(p, PM_ERR_PARSE, t.line, "HIERARCHY", "no ROOT joint");
            return PM_OK;
        } else if (t.n == 1 && t.s[0] == '{')
            return bvh_fail(p, PM_ERR_PARSE, t.line, "HIERARCHY", "'{' without a ROOT, JOINT or End Site before it");
        else
            return bvh_fail(p, PM_ERR_PARSE, t.line, "HIERARCHY", "unexpected %s", tok_text(p, t));
        if (r != PM_OK) return r;
    }
}

/* Joint names must be unique: later lookups, mirror maps and round trips rely on it. */
static pm_result check_unique_names(bvh_parser *p) {
    size_t cap = 16;
    while (cap < (size_t)p->joint_count * 2) cap *= 2;
    int32_t *table = (int32_t *)pm_alloc_array(p->allocator, cap, sizeof(int32_t), 0);
    if (!table) return bvh_fail(p, PM_ERR_OUT_OF_MEMORY, p->line, "HIERARCHY", "out of memory");
    for (size_t i = 0; i < cap; i++) table[i] = -1;
    pm_result r = PM_OK;
    for (int j = 0; j < p->joint_count && r == PM_OK; j++) {
        const bvh_joint *a = &p->joints[j];
        size_t slot = (size_t)pm_hash64(a->name, a->name_len, 0) & (cap - 1);
        for (; table[slot] >= 0; slot = (slot + 1) & (cap - 1)) {
            const bvh_joint *b = &p->joints[table[slot]];
            if (b->name_len == a->name_len && memcmp(a->name, b->name, a->name_len) == 0) {
                r = bvh_fail(p, PM_ERR_PARSE, a->line, "JOINT", "duplicate joint name '%.*s' (first on line %d)",
                             NAME_ARG(a), b->line);
                break;
            }
        }
        table[slot] = j;
    }
    pm_free(p->allocator, table);
    return r;
}

/* ---- motion header ---- */

/* What follows a label's colon: the rest of the token when the value is glued to it
 * ("Frames:120", as scripts print it with no space), else the next token on the same line.
 * Looking further would take a missing Frame Time from the first frame line, and the error
 * would then blame that line's second value. */
static pm_result label_value(bvh_parser *p, bvh_token t, size_t colon_end, const char *field, bvh_token *value) {
    if (t.n > colon_end) {
        bvh_token rest = {t.s + colon_end, t.n - colon_end, t.line};
        *value = rest;
        return PM_OK;
    }
    skip_blanks(p);
    if (at_eol(p)) return bvh_fail(p, PM_ERR_PARSE, t.line, field, "no value after '%s:' on its line", field);
    *value = next_token(p);
    return PM_OK;
}

/* "Frames:" / "Frames :" / "Frames:120" style labels: `words` is the label without the colon,
 * one token per word; returns the token that follows the colon. */
static pm_result expect_label(bvh_parser *p, const char *const *words, int word_count, const char *field,
                              bvh_token *value) {
    for (int i = 0; i < word_count; i++) {
        bvh_token t = next_token(p);
        int last = i == word_count - 1;
        size_t wn = strlen(words[i]);
        int ok = tok_is(t, words[i]);
        if (!ok && last && t.n > wn && t.s[wn] == ':') {
            bvh_token head = {t.s, wn, t.line};
            ok = tok_is(head, words[i]);
            if (ok) return label_value(p, t, wn + 1, field, value);
        }
        if (!ok)
            return bvh_fail(p, PM_ERR_PARSE, t.line, field, "expected '%s:', found %s", field, tok_text(p, t));
    }
    bvh_token colon = next_token(p);
    if (!(colon.n >= 1 && colon.s[0] == ':'))
        return bvh_fail(p, PM_ERR_PARSE, colon.line, field, "expected ':' after '%s', found %s", field,
                        tok_text(p, colon));
    return label_value(p, colon, 1, field, value);
}

static pm_result parse_motion_header(bvh_parser *p) {
    static const char *const frames_words[] = {"Frames"};
    static const char *const time_words[] = {"Frame", "Time"};
    bvh_token t = {NULL, 0, 0};
    pm_result r = expect_label(p, frames_words, 1, "Frames", &t);
    if (r != PM_OK) return r;
    long long frames;
    if (!parse_count(&frames, t))
        return bvh_fail(p, PM_ERR_PARSE, t.line, "Frames", "expected a frame count, found %s", tok_text(p, t));
    if (frames > PM_MAX_FRAMES)
        return bvh_fail(p, PM_ERR_LIMIT, t.line, "Frames", "%lld frames (at most %d)", frames, PM_MAX_FRAMES);
    if (frames == 0) return bvh_fail(p, PM_ERR_PARSE, t.line, "Frames", "0 frames (a clip needs at least one)");
    p->frame_count = (int)frames;
    p->frames_line = t.line;
    if ((r = expect_label(p, time_words, 2, "Frame Time", &t)) != PM_OK) return r;
    double ft;
    int nr = t.n ? pm_bvh_parse_double(&ft, t.s, t.n) : 1;
    if (nr == 1)
        return bvh_fail(p, PM_ERR_PARSE, t.line, "Frame Time", "expected a number, found %s", tok_text(p, t));
    if (nr == 2 || !(ft > 0.0) || !(ft < PM_BVH_FLOAT_LIMIT) || !((float)ft > 0.0f))
        return bvh_fail(p, PM_ERR_NUMERIC, t.line, "Frame Time", "%s must be a positive finite number of seconds",
                        tok_text(p, t));
    /* A tiny frame time is a corrupt header, not a capture: every rate and duration derived
     * from it would be meaningless, and resampling such a clip overflows frame counts. */
    if (ft < PM_BVH_MIN_FRAME_TIME)
        return bvh_fail(p, PM_ERR_NUMERIC, t.line, "Frame Time", "%s is below %g s (a rate above %g kHz)",
                        tok_text(p, t), PM_BVH_MIN_FRAME_TIME, 1e-3 / PM_BVH_MIN_FRAME_TIME);
    if (ft > PM_BVH_MAX_FRAME_TIME)
        return bvh_fail(p, PM_ERR_NUMERIC, t.line, "Frame Time", "%s is above %g s (a frame an hour)", tok_text(p, t),
                        PM_BVH_MAX_FRAME_TIME);
    p->frame_time = (float)ft;
    skip_blanks(p);
    if (!at_eol(p)) {
        bvh_token extra = next_token(p);
        return bvh_fail(p, PM_ERR_PARSE, extra.line, "Frame Time", "unexpected %s after the frame time",
                        tok_text(p, extra));
    }
    skip_eol(p);
    /* Frame lines are read after skipping blank lines, so a frame without values could not even
     * be told from none: such a file has no motion. */
    if (p->total_channels == 0)
        return bvh_fail(p, PM_ERR_PARSE, t.line, "CHANNELS", "no joint has channels, so there is no motion to read");
    /* Everything below is refused before the clip is allocated. Every value takes at least one
     * character and one separator (a blank, or the line break ending all lines but the last). */
    int channels = p->total_channels;
    long long left = (long long)(p->end - p->cur);
    long long most = (left + 1) / (2LL * channels);
    if (frames > most)
        return bvh_fail(p, PM_ERR_PARSE, p->frames_line, "Frames",
                        "%lld frames, but the %lld bytes after the header hold at most %lld frame lines of %d values "
                        "(truncated file?)",
                        frames, left, most, channels);
    if (!pm_bvh_motion_fits(frames, p->joint_count, channels))
        return bvh_fail(p, PM_ERR_LIMIT, p->frames_line, "Frames",
                        "%lld frames of %d joints take %.0f MiB, but the file has only %d channel%s for them (above "
                        "%.0f MiB at least one channel per %d joints)",
                        frames, p->joint_count, pm_bvh_motion_bytes(frames, p->joint_count, channels) / 1048576.0,
                        channels, channels == 1 ? "" : "s", PM_BVH_SPARSE_BYTES / 1048576.0,
                        PM_BVH_MAX_JOINTS_PER_CHANNEL);
    return PM_OK;
}

/* ---- frames ---- */

/* Per joint: where its values start in a frame line and its rotation order. */
typedef struct joint_layout {
    int first;
    pm_euler_order order;
} joint_layout;

double pm_bvh_motion_bytes(long long frames, int joints, int channels) {
    return (double)frames * joints * (double)(sizeof(pm_quat) + sizeof(pm_vec3)) +
           (double)joints * sizeof(joint_layout) + (double)channels * sizeof(double);
}

int pm_bvh_motion_fits(long long frames, int joints, int channels) {
    return pm_bvh_motion_bytes(frames, joints, channels) <= PM_BVH_SPARSE_BYTES ||
           (long long)joints <= (long long)channels * PM_BVH_MAX_JOINTS_PER_CHANNEL;
}

static void apply_frame(pm_clip *c, int frame, const bvh_parser *p, const joint_layout *layout, const double *values) {
    int jc = p->joint_count;
    pm_quat *rot = c->rotations + (size_t)frame * jc;
    pm_vec3 *pos = c->translations + (size_t)frame * jc;
    const double deg = 3.14159265358979323846 / 180.0;
    for (int j = 0; j < jc; j++) {
        const bvh_joint *bj = &p->joints[j];
        double t[3] = {bj->offset[0], bj->offset[1], bj->offset[2]};
        double a[3] = {0.0, 0.0, 0.0};
        int rotations = 0;
        const double *v = values + layout[j].first;
        for (int k = 0; k < bj->channel_count; k++) {
            int ch = bj->channels[k];
            if (ch <= PM_CHANNEL_ZPOSITION) t[ch] = v[k];
            else {
                a[ch - PM_CHANNEL_XROTATION] = v[k] * deg;
                rotations++;
            }
        }
        rot[j] = rotations ? pm_euler_to_quat_d(a, layout[j].order) : pm_quat_identity();
        pos[j] = pm_vec3_make((float)t[0], (float)t[1], (float)t[2]);
    }
}

/* The field a frame line's errors name: "frame N", formatted only when there is an error. */
static const char *frame_field(char *buf, size_t cap, int frame) {
    snprintf(buf, cap, "frame %d", frame);
    return buf;
}

/* Reads one frame line into values; the count is checked before any value is used. */
static pm_result read_frame_line(bvh_parser *p, int frame, double *values) {
    int expected = p->total_channels;
    int count = 0;
    int line = p->line;
    char field[48];
    for (;;) {
        skip_blanks(p);
        if (at_eol(p)) break;
        bvh_token t = {p->cur, 0, p->line};
        while (p->cur != p->end && !is_space(*p->cur)) p->cur++;
        t.n = (size_t)(p->cur - t.s);
        if (count < expected) {
            double v;
            int r = pm_bvh_parse_double(&v, t.s, t.n);
            if (r == 1)
                return bvh_fail(p, PM_ERR_PARSE, line, frame_field(field, sizeof field, frame),
                                "value %d: expected a number, found %s", count + 1, tok_text(p, t));
            if (r == 2 || !(fabs(v) < PM_BVH_FLOAT_LIMIT))
                return bvh_fail(p, PM_ERR_NUMERIC, line, frame_field(field, sizeof field, frame), "value %d: %s %s",
                                count + 1, tok_text(p, t), not_a_float(r));
            values[count] = v;
        }
        count++;
    }
    if (count != expected)
        return bvh_fail(p, PM_ERR_PARSE, line, frame_field(field, sizeof field, frame),
                        "%d values on the line, expected %d (%s)", count, expected, count < expected ? "too few" : "too many");
    skip_eol(p);
    return PM_OK;
}

static pm_result parse_frames(bvh_parser *p, pm_clip *c) {
    int jc = p->joint_count;
    joint_layout *layout = (joint_layout *)pm_alloc_array(p->allocator, (size_t)jc, sizeof(joint_layout), 0);
    double *values = (double *)pm_alloc_array(p->allocator, (size_t)p->total_channels, sizeof(double), 0);
    pm_result r = PM_OK;
    if (!layout || !values) {
        r = bvh_fail(p, PM_ERR_OUT_OF_MEMORY, p->line, "MOTION", "out of memory");
        goto done;
    }
    for (int j = 0, first = 0; j < jc; j++) {
        layout[j].first = first;
        pm_euler_order_of_channels(&layout[j].order, p->joints[j].channels, p->joints[j].channel_count);
        first += p->joints[j].channel_count;
    }
    for (int f = 0; f < p->frame_count; f++) {
        skip_space(p);
        if (p->cur == p->end) {
            r = bvh_fail(p, PM_ERR_PARSE, p->frames_line, "Frames",
                         "declares %d frames but the file ends after %d frame line%s", p->frame_count, f,
                         f == 1 ? "" : "s");
            goto done;
        }
        if ((r = read_frame_line(p, f, values)) != PM_OK) goto done;
        apply_frame(c, f, p, layout, values);
    }
    skip_space(p);
    if (p->cur != p->end)
        r = bvh_fail(p, PM_ERR_PARSE, p->line, "MOTION", "more frame data after the %d frames Frames: declares",
                     p->frame_count);
done:
    pm_free(p->allocator, layout);
    pm_free(p->allocator, values);
    return r;
}

/* ---- assembling the clip ---- */

static pm_vec3 vec3_of(const double v[3]) { return pm_vec3_make((float)v[0], (float)v[1], (float)v[2]); }

static pm_result build_skeleton(pm_skeleton *s, bvh_parser *p) {
    pm_result r = pm_skeleton_create(s, p->joint_count, p->allocator, p->error);
    if (r != PM_OK) return r;
    size_t longest = 0;
    for (int j = 0; j < p->joint_count; j++) longest = PM_MAX(longest, p->joints[j].name_len);
    char *name = (char *)pm_alloc(p->allocator, longest + 1, 1);
    if (!name) r = bvh_fail(p, PM_ERR_OUT_OF_MEMORY, p->line, "JOINT", "out of memory for joint names");
    for (int j = 0; j < p->joint_count && r == PM_OK; j++) {
        const bvh_joint *bj = &p->joints[j];
        s->parents[j] = bj->parent;
        s->rest_translations[j] = vec3_of(bj->offset);
        s->channel_counts[j] = (uint8_t)bj->channel_count;
        memcpy(s->channels + (size_t)j * 6, bj->channels, 6);
        s->has_end_site[j] = (uint8_t)bj->has_end_site;
        s->end_sites[j] = vec3_of(bj->end_site);
        memcpy(name, bj->name, bj->name_len);
        name[bj->name_len] = '\0';
        r = pm_skeleton_set_name(s, j, name, p->error);
    }
    pm_free(p->allocator, name);
    if (r != PM_OK) pm_skeleton_destroy(s);
    return r;
}

pm_result pm_bvh_parse(pm_clip *out, const char *data, size_t size, const char *source,
                       const pm_allocator *allocator, pm_error *error) {
    memset(out, 0, sizeof *out);
    bvh_parser p;
    memset(&p, 0, sizeof p);
    p.cur = data;
    p.end = data + size;
    p.line = 1;
    p.source = source;
    p.error = error;
    p.allocator = allocator;
    pm_skeleton skeleton;
    memset(&skeleton, 0, sizeof skeleton);
    pm_result r = parse_hierarchy(&p);
    if (r == PM_OK) r = check_unique_names(&p);
    if (r == PM_OK) r = parse_motion_header(&p);
    if (r == PM_OK) r = build_skeleton(&skeleton, &p);
    if (r == PM_OK && (r = pm_clip_create(out, &skeleton, p.frame_count, p.frame_time, allocator, error)) != PM_OK)
        pm_error_prefix(error, "%s", source);
    if (r == PM_OK) r = parse_frames(&p, out);
    if (r != PM_OK) pm_clip_destroy(out);
    pm_skeleton_destroy(&skeleton);
    pm_free(allocator, p.joints);
    return r;
}

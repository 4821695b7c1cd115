/* build's --addend and --exclude (asset_rules.h). */
#include "asset_rules.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

/* "START:END" seconds of the clip; 0 after a one-line error. */
static int parse_span(pm_cli_asset_rule *r, const char *text) {
    const char *colon = strchr(text, ':');
    char *start = colon ? strndup(text, (size_t)(colon - text)) : NULL;
    if (colon && !start) return pm_cli_fail("build: out of memory"), 0;
    double lo = 0.0, hi = 0.0;
    int ok = colon && pm_cli_number(&lo, "build", r->option, start, 0.0, 999999.0, 0) &&
             pm_cli_number(&hi, "build", r->option, colon + 1, 0.0, 999999.0, 0);
    free(start);
    if (!colon)
        return pm_cli_fail("build: %s '%s': '%s' is not START:END (seconds of the clip; the span follows the last '@', "
                           "match an '@' of a name with [@])",
                           r->option, r->spec, text),
               0;
    if (!ok) return 0;
    if (!(hi > lo))
        return pm_cli_fail("build: %s '%s': the span ends at %g s, not after its start at %g s", r->option, r->spec, hi, lo),
               0;
    /* Ranges hold single floats: ends a hair apart would become one time, an empty span. */
    if (!((float)hi > (float)lo))
        return pm_cli_fail("build: %s '%s': the span ends at %.9g s, not after its start at %.9g s once both are single "
                           "floats",
                           r->option, r->spec, (double)(float)hi, (double)(float)lo),
               0;
    r->ranged = 1;
    r->start = (float)lo;
    r->end = (float)hi;
    return 1;
}

/* The ']' closing the bracket expression that opens at `open` (as fnmatch reads it: a ']' right
 * after "[", "[!" or "[^" is a member), or NULL when none does (the '[' is then a plain one). */
static const char *bracket_end(const char *open, const char *end) {
    const char *p = open + 1;
    if (p < end && (*p == '!' || *p == '^')) p++;
    if (p < end && *p == ']') p++;
    while (p < end && *p != ']') p++;
    return p < end ? p : NULL;
}

int pm_cli_asset_rule_parse(pm_cli_asset_rules *rules, const char *option, const char *spec) {
    const int addend = !strcmp(option, "--addend");
    if (rules->count == rules->capacity) {
        int cap = rules->capacity ? 2 * rules->capacity : 8;
        pm_cli_asset_rule *grown = realloc(rules->items, (size_t)cap * sizeof *grown);
        if (!grown) return pm_cli_fail("build: out of memory") + 1;
        rules->items = grown;
        rules->capacity = cap;
    }
    pm_cli_asset_rule r = {option, spec, NULL, 0, 0.0f, 0.0f, 0.0f};
    size_t len = strlen(spec);
    if (addend) {
        const char *eq = strrchr(spec, '=');
        if (!eq || eq == spec)
            return pm_cli_fail("build: --addend '%s' must be PATTERN=COST or PATTERN@START:END=COST", spec) + 1;
        if (!pm_cli_float(&r.value, "build", option, eq + 1, -60000.0, 60000.0)) return 2;
        len = (size_t)(eq - spec);
    }
    /* The span follows the last '@' (a name with '@' in it can be matched with [@] or \@: one
     * in a bracket expression or escaped is the pattern's). */
    const char *at = NULL;
    for (const char *c = spec; c < spec + len; c++) {
        if (*c == '\\' && c + 1 < spec + len) {
            c++;
            continue;
        }
        const char *close = *c == '[' ? bracket_end(c, spec + len) : NULL;
        if (close) c = close;
        else if (*c == '@') at = c;
    }
    if (at) {
        char *span = strndup(at + 1, (size_t)(spec + len - at - 1));
        if (!span) return pm_cli_fail("build: out of memory") + 1;
        int ok = parse_span(&r, span);
        free(span);
        if (!ok) return 2;
        len = (size_t)(at - spec);
    } else if (!addend) {
        return pm_cli_fail("build: --exclude '%s' must be PATTERN@START:END (seconds of the clip)", spec) + 1;
    }
    if (len == 0) return pm_cli_fail("build: %s '%s': no PATTERN before the %s", option, spec, at ? "'@'" : "'='") + 1;
    r.pattern = strndup(spec, len);
    if (!r.pattern) return pm_cli_fail("build: out of memory") + 1;
    rules->items[rules->count++] = r;
    return 0;
}

static int matches(const pm_cli_asset_rule *r, const pm_asset_def *a, const pm_clip *clip, int bvh_named) {
    const char *name = a->name ? a->name : clip->name;
    if (!name) return 0;
    /* The whole name, or its file-name part for clips named apart by folders ("idle*" still
     * matches a/idle_000). */
    const char *file = strrchr(name, '/');
    return fnmatch(r->pattern, name, 0) == 0 || (file && bvh_named && fnmatch(r->pattern, file + 1, 0) == 0);
}

/* Whether the rule would match the name of an asset's mirrored copy, "<name>.mirror". */
static int matches_mirror(const pm_cli_asset_rule *r, const pm_asset_def *a, const pm_clip *clip) {
    const char *name = a->name ? a->name : clip->name;
    char copy[1100];
    if (!name || (size_t)snprintf(copy, sizeof copy, "%s.mirror", name) >= sizeof copy) return 0;
    return fnmatch(r->pattern, copy, 0) == 0;
}

int pm_cli_asset_rules_apply(pm_cli_asset_rules *rules, pm_asset_def *assets, const pm_clip *clips,
                             const int *bvh_named, int count, int mirror) {
    rules->ranges = calloc((size_t)(count ? count : 1), sizeof *rules->ranges);
    if (!rules->ranges) return pm_cli_fail("build: out of memory");
    rules->asset_count = count;
    for (int k = 0; k < rules->count; k++) {
        const pm_cli_asset_rule *r = &rules->items[k];
        int matched = 0, reached = 0, longest = -1;
        for (int i = 0; i < count; i++) {
            if (!matches(r, &assets[i], &clips[i], bvh_named[i])) continue;
            matched++;
            /* A span that starts past the clip's end (its frames' time, a frame more for a loop)
             * holds none of its poses. */
            const double length = (double)clips[i].frame_count * clips[i].frame_time;
            if (longest < 0 || length > (double)clips[longest].frame_count * clips[longest].frame_time) longest = i;
            reached |= !r->ranged || (double)r->start <= length;
            if (!r->ranged) {
                assets[i].cost_addend = r->value;
                continue;
            }
            if (assets[i].range_count == PM_MAX_ASSET_RANGES)
                return pm_cli_fail("build: %s '%s': asset '%s' would have more than %d ranges", r->option, r->spec,
                                   assets[i].name ? assets[i].name : clips[i].name, PM_MAX_ASSET_RANGES);
            pm_asset_range *grown = realloc(rules->ranges[i], (size_t)(assets[i].range_count + 1) * sizeof *grown);
            if (!grown) return pm_cli_fail("build: out of memory");
            rules->ranges[i] = grown;
            pm_asset_range g = {r->start, r->end, r->value, r->option[2] == 'e'};
            grown[assets[i].range_count++] = g;
            assets[i].ranges = grown;
        }
        if (!matched) {
            /* The mirrored copies (info lists them as <name>.mirror) take the rules of the clip
             * they copy: a pattern meant for them alone matches nothing, and says why. */
            for (int i = 0; i < count && mirror; i++)
                if (matches_mirror(r, &assets[i], &clips[i]))
                    return pm_cli_fail("build: %s '%s' matches no asset: a mirrored copy such as '%s.mirror' takes the "
                                       "%s rules of its clip, '%s' (match that name)",
                                       r->option, r->spec, assets[i].name ? assets[i].name : clips[i].name, r->option,
                                       assets[i].name ? assets[i].name : clips[i].name);
            return pm_cli_fail("build: %s '%s' matches no asset", r->option, r->spec);
        }
        /* Seconds past every matching clip (frames or minutes meant, say) would change nothing. */
        if (!reached) {
            const pm_clip *c = &clips[longest];
            return pm_cli_fail("build: %s '%s': the span starts at %g s, after the end of %s ('%s' lasts %g s)",
                               r->option, r->spec, (double)r->start,
                               matched > 1 ? "every clip it matches, the longest" : "the clip it matches",
                               assets[longest].name ? assets[longest].name : c->name, (double)pm_clip_duration(c));
        }
    }
    return 0;
}

void pm_cli_asset_rules_free(pm_cli_asset_rules *rules) {
    for (int k = 0; k < rules->count; k++) free(rules->items[k].pattern);
    free(rules->items);
    for (int i = 0; rules->ranges && i < rules->asset_count; i++) free(rules->ranges[i]);
    free(rules->ranges);
    memset(rules, 0, sizeof *rules);
}

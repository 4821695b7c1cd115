/* build's --addend and --exclude: cost addends and excluded spans for the assets whose names
 * match a shell pattern, over a whole asset or a span of its clip (pm_asset_range). */
#ifndef PM_CLI_ASSET_RULES_H
#define PM_CLI_ASSET_RULES_H

#include "posematch/posematch.h"

typedef struct pm_cli_asset_rule {
    const char *option; /* "--addend" or "--exclude" */
    const char *spec;   /* as given, for messages */
    char *pattern;
    int ranged;         /* 0: the whole asset (--addend only) */
    float start, end;   /* seconds of the clip */
    float value;        /* --addend's cost */
} pm_cli_asset_rule;

typedef struct pm_cli_asset_rules {
    pm_cli_asset_rule *items;
    int count, capacity;
    pm_asset_range **ranges; /* per asset, what apply set its def's ranges to */
    int asset_count;
} pm_cli_asset_rules;

/* Reads one option's value: --addend PATTERN[@START:END]=COST or --exclude PATTERN@START:END.
 * Returns 0, or the exit code after a one-line error. */
int pm_cli_asset_rule_parse(pm_cli_asset_rules *rules, const char *option, const char *spec);
/* Applies the rules in order to the `count` assets, `bvh_named[i]` set when asset i is a clip
 * read from a BVH file (its file-name part matches as well as its whole name). A whole-asset
 * --addend replaces what an earlier one set; ranges add up. A rule matching no asset is an
 * error (with `mirror`, --mirror's copies being built, one matching only a copy's name
 * "<name>.mirror" says that the copies take their clip's rules). Returns 0 or the exit code
 * after a one-line error. */
int pm_cli_asset_rules_apply(pm_cli_asset_rules *rules, pm_asset_def *assets, const pm_clip *clips,
                             const int *bvh_named, int count, int mirror);
void pm_cli_asset_rules_free(pm_cli_asset_rules *rules);

#endif

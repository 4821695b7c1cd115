/* posematch synth: procedural locomotion clips as BVH, for demos and tests without mocap. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_common.h"
#include "commands.h"
#include "synth.h"

static const char synth_usage[] =
    "usage: posematch synth OUT_DIR [--clips N] [--seed S] [--fps F] [--name PREFIX]\n"
    "Writes N procedural clips (walks, runs, turns, side-steps, idles of a 17-joint humanoid) as\n"
    "OUT_DIR/PREFIX_NNN.bvh (PREFIX: synth), in centimetres like most capture files. Same seed,\n"
    "same files. Clips of another seed are new motion: give them another PREFIX, since assets\n"
    "are named after their files.\n";

int pm_cmd_synth(int argc, char **argv) {
    const char *dir = NULL;
    long clips = 12, seed = 1;
    double fps = 30.0;
    const char *prefix = "synth";
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int more = pm_cli_has_value(argc, argv, i);
        double v;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(synth_usage, stdout);
            return 0;
        } else if (!strcmp(s, "--clips") && more) {
            if (!pm_cli_number(&v, "synth", s, argv[++i], 1, 10000, 1)) return 2;
            clips = (long)v;
        } else if (!strcmp(s, "--seed") && more) {
            if (!pm_cli_number(&v, "synth", s, argv[++i], 0, 4294967295.0, 1)) return 2;
            seed = (long)v;
        } else if (!strcmp(s, "--fps") && more) {
            if (!pm_cli_number(&fps, "synth", s, argv[++i], 10, 240, 0)) return 2;
        } else if (!strcmp(s, "--name") && more) {
            prefix = argv[++i];
            /* A leading dot would hide the files from directory scans (build DIR, bench --far DIR). */
            if (!prefix[0] || strlen(prefix) > 40 || strpbrk(prefix, "/\\") || prefix[0] == '.')
                return pm_cli_fail("synth: --name '%s' must be 1..40 characters, no path separator, not starting with '.'",
                                   prefix) + 1;
        } else if (s[0] == '-' && s[1]) return pm_cli_fail("synth: unknown or incomplete option '%s'", s) + 1;
        else if (!dir) dir = s;
        else return pm_cli_fail("synth: one output directory") + 1;
    }
    if (!dir) return pm_cli_fail("synth: no output directory given") + 1;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return pm_cli_fail("%s: cannot create: %s", dir, strerror(errno));
    pm_bvh_write_def wd = pm_default_bvh_write_def();
    wd.unit_scale = 0.01f;
    for (long i = 0; i < clips; i++) {
        pm_synth_def d = pm_synth_variant((int)i, (unsigned)seed);
        d.fps = (float)fps;
        char name[64], path[4096];
        snprintf(name, sizeof name, "%s_%03ld", prefix, i);
        snprintf(path, sizeof path, "%s/%s.bvh", dir, name);
        pm_clip clip;
        pm_error err;
        if (pm_synth_clip(&clip, &d, name, &err) != PM_OK) return pm_cli_fail_error(&err);
        pm_result r = pm_bvh_write_file(&clip, path, &wd, &err);
        pm_clip_destroy(&clip);
        if (r != PM_OK) return pm_cli_fail_error(&err);
    }
    return 0;
}

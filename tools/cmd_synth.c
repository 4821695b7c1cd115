/* posematch synth: procedural locomotion clips as BVH, for demos and tests without mocap. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "synth.h"

static const char synth_usage[] =
    "usage: posematch synth OUT_DIR [--clips N] [--seed S] [--fps F] [--name PREFIX]\n"
    "Writes N procedural clips (walks, runs, turns, side-steps, idles of a 17-joint humanoid) as\n"
    "OUT_DIR/PREFIX_NNN.bvh (PREFIX: synth), in centimetres like most capture files. Same seed,\n"
    "same files. Clips of another seed are new motion: give them another PREFIX, since assets\n"
    "are named after their files. Nothing is written unless every clip is.\n"
    "  --clips N      clips to write, 1..10000; 12\n"
    "  --seed S       0..4294967295; 1\n"
    "  --fps F        frame rate of the clips, 10..240; 30\n"
    "  --name PREFIX  file-name prefix, 1..40 characters, no path separator, not starting with '.'; synth\n";

/* "DIR/NAME.bvh" (malloc'd), or NULL when out of memory. */
static char *join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 6;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s.bvh", dir, name);
    return p;
}

/* Removes what a failed run made: the clips still staged, the staging directory and, when the
 * run created it, the output directory (only if nothing else is in it: rmdir fails otherwise). */
static void discard(char **staged, long count, const char *stage, const char *dir, int created_dir) {
    for (long i = 0; staged && i < count; i++)
        if (staged[i]) unlink(staged[i]);
    if (stage && stage[0]) rmdir(stage);
    if (created_dir) rmdir(dir);
}

int pm_cmd_synth(int argc, char **argv) {
    const char *dir = NULL;
    long clips = 12, seed = 1;
    double fps = 30.0;
    const char *prefix = "synth";
    static const char *const single_value_options[] = {"--clips", "--seed", "--fps", "--name", NULL};
    pm_cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int more = pm_cli_has_value(argc, argv, i);
        double v;
        if (!pm_cli_once_listed(&seen, "synth", single_value_options, argc, argv, i)) return 2;
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
    int created_dir = mkdir(dir, 0755) == 0;
    if (!created_dir && errno != EEXIST) return pm_cli_fail("%s: cannot create: %s", dir, strerror(errno));
    /* All or nothing: every target is checked before any work, the clips are written into a
     * hidden staging directory inside DIR and renamed into place only when all of them were
     * written. (Only a failing rename, after earlier ones succeeded, could leave part of a set;
     * rename within one directory fails only in rare cases.) */
    char **paths = calloc((size_t)clips, sizeof(char *)), **staged = calloc((size_t)clips, sizeof(char *));
    char *stage = malloc(strlen(dir) + 20);
    /* No staging directory yet: nothing to remove on failure, including the failure of the
     * allocations just made (discard reads stage whenever it is not NULL). */
    if (stage) stage[0] = '\0';
    int rc = 1;
    pm_error err;
    if (!paths || !staged || !stage) {
        pm_cli_fail("synth: out of memory");
        goto done;
    }
    for (long i = 0; i < clips; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s_%03ld", prefix, i);
        if (!(paths[i] = join(dir, name))) {
            pm_cli_fail("synth: out of memory");
            goto done;
        }
        struct stat st;
        if (pm_file_check_output(paths[i], &err) != PM_OK) {
            pm_cli_fail_error(&err);
            goto done;
        }
        /* A rename would replace the link itself, not write through it as other outputs are. */
        if (lstat(paths[i], &st) == 0 && S_ISLNK(st.st_mode)) {
            pm_cli_fail("%s: is a symbolic link (synth writes plain files: remove the link first)", paths[i]);
            goto done;
        }
    }
    sprintf(stage, "%s/.pm-synth-XXXXXX", dir);
    if (!mkdtemp(stage)) {
        pm_cli_fail("%s: cannot create a staging directory in it: %s", dir, strerror(errno));
        free(stage);
        stage = NULL;
        goto done;
    }
    pm_bvh_write_def wd = pm_default_bvh_write_def();
    wd.unit_scale = 0.01f;
    for (long i = 0; i < clips; i++) {
        pm_synth_def d = pm_synth_variant((int)i, (unsigned)seed);
        d.fps = (float)fps;
        char name[64];
        snprintf(name, sizeof name, "%s_%03ld", prefix, i);
        if (!(staged[i] = join(stage, name))) {
            pm_cli_fail("synth: out of memory");
            goto done;
        }
        pm_clip clip;
        if (pm_synth_clip(&clip, &d, name, &err) != PM_OK) {
            pm_cli_fail_error(&err);
            goto done;
        }
        pm_result r = pm_bvh_write_file(&clip, staged[i], &wd, &err);
        pm_clip_destroy(&clip);
        if (r != PM_OK) {
            /* Named by its final path: the staging directory is gone when the message is read. */
            size_t n = strlen(staged[i]);
            if (!strncmp(err.message, staged[i], n) && err.message[n] == ':')
                pm_cli_fail("%s%s", paths[i], err.message + n);
            else pm_cli_fail_error(&err);
            goto done;
        }
    }
    for (long i = 0; i < clips; i++) {
        if (rename(staged[i], paths[i]) != 0) {
            pm_cli_fail("%s: cannot rename into place: %s", paths[i], strerror(errno));
            goto done;
        }
        free(staged[i]);
        staged[i] = NULL;
    }
    rc = 0;
done:
    if (rc) discard(staged, clips, stage, dir, created_dir);
    else if (stage) rmdir(stage);
    for (long i = 0; paths && i < clips; i++) free(paths[i]);
    for (long i = 0; staged && i < clips; i++) free(staged[i]);
    free(paths);
    free(staged);
    free(stage);
    return rc;
}

/* posematch build: clips (and blend spaces) -> a .pmdb database, optionally through a cache. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "asset_names.h"
#include "asset_rules.h"
#include "cli_common.h"
#include "cli_file.h"
#include "clip_reader.h"
#include "commands.h"
#include "blend_space_json.h"
#include "schema_json.h"

/* The cache entry's path, DIR/<key>.pmdb: the buffer, and what the entry adds to DIR ('/', the
 * key's 32 digits, ".pmdb"). */
enum { CACHE_PATH_SIZE = 4096, CACHE_ENTRY_SUFFIX = 1 + 32 + 5 };

static const char build_usage[] =
    "usage: posematch build CLIP.bvh|SPACE.json|DIR... -o DB.pmdb [options]\n"
    "Builds a pose-search database from BVH clips (directories are searched for .bvh files; names\n"
    "starting with '.' are skipped) and blend spaces (SPACE.json, docs/BLEND_SPACE.md: one asset\n"
    "per point of the space's grid).\n"
    "An asset is named after its clip file without .bvh; clips of the same file name in different\n"
    "folders are named with as many parent folders as tell them apart (a/walk, b/walk); names\n"
    "that still repeat (two blend spaces of one \"name\"; with --mirror, a clip walk.mirror beside\n"
    "walk, whose copy is named so) are an error. Ctrl-C (or SIGTERM, or SIGHUP when the terminal\n"
    "closes) stops a build at its next check, exits 130 (143, 129) and writes nothing; once the\n"
    "database is built it is written (a signal ignored when the command started stays ignored).\n"
    "An error is one line on stderr, the last one (after any progress lines; --quiet: the only one).\n"
    "  -o, --output FILE       the database to write (a name ending in .bvh, .json or .f32, the\n"
    "                          extensions of the tool's other files, is refused)\n"
    "  --schema NAME|FILE      preset (ue-locomotion, holden27) or schema JSON; ue-locomotion\n"
    "  --fps N                 poses per second (clips are resampled), 1..1000; 30\n"
    "  --mirror                also add a mirrored copy of every clip, named <name>.mirror\n"
    "  --mirror-pair A=B       joints A and B swap in mirrored copies, beside (or instead of) the\n"
    "                          pairs found from names (Left/Right, _L/_R, .L/.R, l/r, HandL); repeatable,\n"
    "                          each joint in one pair at most\n"
    "  --threads N             threads reading the clips and building (the result never depends on\n"
    "                          it), 1..64; all CPUs (at most 64)\n"
    "  --pca K                 PCA components of the KD-tree (pcakdtree mode), 1..64 and at most\n"
    "                          the schema's cardinality; 4\n"
    "  --exact-components K    components the exact bound tree splits on, 0..64 and at most the\n"
    "                          schema's cardinality; 0 = automatic (the default)\n"
    "  --exact-leaf N          points per bound-tree leaf, 8..4096; 128\n"
    "  --modes M[,M...]        the search modes the database answers, of exact, pcakdtree,\n"
    "                          vptree and bruteforce (which always answers: it needs no\n"
    "                          structure); the others' structures are left out of the file\n"
    "                          (smaller; their searches fail); all\n"
    "  --cache DIR             reuse DIR/<key>.pmdb when inputs and settings are unchanged (DIR is\n"
    "                          created when missing, its parent must exist; a read-only one still\n"
    "                          serves its entries)\n"
    "  --loop                  treat every BVH clip as looping (blend-space assets keep the\n"
    "                          looping their baking gives them)\n"
    "  --exclude-end S         seconds at the end of non-looping clips a search may not return,\n"
    "                          0..100000; 0.3\n"
    "  --exclude-start S       seconds at the start of non-looping clips, 0..100000; 0\n"
    "  --keep-rest-frame       keep a rest/T-pose first frame (dropped by default)\n"
    "  --unit-scale M          metres per file unit for every clip, 1e-6..1e6, outranking a blend\n"
    "                          space's \"unit_scale\" (default: the space's, else detected per clip)\n"
    "  --up y|z                up axis of every clip, outranking a blend space's \"up\" (default:\n"
    "                          the space's, else detected per clip); with either, clips whose hips\n"
    "                          stand outside 0.3..3 m above their feet are counted in a warning\n"
    "  --facing legs|hips      root facing: across the upper legs, or a local axis of the hips; legs\n"
    "  --hips-axis X,Y,Z       the hips' local forward axis for --facing hips (a --mirror copy\n"
    "                          faces the same side of its body as its source); 0,0,1\n"
    "  --ground detect|zero    root height: each clip's floor (lowest foot contact), or y = 0; detect\n"
    "  --root-smoothing S      Gaussian sigma in seconds on root position and facing, 0..2; 0.1\n"
    "  --addend PATTERN=C      cost addend C for the assets whose name (clip file name without .bvh,\n"
    "                          with or without the folders that tell same-named clips apart, or\n"
    "                          blend-space point name) matches the shell PATTERN; repeatable, the\n"
    "                          last match wins; negative = preferred (e.g. --addend 'idle*=0.5');\n"
    "                          within +-60000, stored at half precision (3 significant digits)\n"
    "  --addend PATTERN@START:END=C\n"
    "                          the same for the poses from START to END seconds of the clip (its own\n"
    "                          time, a dropped rest-pose lead-in included), added to the asset's;\n"
    "                          overlapping spans add up (e.g. --addend 'turn*@0.4:0.9=-0.2'); the\n"
    "                          span follows the last '@': match an '@' of a name with [@]\n"
    "  --exclude PATTERN@START:END\n"
    "                          no plain search returns the poses of that span (they can still be the\n"
    "                          continuing pose); repeatable\n"
    "                          (--addend and --exclude: PATTERN matches the source's name, and a\n"
    "                          mirrored copy takes its source's addends and spans; a PATTERN that\n"
    "                          matches no asset is an error)\n"
    "  --quiet                 no progress on stderr (progress starts after a second)\n"
    "  --json                  print {poses, assets, bytes, read_s, build_s, total_s, cache_hit, threads,\n"
    "                          key} on stdout (threads only when built, not on a cache hit)\n";

typedef struct build_args {
    char **inputs;
    int input_count;
    const char *output;
    const char *schema;
    const char *cache;
    pm_schema schema_value; /* what --schema names; def.schema points here */
    pm_database_def def;
    pm_bvh_def bvh;
    int loop;
    int quiet;
    int json;
    int pca_given;
    pm_cli_asset_rules rules; /* --addend and --exclude */
    int pair_count;
    const char **pair_spec; /* "A=B" as given */
} build_args;

/* "all" or a comma list of mode names, each once: PM_SEARCH_MODE_BIT of each (brute force's too,
 * which the library sets anyway). */
static int parse_modes(const char *text, unsigned *out) {
    if (!strcmp(text, "all")) {
        *out = PM_SEARCH_MODES_ALL;
        return 1;
    }
    unsigned given = 0;
    for (const char *p = text;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char name[16];
        int m = -1;
        if (n < sizeof name) {
            memcpy(name, p, n);
            name[n] = '\0';
            m = pm_search_mode_from_name(name);
        }
        if (m < 0) {
            pm_cli_fail("build: --modes '%s': '%.*s' is not exact, pcakdtree, vptree or bruteforce (or give all)", text,
                        (int)(n < 64 ? n : 64), p);
            return 0;
        }
        if (given & PM_SEARCH_MODE_BIT(m)) {
            pm_cli_fail("build: --modes '%s' names %s twice", text, name);
            return 0;
        }
        given |= PM_SEARCH_MODE_BIT(m);
        if (!end) break;
        p = end + 1;
    }
    *out = given | PM_SEARCH_MODE_BIT(PM_SEARCH_BRUTEFORCE);
    return 1;
}

/* "X,Y,Z": a non-zero axis, normalised. */
static int parse_axis(const char *text, pm_vec3 *out) {
    double v[3];
    const char *p = text;
    int ok = 1;
    for (int k = 0; k < 3 && ok; k++) {
        const char *stop = pm_cli_scan_decimal(p);
        ok = stop && *stop == (k < 2 ? ',' : '\0');
        if (ok) {
            v[k] = strtod(p, NULL);
            ok = isfinite(v[k]) && fabs(v[k]) <= 1e6;
            p = stop + 1;
        }
    }
    if (!ok) {
        pm_cli_fail("build: --hips-axis '%s' must be three decimal numbers X,Y,Z within +-1e6", text);
        return 0;
    }
    double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!(len > 1e-6)) {
        pm_cli_fail("build: --hips-axis '%s' is too short to give a direction (its length is below 1e-6)", text);
        return 0;
    }
    *out = pm_vec3_make((float)(v[0] / len), (float)(v[1] / len), (float)(v[2] / len));
    return 1;
}

/* The length of the joint that pairs "A=B" and "C=D" (both valid) have in common, which *joint
 * points to in q; 0 when they share none. */
static int shared_joint(const char *p, const char *q, const char **joint) {
    const char *pe = strchr(p, '='), *qe = strchr(q, '=');
    const char *pj[2] = {p, pe + 1}, *qj[2] = {q, qe + 1};
    size_t pn[2] = {(size_t)(pe - p), strlen(pe + 1)}, qn[2] = {(size_t)(qe - q), strlen(qe + 1)};
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
            if (pn[x] == qn[y] && !strncmp(pj[x], qj[y], pn[x])) {
                *joint = qj[y];
                return (int)qn[y];
            }
    return 0;
}

/* The options that take one value (--mirror-pair, --addend and --exclude are repeatable; --unit-scale and
 * --up are pm_cli_bvh_option's). */
static const char *const single_value_options[] = {
    "-o", "--output", "--schema", "--fps", "--threads", "--pca", "--exact-components", "--exact-leaf", "--modes", "--cache",
    "--exclude-end", "--exclude-start", "--facing", "--hips-axis", "--ground", "--root-smoothing", NULL};
static const char *const flags[] = {"--mirror", "--loop", "--keep-rest-frame", "--quiet", "-q", "--json", NULL};

static int parse_args(build_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->def = pm_default_database_def();
    a->bvh = pm_default_bvh_def();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    a->def.threads = cpus > 0 ? (int)PM_CLI_MIN(cpus, 64) : 1;
    a->schema = "ue-locomotion";
    a->inputs = calloc((size_t)argc, sizeof(char *));
    a->pair_spec = calloc((size_t)argc, sizeof(char *));
    if (!a->inputs || !a->pair_spec) return pm_cli_fail("build: out of memory");
    pm_cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int more = pm_cli_has_value(argc, argv, i), bvh_opt;
        if (!pm_cli_once_listed(&seen, "build", single_value_options, argc, argv, i)) return 2;
        if (!pm_cli_flag_once(&seen, "build", flags, s)) return 2;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(build_usage, stdout);
            return 0;
        } else if ((!strcmp(s, "-o") || !strcmp(s, "--output")) && more) a->output = argv[++i];
        else if (!strcmp(s, "--schema") && more) a->schema = argv[++i];
        else if (!strcmp(s, "--fps") && more) {
            if (!pm_cli_float(&a->def.fps, "build", s, argv[++i], 1.0f, 1000.0f)) return 2;
        } else if (!strcmp(s, "--mirror")) a->def.mirror = 1;
        else if (!strcmp(s, "--threads") && more) {
            if (!pm_cli_int(&a->def.threads, "build", s, argv[++i], 1, 64)) return 2;
        } else if (!strcmp(s, "--pca") && more) {
            if (!pm_cli_int(&a->def.pca_components, "build", s, argv[++i], 1, PM_MAX_PCA_COMPONENTS)) return 2;
            a->pca_given = 1;
        } else if (!strcmp(s, "--exact-components") && more) {
            if (!pm_cli_int(&a->def.exact_components, "build", s, argv[++i], 0, PM_MAX_PCA_COMPONENTS)) return 2;
        } else if (!strcmp(s, "--exact-leaf") && more) {
            if (!pm_cli_int(&a->def.exact_leaf_size, "build", s, argv[++i], 8, 4096)) return 2;
        } else if (!strcmp(s, "--modes") && more) {
            if (!parse_modes(argv[++i], &a->def.search_modes)) return 2;
        } else if (!strcmp(s, "--cache") && more) a->cache = argv[++i];
        else if (!strcmp(s, "--loop")) a->loop = 1;
        else if (!strcmp(s, "--exclude-end") && more) {
            if (!pm_cli_float(&a->def.exclude_end, "build", s, argv[++i], 0.0f, 1e5f)) return 2;
        } else if (!strcmp(s, "--exclude-start") && more) {
            if (!pm_cli_float(&a->def.exclude_start, "build", s, argv[++i], 0.0f, 1e5f)) return 2;
        } else if (!strcmp(s, "--keep-rest-frame")) a->def.trim_rest_first_frame = 0;
        else if (!strcmp(s, "--facing") && more) {
            const char *f = argv[++i];
            if (!strcmp(f, "legs")) a->def.root.facing_mode = PM_FACING_FROM_LEGS;
            else if (!strcmp(f, "hips")) a->def.root.facing_mode = PM_FACING_HIPS_AXIS;
            else return pm_cli_fail("build: --facing '%s' must be legs or hips", f) + 1;
        } else if (!strcmp(s, "--hips-axis") && more) {
            if (!parse_axis(argv[++i], &a->def.root.hips_axis)) return 2;
        } else if (!strcmp(s, "--ground") && more) {
            const char *g = argv[++i];
            if (!strcmp(g, "detect")) a->def.root.ground_mode = PM_GROUND_DETECT;
            else if (!strcmp(g, "zero")) a->def.root.ground_mode = PM_GROUND_ZERO;
            else return pm_cli_fail("build: --ground '%s' must be detect or zero", g) + 1;
        } else if (!strcmp(s, "--mirror-pair") && more) {
            const char *spec = argv[++i], *eq = strchr(spec, '=');
            if (!eq || eq == spec || !eq[1] || strchr(eq + 1, '='))
                return pm_cli_fail("build: --mirror-pair '%s' must be JOINT=JOINT", spec) + 1;
            if (strlen(eq + 1) == (size_t)(eq - spec) && !strncmp(spec, eq + 1, (size_t)(eq - spec)))
                return pm_cli_fail("build: --mirror-pair '%s' pairs a joint with itself (a joint without a partner "
                                   "needs no pair)", spec) + 1;
            /* A joint has one partner: with a second pair the later would silently replace the earlier. */
            for (int k = 0; k < a->pair_count; k++) {
                const char *joint;
                int n = shared_joint(a->pair_spec[k], spec, &joint);
                if (n)
                    return pm_cli_fail("build: --mirror-pair '%s': %.*s is already paired by --mirror-pair '%s'",
                                       spec, n, joint, a->pair_spec[k]) + 1;
            }
            a->pair_spec[a->pair_count++] = spec;
        } else if ((!strcmp(s, "--addend") || !strcmp(s, "--exclude")) && more) {
            int code = pm_cli_asset_rule_parse(&a->rules, s, argv[++i]);
            if (code) return code;
        } else if (!strcmp(s, "--root-smoothing") && more) {
            if (!pm_cli_float(&a->def.root.position_smoothing, "build", s, argv[++i], 0.0f, 2.0f)) return 2;
            a->def.root.facing_smoothing = a->def.root.position_smoothing;
        }
        else if ((bvh_opt = pm_cli_bvh_option(&a->bvh, &seen, "build", argc, argv, &i)) != 0) {
            if (bvh_opt < 0) return 2;
        } else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) a->quiet = 1;
        else if (!strcmp(s, "--json")) a->json = 1;
        else if (s[0] == '-' && s[1]) return pm_cli_fail("build: unknown or incomplete option '%s' (try posematch build --help)", s) + 1;
        else a->inputs[a->input_count++] = argv[i];
    }
    if (!a->output) return pm_cli_fail("build: no output given (-o DB.pmdb)") + 1;
    if (!a->output[0]) return pm_cli_fail("build: -o: the output path is empty") + 1;
    /* "" + "/<key>.pmdb" would be a file in the root directory. */
    if (a->cache && !a->cache[0]) return pm_cli_fail("build: --cache: the directory path is empty") + 1;
    /* DIR/<key>.pmdb must fit the path buffer: a cut one would name another file. */
    if (a->cache && strlen(a->cache) + CACHE_ENTRY_SUFFIX > CACHE_PATH_SIZE - 1)
        return pm_cli_fail("build: --cache DIR is too long (DIR/<key>.pmdb would have more than %d characters)",
                           CACHE_PATH_SIZE - 1) + 1;
    if (a->pair_count && !a->def.mirror) return pm_cli_fail("build: --mirror-pair needs --mirror") + 1;
    /* Facing from the legs reads no hips axis: the database would come out as if it were not given. */
    if (pm_cli_seen_has(&seen, "--hips-axis") && a->def.root.facing_mode != PM_FACING_HIPS_AXIS)
        return pm_cli_fail("build: --hips-axis applies to --facing hips; the facing is from the legs") + 1;
    if (a->input_count == 0) return pm_cli_fail("build: no input clips given") + 1;
    return -1;
}

static void free_args(build_args *a) {
    pm_cli_asset_rules_free(&a->rules);
    free(a->pair_spec);
    free(a->inputs);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Progress of long builds only: short ones (and the errors they end with) stay one line. */
#define PROGRESS_AFTER_S 1.0

/* Ctrl-C (or SIGTERM, or SIGHUP from a closed terminal) during a build: the signal that
 * arrived, so that the build stops at its next check and nothing is written - a killed write
 * would leave its temporary file behind. Atomic, not just sig_atomic_t: the signal may land on a
 * builder thread while the main thread reads it (a lock-free atomic is also safe to store from a
 * handler). */
static atomic_int interrupted;

static void on_interrupt(int signo) { atomic_store(&interrupted, signo); }

typedef struct signal_guard {
    struct sigaction old[3];
    int caught[3]; /* 1 where the handler was installed */
} signal_guard;

/* Catches one signal unless it came ignored: a shell starts background jobs of a script with
 * SIGINT ignored, and `trap '' INT TERM` (or nohup-like wrappers) ask that a signal not stop the
 * command - catching it anyway would cancel builds their caller meant to protect. */
static int guard_signal(int signo, struct sigaction *old) {
    if (sigaction(signo, NULL, old) != 0 || old->sa_handler == SIG_IGN) return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    return sigaction(signo, &sa, NULL) == 0;
}

static const int guarded_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static void guard_signals(signal_guard *g) {
    atomic_store(&interrupted, 0);
    for (int i = 0; i < 3; i++) g->caught[i] = guard_signal(guarded_signals[i], &g->old[i]);
}

static void release_signals(const signal_guard *g) {
    for (int i = 0; i < 3; i++)
        if (g->caught[i]) sigaction(guarded_signals[i], &g->old[i], NULL);
}

/* The exit status of a command ended by a signal, as a shell reports it. */
static int interrupted_exit(void) {
    int signo = atomic_load(&interrupted);
    pm_cli_fail("build: interrupted (%s): nothing was written",
                signo == SIGTERM ? "SIGTERM" : signo == SIGHUP ? "SIGHUP" : "SIGINT");
    return 128 + signo;
}

typedef struct progress_state {
    double t0, last;
    const char *stage; /* the stage of the last line printed */
    int quiet;
} progress_state;

/* A line per stage, and within the long ones (the library reports after every asset) at most
 * one every half second; an interrupt cancels the build. */
static int progress(void *user, const char *stage, float fraction) {
    progress_state *p = (progress_state *)user;
    double t = now_s() - p->t0;
    if (atomic_load(&interrupted)) return 1;
    if (p->quiet || t < PROGRESS_AFTER_S || (p->stage && !strcmp(p->stage, stage) && t - p->last < 0.5)) return 0;
    fprintf(stderr, "posematch: build: %-9s %3.0f%%  %.2f s\n", stage, 100.0 * fraction, t);
    p->stage = stage;
    p->last = t;
    return 0;
}

/* The mirror map of one clip: pairs found from names, then the --mirror-pair ones (a joint given
 * a new partner leaves its old one unpaired). Returns a malloc'd map, or NULL when no given pair
 * names two joints of this skeleton or the pairs only repeat those found from names (the library
 * then finds the map itself). *used counts, per pair, the clips it applied to. */
static int32_t *clip_mirror_map(const pm_skeleton *sk, const build_args *a, int *used) {
    int32_t *map = NULL;
    for (int k = 0; k < a->pair_count; k++) {
        const char *spec = a->pair_spec[k], *eq = strchr(spec, '=');
        /* (Room for any joint name a BVH file may hold, 1024 bytes: a longer one names none.) */
        char left[2048];
        snprintf(left, sizeof left, "%.*s", (int)(eq - spec), spec);
        int j = pm_skeleton_find_joint(sk, left), m = pm_skeleton_find_joint(sk, eq + 1);
        if (j < 0 || m < 0) continue;
        if (!map) {
            map = malloc((size_t)sk->joint_count * sizeof(int32_t));
            if (!map) return NULL;
            pm_skeleton_find_mirror_map(map, sk);
        }
        map[map[j]] = map[j];
        map[map[m]] = map[m];
        map[j] = m;
        map[m] = j;
        used[k]++;
    }
    /* A given map is part of the key: one equal to the map found from names would name a second
     * cache entry for the same database. */
    int32_t *found = map ? malloc((size_t)sk->joint_count * sizeof(int32_t)) : NULL;
    if (found) {
        pm_skeleton_find_mirror_map(found, sk);
        if (!memcmp(found, map, (size_t)sk->joint_count * sizeof(int32_t))) {
            free(map);
            map = NULL;
        }
        free(found);
    }
    return map;
}

/* A mirrored copy of a clip whose joints pair up nowhere (names without sides, no --mirror-pair)
 * is reflected with no joint swapped: its left leg stays "left" on the right side of the body, so
 * a channel naming a joint reads the other side in the copy. Legal, and said once per build.
 * Returns 0 when out of memory (after saying so). */
static int warn_unpaired_mirrors(const pm_asset_def *assets, const pm_clip *clips, const char *const *from, int n,
                                 int mirror) {
    int unpaired = 0, mirrored = 0, first = -1;
    for (int i = 0; i < n; i++) {
        if (!(assets[i].mirror < 0 ? mirror : assets[i].mirror)) continue;
        mirrored++;
        const int jc = clips[i].skeleton.joint_count;
        int pairs = 0;
        if (assets[i].mirror_map) /* --mirror-pair's */
            for (int j = 0; j < jc; j++) pairs += assets[i].mirror_map[j] > j;
        else {
            int32_t *found = malloc((size_t)(jc ? jc : 1) * sizeof(int32_t));
            if (!found) return pm_cli_fail("build: out of memory"), 0;
            pairs = pm_skeleton_find_mirror_map(found, &clips[i].skeleton);
            free(found);
        }
        if (!pairs && !unpaired++) first = i;
    }
    if (unpaired)
        pm_cli_warn("build: warning: %d of %d mirrored clips have no left/right joint pairs (%s): their copies swap no "
                    "joints, so a channel naming one side reads the other; pair joints with --mirror-pair A=B",
                    unpaired, mirrored, from[first]);
    return 1;
}

/* Grows the clip and asset arrays to hold `need` entries. */
static int reserve(pm_clip **clips, pm_asset_def **assets, int *cap, int need) {
    if (need <= *cap) return 1;
    int n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    pm_clip *c = realloc(*clips, (size_t)n * sizeof(pm_clip));
    if (!c) return 0;
    *clips = c;
    pm_asset_def *d = realloc(*assets, (size_t)n * sizeof(pm_asset_def));
    if (!d) return 0;
    *assets = d;
    *cap = n;
    return 1;
}

static int copy_file(const char *from, const char *to, pm_error *error) {
    size_t size;
    char *data = pm_cli_read_text(from, &size, error);
    if (!data) return 0;
    pm_result r = pm_file_write(to, data, size, error);
    free(data);
    return r == PM_OK;
}

/* A blend space: one baked clip per grid point, at the database's rate, appended to the clip
 * and asset arrays. Returns 0 after printing an error. */
static int add_blend_space(const char *path, const build_args *a, const pm_schema_origin *origin, pm_clip **clips,
                           pm_asset_def **assets, int *cap, int *loaded) {
    pm_error err;
    pm_blend_space_file space;
    if (pm_blend_space_load_json(&space, path, &a->bvh, &err) != PM_OK) return pm_cli_fail_error(&err), 0;
    const char *const *sample_clips = (const char *const *)space.clip_paths;
    if (pm_cli_check_not_input(a->output, sample_clips, space.clip_path_count, &err) != PM_OK) {
        pm_blend_space_file_free(&space);
        return pm_cli_fail_error(&err), 0;
    }
    pm_clip *baked = NULL;
    float *params = NULL;
    int n = 0;
    /* Bounded by what a database of this schema holds, so that a grid far too fine fails early. */
    int card = pm_schema_cardinality(a->def.schema);
    long long max_poses = card > 0 ? (long long)(PM_MAX_POSE_VALUES / (unsigned)card) : 0;
    pm_result r = pm_blend_space_file_bake_grid(&baked, &n, &params, max_poses, &space, a->def.fps, &err);
    int dims = pm_blend_space_dimensions(space.space);
    int negate = space.mirror_negate;
    pm_blend_space_file_free(&space);
    if (r != PM_OK) return pm_cli_fail("%s: %s", path, err.message), 0;
    /* The baked clips share the samples' skeleton: one check names the space's file. */
    if (n > 0 && pm_schema_check_clip(a->def.schema, origin, &baked[0], path, &err) != PM_OK) {
        pm_blend_space_free_clips(baked, n);
        free(params);
        return pm_cli_fail_error(&err), 0;
    }
    int ok = reserve(clips, assets, cap, *loaded + n);
    for (int k = 0; k < n; k++) {
        if (ok) {
            int i = (*loaded)++;
            (*clips)[i] = baked[k];
            (*assets)[i] = pm_default_asset_def(&(*clips)[i]);
            (*assets)[i].param_count = dims;
            for (int d = 0; d < dims && d < 3; d++) (*assets)[i].params[d] = params[(size_t)k * dims + d];
            (*assets)[i].mirror_negate_params = negate;
        } else pm_clip_destroy(&baked[k]);
    }
    free(baked); /* the clips moved into *clips */
    free(params);
    if (!ok) return pm_cli_fail("build: out of memory"), 0;
    return 1;
}

/* The --json line; a cache hit reports no build time and no thread count. */
static void print_json(const pm_database_info *info, double read_s, double build_s, double total_s, int cache_hit,
                       int threads) {
    printf("{\"poses\": %d, \"assets\": %d, \"bytes\": %zu, \"read_s\": %.4f, ", info->poses, info->assets, info->bytes,
           read_s);
    if (cache_hit) printf("\"build_s\": 0, \"total_s\": %.4f, \"cache_hit\": true, ", total_s);
    else printf("\"build_s\": %.4f, \"total_s\": %.4f, \"cache_hit\": false, \"threads\": %d, ", build_s, total_s, threads);
    printf("\"key\": \"%s\"}\n", info->key);
}

/* The --json line, flushed before the stderr summary: when stdout cannot take it the command
 * fails with one stderr line, not a summary announcing the database followed by the error. */
static int emit_json(const pm_database_info *info, double read_s, double build_s, double total_s, int cache_hit,
                     int threads) {
    print_json(info, read_s, build_s, total_s, cache_hit, threads);
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return 1;
    if (errno) pm_cli_fail("build: cannot write to stdout: %s", strerror(errno));
    else pm_cli_fail("build: cannot write to stdout");
    return 0;
}

/* One run's inputs as they are read: each clip (from a BVH file or baked from a blend space),
 * its asset, the input file it came from, and the read-ahead BVH files. */
typedef struct build_run {
    char **files;
    int file_count;
    pm_clip *clips;
    pm_asset_def *assets;
    const char **from; /* each clip's input file (a BVH or a blend space's JSON) */
    int loaded, cap;
    int32_t **maps; /* --mirror-pair maps per clip, or NULL */
    pm_cli_read_slot *slots; /* the BVH files, read ahead */
    pm_schema_origin *origin;
} build_run;

static void build_run_free(build_run *r) {
    pm_cli_read_slots_free(r->slots, r->file_count);
    free(r->slots);
    free(r->origin);
    for (int i = 0; r->maps && i < r->loaded; i++) free(r->maps[i]);
    free(r->maps);
    for (int i = 0; i < r->loaded; i++) pm_clip_destroy(&r->clips[i]);
    free(r->clips);
    free(r->assets);
    free(r->from);
    pm_cli_free_list(r->files, r->file_count);
}

/* The schema, the PCA sizes against it, the output and cache paths, and the input files (listed,
 * distinct, none of them the output). 1, or 0 after printing an error. */
static int check_command(build_run *r, build_args *a) {
    pm_error err;
    r->origin = malloc(sizeof *r->origin);
    if (!r->origin) return pm_cli_fail("build: out of memory"), 0;
    if (pm_schema_resolve(&a->schema_value, a->schema, r->origin, &err) != PM_OK) return pm_cli_fail_error(&err), 0;
    a->def.schema = &a->schema_value;
    /* The default PCA size fits small schemas; an explicit one must. */
    int card = pm_schema_cardinality(a->def.schema);
    if (a->def.pca_components > card) {
        if (a->pca_given)
            return pm_cli_fail("build: --pca %d is more than the %d values per pose of %s", a->def.pca_components, card,
                               r->origin->source),
                   0;
        a->def.pca_components = card;
    }
    if (a->def.exact_components > card)
        return pm_cli_fail("build: --exact-components %d is more than the %d values per pose of %s",
                           a->def.exact_components, card, r->origin->source),
               0;
    /* A cache that cannot be a directory is a mistaken command line: said before the work, not after
     * it as an entry that could not be stored. */
    if (pm_file_check_output(a->output, &err) != PM_OK ||
        (a->cache && pm_cli_check_directory_target(a->cache, "--cache", &err) != PM_OK))
        return pm_cli_fail_error(&err), 0;
    if (pm_cli_expand_inputs(&r->files, &r->file_count, a->inputs, a->input_count, &err) != PM_OK)
        return pm_cli_fail_error(&err), 0;
    if (r->file_count == 0) return pm_cli_fail("build: no .bvh or blend-space .json files found in the inputs"), 0;
    if (!pm_cli_check_distinct_inputs(r->files, r->file_count)) return 0;
    /* The database would replace a clip (or the schema) it is built from: -o given an input's name
     * by mistake. A blend space's clips are checked as it is read (and, being .bvh, are refused by
     * the extension check first: no database is named like a clip). */
    if (pm_cli_check_not_input(a->output, (const char *const *)r->files, r->file_count, &err) != PM_OK ||
        (r->origin->from_file && pm_cli_check_not_input(a->output, &a->schema, 1, &err) != PM_OK) ||
        pm_cli_check_output_extension(a->output, ".pmdb", "a database", &err) != PM_OK)
        return pm_cli_fail_error(&err), 0;
    return 1;
}

/* Every input into clips and assets, in input order. The BVH files are read on the builder's
 * threads first (blend spaces, which read their own samples, in the loop below); the loop then
 * takes each clip in turn. -1, or the exit code after printing an error (or after a signal). */
static int read_inputs(build_run *r, const build_args *a) {
    pm_error err;
    r->slots = calloc((size_t)r->file_count, sizeof *r->slots);
    int *wanted = calloc((size_t)r->file_count, sizeof *wanted);
    if (!r->slots || !wanted) {
        free(wanted);
        return pm_cli_fail("build: out of memory");
    }
    for (int i = 0; i < r->file_count; i++) wanted[i] = !pm_cli_has_suffix(r->files[i], ".json");
    pm_cli_read_clips(r->slots, r->files, wanted, r->file_count, &a->bvh, a->def.threads, &interrupted);
    free(wanted);
    for (int i = 0; i < r->file_count; i++) {
        if (atomic_load(&interrupted)) return interrupted_exit();
        const char *file = r->files[i];
        int before = r->loaded, space = pm_cli_has_suffix(file, ".json");
        if (space && !add_blend_space(file, a, r->origin, &r->clips, &r->assets, &r->cap, &r->loaded)) return 1;
        const char **grown = realloc(r->from, (size_t)(r->loaded + 1) * sizeof *r->from);
        if (!grown) return pm_cli_fail("build: out of memory");
        r->from = grown;
        for (int k = before; k < r->loaded; k++) r->from[k] = file;
        if (space) continue;
        r->from[r->loaded] = file;
        if (!reserve(&r->clips, &r->assets, &r->cap, r->loaded + 1)) return pm_cli_fail("build: out of memory");
        pm_cli_read_slot *slot = &r->slots[i];
        if (!slot->taken) { /* (not reached: files before a failure are all read) */
            slot->result = pm_bvh_read_file(&slot->clip, file, &a->bvh, &slot->error);
            slot->taken = 1;
        }
        if (slot->result != PM_OK) return pm_cli_fail_error(&slot->error);
        pm_clip *clip = &r->clips[r->loaded];
        *clip = slot->clip; /* moved */
        slot->taken = 0;
        if (pm_schema_check_clip(a->def.schema, r->origin, clip, file, &err) != PM_OK) {
            pm_clip_destroy(clip);
            return pm_cli_fail_error(&err);
        }
        if (a->loop) clip->looping = 1;
        r->assets[r->loaded] = pm_default_asset_def(clip);
        r->loaded++;
    }
    return -1;
}

/* The assets as the database takes them: names told apart and checked, clips whose forced units
 * look wrong counted in a warning, --mirror-pair maps, --addend/--exclude rules, mirrored clips
 * that pair no joints warned of. 1, or 0 after printing an error. */
static int prepare_assets(build_run *r, build_args *a) {
    pm_clip *clips = r->clips;
    pm_asset_def *assets = r->assets;
    const int loaded = r->loaded;
    if (!pm_cli_name_apart(clips, r->from, loaded) || !pm_cli_check_unique_names(clips, r->from, loaded, a->def.mirror) ||
        !pm_cli_check_name_lengths(clips, r->from, loaded, a->def.mirror))
        return 0;
    /* Units or an up axis forced on every clip can be wrong for some: say so once per build. They
     * outrank a blend space's own, so its baked clips are counted too (they stand as its samples do). */
    if (pm_cli_bvh_forced(&a->bvh)) {
        int odd = 0, first = -1;
        float first_height = 0.0f, height;
        for (int i = 0; i < loaded; i++)
            if (pm_cli_clip_scale_odd(&clips[i], &height) && !odd++) first = i, first_height = height;
        if (odd)
            pm_cli_warn("build: warning: %d of %d clips stand where no person does (hips outside 0.3..3 m above the "
                        "feet; %s: %.3g m) as --unit-scale/--up read them",
                        odd, loaded, r->from[first], (double)first_height);
    }
    /* Assets point at clips: fix the pointers now that the arrays no longer move. */
    for (int i = 0; i < loaded; i++) assets[i].clip = &clips[i];
    if (a->pair_count) {
        r->maps = calloc((size_t)(loaded ? loaded : 1), sizeof(int32_t *));
        int *used = calloc((size_t)a->pair_count, sizeof(int));
        if (!r->maps || !used) {
            free(used);
            return pm_cli_fail("build: out of memory"), 0;
        }
        for (int i = 0; i < loaded; i++) assets[i].mirror_map = r->maps[i] = clip_mirror_map(&clips[i].skeleton, a, used);
        int unused = -1;
        for (int k = 0; k < a->pair_count && unused < 0; k++)
            if (!used[k]) unused = k;
        free(used);
        if (unused >= 0) return pm_cli_fail("build: --mirror-pair '%s': no clip has both joints", a->pair_spec[unused]), 0;
    }
    int *bvh_named = calloc((size_t)(loaded ? loaded : 1), sizeof(int));
    if (!bvh_named) return pm_cli_fail("build: out of memory"), 0;
    for (int i = 0; i < loaded; i++) bvh_named[i] = pm_cli_bvh_file(r->from, i) != NULL;
    int rules_failed = pm_cli_asset_rules_apply(&a->rules, assets, clips, bvh_named, loaded, a->def.mirror);
    free(bvh_named);
    if (rules_failed) return 0;
    return warn_unpaired_mirrors(assets, clips, r->from, loaded, a->def.mirror);
}

/* With --cache: the entry's path for these inputs and settings (cache_path), and 1 when it holds
 * the database, copied to the output and reported; 0 to build; -1 after printing an error. */
static int from_cache(char *cache_path, const build_run *r, const build_args *a, double t0, double t_read) {
    pm_error err;
    char key[33];
    if (pm_database_compute_key(key, &a->def, r->assets, r->loaded, &err) != PM_OK) return pm_cli_fail_error(&err), -1;
    if (mkdir(a->cache, 0755) != 0 && errno != EEXIST)
        return pm_cli_fail("%s: --cache: cannot create the directory: %s", a->cache, strerror(errno)), -1;
    snprintf(cache_path, CACHE_PATH_SIZE, "%s/%s.pmdb", a->cache, key);
    pm_database *cached = NULL;
    if (access(cache_path, R_OK) != 0 || pm_database_load(&cached, cache_path, NULL, &err) != PM_OK) return 0;
    pm_database_info info;
    pm_database_get_info(&info, cached);
    pm_database_destroy(cached);
    if (strcmp(info.key, key) || !copy_file(cache_path, a->output, &err)) return 0;
    if (a->json && !emit_json(&info, t_read, 0.0, now_s() - t0, 1, a->def.threads)) return -1;
    if (!a->quiet) fprintf(stderr, "posematch: build: cache hit %s\n", cache_path);
    return 1;
}

int pm_cmd_build(int argc, char **argv) {
    build_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc >= 0) {
        free_args(&a);
        return rc;
    }
    pm_error err;
    build_run r;
    memset(&r, 0, sizeof r);
    pm_database *db = NULL;
    rc = 1;
    double t0 = now_s();
    signal_guard guard;
    guard_signals(&guard);
    if (!check_command(&r, &a)) goto done;
    if ((rc = read_inputs(&r, &a)) >= 0) goto done;
    rc = 1;
    if (!prepare_assets(&r, &a)) goto done;
    double t_read = now_s() - t0;
    if (!a.quiet && t_read >= PROGRESS_AFTER_S) fprintf(stderr, "posematch: build: read %d clips in %.2f s\n", r.loaded, t_read);
    progress_state ps = {t0, 0.0, NULL, a.quiet};
    a.def.progress = progress;
    a.def.progress_user = &ps;

    char cache_path[CACHE_PATH_SIZE] = "";
    if (a.cache) {
        int hit = from_cache(cache_path, &r, &a, t0, t_read);
        if (hit) {
            rc = hit > 0 ? 0 : 1;
            goto done;
        }
    }
    double t_build = now_s();
    /* (A signal that came before this cancels the build at its first progress call.) */
    pm_result built = pm_database_build(&db, &a.def, r.assets, r.loaded, &err);
    if (built == PM_ERR_CANCELLED || (built == PM_OK && atomic_load(&interrupted))) {
        rc = interrupted_exit();
        goto done;
    }
    if (built != PM_OK) {
        pm_cli_fail_error(&err);
        goto done;
    }
    t_build = now_s() - t_build;
    if (pm_database_save(db, a.output, &err) != PM_OK) {
        pm_cli_fail_error(&err);
        goto done;
    }
    if (cache_path[0] && pm_database_save(db, cache_path, &err) != PM_OK)
        pm_cli_warn("build: warning: could not store the cache entry: %s", err.message);
    pm_database_info info;
    pm_database_get_info(&info, db);
    if (a.json && !emit_json(&info, t_read, t_build, now_s() - t0, 0, a.def.threads)) goto done;
    if (!a.quiet)
        fprintf(stderr, "posematch: build: %d poses, %d asset%s, %zu bytes -> %s (%.2f s)\n", info.poses, info.assets,
                info.assets == 1 ? "" : "s", info.bytes, a.output, now_s() - t0);
    rc = 0;
done:
    release_signals(&guard);
    pm_database_destroy(db);
    build_run_free(&r);
    free_args(&a);
    return rc;
}

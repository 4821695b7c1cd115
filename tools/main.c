/* posematch command-line tool: thin commands over the library. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "posematch/posematch.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} command;

static const command commands[] = {
    {"inspect", pm_cmd_inspect, "inspect CLIP.bvh [--json] [--unit-scale M] [--up y|z]"},
    {"build", pm_cmd_build,
     "build CLIP.bvh|SPACE.json|DIR... -o DB.pmdb [--schema NAME|FILE] [--fps N] [--mirror] [--threads N] [--pca K] [--modes M,...] [--cache DIR]"},
    {"info", pm_cmd_info, "info DB.pmdb [--json] [--assets] [--verify]"},
    {"search", pm_cmd_search, "search DB.pmdb (--queries Q.f32 | --query-clip C.bvh --frame F) [--mode M] [--json]"},
    {"export-features", pm_cmd_export_features, "export-features DB.pmdb -o PREFIX"},
    {"bench", pm_cmd_bench, "bench DB.pmdb [--queries N] [--far CLIP.bvh|DIR ...] [--threads N] [--json]"},
    {"blend", pm_cmd_blend, "blend SPACE.json --param X[,Y[,Z]] [-o OUT.bvh [--fps N]] [--weights [--json]]"},
    {"synth", pm_cmd_synth, "synth OUT_DIR [--clips N] [--seed S] [--fps F] [--name PREFIX]"},
};

static void usage(FILE *f) {
    fprintf(f, "posematch %s - motion matching toolkit\nusage:\n", pm_version_string());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) fprintf(f, "  posematch %s\n", commands[i].usage);
    fprintf(f, "  posematch COMMAND --help   details of one command\n");
}

/* Output lost to a full disk or a closed descriptor must not pass for a result: a command that
 * succeeded fails when stdout could not take everything it printed (one stderr line, as every
 * error; a command that failed has said why already). */
static int stdout_checked(int rc, const char *what) {
    errno = 0;
    int flush_failed = fflush(stdout) != 0;
    if ((flush_failed || ferror(stdout)) && rc == 0) {
        if (flush_failed && errno) fprintf(stderr, "posematch: %s: cannot write to stdout: %s\n", what, strerror(errno));
        else fprintf(stderr, "posematch: %s: cannot write to stdout\n", what);
        rc = 1;
    }
    return rc;
}

int main(int argc, char **argv) {
    /* A missing command is an error like any other: one stderr line (the usage is on --help). */
    if (argc < 2) {
        char names[256] = "";
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", commands[i].name);
        pm_cli_fail("no command given (%s; try posematch --help)", names);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return stdout_checked(0, "--help");
    }
    if (!strcmp(argv[1], "--version")) {
        printf("posematch %s\n", pm_version_string());
        return stdout_checked(0, "--version");
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            int rc = stdout_checked(commands[i].run(argc - 1, argv + 1), commands[i].name);
            /* Warnings only beside a result: a failed command's one stderr line is its error. */
            pm_cli_warnings_end(rc == 0);
            return rc;
        }
    pm_cli_fail("unknown command '%s' (try posematch --help)", argv[1]);
    return 2;
}

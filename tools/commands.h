/* The posematch subcommands. Each takes argv after the command name (argv[0] is the command)
 * and returns the process exit code; errors go to stderr as one line. */
#ifndef PM_COMMANDS_H
#define PM_COMMANDS_H

int pm_cmd_inspect(int argc, char **argv);
int pm_cmd_build(int argc, char **argv);
int pm_cmd_info(int argc, char **argv);
int pm_cmd_search(int argc, char **argv);
int pm_cmd_export_features(int argc, char **argv);
int pm_cmd_bench(int argc, char **argv);
int pm_cmd_blend(int argc, char **argv);
int pm_cmd_synth(int argc, char **argv);

#endif

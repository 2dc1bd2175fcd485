/* The one option parser of the producer commands: each command describes its options in a
 * table (name, kind, where the value goes) and cli_opts_parse reads argv against it, so every
 * command checks numbers, durations and repeats the same way and answers in one of three ways. */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H

#include <stdint.h>

enum cli_opt_kind {
    CLI_OPT_FLAG,     /* no value: *(int *)to = 1 */
    CLI_OPT_STRING,   /* *(const char **)to = the value as given (the last one wins) */
    CLI_OPT_LONG,     /* *(long *)to = a whole number from lo to hi, nothing after it */
    CLI_OPT_DURATION, /* *(int64_t *)to = milliseconds, as sa_duration_parse reads them */
    CLI_OPT_LIST,     /* repeatable: appended to (const char **)to, *count of them, at most hi */
    CLI_OPT_CALL,     /* call(to, value): 0 to go on, -1 after saying on stderr what is wrong */
};

/* One option. The table ends with an entry whose name and letter are both 0. */
struct cli_opt {
    const char *name; /* the long name without "--"; NULL for a letter alone (-n) */
    char letter;      /* a one-letter alias (-n), or 0 */
    enum cli_opt_kind kind;
    void *to;
    long lo, hi; /* CLI_OPT_LONG: the range; CLI_OPT_LIST: hi is the most kept */
    int *count;  /* CLI_OPT_LIST: how many are in to */
    int *given;  /* if not NULL, set to 1 when the option is on the command line */
    int (*call)(void *to, const char *value);
};

enum cli_opts_result {
    CLI_OPTS_OK,   /* parsed: the words that are not options are argv[*rest..argc) */
    CLI_OPTS_HELP, /* --help or -h: the usage was printed on stdout; the command exits 0 */
    CLI_OPTS_BAD,  /* an unknown option, a missing or bad value: said on stderr; exit 2 */
};

/* Reads the options of argv[1..argc) (argv[0] is the command's name) against table, in any
 * order among the other words (which getopt moves to the end), and stores each value where its
 * entry says. cmd ("dlq", "series list") starts every error line; usage is printed for --help. */
enum cli_opts_result cli_opts_parse(const char *cmd, const char *usage, const struct cli_opt *table,
                                    int argc, char **argv, int *rest);

/* The exit code of a result other than CLI_OPTS_OK: 0 after help, 2 for bad input. */
int cli_opts_exit(enum cli_opts_result r);

#endif

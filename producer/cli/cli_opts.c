/* Table-driven option parsing for every producer command (cli_opts.h). getopt_long does the
 * reading (abbreviations, --name=value, words after options), built from the command's table;
 * this file turns each value into its kind with one check per kind, so `--limit 10x` is refused
 * by every command alike. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli_exit.h"
#include "cli_opts.h"
#include "timeparse.h"

#define OPTS_MAX 48    /* the most options a command has, with room */
#define VAL_BASE 0x100 /* getopt's value for table entry i is VAL_BASE + i */

static int
takes_value(const struct cli_opt *o)
{
    return o->kind != CLI_OPT_FLAG;
}

/* "--limit" or "-n", for messages. */
static const char *
shown(const struct cli_opt *o, char *buf, size_t cap)
{
    if (o->name)
        snprintf(buf, cap, "--%s", o->name);
    else
        snprintf(buf, cap, "-%c", o->letter);
    return buf;
}

static int
store_long(const char *cmd, const struct cli_opt *o, const char *value)
{
    char *end = NULL, flag[64];
    long v;

    errno = 0;
    v = strtol(value, &end, 10);
    if (end == value || *end || errno == ERANGE || v < o->lo || v > o->hi) {
        cli_error(EXIT_USAGE, "%s: %s must be %ld to %ld", cmd, shown(o, flag, sizeof(flag)), o->lo,
                  o->hi);
        return -1;
    }
    *(long *)o->to = v;
    return 0;
}

static int
store_duration(const char *cmd, const struct cli_opt *o, const char *value)
{
    struct sa_err err = {0};
    char flag[64];

    if (sa_duration_parse(value, (int64_t *)o->to, &err) != SA_OK) {
        cli_error(EXIT_USAGE, "%s: %s: %s", cmd, shown(o, flag, sizeof(flag)), err.msg);
        return -1;
    }
    return 0;
}

static int
store_list(const char *cmd, const struct cli_opt *o, const char *value)
{
    char flag[64];

    if (*o->count >= o->hi) {
        cli_error(EXIT_USAGE, "%s: more than %ld %s flags", cmd, o->hi,
                  shown(o, flag, sizeof(flag)));
        return -1;
    }
    ((const char **)o->to)[(*o->count)++] = value;
    return 0;
}

/* Stores one option's value where its entry says: 0, or -1 after saying what is wrong. */
static int
store(const char *cmd, const struct cli_opt *o, const char *value)
{
    if (o->given)
        *o->given = 1;
    switch (o->kind) {
    case CLI_OPT_FLAG:
        *(int *)o->to = 1;
        return 0;
    case CLI_OPT_STRING:
        *(const char **)o->to = value;
        return 0;
    case CLI_OPT_LONG:
        return store_long(cmd, o, value);
    case CLI_OPT_DURATION:
        return store_duration(cmd, o, value);
    case CLI_OPT_LIST:
        return store_list(cmd, o, value);
    case CLI_OPT_CALL:
        return o->call(o->to, value);
    }
    return -1;
}

/* getopt_long's tables for this command: long options and the short ones ("-h" and letters). */
static void
build(const struct cli_opt *table, struct option *longs, char *shorts, size_t cap)
{
    size_t k = 0, s = 0;

    shorts[s++] = ':'; /* a missing value answers ':', not '?' */
    shorts[s++] = 'h';
    for (size_t i = 0; (table[i].name || table[i].letter) && k + 2 < OPTS_MAX; i++) {
        if (table[i].name)
            longs[k++] = (struct option){table[i].name,
                                         takes_value(&table[i]) ? required_argument : no_argument,
                                         NULL, VAL_BASE + (int)i};
        if (table[i].letter && s + 3 < cap) {
            shorts[s++] = table[i].letter;
            if (takes_value(&table[i]))
                shorts[s++] = ':';
        }
    }
    longs[k++] = (struct option){"help", no_argument, NULL, 'h'};
    longs[k] = (struct option){NULL, 0, NULL, 0};
    shorts[s] = '\0';
}

/* The table entry getopt answered c for, or NULL. */
static const struct cli_opt *
entry_for(const struct cli_opt *table, int c)
{
    for (size_t i = 0; table[i].name || table[i].letter; i++)
        if (c == VAL_BASE + (int)i || (table[i].letter && c == table[i].letter))
            return &table[i];
    return NULL;
}

enum cli_opts_result
cli_opts_parse(const char *cmd, const char *usage, const struct cli_opt *table, int argc,
               char **argv, int *rest)
{
    struct option longs[OPTS_MAX];
    char shorts[2 * OPTS_MAX + 3];
    const struct cli_opt *o;
    int c;

    build(table, longs, shorts, sizeof(shorts));
    opterr = 0;
    optind = 0; /* getopt starts afresh (a command may parse after another parse) */
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return CLI_OPTS_HELP;
        }
        if (c == ':') {
            cli_error(EXIT_USAGE, "%s: %s needs a value", cmd, argv[optind - 1]);
            return CLI_OPTS_BAD;
        }
        if (!(o = entry_for(table, c))) {
            cli_error(EXIT_USAGE, "%s: unknown option %s", cmd, argv[optind - 1]);
            return CLI_OPTS_BAD;
        }
        if (store(cmd, o, optarg) != 0)
            return CLI_OPTS_BAD;
    }
    *rest = optind;
    return CLI_OPTS_OK;
}

int
cli_opts_exit(enum cli_opts_result r)
{
    return r == CLI_OPTS_HELP ? EXIT_OK : EXIT_USAGE;
}

/* sendat series pause|resume ID and sendat series list: pausing skips the occurrences that
 * fall due meanwhile and keeps the chain going (series_status.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "series_status.h"
#include "series_stop.h"
#include "timeparse.h"

static const char usage[] =
    "usage: sendat series pause ID [--server URL]\n"
    "       sendat series resume ID [--server URL]\n"
    "       sendat series list [--server URL] [--json]\n"
    "  pause/resume print one of: paused / resumed (exit 0), too late: the series was\n"
    "  cancelled or finished at TIME (exit 3), unknown id (exit 4).\n"
    "  Occurrences due while a series is paused are skipped: status says \"skipped (paused)\".\n"
    "  list prints one line per series: ID STATE (active, paused, cancelled or finished), its\n"
    "  next fire (UTC; - when none is ahead), zone and cron; --json: an array of\n"
    "  {id, state, cron, tz, next}.\n";

static int
answer(const struct pause_result *res, int pause)
{
    char at[40];

    sa_time_format(at, sizeof(at), res->at_ms);
    switch (res->outcome) {
    case PAUSE_DONE:
        puts(pause ? "paused" : "resumed");
        return EXIT_OK;
    case PAUSE_CANCELLED:
        printf("too late: the series was cancelled at %s\n", at);
        return EXIT_TOO_LATE;
    case PAUSE_FINISHED:
        printf("too late: the series finished at %s\n", at);
        return EXIT_TOO_LATE;
    case PAUSE_UNKNOWN:
        break;
    }
    puts("unknown id");
    return EXIT_UNKNOWN;
}

static int
pause_or_resume(int argc, char **argv, int pause)
{
    struct cli cli = {0};
    struct sa_nats *n = NULL;
    struct pause_result res;
    struct sa_err err = {0};
    const char *id = NULL;
    int code;

    if (!cli_id_start(argc, argv, usage, 0, &cli, &id, &n, &code))
        return code;
    code = cli_claim_keys(&cli); /* the pause record carries a MAC */
    if (code == EXIT_OK && series_pause(n, id, pause, &res, &err) != SA_OK)
        code = cli_error(EXIT_FAIL, "series %s: %s", argv[0], err.msg);
    else if (code == EXIT_OK)
        code = answer(&res, pause);
    cli_close(n);
    return code;
}

static const char *
str(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "-";
}

/* ID STATE NEXT ZONE CRON: the cron last, as it holds spaces. */
static void
print_series(json_t *s)
{
    printf("%s %s next %s %s cron \"%s\"\n", str(s, "id"), str(s, "state"), str(s, "next"),
           str(s, "tz"), str(s, "cron"));
}

static void
print_json(json_t *all)
{
    json_dumpf(all, stdout, JSON_COMPACT);
    putchar('\n');
}

static int
list(int argc, char **argv)
{
    struct cli cli = {0};
    const struct cli_opt table[] = {
        CLI_OPT_SERVER(&cli),
        CLI_OPT_JSON(&cli),
        {0},
    };
    struct sa_nats *n = NULL;
    struct sa_err err = {0};
    json_t *all = NULL;
    size_t i;
    json_t *s;
    int rest = 0, code;
    enum cli_opts_result r = cli_opts_parse("series list", usage, table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (rest != argc)
        return cli_error(EXIT_USAGE, "series list takes no argument");
    if ((code = cli_connect(&cli, &n)) != EXIT_OK)
        return code;
    sa_keyring_free(cli_keyring_optional(&cli)); /* pause and cancel records checked with it */
    all = json_array();
    if (series_list(n, all, &err) != SA_OK)
        code = cli_error(EXIT_FAIL, "series list: %s", err.msg);
    if (code == EXIT_OK && cli.json)
        print_json(all);
    else if (code == EXIT_OK)
        json_array_foreach(all, i, s) print_series(s);
    json_decref(all);
    cli_close(n);
    return code;
}

int
cmd_series(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (!strcmp(argv[1], "pause") || !strcmp(argv[1], "resume"))
        return pause_or_resume(argc - 1, argv + 1, !strcmp(argv[1], "pause"));
    if (!strcmp(argv[1], "list"))
        return list(argc - 1, argv + 1);
    return cli_error(EXIT_USAGE, "series: unknown subcommand %s (pause, resume or list)", argv[1]);
}

/* sendat preview --cron EXPR --tz ZONE [-n N] [--from TIME] [--json]: the next fires in local
 * time and UTC, with a warning on each that falls into a DST gap or overlap (--json: as the
 * API's /v1/series/{id}/ahead gives them). Needs no server. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cron.h"
#include "series_status.h"
#include "timeparse.h"

static const char usage[] =
    "usage: sendat preview --cron EXPR --tz ZONE [-n N] [--from TIME] [--json]\n"
    "  prints the next N (default 10) fires in local time and UTC; --json: an array of\n"
    "  {at, local, dst} (dst: gap, overlap or null)\n";

static void
print_fire(const char *tz, int64_t at, int flags)
{
    char local[64], utc[40];

    sa_tz_format_local(local, sizeof(local), tz, at);
    sa_time_format(utc, sizeof(utc), at);
    printf("%s  (%s)", local, utc);
    if (flags & SA_CRON_GAP)
        printf("  warning: DST gap: the local time does not exist that day; fires once at the "
               "first valid instant after it");
    if (flags & SA_CRON_OVERLAP)
        printf("  warning: DST overlap: the local time happens twice that day; fires once, at the "
               "first");
    putchar('\n');
}

int
cmd_preview(int argc, char **argv)
{
    const char *cron = NULL, *tz = NULL, *from = NULL;
    long n = 10;
    int json = 0;
    const struct cli_opt table[] = {
        {.name = "cron", .kind = CLI_OPT_STRING, .to = &cron},
        {.name = "tz", .kind = CLI_OPT_STRING, .to = &tz},
        {.name = "from", .kind = CLI_OPT_STRING, .to = &from},
        {.letter = 'n', .kind = CLI_OPT_LONG, .to = &n, .lo = 1, .hi = 10000},
        {.name = "json", .kind = CLI_OPT_FLAG, .to = &json},
        {0},
    };
    struct sa_cron *c = NULL;
    struct sa_err err = {0};
    json_t *all = NULL;
    int64_t at = sa_now_ms();
    int rest = 0, flags = 0;
    enum cli_opts_result r = cli_opts_parse("preview", usage, table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (!cron || !tz || rest != argc)
        return cli_error(EXIT_USAGE, "preview: give --cron EXPR --tz ZONE [-n 1..10000]");
    if ((from && sa_time_parse_read(from, at, &at, &err) != SA_OK) ||
        sa_tz_check(tz, &err) != SA_OK || sa_cron_parse(&c, cron, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "preview: %s", err.msg);
    all = json ? json_array() : NULL;
    for (long i = 0; i < n && sa_cron_next(c, tz, at, &at, &flags, &err) == SA_OK; i++)
        if (all)
            json_array_append_new(all, series_fire_json(tz, at, flags));
        else
            print_fire(tz, at, flags);
    sa_cron_free(c);
    if (all) {
        json_dumpf(all, stdout, JSON_COMPACT);
        putchar('\n');
        json_decref(all);
    }
    return EXIT_OK;
}

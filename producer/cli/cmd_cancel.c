/* sendat cancel ID: races the consumers for the task's claim (cancel.c, invariant 3) and
 * answers cancelled (0), too late (3) or unknown id (4). */
#include <stdio.h>
#include <string.h>

#include "cancel.h"
#include "cli.h"
#include "group.h"
#include "layout.h"
#include "timeparse.h"

static const char usage[] =
    "usage: sendat cancel ID [--server URL]\n"
    "       sendat cancel --group NAME [--server URL]\n"
    "  prints one of: cancelled (exit 0), too late: sent at TIME (exit 3),\n"
    "  unknown id (exit 4)\n"
    "  --group: cancels every task of the group not sent yet and prints\n"
    "  cancelled N, too late M (exit 0; a group nobody booked: 0 and 0)\n";

/* sendat cancel --group NAME: every task of the group not sent yet. */
static int
cancel_group(const struct cli *cli, const char *group)
{
    struct sa_nats *n = NULL;
    struct group_result res;
    struct sa_err err = {0};
    int code;

    if (!*group)
        return cli_error(EXIT_USAGE, "cancel: --group needs a NAME");
    if ((code = cli_claim_keys(cli)) != EXIT_OK || (code = cli_connect(cli, &n)) != EXIT_OK)
        return code;
    if (group_cancel(n, group, &res, &err) != SA_OK)
        code = cli_error(cli_exit_for(err.code), "cancel --group: %s", err.msg);
    else
        printf("cancelled %ld, too late %ld\n", res.cancelled, res.too_late);
    cli_close(n);
    return code;
}

/* sendat cancel ID */
static int
cancel_one(const struct cli *cli, const char *id)
{
    struct sa_nats *n = NULL;
    struct cancel_result res;
    struct sa_err err = {0};
    char at[40];
    int code;

    if (!sa_layout_id_valid(id))
        return cli_unknown_id();
    if ((code = cli_claim_keys(cli)) != EXIT_OK || (code = cli_connect(cli, &n)) != EXIT_OK)
        goto out;
    if (cancel_run(n, id, &res, &err) != SA_OK) {
        code = cli_error(EXIT_FAIL, "cancel: %s", err.msg);
        goto out;
    }
    sa_time_format(at, sizeof(at), res.at_ms);
    switch (res.outcome) {
    case CANCEL_DONE:
        puts("cancelled");
        code = EXIT_OK;
        break;
    case CANCEL_SENT:
        printf("too late: sent at %s\n", at);
        code = EXIT_TOO_LATE;
        break;
    case CANCEL_SENDING:
        printf("too late: being sent by %s since %s\n", res.by, at);
        code = EXIT_TOO_LATE;
        break;
    case CANCEL_SERIES_FINISHED:
        printf("too late: the series finished at %s\n", at);
        code = EXIT_TOO_LATE;
        break;
    case CANCEL_UNKNOWN:
        code = cli_unknown_id();
        break;
    }
out:
    cli_close(n);
    return code;
}

/* One option table for both forms: `--group NAME` and `--group=NAME` alike. */
int
cmd_cancel(int argc, char **argv)
{
    struct cli cli = {0};
    const char *group = NULL;
    const struct cli_opt table[] = {
        {.name = "group", .kind = CLI_OPT_STRING, .to = &group},
        CLI_OPT_SERVER(&cli),
        {0},
    };
    int rest = 0;
    enum cli_opts_result r = cli_opts_parse("cancel", usage, table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (group && rest < argc)
        return cli_error(EXIT_USAGE, "cancel: --group takes no task id (%s)", argv[rest]);
    if (group)
        return cancel_group(&cli, group);
    if (rest != argc - 1)
        return cli_error(EXIT_USAGE, "cancel: give exactly one task id");
    return cancel_one(&cli, argv[rest]);
}

/* sendat cancel ID: races the consumers for the task's claim (cancel.c, invariant 3) and
 * answers cancelled (0), too late (3) or unknown id (4). */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cancel.h"
#include "cli.h"
#include "group.h"
#include "layout.h"
#include "timeparse.h"

static const char usage[] =
    "usage: sendat cancel ID [--server URL] [--json]\n"
    "       sendat cancel --group NAME [--server URL]\n"
    "  prints one of: cancelled (exit 0), too late: sent at TIME (exit 3),\n"
    "  unknown id (exit 4); --json: {\"id\", \"result\": \"cancelled\" | \"too late\" |\n"
    "  \"unknown id\", \"reason\": that line}\n"
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

/* The answer as a line: cancelled, too late: ... or unknown id; its exit code. */
static int
answer_text(const struct cancel_result *res, const char *at, char *out, size_t cap)
{
    switch (res->outcome) {
    case CANCEL_DONE:
        snprintf(out, cap, "cancelled");
        return EXIT_OK;
    case CANCEL_SENT:
        snprintf(out, cap, "too late: sent at %s", at);
        return EXIT_TOO_LATE;
    case CANCEL_SENDING:
        snprintf(out, cap, "too late: being sent by %s since %s", res->by, at);
        return EXIT_TOO_LATE;
    case CANCEL_SERIES_FINISHED:
        snprintf(out, cap, "too late: the series finished at %s", at);
        return EXIT_TOO_LATE;
    case CANCEL_UNKNOWN:
        break;
    }
    snprintf(out, cap, "unknown id");
    return EXIT_UNKNOWN;
}

/* --json: {"id", "result": "cancelled" | "too late" | "unknown id", "reason"} with the line
 * the plain answer prints as reason. */
static void
print_json(const char *id, int code, const char *text)
{
    json_t *o = json_pack("{s:s, s:s, s:s}", "id", id, "result",
                          code == EXIT_OK         ? "cancelled"
                          : code == EXIT_TOO_LATE ? "too late"
                                                  : "unknown id",
                          "reason", text);

    json_dumpf(o, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(o);
}

/* sendat cancel ID [--json] */
static int
cancel_one(const struct cli *cli, const char *id)
{
    struct sa_nats *n = NULL;
    struct cancel_result res;
    struct sa_err err = {0};
    char at[40], text[256];
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
    code = answer_text(&res, at, text, sizeof(text));
    if (cli->json)
        print_json(id, code, text);
    else
        puts(text);
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
        CLI_OPT_JSON(&cli),
        {0},
    };
    int rest = 0;
    enum cli_opts_result r = cli_opts_parse("cancel", usage, table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (group && cli.json)
        return cli_error(EXIT_USAGE, "cancel: --json is for one task id, not --group");
    if (group && rest < argc)
        return cli_error(EXIT_USAGE, "cancel: --group takes no task id (%s)", argv[rest]);
    if (group)
        return cancel_group(&cli, group);
    if (rest != argc - 1)
        return cli_error(EXIT_USAGE, "cancel: give exactly one task id");
    return cancel_one(&cli, argv[rest]);
}

/* sendat dlq list|show|replay|purge: the dead-letter stream, read and worked through from the
 * command line. Replay publishes a fresh copy (attempt 1, a replay Msg-Id derived from the
 * dead letter's sequence) before it deletes the dead letter, and sets the claim back to
 * "retrying" so a consumer takes it (invariant 1: the successor exists before the original
 * goes). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "claim.h"
#include "cli.h"
#include "dlq.h"
#include "task.h"
#include "timeparse.h"

#define DLQ_LIST_MAX 100000

static const char usage[] =
    "usage: sendat dlq list [--json] [--limit N]\n"
    "       sendat dlq show ID [--json] [--full]   (--full: recipients, headers and body too)\n"
    "       sendat dlq replay (ID | --all) [--at TIME]\n"
    "       sendat dlq purge (ID | --all)\n"
    "  common: [--server URL] [--key-file FILE]\n";

struct dlq_opts {
    struct cli cli;
    const char *verb, *id, *at;
    int all, full;
    long limit;
};

/* Reads the options and VERB [ID] into o. */
static enum cli_opts_result
parse(struct dlq_opts *o, int argc, char **argv)
{
    const struct cli_opt table[] = {
        CLI_OPT_SERVER(&o->cli),
        CLI_OPT_KEY_FILE(&o->cli),
        CLI_OPT_JSON(&o->cli),
        {.name = "all", .kind = CLI_OPT_FLAG, .to = &o->all},
        {.name = "at", .kind = CLI_OPT_STRING, .to = &o->at},
        {.name = "limit", .kind = CLI_OPT_LONG, .to = &o->limit, .lo = 1, .hi = DLQ_LIST_MAX},
        {.name = "full", .kind = CLI_OPT_FLAG, .to = &o->full},
        {0},
    };
    int i = 0;
    enum cli_opts_result r;

    o->limit = 1000;
    if ((r = cli_opts_parse("dlq", usage, table, argc, argv, &i)) != CLI_OPTS_OK)
        return r;
    if (i >= argc)
        return cli_bad("dlq: give list, show, replay or purge");
    o->verb = argv[i++];
    if (i < argc)
        o->id = argv[i++];
    if (i < argc)
        return cli_bad("dlq: unexpected argument %s", argv[i]);
    if (o->id && !sa_layout_id_valid(o->id) && strncmp(o->id, "seq-", 4) != 0)
        return cli_bad("dlq: \"%.70s\" is not a task id", o->id);
    return CLI_OPTS_OK;
}

static int
need_one(const struct dlq_opts *o, int allow_all)
{
    if (allow_all && o->all && !o->id)
        return EXIT_OK;
    if (o->id && !o->all)
        return EXIT_OK;
    return cli_error(EXIT_USAGE, "dlq %s: give %s", o->verb,
                     allow_all ? "one ID or --all" : "one ID");
}

/* The exit code of a dead-letter operation, saying why it failed. */
static int
exit_for(enum sa_code rc, const struct sa_err *err)
{
    if (rc == SA_OK)
        return EXIT_OK;
    if (rc == SA_ENOTFOUND) {
        puts("unknown id");
        return EXIT_UNKNOWN;
    }
    return cli_error(EXIT_FAIL, "%s", err->msg);
}

static int
run(void *opts, struct sa_nats *n)
{
    struct dlq_opts *o = opts;
    struct sa_err err = {0};

    if (!strcmp(o->verb, "list"))
        return exit_for(dlq_list(n, o->cli.json, o->limit, &err), &err);
    if (!strcmp(o->verb, "purge")) {
        int code = need_one(o, 1);

        if (code == EXIT_OK && (code = exit_for(dlq_purge(n, o->id, &err), &err)) == EXIT_OK)
            puts("purged");
        return code;
    }
    if (!strcmp(o->verb, "show") || !strcmp(o->verb, "replay")) {
        struct sa_keyring *ring = NULL;
        int64_t at = 0;
        int code = need_one(o, !strcmp(o->verb, "replay"));
        if (code == EXIT_OK && o->at && sa_time_parse(o->at, sa_now_ms(), &at, &err) != SA_OK)
            code = cli_error(EXIT_USAGE, "dlq replay: --at: %s", err.msg);
        if (code == EXIT_OK)
            code = cli_keyring(&o->cli, &ring);
        if (code == EXIT_OK)
            code = exit_for(!strcmp(o->verb, "show")
                                ? dlq_show(n, ring, o->id, o->cli.json, o->full, &err)
                                : dlq_replay(n, ring, o->id, at, stdout, &err),
                            &err);
        sa_keyring_free(ring);
        return code;
    }
    return cli_error(EXIT_USAGE, "dlq: unknown verb %s (list, show, replay, purge)", o->verb);
}

int
cmd_dlq(int argc, char **argv)
{
    struct dlq_opts o = {0};

    return cli_run(parse(&o, argc, argv), &o.cli, run, &o);
}

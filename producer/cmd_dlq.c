/* sendat dlq list|show|replay|purge: the dead-letter stream, read and worked through from the
 * command line. Replay publishes a fresh copy (attempt 1, a replay Msg-Id derived from the
 * dead letter's sequence) before it deletes the dead letter, and sets the claim back to
 * "retrying" so a consumer takes it (invariant 1: the successor exists before the original
 * goes). */
#include <getopt.h>
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

static int
parse(struct dlq_opts *o, int argc, char **argv)
{
    static const struct option opts[] = {{"server", required_argument, NULL, 'S'},
                                         {"key-file", required_argument, NULL, 'k'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"all", no_argument, NULL, 'a'},
                                         {"at", required_argument, NULL, 't'},
                                         {"limit", required_argument, NULL, 'l'},
                                         {"full", no_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;

    opterr = 0;
    o->limit = 1000;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'S':
            o->cli.server = optarg;
            break;
        case 'k':
            o->cli.key_file = optarg;
            break;
        case 'j':
            o->cli.json = 1;
            break;
        case 'a':
            o->all = 1;
            break;
        case 'f':
            o->full = 1;
            break;
        case 't':
            o->at = optarg;
            break;
        case 'l':
            o->limit = strtol(optarg, NULL, 10);
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
            return cli_error(EXIT_USAGE, "dlq: unknown option %s", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_error(EXIT_USAGE, "dlq: give list, show, replay or purge");
    o->verb = argv[optind++];
    if (optind < argc)
        o->id = argv[optind++];
    if (optind < argc)
        return cli_error(EXIT_USAGE, "dlq: unexpected argument %s", argv[optind]);
    if (o->limit < 1 || o->limit > DLQ_LIST_MAX)
        return cli_error(EXIT_USAGE, "dlq: --limit must be 1 to %d", DLQ_LIST_MAX);
    if (o->id && !sa_layout_id_valid(o->id) && strncmp(o->id, "seq-", 4) != 0)
        return cli_error(EXIT_USAGE, "dlq: \"%.70s\" is not a task id", o->id);
    return EXIT_OK;
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
run(struct dlq_opts *o, struct sa_nats *n)
{
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
    struct sa_nats *n = NULL;
    int code = parse(&o, argc, argv);

    if (code != EXIT_OK)
        return code < 0 ? EXIT_OK : code;
    if ((code = cli_connect(&o.cli, &n)) != EXIT_OK)
        return code;
    code = run(&o, n);
    cli_close(n);
    return code;
}

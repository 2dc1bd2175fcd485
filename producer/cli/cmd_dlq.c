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
#include "content.h"
#include "dlq.h"
#include "dlq_write.h"
#include "show.h"
#include "task.h"
#include "timeparse.h"

#define DLQ_LIST_MAX 100000

static const char usage[] =
    "usage: sendat dlq list [--json] [--limit N]\n"
    "       sendat dlq show ID [--json] [--full]   (--full: recipients, headers and body too)\n"
    "       sendat dlq replay (ID | --all) [--at TIME]\n"
    "       sendat dlq purge (ID | --all)\n"
    "  common: [--server URL] [--key-file FILE]\n";

/* The human form escapes what a junk subject or reason could carry (an escape code would
 * drive the terminal); the JSON form is escaped by jansson. */
static void
print_entry(json_t *e)
{
    char id[3 * SA_SUBJECT_MAX], reason[1024];

    printf("%s %s attempts=%" JSON_INTEGER_FORMAT " reason=\"%s\"\n",
           json_string_value(json_object_get(e, "failed")),
           content_escape(id, sizeof(id), json_string_value(json_object_get(e, "id"))),
           json_integer_value(json_object_get(e, "attempts")),
           content_escape(reason, sizeof(reason), json_string_value(json_object_get(e, "reason"))));
}

static void
print_details(json_t *e)
{
    char text[1024];
    json_t *a, *list = json_object_get(e, "failed_attempts");
    size_t i;

    if (json_object_get(e, "webhook"))
        printf("  webhook %s\n", content_escape(text, sizeof(text),
                                                json_string_value(json_object_get(e, "webhook"))));
    json_array_foreach(list, i, a)
        printf("  attempt %" JSON_INTEGER_FORMAT " at %s: %s\n",
               json_integer_value(json_object_get(a, "attempt")),
               json_string_value(json_object_get(a, "at")),
               content_escape(text, sizeof(text), json_string_value(json_object_get(a, "error"))));
    if (json_object_get(e, "unreadable"))
        printf("  cannot open the task: %s\n",
               content_escape(text, sizeof(text),
                              json_string_value(json_object_get(e, "unreadable"))));
    show_content(e, "");
}

/* Prints the first limit dead letters, a line each, or with json one document
 * {"dead_letters":[...],"next_cursor"} as GET /v1/dead-letters answers. */
static enum sa_code
list(struct sa_nats *n, int json, long limit, struct sa_err *err)
{
    json_t *list = json_array(), *e;
    uint64_t last = 0;
    size_t i, count;
    enum sa_code rc = dlq_page(n, 0, limit, list, &last, err);

    count = json_array_size(list);
    if (json && rc == SA_OK) { /* one document, as GET /v1/dead-letters answers */
        char next[24];
        json_t *doc;
        snprintf(next, sizeof(next), "%" PRIu64, last);
        doc = json_pack("{s:O, s:o}", "dead_letters", list, "next_cursor",
                        (long)count == limit ? json_string(next) : json_null());
        json_dumpf(doc, stdout, JSON_COMPACT);
        putchar('\n');
        json_decref(doc);
    } else if (!json) {
        json_array_foreach(list, i, e) print_entry(e);
    }
    json_decref(list);
    if (rc != SA_OK)
        return rc;
    if (!json)
        fprintf(stderr, "%zu dead letter%s%s\n", count, count == 1 ? "" : "s",
                (long)count == limit ? " (limit reached)" : "");
    return SA_OK;
}

/* Prints one dead letter; full: also the task's content (recipients, headers, body), which
 * only the key opens. */
static enum sa_code
show(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int json, int full,
     struct sa_err *err)
{
    json_t *e = NULL;
    enum sa_code rc = dlq_get(n, ring, id, DLQ_WEBHOOK | (full ? DLQ_CONTENT : 0), &e, err);

    if (rc != SA_OK)
        return rc;
    if (json) {
        json_dumpf(e, stdout, JSON_COMPACT);
        putchar('\n');
    } else {
        print_entry(e);
        print_details(e);
    }
    json_decref(e);
    return SA_OK;
}

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
        return exit_for(list(n, o->cli.json, o->limit, &err), &err);
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
            code =
                exit_for(!strcmp(o->verb, "show") ? show(n, ring, o->id, o->cli.json, o->full, &err)
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

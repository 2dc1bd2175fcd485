/* sendat list --from TIME --to TIME: the tasks due in a range, one page (tasklist.c). */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli.h"
#include "content.h"
#include "show.h"
#include "tasklist.h"
#include "timeparse.h"

static const char usage[] =
    "usage: sendat list --from TIME --to TIME [--group NAME] [--host HOST] [--state STATE]\n"
    "                   [--limit N] [--cursor C] [--json] [--full]\n"
    "  the tasks due in the range (at most 31 days), in due order: due, id, level, channel,\n"
    "  webhook host and state (waiting, or failed: an attempt failed, another follows);\n"
    "  cancelled tasks (they wait in the stream until due) only with --state cancelled,\n"
    "  and --state waiting|failed lists those only. TIME may be now or -10m too.\n"
    "  Recipients, headers and bodies only with --full (opened with the key file, never\n"
    "  shown by the broker; each as it will be sent, control bytes as \\xNN, cut after\n"
    "  4096 bytes with a line saying so). --limit (default 100, at most 10000)\n"
    "  ends a page; the next one is named on stderr as --cursor C\n"
    "  common: [--server URL] [--key-file FILE]\n";

struct list_opts {
    struct cli cli;
    const char *from, *to, *cursor;
    struct tasklist_filter f;
    int full;
    long limit;
};

/* Reads the options into o and checks that they go together. */
static enum cli_opts_result
parse(struct list_opts *o, int argc, char **argv)
{
    const struct cli_opt table[] = {
        CLI_OPT_SERVER(&o->cli),
        CLI_OPT_KEY_FILE(&o->cli),
        CLI_OPT_JSON(&o->cli),
        {.name = "from", .kind = CLI_OPT_STRING, .to = &o->from},
        {.name = "to", .kind = CLI_OPT_STRING, .to = &o->to},
        {.name = "limit", .kind = CLI_OPT_LONG, .to = &o->limit, .lo = 1, .hi = TASKLIST_LIMIT_MAX},
        {.name = "cursor", .kind = CLI_OPT_STRING, .to = &o->cursor},
        {.name = "group", .kind = CLI_OPT_STRING, .to = &o->f.group},
        {.name = "host", .kind = CLI_OPT_STRING, .to = &o->f.host},
        {.name = "state", .kind = CLI_OPT_STRING, .to = &o->f.state},
        {.name = "full", .kind = CLI_OPT_FLAG, .to = &o->full},
        {0},
    };
    int i = 0;
    enum cli_opts_result r;

    o->limit = 100;
    if ((r = cli_opts_parse("list", usage, table, argc, argv, &i)) != CLI_OPTS_OK)
        return r;
    if (i < argc)
        return cli_bad("list: unexpected argument %s", argv[i]);
    if (!o->from || !o->to)
        return cli_bad("list: give --from TIME and --to TIME");
    if (o->f.state && !tasklist_state_valid(o->f.state))
        return cli_bad("list: --state must be waiting, failed or cancelled");
    return CLI_OPTS_OK;
}

static void
print_page(json_t *tasks, const char *next, int json)
{
    json_t *t;
    size_t i;

    if (json) {
        json_t *doc = json_pack("{s:O, s:o}", "tasks", tasks, "next_cursor",
                                next[0] ? json_string(next) : json_null());
        json_dumpf(doc, stdout, JSON_COMPACT);
        putchar('\n');
        json_decref(doc);
        return;
    }
    json_array_foreach(tasks, i, t) printf(
        "%s %s %s %s %s %s\n", json_string_value(json_object_get(t, "due")),
        json_string_value(json_object_get(t, "id")), json_string_value(json_object_get(t, "level")),
        json_string_value(json_object_get(t, "channel")),
        json_object_get(t, "host") ? json_string_value(json_object_get(t, "host")) : "-",
        json_string_value(json_object_get(t, "state")));
    json_array_foreach(tasks, i, t) show_content(t, json_string_value(json_object_get(t, "id")));
    if (next[0])
        fprintf(stderr, "more: sendat list ... --cursor %s\n", next);
}

static int
run(struct list_opts *o, struct sa_nats *n, int64_t from, int64_t to)
{
    struct sa_keyring *ring = NULL;
    struct sa_err err = {0};
    char next[TASKLIST_CURSOR_MAX];
    json_t *tasks = json_array();
    enum sa_code rc;
    int code = cli_keyring(&o->cli, &ring);

    if (code == EXIT_OK) {
        rc = tasklist_page(n, ring, from, to, o->limit, o->cursor, &o->f, o->full, tasks, next,
                           &err);
        if (rc == SA_OK)
            print_page(tasks, next, o->cli.json);
        else
            code = cli_error(rc == SA_EINVAL ? EXIT_USAGE : EXIT_FAIL, "list: %s", err.msg);
    }
    json_decref(tasks);
    sa_keyring_free(ring);
    return code;
}

int
cmd_list(int argc, char **argv)
{
    struct list_opts o = {0};
    struct sa_nats *n = NULL;
    struct sa_err err = {0};
    int64_t from = 0, to = 0, now = sa_now_ms();
    enum cli_opts_result r = parse(&o, argc, argv);
    int code;

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (sa_time_parse_read(o.from, now, &from, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "list: --from: %s", err.msg);
    if (sa_time_parse_read(o.to, now, &to, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "list: --to: %s", err.msg);
    if ((code = cli_connect(&o.cli, &n)) != EXIT_OK)
        return code;
    code = run(&o, n, from, to);
    cli_close(n);
    return code;
}

/* sendat list --from TIME --to TIME: the tasks due in a range, one page (tasklist.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli.h"
#include "content.h"
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

static int
parse(struct list_opts *o, int argc, char **argv)
{
    static const struct option opts[] = {{"server", required_argument, NULL, 'S'},
                                         {"key-file", required_argument, NULL, 'k'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"from", required_argument, NULL, 'f'},
                                         {"to", required_argument, NULL, 't'},
                                         {"limit", required_argument, NULL, 'l'},
                                         {"cursor", required_argument, NULL, 'c'},
                                         {"group", required_argument, NULL, 'g'},
                                         {"host", required_argument, NULL, 'H'},
                                         {"state", required_argument, NULL, 's'},
                                         {"full", no_argument, NULL, 'F'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    char *end = NULL;

    opterr = 0;
    o->limit = 100;
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
        case 'f':
            o->from = optarg;
            break;
        case 't':
            o->to = optarg;
            break;
        case 'c':
            o->cursor = optarg;
            break;
        case 'g':
            o->f.group = optarg;
            break;
        case 'H':
            o->f.host = optarg;
            break;
        case 's':
            o->f.state = optarg;
            break;
        case 'F':
            o->full = 1;
            break;
        case 'l':
            o->limit = strtol(optarg, &end, 10);
            o->limit = *end ? 0 : o->limit;
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
            return cli_error(EXIT_USAGE, "list: unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_error(EXIT_USAGE, "list: unexpected argument %s", argv[optind]);
    if (!o->from || !o->to)
        return cli_error(EXIT_USAGE, "list: give --from TIME and --to TIME");
    if (o->f.state && !tasklist_state_valid(o->f.state))
        return cli_error(EXIT_USAGE, "list: --state must be waiting, failed or cancelled");
    if (o->limit < 1 || o->limit > TASKLIST_LIMIT_MAX)
        return cli_error(EXIT_USAGE, "list: --limit must be 1 to %d", TASKLIST_LIMIT_MAX);
    return EXIT_OK;
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
    json_array_foreach(tasks, i, t) content_print(t, json_string_value(json_object_get(t, "id")));
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
    int code = parse(&o, argc, argv);

    if (code != EXIT_OK)
        return code < 0 ? EXIT_OK : code;
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

/* sendat status ID: the task's history without an index written at schedule time. Where it
 * waits now comes from a direct get by subject (its headers say when it was scheduled and
 * moved); what happened after comes from the claim record's revisions and the dead-letter
 * stream. Text prints one line per event; --json prints the same events for programs. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "claim.h"
#include "cli.h"
#include "find.h"
#include "series_status.h"
#include "timeparse.h"

static const char usage[] = "usage: sendat status ID [--json] [--server URL]\n"
                            "  one line per event: scheduled, moved, claimed, sent, failed,\n"
                            "  cancelled, dead-lettered; exit 4 for an unknown id\n";

static void
add_event(json_t *events, int64_t at, const char *name, json_t *fields)
{
    char text[40];

    if (!fields)
        fields = json_object();
    sa_time_format(text, sizeof(text), at);
    json_object_set_new(fields, "at", json_string(text));
    json_object_set_new(fields, "at_ms", json_integer(at));
    json_object_set_new(fields, "event", json_string(name));
    json_array_append_new(events, fields);
}

static void
add_origin(json_t *events, int64_t scheduled, int moves, int64_t moved, int64_t slot)
{
    if (scheduled)
        add_event(events, scheduled, "scheduled", NULL);
    if (moves > 0)
        add_event(events, moved, "moved", json_pack("{s:i, s:I}", "moves", moves, "slot", (json_int_t)slot));
}

static void
add_waiting(json_t *events, natsMsg *msg, struct sa_nats *n)
{
    struct sa_place p;
    int64_t moves = find_header_i64(msg, "Sendat-Moves");

    if (sa_layout_parse_subject(&p, natsMsg_GetSubject(msg), NULL) != SA_OK)
        return;
    add_origin(events, find_header_i64(msg, "Sendat-Scheduled"), (int)moves,
               find_header_i64(msg, "Sendat-Moved"), p.slot);
    add_event(events, sa_now_ms(), "waiting",
              json_pack("{s:s, s:I}", "level", p.slot ? "slot" : "window", "from",
                        (json_int_t)(p.slot ? p.slot : p.window)));
    (void)n;
}

static json_t *
claim_fields(const struct sa_claim *c)
{
    json_t *f = json_pack("{s:s, s:i}", "consumer", c->consumer, "attempt", c->attempt);

    if (c->state == SA_CLAIM_SENT) {
        json_object_set_new(f, "lateness_ms", json_integer(c->lateness_ms));
        json_object_set_new(f, "http_status", json_integer(c->http_status));
    }
    if (c->error[0])
        json_object_set_new(f, "error", json_string(c->error));
    return f;
}

static void
add_claims(json_t *events, const struct sa_claim *list, size_t count, int waiting)
{
    static const char *names[] = {"", "claimed", "sent", "failed", "cancelled", "dead-lettered"};

    if (count > 0 && !waiting)
        add_origin(events, list[0].scheduled_ms, list[0].moves, list[0].moved_ms, 0);
    for (size_t i = 0; i < count; i++)
        add_event(events, list[i].at_ms, names[list[i].state], claim_fields(&list[i]));
}

static void
print_text(const json_t *events)
{
    size_t i;
    json_t *e;

    json_array_foreach(events, i, e) {
        const char *key;
        json_t *v;
        char text[1024];

        printf("%s %s", json_string_value(json_object_get(e, "at")),
               json_string_value(json_object_get(e, "event")));
        json_object_foreach((json_t *)e, key, v) {
            if (!strcmp(key, "at") || !strcmp(key, "at_ms") || !strcmp(key, "event"))
                continue;
            if (json_is_string(v))
                printf(" %s=\"%s\"", key, cli_escape(text, sizeof(text), json_string_value(v)));
            else
                printf(" %s=%" JSON_INTEGER_FORMAT, key, json_integer_value(v));
        }
        putchar('\n');
    }
}

static int
collect(struct sa_nats *n, const char *id, json_t *events)
{
    struct sa_claim *list = NULL;
    struct sa_err err = {0};
    natsMsg *msg = NULL, *dead = NULL;
    size_t count = 0;
    enum sa_code rc = find_task(n, id, &msg, &err);

    if (rc == SA_OK)
        add_waiting(events, msg, n);
    if (rc == SA_OK || rc == SA_ENOTFOUND)
        rc = sa_claim_history(n->claims, id, &list, &count, &err);
    if (rc == SA_OK) {
        add_claims(events, list, count, msg != NULL);
        if ((count == 0 || list[count - 1].state != SA_CLAIM_DEAD) &&
            (rc = find_dead(n, id, &dead, &err)) == SA_OK) {
            const char *why = NULL;
            natsMsgHeader_Get(dead, "Sendat-Reason", &why);
            add_event(events, find_header_i64(dead, "Sendat-Failed"), "dead-lettered",
                      json_pack("{s:s}", "error", why ? why : ""));
        }
        if (rc == SA_ENOTFOUND)
            rc = SA_OK;
    }
    natsMsg_Destroy(msg);
    natsMsg_Destroy(dead);
    free(list);
    return rc == SA_OK ? EXIT_OK : cli_error(EXIT_FAIL, "status: %s", err.msg);
}

int
cmd_status(int argc, char **argv)
{
    static const struct option opts[] = {{"server", required_argument, NULL, 'S'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct cli cli = {0};
    struct sa_nats *n = NULL;
    json_t *events = NULL;
    int c, code;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'S')
            cli.server = optarg;
        else if (c == 'j')
            cli.json = 1;
        else if (c == 'h')
            return fputs(usage, stdout), EXIT_OK;
        else
            return cli_error(EXIT_USAGE, "status: unknown option %s", argv[optind - 1]);
    }
    if (optind != argc - 1)
        return cli_error(EXIT_USAGE, "status: give exactly one task id");
    if (!sa_layout_id_valid(argv[optind]))
        return puts("unknown id"), EXIT_UNKNOWN;
    if ((code = cli_connect(&cli, &n)) != EXIT_OK)
        return code;
    events = json_array();
    code = collect(n, argv[optind], events);
    if (code == EXIT_OK && json_array_size(events) == 0) {
        int series = 0;
        code = series_events(n, argv[optind], events, &series);
    }
    if (code == EXIT_OK && json_array_size(events) == 0) {
        puts(cli.json ? "{\"id\":null,\"error\":\"unknown id\"}" : "unknown id");
        code = EXIT_UNKNOWN;
    } else if (code == EXIT_OK && cli.json) {
        json_t *o = json_pack("{s:s, s:O}", "id", argv[optind], "events", events);
        json_dumpf(o, stdout, JSON_COMPACT);
        putchar('\n');
        json_decref(o);
    } else if (code == EXIT_OK) {
        print_text(events);
    }
    json_decref(events);
    cli_close(n);
    return code;
}

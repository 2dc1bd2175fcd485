/* sendat stats: what stats_collect gathers (stats.c), for a human or as JSON with --json. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "stats.h"
#include "stats_fleet.h"

static json_int_t
num(json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static const char *
str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* With more than one shard: each shard's stream, its tasks and the server that leads it. */
static void
print_shards(json_t *shards)
{
    size_t i;
    json_t *d;

    if (json_array_size(shards) < 2)
        return;
    printf("shards: %zu (stream: tasks, leader)\n", json_array_size(shards));
    json_array_foreach(shards, i, d)
        printf("  %-16s %" JSON_INTEGER_FORMAT " %s\n", str(d, "stream"), num(d, "tasks"),
               str(d, "leader") ? str(d, "leader") : "-");
}

static void
print_levels(json_t *doc)
{
    json_t *levels = json_object_get(doc, "levels"), *l;
    size_t i;

    json_t *within = json_object_get(doc, "starting_within");

    printf("tasks in the stream: %" JSON_INTEGER_FORMAT " (%" JSON_INTEGER_FORMAT
           " bytes; a cancelled task leaves it when a consumer meets it)\n",
           num(doc, "tasks"), num(doc, "bytes"));
    printf("cancelled, still in the stream: %" JSON_INTEGER_FORMAT
           " (left out of the levels below%s)\n",
           num(doc, "cancelled"),
           json_is_false(json_object_get(doc, "cancelled_checked"))
               ? "; over 200,000 tasks: those past it were not checked"
               : "");
    printf("in levels starting within a minute / an hour / a day: %" JSON_INTEGER_FORMAT
           " / %" JSON_INTEGER_FORMAT " / %" JSON_INTEGER_FORMAT "\n",
           num(within, "minute"), num(within, "hour"), num(within, "day"));
    print_shards(json_object_get(doc, "shards"));
    if (json_array_size(levels) > 0)
        printf("oldest level with tasks: %s\n", str(json_array_get(levels, 0), "start"));
    json_array_foreach(levels, i, l)
    {
        printf("  %-6s %s  %" JSON_INTEGER_FORMAT, str(l, "level"), str(l, "start"),
               num(l, "tasks"));
        if (num(l, "cancelled"))
            printf("  (+%" JSON_INTEGER_FORMAT " cancelled)", num(l, "cancelled"));
        putchar('\n');
    }
}

/* The members with an entry in the bucket (it forgets one 20 s after its last beat); one
 * silent for over 3 s is dead or hung, and says so. */
static void
print_members(json_t *members)
{
    size_t i;
    json_t *d;

    printf("fleet members: %zu\n", json_array_size(members));
    json_array_foreach(members, i, d)
    {
        json_int_t age = num(d, "beat_age_ms");

        printf("  %s (instance %s): last beat %.1f s ago%s", str(d, "name"), str(d, "instance"),
               (double)age / 1000, age > MEMBER_SILENT_MS ? " (silent: dead or hung)" : "");
        if (json_object_get(d, "held"))
            printf(", holds %" JSON_INTEGER_FORMAT ", in flight %" JSON_INTEGER_FORMAT
                   ", sent %" JSON_INTEGER_FORMAT,
                   num(d, "held"), num(d, "in_flight"), num(d, "sent"));
        if (json_is_false(json_object_get(d, "mail")))
            printf(", no SMTP (leaves email to the others)");
        putchar('\n');
    }
}

/* Whether the members alive can send mail: said only when one of them cannot. */
static void
print_mail(json_t *mail)
{
    json_int_t can = num(mail, "can_send"), cannot = num(mail, "cannot_send");

    if (cannot == 0)
        return;
    if (can == 0)
        printf("mail: no member alive can send mail (none has SENDAT_SMTP_URL): email tasks "
               "wait until one does\n");
    else
        printf("mail: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
               " members alive can send mail; the others leave email tasks to them\n",
               can, can + cannot);
}

/* The fleet's last hour in one line: what its members' beats say they did. */
static void
print_hour(json_t *delivery)
{
    json_int_t sent = 0, retried = 0, dead = 0;
    size_t i;
    json_t *m;

    json_array_foreach(json_object_get(delivery, "minutes"), i, m)
    {
        sent += num(m, "sent");
        retried += num(m, "retried");
        dead += num(m, "dead");
    }
    printf("the last hour of the members alive now (from their beats; a member that stopped "
           "takes its own with it): sent %" JSON_INTEGER_FORMAT ", retried %" JSON_INTEGER_FORMAT
           ", dead-lettered %" JSON_INTEGER_FORMAT "\n",
           sent, retried, dead);
}

static void
print_fleet(json_t *doc)
{
    json_t *d, *sweep = json_object_get(doc, "sweep");
    size_t i;

    printf("levels being pulled (shard, level start: pending, unacked, pull requests waiting):\n");
    json_array_foreach(json_object_get(doc, "pulling"), i, d)
        printf("  %2" JSON_INTEGER_FORMAT " %-6s %s  %" JSON_INTEGER_FORMAT " %" JSON_INTEGER_FORMAT
               " %" JSON_INTEGER_FORMAT "\n",
               num(d, "shard"), str(d, "level"), str(d, "start"), num(d, "pending"),
               num(d, "unacked"), num(d, "waiting"));
    if (num(doc, "idle_past_durables"))
        printf("  and %" JSON_INTEGER_FORMAT
               " durables of past levels with nothing left (the server "
               "drops a slot's after a window unused, a window's after an hour)\n",
               num(doc, "idle_past_durables"));
    print_members(json_object_get(doc, "members"));
    print_mail(json_object_get(doc, "mail"));
    print_hour(json_object_get(doc, "delivery"));
    if (json_is_integer(json_object_get(doc, "dead_letters")))
        printf("dead letters: %" JSON_INTEGER_FORMAT "\n", num(doc, "dead_letters"));
    if (json_is_null(sweep))
        printf("unread tasks: not swept yet\n");
    else if (json_object_get(sweep, "next_seq"))
        printf("unread tasks dead-lettered: %" JSON_INTEGER_FORMAT
               " (last sweep %s, at sequence %" JSON_INTEGER_FORMAT ", %" JSON_INTEGER_FORMAT
               " looked at)\n",
               num(sweep, "found"), str(sweep, "last_run"), num(sweep, "next_seq"),
               num(sweep, "checked"));
    else
        printf("unread tasks dead-lettered: %" JSON_INTEGER_FORMAT
               " (the shard swept longest ago: %s; %" JSON_INTEGER_FORMAT " looked at)\n",
               num(sweep, "found"),
               str(sweep, "last_run") ? str(sweep, "last_run") : "one not swept yet",
               num(sweep, "checked"));
}

int
cmd_stats(int argc, char **argv)
{
    struct cli cli = {0};
    const struct cli_opt table[] = {
        CLI_OPT_SERVER(&cli),
        CLI_OPT_JSON(&cli),
        {0},
    };
    struct sa_nats *n = NULL;
    struct sa_err err = {0};
    json_t *doc = NULL;
    int rest = 0, code;
    enum cli_opts_result r = cli_opts_parse(
        "stats", "usage: sendat stats [--server URL] [--json]\n", table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if ((code = cli_connect(&cli, &n)) != EXIT_OK)
        return code;
    sa_keyring_free(cli_keyring_optional(&cli)); /* claims' MACs checked when a key is set */
    if (stats_collect(n, &doc, &err) != SA_OK) {
        code = cli_error(EXIT_FAIL, "%s", err.msg);
    } else if (cli.json) {
        json_dumpf(doc, stdout, JSON_COMPACT);
        putchar('\n');
    } else {
        print_levels(doc);
        print_fleet(doc);
    }
    json_decref(doc);
    cli_close(n);
    return code;
}

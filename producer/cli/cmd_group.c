/* sendat group list | group show NAME: the groups booked (groupview.c), each with its tasks
 * counted by state, and one group's tasks with what `sendat cancel --group` would do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "groupview.h"

static const char usage[] =
    "usage: sendat group list [--limit N] [--cursor C] [--json]\n"
    "       sendat group show NAME [--limit N] [--cursor C] [--json]\n"
    "  list: every group, newest booking first, a line each: NAME, its tasks by state (waiting,\n"
    "  sent, failed, dead, cancelled), first and last due time, next send.\n"
    "  show: the group's figures, what cancelling the group would do, and its tasks in due\n"
    "  order (DUE ID STATE). --limit (default 100, at most 1000) ends a page; the next one\n"
    "  is named on stderr as --cursor C. Exit 4 for a group nobody booked.\n"
    "  common: [--server URL]\n";

struct group_opts {
    struct cli cli;
    const char *verb, *name, *cursor;
    long limit;
};

/* Reads the options and list | show NAME into o. */
static enum cli_opts_result
parse(struct group_opts *o, int argc, char **argv)
{
    const struct cli_opt table[] = {
        CLI_OPT_SERVER(&o->cli),
        CLI_OPT_JSON(&o->cli),
        {.name = "limit",
         .kind = CLI_OPT_LONG,
         .to = &o->limit,
         .lo = 1,
         .hi = GROUPVIEW_LIMIT_MAX},
        {.name = "cursor", .kind = CLI_OPT_STRING, .to = &o->cursor},
        {0},
    };
    int i = 0;
    enum cli_opts_result r;

    o->limit = 100;
    if ((r = cli_opts_parse("group", usage, table, argc, argv, &i)) != CLI_OPTS_OK)
        return r;
    o->verb = i < argc ? argv[i++] : NULL;
    if (o->verb && !strcmp(o->verb, "show"))
        o->name = i < argc ? argv[i++] : NULL;
    if (!o->verb || (strcmp(o->verb, "list") && strcmp(o->verb, "show")) ||
        (!strcmp(o->verb, "show") && !o->name) || i < argc)
        return cli_bad("group: give list or show NAME (see sendat group --help)");
    return CLI_OPTS_OK;
}

static const char *
str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "-";
}

static long
num(json_t *o, const char *key)
{
    return (long)json_integer_value(json_object_get(o, key));
}

static void
print_figures(json_t *g)
{
    printf("%s tasks=%ld waiting=%ld sent=%ld failed=%ld dead=%ld cancelled=%ld first_due=%s "
           "last_due=%s next_send=%s\n",
           str(g, "group"), num(g, "tasks"), num(g, "waiting"), num(g, "sent"), num(g, "failed"),
           num(g, "dead"), num(g, "cancelled"), str(g, "first_due"), str(g, "last_due"),
           str(g, "next_send"));
}

static void
print_json(json_t *doc)
{
    json_dumpf(doc, stdout, JSON_COMPACT);
    putchar('\n');
}

/* "cancel --group NAME: 3 waiting and 1 dead will be cancelled; 1 already sent", what the
 * console's group page says too (a group cancel takes waiting, failed and dead tasks). */
static void
print_preview(json_t *g, json_t *cancel)
{
    static const char *const takes[] = {"waiting", "failed", "dead"};
    int shown = 0, left = 0;

    for (size_t k = 0; k < 3; k++)
        left += num(g, takes[k]) > 0;
    printf("cancel --group %s: ", str(g, "group"));
    for (size_t k = 0; k < 3; k++) {
        if (num(g, takes[k]) <= 0)
            continue;
        printf("%s%ld %s",
               !shown              ? ""
               : shown == left - 1 ? " and "
                                   : ", ",
               num(g, takes[k]), takes[k]);
        shown++;
    }
    printf("%s", shown ? " will be cancelled" : "nothing left to cancel");
    if (num(cancel, "already_cancelled"))
        printf("; %ld already cancelled", num(cancel, "already_cancelled"));
    if (num(cancel, "already_sent"))
        printf("; %ld already sent", num(cancel, "already_sent"));
    putchar('\n');
}

static int
list(struct group_opts *o, struct sa_nats *n)
{
    char next[GROUPVIEW_CURSOR_MAX];
    struct sa_err err = {0};
    json_t *groups = json_array(), *g, *doc;
    int truncated = 0;
    size_t i;

    if (groupview_list(n, o->limit, o->cursor, groups, next, &truncated, &err) != SA_OK) {
        json_decref(groups);
        return cli_error(cli_exit_for(err.code), "group list: %s", err.msg);
    }
    if (o->cli.json) {
        doc = json_pack("{s:o, s:o, s:b}", "groups", groups, "next_cursor",
                        next[0] ? json_string(next) : json_null(), "truncated", truncated);
        print_json(doc);
        json_decref(doc);
    } else {
        json_array_foreach(groups, i, g) print_figures(g);
        json_decref(groups);
    }
    if (truncated)
        fprintf(stderr,
                "truncated: only the newest %d group members were read (older groups are not "
                "listed; sendat group show NAME reads one group whole)\n",
                GROUPVIEW_LIST_SCAN);
    if (next[0])
        fprintf(stderr, "more: sendat group list --cursor %s\n", next);
    return EXIT_OK;
}

static int
show(struct group_opts *o, struct sa_nats *n)
{
    struct sa_err err = {0};
    json_t *doc = NULL, *t, *cancel;
    enum sa_code rc = groupview_show(n, o->name, o->limit, o->cursor, &doc, &err);
    size_t i;

    if (rc == SA_ENOTFOUND)
        return puts("unknown group"), EXIT_UNKNOWN;
    if (rc != SA_OK)
        return cli_error(cli_exit_for(err.code), "group show: %s", err.msg);
    if (o->cli.json) {
        print_json(doc);
    } else {
        cancel = json_object_get(doc, "cancel");
        print_figures(doc);
        print_preview(doc, cancel);
        json_array_foreach(json_object_get(doc, "members"), i, t)
            printf("  %s %s %s\n", str(t, "due"), str(t, "id"), str(t, "state"));
    }
    if (json_is_string(json_object_get(doc, "next_cursor")))
        fprintf(stderr, "more: sendat group show %s --cursor %s\n", o->name,
                str(doc, "next_cursor"));
    json_decref(doc);
    return EXIT_OK;
}

/* list or show, as parse checked. */
static int
run(void *opts, struct sa_nats *n)
{
    struct group_opts *o = opts;

    sa_keyring_free(cli_keyring_optional(&o->cli)); /* claims' MACs checked when a key is set */
    return !strcmp(o->verb, "list") ? list(o, n) : show(o, n);
}

int
cmd_group(int argc, char **argv)
{
    struct group_opts o = {0};

    return cli_run(parse(&o, argc, argv), &o.cli, run, &o);
}

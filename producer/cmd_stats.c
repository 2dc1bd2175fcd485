/* sendat stats: the backlog by window and slot (from the stream's per-subject counts), the
 * level durables with their pending, unacked and waiting pulls (what the fleet is doing now),
 * the oldest level that holds tasks, the dead-letter count, and what the consumers' sweep found
 * that no level would ever read (the meta record "sweep"). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "sweeprec.h"
#include "timeparse.h"

#define LEVELS_MAX 4096

struct level {
    int64_t window, slot;
    uint64_t tasks;
};

static int
by_time(const void *a, const void *b)
{
    const struct level *x = a, *y = b;
    int64_t tx = x->slot ? x->slot : x->window, ty = y->slot ? y->slot : y->window;

    return (tx > ty) - (tx < ty);
}

static int
collect_levels(struct sa_nats *n, struct level *lv, int *count, uint64_t *tasks, uint64_t *bytes)
{
    jsOptions o;
    jsStreamInfo *si = NULL;
    struct sa_place p;
    natsStatus s;

    jsOptions_Init(&o);
    o.Stream.Info.SubjectsFilter = "sendat.task.>";
    s = js_GetStreamInfo(&si, n->js, SA_TASKS_STREAM, &o, NULL);
    if (s != NATS_OK)
        return cli_error(EXIT_FAIL, "stats: %s", natsStatus_GetText(s));
    *tasks = si->State.Msgs;
    *bytes = si->State.Bytes;
    for (int i = 0; si->State.Subjects && i < si->State.Subjects->Count; i++) {
        const jsStreamStateSubject *sub = &si->State.Subjects->List[i];
        int k;
        if (sa_layout_parse_subject(&p, sub->Subject, NULL) != SA_OK)
            continue;
        for (k = 0; k < *count && (lv[k].window != p.window || lv[k].slot != p.slot); k++)
            ;
        if (k == *count && *count < LEVELS_MAX)
            lv[(*count)++] = (struct level){p.window, p.slot, 0};
        if (k < LEVELS_MAX)
            lv[k].tasks += sub->Msgs;
    }
    jsStreamInfo_Destroy(si);
    qsort(lv, (size_t)*count, sizeof(*lv), by_time);
    return EXIT_OK;
}

/* Tasks in levels that start before now + ahead_ms (a window's tasks are counted by its start:
 * the stream knows levels, not due times). */
static uint64_t
starting_within(const struct level *lv, int count, int64_t now, int64_t ahead_ms)
{
    uint64_t n = 0;

    for (int i = 0; i < count; i++)
        if ((lv[i].slot ? lv[i].slot : lv[i].window) < now + ahead_ms)
            n += lv[i].tasks;
    return n;
}

static void
print_levels(const struct level *lv, int count, uint64_t tasks, uint64_t bytes)
{
    int64_t now = sa_now_ms();
    char at[40];

    printf("tasks in the stream: %" PRIu64 " (%" PRIu64 " bytes; a cancelled task leaves it when a "
           "consumer meets it)\n",
           tasks, bytes);
    printf("in levels starting within a minute / an hour / a day: %" PRIu64 " / %" PRIu64
           " / %" PRIu64 "\n",
           starting_within(lv, count, now, 60000), starting_within(lv, count, now, 3600000),
           starting_within(lv, count, now, 86400000));
    if (count > 0) {
        sa_time_format(at, sizeof(at), lv[0].slot ? lv[0].slot : lv[0].window);
        printf("oldest level with tasks: %s\n", at);
    }
    for (int i = 0; i < count; i++) {
        sa_time_format(at, sizeof(at), lv[i].slot ? lv[i].slot : lv[i].window);
        printf("  %-6s %s  %" PRIu64 "\n", lv[i].slot ? "slot" : "window", at, lv[i].tasks);
    }
}

/* The start of the level a durable serves ("w<ms>" or "s<ms>"), 0 for another name. */
static int64_t
durable_start(const jsConsumerInfo *ci)
{
    const char *name = ci->Name ? ci->Name : "";

    return (name[0] == 'w' || name[0] == 's') ? strtoll(name + 1, NULL, 10) : 0;
}

static int
by_start(const void *a, const void *b)
{
    int64_t x = durable_start(*(jsConsumerInfo *const *)a), y = durable_start(*(jsConsumerInfo *const *)b);

    return (x > y) - (x < y);
}

static void
print_durables(struct sa_nats *n)
{
    jsConsumerInfoList *list = NULL;
    char at[40];
    int idle = 0;

    if (js_Consumers(&list, n->js, SA_TASKS_STREAM, NULL, NULL) != NATS_OK || !list)
        return;
    qsort(list->List, (size_t)list->Count, sizeof(list->List[0]), by_start);
    printf("levels being pulled (level start: pending, unacked, pull requests waiting):\n");
    for (int i = 0; i < list->Count; i++) {
        jsConsumerInfo *ci = list->List[i];
        if (durable_start(ci) < sa_now_ms() - n->layout.window_ms && !ci->NumPending &&
            !ci->NumAckPending) {
            idle++; /* a past level with nothing left */
            continue;
        }
        sa_time_format(at, sizeof(at), durable_start(ci));
        printf("  %-6s %s  %" PRIu64 " %" PRId64 " %" PRId64 "\n",
               ci->Name && ci->Name[0] == 's' ? "slot" : "window", at, ci->NumPending,
               ci->NumAckPending, ci->NumWaiting);
    }
    if (idle)
        printf("  and %d durables of past levels with nothing left (the server drops a slot's after "
               "a window unused, a window's after an hour)\n",
               idle);
    jsConsumerInfoList_Destroy(list);
}

static void
print_dead(struct sa_nats *n)
{
    jsStreamInfo *si = NULL;

    if (js_GetStreamInfo(&si, n->js, SA_DLQ_STREAM, NULL, NULL) == NATS_OK)
        printf("dead letters: %" PRIu64 "\n", si->State.Msgs);
    jsStreamInfo_Destroy(si);
}

static void
print_sweep(struct sa_nats *n)
{
    struct sa_sweep_record r;
    kvEntry *e = NULL;
    char at[40];

    if (kvStore_Get(&e, n->meta, SA_SWEEP_KEY) != NATS_OK ||
        sa_sweep_record_parse(&r, kvEntry_ValueString(e), NULL) != SA_OK) {
        printf("unread tasks: not swept yet\n");
    } else {
        sa_time_format(at, sizeof(at), r.last_run_ms);
        printf("unread tasks dead-lettered: %" PRIu64 " (last sweep %s, at sequence %" PRIu64
               ", %" PRIu64 " looked at)\n",
               r.found, at, r.next_seq, r.checked);
    }
    kvEntry_Destroy(e);
}

int
cmd_stats(int argc, char **argv)
{
    static const struct option opts[] = {{"server", required_argument, NULL, 'S'},
                                         {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct cli cli = {0};
    struct sa_nats *n = NULL;
    static struct level lv[LEVELS_MAX];
    uint64_t tasks = 0, bytes = 0;
    int c, count = 0, code;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'S')
            cli.server = optarg;
        else if (c == 'h')
            return puts("usage: sendat stats [--server URL]"), EXIT_OK;
        else
            return cli_error(EXIT_USAGE, "stats: unknown option %s", argv[optind - 1]);
    }
    if ((code = cli_connect(&cli, &n)) != EXIT_OK)
        return code;
    code = collect_levels(n, lv, &count, &tasks, &bytes);
    if (code == EXIT_OK) {
        print_levels(lv, count, tasks, bytes);
        print_durables(n);
        print_dead(n);
        print_sweep(n);
    }
    cli_close(n);
    return code;
}

/* What a person sees of a batch: on a terminal a progress line (done/total, rate, ETA), on a
 * pipe nothing until the summary; the summary names every refused line (the first 100). */
#include <inttypes.h>
#include <stdio.h>

#include "batch.h"
#include "publish.h"
#include "timeparse.h"

void
batch_progress(struct batch *b, int last)
{
    int64_t now = sa_now_ms(), ms = now - b->started_ms;
    double rate = ms > 0 ? (double)b->line * 1000.0 / (double)ms : 0;
    char bar[31] = "";

    if (!b->tty || (!last && now - b->shown_ms < 100))
        return;
    b->shown_ms = now;
    if (b->total > 0) {
        int fill = (int)(30 * (b->line < b->total ? b->line : b->total) / b->total);
        for (int i = 0; i < 30; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[30] = '\0';
        fprintf(stderr, "\r[%s] %ld/%ld  %.0f/s  ETA %.0fs ", bar, b->line, b->total, rate,
                rate > 0 ? (double)(b->total - b->line) / rate : 0);
    } else {
        fprintf(stderr, "\r%ld lines  %.0f/s ", b->line, rate);
    }
    if (last)
        fputc('\n', stderr);
}

static void
print_json(struct batch *b, long acked, long dups, long failed, const char *fatal)
{
    json_t *refusals = json_array();

    for (long i = 0; i < b->refused && i < BATCH_REFUSALS_KEPT; i++)
        json_array_append_new(refusals, json_pack("{s:I, s:s}", "line", (json_int_t)b->refusals[i].line,
                                                  "error", b->refusals[i].why));
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:o, s:s?}", "scheduled", (json_int_t)acked,
                          "already_scheduled", (json_int_t)dups, "refused", (json_int_t)b->refused,
                          "failed", (json_int_t)failed, "refusals", refusals, "error", fatal);
    json_dumpf(o, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(o);
}

int
batch_summary(struct batch *b, const char *fatal)
{
    long acked = 0, dups = 0, failed = 0;

    if (b->pub)
        publisher_counts(b->pub, &acked, &dups, &failed);
    acked += b->series_again; /* a series scheduled before counts as already scheduled */
    dups += b->series_again;
    if (b->o->cli.json)
        print_json(b, acked, dups, failed, fatal);
    fprintf(stderr, "sendat: scheduled %ld (%ld of them already were), refused %ld, failed %ld%s\n",
            acked, dups, b->refused, failed, b->o->strict && b->refused ? " (--strict: nothing published)" : "");
    for (long i = 0; i < b->refused && i < BATCH_REFUSALS_KEPT; i++)
        fprintf(stderr, "  line %ld: %s\n", b->refusals[i].line, b->refusals[i].why);
    for (long i = 0; i < failed && publisher_failure(b->pub, i); i++)
        fprintf(stderr, "  not stored: %s\n", publisher_failure(b->pub, i));
    if (fatal)
        return cli_error(EXIT_FAIL, "schedule: %s", fatal);
    if (failed)
        return EXIT_FAIL;
    return b->refused ? EXIT_USAGE : EXIT_OK;
}

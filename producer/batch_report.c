/* What a person sees of a batch: on a terminal a progress line (done/total, rate, ETA), on a
 * pipe nothing until the summary; the summary names every refused line (the first 100), and
 * every line whose id was taken by something else or could not be compared (the first 100). */
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

static const char *
outcome(enum sa_code rc)
{
    return rc == SA_ECONFLICT ? "taken" : rc == SA_ENOTFOUND ? "unverified" : "unchecked";
}

static long
dups_kept(const struct batch *b)
{
    long n = b->taken + b->unverified + b->unchecked;

    return n < BATCH_REFUSALS_KEPT ? n : BATCH_REFUSALS_KEPT;
}

static void
print_json(struct batch *b, long scheduled, long already, long failed, const char *fatal)
{
    json_t *refusals = json_array(), *taken = json_array();

    for (long i = 0; i < b->refused && i < BATCH_REFUSALS_KEPT; i++)
        json_array_append_new(refusals, json_pack("{s:I, s:s}", "line", (json_int_t)b->refusals[i].line,
                                                  "error", b->refusals[i].why));
    for (long i = 0; i < dups_kept(b); i++)
        json_array_append_new(taken,
                              json_pack("{s:I, s:s, s:s, s:s}", "line", (json_int_t)b->dups[i].line,
                                        "id", b->dups[i].id, "outcome", outcome(b->dups[i].code),
                                        "error", b->dups[i].why));
    json_t *o = json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:s?}", "scheduled", (json_int_t)scheduled,
        "already_scheduled", (json_int_t)already, "refused", (json_int_t)b->refused, "failed",
        (json_int_t)failed, "id_taken", (json_int_t)b->taken, "id_unverified",
        (json_int_t)b->unverified, "refusals", refusals, "taken", taken, "error", fatal);
    json_dumpf(o, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(o);
}

static int
exit_code(const struct batch *b, long failed, const char *fatal)
{
    if (fatal)
        return cli_error(EXIT_FAIL, "schedule: %s", fatal);
    if (failed)
        return EXIT_FAIL;
    if (b->taken)
        return EXIT_TAKEN;
    if (b->unverified)
        return EXIT_UNVERIFIED;
    return b->refused ? EXIT_USAGE : EXIT_OK;
}

int
batch_summary(struct batch *b, const char *fatal)
{
    /* a series scheduled before counts as already scheduled too */
    long acked = 0, dups = 0, failed = 0, already = b->already + b->series_again;

    if (b->pub)
        publisher_counts(b->pub, &acked, &dups, &failed);
    failed += b->unchecked;
    if (b->o->cli.json)
        print_json(b, acked + already, already, failed, fatal);
    fprintf(stderr, "sendat: scheduled %ld (%ld of them already were), refused %ld, failed %ld%s",
            acked + already, already, b->refused, failed,
            b->o->strict && b->refused ? " (--strict: nothing published)" : "");
    if (b->taken + b->unverified)
        fprintf(stderr, ", id taken %ld, cannot compare %ld", b->taken, b->unverified);
    fputc('\n', stderr);
    for (long i = 0; i < b->refused && i < BATCH_REFUSALS_KEPT; i++)
        fprintf(stderr, "  line %ld: %s\n", b->refusals[i].line, b->refusals[i].why);
    for (long i = 0; i < dups_kept(b); i++)
        fprintf(stderr, "  line %ld: %s\n", b->dups[i].line, b->dups[i].why);
    for (long i = 0; i < failed && publisher_failure(b->pub, i); i++)
        fprintf(stderr, "  not stored: %s\n", publisher_failure(b->pub, i));
    return exit_code(b, failed, fatal);
}

/* What a person sees of a batch: on a terminal a progress line (done/total, rate, ETA), on a
 * pipe nothing until the summary; the summary names every refused line (the first 100), and
 * every line whose id was taken by something else or could not be compared (the first 100). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "booker.h"
#include "schedule.h"
#include "timeparse.h"

void
batch_progress(struct batch *b, int last)
{
    int64_t now, ms;
    double rate;
    char bar[31] = "";

    if (!b->tty) /* before the clock: this is asked after every line */
        return;
    now = sa_now_ms();
    ms = now - b->started_ms;
    rate = ms > 0 ? (double)b->line * 1000.0 / (double)ms : 0;
    if (!last && now - b->shown_ms < 100)
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

/* Whether line is among those whose id was taken, could not be compared, or not stored. */
static int
line_failed(struct batch *b, long line)
{
    long at = 0;

    for (long i = 0; i < dups_kept(b); i++)
        if (b->dups[i].line == line)
            return 1;
    for (long i = 0; booker_failure(b->bk, i, &at); i++)
        if (at == line)
            return 1;
    return 0;
}

/* n in decimal on stdout: once or twice per booked line, so without printf. */
static void
put_long(long n)
{
    char digits[24];
    size_t at = sizeof(digits);
    unsigned long u = n < 0 ? 0 - (unsigned long)n : (unsigned long)n;

    do {
        digits[--at] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (n < 0)
        digits[--at] = '-';
    fwrite(digits + at, 1, sizeof(digits) - at, stdout);
}

/* Whether id is only of A-Z a-z 0-9 . _ - (written as it is), checked without strspn's
 * table of 65 characters per id. */
static int
plain_id(const char *id)
{
    for (; *id; id++)
        if (!((*id >= 'a' && *id <= 'z') || (*id >= 'A' && *id <= 'Z') ||
              (*id >= '0' && *id <= '9') || *id == '.' || *id == '_' || *id == '-'))
            return 0;
    return 1;
}

/* One {"line":N,"id":"..."} entry; generated ids need no escaping, so most skip jansson. An id
 * jansson refuses (not UTF-8) is left out, as it was when the summary was one jansson tree. */
static int
put_id(long line, const char *id, int first)
{
    json_t *str = NULL;

    if (!plain_id(id) && !(str = json_string(id)))
        return 0;
    fputs(first ? "{\"line\":" : ",{\"line\":", stdout);
    put_long(line);
    fputs(",\"id\":", stdout);
    if (str) {
        json_dumpf(str, stdout, JSON_ENCODE_ANY);
    } else {
        putchar('"');
        fputs(id, stdout);
        putchar('"');
    }
    putchar('}');
    json_decref(str);
    return 1;
}

/* The ids of the lines that were booked (or were already), one "LINE ID" per line on stdout,
 * or as the entries of the JSON summary's "ids" array: written as they are read, one batch
 * can hold millions. */
static void
booked_ids(struct batch *b, int json)
{
    int first = 1;

    for (size_t i = 0; i < b->n_booked; i++) {
        if (line_failed(b, b->booked[i].line))
            continue;
        if (!json) {
            put_long(b->booked[i].line);
            putchar(' ');
            fputs(b->booked[i].id, stdout);
            putchar('\n');
        } else if (put_id(b->booked[i].line, b->booked[i].id, first))
            first = 0;
    }
}

static void
print_json(struct batch *b, long scheduled, long already, long failed, const char *fatal)
{
    json_t *refusals = json_array(), *taken = json_array();

    for (long i = 0; i < b->refused && i < BATCH_REFUSALS_KEPT; i++)
        json_array_append_new(refusals,
                              json_pack("{s:I, s:s}", "line", (json_int_t)b->refusals[i].line,
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
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    size_t len = text ? strlen(text) : 0;

    if (len > 1) { /* the summary without its closing brace, then the ids and the brace */
        fwrite(text, 1, len - 1, stdout);
        fputs(",\"ids\":[", stdout);
        booked_ids(b, 1);
        fputs("]}", stdout);
    }
    putchar('\n');
    free(text);
    json_decref(o);
}

static int
exit_code(const struct batch *b, long failed, const char *fatal)
{
    if (fatal)
        return cli_error(b->full ? EXIT_FULL : EXIT_FAIL, "schedule: %s", fatal);
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

    if (b->bk)
        booker_counts(b->bk, &acked, &dups, &failed);
    failed += b->unchecked;
    if (b->json)
        print_json(b, acked + already, already, failed, fatal);
    else
        booked_ids(b, 0);
    fprintf(stderr, "sendat: scheduled %ld (%ld of them already were), refused %ld, failed %ld%s",
            acked + already, already, b->refused, failed,
            b->strict && b->refused ? " (--strict: nothing published)" : "");
    if (b->taken + b->unverified)
        fprintf(stderr, ", id taken %ld, cannot compare %ld", b->taken, b->unverified);
    fputc('\n', stderr);
    if (b->no_id)
        fprintf(stderr,
                "sendat: %ld line%s had no \"id\": running this file again books %s "
                "again (give each line an id to make a rerun safe)\n",
                b->no_id, b->no_id == 1 ? "" : "s", b->no_id == 1 ? "it" : "them");
    for (long i = 0; i < b->refused && i < BATCH_REFUSALS_KEPT; i++)
        fprintf(stderr, "  line %ld: %s\n", b->refusals[i].line, b->refusals[i].why);
    for (long i = 0; i < dups_kept(b); i++)
        fprintf(stderr, "  line %ld: %s\n", b->dups[i].line, b->dups[i].why);
    for (long i = 0; i < failed && booker_failure(b->bk, i, NULL); i++)
        fprintf(stderr, "  not stored: %s\n", booker_failure(b->bk, i, NULL));
    return exit_code(b, failed, fatal);
}

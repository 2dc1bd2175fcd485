/* The batch run (booker.h). A line is held sealed until its run goes out: the lines of a run
 * that name their own id are asked about at once (dupcheck_gone_many: an id whose task finished
 * is refused instead of published and dropped by the fleet), then the run is published in one
 * go, so its tasks leave in few socket writes instead of one round trip each. A series is
 * registered when its line is taken and its first task published with the run, like any other
 * line. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "booker.h"
#include "group.h"
#include "publish.h"
#include "series.h"
#include "tasklimit.h"
#include "timeparse.h"

struct held { /* a sealed line waiting for its run */
    long line;
    struct sa_task *t;
    uint8_t *env;
    size_t len;
    int id_given;
};

struct booker {
    struct sa_nats *n;
    struct sa_keyring *const *ring;
    pthread_rwlock_t *ring_lock;
    int all_or_none;
    booker_report report;
    void *ctx;
    struct publisher *pub;
    struct held *held;
    size_t n_held, cap_held;
    int64_t groups_ttl_ms; /* group_ttl, read at the first grouped line; -1 before */
    enum sa_code stopped;  /* what a report stopped the run with, and why */
    struct sa_err stop;
};

static void
lock(struct booker *bk)
{
    if (bk->ring_lock)
        pthread_rwlock_rdlock(bk->ring_lock);
}

static void
unlock(struct booker *bk)
{
    if (bk->ring_lock)
        pthread_rwlock_unlock(bk->ring_lock);
}

enum sa_code
booker_new(struct booker **out, struct sa_nats *n, struct sa_keyring *const *ring,
           pthread_rwlock_t *ring_lock, int all_or_none, booker_report report, void *ctx,
           struct sa_err *err)
{
    struct booker *bk = calloc(1, sizeof(*bk));
    enum sa_code rc;

    *out = NULL;
    if (!bk)
        return sa_fail(err, SA_ENOMEM, "no memory for a batch");
    *bk = (struct booker){.n = n,
                          .ring = ring,
                          .ring_lock = ring_lock,
                          .all_or_none = all_or_none,
                          .report = report,
                          .ctx = ctx,
                          .groups_ttl_ms = -1};
    if ((rc = publisher_new(&bk->pub, n, BOOKER_IN_FLIGHT, err)) != SA_OK) {
        free(bk);
        return rc;
    }
    *out = bk;
    return SA_OK;
}

/* A series: room in its shard first (a series registered stays registered), then its record;
 * SA_EEXIST if it was scheduled already. */
static enum sa_code
register_series(struct booker *bk, const struct sa_task *t, struct sa_err *err)
{
    enum sa_code rc = tasklimit_admit(bk->n, sa_layout_shard_of(&bk->n->layout, t->id), 0, err);

    return rc == SA_OK ? series_register(bk->n, t, err) : rc;
}

static enum sa_code
hold(struct booker *bk, const struct held *h, struct sa_err *err)
{
    if (bk->n_held == bk->cap_held) {
        size_t cap = bk->cap_held ? bk->cap_held * 2 : BOOKER_RUN;
        struct held *grown = realloc(bk->held, cap * sizeof(*grown));
        if (!grown)
            return sa_fail(err, SA_ENOMEM, "no memory to hold %zu tasks", bk->n_held);
        bk->held = grown;
        bk->cap_held = cap;
    }
    bk->held[bk->n_held++] = *h;
    return SA_OK;
}

enum sa_code
booker_add(struct booker *bk, long line, struct sa_task *t, int id_given, char id[SA_ID_MAX + 1],
           struct sa_err *err)
{
    struct held h = {.line = line, .t = t, .id_given = id_given && !t->cron};
    enum sa_code rc = SA_OK;

    if (t->group[0] && bk->groups_ttl_ms < 0)
        rc = group_ttl(bk->n, &bk->groups_ttl_ms, err);
    if (rc == SA_OK)
        rc = group_fits(t, sa_now_ms(), bk->groups_ttl_ms, err);
    if (rc == SA_OK && t->cron)
        rc = register_series(bk, t, err);
    if (rc == SA_OK || rc == SA_EEXIST)
        snprintf(id, SA_ID_MAX + 1, "%s", t->cron ? t->series_id : t->id);
    if (rc == SA_OK) {
        lock(bk);
        rc = sa_task_seal(*bk->ring, t, &h.env, &h.len, err);
        unlock(bk);
    }
    if (rc == SA_OK && (rc = hold(bk, &h, err)) == SA_OK)
        return SA_OK;
    free(h.env);
    sa_task_free(t);
    return rc;
}

/* Tells the door; a stop is kept for the rest of the run. */
static void
tell(struct booker *bk, const struct booker_outcome *o)
{
    if (bk->stopped == SA_OK)
        bk->stopped = bk->report(bk->ctx, o, &bk->stop);
}

static void
drop(struct held *h)
{
    if (h->env)
        sodium_memzero(h->env, h->len); /* recipients and bodies */
    free(h->env);
    sa_task_free(h->t);
    *h = (struct held){0};
}

/* Reports every duplicate PubAck arrived so far, each read back and compared. */
static void
check_dups(struct booker *bk)
{
    uint64_t seq;
    natsMsg *msg;
    long line;

    while (publisher_next_dup(bk->pub, &line, &seq, &msg)) {
        struct sa_err err = {0};
        struct sa_place place = {0};
        enum sa_code rc;

        lock(bk);
        rc = dupcheck_verify_sealed(bk->n, *bk->ring, msg, seq, &err);
        unlock(bk);
        (void)!sa_layout_parse_subject(&place, natsMsg_GetSubject(msg), NULL);
        tell(bk, &(struct booker_outcome){.what = rc == SA_OK ? BOOKER_ALREADY : BOOKER_DUP,
                                          .line = line,
                                          .id = place.id,
                                          .rc = rc,
                                          .err = rc == SA_OK ? NULL : &err});
        natsMsg_Destroy(msg);
    }
}

static struct booker_outcome
outcome_of(const struct held *h, enum booker_what what, enum sa_code rc, const struct sa_err *err)
{
    return (struct booker_outcome){.what = what,
                                   .line = h->line,
                                   .id = h->t->cron ? h->t->series_id : h->t->id,
                                   .id_given = h->id_given,
                                   .series = h->t->cron != NULL,
                                   .rc = rc,
                                   .err = err};
}

/* Asks about the held lines that name their id, all at once; each answer in asks[i] (a line
 * that names none: SA_OK). Returns SA_OK, or why nothing could be asked. */
static enum sa_code
ask_gone(struct booker *bk, struct gone_ask *asks, struct sa_err *err)
{
    struct gone_ask *named;
    size_t *at, count = 0;
    enum sa_code rc;

    for (size_t i = 0; i < bk->n_held; i++)
        count += bk->held[i].id_given;
    if (!count) /* nothing to ask: no allocation (a large one consolidates the heap each run) */
        return SA_OK;
    named = calloc(count, sizeof(*named));
    at = calloc(count, sizeof(*at));
    rc = named && at ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory to check %zu ids", count);
    count = 0;
    for (size_t i = 0; rc == SA_OK && i < bk->n_held; i++)
        if (bk->held[i].id_given) {
            named[count] =
                (struct gone_ask){.id = bk->held[i].t->id, .booked_ms = bk->held[i].t->created_ms};
            at[count++] = i;
        }
    if (rc == SA_OK)
        rc = dupcheck_gone_many(bk->n, named, count, err);
    for (size_t k = 0; rc == SA_OK && k < count; k++)
        asks[at[k]] = named[k];
    free(named);
    free(at);
    return rc;
}

/* The held lines checked and published (publish = 0, or a stop: dropped), then freed. */
static void
flush(struct booker *bk, int publish)
{
    struct gone_ask *asks = bk->n_held ? calloc(bk->n_held, sizeof(*asks)) : NULL;
    struct sa_err err = {0};
    enum sa_code rc = SA_OK;
    int gone = 0;

    if (publish && bk->n_held && !asks)
        rc = sa_fail(&err, SA_ENOMEM, "no memory to check %zu ids", bk->n_held);
    if (publish && rc == SA_OK)
        rc = ask_gone(bk, asks, &err);
    for (size_t i = 0; publish && rc == SA_OK && i < bk->n_held; i++)
        gone += asks[i].rc != SA_OK;
    for (size_t i = 0; i < bk->n_held; i++) {
        struct held *h = &bk->held[i];
        struct sa_err perr = {0};
        enum sa_code prc;

        if (!publish || bk->stopped != SA_OK) {
            /* dropped unpublished */
        } else if (rc != SA_OK) {
            struct booker_outcome o = outcome_of(h, BOOKER_NOT_SENT, rc, &err);
            tell(bk, &o);
        } else if (asks[i].rc != SA_OK) {
            struct booker_outcome o = outcome_of(h, BOOKER_GONE, asks[i].rc, &asks[i].err);
            o.gone = &asks[i].gone;
            tell(bk, &o);
        } else if (!(bk->all_or_none && gone)) {
            prc = publisher_send(bk->pub, h->t, h->env, h->len, sa_now_ms(), h->line, &perr);
            struct booker_outcome o = prc == SA_OK ? outcome_of(h, BOOKER_SENT, SA_OK, NULL)
                                                   : outcome_of(h, BOOKER_NOT_SENT, prc, &perr);
            tell(bk, &o);
            check_dups(bk);
        }
        drop(h);
    }
    bk->n_held = 0;
    free(asks);
}

enum sa_code
booker_step(struct booker *bk, struct sa_err *err)
{
    check_dups(bk);
    if (!bk->all_or_none && bk->n_held >= BOOKER_RUN)
        flush(bk, 1);
    if (bk->stopped != SA_OK)
        *err = bk->stop;
    return bk->stopped;
}

enum sa_code
booker_finish(struct booker *bk, int publish, struct sa_err *err)
{
    enum sa_code rc = SA_OK;
    const char *failure;
    long at;

    flush(bk, publish);
    if (publish && bk->stopped == SA_OK)
        rc = publisher_finish(bk->pub, BOOKER_FINISH_MS, err);
    check_dups(bk);
    for (long i = 0; rc == SA_OK && (failure = booker_failure(bk, i, &at)); i++) {
        struct sa_err ferr = {0};
        sa_fail(&ferr, SA_ENATS, "not stored: %s", failure);
        tell(bk, &(struct booker_outcome){
                     .what = BOOKER_FAILED, .line = at, .rc = SA_ENATS, .err = &ferr});
    }
    if (rc == SA_OK && bk->stopped != SA_OK) {
        *err = bk->stop;
        rc = bk->stopped;
    }
    return rc;
}

void
booker_counts(struct booker *bk, long *acked, long *duplicates, long *failed)
{
    publisher_counts(bk->pub, acked, duplicates, failed);
}

const char *
booker_failure(struct booker *bk, long i, long *line)
{
    return publisher_failure(bk->pub, i, line);
}

void
booker_free(struct booker *bk)
{
    if (!bk)
        return;
    for (size_t i = 0; i < bk->n_held; i++)
        drop(&bk->held[i]);
    free(bk->held);
    publisher_free(bk->pub);
    free(bk);
}

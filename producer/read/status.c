/* A task's history without an index written at schedule time, for `sendat status` and
 * `GET /v1/tasks/{id}`. Where it waits now comes from a direct get by subject (its headers say
 * when it was scheduled and moved); what happened after comes from the claim record's
 * revisions and the dead-letter stream. A series id falls back to the series' occurrences. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "events.h"
#include "find.h"
#include "series_status.h"
#include "status.h"
#include "task.h"
#include "timeparse.h"

/* What the task itself says: its due time and not-after, when the waiting copy opens with the
 * caller's key ring (status works without a key; it then knows the due time from the claim or
 * a generated id). */
struct facts {
    int64_t due_ms, not_after_ms;
};

static void
open_facts(const struct sa_keyring *ring, natsMsg *msg, const char *id, struct facts *f)
{
    struct sa_task *t = NULL;

    if (!ring)
        return;
    if (sa_task_open(ring, id, (const uint8_t *)natsMsg_GetData(msg),
                     (size_t)natsMsg_GetDataLength(msg), &t, NULL) == SA_OK) {
        f->due_ms = t->attempt > 1 ? 0 : t->due_ms; /* a retry's due is its backoff's end */
        f->not_after_ms = t->not_after_ms;
    }
    sa_task_free(t);
}

static void
add_due(json_t *events, const char *id, const struct facts *f, const struct sa_claim *first)
{
    int64_t due = first ? first->due_ms : f->due_ms;
    json_t *fields = json_object();
    char text[40];

    if (!due)
        due = f->due_ms ? f->due_ms : sa_layout_id_due(id);
    if (due <= 0) {
        json_decref(fields);
        return;
    }
    if (f->not_after_ms) {
        sa_time_format(text, sizeof(text), f->not_after_ms);
        json_object_set_new(fields, "not_after", json_string(text));
    }
    events_add(events, due, "due", fields);
}

/* The Sendat-Scheduled and Sendat-Moved headers are not sealed: anyone who may publish to
 * the stream can write them. A time before sendat existed or after the copy was stored
 * (more than a clock's skew) is not believed: 0, shown as no time, never as 1970. */
#define TRUSTED_MIN_MS 1577836800000LL /* 2020-01-01 */
#define SKEW_MS 60000

static int64_t
believable(int64_t at_ms, int64_t stored_ms)
{
    return at_ms >= TRUSTED_MIN_MS && (!stored_ms || at_ms <= stored_ms + SKEW_MS) ? at_ms : 0;
}

static void
add_origin(json_t *events, int64_t scheduled, int moves, int64_t moved, int64_t slot)
{
    char at[40];

    if (scheduled)
        events_add(events, scheduled, "scheduled", NULL);
    sa_time_format(at, sizeof(at), slot);
    if (moves > 0 && moved)
        events_add(events, moved, "moved",
                   slot ? json_pack("{s:i, s:s}", "moves", moves, "slot", at)
                        : json_pack("{s:i}", "moves", moves));
}

/* Where the task waits now, stamped with the time it began waiting there: after the last
 * event before it (its scheduling, its move, or the attempt that failed). The copy's own
 * stream time stands in for an unbelievable header: a copy never moved was stored when it
 * was scheduled, a moved one when it was moved. */
static void
add_waiting(json_t *events, natsMsg *msg, int origin)
{
    int64_t stored = natsMsg_GetTime(msg) / 1000000, scheduled, moved;
    int moves = (int)find_header_i64(msg, "Sendat-Moves");
    struct sa_place p;
    char from[40];

    if (sa_layout_is_park(natsMsg_GetSubject(msg), NULL)) {
        /* it did not open with some consumer's keys: waiting for its key (park.h) */
        if (origin)
            add_origin(events, find_header_i64(msg, "Sendat-Scheduled"),
                       (int)find_header_i64(msg, "Sendat-Moves"),
                       find_header_i64(msg, "Sendat-Moved"), 0);
        events_add(events, events_latest(events), "waiting", json_pack("{s:s}", "level", "park"));
        return;
    }
    if (sa_layout_parse_subject(&p, natsMsg_GetSubject(msg), NULL) != SA_OK)
        return;
    scheduled = believable(find_header_i64(msg, "Sendat-Scheduled"), stored);
    moved = believable(find_header_i64(msg, "Sendat-Moved"), stored);
    if (origin)
        add_origin(events, scheduled || moves > 0 ? scheduled : believable(stored, 0), moves,
                   moved ? moved : believable(stored, 0), p.slot);
    sa_time_format(from, sizeof(from), p.slot ? p.slot : p.window); /* the level's start */
    events_add(events, events_latest(events), "waiting",
               json_pack("{s:s, s:s}", "level", p.slot ? "slot" : "window", "from", from));
}

static int
by_cli(const struct sa_claim *c)
{
    return !strncmp(c->consumer, "sendat ", 7); /* "sendat cancel", "sendat dlq replay" */
}

static json_t *
claim_fields(const struct sa_claim *c)
{
    json_t *f;

    if (c->state == SA_CLAIM_JUNK) /* what it claims is nobody's word: only why it is junk */
        return json_pack("{s:s}", "error", c->error);
    f = json_pack("{s:s}", "consumer", c->consumer);
    if (c->unverified)
        json_object_set_new(f, "unverified", json_string("no key: its MAC was not checked"));
    if (!by_cli(c))
        json_object_set_new(f, "attempt", json_integer(c->attempt));
    if (c->state == SA_CLAIM_SENT) {
        json_object_set_new(f, "lateness_ms", json_integer(c->lateness_ms));
        json_object_set_new(f, "delivery_lateness_ms", json_integer(c->delivery_lateness_ms));
        json_object_set_new(f, c->channel == SA_CHANNEL_EMAIL ? "smtp_status" : "http_status",
                            json_integer(c->http_status));
    }
    if (c->error[0]) /* a replay's record says where it came from: no error */
        json_object_set_new(f, c->state == SA_CLAIM_RETRYING && by_cli(c) ? "note" : "error",
                            json_string(c->error));
    return f;
}

static const char *
claim_event(const struct sa_claim *c)
{
    static const char *names[] = {"",          "claimed",       "sent",    "failed",
                                  "cancelled", "dead-lettered", "skipped", "junk"};

    if (c->state == SA_CLAIM_RETRYING && by_cli(c))
        return "replayed";
    if (c->state == SA_CLAIM_SKIPPED)
        return sa_claim_state_text(c);
    return names[c->state];
}

static void
add_claims(json_t *events, const struct sa_claim *list, size_t count, int origin)
{
    if (count > 0 && origin) /* the claim copied the headers: no later than the claim */
        add_origin(events, believable(list[0].scheduled_ms, list[0].at_ms), list[0].moves,
                   believable(list[0].moved_ms, list[0].at_ms), 0);
    for (size_t i = 0; i < count; i++)
        events_add(events, list[i].at_ms, claim_event(&list[i]), claim_fields(&list[i]));
}

static int
settled(const struct sa_claim *list, size_t count)
{
    enum sa_claim_state last = count ? list[count - 1].state : SA_CLAIM_NONE;

    return last == SA_CLAIM_SENT || last == SA_CLAIM_CANCELLED || last == SA_CLAIM_DEAD ||
           last == SA_CLAIM_SKIPPED;
}

static enum sa_code
add_dead(struct sa_nats *n, const char *id, json_t *events, struct sa_err *err)
{
    natsMsg *dead = NULL;
    const char *why = NULL;
    enum sa_code rc = find_dead(n, id, &dead, err);

    if (rc == SA_OK) {
        natsMsgHeader_Get(dead, "Sendat-Reason", &why);
        events_add(events, find_header_i64(dead, "Sendat-Failed"), "dead-lettered",
                   json_pack("{s:s}", "error", why ? why : ""));
    }
    natsMsg_Destroy(dead);
    return rc == SA_ENOTFOUND ? SA_OK : rc;
}

static enum sa_code
task_events(struct sa_nats *n, const struct sa_keyring *ring, const char *id, json_t *events,
            struct sa_err *err)
{
    struct sa_claim *list = NULL;
    struct facts f = {0};
    natsMsg *msg = NULL;
    size_t count = 0;
    enum sa_code rc = find_task(n, id, &msg, err);

    if (rc == SA_OK)
        open_facts(ring, msg, id, &f);
    if (rc == SA_ENOTFOUND)
        sa_err_clear(err);
    if (rc == SA_OK || rc == SA_ENOTFOUND)
        rc = sa_claim_history(n->js, sa_nats_claims(n, id), id, &list, &count, err);
    if (rc == SA_OK) {
        add_claims(events, list, count, 1);
        if (msg && !settled(list, count)) /* a copy left behind a cancel is not "waiting" */
            add_waiting(events, msg, count == 0);
        if (count == 0 || list[count - 1].state != SA_CLAIM_DEAD)
            rc = add_dead(n, id, events, err);
    }
    if (rc == SA_OK && json_array_size(events) > 0) {
        add_due(events, id, &f, count ? &list[0] : NULL);
        events_sort(events);
    }
    natsMsg_Destroy(msg);
    free(list);
    return rc;
}

/* An id of sendat's own form ("<due>-<random>") with no task stored, no claim and no dead
 * letter, whose due time the claims ledger would still remember: had sendat booked and sent,
 * cancelled or dead-lettered it, one of them would be there, since a task is acked only after
 * its claim or dead letter is written (invariant 1). Either the id was never booked, or the
 * task was acked away without a claim (consumer credentials without the key, issue 37.11):
 * status says "missing" and how to book it again, instead of "unknown id": `sendat schedule`
 * gives the booking a new id (a generated id carries no Msg-Id, so nothing in the stream
 * remembers it; `--id` with it again would be stored like any free id). */
static enum sa_code
add_missing(struct sa_nats *n, const char *id, json_t *events, struct sa_err *err)
{
    int64_t due = sa_layout_id_due(id), ttl = 0;

    if (!due || find_claims_ttl(n, id, &ttl, NULL) != SA_OK ||
        sa_now_ms() - due > sa_claim_memory_ms(ttl))
        return SA_ENOTFOUND;
    sa_err_clear(err);
    events_add(events, due, "due", json_object());
    events_add(events, sa_now_ms(), "missing",
               json_pack("{s:s}", "error",
                         "no task, claim or dead letter: never booked, or taken from the stream "
                         "without a claim; book it again with `sendat schedule` (under a new "
                         "id)"));
    return SA_OK;
}

enum sa_code
status_collect(struct sa_nats *n, const struct sa_keyring *ring, const char *id, json_t *events,
               struct sa_err *err)
{
    enum sa_code rc = task_events(n, ring, id, events, err);

    if (rc == SA_OK && json_array_size(events) == 0)
        rc = series_events(n, id, events, err);
    if (rc == SA_ENOTFOUND)
        rc = add_missing(n, id, events, err);
    if (rc == SA_ENOTFOUND)
        sa_fail(err, SA_ENOTFOUND, "unknown id");
    return rc;
}

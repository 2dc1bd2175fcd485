/* Invariant 5 (nothing is dropped silently) for messages nobody reads: a subject the layout
 * never writes (no durable's filter matches it) or a window the catch-up cursor has passed.
 * For each shard it serves, one fleet member at a time walks the shard's task stream by
 * sequence, from the shard's record in the meta bucket on ("sweep", "sweep.<k>"; compare-and-set
 * on its revision), so each message is looked at once in its life; dead letter first, and only
 * after its PubAck the delete (invariant 1). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "envelope.h"
#include "log.h"
#include "logsum.h"
#include "deadletter.h"
#include "sweep.h"
#include "sweepread.h"
#include "sweeprec.h"
#include "task.h"
#include "timeparse.h"
#include "turns.h"

#define SWEEP_MAX_PER_RUN 20000 /* the rest next time */
/* Dead letters per shard and turn: 100,000 junk messages on subjects no level reads reach the
 * dead-letter stream 1,000 a turn, not at once (issue 24); the rest wait for the next turns. */
#define SWEEP_DEAD_PER_RUN 1000

struct sweep {
    struct turns turns; /* first: turns_spawn */
    struct consumer *c;
    int64_t interval_ms;
    struct logsum lines; /* unread_task lines, summarised (sweep thread only) */
};

/* One turn: the record as it will be written, and what the walk found. */
struct run {
    struct sweep *s;
    char stream[32];              /* the shard's task stream */
    char key[32], cursor_key[32]; /* its sweep record and catch-up cursor in the meta bucket */
    char subjects[SA_SUBJECT_MAX];
    struct sa_sweep_record rec;
    uint64_t rev;
    int64_t now;
    int64_t until;  /* a turn ends within half an interval, so the next member's never overlaps */
    int64_t passed; /* the cursor at the previous turn: windows before it are pulled by nobody */
    uint64_t undecided; /* the first message to look at again next turn (0: none) */
    uint64_t found;
};

enum verdict { READ_LATER, UNDECIDED, UNREAD };

static int
stopping(const struct sweep *s)
{
    return turns_stopping(&s->turns);
}

/* A turn ends early while due tasks wait for a send slot: the sends get the CPU, the rest of
 * the walk comes next turn. */
static int
give_way(const struct sweep *s)
{
    return stopping(s) || atomic_load(&s->c->sender_busy);
}

/* A window over but not before the previous turn's cursor may still be caught up: undecided.
 * The previous turn's cursor, not the current one: a member drops a level within a second
 * of finding it drained, so a cursor that stood for a whole interval is passed by everyone. */
static enum verdict
classify(const struct run *r, const char *subject, char *why, size_t cap)
{
    const struct sa_layout *l = &r->s->c->n->layout;
    struct sa_err err = {0};
    int64_t w, slot;

    if (sa_layout_is_park(subject, NULL))
        return READ_LATER; /* the park's durable reads it (park.h) */
    if (sa_layout_level_of(l, subject, &w, &slot, &err) != SA_OK) {
        snprintf(why, cap, "never read: %s", err.msg);
        return UNREAD;
    }
    if (w < r->passed) {
        snprintf(why, cap, "never read: window %" PRId64 " is before the catch-up cursor %" PRId64,
                 w, r->passed);
        return UNREAD;
    }
    return w + l->window_ms <= r->now ? UNDECIDED : READ_LATER;
}

/* Whether subject is a level of a window after the next one: a task there is judged by its body
 * now, not when its window comes (judge_body). */
static int
far_ahead(const struct run *r, const char *subject)
{
    const struct sa_layout *l = &r->s->c->n->layout;
    int64_t w, slot;

    return !sa_layout_is_park(subject, NULL) &&
           sa_layout_level_of(l, subject, &w, &slot, NULL) == SA_OK &&
           w > sa_layout_window(l, r->now) + l->window_ms;
}

/* Issue 37.5: junk a keyless publisher put in a window years ahead would hold places under the
 * stream's size limit until then, and make every booking exit 7. So a message far ahead is
 * opened once, when the walk passes it: one that does not open with the ring (or whose task
 * does not decode) is unread, dead-lettered now with the reason; one sealed with a key this
 * member lacks is left for its window (the park judges it then, as mid-rotation). */
static enum verdict
judge_body(const struct run *r, const char *subject, natsMsg *m, char *why, size_t cap)
{
    struct consumer *c = r->s->c;
    const uint8_t *data = (const uint8_t *)natsMsg_GetData(m);
    size_t len = (size_t)natsMsg_GetDataLength(m);
    struct sa_place place;
    struct sa_task *t = NULL;
    struct sa_err err = {0};
    enum sa_code rc;
    int key_unknown;

    if (sa_layout_parse_subject(&place, subject, &err) != SA_OK) {
        snprintf(why, cap, "never read: %s", err.msg);
        return UNREAD;
    }
    pthread_rwlock_rdlock(&c->ring_lock);
    rc = sa_task_open(c->ring, place.id, data, len, &t, &err);
    key_unknown = rc != SA_OK && sa_envelope_key_unknown(c->ring, data, len);
    pthread_rwlock_unlock(&c->ring_lock);
    sa_task_free(t);
    if (rc == SA_OK || key_unknown)
        return READ_LATER;
    snprintf(why, cap, "junk far ahead: %.280s", err.msg);
    return UNREAD;
}

/* Subjects come from whoever could publish: bytes outside printable ASCII become '?'. */
static void
printable(char *out, size_t cap, const char *in)
{
    size_t i = 0;

    for (; in[i] && i + 1 < cap; i++)
        out[i] = in[i] > 0x20 && in[i] < 0x7f ? in[i] : '?';
    out[i] = '\0';
}

/* The whole stored message seq (the reader keeps only sequences and subjects): NULL if the
 * server that answered does not have it. */
static natsMsg *
read_whole(struct run *r, uint64_t seq, natsStatus *s)
{
    jsDirectGetMsgOptions o;
    natsMsg *m = NULL;

    jsDirectGetMsgOptions_Init(&o);
    o.Sequence = seq;
    *s = js_DirectGetMsg(&m, r->s->c->n->js, r->stream, NULL, &o);
    return *s == NATS_OK ? m : NULL;
}

/* Dead-letters stored message seq and then deletes it from the task stream: 0 if done; 1 if
 * the server that answered did not have it (deleted since, or a replica behind: looked at
 * again next turn); -1 if a dead letter or delete failed (it stays). */
static int
settle(struct run *r, uint64_t seq, const char *subject, const char *why)
{
    struct consumer *c = r->s->c;
    struct sa_place place;
    struct sa_err err = {0};
    char shown[SA_SUBJECT_MAX];
    jsErrCode jerr = 0;
    enum sa_code rc;
    natsStatus s;
    natsMsg *m = read_whole(r, seq, &s);
    int named = sa_layout_parse_subject(&place, subject, NULL) == SA_OK;

    if (!m && s == NATS_NOT_FOUND)
        return 1;
    if (!m) {
        sa_nats_fail(&err, s, 0, "read");
        sa_log(SA_LOG_ERROR, "dead_letter_failed", "seq=%" PRIu64 " error=\"%s\"", seq, err.msg);
        return -1;
    }
    printable(shown, sizeof(shown), subject);
    if (logsum_take(&r->s->lines, sa_now_ms()))
        sa_log(SA_LOG_WARN, "unread_task", "seq=%" PRIu64 " subject=%s reason=\"%s\"", seq, shown,
               why);
    rc = retry_dead_letter(c, m, named ? place.id : NULL, 0, 0, why, &err);
    natsMsg_Destroy(m);
    if (rc != SA_OK) {
        sa_log(SA_LOG_ERROR, "dead_letter_failed", "seq=%" PRIu64 " error=\"%s\"", seq, err.msg);
        return -1;
    }
    s = js_DeleteMsg(c->n->js, r->stream, seq, NULL, &jerr);
    if (s != NATS_OK && jerr != JSNoMessageFoundErr) { /* gone already: nothing left to do */
        sa_nats_fail(&err, s, jerr, "delete");
        sa_log(SA_LOG_ERROR, "unread_delete_failed", "seq=%" PRIu64 " error=\"%s\"", seq, err.msg);
        return -1;
    }
    return 0;
}

/* Judges one message (sequence got) and settles it if nobody reads it; -1 if the walk
 * must stop here (the broker failed a dead letter or a delete: the message stays). */
static int
look(struct run *r, uint64_t got, const char *subject, natsMsg *m)
{
    char why[320];
    enum verdict v = classify(r, subject, why, sizeof(why));
    int settled;

    if (v == READ_LATER && m && far_ahead(r, subject))
        v = judge_body(r, subject, m, why, sizeof(why));
    settled = v == UNREAD ? settle(r, got, subject, why) : 0;

    if (v == UNREAD && settled == 0)
        r->found++;
    if ((v == UNDECIDED || settled != 0) && !r->undecided)
        r->undecided = got;
    return settled < 0 ? -1 : 0;
}

/* Looks at up to SWEEP_MAX_PER_RUN messages from rec.next_seq on and moves next_seq past
 * what is settled for good. The reader skips deleted sequences on the server, so a drained
 * stream costs little to walk. */
static void
walk(struct run *r)
{
    struct sweepread *rd = NULL;
    struct sa_err err = {0};
    uint64_t seq = r->rec.next_seq;
    int n = 0, stop = 0;

    if (sweepread_open(&rd, r->s->c->n, r->stream, r->subjects, seq, r->until, &err) != SA_OK) {
        sa_log(SA_LOG_WARN, "sweep_failed", "stream=%s error=\"%s\"", r->stream, err.msg);
        return; /* again next turn */
    }
    while (!stop && n < SWEEP_MAX_PER_RUN && r->found < SWEEP_DEAD_PER_RUN && !give_way(r->s) &&
           sa_now_ms() < r->until) {
        char subject[SA_SUBJECT_MAX];
        uint64_t got = 0;
        natsMsg *m = NULL;

        if (sweepread_next(rd, &got, subject, sizeof(subject), &m) != NATS_OK)
            break; /* the end of the stream, or no answer: again next turn */
        n++;
        stop = look(r, got, subject, m) != 0;
        natsMsg_Destroy(m);
        seq = got + 1;
    }
    sweepread_close(rd);
    r->rec.checked += (uint64_t)n;
    r->rec.found += r->found;
    r->rec.next_seq = r->undecided ? r->undecided : seq;
}

/* Takes this turn for the fleet: reads the record and, unless another member swept within
 * the last interval, writes the start time on its revision. -1: not this member's turn. */
static int
claim(struct run *r)
{
    kvStore *meta = r->s->c->n->meta;
    kvEntry *e = NULL;
    char text[200];
    natsStatus s = kvStore_Get(&e, meta, r->key);
    uint64_t rev = 0;

    sa_sweep_record_init(&r->rec);
    if (s == NATS_OK) {
        rev = kvEntry_Revision(e);
        if (sa_sweep_record_parse(&r->rec, kvEntry_ValueString(e), NULL) != SA_OK)
            sa_sweep_record_init(&r->rec); /* not ours to read: start over, junk is found again */
    }
    kvEntry_Destroy(e);
    if (s != NATS_OK && s != NATS_NOT_FOUND)
        return -1;
    if (r->rec.last_run_ms && r->now < r->rec.last_run_ms + r->s->interval_ms * 9 / 10)
        return -1; /* swept lately by another member */
    r->passed = r->rec.cursor;
    r->rec.last_run_ms = r->now;
    sa_sweep_record_format(text, sizeof(text), &r->rec);
    s = rev ? kvStore_UpdateString(&r->rev, meta, r->key, text, rev)
            : kvStore_CreateString(&r->rev, meta, r->key, text);
    return s == NATS_OK ? 0 : -1; /* refused: another member took the turn first */
}

static int64_t
read_cursor(struct consumer *c, const char *key)
{
    kvEntry *e = NULL;
    int64_t cursor = 0;

    if (kvStore_Get(&e, c->n->meta, key) == NATS_OK)
        cursor = strtoll(kvEntry_ValueString(e), NULL, 10);
    kvEntry_Destroy(e);
    return cursor;
}

/* One shard's turn: its share of the turn's time (until), its own record and cursor. */
static void
turn_shard(struct sweep *s, int k, int64_t until)
{
    int64_t now = sa_now_ms();
    struct run r = {.s = s, .now = now, .until = until};
    char text[200];
    uint64_t rev, from;

    sa_layout_stream(r.stream, sizeof(r.stream), k);
    sa_layout_stream_subjects(r.subjects, sizeof(r.subjects), k);
    sa_layout_meta_key(r.key, sizeof(r.key), SA_SWEEP_KEY, k);
    sa_layout_meta_key(r.cursor_key, sizeof(r.cursor_key), "cursor", k);
    if (claim(&r) != 0)
        return;
    r.rec.cursor = read_cursor(s->c, r.cursor_key); /* what the next turn may take as passed */
    from = r.rec.next_seq;
    walk(&r);
    sa_sweep_record_format(text, sizeof(text), &r.rec);
    if (kvStore_UpdateString(&rev, s->c->n->meta, r.key, text, r.rev) != NATS_OK)
        sa_log(SA_LOG_WARN, "sweep_not_recorded",
               "stream=%s error=\"the record changed during the turn\"", r.stream);
    sa_log(r.found || r.rec.next_seq != from ? SA_LOG_INFO : SA_LOG_DEBUG, "sweep",
           "stream=%s from=%" PRIu64 " next=%" PRIu64 " found=%" PRIu64 " ms=%" PRId64 "%s",
           r.stream, from, r.rec.next_seq, r.found, sa_now_ms() - r.now,
           r.found >= SWEEP_DEAD_PER_RUN ? " more=next_turn" : "");
    logsum_tick(&s->lines, sa_now_ms() + LOGSUM_EVERY_MS); /* the turn's summary now */
}

/* A turn at every shard this member serves, within half an interval in all, so the next
 * member's turn never overlaps. A shard is taken only while time is left and the sends do
 * not need the CPU (a shard taken and not walked would be locked for the others till the
 * next interval), and each turn starts at another shard, so none waits behind the others. */
static void
turn(struct sweep *s)
{
    int64_t now = sa_now_ms(), until = now + s->interval_ms / 2;
    int shards = s->c->n->layout.shards, first = (int)((now / s->interval_ms) % shards);

    for (int i = 0; i < shards && !give_way(s) && sa_now_ms() < until; i++) {
        int k = (first + i) % shards;
        if (s->c->served >> k & 1)
            turn_shard(s, k, until);
    }
}

static void
sweep_turn(void *arg)
{
    turn(arg);
}

struct sweep_init {
    struct consumer *c;
    int64_t interval_ms;
};

static void
sweep_init(void *obj, void *arg)
{
    struct sweep *s = obj;
    const struct sweep_init *in = arg;

    s->c = in->c;
    s->interval_ms = in->interval_ms;
    s->lines.event = "unread_task";
}

enum sa_code
sweep_start(struct sweep **out, struct consumer *c, int64_t interval_ms, struct sa_err *err)
{
    struct sweep_init in = {c, interval_ms};

    *out = interval_ms > 0 ? turns_spawn(sizeof(**out), interval_ms, &c->stopping, sweep_init, &in,
                                         sweep_turn, "sweep", err)
                           : NULL;
    return *out || interval_ms <= 0 ? SA_OK : SA_ENOMEM;
}

void
sweep_stop(struct sweep *s)
{
    turns_free(s ? &s->turns : NULL);
}

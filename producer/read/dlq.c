/* Walking the dead-letter stream with direct gets ("next by subject"), so listing needs no
 * consumer and changes nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "claim.h"
#include "content.h"
#include "dlq.h"
#include "find.h"
#include "publish.h"
#include "task.h"
#include "timeparse.h"

#define DLQ_PREFIX "sendat.dlq."

/* The first dead letter after seq matching filter; NATS_NOT_FOUND at the end. */
static natsStatus
next_dead(struct sa_nats *n, uint64_t after, const char *filter, natsMsg **msg)
{
    jsDirectGetMsgOptions o;

    jsDirectGetMsgOptions_Init(&o);
    o.Sequence = after + 1;
    o.NextBySubject = filter;
    return js_DirectGetMsg(msg, n->js, SA_DLQ_STREAM, NULL, &o);
}

static const char *
header(natsMsg *m, const char *name)
{
    const char *v = NULL;

    return natsMsgHeader_Get(m, name, &v) == NATS_OK && v ? v : "";
}

/* A JSON string of s; text that is not UTF-8 (a junk subject) goes in escaped. */
static json_t *
text_json(const char *s)
{
    char escaped[1024];
    json_t *j = json_string(s);

    return j ? j : json_string(content_escape(escaped, sizeof(escaped), s));
}

static json_t *
entry_json(natsMsg *m)
{
    char at[40];

    sa_time_format(at, sizeof(at), find_header_i64(m, "Sendat-Failed"));
    return json_pack(
        "{s:o, s:s, s:I, s:o, s:I}", "id", text_json(natsMsg_GetSubject(m) + strlen(DLQ_PREFIX)),
        "failed", at, "attempts", (json_int_t)find_header_i64(m, "Sendat-Attempts"), "reason",
        text_json(header(m, "Sendat-Reason")), "seq", (json_int_t)natsMsg_GetSequence(m));
}

/* The human form escapes what a junk subject or reason could carry (an escape code would
 * drive the terminal); the JSON form is escaped by jansson. */
static void
print_entry(json_t *e)
{
    char id[3 * SA_SUBJECT_MAX], reason[1024];

    printf("%s %s attempts=%" JSON_INTEGER_FORMAT " reason=\"%s\"\n",
           json_string_value(json_object_get(e, "failed")),
           content_escape(id, sizeof(id), json_string_value(json_object_get(e, "id"))),
           json_integer_value(json_object_get(e, "attempts")),
           content_escape(reason, sizeof(reason), json_string_value(json_object_get(e, "reason"))));
}

static void
print_details(json_t *e)
{
    char text[1024];
    json_t *a, *list = json_object_get(e, "failed_attempts");
    size_t i;

    if (json_object_get(e, "webhook"))
        printf("  webhook %s\n", content_escape(text, sizeof(text),
                                                json_string_value(json_object_get(e, "webhook"))));
    json_array_foreach(list, i, a)
        printf("  attempt %" JSON_INTEGER_FORMAT " at %s: %s\n",
               json_integer_value(json_object_get(a, "attempt")),
               json_string_value(json_object_get(a, "at")),
               content_escape(text, sizeof(text), json_string_value(json_object_get(a, "error"))));
    if (json_object_get(e, "unreadable"))
        printf("  cannot open the task: %s\n",
               content_escape(text, sizeof(text),
                              json_string_value(json_object_get(e, "unreadable"))));
    content_print(e, "");
}

enum sa_code
dlq_page(struct sa_nats *n, uint64_t after, long limit, json_t *out, uint64_t *last,
         struct sa_err *err)
{
    natsMsg *m = NULL;
    natsStatus s = NATS_OK;
    long count = 0;

    *last = after;
    while (count < limit && (s = next_dead(n, *last, DLQ_PREFIX ">", &m)) == NATS_OK) {
        json_array_append_new(out, entry_json(m));
        *last = natsMsg_GetSequence(m);
        natsMsg_Destroy(m);
        m = NULL;
        count++;
    }
    if (s != NATS_OK && s != NATS_NOT_FOUND)
        return sa_nats_fail(err, s, 0, "dlq list");
    return SA_OK;
}

enum sa_code
dlq_list(struct sa_nats *n, int json, long limit, struct sa_err *err)
{
    json_t *list = json_array(), *e;
    uint64_t last = 0;
    size_t i, count;
    enum sa_code rc = dlq_page(n, 0, limit, list, &last, err);

    count = json_array_size(list);
    if (json && rc == SA_OK) { /* one document, as GET /v1/dead-letters answers */
        char next[24];
        json_t *doc;
        snprintf(next, sizeof(next), "%" PRIu64, last);
        doc = json_pack("{s:O, s:o}", "dead_letters", list, "next_cursor",
                        (long)count == limit ? json_string(next) : json_null());
        json_dumpf(doc, stdout, JSON_COMPACT);
        putchar('\n');
        json_decref(doc);
    } else if (!json) {
        json_array_foreach(list, i, e) print_entry(e);
    }
    json_decref(list);
    if (rc != SA_OK)
        return rc;
    if (!json)
        fprintf(stderr, "%zu dead letter%s%s\n", count, count == 1 ? "" : "s",
                (long)count == limit ? " (limit reached)" : "");
    return SA_OK;
}

static void
add_attempts(json_t *e, const struct sa_task *t)
{
    json_t *list = json_array();
    json_int_t last = json_integer_value(json_object_get(e, "attempts"));
    char at[40];

    for (size_t i = 0; i < t->n_attempts; i++) {
        sa_time_format(at, sizeof(at), t->attempt_at_ms[i]);
        json_array_append_new(list, json_pack("{s:i, s:s, s:o}", "attempt", (int)i + 1, "at", at,
                                              "error", text_json(t->attempt_error[i])));
    }
    if (last > (json_int_t)t->n_attempts) /* the last one: only the dead letter's headers know it */
        json_array_append_new(list, json_pack("{s:I, s:O, s:O}", "attempt", last, "at",
                                              json_object_get(e, "failed"), "error",
                                              json_object_get(e, "reason")));
    json_object_set_new(e, "failed_attempts", list);
}

enum sa_code
dlq_get(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int parts, json_t **out,
        struct sa_err *err)
{
    natsMsg *m = NULL;
    struct sa_task *t = NULL;
    struct sa_err why = {0};
    json_t *e;
    enum sa_code rc = find_dead(n, id, &m, err);

    if (rc != SA_OK)
        return rc;
    e = entry_json(m);
    if (sa_task_open(ring, id, (const uint8_t *)natsMsg_GetData(m),
                     (size_t)natsMsg_GetDataLength(m), &t, &why) == SA_OK) {
        add_attempts(e, t);
        if (parts & (DLQ_WEBHOOK | DLQ_CONTENT))
            json_object_set_new(e, "webhook", json_string(t->url ? t->url : ""));
        if (parts & DLQ_CONTENT)
            content_add(e, t);
    } else {
        json_object_set_new(e, "unreadable", json_string(why.msg));
    }
    sa_task_free(t);
    natsMsg_Destroy(m);
    *out = e;
    return SA_OK;
}

enum sa_code
dlq_show(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int json, int full,
         struct sa_err *err)
{
    json_t *e = NULL;
    enum sa_code rc = dlq_get(n, ring, id, DLQ_WEBHOOK | (full ? DLQ_CONTENT : 0), &e, err);

    if (rc != SA_OK)
        return rc;
    if (json) {
        json_dumpf(e, stdout, JSON_COMPACT);
        putchar('\n');
    } else {
        print_entry(e);
        print_details(e);
    }
    json_decref(e);
    return SA_OK;
}

static void
reset_claim(struct sa_nats *n, const char *id)
{
    struct sa_claim c = {0},
                    mine = {.state = SA_CLAIM_RETRYING, .attempt = 0, .at_ms = sa_now_ms()};

    snprintf(mine.consumer, sizeof(mine.consumer), "sendat dlq replay");
    snprintf(mine.error, sizeof(mine.error), "replayed from the dead-letter stream");
    /* read again if another write came between (the consumer's "dead" can follow its letter) */
    for (int tries = 0; tries < 5; tries++)
        if (sa_claim_get(sa_nats_claims(n, id), id, &c, NULL) != SA_OK ||
            sa_claim_update(sa_nats_claims(n, id), id, &mine, c.revision, NULL, NULL) == SA_OK)
            return;
}

/* Publishes a fresh copy of one dead letter, then deletes the dead letter. */
static enum sa_code
replay_one(struct sa_nats *n, const struct sa_keyring *ring, natsMsg *m, int64_t at_ms,
           struct sa_err *err)
{
    const char *id = natsMsg_GetSubject(m) + strlen(DLQ_PREFIX);
    struct sa_task *t = NULL;
    char msgid[SA_SUBJECT_MAX];
    int64_t now = sa_now_ms();
    enum sa_code rc = sa_task_open(ring, id, (const uint8_t *)natsMsg_GetData(m),
                                   (size_t)natsMsg_GetDataLength(m), &t, err);

    if (rc != SA_OK)
        return rc;
    t->attempt = 1;
    t->due_ms = at_ms > now ? at_ms : now; /* fresh: consumers refuse what the ledger forgot */
    if (t->not_after_ms && t->not_after_ms < t->due_ms)
        t->not_after_ms = 0; /* a replay is a deliberate new try: the old deadline is over */
    sa_layout_replay_msgid(msgid, sizeof(msgid), id, natsMsg_GetSequence(m));
    reset_claim(n, id);
    rc = publish_task(n, ring, t, msgid, err);
    sa_task_free(t);
    if (rc != SA_OK)
        return rc;
    js_DeleteMsg(n->js, SA_DLQ_STREAM, natsMsg_GetSequence(m), NULL, NULL);
    return SA_OK;
}

/* Replays one dead letter and names it on report; on a failure names it on stderr (report
 * given) and returns 1. */
static int
replay_failed(struct sa_nats *n, const struct sa_keyring *ring, natsMsg *m, int64_t at_ms,
              FILE *report, struct sa_err *err)
{
    const char *id = natsMsg_GetSubject(m) + strlen(DLQ_PREFIX);

    if (replay_one(n, ring, m, at_ms, err) == SA_OK) {
        if (report)
            fprintf(report, "replayed %s\n", id);
        return 0;
    }
    if (report)
        fprintf(stderr, "sendat: dlq replay %s: %s\n", id, err->msg);
    return 1;
}

enum sa_code
dlq_replay(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int64_t at_ms,
           FILE *report, struct sa_err *err)
{
    struct sa_err one = {0};
    char filter[SA_SUBJECT_MAX];
    natsMsg *m = NULL;
    uint64_t seq = 0, last = UINT64_MAX;
    int failed = 0;
    jsStreamInfo *si = NULL;

    if (js_GetStreamInfo(&si, n->js, SA_DLQ_STREAM, NULL, NULL) == NATS_OK)
        last = si->State.LastSeq; /* what dies again while we replay waits for the next run */
    jsStreamInfo_Destroy(si);
    snprintf(filter, sizeof(filter), DLQ_PREFIX "%s", id ? id : ">");
    for (int i = 0; i < 1000000 && next_dead(n, seq, filter, &m) == NATS_OK; i++) {
        seq = natsMsg_GetSequence(m);
        if (seq > last) {
            natsMsg_Destroy(m);
            break;
        }
        failed += replay_failed(n, ring, m, at_ms, report, &one);
        natsMsg_Destroy(m);
        m = NULL;
        if (id)
            break; /* the newest dead letter of an id is what find_dead shows; one replay */
    }
    if (seq == 0 && id)
        return sa_fail(err, SA_ENOTFOUND, "no dead letter %s", id);
    if (failed && id)
        return sa_fail(err, SA_ENATS, "dlq replay %s: %s", id, one.msg);
    if (failed)
        return sa_fail(err, SA_ENATS, "dlq replay: %d dead letter%s not replayed", failed,
                       failed == 1 ? " was" : "s were");
    return SA_OK;
}

enum sa_code
dlq_purge(struct sa_nats *n, const char *id, struct sa_err *err)
{
    jsOptions o;
    char subject[SA_SUBJECT_MAX];
    jsErrCode jerr = 0;
    natsStatus s;

    if (id) { /* an unknown id is SA_ENOTFOUND, not a purge of nothing */
        natsMsg *m = NULL;
        enum sa_code rc = find_dead(n, id, &m, err);
        natsMsg_Destroy(m);
        if (rc != SA_OK)
            return rc;
    }
    jsOptions_Init(&o);
    snprintf(subject, sizeof(subject), DLQ_PREFIX "%s", id ? id : ">");
    o.Stream.Purge.Subject = subject;
    s = js_PurgeStream(n->js, SA_DLQ_STREAM, &o, &jerr);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, jerr, "dlq purge");
    return SA_OK;
}

/* Walking the dead-letter stream with direct gets ("next by subject"), so listing needs no
 * consumer and changes nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "claim.h"
#include "cli.h"
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

static json_t *
entry_json(natsMsg *m)
{
    char at[40];

    sa_time_format(at, sizeof(at), find_header_i64(m, "Sendat-Failed"));
    return json_pack("{s:s, s:s, s:I, s:s, s:I}", "id", natsMsg_GetSubject(m) + strlen(DLQ_PREFIX),
                     "failed", at, "attempts", (json_int_t)find_header_i64(m, "Sendat-Attempts"),
                     "reason", header(m, "Sendat-Reason"), "seq", (json_int_t)natsMsg_GetSequence(m));
}

static void
print_entry(json_t *e, int json)
{
    if (json) {
        json_dumpf(e, stdout, JSON_COMPACT);
        putchar('\n');
        return;
    }
    printf("%s %s attempts=%" JSON_INTEGER_FORMAT " reason=\"%s\"\n",
           json_string_value(json_object_get(e, "failed")), json_string_value(json_object_get(e, "id")),
           json_integer_value(json_object_get(e, "attempts")),
           json_string_value(json_object_get(e, "reason")));
}

int
dlq_list(struct sa_nats *n, int json, long limit)
{
    uint64_t seq = 0;
    natsMsg *m = NULL;
    natsStatus s = NATS_OK;
    long count = 0;

    while (count < limit && (s = next_dead(n, seq, DLQ_PREFIX ">", &m)) == NATS_OK) {
        json_t *e = entry_json(m);
        print_entry(e, json);
        json_decref(e);
        seq = natsMsg_GetSequence(m);
        natsMsg_Destroy(m);
        m = NULL;
        count++;
    }
    if (s != NATS_OK && s != NATS_NOT_FOUND)
        return cli_error(EXIT_FAIL, "dlq list: %s", natsStatus_GetText(s));
    if (!json)
        fprintf(stderr, "%ld dead letter%s%s\n", count, count == 1 ? "" : "s", count == limit ? " (limit reached)" : "");
    return EXIT_OK;
}

static int
find_one(struct sa_nats *n, const char *id, natsMsg **m)
{
    struct sa_err err = {0};
    enum sa_code rc = find_dead(n, id, m, &err);

    if (rc == SA_ENOTFOUND)
        return printf("unknown id\n"), EXIT_UNKNOWN;
    return rc == SA_OK ? EXIT_OK : cli_error(EXIT_FAIL, "dlq: %s", err.msg);
}

static void
add_attempts(json_t *e, const struct sa_task *t)
{
    json_t *list = json_array();
    char at[40];

    for (size_t i = 0; i < t->n_attempts; i++) {
        sa_time_format(at, sizeof(at), t->attempt_at_ms[i]);
        json_array_append_new(list, json_pack("{s:i, s:s, s:s}", "attempt", (int)i + 1, "at", at,
                                              "error", t->attempt_error[i]));
    }
    json_object_set_new(e, "failed_attempts", list);
    json_object_set_new(e, "webhook", json_string(t->url ? t->url : ""));
}

int
dlq_show(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int json)
{
    natsMsg *m = NULL;
    struct sa_task *t = NULL;
    struct sa_err err = {0};
    json_t *e;
    int code = find_one(n, id, &m);

    if (code != EXIT_OK)
        return code;
    e = entry_json(m);
    if (sa_task_open(ring, id, (const uint8_t *)natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m), &t, &err) == SA_OK)
        add_attempts(e, t);
    else
        json_object_set_new(e, "unreadable", json_string(err.msg));
    if (json) {
        json_dumpf(e, stdout, JSON_COMPACT);
        putchar('\n');
    } else {
        print_entry(e, 0);
        json_t *a, *list = json_object_get(e, "failed_attempts");
        size_t i;
        if (json_object_get(e, "webhook"))
            printf("  webhook %s\n", json_string_value(json_object_get(e, "webhook")));
        json_array_foreach(list, i, a)
            printf("  attempt %" JSON_INTEGER_FORMAT " at %s: %s\n", json_integer_value(json_object_get(a, "attempt")),
                   json_string_value(json_object_get(a, "at")), json_string_value(json_object_get(a, "error")));
        if (json_object_get(e, "unreadable"))
            printf("  cannot open the task: %s\n", json_string_value(json_object_get(e, "unreadable")));
    }
    json_decref(e);
    sa_task_free(t);
    natsMsg_Destroy(m);
    return EXIT_OK;
}

static void
reset_claim(struct sa_nats *n, const char *id)
{
    struct sa_claim c = {0}, mine = {.state = SA_CLAIM_RETRYING, .attempt = 0, .at_ms = sa_now_ms()};

    snprintf(mine.consumer, sizeof(mine.consumer), "sendat dlq replay");
    snprintf(mine.error, sizeof(mine.error), "replayed from the dead-letter stream");
    if (sa_claim_get(n->claims, id, &c, NULL) == SA_OK)
        (void)!sa_claim_update(n->claims, id, &mine, c.revision, NULL, NULL);
}

/* Publishes a fresh copy of one dead letter, then deletes the dead letter. */
static int
replay_one(struct sa_nats *n, const struct sa_keyring *ring, natsMsg *m, int64_t at_ms)
{
    const char *id = natsMsg_GetSubject(m) + strlen(DLQ_PREFIX);
    struct sa_task *t = NULL;
    struct sa_err err = {0};
    char msgid[SA_SUBJECT_MAX];
    int64_t now = sa_now_ms();
    enum sa_code rc = sa_task_open(ring, id, (const uint8_t *)natsMsg_GetData(m),
                                   (size_t)natsMsg_GetDataLength(m), &t, &err);

    if (rc != SA_OK)
        return cli_error(EXIT_FAIL, "dlq replay %s: cannot open the task: %s", id, err.msg);
    t->attempt = 1;
    t->due_ms = at_ms > now ? at_ms : now; /* fresh: consumers refuse what the ledger forgot */
    if (t->not_after_ms && t->not_after_ms < t->due_ms)
        t->not_after_ms = 0; /* a replay is a deliberate new try: the old deadline is over */
    sa_layout_replay_msgid(msgid, sizeof(msgid), id, natsMsg_GetSequence(m));
    reset_claim(n, id);
    rc = publish_task(n, ring, t, msgid, &err);
    sa_task_free(t);
    if (rc != SA_OK)
        return cli_error(EXIT_FAIL, "dlq replay %s: %s", id, err.msg);
    js_DeleteMsg(n->js, SA_DLQ_STREAM, natsMsg_GetSequence(m), NULL, NULL);
    printf("replayed %s\n", id);
    return EXIT_OK;
}

int
dlq_replay(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int64_t at_ms)
{
    char filter[SA_SUBJECT_MAX];
    natsMsg *m = NULL;
    uint64_t seq = 0, last = UINT64_MAX;
    int code = EXIT_OK, failed = 0;
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
        failed += replay_one(n, ring, m, at_ms) != EXIT_OK;
        natsMsg_Destroy(m);
        m = NULL;
        if (id)
            break; /* the newest dead letter of an id is what find_dead shows; one replay */
    }
    if (seq == 0 && id)
        return printf("unknown id\n"), EXIT_UNKNOWN;
    if (failed)
        code = EXIT_FAIL;
    return code;
}

int
dlq_purge(struct sa_nats *n, const char *id)
{
    jsOptions o;
    char subject[SA_SUBJECT_MAX];
    jsErrCode jerr = 0;
    natsStatus s;

    jsOptions_Init(&o);
    snprintf(subject, sizeof(subject), DLQ_PREFIX "%s", id ? id : ">");
    o.Stream.Purge.Subject = subject;
    s = js_PurgeStream(n->js, SA_DLQ_STREAM, &o, &jerr);
    if (s != NATS_OK)
        return cli_error(EXIT_FAIL, "dlq purge: %s", natsStatus_GetText(s));
    puts("purged");
    return EXIT_OK;
}

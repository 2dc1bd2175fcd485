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
#include "task.h"
#include "timeparse.h"

natsStatus
dlq_next(struct sa_nats *n, uint64_t after, const char *filter, natsMsg **msg)
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

enum sa_code
dlq_page(struct sa_nats *n, uint64_t after, long limit, json_t *out, uint64_t *last,
         struct sa_err *err)
{
    natsMsg *m = NULL;
    natsStatus s = NATS_OK;
    long count = 0;

    *last = after;
    while (count < limit && (s = dlq_next(n, *last, DLQ_PREFIX ">", &m)) == NATS_OK) {
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

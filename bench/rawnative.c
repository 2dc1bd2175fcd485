/* sendat-rawjs's native command: the server's own scheduler (ADR-51, nats-server 2.12 and
 * later) doing sendat's work, so the two are measured in the same run. A stream with
 * allow_msg_schedules holds one schedule per subject (native.sched.I, "Nats-Schedule: @at
 * <RFC 3339>", "Nats-Schedule-Target: native.fire"); at its time the server writes the body
 * with the other headers to native.fire in the same stream, a work-queue subject that a plain
 * client pulls, POSTs to the sink over keep-alive (at most --inflight at once) and acks: the
 * raw loop's shape (rawpost.h). nats.c 3.4 does not know the stream field, so the stream is
 * made with the raw JSON API. A server without schedules ignores the field: exit 3. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <nats/nats.h>
#include <sodium.h>

#include "rawjs.h"
#include "rawmeter.h"
#include "rawpost.h"
#include "rawpull.h"
#include "rawstream.h"
#include "timeparse.h"

#define NATIVE_STREAM "NATIVE"
#define NATIVE_FIRE "native.fire"
#define NATIVE_DURABLE "native"
#define NATIVE_ID_HEADER "Bench-Id" /* copied to the fired message, POSTed as webhook-id */

/* One JSON API request; the answer parsed, or NULL (the reason on stderr). */
static json_t *
api(natsConnection *nc, const char *subject, const char *body)
{
    natsMsg *reply = NULL;
    json_t *doc = NULL;
    natsStatus s = natsConnection_RequestString(&reply, nc, subject, body, 5000);

    if (s != NATS_OK) {
        fprintf(stderr, "sendat-rawjs: %s: %s\n", subject, natsStatus_GetText(s));
        return NULL;
    }
    doc = json_loadb(natsMsg_GetData(reply), (size_t)natsMsg_GetDataLength(reply), 0, NULL);
    natsMsg_Destroy(reply);
    return doc;
}

/* The stream's config as JSON: the schedules and their target in one work-queue stream. */
static char *
stream_config(int replicas)
{
    json_t *c = json_pack("{s:s, s:[s,s], s:s, s:s, s:i, s:b, s:b, s:b}", "name", NATIVE_STREAM,
                          "subjects", "native.sched.*", NATIVE_FIRE, "retention", "workqueue",
                          "storage", "file", "num_replicas", replicas, "allow_msg_schedules", 1,
                          "allow_rollup_hdrs", 1, "allow_direct", 1);
    char *text = c ? json_dumps(c, JSON_COMPACT) : NULL;

    json_decref(c);
    return text;
}

/* Replaces the stream NATIVE by an empty one, retrying while a new cluster elects its meta
 * leader. 0 when made with schedules allowed, 3 when the server ignored the field, 1 else. */
static int
make_stream(natsConnection *nc, int replicas)
{
    char *cfg = stream_config(replicas);
    int rc = 1;

    for (int attempt = 0; cfg && attempt < 60 && rc == 1; attempt++) {
        json_t *r;

        json_decref(api(nc, "$JS.API.STREAM.DELETE." NATIVE_STREAM, ""));
        r = api(nc, "$JS.API.STREAM.CREATE." NATIVE_STREAM, cfg);
        if (r && json_object_get(r, "config"))
            rc = json_is_true(json_object_get(json_object_get(r, "config"), "allow_msg_schedules"))
                     ? 0
                     : 3;
        else if (r)
            fprintf(stderr, "sendat-rawjs: create %s: %s\n", NATIVE_STREAM,
                    json_string_value(json_object_get(json_object_get(r, "error"), "description")));
        json_decref(r);
        if (rc == 1)
            usleep(500000);
    }
    free(cfg);
    return rc;
}

/* Publishes one schedule: body payload, due at due_ms, its id "<due ms>-n<i>" in a header. */
static natsStatus
publish_one(jsCtx *js, long i, int64_t due_ms, const char *payload, int size)
{
    char subject[64], at[48], when[40], id[48];
    natsMsg *m = NULL;
    natsStatus s;

    snprintf(subject, sizeof(subject), "native.sched.%ld", i);
    sa_time_format(when, sizeof(when), due_ms);
    snprintf(at, sizeof(at), "@at %s", when);
    snprintf(id, sizeof(id), "%" PRId64 "-n%07ld", due_ms, i);
    s = natsMsg_Create(&m, subject, NULL, payload, size);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(m, "Nats-Schedule", at);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(m, "Nats-Schedule-Target", NATIVE_FIRE);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(m, NATIVE_ID_HEADER, id);
    if (s == NATS_OK)
        s = js_PublishMsgAsync(js, &m, NULL);
    natsMsg_Destroy(m);
    return s;
}

/* n schedules due from o->due_ms on, spread evenly over o->spread_ms; returns the seconds. */
static double
publish_all(jsCtx *js, const struct rawjs_opts *o, const char *payload)
{
    double t0 = rawpost_now_s();

    for (long i = 0; i < o->n; i++) {
        int64_t due = o->due_ms + (o->spread_ms > 0 ? (int64_t)(i * o->spread_ms / o->n) : 0);
        natsStatus s = publish_one(js, i, due, payload, o->size);
        if (s != NATS_OK)
            rawjs_die("publish a schedule", s);
    }
    rawstream_wait(js);
    return rawpost_now_s() - t0;
}

/* Pulls what fires until all n were POSTed and acked or the last one is wait_seconds late. */
static void
deliver(natsConnection *nc, jsCtx *js, const struct rawjs_opts *o, int *first)
{
    double until_due = (double)(o->due_ms + o->spread_ms - sa_now_ms()) / 1000;
    struct rawpost_run run = {.n = o->n,
                              .batch = 64,
                              .inflight = o->inflight,
                              .url = o->sink,
                              .max_secs = (until_due > 0 ? until_due : 0) + o->wait_seconds,
                              .id_header = NATIVE_ID_HEADER,
                              .wait_first = 1};
    struct rawpull *sub = rawpull_durable(nc, js, NATIVE_STREAM, NATIVE_DURABLE, NATIVE_FIRE);
    long done, refused = 0;
    double secs;

    rawmeter_mark();
    done = rawpost_consume(sub, &run, &secs, &refused);
    rawmeter_report("pull_post_ack", done, secs, first);
    printf(",\"refused\":%ld", refused);
    rawpull_free(sub);
}

/* With --due-in-ms, the first due time counts from when the stream is ready (a new cluster
 * takes seconds to elect its leaders), rounded up to a multiple of --align-ms. */
static int64_t
first_due(const struct rawjs_opts *o)
{
    int64_t due = o->due_ms;

    if (o->due_in_ms > 0) {
        due = sa_now_ms() + o->due_in_ms;
        if (o->align_ms > 0)
            due = (due + o->align_ms - 1) / o->align_ms * o->align_ms;
    }
    return due;
}

int
rawjs_native(const struct rawjs_opts *given)
{
    struct rawjs_opts opts = *given, *o = &opts;
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = rawstream_js(nc);
    char *payload = malloc((size_t)o->size);
    int first = 0, rc;
    double secs;

    if (!payload)
        rawjs_die("out of memory", NATS_NO_MEMORY);
    randombytes_buf(payload, (size_t)o->size);
    rc = make_stream(nc, o->replicas);
    if (rc == 3)
        printf("{\"supported\":false,\"note\":\"the server has no message schedules (ADR-51, "
               "nats-server 2.12 or later): allow_msg_schedules was ignored\"}\n");
    if (rc != 0)
        goto out;
    o->due_ms = first_due(o);
    printf("{\"supported\":true,\"n\":%ld,\"size\":%d,\"replicas\":%d,\"due_ms\":%" PRId64
           ",\"spread_ms\":%" PRId64,
           o->n, o->size, o->replicas, o->due_ms, o->spread_ms);
    rawmeter_mark();
    secs = publish_all(js, o, payload);
    rawmeter_report("schedule", o->n, secs, &first);
    if (o->sink)
        deliver(nc, js, o, &first);
    printf(",\"failed\":%ld}\n", rawstream_failed());
    rc = rawstream_failed() ? 1 : 0;
out:
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    free(payload);
    return rc;
}

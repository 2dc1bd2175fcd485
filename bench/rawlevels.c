/* sendat-rawlevels: what a level durable costs the server to make, and what the cheaper ways a
 * current server offers would cost instead (issue 25.3, design notes "Consumer reset and server
 * schedules on current servers"). Not a test.
 *
 *   sendat-rawlevels --server URL --server-pid PID [--n N] [--slots K] [--rounds R]
 *
 * Fills a work-queue stream LEVELS with N messages of 221 bytes, one subject each, spread over
 * K slot levels of one day (lv.<window>.<slot>.<i>, stored in an order that mixes the slots,
 * as a day booked at random is), then times R rounds of each way to get a level's durable
 * (sendat's settings: DeliverAll, explicit ack, a filter lv.<window>.<slot>.*):
 *   info          a consumer info (sendat asks one before making a durable)
 *   create        a new durable on a slot holding N/K messages, and its first pull of one
 *   create_empty  a new durable on a slot holding nothing
 *   update        one durable's filter moved to the next slot (2.9.10 takes it as well)
 *   update_reset  and its start reset to the stream's first message (2.14+: without it a filter
 *                 moved onto a slot booked long ago starts past that slot's messages)
 *   rescue_delete what a rescue does today: delete a durable whose slot's messages are all
 *                 delivered and unacked, and make it again
 *   rescue_reset  the same by a consumer reset to its ack floor (2.14+)
 * Each line gives the wall time and the server's CPU per operation; after a rescue the slot's
 * messages are pulled again and counted (every one must come back, once). Operations a server
 * refuses are reported with their error and left out. Prints one JSON object. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <nats/nats.h>

#include "jspull.h"
#include "rawjs.h"
#include "rawmeter.h"
#include "rawpull.h"

#define STREAM "LEVELS"
#define SIZE 221
#define SLOT_MS 10000LL
#define WINDOW_MS 600000LL

struct opts {
    const char *server, *pids;
    long n, slots, rounds;
};

static int64_t base_ms; /* the first slot: tomorrow */
static int first = 1;

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* rawpull.c's helpers end through this, as in sendat-rawjs (rawjs.h) */
void
rawjs_die(const char *what, natsStatus s)
{
    fprintf(stderr, "sendat-rawlevels: %s: %s (%s)\n", what, natsStatus_GetText(s),
            nats_GetLastError(NULL));
    exit(1);
}

static void
die(const char *what, natsStatus s, jsErrCode e)
{
    fprintf(stderr, "sendat-rawlevels: %s: %s (js error %d, %s)\n", what, natsStatus_GetText(s),
            (int)e, nats_GetLastError(NULL));
    exit(1);
}

static void
filter_of(char *out, size_t cap, long k)
{
    int64_t slot = base_ms + k * SLOT_MS;

    snprintf(out, cap, "lv.%" PRId64 ".%" PRId64 ".*", (int64_t)(slot / WINDOW_MS * WINDOW_MS),
             slot);
}

static void
make_stream(jsCtx *js)
{
    jsStreamConfig sc;
    const char *subjects[] = {"lv.>"};
    jsErrCode e = 0;
    natsStatus s;

    js_DeleteStream(js, STREAM, NULL, NULL);
    jsStreamConfig_Init(&sc);
    sc.Name = STREAM;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Retention = js_WorkQueuePolicy;
    sc.Storage = js_FileStorage;
    s = js_AddStream(NULL, js, &sc, NULL, &e);
    if (s != NATS_OK)
        die("make the stream", s, e);
}

static uint64_t
stored(jsCtx *js)
{
    jsStreamInfo *si = NULL;
    uint64_t n = 0;

    if (js_GetStreamInfo(&si, js, STREAM, NULL, NULL) == NATS_OK)
        n = si->State.Msgs;
    jsStreamInfo_Destroy(si);
    return n;
}

/* Published with PubAcks outstanding (a plain publish loses some under load). Message i goes to
 * slot (i * 7919) % slots: neighbours in the stream are in slots far apart. */
static void
fill(jsCtx *js, const struct opts *o)
{
    char payload[SIZE], subject[128], f[96];
    double t0 = now_s();

    memset(payload, 'x', sizeof(payload));
    for (long i = 0; i < o->n; i++) {
        long k = (long)(((unsigned long long)i * 7919ULL) % (unsigned long long)o->slots);
        filter_of(f, sizeof(f), k);
        f[strlen(f) - 1] = '\0'; /* drop the '*' */
        snprintf(subject, sizeof(subject), "%s%ld", f, i);
        if (js_PublishAsync(js, subject, payload, SIZE, NULL) != NATS_OK)
            die("publish", NATS_ERR, 0);
    }
    if (js_PublishAsyncComplete(js, NULL) != NATS_OK)
        die("publish: PubAcks", NATS_ERR, 0);
    while (stored(js) < (uint64_t)o->n && now_s() - t0 < 600)
        nats_Sleep(200);
    fprintf(stderr, "sendat-rawlevels: %" PRIu64 " stored in %.1f s\n", stored(js), now_s() - t0);
}

static void
config(jsConsumerConfig *cc, const char *durable, const char *filter)
{
    jsConsumerConfig_Init(cc);
    cc->Durable = durable;
    cc->FilterSubject = filter;
    cc->AckPolicy = js_AckExplicit;
    cc->DeliverPolicy = js_DeliverAll;
    cc->AckWait = 60LL * 1000000000LL;
    cc->MaxDeliver = -1;
    cc->MaxAckPending = 100000;
    cc->MaxWaiting = 512;
    cc->InactiveThreshold = 3600LL * 1000000000LL;
}

static natsStatus
create(jsCtx *js, const char *durable, const char *filter, jsErrCode *e)
{
    jsConsumerConfig cc;
    jsConsumerInfo *ci = NULL;
    natsStatus s;

    config(&cc, durable, filter);
    s = js_AddConsumer(&ci, js, STREAM, &cc, NULL, e);
    jsConsumerInfo_Destroy(ci);
    return s;
}

/* A consumer reset ($JS.API.CONSUMER.RESET, ADR-60): body "" goes back to the ack floor,
 * {"seq":N} to N. 0 if the server did it. */
static int
reset(natsConnection *nc, const char *durable, const char *body)
{
    char subject[128];
    natsMsg *reply = NULL;
    json_t *doc = NULL;
    int ok = 0;

    snprintf(subject, sizeof(subject), "$JS.API.CONSUMER.RESET.%s.%s", STREAM, durable);
    if (natsConnection_RequestString(&reply, nc, subject, body, 10000) != NATS_OK)
        return -1;
    doc = json_loadb(natsMsg_GetData(reply), (size_t)natsMsg_GetDataLength(reply), 0, NULL);
    ok = doc && !json_object_get(doc, "error");
    if (!ok)
        fprintf(stderr, "sendat-rawlevels: reset %s: %.*s\n", durable, natsMsg_GetDataLength(reply),
                natsMsg_GetData(reply));
    json_decref(doc);
    natsMsg_Destroy(reply);
    return ok ? 0 : -1;
}

/* Pulls up to want messages of durable, unacked; returns how many came. */
static long
pull(natsConnection *nc, const char *durable, long want, int64_t expires_ms)
{
    struct rawpull r;
    long got = 0;

    if (rawpull_open(&r, nc, STREAM, durable) != 0)
        return -1;
    while (got < want) {
        natsMsgList l = {0};
        int n = rawpull_get(&r, &l, (int)(want - got), expires_ms);
        got += n;
        natsMsgList_Destroy(&l);
        if (n == 0)
            break;
    }
    rawpull_close(&r);
    return got;
}

static void
report(const char *name, long ops, double secs)
{
    rawmeter_report(name, ops, secs, &first);
}

static void
drop_all(jsCtx *js, const char *prefix, long rounds)
{
    char d[32];

    for (long r = 0; r < rounds; r++) {
        snprintf(d, sizeof(d), "%s%ld", prefix, r);
        js_DeleteConsumer(js, STREAM, d, NULL, NULL);
    }
}

/* info: R consumer infos of one durable. */
static void
time_info(jsCtx *js, long R)
{
    jsErrCode e = 0;
    double t;

    create(js, "probe", "lv.none.*", &e);
    rawmeter_mark();
    t = now_s();
    for (long r = 0; r < R; r++) {
        jsConsumerInfo *ci = NULL;
        js_GetConsumerInfo(&ci, js, STREAM, "probe", NULL, NULL);
        jsConsumerInfo_Destroy(ci);
    }
    report("info", R, now_s() - t);
}

/* create (slots 0..R-1, each with its first pull of one) and create_empty (the R slots past
 * the filled ones); both sets dropped after. */
static void
time_creates(natsConnection *nc, jsCtx *js, const struct opts *o)
{
    long R = o->rounds, ok = 0;
    char d[32], f[96];
    jsErrCode e = 0;
    double t;
    natsStatus s;

    rawmeter_mark();
    t = now_s();
    for (long r = 0; r < R; r++) {
        snprintf(d, sizeof(d), "c%ld", r);
        filter_of(f, sizeof(f), r);
        if ((s = create(js, d, f, &e)) != NATS_OK)
            die("create", s, e);
        ok += pull(nc, d, 1, 1000);
    }
    report("create", R, now_s() - t);
    fprintf(stderr, "sendat-rawlevels: first pulls brought %ld of %ld\n", ok, R);

    rawmeter_mark();
    t = now_s();
    for (long r = 0; r < R; r++) {
        snprintf(d, sizeof(d), "e%ld", r);
        filter_of(f, sizeof(f), o->slots + r);
        if ((s = create(js, d, f, &e)) != NATS_OK)
            die("create empty", s, e);
    }
    report("create_empty", R, now_s() - t);
    drop_all(js, "c", R);
    drop_all(js, "e", R);
}

/* One durable "up" moved R times onto slot first + r (r < R), with a reset to the stream's
 * first message after each move when reset_too; NATS_OK, or the first refusal's status. */
static natsStatus
move_up(natsConnection *nc, jsCtx *js, long R, long first, int reset_too)
{
    char f[96];
    jsErrCode e = 0;
    natsStatus s = NATS_OK;

    for (long r = 0; s == NATS_OK && r < R; r++) {
        jsConsumerConfig cc;
        jsConsumerInfo *ci = NULL;
        filter_of(f, sizeof(f), first + r);
        config(&cc, "up", f);
        s = js_UpdateConsumer(&ci, js, STREAM, &cc, NULL, &e);
        jsConsumerInfo_Destroy(ci);
        if (s != NATS_OK && !reset_too)
            fprintf(stderr, "sendat-rawlevels: update refused: %s (%d)\n", natsStatus_GetText(s),
                    (int)e);
        if (s == NATS_OK && reset_too && reset(nc, "up", "{\"seq\":1}") != 0)
            s = NATS_ERR;
    }
    return s;
}

/* update (slots R..2R-1) and update_reset (2R..3R-1, only when update was taken). */
static void
time_updates(natsConnection *nc, jsCtx *js, const struct opts *o)
{
    long R = o->rounds, per = o->n / o->slots, ok;
    char f[96];
    jsErrCode e = 0;
    double t;
    natsStatus s;

    filter_of(f, sizeof(f), R - 1);
    create(js, "up", f, &e);
    rawmeter_mark();
    t = now_s();
    s = move_up(nc, js, R, R, 0);
    if (s == NATS_OK)
        report("update", R, now_s() - t);

    rawmeter_mark();
    t = now_s();
    if (s == NATS_OK)
        s = move_up(nc, js, R, 2 * R, 1);
    if (s == NATS_OK) {
        report("update_reset", R, now_s() - t);
        ok = pull(nc, "up", per * 2, 1000);
        fprintf(stderr, "sendat-rawlevels: after update+reset the last slot gave %ld of ~%ld\n", ok,
                per);
    }
    js_DeleteConsumer(js, STREAM, "up", NULL, NULL);
}

/* Messages durables r<from>..r<to-1> deliver again, pulled. */
static long
pulled_again(natsConnection *nc, long from, long to, long per)
{
    char d[32];
    long again = 0;

    for (long r = from; r < to; r++) {
        snprintf(d, sizeof(d), "r%ld", r);
        again += pull(nc, d, per * 2, 200);
    }
    return again;
}

/* rescue_delete (durables r0..rR-1 deleted and made again) and rescue_reset (rR..r2R-1 reset),
 * on slots 3R..5R-1 whose messages were all delivered and left unacked first (not timed). */
static void
time_rescues(natsConnection *nc, jsCtx *js, const struct opts *o)
{
    long R = o->rounds, per = o->n / o->slots, failed = 0;
    char d[32], f[96];
    jsErrCode e = 0;
    double t;
    natsStatus s = NATS_OK;

    for (long r = 0; r < 2 * R; r++) {
        snprintf(d, sizeof(d), "r%ld", r);
        filter_of(f, sizeof(f), 3 * R + r);
        create(js, d, f, &e);
        pull(nc, d, per * 2, 200);
    }
    rawmeter_mark();
    t = now_s();
    for (long r = 0; r < R; r++) {
        snprintf(d, sizeof(d), "r%ld", r);
        filter_of(f, sizeof(f), 3 * R + r);
        js_DeleteConsumer(js, STREAM, d, NULL, NULL);
        for (int tries = 0; (s = create(js, d, f, &e)) != NATS_OK; tries++) {
            failed++; /* a timeout seen once on the loaded machine: counted, asked again */
            if (tries == 3)
                die("create again", s, e);
        }
    }
    report("rescue_delete", R, now_s() - t);
    if (failed)
        fprintf(stderr, "sendat-rawlevels: rescue_delete: %ld creates failed once\n", failed);
    fprintf(stderr, "sendat-rawlevels: rescue_delete: %ld delivered again\n",
            pulled_again(nc, 0, R, per));

    rawmeter_mark();
    t = now_s();
    for (long r = R; r < 2 * R; r++) {
        snprintf(d, sizeof(d), "r%ld", r);
        if (reset(nc, d, "") != 0) {
            s = NATS_ERR;
            break;
        }
    }
    if (s == NATS_OK) {
        report("rescue_reset", R, now_s() - t);
        fprintf(stderr, "sendat-rawlevels: rescue_reset: %ld delivered again\n",
                pulled_again(nc, R, 2 * R, per));
    }
    drop_all(js, "r", 2 * R);
}

/* Slots used: create 0..R-1, update R..2R-1 and 2R..3R-1, rescues 3R..5R-1; create_empty
 * uses slots past the filled ones. */
static void
run(natsConnection *nc, jsCtx *js, const struct opts *o)
{
    time_info(js, o->rounds);
    time_creates(nc, js, o);
    time_updates(nc, js, o);
    time_rescues(nc, js, o);
}

int
main(int argc, char **argv)
{
    struct opts o = {.server = "nats://127.0.0.1:4222", .n = 1000000, .slots = 8640, .rounds = 20};
    natsConnection *nc = NULL;
    natsOptions *no = NULL;
    jsCtx *js = NULL;
    jsOptions jo;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--server"))
            o.server = argv[i + 1];
        else if (!strcmp(argv[i], "--server-pid"))
            o.pids = argv[i + 1];
        else if (!strcmp(argv[i], "--n"))
            o.n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--slots"))
            o.slots = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            o.rounds = atol(argv[i + 1]);
        else {
            fprintf(stderr, "sendat-rawlevels: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (o.slots < 5 * o.rounds || o.n < o.slots) {
        fprintf(stderr, "sendat-rawlevels: need --slots >= 5 x --rounds and --n >= --slots\n");
        return 2;
    }
    if (o.pids)
        rawmeter_server_pids(o.pids);
    base_ms = ((int64_t)time(NULL) * 1000 / 86400000 + 1) * 86400000;
    if (natsOptions_Create(&no) != NATS_OK || natsOptions_SetURL(no, o.server) != NATS_OK ||
        natsOptions_SetTimeout(no, 10000) != NATS_OK || natsConnection_Connect(&nc, no) != NATS_OK)
        die("connect", NATS_ERR, 0);
    jsOptions_Init(&jo);
    jo.PublishAsync.MaxPending = 4096; /* PubAcks outstanding while filling */
    jo.PublishAsync.StallWait = 30000;
    if (natsConnection_JetStream(&js, nc, &jo) != NATS_OK)
        die("jetstream", NATS_ERR, 0);
    make_stream(js);
    fill(js, &o);
    printf("{\"n\":%ld,\"slots\":%ld,\"rounds\":%ld,", o.n, o.slots, o.rounds);
    run(nc, js, &o);
    printf("}\n");
    js_DeleteStream(js, STREAM, NULL, NULL);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    natsOptions_Destroy(no);
    return 0;
}

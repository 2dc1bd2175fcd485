/* sendat-rawjs ledger: the raw pull + POST + ack loop (rawpost.h) with issue 32 item 2's
 * per-batch claim ledger in front of it, to measure what the ledger costs before it is built.
 *
 * The tasks are n messages on RAWJS, as bench --post-only stores them. One consumer pulls them
 * (batch at a time); each pull is one claim block: ONE record on the ledger stream RAWLEDGER
 * naming the ids it took. Its tasks are POSTed once the consumer's watcher (an ordered
 * consumer of the claim blocks and cancels) has read the block, skipping the ids whose cancel
 * it read before the block: the ledger's order decides a claim against a cancel. The finished
 * sends of each group_ms are ONE outcome record (each line names its claim block), and the
 * group's tasks are acked once that record's PubAck came. With cancel_every K, a cancel for
 * every K-th id is appended before the consumer starts (those tasks are acked unsent). After
 * the burst, two cancels are answered as a build would (rawledger_answer_cancel). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nats/nats.h>
#include <sodium.h>

#include "jspull.h"
#include "rawjs.h"
#include "rawledger.h"
#include "rawmeter.h"
#include "rawpost.h"
#include "rawpull.h"
#include "rawstream.h"

/* A claim block: appended, its tasks held until the watcher reads it. */
struct block {
    long no;
    int count;
    natsMsg **msgs;
    double appended;
    struct block *next;
};

/* An outcome group: its record appended, its tasks acked on the record's PubAck. */
struct group {
    long no;
    int count;
    natsMsg **msgs;
    struct group *next;
};

struct ledger {
    natsConnection *nc;
    CURLM *multi;
    const struct rawpost_run *run;
    natsSubscription *watch, *pubacks;
    char inbox[64];
    struct block *head, *tail; /* appended, not read back yet */
    struct group *waiting;     /* outcome records awaiting their PubAck */
    natsMsg **open;            /* finished sends of the open group */
    int open_n;
    double open_at;                 /* when the open group's first send finished */
    long n, blocks, groups, queued; /* queued: tasks in blocks not yet read back */
    long *block_of;                 /* task index -> its claim block */
    unsigned char *cancelled;       /* task index -> a cancel read before its block */
    double *lag;                    /* per own block: append -> read back (s) */
    /* watch_thread: the watcher runs on the library's thread; it notes cancels, then stores
     * the number of the own block it read last (release) and when (seen), and wakes curl */
    int watch_thread;
    _Atomic long passed_no;
    double *seen, *delivery; /* per own block: when the watcher read it; minus its append */
    long flying, skipped, acked;
    _Atomic long cancels_seen; /* (by the watcher's thread with watch_thread) */
};

static double
wall_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Publishes data to subject as a JetStream client would (its PubAck to reply). */
static void
append(struct ledger *l, const char *subject, const char *reply, const char *hdr, char *data,
       int len)
{
    natsMsg *m = NULL;
    natsStatus s = natsMsg_Create(&m, subject, reply, data, len);

    if (s == NATS_OK && hdr)
        s = natsMsgHeader_Set(m, "Ledger-Block", hdr);
    if (s == NATS_OK)
        s = natsConnection_PublishMsg(l->nc, m);
    natsMsg_Destroy(m);
    if (s != NATS_OK)
        rawjs_die("ledger append", s);
}

/* One claim block for the list's tasks; the block takes them over. */
static void
claim(struct ledger *l, natsMsgList *list)
{
    struct block *b = calloc(1, sizeof(*b));
    char *ids = malloc((size_t)list->Count * (RAWLEDGER_ID_LEN + 1) + 1), reply[96], hdr[32];

    if (!b || !ids)
        rawjs_die("out of memory", NATS_NO_MEMORY);
    b->no = ++l->blocks;
    b->count = list->Count;
    b->msgs = list->Msgs;
    for (int i = 0; i < list->Count; i++) {
        long idx = rawstream_index(natsMsg_GetSubject(list->Msgs[i]));
        rawledger_id(ids + (size_t)i * (RAWLEDGER_ID_LEN + 1), idx);
        ids[(size_t)i * (RAWLEDGER_ID_LEN + 1) + RAWLEDGER_ID_LEN] = '\n';
        if (idx >= 0 && idx < l->n)
            l->block_of[idx] = b->no;
    }
    list->Msgs = NULL;
    list->Count = 0;
    snprintf(reply, sizeof(reply), "%s.c.%ld", l->inbox, b->no);
    snprintf(hdr, sizeof(hdr), "p1.%ld", b->no);
    b->appended = rawpost_now_s();
    append(l, RAWLEDGER_CLAIM, reply, hdr, ids, b->count * (RAWLEDGER_ID_LEN + 1));
    free(ids);
    if (l->tail)
        l->tail->next = b;
    else
        l->head = b;
    l->tail = b;
    l->queued += b->count;
}

/* The watcher read the head block: its tasks are sent, but those cancelled before it. */
static void
passed(struct ledger *l)
{
    struct block *b = l->head;

    l->lag[b->no - 1] = rawpost_now_s() - b->appended;
    l->head = b->next;
    if (!l->head)
        l->tail = NULL;
    for (int i = 0; i < b->count; i++) {
        long idx = rawstream_index(natsMsg_GetSubject(b->msgs[i]));
        if (idx >= 0 && idx < l->n && l->cancelled[idx]) {
            sa_jspull_ack(l->nc, b->msgs[i], SA_JSPULL_ACK, 0); /* the cancel won: removed */
            natsMsg_Destroy(b->msgs[i]);
            l->skipped++;
        } else if (rawpost_start(l->multi, l->run, b->msgs[i]) == 0) {
            l->flying++;
        }
    }
    l->queued -= b->count;
    free(b->msgs);
    free(b);
}

/* One record the watcher read: a cancel is noted; returns the number of an own claim block,
 * else 0. */
static long
read_record(struct ledger *l, natsMsg *m)
{
    const char *hdr = NULL;

    if (!strcmp(natsMsg_GetSubject(m), RAWLEDGER_CANCEL)) {
        char id[RAWLEDGER_ID_LEN + 1] = {0};
        int len = natsMsg_GetDataLength(m);
        memcpy(id, natsMsg_GetData(m), len < RAWLEDGER_ID_LEN ? (size_t)len : RAWLEDGER_ID_LEN);
        long idx = strtol(id, NULL, 10);
        if (idx >= 0 && idx < l->n)
            l->cancelled[idx] = 1;
        l->cancels_seen++;
        return 0;
    }
    if (natsMsgHeader_Get(m, "Ledger-Block", &hdr) == NATS_OK && !strncmp(hdr, "p1.", 3))
        return strtol(hdr + 3, NULL, 10);
    return 0;
}

/* watch_thread: the watcher's handler, on the library's thread. */
static void
on_record(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *arg)
{
    struct ledger *l = arg;
    long no = read_record(l, m);

    (void)nc;
    (void)sub;
    if (no > 0 && no <= l->n) {
        l->seen[no - 1] = rawpost_now_s();
        atomic_store_explicit(&l->passed_no, no, memory_order_release);
        curl_multi_wakeup(l->multi);
    }
    natsMsg_Destroy(m);
}

/* Passes the own blocks the watcher has read, in order: read here, or by the watcher's
 * thread (watch_thread). */
static void
watch(struct ledger *l)
{
    natsMsg *m = NULL;

    if (l->watch_thread) {
        long upto = atomic_load_explicit(&l->passed_no, memory_order_acquire);
        while (l->head && l->head->no <= upto) {
            l->delivery[l->head->no - 1] = l->seen[l->head->no - 1] - l->head->appended;
            passed(l);
        }
        return;
    }
    while (natsSubscription_NextMsg(&m, l->watch, 0) == NATS_OK) {
        long no = read_record(l, m);
        if (no > 0 && l->head && no == l->head->no)
            passed(l);
        natsMsg_Destroy(m);
    }
}

/* rawpost's finish: a finished send joins the open outcome group (a refused one is naked). */
static void
finished(void *arg, natsMsg *m, int ok)
{
    struct ledger *l = arg;

    l->flying--;
    if (!ok) {
        sa_jspull_ack(l->nc, m, SA_JSPULL_NAK, 0);
        natsMsg_Destroy(m);
        return;
    }
    if (!l->open_n)
        l->open_at = rawpost_now_s();
    l->open[l->open_n++] = m;
}

/* Appends the open group's outcome record (block, id, status per line); acked on its PubAck. */
static void
outcome(struct ledger *l)
{
    struct group *g = calloc(1, sizeof(*g));
    size_t line = 20 + RAWLEDGER_ID_LEN + 5, len = 0;
    char *text = malloc((size_t)l->open_n * line + 1), reply[96];

    if (!g || !text)
        rawjs_die("out of memory", NATS_NO_MEMORY);
    g->no = ++l->groups;
    g->count = l->open_n;
    g->msgs = malloc((size_t)l->open_n * sizeof(*g->msgs));
    if (!g->msgs)
        rawjs_die("out of memory", NATS_NO_MEMORY);
    memcpy(g->msgs, l->open, (size_t)l->open_n * sizeof(*g->msgs));
    for (int i = 0; i < l->open_n; i++) {
        long idx = rawstream_index(natsMsg_GetSubject(l->open[i]));
        char id[RAWLEDGER_ID_LEN + 1];
        rawledger_id(id, idx);
        len += (size_t)snprintf(text + len, line + 1, "%ld %s 200\n",
                                idx >= 0 && idx < l->n ? l->block_of[idx] : 0, id);
    }
    snprintf(reply, sizeof(reply), "%s.o.%ld", l->inbox, g->no);
    append(l, RAWLEDGER_OUTCOME, reply, NULL, text, (int)len);
    free(text);
    g->next = l->waiting;
    l->waiting = g;
    l->open_n = 0;
}

/* Reads the PubAcks: an outcome record's acks its group's tasks; any error ends the run. */
static void
pubacks(struct ledger *l)
{
    natsMsg *m = NULL;

    while (natsSubscription_NextMsg(&m, l->pubacks, 0) == NATS_OK) {
        const char *subj = natsMsg_GetSubject(m), *kind = subj + strlen(l->inbox) + 1;
        if (natsMsg_GetDataLength(m) == 0 || strstr(natsMsg_GetData(m), "\"error\""))
            rawjs_die("ledger append refused", NATS_ERR);
        if (kind[0] == 'o') {
            long no = strtol(kind + 2, NULL, 10);
            for (struct group **p = &l->waiting; *p; p = &(*p)->next) {
                struct group *g = *p;
                if (g->no != no)
                    continue;
                for (int i = 0; i < g->count; i++) {
                    sa_jspull_ack(l->nc, g->msgs[i], SA_JSPULL_ACK, 0);
                    natsMsg_Destroy(g->msgs[i]);
                }
                l->acked += g->count;
                *p = g->next;
                free(g->msgs);
                free(g);
                break;
            }
        }
        natsMsg_Destroy(m);
    }
}

/* The loop: pull (a claim block each), pass blocks, send, group outcomes, ack on PubAcks. */
static long
run_ledger(struct ledger *l, struct rawpull *sub, const struct rawpost_run *run, double group_s,
           double *secs)
{
    double t0 = rawpost_now_s();
    long pulled = 0, posted = 0, refused = 0;
    int empty = 0;

    while ((pulled < run->n || l->queued || l->flying || l->open_n || l->waiting) &&
           rawpost_now_s() - t0 < run->max_secs && empty < 3) {
        if (pulled < run->n && l->queued <= run->inflight && l->flying <= run->inflight) {
            natsMsgList list = {0};
            int busy = l->queued || l->flying || l->waiting;
            rawpull_get(sub, &list,
                        run->n - pulled < run->batch ? (int)(run->n - pulled) : run->batch,
                        busy ? 100 : 2000);
            empty = list.Count || busy ? 0 : empty + 1;
            pulled += list.Count;
            if (list.Count)
                claim(l, &list);
            natsMsgList_Destroy(&list);
        }
        watch(l);
        int running = 0;
        curl_multi_perform(l->multi, &running);
        rawpost_collect(l->multi, run, l->nc, &posted, &refused);
        if (l->open_n && (rawpost_now_s() - l->open_at >= group_s ||
                          (pulled >= run->n && !l->flying && !l->queued)))
            outcome(l);
        pubacks(l);
        curl_multi_poll(l->multi, NULL, 0,
                        (l->queued && !l->watch_thread) || l->waiting || l->open_n ? 1 : 10, NULL);
    }
    natsConnection_Flush(l->nc); /* every ack reached the server */
    *secs = rawpost_now_s() - t0;
    return l->acked;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ,"NAME":{p50, p99, max} of the k values (seconds) in ms */
static void
report_lag(const char *name, double *v, long k)
{
    if (!k)
        return;
    qsort(v, (size_t)k, sizeof(double), cmp_double);
    printf(",\"%s\":{\"p50\":%.2f,\"p99\":%.2f,\"max\":%.2f}", name, v[k / 2] * 1000,
           v[(k * 99) / 100] * 1000, v[k - 1] * 1000);
}

/* Cancels for every every-th id, appended before the consumer starts. */
static void
pre_cancel(jsCtx *js, long n, long every)
{
    char id[RAWLEDGER_ID_LEN + 1];

    for (long i = 0; every > 0 && i < n; i += every) {
        rawledger_id(id, i);
        if (js_PublishAsync(js, RAWLEDGER_CANCEL, id, RAWLEDGER_ID_LEN, NULL) != NATS_OK)
            rawjs_die("cancel", NATS_ERR);
    }
    rawstream_wait(js);
}

static void
ledger_open(struct ledger *l, natsConnection *nc, jsCtx *js, const struct rawpost_run *run)
{
    natsInbox *inbox = NULL;
    char subject[80];

    l->nc = nc;
    l->run = run;
    l->n = run->n;
    l->block_of = calloc((size_t)run->n, sizeof(long));
    l->cancelled = calloc((size_t)run->n, 1);
    l->lag = calloc((size_t)run->n, sizeof(double));
    l->seen = calloc((size_t)run->n, sizeof(double));
    l->delivery = calloc((size_t)run->n, sizeof(double));
    l->open = calloc((size_t)run->n, sizeof(natsMsg *));
    if (!l->block_of || !l->cancelled || !l->lag || !l->seen || !l->delivery || !l->open ||
        natsInbox_Create(&inbox) != NATS_OK)
        rawjs_die("out of memory", NATS_NO_MEMORY);
    snprintf(l->inbox, sizeof(l->inbox), "%s", inbox);
    natsInbox_Destroy(inbox);
    snprintf(subject, sizeof(subject), "%s.>", l->inbox);
    if (natsConnection_SubscribeSync(&l->pubacks, nc, subject) != NATS_OK)
        rawjs_die("PubAck inbox", NATS_ERR);
    natsSubscription_SetPendingLimits(l->pubacks, -1, -1);
    l->multi = rawpost_open(run); /* before the watcher's thread may wake it */
    l->watch = rawledger_watch(js, 0, l->watch_thread ? on_record : NULL, l);
}

static void
ledger_close(struct ledger *l)
{
    natsSubscription_Unsubscribe(l->watch); /* no handler runs after this */
    natsSubscription_Destroy(l->watch);
    rawpost_close(l->multi);
    natsSubscription_Destroy(l->pubacks);
    free(l->block_of);
    free(l->cancelled);
    free(l->lag);
    free(l->seen);
    free(l->delivery);
    free(l->open);
}

int
rawjs_ledger(const struct rawjs_opts *o)
{
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = rawstream_js(nc);
    char *payload = malloc((size_t)o->size);
    struct ledger l = {0};
    struct rawpost_run run = {.n = o->n,
                              .batch = o->batch,
                              .inflight = o->inflight,
                              .url = o->sink,
                              .max_secs = 120,
                              .finish = finished,
                              .finish_arg = &l};
    struct rawpull *sub;
    double secs, start_ns = wall_ns() - 1e9;
    long done, sent_id;
    int first = 0;

    if (!payload || !o->sink)
        rawjs_die("ledger needs --sink", NATS_INVALID_ARG);
    randombytes_buf(payload, (size_t)o->size);
    rawstream_make(js, o->replicas);
    rawledger_make(js, o->replicas);
    printf("{\"n\":%ld,\"size\":%d,\"replicas\":%d,\"block\":%d,\"group_ms\":%.0f,"
           "\"watch_thread\":%d",
           o->n, o->size, o->replicas, o->batch, o->group_ms, o->watch_thread);
    rawstream_publish(js, "d", o->n, payload, o->size, 1);
    sub = rawpull_durable(nc, js, RAWSTREAM_NAME, "rawjs_d", "rawjs.*.d.*");
    pre_cancel(js, o->n, o->cancel_every);
    l.watch_thread = o->watch_thread;
    ledger_open(&l, nc, js, &run);
    rawmeter_mark();
    done = run_ledger(&l, sub, &run, o->group_ms / 1000, &secs);
    rawmeter_report("ledger_pull_post_ack", done, secs, &first);
    printf(",\"claim_blocks\":%ld,\"outcome_blocks\":%ld,\"cancels_seen\":%ld,"
           "\"skipped_cancelled\":%ld,\"ledger_records_per_task\":%.4f",
           l.blocks, l.groups, atomic_load(&l.cancels_seen), l.skipped,
           (double)(l.blocks + l.groups) / (double)(done ? done : 1));
    report_lag("watcher_lag_ms", l.lag, l.blocks);
    if (l.watch_thread) /* the watcher's own part of it */
        report_lag("watcher_read_ms", l.delivery, l.blocks);
    sent_id = o->n / 2 + 1; /* one sent, not cancelled before */
    if (o->cancel_every > 0 && sent_id % o->cancel_every == 0)
        sent_id++;
    rawledger_answer_cancel(js, sent_id, (int64_t)start_ns, "cancel_sent_id");
    rawledger_answer_cancel(js, o->n + 7, (int64_t)start_ns, "cancel_unclaimed_id");
    printf(",\"failed\":%ld}\n", rawstream_failed());
    ledger_close(&l);
    rawpull_free(sub);
    js_DeleteStream(js, RAWLEDGER_STREAM, NULL, NULL);
    js_DeleteStream(js, RAWSTREAM_NAME, NULL, NULL);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    free(payload);
    return rawstream_failed() || done + l.skipped < o->n ? 1 : 0;
}

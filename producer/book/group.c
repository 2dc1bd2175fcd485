/* Group membership and the group cancel (see group.h). The cancel lists the group's keys with
 * an ordered consumer (headers only), then publishes a "cancelled" claim create for every
 * member without waiting (up to IN_FLIGHT PubAcks outstanding): a create that JetStream
 * stores won the race, exactly as `sendat cancel` does. A refused or unanswered create goes
 * through cancel_run one by one: the claim exists (sent, being sent, retrying, or our own
 * write whose answer was lost), and cancel_run decides it the way a single cancel would, on
 * RESOLVERS threads at once. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cancel.h"
#include "claim.h"
#include "group.h"
#include "shutdown.h"
#include "timeparse.h"

#define IN_FLIGHT 4096
#define RESOLVERS 32      /* threads settling refused creates with cancel_run */
#define LIST_WAIT_MS 5000 /* the longest wait for the next key while listing */

enum sa_code
group_member_msg(natsMsg **out, const struct sa_task *t, struct sa_err *err)
{
    char subject[40 + 2 * SA_ID_MAX], due[24];
    int n = snprintf(due, sizeof(due), "%" PRId64, t->due_ms);
    natsStatus s;

    snprintf(subject, sizeof(subject), "$KV.%s.%s.%s", SA_GROUPS_BUCKET, t->group, t->id);
    s = natsMsg_Create(out, subject, NULL, due, n);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, "build group member");
}

enum sa_code
group_ttl(struct sa_nats *n, int64_t *ttl_ms, struct sa_err *err)
{
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetStreamInfo(&si, n->js, "KV_" SA_GROUPS_BUCKET, NULL, &jerr);

    if (s != NATS_OK)
        return sa_nats_fail(err, s, jerr, "read the groups bucket's TTL");
    *ttl_ms = si->Config->MaxAge / 1000000; /* nanoseconds */
    jsStreamInfo_Destroy(si);
    return SA_OK;
}

enum sa_code
group_fits(const struct sa_task *t, int64_t now, int64_t ttl_ms, struct sa_err *err)
{
    char due[40], until[40];

    if (!t->group[0] || ttl_ms <= 0 || t->due_ms <= now + ttl_ms)
        return SA_OK;
    sa_time_format(due, sizeof(due), t->due_ms);
    sa_time_format(until, sizeof(until), now + ttl_ms);
    return sa_fail_field(err, SA_EINVAL, "group",
                         "a task in group %s is due %s, after its membership expires (%s: the "
                         "claims TTL from now), so cancel --group could not reach it; book it "
                         "due by then, or without a group",
                         t->group, due, until);
}

enum sa_code
group_record(struct sa_nats *n, const struct sa_task *t, struct sa_err *err)
{
    natsMsg *msg = NULL;
    jsPubAck *pa = NULL;
    jsErrCode jerr = 0;
    int64_t ttl = 0;
    enum sa_code rc;
    natsStatus s;

    if (!t->group[0])
        return SA_OK;
    if ((rc = group_ttl(n, &ttl, err)) != SA_OK ||
        (rc = group_fits(t, sa_now_ms(), ttl, err)) != SA_OK ||
        (rc = group_member_msg(&msg, t, err)) != SA_OK)
        return rc;
    s = js_PublishMsg(&pa, n->js, msg, NULL, &jerr);
    if (s != NATS_OK)
        rc = sa_nats_fail(err, s, jerr, natsMsg_GetSubject(msg));
    jsPubAck_Destroy(pa);
    natsMsg_Destroy(msg);
    return rc;
}

struct ids {
    char (*id)[SA_ID_MAX + 1];
    size_t len, cap;
};

static int
ids_add(struct ids *l, const char *id)
{
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        void *p = realloc(l->id, cap * sizeof(*l->id));
        if (!p)
            return -1;
        l->id = p;
        l->cap = cap;
    }
    snprintf(l->id[l->len++], sizeof(l->id[0]), "%s", id);
    return 0;
}

/* Every task id of group, from the keys "<group>.<id>" (deleted keys left out). */
static enum sa_code
list_members(struct sa_nats *n, const char *group, struct ids *out, struct sa_err *err)
{
    kvStore *kv = NULL;
    kvWatcher *w = NULL;
    kvEntry *e = NULL;
    kvWatchOptions o;
    char filter[SA_ID_MAX + 4];
    size_t skip = strlen(group) + 1;
    natsStatus s = js_KeyValue(&kv, n->js, SA_GROUPS_BUCKET);
    enum sa_code rc = SA_OK;

    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "bind " SA_GROUPS_BUCKET " (run sendat init)");
    kvWatchOptions_Init(&o);
    o.MetaOnly = true;
    o.IgnoreDeletes = true;
    snprintf(filter, sizeof(filter), "%s.>", group);
    s = kvStore_Watch(&w, kv, filter, &o);
    while (s == NATS_OK && (s = kvWatcher_Next(&e, w, LIST_WAIT_MS)) == NATS_OK && e) {
        if (kvEntry_Operation(e) == kvOp_Put && strlen(kvEntry_Key(e)) > skip &&
            ids_add(out, kvEntry_Key(e) + skip) != 0)
            rc = sa_fail(err, SA_ENOMEM, "no memory to list group %s", group);
        kvEntry_Destroy(e);
        if (rc != SA_OK)
            break;
    }
    if (rc == SA_OK && s != NATS_OK)
        rc = sa_nats_fail(err, s, 0, "list group");
    kvWatcher_Destroy(w);
    kvStore_Destroy(kv);
    return rc;
}

/* The PubAcks of the claim creates: won ones counted, the others kept for cancel_run. */
struct race {
    pthread_mutex_t lock;
    long won;
    struct ids contested;
    int nomem;
    int held; /* a PubAck handler may still reach it: freed at sa_nats_shutdown */
};

static void
race_release(void *p)
{
    struct race *r = p;

    free(r->contested.id);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static void
on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
    struct race *r = closure;
    const char *id = strrchr(natsMsg_GetSubject(msg), '.') + 1; /* $KV.sendat_claims.<id> */

    (void)js;
    (void)pa;
    pthread_mutex_lock(&r->lock);
    if (!pae)
        r->won++;
    else if (ids_add(&r->contested, id) != 0)
        r->nomem = 1;
    pthread_mutex_unlock(&r->lock);
    natsMsg_Destroy(msg);
}

/* Publishes a "cancelled" create for each id, and waits for every PubAck. */
static enum sa_code
race_all(struct sa_nats *n, const struct ids *l, struct race *r, struct sa_err *err)
{
    struct sa_claim mine = {.state = SA_CLAIM_CANCELLED, .at_ms = sa_now_ms()};
    jsCtx *js = NULL;
    jsOptions o;
    jsPubOptions po;
    natsMsg *msg = NULL;
    natsStatus s;
    enum sa_code rc = SA_OK;
    int published = 0;

    snprintf(mine.consumer, sizeof(mine.consumer), "sendat cancel --group");
    jsOptions_Init(&o);
    o.PublishAsync.MaxPending = IN_FLIGHT;
    o.PublishAsync.AckHandler = on_ack;
    o.PublishAsync.AckHandlerClosure = r;
    o.PublishAsync.StallWait = 30000;
    if ((s = natsConnection_JetStream(&js, n->nc, &o)) != NATS_OK)
        return sa_nats_fail(err, s, 0, "JetStream context");
    for (size_t i = 0; i < l->len && rc == SA_OK; i++) {
        char bucket[64];

        sa_layout_claims_bucket(bucket, sizeof(bucket), sa_layout_shard_of(&n->layout, l->id[i]));
        mine.write_id[0] = '\0'; /* a write id of its own for each task's claim */
        rc = sa_claim_message(&msg, bucket, l->id[i], &mine, 0, err);
        if (rc == SA_OK && (s = js_PublishMsgAsync(js, &msg, NULL)) != NATS_OK)
            rc = sa_nats_fail(err, s, 0, "publish a cancel claim");
        published |= rc == SA_OK;
        natsMsg_Destroy(msg); /* NULL once taken */
        msg = NULL;
    }
    jsPubOptions_Init(&po);
    po.MaxWait = 60000;
    s = js_PublishAsyncComplete(js, &po);
    if (rc == SA_OK && s != NATS_OK)
        rc = sa_nats_fail(err, s, 0, "waiting for the cancel claims");
    if (sa_js_quiesce(js, published, SA_QUIESCE_MS) != SA_OK) {
        r->held = 1; /* a handler is still under way: r outlives this call (race_release) */
        if (rc == SA_OK)
            rc = sa_fail(err, SA_ERETRY, "a cancel claim's PubAck was still being handled");
    }
    jsCtx_Destroy(js);
    if (rc == SA_OK && r->nomem)
        rc = sa_fail(err, SA_ENOMEM, "no memory to keep the contested claims");
    return rc;
}

/* The contested ids, settled by cancel_run on RESOLVERS threads (a claim being sent is waited
 * for up to 30 s by cancel_run: those waits overlap instead of adding up). */
struct resolve {
    struct sa_nats *n;
    const struct ids *l;
    pthread_mutex_t lock;
    size_t next;
    long cancelled, too_late;
    struct sa_err err;
};

/* One contested id: a claim already settled (cancelled before, or sent) is read and counted;
 * anything else is raced by cancel_run. */
static enum sa_code
resolve_one(struct sa_nats *n, const char *id, struct cancel_result *one, struct sa_err *err)
{
    struct sa_claim c = {0};

    if (sa_claim_get(sa_nats_claims(n, id), id, &c, NULL) == SA_OK &&
        (c.state == SA_CLAIM_CANCELLED || c.state == SA_CLAIM_SENT)) {
        one->outcome = c.state == SA_CLAIM_CANCELLED ? CANCEL_DONE : CANCEL_SENT;
        return SA_OK;
    }
    return cancel_run(n, id, one, err);
}

static void *
resolve_loop(void *arg)
{
    struct resolve *r = arg;
    struct cancel_result one;
    struct sa_err err = {0};

    for (;;) {
        pthread_mutex_lock(&r->lock);
        size_t i = r->err.code == SA_OK ? r->next++ : r->l->len;
        pthread_mutex_unlock(&r->lock);
        if (i >= r->l->len)
            return NULL;
        enum sa_code rc = resolve_one(r->n, r->l->id[i], &one, &err);
        pthread_mutex_lock(&r->lock);
        if (rc != SA_OK)
            sa_fail(&r->err, rc, "%s", err.msg);
        else if (one.outcome == CANCEL_DONE)
            r->cancelled++;
        else if (one.outcome != CANCEL_UNKNOWN) /* unknown: the membership outlived its task */
            r->too_late++;
        pthread_mutex_unlock(&r->lock);
    }
}

static enum sa_code
resolve_all(struct sa_nats *n, const struct ids *l, struct group_result *out, struct sa_err *err)
{
    struct resolve r = {.n = n, .l = l, .lock = PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[RESOLVERS];
    int started = 0;

    while (started < RESOLVERS && (size_t)started < l->len &&
           pthread_create(&th[started], NULL, resolve_loop, &r) == 0)
        started++;
    if (started == 0 && l->len)
        resolve_loop(&r);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    out->cancelled += r.cancelled;
    out->too_late += r.too_late;
    return r.err.code == SA_OK ? SA_OK : sa_fail(err, r.err.code, "%s", r.err.msg);
}

enum sa_code
group_cancel(struct sa_nats *n, const char *group, struct group_result *out, struct sa_err *err)
{
    struct ids members = {0};
    struct race *r;
    enum sa_code rc;

    memset(out, 0, sizeof(*out));
    if (!sa_layout_id_valid(group))
        return sa_fail(err, SA_EINVAL, "group \"%.70s\" must be 1-%d of A-Z a-z 0-9 _ -", group,
                       SA_ID_MAX);
    if (!(r = calloc(1, sizeof(*r))))
        return sa_fail(err, SA_ENOMEM, "no memory to cancel group %s", group);
    pthread_mutex_init(&r->lock, NULL);
    rc = list_members(n, group, &members, err);
    if (rc == SA_OK && members.len)
        rc = race_all(n, &members, r, err);
    pthread_mutex_lock(&r->lock);
    out->cancelled = r->won;
    pthread_mutex_unlock(&r->lock);
    if (rc == SA_OK)
        rc = resolve_all(n, &r->contested, out, err);
    free(members.id);
    if (r->held)
        sa_free_late(race_release, r);
    else
        race_release(r);
    return rc;
}

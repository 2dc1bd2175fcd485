/* Fleet membership by beats in the members bucket and probes on liveness subjects (see
 * members.h and docs/design-notes.md "A dead member costs seconds"). Whatever a client writes
 * into the bucket, only an instance's own silence makes it dead (liveness.c): an entry may
 * name an instance to probe, never decide that it is gone (issue 24.2, docs/architecture.md
 * "Holders are processes"). */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvhist.h"
#include "layout.h"
#include "liveness.h"
#include "log.h"
#include "members.h"
#include "timeparse.h"

#define LIST_EVERY_MS 5000 /* the member list is read again this often */
#define GONE_KEPT 64       /* dead instances remembered while their entries wait for the TTL */
/* rescues of instances this member never heard from: at most one this often */
#define UNSEEN_RESCUE_EVERY_MS 20000
/* members_free waits this long for the last probe answer to return before it frees */
#define PROBES_DONE_WAIT_MS 5000
/* the most entries a list reads: every member's and rescue entry, rewritten meanwhile */
#define WALK_MAX (4 * MEMBERS_MAX)

struct member {
    char name[64];
    char instance[MEMBERS_INSTANCE_MAX];
    int dead; /* found dead and reported */
};

struct members {
    struct sa_nats *n;
    kvStore *kv;
    natsSubscription *alive; /* answers probes of this instance */
    char name[64];
    char instance[MEMBERS_INSTANCE_MAX];
    struct member list[MEMBERS_MAX];
    int len;
    long fleet;
    int64_t next_list_ms;
    struct liveness *live;   /* what our probes of the others found */
    _Atomic int64_t beat_ms; /* our last beat: probes are answered while it is recent */
    atomic_int draining;     /* the puller stopped beating: answer until members_leave */
    atomic_int probes_done;  /* the subscription closed and on_probe will not run again */
    char found[MEMBERS_MAX][MEMBERS_INSTANCE_MAX]; /* dead, not yet taken */
    int nfound;
    char gone[GONE_KEPT][MEMBERS_INSTANCE_MAX]; /* the last found dead: never reported twice */
    int gone_next;
    int64_t unseen_rescue_ms; /* the last rescue of an instance this member never heard from */
};

/* The instance id at the head of a members value (what follows a space is not ours). */
static void
value_instance(char *out, size_t n, const char *value)
{
    size_t len = strcspn(value, " ");

    if (len >= n)
        len = n - 1;
    memcpy(out, value, len);
    out[len] = '\0';
}

/* Answers a probe, from nats.c's delivery thread, while this process's beats go on or it
 * drains: a process whose puller hung for LIVENESS_STALE_MS falls silent, so the fleet finds it
 * hung by its own answer. */
static void
on_probe(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *arg)
{
    struct members *m = arg;

    (void)sub;
    if (natsMsg_GetReply(msg) &&
        (atomic_load(&m->draining) || sa_now_ms() - atomic_load(&m->beat_ms) < LIVENESS_STALE_MS))
        natsConnection_PublishString(nc, natsMsg_GetReply(msg), "");
    natsMsg_Destroy(msg);
}

/* nats.c's completion callback: the subscription is closed and on_probe has returned for the
 * last time, so the member list may be freed (an unsubscribe alone does not wait for an
 * answer under way on the delivery thread, nats.h's natsSubscription_SetOnCompleteCB). */
static void
on_probes_done(void *arg)
{
    struct members *m = arg;

    atomic_store(&m->probes_done, 1);
}

enum sa_code
members_start(struct members **out, struct sa_nats *n, const char *name, const char *instance,
              struct sa_err *err)
{
    struct members *m = calloc(1, sizeof(*m));
    char subject[96];
    natsStatus s;
    enum sa_code rc;

    *out = NULL;
    if (!m)
        return sa_fail(err, SA_ENOMEM, "no memory for the member list");
    if ((rc = liveness_new(&m->live, n, err)) != SA_OK) {
        free(m);
        return rc;
    }
    m->n = n;
    m->fleet = 1;
    snprintf(m->name, sizeof(m->name), "%s", name);
    snprintf(m->instance, sizeof(m->instance), "%s", instance);
    liveness_subject(subject, sizeof(subject), instance);
    atomic_store(&m->beat_ms, sa_now_ms()); /* the first beat comes with the puller */
    s = natsConnection_Subscribe(&m->alive, n->nc, subject, on_probe, m);
    if (s == NATS_OK)
        s = natsSubscription_SetOnCompleteCB(m->alive, on_probes_done, m);
    if (s != NATS_OK) {
        rc = sa_nats_fail(err, s, 0, "subscribe to the liveness subject");
        members_free(m);
        return rc;
    }
    if (!liveness_answers(m->live, instance)) { /* the others would take us for dead */
        members_free(m);
        return sa_fail(err, SA_ENATS,
                       "no answer on %s from this very process: the consumer's NATS user must "
                       "be allowed to subscribe to sendat.alive.* and to answer requests "
                       "(allow_responses), see deploy/nats/accounts.conf",
                       subject);
    }
    if (js_KeyValue(&m->kv, n->js, SA_MEMBERS_BUCKET) != NATS_OK)
        sa_log(SA_LOG_WARN, "no_members_bucket",
               "error=\"run sendat init: bursts are shared less evenly, dead members found late\"");
    *out = m;
    return SA_OK;
}

static void
remember(struct members *m, const char *key)
{
    kvEntry *e = NULL;
    struct member *x;

    if (m->len == MEMBERS_MAX || kvStore_Get(&e, m->kv, key) != NATS_OK)
        return;
    x = &m->list[m->len++];
    snprintf(x->name, sizeof(x->name), "%s", key);
    value_instance(x->instance, sizeof(x->instance), kvEntry_ValueString(e));
    x->dead = 0;
    for (int i = 0; i < GONE_KEPT && x->instance[0]; i++)
        if (!strcmp(m->gone[i], x->instance))
            x->dead = 1; /* found already: its entry waits for the bucket's TTL */
    kvEntry_Destroy(e);
}

/* Whether an earlier list's member whose entry is gone now (the bucket's TTL) is still being
 * judged: a hung member's entry expires about when its silence reaches LIVENESS_STALE_MS. */
static int
still_suspected(struct members *m, const struct member *x)
{
    if (x->dead || !x->instance[0] || m->len == MEMBERS_MAX)
        return 0;
    for (int i = 0; i < m->len; i++)
        if (!strcmp(m->list[i].instance, x->instance))
            return 0; /* listed again */
    return liveness_suspected(m->live, x->instance);
}

/* The walk over the members bucket (sa_kv_walk_fn): each member's key once, but for the rescue
 * entries, this member's own and markers (a member that left). An entry rewritten while the
 * walk goes on is met again further on: remembered once. */
static int
listed(natsMsg *msg, void *arg)
{
    struct members *m = arg;
    const char *subject = NULL, *op = NULL, *key;
    size_t prefix = strlen("$KV." SA_MEMBERS_BUCKET ".");
    int i;

    if (natsMsgHeader_Get(msg, "Nats-Subject", &subject) != NATS_OK || !subject ||
        strlen(subject) <= prefix || (natsMsgHeader_Get(msg, "KV-Operation", &op) == NATS_OK && op))
        goto done; /* a DEL or PURGE: the key holds nothing */
    key = subject + prefix;
    for (i = 0; i < m->len && strcmp(m->list[i].name, key); i++)
        ;
    if (i == m->len && strncmp(key, SA_MEMBERS_RESCUE_PREFIX, strlen(SA_MEMBERS_RESCUE_PREFIX)) &&
        strcmp(key, m->name))
        remember(m, key);
done:
    natsMsg_Destroy(msg);
    return 0;
}

/* The members' names and instances, and the fleet's size (this member included). Those of
 * the last list still being judged stay until judged. The bucket is walked by direct gets
 * (common/kvhist.h): no consumer and no subscription each time, as kvStore_Keys made. */
static void
list(struct members *m)
{
    long fleet = 1; /* this member */
    struct member *before = NULL;
    int nbefore = m->len;
    natsStatus s;

    if (nbefore && (before = malloc(sizeof(*before) * (size_t)nbefore)))
        memcpy(before, m->list, sizeof(*before) * (size_t)nbefore);
    m->len = 0;
    s = sa_kv_walk(m->n->js, "KV_" SA_MEMBERS_BUCKET, "$KV." SA_MEMBERS_BUCKET ".>", WALK_MAX,
                   listed, m);
    if (s != NATS_OK && s != NATS_NOT_FOUND && nbefore && before) { /* keep the last list */
        memcpy(m->list, before, sizeof(*before) * (size_t)nbefore);
        m->len = nbefore;
        free(before);
        return;
    }
    for (int i = 0; before && i < nbefore; i++)
        if (still_suspected(m, &before[i]))
            m->list[m->len++] = before[i];
    free(before);
    for (int i = 0; i < m->len; i++)
        fleet += !m->list[i].dead;
    m->fleet = fleet;
}

/* Whether the bucket still holds the very entry that named instance, unrenewed for
 * LIVENESS_GRACE_MS: what a member that died leaves behind. A living member under that name writes
 * its own over a forged one every second, so a forged entry never ages this far. */
static int
entry_left_behind(struct members *m, const char *name, const char *instance)
{
    kvEntry *e = NULL;
    char now[MEMBERS_INSTANCE_MAX];
    int left;

    if (kvStore_Get(&e, m->kv, name) != NATS_OK)
        return 0;
    value_instance(now, sizeof(now), kvEntry_ValueString(e));
    left =
        !strcmp(now, instance) && sa_now_ms() - kvEntry_Created(e) / 1000000 >= LIVENESS_GRACE_MS;
    kvEntry_Destroy(e);
    return left;
}

/* A dead instance's levels are handed back when this member heard it answer before (a member
 * it knew), or when its entry was left behind (a member that died before this one looked;
 * such rescues at most every UNSEEN_RESCUE_EVERY_MS): an instance no process ever answered
 * for is a made-up entry, and handing back levels for it would only cost the fleet. */
static const char *
worth_rescue(struct members *m, const struct member *x, int64_t now_ms)
{
    if (liveness_heard(m->live, x->instance))
        return "answered_before";
    if (now_ms - m->unseen_rescue_ms < UNSEEN_RESCUE_EVERY_MS ||
        !entry_left_behind(m, x->name, x->instance))
        return NULL;
    m->unseen_rescue_ms = now_ms;
    return "entry_left_behind";
}

static void
found_dead(struct members *m, struct member *x, int64_t now_ms)
{
    const char *known;

    x->dead = 1;
    snprintf(m->gone[m->gone_next], MEMBERS_INSTANCE_MAX, "%s", x->instance);
    m->gone_next = (m->gone_next + 1) % GONE_KEPT;
    if (m->fleet > 1)
        m->fleet--; /* it shares no slot any more */
    if (!(known = worth_rescue(m, x, now_ms))) {
        sa_log(SA_LOG_INFO, "member_entry_unanswered",
               "member=%s instance=%s note=\"no process answers for it: not rescued\"", x->name,
               x->instance);
        return;
    }
    if (m->nfound < MEMBERS_MAX)
        snprintf(m->found[m->nfound++], MEMBERS_INSTANCE_MAX, "%s", x->instance);
    sa_log(SA_LOG_WARN, "member_dead", "member=%s instance=%s known=%s", x->name, x->instance,
           known);
}

static void
probe_all(struct members *m, int64_t now_ms)
{
    for (int i = 0; i < m->len; i++) {
        struct member *x = &m->list[i];

        if (!x->dead && x->instance[0] && liveness_judge(m->live, x->instance) == LIVENESS_DEAD)
            found_dead(m, x, now_ms);
    }
}

void
members_beat(struct members *m, int64_t now_ms, const char *facts)
{
    char value[MEMBERS_INSTANCE_MAX + 1 + MEMBERS_FACTS_MAX];
    uint64_t rev;

    atomic_store(&m->beat_ms, now_ms);
    if (!m->kv)
        return;
    snprintf(value, sizeof(value), "%s%s%s", m->instance, facts && *facts ? " " : "",
             facts ? facts : "");
    kvStore_PutString(&rev, m->kv, m->name, value);
    if (now_ms >= m->next_list_ms) {
        list(m);
        m->next_list_ms = now_ms + LIST_EVERY_MS;
    }
    probe_all(m, now_ms);
}

long
members_fleet_size(const struct members *m)
{
    return m->fleet;
}

int
members_take_dead(struct members *m, char *out, size_t n)
{
    if (!m->nfound)
        return 0;
    snprintf(out, n, "%s", m->found[--m->nfound]);
    return 1;
}

int
members_won_rescue(struct members *m, const char *dead_instance, int shard)
{
    char key[80];
    uint64_t rev;

    if (!m->kv)
        return 0;
    snprintf(key, sizeof(key), SA_MEMBERS_RESCUE_PREFIX "%s.%d", dead_instance, shard);
    if (kvStore_CreateString(&rev, m->kv, key, m->instance) != NATS_OK)
        return 0; /* another member won (or no answer: the bucket's TTL still ends it) */
    return 1;
}

/* A claim written before claims named their instance: its holder lives while the bucket
 * maps its name to a fresh entry (no probe can tell). */
static int
legacy_entry_alive(struct members *m, const char *name)
{
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, m->kv, name);
    int alive;

    if (s != NATS_OK)
        return s != NATS_NOT_FOUND; /* no answer (an election): ask again later, never guess */
    alive = sa_now_ms() - kvEntry_Created(e) / 1000000 < LIVENESS_STALE_MS;
    kvEntry_Destroy(e);
    return alive;
}

int
members_holder_alive(struct members *m, const char *name, const char *instance)
{
    if (!m)
        return 0;
    if (!instance[0])
        return m->kv ? legacy_entry_alive(m, name) : 0;
    return liveness_judge(m->live, instance) != LIVENESS_DEAD;
}

void
members_drain(struct members *m)
{
    if (m)
        atomic_store(&m->draining, 1);
}

void
members_leave(struct members *m)
{
    if (!m)
        return;
    /* leaving: the others share without us (with the server away the entry's TTL says so
     * soon, and a delete would wait out its timeout) */
    if (m->kv && natsConnection_Status(m->n->nc) == NATS_CONN_STATUS_CONNECTED)
        kvStore_Delete(m->kv, m->name);
    sa_nats_unsubscribe(m->n->nc, m->alive);
}

/* Whether on_probe is done for good: the subscription is closed (members_leave, or here) and
 * nats.c's delivery thread has called on_probes_done. The subscription may be destroyed then:
 * the unsubscribe waited for the server (sa_nats_unsubscribe), so no probe is arriving. */
static int
probes_done(struct members *m)
{
    int64_t until = sa_now_ms() + PROBES_DONE_WAIT_MS;
    struct timespec nap = {0, 1000000};

    if (!m->alive)
        return 1;
    sa_nats_unsubscribe(m->n->nc, m->alive); /* closed already by members_leave: no harm */
    while (!atomic_load(&m->probes_done) && sa_now_ms() < until)
        nanosleep(&nap, NULL);
    return atomic_load(&m->probes_done);
}

void
members_free(struct members *m)
{
    int done;

    if (!m)
        return;
    done = probes_done(m);
    natsSubscription_Destroy(m->alive);
    kvStore_Destroy(m->kv);
    liveness_free(m->live);
    if (!done) { /* a probe answer may still read the list: it stays, a small leak at exit */
        sa_log(SA_LOG_WARN, "probes_not_done", "waited_ms=%d note=\"the member list is not freed\"",
               PROBES_DONE_WAIT_MS);
        return;
    }
    free(m);
}

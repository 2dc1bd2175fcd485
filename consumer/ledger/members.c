/* Fleet membership by beats in the members bucket and probes on liveness subjects (see
 * members.h and docs/design-notes.md "A dead member costs seconds"). */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "log.h"
#include "members.h"
#include "timeparse.h"

#define LIST_EVERY_MS 5000 /* the member list is read again this often */
#define PROBE_WAIT_MS 250  /* a live member answers in milliseconds; no answer: unsure */
#define STALE_MS 20000     /* an entry not renewed this long is a hung member (the bucket TTL) */
#define GRACE_MS 3000      /* gone from the server and no beat this long: dead (three beats) */
#define SETTLE_MS 5000     /* after our own reconnect, others may not have resubscribed yet */
#define GONE_KEPT 64       /* dead instances remembered while their entries wait for the TTL */

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
    long reconnects;            /* the connection's count at the last beat */
    _Atomic int64_t settled_ms; /* no member is judged dead before this (our reconnect) */
    char found[MEMBERS_MAX][MEMBERS_INSTANCE_MAX]; /* dead, not yet taken */
    int nfound;
    char gone[GONE_KEPT][MEMBERS_INSTANCE_MAX]; /* the last found dead: never reported twice */
    int gone_next;
};

static void
alive_subject(char *out, size_t n, const char *instance)
{
    snprintf(out, n, "sendat.alive.%s", instance);
}

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

static void
on_probe(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *arg)
{
    (void)sub;
    (void)arg;
    if (natsMsg_GetReply(msg))
        natsConnection_PublishString(nc, natsMsg_GetReply(msg), "");
    natsMsg_Destroy(msg);
}

enum probe { PROBE_ANSWERED, PROBE_GONE, PROBE_UNSURE };

/* Asks instance whether it lives: the server says "no responders" once its connection is
 * gone. */
static enum probe
probe(struct members *m, const char *instance)
{
    char subject[96];
    natsMsg *reply = NULL;
    natsStatus s;

    alive_subject(subject, sizeof(subject), instance);
    s = natsConnection_Request(&reply, m->n->nc, subject, "", 0, PROBE_WAIT_MS);
    natsMsg_Destroy(reply);
    if (s == NATS_OK)
        return PROBE_ANSWERED;
    return s == NATS_NO_RESPONDERS ? PROBE_GONE : PROBE_UNSURE;
}

enum sa_code
members_start(struct members **out, struct sa_nats *n, const char *name, const char *instance,
              struct sa_err *err)
{
    struct members *m = calloc(1, sizeof(*m));
    char subject[96];
    natsStatus s;

    *out = NULL;
    if (!m)
        return sa_fail(err, SA_ENOMEM, "no memory for the member list");
    m->n = n;
    m->fleet = 1;
    snprintf(m->name, sizeof(m->name), "%s", name);
    snprintf(m->instance, sizeof(m->instance), "%s", instance);
    alive_subject(subject, sizeof(subject), instance);
    s = natsConnection_Subscribe(&m->alive, n->nc, subject, on_probe, NULL);
    if (s != NATS_OK) {
        free(m);
        return sa_nats_fail(err, s, 0, "subscribe to the liveness subject");
    }
    if (probe(m, instance) != PROBE_ANSWERED) { /* the others would take us for dead */
        natsSubscription_Destroy(m->alive);
        free(m);
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

/* The members' names and instances, and the fleet's size (this member included). */
static void
list(struct members *m)
{
    kvKeysList keys = {0};
    long fleet = 1; /* this member */

    if (kvStore_Keys(&keys, m->kv, NULL) != NATS_OK)
        return;
    m->len = 0;
    for (int i = 0; i < keys.Count; i++)
        if (strncmp(keys.Keys[i], SA_MEMBERS_RESCUE_PREFIX, strlen(SA_MEMBERS_RESCUE_PREFIX)) &&
            strcmp(keys.Keys[i], m->name))
            remember(m, keys.Keys[i]);
    kvKeysList_Destroy(&keys);
    for (int i = 0; i < m->len; i++)
        fleet += !m->list[i].dead;
    m->fleet = fleet;
}

static void
probe_all(struct members *m, int64_t now_ms)
{
    if (now_ms < atomic_load(&m->settled_ms))
        return; /* we were away: the others may still be coming back */
    for (int i = 0; i < m->len; i++) {
        struct member *x = &m->list[i];

        if (x->dead || !x->instance[0] || probe(m, x->instance) != PROBE_GONE)
            continue;
        x->dead = 1;
        snprintf(m->gone[m->gone_next], MEMBERS_INSTANCE_MAX, "%s", x->instance);
        m->gone_next = (m->gone_next + 1) % GONE_KEPT;
        if (m->nfound < MEMBERS_MAX)
            snprintf(m->found[m->nfound++], MEMBERS_INSTANCE_MAX, "%s", x->instance);
        if (m->fleet > 1)
            m->fleet--; /* it shares no slot any more */
        sa_log(SA_LOG_WARN, "member_dead", "member=%s instance=%s", x->name, x->instance);
    }
}

void
members_beat(struct members *m, int64_t now_ms, const char *facts)
{
    char value[MEMBERS_INSTANCE_MAX + 1 + MEMBERS_FACTS_MAX];
    uint64_t rev;

    if (!m->kv)
        return;
    if (atomic_load(m->n->reconnects) != m->reconnects) {
        m->reconnects = atomic_load(m->n->reconnects);
        atomic_store(&m->settled_ms, now_ms + SETTLE_MS);
    }
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

/* The bucket's word on a holder: 1 alive, 0 dead. gone: the server knows no one on its
 * liveness subject, so an entry not renewed for GRACE_MS is a dead process; without that, a
 * hung process shows only by no renewal for STALE_MS. A member that lost its connection for a
 * moment is gone from the server too, but still renewed its entry lately. */
static int
entry_alive(struct members *m, const char *name, const char *instance, int gone)
{
    kvEntry *e = NULL;
    char now[MEMBERS_INSTANCE_MAX];
    natsStatus s = kvStore_Get(&e, m->kv, name);
    int64_t age;
    int alive;

    if (s != NATS_OK)
        return s != NATS_NOT_FOUND; /* no answer (an election): ask again later, never guess */
    value_instance(now, sizeof(now), kvEntry_ValueString(e));
    age = sa_now_ms() - kvEntry_Created(e) / 1000000;
    alive = (!instance[0] || !strcmp(now, instance)) && age < (gone ? GRACE_MS : STALE_MS);
    kvEntry_Destroy(e);
    return alive;
}

int
members_holder_alive(struct members *m, const char *name, const char *instance)
{
    int gone;

    if (!m || !m->kv)
        return 0;
    gone = instance[0] && sa_now_ms() >= atomic_load(&m->settled_ms) &&
           probe(m, instance) == PROBE_GONE;
    return entry_alive(m, name, instance, gone);
}

void
members_leave(struct members *m)
{
    if (!m)
        return;
    if (m->kv)
        kvStore_Delete(m->kv, m->name); /* leaving: the others share without us */
    natsSubscription_Unsubscribe(m->alive);
}

void
members_free(struct members *m)
{
    if (!m)
        return;
    natsSubscription_Destroy(m->alive);
    kvStore_Destroy(m->kv);
    free(m);
}

/* See leaders.h. A turn looks, and moves at most one leader: nothing while any replica of a
 * shard's stream or bucket is offline or behind (a node still catching up; a step-down then
 * costs an election for nothing, and the shares are not yet known). Servers from 2.11 take
 * the peer to hand over to; 2.9 refuses a body and picks a current follower itself, so there
 * the leader is asked plainly, the result read again, and asked again (a few times at most)
 * while the new leader is not the peer wanted. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "leaders.h"
#include "log.h"
#include "stepdown.h"
#include "timeparse.h"
#include "turns.h"

#define LEADERS_KEY "leaders" /* the meta record: when the last turn started (ms) */
#define SERVERS_MAX LEADERS_SERVERS_MAX
#define NAME_LEN LEADERS_NAME_LEN
#define ASSETS_MAX (2 * SA_SHARDS_MAX)
#define ASK_MS 5000       /* one step-down request */
#define ELECTION_MS 10000 /* a new leader after a step-down */
#define POLL_MS 200
#define PLAIN_TRIES 4 /* 2.9: each plain step-down lands on one of two followers */

struct leaders {
    struct turns turns; /* first: turns_spawn */
    struct consumer *c;
    struct leaders_asset assets[ASSETS_MAX]; /* a turn's view (this thread only) */
};

/* Leaderships per server among assets of one kind. */
struct tally {
    int n;
    char name[SERVERS_MAX][NAME_LEN];
    int leads[SERVERS_MAX];
};

static int
stopping(const struct leaders *l)
{
    return turns_stopping(&l->turns);
}

static int
read_asset(jsCtx *js, const char *stream, struct leaders_asset *a)
{
    jsStreamInfo *si = NULL;
    jsClusterInfo *ci;

    memset(a, 0, sizeof(*a));
    snprintf(a->stream, sizeof(a->stream), "%s", stream);
    if (js_GetStreamInfo(&si, js, stream, NULL, NULL) != NATS_OK)
        return -1;
    ci = si->Cluster;
    a->settled = ci && ci->Leader && ci->Leader[0];
    if (a->settled)
        snprintf(a->leader, sizeof(a->leader), "%s", ci->Leader);
    for (int i = 0; ci && i < ci->ReplicasLen && a->peers < SERVERS_MAX; i++) {
        jsPeerInfo *p = ci->Replicas[i];
        if (!p->Current || p->Offline)
            a->settled = 0;
        snprintf(a->peer[a->peers++], NAME_LEN, "%s", p->Name ? p->Name : "");
    }
    jsStreamInfo_Destroy(si);
    return 0;
}

/* The index of name in t, added with no leaderships if new; -1 if t is full. */
static int
server(struct tally *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->name[i], name))
            return i;
    if (t->n == SERVERS_MAX)
        return -1;
    snprintf(t->name[t->n], NAME_LEN, "%s", name);
    t->leads[t->n] = 0;
    return t->n++;
}

static void
count(const struct leaders_asset *a, int n, struct tally *t)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < n; i++) {
        int s = server(t, a[i].leader);
        if (s >= 0)
            t->leads[s]++;
        for (int p = 0; p < a[i].peers; p++)
            server(t, a[i].peer[p]);
    }
}

int
leaders_pick(const struct leaders_asset *a, const struct leaders_asset *partner, int n, int *which,
             char *to)
{
    struct tally t;
    int share, best = -1, best_score = 0;

    count(a, n, &t);
    if (t.n < 2)
        return 0;
    share = (n + t.n - 1) / t.n;
    for (int i = 0; i < n; i++) {
        int from = server(&t, a[i].leader);
        if (from < 0 || t.leads[from] <= share)
            continue;
        for (int p = 0; p < a[i].peers; p++) {
            int s = server(&t, a[i].peer[p]);
            int score = s < 0 ? 0 : 2 * t.leads[s] - !strcmp(partner[i].leader, a[i].peer[p]);
            if (s >= 0 && t.leads[s] < share && (best < 0 || score < best_score)) {
                best = i;
                best_score = score;
                snprintf(to, NAME_LEN, "%s", a[i].peer[p]);
            }
        }
    }
    *which = best;
    return best >= 0;
}

/* Waits for stream's leader to be another than was: 1 with now's view in a, 0 after
 * ELECTION_MS. */
static int
await_leader(struct leaders *l, const char *was, struct leaders_asset *a)
{
    char stream[80];

    snprintf(stream, sizeof(stream), "%s", a->stream);
    for (int waited = 0; waited <= ELECTION_MS && !stopping(l); waited += POLL_MS) {
        if (read_asset(l->c->n->js, stream, a) == 0 && a->leader[0] && strcmp(a->leader, was))
            return 1;
        usleep(POLL_MS * 1000);
    }
    return 0;
}

/* Moves a's leader towards `to`: by name from 2.11, by plain step-downs on 2.9. */
static void
move(struct leaders *l, struct leaders_asset *a, const char *to)
{
    struct sa_nats *n = l->c->n;
    struct sa_err err = {0};
    char from[NAME_LEN], was[NAME_LEN];
    int by_name = n->feat.api_level >= 1, tries = 0;
    enum sa_code rc;

    snprintf(from, sizeof(from), "%s", a->leader);
    do {
        snprintf(was, sizeof(was), "%s", a->leader);
        rc = sa_stepdown(n->nc, a->stream, by_name ? to : NULL, ASK_MS, &err);
        if (rc != SA_OK) {
            sa_log(SA_LOG_WARN, "leader_move_failed", "stream=%s from=%s to=%s error=\"%s\"",
                   a->stream, was, to, err.msg);
            return;
        }
        if (!await_leader(l, was, a)) {
            sa_log(SA_LOG_WARN, "leader_move_failed",
                   "stream=%s from=%s to=%s error=\"no new leader within %d ms\"", a->stream, was,
                   to, ELECTION_MS);
            return;
        }
    } while (!by_name && strcmp(a->leader, to) && ++tries < PLAIN_TRIES && !stopping(l));
    if (!strcmp(a->leader, from)) {
        sa_log(SA_LOG_WARN, "leader_move_failed",
               "stream=%s from=%s to=%s error=\"back on %s after %d plain step-downs (2.9 picks "
               "the next leader itself)\"",
               a->stream, from, to, from, tries);
        return;
    }
    sa_log(SA_LOG_INFO, "leader_moved", "stream=%s from=%s to=%s%s%s", a->stream, from, a->leader,
           strcmp(a->leader, to) ? " wanted=" : "", strcmp(a->leader, to) ? to : "");
}

/* Takes this turn for the fleet: unless another member took one within the last interval,
 * writes the start time on the record's revision. -1: not this member's turn. */
static int
claim(struct leaders *l, int64_t now)
{
    kvStore *meta = l->c->n->meta;
    kvEntry *e = NULL;
    char text[32];
    uint64_t rev = 0, wrote = 0;
    int64_t last = 0;
    natsStatus s = kvStore_Get(&e, meta, LEADERS_KEY);

    if (s == NATS_OK) {
        rev = kvEntry_Revision(e);
        last = strtoll(kvEntry_ValueString(e), NULL, 10);
    }
    kvEntry_Destroy(e);
    if (s != NATS_OK && s != NATS_NOT_FOUND)
        return -1;
    if (last && now < last + l->turns.interval_ms * 9 / 10 && now >= last)
        return -1; /* taken lately by another member */
    snprintf(text, sizeof(text), "%" PRId64, now);
    s = rev ? kvStore_UpdateString(&wrote, meta, LEADERS_KEY, text, rev)
            : kvStore_CreateString(&wrote, meta, LEADERS_KEY, text);
    return s == NATS_OK ? 0 : -1;
}

/* Reads every shard's task stream (a[0..shards)) and claims bucket (a[shards..2 shards)):
 * 1 if all answered and are settled. */
static int
read_all(struct leaders *l, struct leaders_asset *a, int shards)
{
    for (int k = 0; k < shards; k++) {
        char stream[32], bucket[64], kv[80];
        sa_layout_stream(stream, sizeof(stream), k);
        sa_layout_claims_bucket(bucket, sizeof(bucket), k);
        snprintf(kv, sizeof(kv), "KV_%s", bucket);
        if (read_asset(l->c->n->js, stream, &a[k]) != 0 ||
            read_asset(l->c->n->js, kv, &a[shards + k]) != 0 || !a[k].settled ||
            !a[shards + k].settled)
            return 0;
    }
    return 1;
}

static void
turn(struct leaders *l)
{
    struct leaders_asset *a = l->assets;
    int shards = l->c->n->layout.shards, which = -1;
    char to[NAME_LEN];

    if (shards < 2 || claim(l, sa_now_ms()) != 0)
        return; /* one shard: one of each kind, nothing to spread */
    if (!read_all(l, a, shards)) {
        sa_log(SA_LOG_DEBUG, "leader_balance_wait", "reason=\"a replica is offline or behind\"");
        return;
    }
    if (leaders_pick(a, a + shards, shards, &which, to))
        move(l, &a[which], to);
    else if (leaders_pick(a + shards, a, shards, &which, to))
        move(l, &a[shards + which], to);
}

static void
leaders_turn(void *arg)
{
    turn(arg);
}

static void
leaders_init(void *obj, void *c)
{
    ((struct leaders *)obj)->c = c;
}

enum sa_code
leaders_start(struct leaders **out, struct consumer *c, int64_t interval_ms, struct sa_err *err)
{
    *out = interval_ms > 0 ? turns_spawn(sizeof(**out), interval_ms, &c->stopping, leaders_init, c,
                                         leaders_turn, "leader balance", err)
                           : NULL;
    return *out || interval_ms <= 0 ? SA_OK : SA_ENOMEM;
}

void
leaders_stop(struct leaders *l)
{
    turns_free(l ? &l->turns : NULL);
}

/* See placement.h. JetStream places a new R1 stream on the server with the most free storage,
 * which on a fresh cluster is the same one every time (2.9 and 2.15 alike), and offers no
 * server-name placement to a client: so a shard is made with 3 replicas, its leader moved by
 * step-downs to the server chosen, and the group scaled back down, which keeps the leader.
 * Every wait is bounded; a stream that cannot be placed stays where it is, usable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "natsconn.h"
#include "placement.h"
#include "stepdown.h"

#define SERVERS_MAX 8
#define NAME_MAX_LEN 64
#define STEPDOWNS_MAX 30 /* 2.9 picks the next leader itself: about 2 tries each, seen up to 10 */
#define WAIT_MS 5000
#define POLL_US 100000

struct group {
    int n;
    char leader[NAME_MAX_LEN];
    char names[SERVERS_MAX][NAME_MAX_LEN]; /* sorted */
};

static int
by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static void
add_name(struct group *g, const char *name)
{
    if (name && *name && g->n < SERVERS_MAX)
        snprintf(g->names[g->n++], NAME_MAX_LEN, "%s", name);
}

/* The stream's leader and servers now; -1 if it does not answer. */
static int
read_group(jsCtx *js, const char *stream, struct group *g)
{
    jsStreamInfo *si = NULL;

    memset(g, 0, sizeof(*g));
    if (js_GetStreamInfo(&si, js, stream, NULL, NULL) != NATS_OK)
        return -1;
    if (si->Cluster && si->Cluster->Leader) {
        snprintf(g->leader, sizeof(g->leader), "%s", si->Cluster->Leader);
        add_name(g, si->Cluster->Leader);
        for (int i = 0; i < si->Cluster->ReplicasLen; i++)
            add_name(g, si->Cluster->Replicas[i]->Name);
    }
    jsStreamInfo_Destroy(si);
    qsort(g->names, (size_t)g->n, sizeof(g->names[0]), by_name);
    return 0;
}

/* Waits until the stream has a leader other than was ("" : any) and its group has want
 * servers (0: any). 1 if it came within WAIT_MS. */
static int
await_group(jsCtx *js, const char *stream, const char *was, int want, struct group *g)
{
    for (int waited = 0; waited <= WAIT_MS * 1000; waited += POLL_US) {
        if (read_group(js, stream, g) == 0 && g->leader[0] && strcmp(g->leader, was) != 0 &&
            (!want || g->n == want))
            return 1;
        usleep(POLL_US);
    }
    return 0;
}

/* Asks the stream's leader to hand over to `to` (servers from 2.11 take the preferred peer);
 * a server that refuses a body (2.9) is asked plainly and picks the next leader itself. */
static void
step_down(natsConnection *nc, const char *stream, const char *to)
{
    enum sa_code rc = sa_stepdown(nc, stream, to, WAIT_MS, NULL);

    if (rc == SA_ENATS || rc == SA_EINVAL) /* refused (2.9 takes no body): plainly */
        rc = sa_stepdown(nc, stream, NULL, WAIT_MS, NULL);
}

/* Sets the stream's replicas; the server drops followers and keeps the leader. */
static enum sa_code
scale(jsCtx *js, const char *stream, int replicas, struct sa_err *err)
{
    jsStreamInfo *si = NULL, *up = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetStreamInfo(&si, js, stream, NULL, &jerr);

    if (s == NATS_OK) {
        si->Config->Replicas = replicas;
        s = js_UpdateStream(&up, js, si->Config, NULL, &jerr);
    }
    jsStreamInfo_Destroy(up);
    jsStreamInfo_Destroy(si);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, jerr, stream);
}

int
placement_create_replicas(jsCtx *js, int replicas)
{
    jsStreamInfo *si = NULL;
    int clustered = 0;

    if (js_GetStreamInfo(&si, js, "KV_" SA_META_BUCKET, NULL, NULL) == NATS_OK)
        clustered = si->Cluster && si->Cluster->Name && si->Cluster->Name[0];
    jsStreamInfo_Destroy(si);
    return !clustered ? 0 : replicas > 3 ? replicas : 3;
}

enum sa_code
placement_settle(natsConnection *nc, jsCtx *js, const char *stream, int k, int replicas,
                 struct sa_err *err)
{
    struct group g;
    char target[NAME_MAX_LEN];

    if (!await_group(js, stream, "", 0, &g))
        return sa_fail(err, SA_ENATS, "placement: %s has no leader", stream);
    if (g.n < 2)
        return SA_OK; /* one server: nothing to choose */
    snprintf(target, sizeof(target), "%s", g.names[k % g.n]);
    for (int tries = 0; strcmp(g.leader, target) != 0; tries++) {
        char was[NAME_MAX_LEN];
        if (tries == STEPDOWNS_MAX)
            return sa_fail(err, SA_ENATS, "placement: %s stays on %s, not %s after %d step-downs",
                           stream, g.leader, target, tries);
        snprintf(was, sizeof(was), "%s", g.leader);
        step_down(nc, stream, target);
        await_group(js, stream, was, 0, &g); /* no election within the bound: ask again */
    }
    if (replicas >= g.n)
        return SA_OK;
    if (scale(js, stream, replicas, err) != SA_OK)
        return SA_ENATS;
    if (!await_group(js, stream, "", replicas, &g) || strcmp(g.leader, target) != 0)
        return sa_fail(err, SA_ENATS, "placement: %s scaled to %d replicas is on %s, not %s",
                       stream, replicas, g.leader[0] ? g.leader : "no server", target);
    return SA_OK;
}

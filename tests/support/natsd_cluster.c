/* The 3-node nats-server cluster for tests, and natsd_connect, which takes its list of URLs.
 * JetStream will not cluster without routes, so the cluster ports are reserved (ports.h)
 * before any node starts, and the cluster counts as up only once a
 * replicas-3 stream can be created (a leader took about 1 s here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nats/nats.h>

#include "check.h"
#include "natsd.h"
#include "natsd_private.h"
#include "ports.h"

#define CLUSTER_READY_MS 30000 /* for a replicas-3 stream, times the multiplier */
#define CLUSTER_TRIES 3

/* Three reserved loopback ports (ports.h) for the routes: kept across a node's restart. */
static int
free_ports(int ports[3])
{
    for (int i = 0; i < 3; i++)
        if ((ports[i] = port_reserve()) < 0)
            return -1;
    return 0;
}

/* natsOptions_SetURL takes one URL only: a comma-separated list goes in as servers. */
static natsStatus
set_servers(natsOptions *o, const char *urls)
{
    char copy[256], *save = NULL, *tok;
    const char *list[8];
    int n = 0;

    snprintf(copy, sizeof(copy), "%s", urls);
    for (tok = strtok_r(copy, ",", &save); tok && n < 8; tok = strtok_r(NULL, ",", &save))
        list[n++] = tok;
    return natsOptions_SetServers(o, list, n);
}

natsStatus
natsd_connect(natsConnection **nc, const char *urls, const char *user, const char *password)
{
    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);

    if (s == NATS_OK)
        s = set_servers(o, urls);
    if (s == NATS_OK && user)
        s = natsOptions_SetUserInfo(o, user, password ? password : "");
    if (s == NATS_OK && user && (!strcmp(user, "producer") || !strcmp(user, "consumer"))) {
        char inbox[64]; /* the role's own inbox prefix, the only one it may subscribe to */
        snprintf(inbox, sizeof(inbox), "_INBOX_sendat_%s", user);
        s = natsOptions_SetCustomInboxPrefix(o, inbox);
    }
    if (s == NATS_OK)
        s = natsConnection_Connect(nc, o);
    natsOptions_Destroy(o);
    return s;
}

/* One attempt to create (then delete) a replicas-3 stream, its request given wait_ms: 0 once
 * JetStream has a leader. */
static int
try_r3_stream(const char *urls, const char *user, const char *password, int64_t wait_ms)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsOptions o;
    jsStreamConfig sc;
    jsStreamInfo *si = NULL;
    const char *subj[] = {"natsd.ready"};
    int rc = -1;

    jsOptions_Init(&o);
    o.Wait = wait_ms;
    if (natsd_connect(&nc, urls, user, password) != NATS_OK ||
        natsConnection_JetStream(&js, nc, &o) != NATS_OK)
        goto out;
    jsStreamConfig_Init(&sc);
    sc.Name = "NATSD_READY";
    sc.Subjects = subj;
    sc.SubjectsLen = 1;
    sc.Replicas = 3;
    if (js_AddStream(&si, js, &sc, NULL, NULL) == NATS_OK) {
        rc = 0;
        o.Wait = 5000; /* the delete gets the client's default wait */
        js_DeleteStream(js, "NATSD_READY", &o, NULL);
    }
out:
    jsStreamInfo_Destroy(si);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return rc;
}

static int
cluster_usable(struct natsd_cluster *c, const char *user, const char *password)
{
    int64_t deadline = test_now_ms() + (int64_t)(CLUSTER_READY_MS * test_timeout_multiplier());
    struct timespec tick = {0, 200 * 1000000L};
    int64_t t0 = test_now_ms();

    /* Before the nodes elect a meta leader the request goes unanswered: for the first 10 s the
     * tries give up after 1 s (the client's default of 5 s was most of a cluster's start),
     * then after 5 s, so a loaded machine whose creation takes longer still gets its answer. */
    while (test_now_ms() < deadline) {
        int64_t wait_ms = test_now_ms() - t0 < 10000 ? 1000 : 5000;
        if (try_r3_stream(c->urls, user, password, wait_ms) == 0)
            return 0;
        nanosleep(&tick, NULL);
    }
    fprintf(stderr, "3-node cluster %s: no replicas-3 stream in time\n", c->urls);
    for (int i = 0; i < 3; i++)
        natsd_print_log_tail(&c->node[i]);
    return -1;
}

/* Node i of c (n<i+1>, its own folder): from config text when given, else from the flags
 * its cluster_port and routes make. Appends its URL to c->urls. */
static int
start_node(struct natsd_cluster *c, int i, const char *text)
{
    struct natsd *s = &c->node[i];
    size_t n = strlen(c->urls);

    snprintf(s->name, sizeof(s->name), "n%d", i + 1);
    if (test_mkdtemp(s->dir, sizeof(s->dir)) != 0 || (text && natsd_write_config(s, text) != 0) ||
        natsd_launch(s, text != NULL) != 0)
        return -1;
    snprintf(c->urls + n, sizeof(c->urls) - n, "%s%s", i ? "," : "", s->url);
    return 0;
}

static int
cluster_launch(struct natsd_cluster *c, const int ports[3])
{
    char routes[256];

    snprintf(routes, sizeof(routes), "nats://127.0.0.1:%d,nats://127.0.0.1:%d,nats://127.0.0.1:%d",
             ports[0], ports[1], ports[2]);
    for (int i = 0; i < 3; i++) {
        c->node[i].cluster_port = ports[i];
        snprintf(c->node[i].routes, sizeof(c->node[i].routes), "%s", routes);
        if (start_node(c, i, NULL) != 0)
            return -1;
    }
    return 0;
}

/* text with "$ROUTE_PORT1".."$ROUTE_PORT3" replaced by the three cluster ports, malloc'd. */
static char *
with_route_ports(const char *text, const int ports[3])
{
    char token[16], value[16], *cur = strdup(text), *next;

    for (int i = 0; i < 3 && cur; i++) {
        snprintf(token, sizeof(token), "$ROUTE_PORT%d", i + 1);
        snprintf(value, sizeof(value), "%d", ports[i]);
        next = natsd_replace(cur, token, value);
        free(cur);
        cur = next;
    }
    return cur;
}

/* One try at a cluster on three fresh route ports, from config_text when given. */
static int
cluster_try(struct natsd_cluster *c, const char *const config_text[3], const char *user,
            const char *password)
{
    int ports[3], rc = 0;

    memset(c, 0, sizeof(*c));
    if (free_ports(ports) != 0)
        return -1;
    if (!config_text)
        rc = cluster_launch(c, ports);
    for (int i = 0; config_text && i < 3 && rc == 0; i++) {
        char *text = with_route_ports(config_text[i], ports);
        rc = text ? start_node(c, i, text) : -1;
        free(text);
    }
    if (rc == 0 && cluster_usable(c, user, password) == 0)
        return 0;
    natsd_cluster_stop(c);
    return -1;
}

/* A reserved port a process outside the tests binds before its node does makes the node exit
 * at once, as can a slow election: such a start is tried again on new ports, at most
 * CLUSTER_TRIES times. */
static int
cluster_start(struct natsd_cluster *c, const char *const config_text[3], const char *user,
              const char *password)
{
    for (int i = 0; i < CLUSTER_TRIES; i++) {
        if (cluster_try(c, config_text, user, password) == 0)
            return 0;
        fprintf(stderr, "3-node cluster: start %d of %d failed\n", i + 1, CLUSTER_TRIES);
    }
    return -1;
}

int
natsd_cluster_start_config(struct natsd_cluster *c, const char *const config_text[3],
                           const char *user, const char *password)
{
    return cluster_start(c, config_text, user, password);
}

int
natsd_cluster_start(struct natsd_cluster *c)
{
    return cluster_start(c, NULL, NULL, NULL);
}

void
natsd_cluster_stop(struct natsd_cluster *c)
{
    for (int i = 0; i < 3; i++)
        natsd_stop(&c->node[i]);
}

int
natsd_cluster_leader(const struct natsd_cluster *c, const char *urls, const char *stream)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    int leader = -1;

    if (natsConnection_ConnectTo(&nc, urls) == NATS_OK &&
        natsConnection_JetStream(&js, nc, NULL) == NATS_OK &&
        js_GetStreamInfo(&si, js, stream, NULL, NULL) == NATS_OK && si->Cluster &&
        si->Cluster->Leader)
        for (int i = 0; i < 3; i++)
            if (!strcmp(c->node[i].name, si->Cluster->Leader))
                leader = i;
    jsStreamInfo_Destroy(si);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return leader;
}

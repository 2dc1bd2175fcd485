/* One connection to NATS for a process: connect from flags and environment, the JetStream
 * context, the KV buckets and the cluster-wide layout record written by `sendat init`. */
#ifndef SA_NATSCONN_H
#define SA_NATSCONN_H

#include <nats/nats.h>
#include <stdatomic.h>

#include "sa_err.h"
#include "jsfeat.h"
#include "layout.h"
#include "levelmark.h"
#include "natserr.h" /* sa_nats_fail, for every caller of the connection */

#define SA_DEFAULT_URL "nats://127.0.0.1:4222"

struct sa_nats {
    natsConnection *nc;
    jsCtx *js;
    kvStore *claims[SA_SHARDS_MAX]; /* one per shard of the layout (sa_nats_claims) */
    kvStore *cancel;
    kvStore *meta;
    kvStore *series;
    struct sa_marks *marks; /* the level marks (levelmark.h); NULL if the bucket does not exist */
    struct sa_layout layout;
    struct sa_jsfeat feat; /* what the server offers beyond 2.9, read at sa_nats_bind */
    /* when claim and cancel records began to carry MACs (claimmac.h): the server time of the
     * meta record SA_CLAIMMAC_SINCE_KEY, read at sa_nats_bind; 0 if the layout has none yet (an
     * older version made it and `sendat init` of this one has not run) */
    int64_t mac_since_ms;
    /* times the connection came back: what was open on the server is gone. Its own block, the
     * reconnect handler's closure, freed at sa_nats_shutdown (shutdown.h): the handler may
     * still run after the connection is destroyed */
    atomic_long *reconnects;
    char inbox_prefix[64]; /* where this connection's replies arrive (SA_INBOX_* or the env's) */
};

/* The inbox prefixes of the roles' binaries: replies, pulled tasks and watch deliveries
 * arrive below them, and deploy/nats/accounts.conf lets each role subscribe to its own only. */
#define SA_INBOX_PRODUCER "_INBOX_sendat_producer"
#define SA_INBOX_CONSUMER "_INBOX_sendat_consumer"

/* Connects to url (NULL: SENDAT_NATS_URL, else SA_DEFAULT_URL; a comma-separated list is a
 * cluster). Credentials come from SENDAT_NATS_CREDS (.creds file), SENDAT_NATS_NKEY (seed
 * file), SENDAT_NATS_USER + SENDAT_NATS_PASSWORD, SENDAT_NATS_TOKEN; TLS from SENDAT_NATS_CA,
 * SENDAT_NATS_CERT + SENDAT_NATS_KEY. Replies arrive below SENDAT_NATS_INBOX_PREFIX, else
 * below inbox (one of SA_INBOX_*). Reconnects forever with backoff. */
enum sa_code sa_nats_connect(struct sa_nats **out, const char *url, const char *name,
                             const char *inbox, struct sa_err *err) SA_MUST_CHECK;

/* A new unique inbox below the connection's prefix ("<prefix>.<nuid>"), for a subscription of
 * our own: nats.c's natsInbox_Create always uses "_INBOX.", which the roles may not read. */
enum sa_code sa_nats_new_inbox(const struct sa_nats *n, char *out, size_t cap,
                               struct sa_err *err) SA_MUST_CHECK;

/* Binds the buckets, reads the layout, the server's features (n->feat) and since when records
 * carry MACs (n->mac_since_ms, made the process's sa_claimmac_trust_before); SA_ENOTFOUND with
 * "run sendat init" if the buckets or the layout are absent. */
enum sa_code sa_nats_bind(struct sa_nats *n, struct sa_err *err) SA_MUST_CHECK;

/* The claims bucket of task id's shard. */
kvStore *sa_nats_claims(const struct sa_nats *n, const char *id);

/* Reads the layout record from the bound meta bucket into n->layout. */
enum sa_code sa_nats_read_layout(struct sa_nats *n, struct sa_err *err) SA_MUST_CHECK;

/* Whether the server refused this connection a subject (a permissions violation: nats.c then
 * sees only a request time out, or nothing at all for a publish). Copies the server's words
 * ("Permissions Violation for Publish to '<a JetStream API subject>'", double quotes turned single
 * so the text fits in a log value) into out and returns 1; 0 if nothing was refused. */
int sa_nats_refused(const struct sa_nats *n, char *out, size_t cap);

/* Unsubscribes sub and waits (at most SA_NATS_UNSUB_WAIT_MS) for the server's answer to a
 * flush after it: nats.c's reader thread has then passed every message the server sent for sub,
 * and finds no subscription for any later one, so sub may be destroyed. nats.c 3.4 (Debian 12's
 * libnats) reads the subscription it found for a message without holding it (fixed in 3.6.1,
 * nats.c issue 637): a subscription destroyed while a message for it arrived was read after
 * it was freed, a SIGSEGV in natsConn_processMsg (issue 35). A sub already closed, no
 * connection, or one not connected now (its reader has stopped reading, and a reconnect does not
 * subscribe sub again) returns at once. */
#define SA_NATS_UNSUB_WAIT_MS 2000
void sa_nats_unsubscribe(natsConnection *nc, natsSubscription *sub);

/* Closes the connection and its contexts, and frees n. */
void sa_nats_close(struct sa_nats *n);

#endif

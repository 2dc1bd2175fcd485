/* One connection to NATS for a process: connect from flags and environment, the JetStream
 * context, the KV buckets and the cluster-wide layout record written by `sendat init`. */
#ifndef SA_NATSCONN_H
#define SA_NATSCONN_H

#include <nats/nats.h>

#include "err.h"
#include "layout.h"

#define SA_DEFAULT_URL "nats://127.0.0.1:4222"

struct sa_nats {
    natsConnection *nc;
    jsCtx *js;
    kvStore *claims;
    kvStore *cancel;
    kvStore *meta;
    kvStore *series;
    struct sa_layout layout;
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

/* Binds the buckets and reads the layout; SA_ENOTFOUND with "run sendat init" if absent. */
enum sa_code sa_nats_bind(struct sa_nats *n, struct sa_err *err) SA_MUST_CHECK;

/* Reads the layout record from the bound meta bucket into n->layout. */
enum sa_code sa_nats_read_layout(struct sa_nats *n, struct sa_err *err) SA_MUST_CHECK;

/* Whether the server refused this connection a subject (a permissions violation: nats.c then
 * sees only a request time out, or nothing at all for a publish). Copies the server's words
 * ("Permissions Violation for Publish to '$JS.API...'", double quotes turned single so the
 * text fits in a log value) into out and returns 1; 0 if nothing was refused. */
int sa_nats_refused(const struct sa_nats *n, char *out, size_t cap);

void sa_nats_close(struct sa_nats *n);

/* natsSubscription_FetchRequest without the heap overflow of nats.c before 3.10 (Debian
 * bookworm ships 3.4): a fetch that finds more than half its batch already waiting in the
 * subscription (a late answer to an earlier request) counted past its array and waited out
 * its expiry. The batch is raised above twice what waits, which keeps the count in bounds. */
natsStatus sa_nats_fetch(natsMsgList *list, natsSubscription *sub, jsFetchRequest *req);

/* Converts a nats.c status (and JetStream error code, 0 if none) once, at the boundary:
 * "what: <status text> (<last error>)". Timeouts and lost connections map to SA_ERETRY. */
enum sa_code sa_nats_fail(struct sa_err *err, natsStatus s, jsErrCode jerr, const char *what);

#endif

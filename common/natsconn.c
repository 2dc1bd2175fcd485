/* Connecting from the environment, so containers need no flags, and reading the layout that
 * `sendat init` wrote once: the window size is a cluster-wide fact, never configured twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimmac.h"
#include "jsapi.h"
#include "natsconn.h"
#include "shutdown.h"

static natsStatus
set_auth(natsOptions *o)
{
    const char *creds = getenv("SENDAT_NATS_CREDS"), *nkey = getenv("SENDAT_NATS_NKEY");
    const char *user = getenv("SENDAT_NATS_USER"), *pass = getenv("SENDAT_NATS_PASSWORD");
    const char *token = getenv("SENDAT_NATS_TOKEN"), *ca = getenv("SENDAT_NATS_CA");
    const char *cert = getenv("SENDAT_NATS_CERT"), *key = getenv("SENDAT_NATS_KEY");
    natsStatus s = NATS_OK;

    if (creds && *creds)
        s = natsOptions_SetUserCredentialsFromFiles(o, creds, NULL);
    if (s == NATS_OK && nkey && *nkey)
        s = natsOptions_SetNKeyFromSeed(o, NULL, nkey);
    if (s == NATS_OK && user && *user)
        s = natsOptions_SetUserInfo(o, user, pass ? pass : "");
    if (s == NATS_OK && token && *token)
        s = natsOptions_SetToken(o, token);
    if (s == NATS_OK && ca && *ca)
        s = natsOptions_LoadCATrustedCertificates(o, ca);
    if (s == NATS_OK && cert && *cert && key && *key)
        s = natsOptions_LoadCertificatesChain(o, cert, key);
    if (s == NATS_OK && ((ca && *ca) || (cert && *cert)))
        s = natsOptions_SetSecure(o, true);
    return s;
}

static natsStatus
set_servers(natsOptions *o, const char *url)
{
    char *copy = strdup(url), *save = NULL, *tok;
    const char *list[16];
    int n = 0;
    natsStatus s;

    if (!copy)
        return NATS_NO_MEMORY;
    for (tok = strtok_r(copy, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save))
        list[n++] = tok;
    s = natsOptions_SetServers(o, list, n);
    free(copy);
    return s;
}

static void
on_reconnected(natsConnection *nc, void *closure)
{
    atomic_long *reconnects = closure;

    (void)nc;
    atomic_fetch_add(reconnects, 1);
}

static natsStatus
make_options(natsOptions **o, struct sa_nats *n, const char *url, const char *name,
             const char *inbox)
{
    const char *own = getenv("SENDAT_NATS_INBOX_PREFIX");
    natsStatus s = natsOptions_Create(o);

    if (s == NATS_OK)
        s = set_servers(*o, url);
    if (s == NATS_OK)
        s = natsOptions_SetName(*o, name);
    if (s == NATS_OK)
        s = natsOptions_SetMaxReconnect(*o, -1);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectWait(*o, 250);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectJitter(*o, 100, 1000);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectBufSize(*o, 64 * 1024 * 1024);
    if (s == NATS_OK)
        s = natsOptions_SetCustomInboxPrefix(*o, own && *own ? own : inbox);
    if (s == NATS_OK)
        snprintf(n->inbox_prefix, sizeof(n->inbox_prefix), "%s", own && *own ? own : inbox);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectedCB(*o, on_reconnected, n->reconnects);
    if (s == NATS_OK)
        s = set_auth(*o);
    return s;
}

/* A server without JetStream answers its API with no responders, which reads as a network
 * fault unless said so. Any other answer (a timeout, a refused subject) is left to the
 * calls that follow. */
static enum sa_code
need_jetstream(natsConnection *nc, const char *url, struct sa_err *err)
{
    natsMsg *reply = NULL;
    natsStatus s = sa_jsapi_raw(&reply, nc, "INFO", "", 2000);
    char where[256];

    natsMsg_Destroy(reply);
    if (s != NATS_NO_RESPONDERS)
        return SA_OK;
    if (natsConnection_GetConnectedUrl(nc, where, sizeof(where)) != NATS_OK || !where[0])
        snprintf(where, sizeof(where), "%.200s", url);
    return sa_fail(err, SA_ERETRY,
                   "JetStream is not enabled on %s: start nats-server with -js (or a jetstream "
                   "block in its configuration)",
                   where);
}

enum sa_code
sa_nats_connect(struct sa_nats **out, const char *url, const char *name, const char *inbox,
                struct sa_err *err)
{
    struct sa_nats *n = NULL;
    natsOptions *o = NULL;
    natsStatus s;
    char what[300];

    *out = NULL;
    if (!url || !*url)
        url = getenv("SENDAT_NATS_URL");
    if (!url || !*url)
        url = SA_DEFAULT_URL;
    n = calloc(1, sizeof(*n));
    if (n && !(n->reconnects = calloc(1, sizeof(*n->reconnects)))) {
        free(n);
        n = NULL;
    }
    if (!n)
        return sa_fail(err, SA_ENOMEM, "no memory for a connection");
    s = make_options(&o, n, url, name, inbox);
    if (s == NATS_OK)
        s = natsConnection_Connect(&n->nc, o);
    if (s == NATS_OK)
        s = natsConnection_JetStream(&n->js, n->nc, NULL);
    natsOptions_Destroy(o);
    if (s != NATS_OK) {
        snprintf(what, sizeof(what), "connect to %.200s", url);
        sa_nats_close(n);
        return sa_nats_fail(err, s, 0, what);
    }
    if (need_jetstream(n->nc, url, err) != SA_OK) {
        sa_nats_close(n);
        return SA_ERETRY;
    }
    *out = n;
    return SA_OK;
}

static enum sa_code
bind_kv(kvStore **kv, jsCtx *js, const char *bucket, struct sa_err *err)
{
    natsStatus s = js_KeyValue(kv, js, bucket);
    char what[128];

    if (s == NATS_NOT_FOUND)
        return sa_fail(err, SA_ENOTFOUND, "bucket %s does not exist: run `sendat init` first",
                       bucket);
    snprintf(what, sizeof(what), "bind bucket %s", bucket);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, what);
}

/* n->mac_since_ms from the meta bucket, and the process's trust in records from before it. */
static enum sa_code
read_mac_since(struct sa_nats *n, struct sa_err *err)
{
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, n->meta, SA_CLAIMMAC_SINCE_KEY);

    if (s != NATS_OK && s != NATS_NOT_FOUND)
        return sa_nats_fail(err, s, 0, "read when claim records began to carry MACs");
    n->mac_since_ms = s == NATS_OK ? kvEntry_Created(e) / 1000000 : 0;
    kvEntry_Destroy(e);
    sa_claimmac_trust_before(n->mac_since_ms);
    return SA_OK;
}

enum sa_code
sa_nats_bind(struct sa_nats *n, struct sa_err *err)
{
    enum sa_code rc;

    if ((rc = bind_kv(&n->meta, n->js, SA_META_BUCKET, err)) != SA_OK ||
        (rc = bind_kv(&n->cancel, n->js, SA_CANCEL_BUCKET, err)) != SA_OK ||
        (rc = bind_kv(&n->series, n->js, SA_SERIES_BUCKET, err)) != SA_OK ||
        (!n->marks && (rc = sa_marks_open(&n->marks, n->js, err)) != SA_OK) ||
        (rc = sa_nats_read_layout(n, err)) != SA_OK || (rc = read_mac_since(n, err)) != SA_OK ||
        (rc = sa_jsfeat_detect(n->nc, &n->feat, err)) != SA_OK)
        return rc;
    for (int k = 0; k < n->layout.shards; k++) {
        char bucket[64];

        sa_layout_claims_bucket(bucket, sizeof(bucket), k);
        if (!n->claims[k] && (rc = bind_kv(&n->claims[k], n->js, bucket, err)) != SA_OK)
            return rc;
    }
    return SA_OK;
}

kvStore *
sa_nats_claims(const struct sa_nats *n, const char *id)
{
    return n->claims[sa_layout_shard_of(&n->layout, id)];
}

enum sa_code
sa_nats_read_layout(struct sa_nats *n, struct sa_err *err)
{
    kvEntry *e = NULL;
    enum sa_code rc;
    natsStatus s;

    s = kvStore_Get(&e, n->meta, "layout");
    if (s == NATS_NOT_FOUND)
        return sa_fail(err, SA_ENOTFOUND, "no layout record: run `sendat init` first");
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read layout");
    rc = sa_layout_parse(&n->layout, kvEntry_ValueString(e), err);
    kvEntry_Destroy(e);
    return rc;
}

int
sa_nats_refused(const struct sa_nats *n, char *out, size_t cap)
{
    const char *text = NULL;

    if (!n || !n->nc || cap == 0 || natsConnection_GetLastError(n->nc, &text) != NATS_NOT_PERMITTED)
        return 0;
    snprintf(out, cap, "%s", text ? text : "permissions violation");
    for (char *q = strchr(out, '"'); q; q = strchr(q + 1, '"'))
        *q = '\'';
    return 1;
}

void
sa_nats_unsubscribe(natsConnection *nc, natsSubscription *sub)
{
    if (sub && natsSubscription_Unsubscribe(sub) == NATS_OK && nc &&
        natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED)
        natsConnection_FlushTimeout(nc, SA_NATS_UNSUB_WAIT_MS);
}

void
sa_nats_close(struct sa_nats *n)
{
    if (!n)
        return;
    for (int k = 0; k < SA_SHARDS_MAX; k++)
        kvStore_Destroy(n->claims[k]);
    kvStore_Destroy(n->cancel);
    kvStore_Destroy(n->meta);
    kvStore_Destroy(n->series);
    sa_marks_close(n->marks);
    jsCtx_Destroy(n->js);
    natsConnection_Destroy(n->nc);
    if (n->nc)
        sa_free_late(free, n->reconnects); /* a handler queued before the close may still count */
    else
        free(n->reconnects); /* no connection was made: no handler has it */
    free(n);
}

enum sa_code
sa_nats_new_inbox(const struct sa_nats *n, char *out, size_t cap, struct sa_err *err)
{
    natsInbox *inbox = NULL;
    natsStatus s = natsInbox_Create(&inbox); /* "_INBOX.<nuid>": the nuid is what we keep */
    const char *nuid = inbox ? strrchr(inbox, '.') : NULL;
    int len;

    if (s != NATS_OK || !nuid) {
        natsInbox_Destroy(inbox);
        return sa_nats_fail(err, s != NATS_OK ? s : NATS_ERR, 0, "make an inbox");
    }
    len = snprintf(out, cap, "%s%s", n->inbox_prefix, nuid);
    natsInbox_Destroy(inbox);
    if (len < 0 || (size_t)len >= cap)
        return sa_fail(err, SA_EINVAL, "inbox prefix %s is too long", n->inbox_prefix);
    return SA_OK;
}

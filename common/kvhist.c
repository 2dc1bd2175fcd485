/* A KV key's history by direct gets (kvhist.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvhist.h"
#include "natserr.h"

void
sa_kvent_of(struct sa_kvent *out, kvEntry *e)
{
    out->key = kvEntry_Key(e);
    out->op = kvEntry_Operation(e);
    out->value = kvEntry_Value(e);
    out->len = kvEntry_ValueLen(e);
    out->created_ns = kvEntry_Created(e);
    out->revision = kvEntry_Revision(e);
}

/* The entry a direct get answered with (m stays the caller's). */
static void
of_msg(struct sa_kvent *out, const char *key, natsMsg *m)
{
    const char *op = NULL;

    out->key = key;
    out->op = kvOp_Put;
    if (natsMsgHeader_Get(m, "KV-Operation", &op) == NATS_OK && op)
        out->op = !strcmp(op, "DEL") ? kvOp_Delete : !strcmp(op, "PURGE") ? kvOp_Purge : kvOp_Put;
    out->value = out->op == kvOp_Put ? natsMsg_GetData(m) : NULL;
    out->len = out->op == kvOp_Put ? natsMsg_GetDataLength(m) : 0;
    out->created_ns = natsMsg_GetTime(m);
    out->revision = natsMsg_GetSequence(m);
}

/* The old way, for a stream without allow_direct: an ordered consumer. */
static enum sa_code
read_old(kvStore *kv, const char *key, struct sa_kvhist *h, struct sa_err *err)
{
    natsStatus s = kvStore_History(&h->old, kv, key, NULL);

    if (s == NATS_NOT_FOUND)
        return SA_OK;
    if (s == NATS_OK)
        h->e = calloc((size_t)h->old.Count + 1, sizeof(*h->e));
    if (!h->e) {
        sa_kvhist_free(h);
        return s != NATS_OK ? sa_nats_fail(err, s, 0, "read the key's history")
                            : sa_fail(err, SA_ENOMEM, "no memory for a key's history");
    }
    for (h->count = 0; h->count < h->old.Count; h->count++)
        sa_kvent_of(&h->e[h->count], h->old.Entries[h->count]);
    return SA_OK;
}

/* One direct get, asked again when unanswered: the request goes to one of the replicas that
 * serve direct gets, and one that stalls (a peer just lost, an election under way) must not
 * fail the read while another would answer (it_cluster test_history_read_node_killed on a
 * loaded machine: one request unanswered for 5 s while the bucket kept its leader). */
static natsStatus
direct_get(natsMsg **m, jsCtx *js, const char *stream, jsDirectGetMsgOptions *o)
{
    jsOptions jo;
    natsStatus s = NATS_TIMEOUT;

    jsOptions_Init(&jo);
    jo.Wait = SA_KV_GET_WAIT_MS;
    for (int try = 0; try < SA_KV_GET_TRIES && s == NATS_TIMEOUT; try++)
        s = js_DirectGetMsg(m, js, stream, &jo, o);
    return s;
}

natsStatus
sa_kv_walk(jsCtx *js, const char *stream, const char *filter, int max, sa_kv_walk_fn each,
           void *arg)
{
    jsDirectGetMsgOptions o;
    uint64_t seq = 1;
    natsStatus s = NATS_OK;

    jsDirectGetMsgOptions_Init(&o);
    o.NextBySubject = filter;
    for (int n = 0; n < max; n++) {
        natsMsg *m = NULL;
        uint64_t at;

        o.Sequence = seq;
        if ((s = direct_get(&m, js, stream, &o)) != NATS_OK)
            return s;
        if ((at = natsMsg_GetSequence(m)) < seq) { /* an answer that does not move on */
            natsMsg_Destroy(m);
            return NATS_ERR;
        }
        seq = at + 1;
        if (each(m, arg))
            break;
    }
    return NATS_OK;
}

/* Keeps one entry of the walk (sa_kv_walk_fn); a full list ends the walk. */
static int
keep(natsMsg *m, void *arg)
{
    struct sa_kvhist *h = arg;

    h->m[h->count] = m;
    of_msg(&h->e[h->count], h->key, m);
    return ++h->count == SA_KVHIST_MAX;
}

enum sa_code
sa_kvhist_read(jsCtx *js, kvStore *kv, const char *key, struct sa_kvhist *h, struct sa_err *err)
{
    char stream[160], subject[400];
    natsStatus s;

    memset(h, 0, sizeof(*h));
    snprintf(stream, sizeof(stream), "KV_%s", kvStore_Bucket(kv));
    snprintf(subject, sizeof(subject), "$KV.%s.%s", kvStore_Bucket(kv), key);
    h->key = key;
    h->e = calloc(SA_KVHIST_MAX, sizeof(*h->e));
    h->m = calloc(SA_KVHIST_MAX, sizeof(*h->m));
    if (!h->e || !h->m) {
        sa_kvhist_free(h);
        return sa_fail(err, SA_ENOMEM, "no memory for a key's history");
    }
    s = sa_kv_walk(js, stream, subject, SA_KVHIST_MAX, keep, h);
    if (s == NATS_NO_RESPONDERS && !h->count) { /* none serves direct gets on this stream */
        sa_kvhist_free(h);
        h->key = key;
        return read_old(kv, key, h, err);
    }
    if (s != NATS_OK && s != NATS_NOT_FOUND) {
        sa_kvhist_free(h);
        return sa_nats_fail(err, s, 0, "read the key's history");
    }
    return SA_OK;
}

void
sa_kvhist_free(struct sa_kvhist *h)
{
    for (int i = 0; h->m && i < h->count; i++)
        natsMsg_Destroy(h->m[i]);
    free(h->m);
    free(h->e);
    kvEntryList_Destroy(&h->old);
    memset(h, 0, sizeof(*h));
}

int
sa_kvhist_full(kvStore *kv, int count)
{
    kvStatus *st = NULL;
    int full = 1; /* unknown: assume the worst */

    if (kvStore_Status(&st, kv) == NATS_OK)
        full = (int64_t)count >= kvStatus_History(st);
    kvStatus_Destroy(st);
    return full;
}

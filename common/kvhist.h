/* A KV key's history read by JetStream direct gets (issue 35/37's failover finding): the key's
 * subject walked with {"seq":N,"next_by_subj":"$KV.<bucket>.<key>"} from the first sequence,
 * one request per entry and one more that finds none. No consumer and no subscription: nats.c's
 * kvStore_History makes an ordered consumer per read, which needs the cluster's meta leader
 * (it timed out after 5 s on a cluster that had lost a node), and made and freed a
 * subscription per read (nats.c issue #637). A direct get is answered by the stream's leader or a
 * current replica, so a node lost that does not lead the bucket stops no read; while the bucket's
 * own leader is being elected none answers (seconds). A replica behind may miss the newest entries,
 * which the callers' updates on the last revision then refuse (they never write over what they did
 * not read). */
#ifndef SA_KVHIST_H
#define SA_KVHIST_H

#include <stdint.h>

#include <nats/nats.h>

#include "sa_err.h"

/* One entry: a put, or a DEL or PURGE marker (op, from the KV-Operation header). */
struct sa_kvent {
    const char *key;
    kvOperation op;
    const char *value; /* NULL for a marker */
    int len;
    int64_t created_ns; /* when the server stored it */
    uint64_t revision;  /* its stream sequence */
};

/* A key's history, oldest first: count entries in e, the messages they point into in m. */
struct sa_kvhist {
    struct sa_kvent *e;
    natsMsg **m;
    kvEntryList old; /* the fallback's entries (a bucket without allow_direct) */
    int count;
    const char *key;
};

/* The most entries a walk reads: nats-server keeps at most 64 per KV key. */
#define SA_KVHIST_MAX 64

/* Each direct get waits this long for an answer, and is asked again if none came, at most this
 * many times in all (a stalled replica does not fail the read while another would answer). */
#define SA_KV_GET_WAIT_MS 2000
#define SA_KV_GET_TRIES 3

/* One message of a walk, the callback's to destroy; nonzero ends the walk. */
typedef int (*sa_kv_walk_fn)(natsMsg *m, void *arg);

/* Walks stream's messages on subjects filter matches (a subject or a wildcard), oldest first,
 * by direct gets next by subject from sequence 1 (one request each and one more that finds
 * none), at most max messages; each gets them in turn. NATS_NOT_FOUND: the walk reached the
 * end; NATS_OK: each ended it or max was reached; else the broker's failure (messages handed to
 * each before it stay the caller's; NATS_TIMEOUT after SA_KV_GET_TRIES unanswered requests). */
natsStatus sa_kv_walk(jsCtx *js, const char *stream, const char *filter, int max,
                      sa_kv_walk_fn each, void *arg);

/* The entry e as an sa_kvent (pointing into e). */
void sa_kvent_of(struct sa_kvent *out, kvEntry *e);

/* Reads key's history in kv into h (count 0: the key holds nothing), markers included. A bucket
 * whose stream lacks allow_direct (no one answers a direct get) is read the old way
 * (kvStore_History). The broker's failure as SA_ENATS / SA_ERETRY (h then empty). */
enum sa_code sa_kvhist_read(jsCtx *js, kvStore *kv, const char *key, struct sa_kvhist *h,
                            struct sa_err *err) SA_MUST_CHECK;

void sa_kvhist_free(struct sa_kvhist *h);

/* Whether a history of count entries (of a key of kv) may have lost older entries: it holds as
 * many as the bucket keeps (or the bucket did not say how many). */
int sa_kvhist_full(kvStore *kv, int count);

#endif

/* The marks `sendat init` leaves for the fleet (ledgermark.h, claimmac.h) and what it says of
 * them: each shard's claims bucket recorded as init's, and when records began to carry MACs. */
#include <inttypes.h>
#include <stdio.h>

#include "claim.h"
#include "claimmac.h"
#include "init_marks.h"
#include "ledgermark.h"
#include "timeparse.h"

/* Says what a claims bucket made again lost (ledgermark.h): recorded_ns the one init recorded. */
static void
say_ledger_lost(struct sa_nats *n, int k, const char *stream, int64_t recorded_ns)
{
    jsStreamInfo *si = NULL;
    char was[40], stored[48] = "";

    sa_time_format(was, sizeof(was), recorded_ns / 1000000);
    if (js_GetStreamInfo(&si, n->js, stream, NULL, NULL) == NATS_OK)
        snprintf(stored, sizeof(stored), "%" PRIu64 " ", si->State.Msgs);
    jsStreamInfo_Destroy(si);
    fprintf(stderr,
            "init: the claims bucket of shard %d is not the one made at %s (it was deleted): the "
            "outcome of every send and cancel claimed in it is lost. `sendat status` shows none, "
            "an id used before may be booked again, and a task a consumer was sending when the "
            "bucket went may be sent again; the %stasks stored in %s are sent at their due "
            "times (cancels kept in the cancel bucket still hold)\n",
            k, was, stored, stream);
}

enum sa_code
init_record_ledger(struct sa_nats *n, int k, const char *stream, struct sa_err *err)
{
    int64_t made = 0, recorded = 0;
    uint64_t rev = 0, wrote;
    char key[32], text[24];
    enum sa_code rc;
    natsStatus s;

    if ((rc = sa_ledger_created(n->js, k, &made, err)) != SA_OK ||
        (rc = sa_ledger_recorded(n->meta, k, &recorded, &rev, err)) != SA_OK)
        return rc;
    if (made == recorded)
        return SA_OK;
    if (recorded)
        say_ledger_lost(n, k, stream, recorded);
    sa_layout_meta_key(key, sizeof(key), SA_LEDGER_META, k);
    snprintf(text, sizeof(text), "%" PRId64, made);
    s = rev ? kvStore_UpdateString(&wrote, n->meta, key, text, rev)
            : kvStore_CreateString(&wrote, n->meta, key, text);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, "record the claims bucket");
}

/* How many records the claims and cancel buckets hold (0 if a bucket does not answer). */
static uint64_t
records_held(struct sa_nats *n, int shards)
{
    char bucket[64], stream[80];
    uint64_t held = 0;

    for (int k = -1; k < shards; k++) {
        jsStreamInfo *si = NULL;

        if (k < 0)
            snprintf(bucket, sizeof(bucket), "%s", SA_CANCEL_BUCKET);
        else
            sa_layout_claims_bucket(bucket, sizeof(bucket), k);
        snprintf(stream, sizeof(stream), "KV_%s", bucket);
        if (js_GetStreamInfo(&si, n->js, stream, NULL, NULL) == NATS_OK)
            held += si->State.Msgs;
        jsStreamInfo_Destroy(si);
    }
    return held;
}

enum sa_code
init_mark_mac_since(struct sa_nats *n, int layout_existed, struct sa_err *err)
{
    uint64_t rev;
    kvEntry *e = NULL;
    natsStatus s = kvStore_CreateString(&rev, n->meta, SA_CLAIMMAC_SINCE_KEY,
                                        "claim and cancel records carry MACs from here on");

    if (s == NATS_OK && layout_existed && records_held(n, n->layout.shards) > 0)
        fprintf(stderr, "init: claim and cancel records stored until now carry no MAC: read as "
                        "an older version's (the consumers of this version send from now on)\n");
    if (s != NATS_OK && (s = kvStore_Get(&e, n->meta, SA_CLAIMMAC_SINCE_KEY)) == NATS_OK)
        kvEntry_Destroy(e); /* an earlier init's mark stays */
    return s == NATS_OK ? SA_OK
                        : sa_nats_fail(err, s, 0, "mark when claim records began to carry MACs");
}

/* The claims buckets init recorded, read and compared (ledgermark.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "layout.h"
#include "ledgermark.h"

enum sa_code
sa_ledger_created(jsCtx *js, int k, int64_t *ns, struct sa_err *err)
{
    char bucket[64], stream[80];
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s;

    sa_layout_claims_bucket(bucket, sizeof(bucket), k);
    snprintf(stream, sizeof(stream), "KV_%s", bucket);
    s = js_GetStreamInfo(&si, js, stream, NULL, &jerr);
    *ns = s == NATS_OK ? si->Created : 0;
    jsStreamInfo_Destroy(si);
    if (s == NATS_NOT_FOUND)
        return sa_fail(err, SA_ENOTFOUND, "the claims bucket %s is gone", bucket);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, jerr, "read the claims bucket's stream");
}

enum sa_code
sa_ledger_recorded(kvStore *meta, int k, int64_t *ns, uint64_t *rev, struct sa_err *err)
{
    char key[32];
    kvEntry *e = NULL;
    natsStatus s;

    sa_layout_meta_key(key, sizeof(key), SA_LEDGER_META, k);
    s = kvStore_Get(&e, meta, key);
    *ns = s == NATS_OK ? strtoll(kvEntry_ValueString(e), NULL, 10) : 0;
    *rev = s == NATS_OK ? kvEntry_Revision(e) : 0;
    kvEntry_Destroy(e);
    return s == NATS_OK || s == NATS_NOT_FOUND ? SA_OK
                                               : sa_nats_fail(err, s, 0, "read the ledger record");
}

enum sa_code
sa_ledger_check_shard(const struct sa_nats *n, int k, struct sa_err *err)
{
    int64_t made = 0, recorded = 0;
    uint64_t rev;
    enum sa_code rc;

    if ((rc = sa_ledger_created(n->js, k, &made, err)) != SA_OK ||
        (rc = sa_ledger_recorded(n->meta, k, &recorded, &rev, err)) != SA_OK)
        return rc;
    if (recorded == 0)
        return sa_fail(err, SA_ENOTFOUND,
                       "no record of the claims bucket of shard %d: run `sendat init` of "
                       "this version",
                       k);
    if (made != recorded)
        return sa_fail(err, SA_ENOTFOUND,
                       "the claims bucket of shard %d was made again since `sendat init` "
                       "recorded it: run `sendat init` (it says what was lost)",
                       k);
    return SA_OK;
}

enum sa_code
sa_ledger_check(const struct sa_nats *n, struct sa_err *err)
{
    for (int k = 0; k < n->layout.shards; k++) {
        enum sa_code rc = sa_ledger_check_shard(n, k, err);
        if (rc != SA_OK)
            return rc;
    }
    return SA_OK;
}

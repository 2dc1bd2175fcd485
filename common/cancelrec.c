/* Reading a cancel bucket key under what a keyless writer put over it (cancelrec.h). */
#include <string.h>

#include "cancelrec.h"
#include "claim.h"
#include "claimmac.h"
#include "natserr.h"

int
sa_cancelrec_is_lift(const char *value, size_t len)
{
    size_t n = strlen(SA_CANCELREC_LIFT);

    return value && len >= n && !memcmp(value, SA_CANCELREC_LIFT, n);
}

/* What one authentic entry decides: a cancel or pause (SA_OK, *at_ms) or a lift. */
static enum sa_code
decide(kvEntry *e, int64_t *at_ms, struct sa_err *err)
{
    if (sa_cancelrec_is_lift(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e)))
        return sa_fail(err, SA_ENOTFOUND, "%s was lifted", kvEntry_Key(e));
    *at_ms = kvEntry_Created(e) / 1000000;
    return SA_OK;
}

static int
authentic(kvEntry *e)
{
    return kvEntry_Operation(e) == kvOp_Put &&
           sa_cancelrec_check(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), kvEntry_Key(e),
                              kvEntry_Created(e) / 1000000, NULL) == SA_OK;
}

/* The newest authentic record in key's history, under markers and junk. */
static enum sa_code
under(kvStore *kv, const char *key, int64_t *at_ms, struct sa_err *err)
{
    kvEntryList l = {0};
    natsStatus s = kvStore_History(&l, kv, key, NULL); /* markers included */
    enum sa_code rc;
    int i;

    if (s == NATS_NOT_FOUND || (s == NATS_OK && l.Count == 0)) {
        kvEntryList_Destroy(&l);
        return sa_fail(err, SA_ENOTFOUND, "no cancel record for %s", key);
    }
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read the cancel history");
    for (i = l.Count - 1; i >= 0 && !authentic(l.Entries[i]); i--)
        ;
    if (i >= 0)
        rc = decide(l.Entries[i], at_ms, err);
    else if (sa_kv_history_full(kv, &l)) {
        *at_ms = kvEntry_Created(l.Entries[l.Count - 1]) / 1000000;
        rc = sa_fail(err, SA_EINVAL,
                     "junk fills the cancel history of %s: what it pushed out is unknown", key);
    } else {
        rc = sa_fail(err, SA_ECRYPTO, "the cancel records of %s are junk", key);
    }
    kvEntryList_Destroy(&l);
    return rc;
}

enum sa_code
sa_cancelrec_get(jsCtx *js, kvStore *kv, const char *key, int64_t *at_ms, struct sa_err *err)
{
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, kv, key);
    int ready = sa_claimmac_ready(), marker = 0, junk;
    enum sa_code rc;

    *at_ms = 0;
    if (s == NATS_NOT_FOUND && ready && (s = sa_kv_marked(js, kv, key, &marker)) == NATS_OK &&
        marker)
        return under(kv, key, at_ms, err);
    if (s == NATS_NOT_FOUND || (s == NATS_OK && !e))
        return sa_fail(err, SA_ENOTFOUND, "no cancel record for %s", key);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read the cancel map");
    /* without a key nothing can be checked: read what it says, as claims are (sa_claim_read) */
    junk = ready && !authentic(e);
    rc = junk ? SA_OK : decide(e, at_ms, err);
    kvEntry_Destroy(e);
    return junk ? under(kv, key, at_ms, err) : rc;
}

/* Reading a cancel bucket key under what a keyless writer put over it (cancelrec.h). */
#include <string.h>

#include "cancelrec.h"
#include "claim.h"
#include "claimmac.h"
#include "kvhist.h"
#include "natserr.h"

int
sa_cancelrec_is_lift(const char *value, size_t len)
{
    size_t n = strlen(SA_CANCELREC_LIFT);

    return value && len >= n && !memcmp(value, SA_CANCELREC_LIFT, n);
}

/* What one authentic entry decides: a cancel or pause (SA_OK, *at_ms) or a lift. */
static enum sa_code
decide(const struct sa_kvent *e, int64_t *at_ms, struct sa_err *err)
{
    if (sa_cancelrec_is_lift(e->value, (size_t)e->len))
        return sa_fail(err, SA_ENOTFOUND, "%s was lifted", e->key);
    *at_ms = e->created_ns / 1000000;
    return SA_OK;
}

static int
authentic(const struct sa_kvent *e)
{
    return e->op == kvOp_Put && sa_cancelrec_check(e->value, (size_t)e->len, e->key,
                                                   e->created_ns / 1000000, NULL) == SA_OK;
}

/* The newest authentic record in key's history (direct gets, kvhist.h), under markers and junk. */
static enum sa_code
under(jsCtx *js, kvStore *kv, const char *key, int64_t *at_ms, struct sa_err *err)
{
    struct sa_kvhist l;
    enum sa_code rc = sa_kvhist_read(js, kv, key, &l, err); /* markers included */
    int i;

    if (rc != SA_OK)
        return rc;
    if (!l.count) {
        sa_kvhist_free(&l);
        return sa_fail(err, SA_ENOTFOUND, "no cancel record for %s", key);
    }
    for (i = l.count - 1; i >= 0 && !authentic(&l.e[i]); i--)
        ;
    if (i >= 0)
        rc = decide(&l.e[i], at_ms, err);
    else if (sa_kvhist_full(kv, l.count)) {
        *at_ms = l.e[l.count - 1].created_ns / 1000000;
        rc = sa_fail(err, SA_EINVAL,
                     "junk fills the cancel history of %s: what it pushed out is unknown", key);
    } else {
        rc = sa_fail(err, SA_ECRYPTO, "the cancel records of %s are junk", key);
    }
    sa_kvhist_free(&l);
    return rc;
}

enum sa_code
sa_cancelrec_get(jsCtx *js, kvStore *kv, const char *key, int64_t *at_ms, struct sa_err *err)
{
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, kv, key);
    struct sa_kvent one;
    int ready = sa_claimmac_ready(), marker = 0, junk;
    enum sa_code rc;

    *at_ms = 0;
    if (s == NATS_NOT_FOUND && ready && (s = sa_kv_marked(js, kv, key, &marker)) == NATS_OK &&
        marker)
        return under(js, kv, key, at_ms, err);
    if (s == NATS_NOT_FOUND || (s == NATS_OK && !e))
        return sa_fail(err, SA_ENOTFOUND, "no cancel record for %s", key);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read the cancel map");
    /* without a key nothing can be checked: read what it says, as claims are (sa_claim_read) */
    sa_kvent_of(&one, e);
    junk = ready && !authentic(&one);
    rc = junk ? SA_OK : decide(&one, at_ms, err);
    kvEntry_Destroy(e);
    return junk ? under(js, kv, key, at_ms, err) : rc;
}

/* Claim records as JSON in the claims bucket. Create-if-absent and update-on-revision are the
 * only writes, so two writers can never both think they won (invariants 2 and 3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "claim.h"
#include "layout.h"
#include "natsconn.h"
#include "random.h"

static const char *state_names[] = {"none", "sending", "sent", "retrying", "cancelled", "dead"};

int64_t
sa_claim_memory_ms(int64_t ttl_ms)
{
    int64_t margin = ttl_ms / 10;

    if (ttl_ms <= 0)
        return INT64_MAX;
    return ttl_ms - (margin < SA_CLAIMS_MARGIN_MAX_MS ? margin : SA_CLAIMS_MARGIN_MAX_MS);
}

const char *
sa_claim_state_name(enum sa_claim_state s)
{
    return (unsigned)s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : "?";
}

int
sa_claim_encode(const struct sa_claim *c, char *out, size_t cap)
{
    json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:i, s:I, s:I, s:i, s:I, s:I, s:i, s:s}", "state",
                          sa_claim_state_name(c->state), "at", (json_int_t)c->at_ms, "consumer",
                          c->consumer, "instance", c->instance, "write", c->write_id, "attempt", c->attempt, "due", (json_int_t)c->due_ms,
                          "scheduled", (json_int_t)c->scheduled_ms, "moves", c->moves, "moved",
                          (json_int_t)c->moved_ms, "lateness_ms", (json_int_t)c->lateness_ms,
                          "http_status", c->http_status, "error", c->error);
    size_t n;

    if (!o)
        return -1;
    n = json_dumpb(o, out, cap, JSON_COMPACT);
    json_decref(o);
    if (n == 0 || n >= cap)
        return -1;
    out[n] = '\0';
    return (int)n;
}

static enum sa_claim_state
state_from(const char *name)
{
    for (size_t i = 1; i < sizeof(state_names) / sizeof(state_names[0]); i++)
        if (name && !strcmp(name, state_names[i]))
            return (enum sa_claim_state)i;
    return SA_CLAIM_NONE;
}

enum sa_code
sa_claim_decode(struct sa_claim *c, const char *json, size_t len, struct sa_err *err)
{
    json_error_t jerr;
    json_t *o = json_loadb(json, len, 0, &jerr);
    const char *state = NULL, *consumer = "", *error = "", *instance = "", *write_id = "";
    json_int_t at = 0, due = 0, sched = 0, moved = 0, late = 0;
    int attempt = 0, moves = 0, status = 0;

    memset(c, 0, sizeof(*c));
    if (!o)
        return sa_fail(err, SA_EINVAL, "claim record is not JSON: %s", jerr.text);
    if (json_unpack(o, "{s:s, s?I, s?s, s?s, s?s, s?i, s?I, s?I, s?i, s?I, s?I, s?i, s?s}", "state", &state,
                    "at", &at, "consumer", &consumer, "instance", &instance, "write", &write_id, "attempt", &attempt, "due", &due,
                    "scheduled", &sched, "moves", &moves, "moved", &moved, "lateness_ms", &late,
                    "http_status", &status, "error", &error) != 0) {
        json_decref(o);
        return sa_fail(err, SA_EINVAL, "claim record has no state");
    }
    c->state = state_from(state);
    c->at_ms = at;
    snprintf(c->consumer, sizeof(c->consumer), "%s", consumer);
    snprintf(c->instance, sizeof(c->instance), "%s", instance);
    snprintf(c->write_id, sizeof(c->write_id), "%s", write_id);
    c->attempt = attempt;
    c->due_ms = due;
    c->scheduled_ms = sched;
    c->moves = moves;
    c->moved_ms = moved;
    c->lateness_ms = late;
    c->http_status = status;
    snprintf(c->error, sizeof(c->error), "%s", error);
    json_decref(o);
    return c->state == SA_CLAIM_NONE ? sa_fail(err, SA_EINVAL, "claim state %s is unknown", state) : SA_OK;
}

void
sa_claim_stamp(struct sa_claim *c)
{
    unsigned char nonce[8];

    sa_random_buf(nonce, sizeof(nonce));
    sodium_bin2hex(c->write_id, sizeof(c->write_id), nonce, sizeof(nonce));
}

enum sa_code
sa_claim_message(natsMsg **out, const char *key, struct sa_claim *c, uint64_t last, struct sa_err *err)
{
    char buf[1024], subject[300], expect[24];
    int n;
    natsStatus s;

    *out = NULL;
    sa_claim_stamp(c);
    n = sa_claim_encode(c, buf, sizeof(buf));
    if (n < 0)
        return sa_fail(err, SA_EINVAL, "claim for %s does not encode", key);
    snprintf(subject, sizeof(subject), "$KV.%s.%s", SA_CLAIMS_BUCKET, key);
    snprintf(expect, sizeof(expect), "%llu", (unsigned long long)last);
    s = natsMsg_Create(out, subject, NULL, buf, n);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(*out, "Nats-Expected-Last-Subject-Sequence", expect);
    if (s != NATS_OK) {
        natsMsg_Destroy(*out);
        *out = NULL;
        return sa_nats_fail(err, s, 0, "build claim message");
    }
    return SA_OK;
}

static enum sa_code
write_claim(kvStore *kv, const char *key, const struct sa_claim *in, int create, uint64_t last,
            uint64_t *rev, struct sa_err *err)
{
    char buf[1024];
    struct sa_claim mine = *in, cur;
    int n;
    natsStatus s;

    sa_claim_stamp(&mine);
    n = sa_claim_encode(&mine, buf, sizeof(buf));
    if (n < 0)
        return sa_fail(err, SA_EINVAL, "claim for %s does not encode", key);
    s = create ? kvStore_Create(rev, kv, key, buf, n) : kvStore_Update(rev, kv, key, buf, n, last);
    if (s == NATS_OK)
        return SA_OK;
    /* A refused write and a lost answer look alike: read back to tell them apart. */
    if (sa_claim_get(kv, key, &cur, NULL) == SA_OK) {
        if (!strcmp(cur.write_id, mine.write_id)) {
            if (rev)
                *rev = cur.revision;
            return SA_OK; /* our own write went through */
        }
        if (create || cur.revision != last)
            return SA_EEXIST; /* someone else wrote first */
        /* still at the revision we expected: our update did not happen, say why */
    }
    return sa_nats_fail(err, s, 0, create ? "create claim" : "update claim");
}

enum sa_code
sa_claim_create(kvStore *kv, const char *key, const struct sa_claim *c, uint64_t *rev,
                struct sa_err *err)
{
    return write_claim(kv, key, c, 1, 0, rev, err);
}

enum sa_code
sa_claim_update(kvStore *kv, const char *key, const struct sa_claim *c, uint64_t last,
                uint64_t *rev, struct sa_err *err)
{
    return write_claim(kv, key, c, 0, last, rev, err);
}

static enum sa_code
from_entry(struct sa_claim *c, kvEntry *e, struct sa_err *err)
{
    enum sa_code rc;

    if (kvEntry_Operation(e) != kvOp_Put)
        return sa_fail(err, SA_ENOTFOUND, "claim %s was deleted", kvEntry_Key(e));
    rc = sa_claim_decode(c, kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), err);
    c->revision = kvEntry_Revision(e);
    return rc;
}

enum sa_code
sa_claim_get(kvStore *kv, const char *key, struct sa_claim *c, struct sa_err *err)
{
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, kv, key);
    enum sa_code rc;

    if (s == NATS_NOT_FOUND)
        return sa_fail(err, SA_ENOTFOUND, "no claim for %s", key);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read claim");
    rc = from_entry(c, e, err);
    kvEntry_Destroy(e);
    return rc;
}

enum sa_code
sa_claim_history(kvStore *kv, const char *key, struct sa_claim **list, size_t *n, struct sa_err *err)
{
    kvEntryList l = {0};
    natsStatus s = kvStore_History(&l, kv, key, NULL);
    enum sa_code rc = SA_OK;

    *list = NULL;
    *n = 0;
    if (s == NATS_NOT_FOUND)
        return SA_OK;
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read claim history");
    *list = calloc((size_t)l.Count + 1, sizeof(**list));
    if (!*list)
        rc = sa_fail(err, SA_ENOMEM, "no memory for a claim history");
    for (int i = 0; rc == SA_OK && i < l.Count; i++)
        if (from_entry(&(*list)[*n], l.Entries[i], NULL) == SA_OK)
            (*n)++;
    kvEntryList_Destroy(&l);
    return rc;
}

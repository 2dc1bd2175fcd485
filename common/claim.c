/* Claim records as JSON in the claims bucket. Create-if-absent and update-on-revision are the
 * only writes, so two writers can never both think they won (invariants 2 and 3). The JSON
 * itself is claim_codec.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "claim.h"
#include "claimmac.h"
#include "kvhist.h"
#include "layout.h"
#include "natsconn.h"
#include "random.h"

int64_t
sa_claim_memory_ms(int64_t ttl_ms)
{
    int64_t margin = ttl_ms / 10;

    if (ttl_ms <= 0)
        return INT64_MAX;
    return ttl_ms - (margin < SA_CLAIMS_MARGIN_MAX_MS ? margin : SA_CLAIMS_MARGIN_MAX_MS);
}

int
sa_cancel_applies(int64_t cancel_ms, int64_t booked_ms, int64_t ttl_ms)
{
    return ttl_ms <= 0 || booked_ms < cancel_ms + ttl_ms / 2;
}

/* The MAC member closing a stored record: `,"mac":"<MAC text, claimmac.h>"}`. */
#define MAC_OPEN ",\"mac\":\""
#define MAC_OPEN_LEN (sizeof(MAC_OPEN) - 1)
#define JSON_MAX 1024 /* a record's JSON without its MAC member, as before there was one */
#define RECORD_MAX (JSON_MAX + MAC_OPEN_LEN + SA_CLAIMMAC_MAX + 2)

/* Encodes c for key with its MAC into out; *len its length. */
static enum sa_code
encode_signed(const struct sa_claim *c, const char *key, char *out, size_t cap, int *len,
              struct sa_err *err)
{
    char mac[SA_CLAIMMAC_MAX + 1];
    int n = cap >= RECORD_MAX ? sa_claim_encode(c, out, JSON_MAX) : -1;
    enum sa_code rc;

    if (n < 0)
        return sa_fail(err, SA_EINVAL, "claim for %s does not encode", key);
    if ((rc = sa_claimmac_make(mac, SA_CLAIMMAC_CLAIM, key, out, (size_t)n, err)) != SA_OK)
        return rc;
    n--; /* over the closing brace */
    *len = n + snprintf(out + n, cap - (size_t)n, MAC_OPEN "%s\"}", mac);
    return SA_OK;
}

/* Where the MAC text sits in a stored record (*mac_len its length), or NULL if the record does
 * not end with a MAC member of one of the lengths claimmac.h makes. */
static const char *
mac_of(const char *data, size_t len, size_t *mac_len)
{
    for (size_t k = SA_CLAIMMAC_KEYS; k >= 1; k--) {
        size_t m = k * (SA_CLAIMMAC_LEN + 1) - 1;

        if (len > MAC_OPEN_LEN + m + 2 &&
            !memcmp(data + len - 2 - m - MAC_OPEN_LEN, MAC_OPEN, MAC_OPEN_LEN) &&
            !memcmp(data + len - 2, "\"}", 2)) {
            *mac_len = m;
            return data + len - 2 - m;
        }
    }
    return NULL;
}

enum sa_code
sa_claim_read(struct sa_claim *c, const char *key, const char *data, size_t len, int64_t stored_ms,
              struct sa_err *err)
{
    size_t mac_len = 0;
    const char *mac = data ? mac_of(data, len, &mac_len) : NULL;
    char body[JSON_MAX];
    size_t body_len = mac ? (size_t)(mac - data) - MAC_OPEN_LEN : 0;
    struct sa_err why = {0};
    enum sa_code rc;

    memset(c, 0, sizeof(*c));
    if (mac && body_len + 1 <= sizeof(body)) { /* the record without its MAC member */
        memcpy(body, data, body_len);
        body[body_len++] = '}';
    } else if (mac) {
        mac = NULL; /* longer than any record we write */
    }
    if (!sa_claimmac_ready()) { /* cannot check: read what it says, marked so */
        rc = mac ? sa_claim_decode(c, body, body_len, err)
                 : sa_claim_decode(c, data ? data : "", data ? len : 0, err);
        c->unverified = 1;
        return rc;
    }
    if (!mac && data && sa_claimmac_legacy(stored_ms))
        return sa_claim_decode(c, data, len, err); /* an older version's, before MACs */
    if (!mac)
        sa_fail(&why, SA_ECRYPTO, "claim record of %s carries no MAC", key);
    else
        (void)!sa_claimmac_check(mac, mac_len, SA_CLAIMMAC_CLAIM, key, body, body_len, &why);
    if (why.code != SA_OK) {
        memset(c, 0, sizeof(*c));
        c->state = SA_CLAIM_JUNK;
        snprintf(c->error, sizeof(c->error), "%.190s", why.msg);
        return sa_fail(err, SA_ECRYPTO, "%s", why.msg);
    }
    return sa_claim_decode(c, body, body_len, err);
}

void
sa_claim_stamp(struct sa_claim *c)
{
    unsigned char nonce[8];

    sa_random_buf(nonce, sizeof(nonce));
    sodium_bin2hex(c->write_id, sizeof(c->write_id), nonce, sizeof(nonce));
}

enum sa_code
sa_claim_message(natsMsg **out, const char *bucket, const char *key, struct sa_claim *c,
                 uint64_t last, struct sa_err *err)
{
    char buf[RECORD_MAX], subject[300], expect[24];
    int n = 0;
    natsStatus s;

    *out = NULL;
    if (!c->write_id[0])
        sa_claim_stamp(c);
    enum sa_code rc = encode_signed(c, key, buf, sizeof(buf), &n, err);
    if (rc != SA_OK)
        return rc;
    snprintf(subject, sizeof(subject), "$KV.%s.%s", bucket, key);
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
    char buf[RECORD_MAX];
    struct sa_claim mine = *in, cur;
    int n = 0;
    natsStatus s;

    if (!mine.write_id[0])
        sa_claim_stamp(&mine);
    enum sa_code rc = encode_signed(&mine, key, buf, sizeof(buf), &n, err);
    if (rc != SA_OK)
        return rc;
    s = create ? kvStore_Create(rev, kv, key, buf, n) : kvStore_Update(rev, kv, key, buf, n, last);
    if (s == NATS_OK)
        return SA_OK;
    /* A refused write and a lost answer look alike: read back to tell them apart. A record
     * that does not decode or is junk is not ours (ours are neither): someone else wrote it. */
    enum sa_code got = sa_claim_get(kv, key, &cur, NULL);
    if (got == SA_OK || got == SA_EINVAL || got == SA_ECRYPTO) {
        if (got == SA_OK && !strcmp(cur.write_id, mine.write_id)) {
            if (rev)
                *rev = cur.revision;
            return SA_OK; /* our own write went through */
        }
        if (create || cur.revision != last) /* someone else wrote first */
            return sa_fail(err, SA_EEXIST, "claim %s: %s wrote first", key, cur.consumer);
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
from_entry(struct sa_claim *c, const struct sa_kvent *e, struct sa_err *err)
{
    enum sa_code rc;

    if (e->op != kvOp_Put)
        return sa_fail(err, SA_ENOTFOUND, "claim %s was deleted", e->key);
    rc = sa_claim_read(c, e->key, e->value, (size_t)e->len, e->created_ns / 1000000, err);
    if (rc == SA_ECRYPTO) /* junk says nothing true: when the server stored it, for status */
        c->at_ms = e->created_ns / 1000000;
    c->revision = e->revision;
    return rc;
}

enum sa_code
sa_claim_get(kvStore *kv, const char *key, struct sa_claim *c, struct sa_err *err)
{
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, kv, key);
    struct sa_kvent one;
    enum sa_code rc;

    if (s == NATS_NOT_FOUND)
        return sa_fail(err, SA_ENOTFOUND, "no claim for %s", key);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read claim");
    sa_kvent_of(&one, e);
    rc = from_entry(c, &one, err);
    kvEntry_Destroy(e);
    return rc;
}

/* Whether c is a record of another booking than the one made at booked (0: any). */
static int
foreign(const struct sa_claim *c, int64_t booked)
{
    return booked && c->booked_ms && c->booked_ms != booked;
}

/* What an entry of a key's history is to a reader of one booking. */
enum kind {
    K_MARKER,  /* DEL or PURGE */
    K_JUNK,    /* the key ring does not authenticate it */
    K_FOREIGN, /* authentic, of another booking */
    K_BAD,     /* authentic, does not decode */
    K_REPLAY,  /* authentic, of the booking, put back by a client (replayed) */
    K_RECORD,  /* authentic, of the booking, live */
};

struct replay_rules {
    sa_claim_stale_fn stale;
    void *arg;
};

static int
final_state(enum sa_claim_state s)
{
    return s == SA_CLAIM_SENT || s == SA_CLAIM_CANCELLED || s == SA_CLAIM_SKIPPED ||
           s == SA_CLAIM_DEAD;
}

/* Whether r[i], an authentic record of the booking, was put back by a client (replayed), by
 * what lies under it (k[] below i already classified):
 * - a record under it carries its write id: every write of sendat expects the key's last
 *   revision (none for a create), so one record never lands twice by sendat's hand;
 * - it says "sending" or "retrying" and the newest live record under it is final (sent,
 *   cancelled, skipped, dead): sendat takes over only "sending" and "retrying" claims, and the
 *   one write over a final record is `sendat dlq replay`'s reset (SA_CLAIM_BY_DLQ_REPLAY);
 * - the reader's own rule says so (ru->stale: the consumer's, by the signed time). */
static int
replayed(const struct sa_claim *r, const enum kind *k, int i, const struct replay_rules *ru)
{
    if (ru->stale && ru->stale(&r[i], ru->arg))
        return 1;
    for (int j = 0; r[i].write_id[0] && j < i; j++)
        if ((k[j] == K_RECORD || k[j] == K_REPLAY) && !strcmp(r[j].write_id, r[i].write_id))
            return 1;
    if ((r[i].state != SA_CLAIM_SENDING && r[i].state != SA_CLAIM_RETRYING) ||
        (!r[i].instance[0] && !strcmp(r[i].consumer, SA_CLAIM_BY_DLQ_REPLAY)))
        return 0;
    for (int j = i - 1; j >= 0; j--)
        if (k[j] == K_RECORD)
            return final_state(r[j].state);
    return 0;
}

/* Sorts every entry of l into r[] and k[], oldest first; with ru, replays too. */
static void
classify(const struct sa_kvhist *l, int64_t booked, const struct replay_rules *ru,
         struct sa_claim *r, enum kind *k)
{
    for (int i = 0; i < l->count; i++) {
        enum sa_code rc = SA_OK;

        if (l->e[i].op != kvOp_Put)
            k[i] = K_MARKER;
        else if ((rc = from_entry(&r[i], &l->e[i], NULL)) == SA_ECRYPTO)
            k[i] = K_JUNK;
        else if (rc != SA_OK)
            k[i] = K_BAD;
        else if (foreign(&r[i], booked))
            k[i] = K_FOREIGN;
        else
            k[i] = ru && replayed(r, k, i, ru) ? K_REPLAY : K_RECORD;
    }
}

/* The newest live record of the booking in l (markers, junk, records of another booking and,
 * with ru, replays passed over, junk and another booking's counted as junk, replays apart),
 * decoded into c with the revision of l's last entry. None: state SA_CLAIM_NONE, unless junk or
 * replays filled the whole history the bucket keeps (SA_EINVAL: what they pushed out may have
 * been a send's record); likewise replays over a "sending" or "retrying" in a full history. */
static enum sa_code
beneath(kvStore *kv, struct sa_claim *c, const struct sa_kvhist *l, int64_t booked,
        const struct replay_rules *ru, struct sa_err *err)
{
    uint64_t last = l->e[l->count - 1].revision;
    struct sa_claim *r = calloc((size_t)l->count, sizeof(*r));
    enum kind *k = calloc((size_t)l->count, sizeof(*k));
    enum sa_claim_state replay_state = SA_CLAIM_NONE;
    int junk = 0, replays = 0, i;
    enum sa_code rc = SA_OK;
    int64_t other = 0;

    memset(c, 0, sizeof(*c));
    if (!r || !k) {
        free(r);
        free(k);
        return sa_fail(err, SA_ENOMEM, "no memory for a claim history");
    }
    classify(l, booked, ru, r, k);
    for (i = l->count - 1; i >= 0 && k[i] != K_RECORD && k[i] != K_BAD; i--) {
        if (k[i] == K_FOREIGN && !other)
            other = r[i].at_ms;
        if (k[i] == K_REPLAY && !replays++)
            replay_state = r[i].state;
        junk += k[i] == K_JUNK || k[i] == K_FOREIGN;
    }
    if (i >= 0 && k[i] == K_RECORD)
        *c = r[i];
    if (i >= 0 && k[i] == K_BAD)
        rc = sa_fail(err, SA_EINVAL, "claim record of %s under %d junk does not decode",
                     l->e[0].key, junk + replays);
    else if ((c->state == SA_CLAIM_NONE ||
              (replays && (c->state == SA_CLAIM_SENDING || c->state == SA_CLAIM_RETRYING))) &&
             junk + replays && sa_kvhist_full(kv, l->count))
        rc = sa_fail(err, SA_EINVAL,
                     "%s fills the claim history of %s: what it pushed out is unknown",
                     replays ? "replayed records" : "junk", l->e[0].key);
    free(r);
    free(k);
    c->revision = last;
    c->junk_above = junk;
    c->replays_above = replays;
    c->replay_state = replay_state;
    c->other_booking_at_ms = other;
    return rc;
}

/* beneath over key's whole history (markers included), read by direct gets (kvhist.h). */
static enum sa_code
read_history(jsCtx *js, kvStore *kv, const char *key, int64_t booked, const struct replay_rules *ru,
             struct sa_claim *c, struct sa_err *err)
{
    struct sa_kvhist l;
    enum sa_code rc = sa_kvhist_read(js, kv, key, &l, err);

    if (rc != SA_OK)
        return rc;
    if (!l.count) {
        sa_kvhist_free(&l);
        return sa_fail(err, SA_ENOTFOUND, "no claim for %s", key);
    }
    rc = beneath(kv, c, &l, booked, ru, err); /* one written since is the last: read it */
    sa_kvhist_free(&l);
    return rc;
}

natsStatus
sa_kv_marked(jsCtx *js, kvStore *kv, const char *key, int *yes)
{
    char stream[160], subject[400];
    const char *op = NULL;
    jsDirectGetMsgOptions o;
    natsMsg *m = NULL;
    natsStatus s;

    *yes = 0;
    snprintf(stream, sizeof(stream), "KV_%s", kvStore_Bucket(kv));
    snprintf(subject, sizeof(subject), "$KV.%s.%s", kvStore_Bucket(kv), key);
    jsDirectGetMsgOptions_Init(&o);
    o.LastBySubject = subject;
    s = js_DirectGetMsg(&m, js, stream, NULL, &o);
    if (s == NATS_OK && natsMsgHeader_Get(m, "KV-Operation", &op) == NATS_OK && op &&
        (!strcmp(op, "DEL") || !strcmp(op, "PURGE")))
        *yes = 1;
    natsMsg_Destroy(m);
    return s == NATS_NOT_FOUND ? NATS_OK : s;
}

enum sa_code
sa_claim_get_for(jsCtx *js, kvStore *kv, const char *key, int64_t booked_ms, struct sa_claim *c,
                 struct sa_err *err)
{
    enum sa_code rc = sa_claim_get(kv, key, c, err);
    natsStatus s = NATS_OK;
    int marker = 0;

    if (rc != SA_ENOTFOUND && rc != SA_ECRYPTO && !(rc == SA_OK && foreign(c, booked_ms)))
        return rc;
    if (rc == SA_ENOTFOUND && ((s = sa_kv_marked(js, kv, key, &marker)) != NATS_OK || !marker))
        return s == NATS_OK ? rc : sa_nats_fail(err, s, 0, "read claim"); /* commonly nothing */
    sa_err_clear(err); /* sa_fail keeps the first failure: say what the history says */
    return read_history(js, kv, key, booked_ms, NULL, c, err);
}

enum sa_code
sa_claim_get_live(jsCtx *js, kvStore *kv, const char *key, int64_t booked_ms,
                  sa_claim_stale_fn stale, void *arg, struct sa_claim *c, struct sa_err *err)
{
    struct replay_rules ru = {stale, arg};

    return read_history(js, kv, key, booked_ms, &ru, c, err);
}

enum sa_code
sa_claim_get_under(jsCtx *js, kvStore *kv, const char *key, struct sa_claim *c, struct sa_err *err)
{
    return sa_claim_get_for(js, kv, key, 0, c, err);
}

enum sa_code
sa_claim_history(jsCtx *js, kvStore *kv, const char *key, struct sa_claim **list, size_t *n,
                 struct sa_err *err)
{
    struct sa_kvhist l;
    enum sa_code rc = sa_kvhist_read(js, kv, key, &l, err);

    *list = NULL;
    *n = 0;
    if (rc != SA_OK || !l.count) {
        sa_kvhist_free(&l);
        return rc;
    }
    *list = calloc((size_t)l.count + 1, sizeof(**list));
    if (!*list)
        rc = sa_fail(err, SA_ENOMEM, "no memory for a claim history");
    for (int i = 0; rc == SA_OK && i < l.count; i++) {
        enum sa_code got = from_entry(&(*list)[*n], &l.e[i], NULL);

        if (got == SA_OK || got == SA_ECRYPTO) /* junk shown as junk */
            (*n)++;
    }
    sa_kvhist_free(&l);
    return rc;
}

/* The claim record: one KV entry per task (and occurrence) in the claims bucket, created only
 * if absent. Cancel and send race for it and exactly one wins (invariants 2 and 3); its
 * history doubles as the task's status and lateness record. */
#ifndef SA_CLAIM_H
#define SA_CLAIM_H

#include <stddef.h>
#include <stdint.h>

#include <nats/nats.h>

#include "sa_err.h"

enum sa_claim_state {
    SA_CLAIM_NONE = 0,
    SA_CLAIM_SENDING,   /* a consumer holds it and is sending now */
    SA_CLAIM_SENT,      /* the receiver accepted it */
    SA_CLAIM_RETRYING,  /* an attempt failed; the next one is in the wheel */
    SA_CLAIM_CANCELLED, /* cancel won: never sent */
    /* dead-lettered (permanent error, last attempt, expired, unknown outcome) */
    SA_CLAIM_DEAD,
    SA_CLAIM_SKIPPED, /* not sent on purpose: an occurrence due while its series was paused */
    /* read only, never written: a record that fails the key ring's MAC (claimmac.h), whatever
     * it claims; it stops no send and is no outcome */
    SA_CLAIM_JUNK,
};

/* The writer `sendat dlq replay` names on its reset ("retrying", attempt 0, no instance): the
 * one write sendat makes over a final record. */
#define SA_CLAIM_BY_DLQ_REPLAY "sendat dlq replay"

/* The error text of a "skipped" claim: its series was paused when it fell due. */
#define SA_CLAIM_PAUSED "paused"

#define SA_CLAIM_WRITE_ID_LEN 24 /* 16 hex digits and the NUL, with room */

struct sa_claim {
    enum sa_claim_state state;
    int64_t at_ms;
    char consumer[64];
    char instance[24]; /* the writing process (a consumer restarted under its name is another) */
    int attempt;
    int64_t due_ms;
    int64_t scheduled_ms;
    /* the booking it is about: the task's sealed creation time (0: the writer did not know
     * it, as in records written before it was kept); an id booked again after the claims TTL
     * is another booking, and a record of the earlier one decides nothing for it */
    int64_t booked_ms;
    int moves;
    int64_t moved_ms;
    int64_t lateness_ms;          /* dispatch: the first attempt's start minus the due time */
    int64_t delivery_lateness_ms; /* the receiver's acceptance minus the due time ("sent") */
    /* the task's channel (enum sa_channel, task.h), so status names the reply code an HTTP
     * status or an SMTP one; 0 in a record written before claims recorded it */
    int channel;
    int http_status; /* the HTTP status or, for email, the SMTP reply code */
    char error[200];
    char write_id[SA_CLAIM_WRITE_ID_LEN]; /* tells our own write from another's */
    uint64_t revision;                    /* filled by get/history, not stored */
    int junk_above; /* sa_claim_get_under: junk records lying over this one (not stored) */
    /* sa_claim_get_for: the at_ms of the newest authentic record of another booking passed
     * over (0: none; not stored) */
    int64_t other_booking_at_ms;
    /* sa_claim_get_live: the replayed records passed over above this one, and the newest one's
     * state (not stored) */
    int replays_above;
    enum sa_claim_state replay_state;
    int unverified; /* read by a process without a key: the MAC was not checked (not stored) */
};

/* The ledger forgets: each claim record goes the claims bucket's TTL (`sendat init
 * --claims-ttl`, 7d by default, 0 for ever) after its last write. init refuses a TTL below
 * SA_CLAIMS_TTL_MIN_MS: producers accept due times 10 minutes past, and a task may come late
 * by a failover or a provider limit, all well inside what the ledger must remember. */
#define SA_CLAIMS_TTL_MIN_MS (3600 * 1000LL)
#define SA_CLAIMS_MARGIN_MAX_MS (3600 * 1000LL)

/* How old a task's due time may be while the ledger still holds its claim, had the task been
 * claimed: ttl_ms less a margin of a tenth of the TTL, at most SA_CLAIMS_MARGIN_MAX_MS. A claim
 * lives ttl_ms after its last write, and that write comes before the due time by at most the
 * claim lead and a quarter of it (claims are taken in groups; SENDAT_CLAIM_LEAD_MS is at most
 * 1 s), or for a retry by its backoff (its "retrying" record): the margin covers those, clocks
 * apart and a write on its way, a backoff only while it is shorter than the margin.
 * INT64_MAX for a TTL of 0 (claims kept for ever). */
int64_t sa_claim_memory_ms(int64_t ttl_ms);

/* Whether a cancel record written at cancel_ms (the server's clock) applies to a task sealed at
 * booked_ms (its created_ms). Producers refuse an id while its cancelled claim lives (the
 * claims TTL from the cancel), so a task booked after the id was freed is sealed at least ttl_ms
 * after the record, one the cancel meant before it: the middle tells them apart with half the
 * TTL (at least 30 min) for clocks apart. A TTL of 0 (for ever): always. */
int sa_cancel_applies(int64_t cancel_ms, int64_t booked_ms, int64_t ttl_ms);

const char *sa_claim_state_name(enum sa_claim_state s);

/* The state as status shows it: the name, or "skipped (paused)" for an occurrence skipped
 * because its series was paused. */
const char *sa_claim_state_text(const struct sa_claim *c);

/* JSON text of a claim (no revision, no MAC). Returns the length, -1 if cap is short. */
int sa_claim_encode(const struct sa_claim *c, char *out, size_t cap);
enum sa_code sa_claim_decode(struct sa_claim *c, const char *json, size_t len,
                             struct sa_err *err) SA_MUST_CHECK;

/* A claim record as stored under key (at stored_ms by the server's clock; 0 if unknown): its
 * JSON carries a last member "mac" (claimmac.h) made with the key ring over the rest of the
 * record and key, or none if an older version stored it before records carried one
 * (sa_claimmac_legacy: read as authentic). SA_OK: c is the record. SA_ECRYPTO:
 * junk (no MAC, a wrong one, or one under a key the ring lacks), c->state SA_CLAIM_JUNK and
 * c->error why. SA_EINVAL: authentic but not a claim this version reads. A process without a
 * key (claimmac.h) cannot check: c is the record as it says, c->unverified set. Every read
 * below and claimscan go through it; every write (create, update, message) adds the MAC, and
 * fails with SA_ECRYPTO in a process without a key. */
enum sa_code sa_claim_read(struct sa_claim *c, const char *key, const char *data, size_t len,
                           int64_t stored_ms, struct sa_err *err) SA_MUST_CHECK;

/* Creates the claim only if the key holds nothing. SA_EEXIST if it does (read it with
 * sa_claim_get), SA_ERETRY/SA_ENATS if the broker did not answer. Each write carries a random
 * write id, so a lost answer is told from a refusal by reading back (not by comparing fields
 * two copies of one task in one process could share): a fresh one unless c has one already
 * (a retry of a write whose answer was lost keeps its id, so the write is known as ours if it
 * landed after all). The same goes for sa_claim_update and sa_claim_message. */
enum sa_code sa_claim_create(kvStore *kv, const char *key, const struct sa_claim *c, uint64_t *rev,
                             struct sa_err *err) SA_MUST_CHECK;

/* Gives c a fresh random write id. */
void sa_claim_stamp(struct sa_claim *c);

/* A claim write to publish asynchronously: c stamped with a write id (fresh unless it has
 * one), on bucket's subject for key, expecting the key's last revision to be last (0: create).
 * The PubAck's sequence is the new revision; "wrong last sequence" means someone wrote first. */
enum sa_code sa_claim_message(natsMsg **out, const char *bucket, const char *key,
                              struct sa_claim *c, uint64_t last, struct sa_err *err) SA_MUST_CHECK;

/* Replaces the claim if its revision is still last; SA_EEXIST if someone else wrote first. */
enum sa_code sa_claim_update(kvStore *kv, const char *key, const struct sa_claim *c, uint64_t last,
                             uint64_t *rev, struct sa_err *err) SA_MUST_CHECK;

/* Reads the current claim; SA_ENOTFOUND if there is none, SA_ECRYPTO for junk (sa_claim_read). */
enum sa_code sa_claim_get(kvStore *kv, const char *key, struct sa_claim *c,
                          struct sa_err *err) SA_MUST_CHECK;

/* Like sa_claim_get, but reads past DEL or PURGE markers and junk records (writes any client
 * allowed to write the bucket can make, with or without the key; sendat itself never deletes a
 * claim): c is then the newest authentic record the key's history still holds under them
 * (state SA_CLAIM_NONE if none, as after a PURGE), with revision the last entry's own, the one
 * an update must expect, and junk_above the junk records passed. SA_EINVAL if that record does
 * not decode, or if junk fills the whole history the bucket keeps (what it pushed out is
 * unknown; revision filled), SA_ENOTFOUND if the key holds nothing at all. Only a marker or
 * junk costs more than sa_claim_get: a direct get, then the history (direct gets, kvhist.h). */
enum sa_code sa_claim_get_under(jsCtx *js, kvStore *kv, const char *key, struct sa_claim *c,
                                struct sa_err *err) SA_MUST_CHECK;

/* sa_claim_get_under for the booking made at booked_ms (a task's sealed creation time; 0: any):
 * a record naming another booking (an authentic record of an earlier booking of the same id,
 * replayed by a client allowed to write the bucket after the claims TTL freed the id) is passed
 * over like junk and counted in junk_above; the newest one's at_ms goes to other_booking_at_ms
 * (a record written within the claims TTL is no replay: that booking is live, see claims.c). */
enum sa_code sa_claim_get_for(jsCtx *js, kvStore *kv, const char *key, int64_t booked_ms,
                              struct sa_claim *c, struct sa_err *err) SA_MUST_CHECK;

/* A reader's own rule for an authentic record of the booking: whether it was put back by a
 * client (a replay) by what it says alone (the consumer's rules by its signed time, claims.c). */
typedef int (*sa_claim_stale_fn)(const struct sa_claim *rec, void *arg);

/* sa_claim_get_for over the key's whole history, always read (a direct get per entry and one
 * more, kvhist.h: dearer), that
 * also passes over replays: authentic records of the booking a client allowed to write the
 * bucket put back, which need no key. A record is one if a record under it carries its write id
 * (sendat's writes expect the key's last revision, so none lands twice), if it says "sending" or
 * "retrying" over a final record (sent, cancelled, skipped, dead: sendat writes over one only as
 * `sendat dlq replay`), or if stale(rec, arg) says so. c is the newest record that is none of
 * these, replays_above and replay_state say what was passed over. SA_EINVAL as
 * sa_claim_get_for, and also if replays lie over a "sending" or "retrying" in a history as long
 * as the bucket keeps (what they pushed out may have been a final record). */
enum sa_code sa_claim_get_live(jsCtx *js, kvStore *kv, const char *key, int64_t booked_ms,
                               sa_claim_stale_fn stale, void *arg, struct sa_claim *c,
                               struct sa_err *err) SA_MUST_CHECK;

/* The revisions the bucket still keeps (its history, `sendat init` makes it 32), oldest first,
 * leaving out deletes and authentic records that do not decode; junk is kept, as state
 * SA_CLAIM_JUNK with the reason in error. *list is
 * malloc'd, possibly with *n 0; NULL and 0 when the key was never written. SA_ENOMEM, or the
 * broker's failure. */
enum sa_code sa_claim_history(jsCtx *js, kvStore *kv, const char *key, struct sa_claim **list,
                              size_t *n, struct sa_err *err) SA_MUST_CHECK;

/* Whether key's last entry is a DEL or PURGE marker, into *yes: one direct get of the last
 * message on its subject (kvStore_Get says "not found" alike for a marker and for nothing). */
natsStatus sa_kv_marked(jsCtx *js, kvStore *kv, const char *key, int *yes);

#endif

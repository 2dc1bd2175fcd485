/* Claim and cancel records authenticated with the key ring (issue 37.1). Anyone allowed to
 * write the claims or cancel bucket can put bytes there; only a holder of the key can make a
 * record that passes sa_claimmac_check, and only such a record may stop a send or be shown as
 * its outcome. The MAC is BLAKE2b-256 (crypto_generichash) keyed with a subkey derived from
 * each ring key (crypto_kdf, context "sa_claim", id 1), never the sealing key itself, over the
 * record's kind, its KV key and its bytes: a record cannot be moved to another id or from the
 * claims bucket to the cancel bucket. It is written as "<kid hex>.<tag hex>", once for each
 * of the ring's two oldest keys (one if the ring holds one), space-separated, and a record
 * verifies if any of them does under a key of the reader's ring. So any two processes whose
 * rings share a key read each other's records, all through a rotation: while the new key
 * reaches the fleet (old and new in some rings, only old in others) and while the old one is
 * retired (old and new, or only new). Retire one key at a time; a ring of more keys MACs with
 * its two oldest.
 *
 * The process holds one set of subkeys, made from its ring at start and again on each reload
 * (the claim functions of claim.h take no ring: every caller of them would change). */
#ifndef SA_CLAIMMAC_H
#define SA_CLAIMMAC_H

#include <stddef.h>
#include <stdint.h>

#include <nats/nats.h>

#include "sa_err.h"
#include "keyring.h"

#define SA_CLAIMMAC_TAG 32
/* one item: "<8 hex>.<64 hex>" */
#define SA_CLAIMMAC_LEN (2 * SA_KID_BYTES + 1 + 2 * SA_CLAIMMAC_TAG)
/* keys a record is MACed with, and its longest MAC text (the items space-separated) */
#define SA_CLAIMMAC_KEYS 2
#define SA_CLAIMMAC_MAX (SA_CLAIMMAC_KEYS * (SA_CLAIMMAC_LEN + 1) - 1)

#define SA_CLAIMMAC_CLAIM "claim"
#define SA_CLAIMMAC_CANCEL "cancel"

/* Derives the MAC subkeys of every key in ring and makes them the process's (replacing those
 * of a ring used before). Safe while other threads make or check MACs. */
enum sa_code sa_claimmac_use(const struct sa_keyring *ring, struct sa_err *err) SA_MUST_CHECK;

/* Wipes and frees the subkeys (at exit). */
void sa_claimmac_forget(void);

/* 1 once sa_claimmac_use gave the process keys. */
int sa_claimmac_ready(void);

/* Records from before the MAC (issue 37.1). A layout made or upgraded by `sendat init` of a
 * version with MACs holds a meta record (SA_CLAIMMAC_SINCE_KEY) whose server time is when
 * records began to carry one: a record the server stored before that, without a MAC, was
 * written by an older version, which trusted every record, and reads as authentic. A keyless
 * writer cannot store one now: the server stamps the time. sa_claimmac_trust_before sets that
 * time for the process (0, the default: no record without a MAC is trusted). */
#define SA_CLAIMMAC_SINCE_KEY "claim_mac"
void sa_claimmac_trust_before(int64_t since_ms);

/* 1 if a record the server stored at stored_ms (0: unknown) without a MAC is an older
 * version's, trusted (see sa_claimmac_trust_before). */
int sa_claimmac_legacy(int64_t stored_ms);

/* Writes the MAC text of (kind, key, body) into out (at least SA_CLAIMMAC_MAX + 1 bytes,
 * NUL-terminated). SA_ECRYPTO when the process has no key. */
enum sa_code sa_claimmac_make(char *out, const char *kind, const char *key, const char *body,
                              size_t len, struct sa_err *err) SA_MUST_CHECK;

/* SA_OK if mac (mac_len bytes) holds a MAC of (kind, key, body) under a key of the ring;
 * SA_ECRYPTO (and why) if not or if the process has no key. */
enum sa_code sa_claimmac_check(const char *mac, size_t mac_len, const char *kind, const char *key,
                               const char *body, size_t len, struct sa_err *err) SA_MUST_CHECK;

/* A cancel bucket value for key: text (a time, no space in it; a lift: SA_CANCELREC_LIFT and a
 * time, cancelrec.h), a space and its MAC text.
 * Returns the length, -1 if cap is short or the process has no key. */
int sa_cancelrec_make(char *out, size_t cap, const char *key, const char *text);

/* SA_OK if value (a cancel bucket entry of key, stored at stored_ms by the server's clock) was
 * made by sa_cancelrec_make with a key of the ring, or is an older version's (a time without a
 * MAC, stored before records carried one: sa_claimmac_legacy); SA_ECRYPTO (and why) for
 * anything else: a keyless writer's record cancels nothing. */
enum sa_code sa_cancelrec_check(const char *value, size_t len, const char *key, int64_t stored_ms,
                                struct sa_err *err) SA_MUST_CHECK;

#endif

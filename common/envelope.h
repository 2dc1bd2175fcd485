/* The sealed envelope every task travels in: brokers and their operators never see
 * recipients or bodies. Layout: version byte 0x01, kid (4 bytes), nonce (24 bytes), then the
 * XChaCha20-Poly1305-IETF ciphertext and its 16-byte tag. The associated data is the whole
 * 29-byte header followed by the task id's bytes (strlen(id), no NUL): AD = header || id, so
 * neither the version, the kid, nor the id can be swapped without the envelope failing to open.
 * Known answers: tests/vectors/envelope.exp. */
#ifndef SA_ENVELOPE_H
#define SA_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"
#include "keyring.h"

#define SA_ENVELOPE_VERSION 0x01
#define SA_ENVELOPE_HEADER (1 + 4 + 24)
#define SA_ENVELOPE_OVERHEAD (SA_ENVELOPE_HEADER + 16)

/* Seals plain (len bytes) with the ring's newest key, binding it to id. On SA_OK *out is a
 * malloc'd buffer of *out_len bytes that the caller frees. */
enum sa_code sa_envelope_seal(const struct sa_keyring *ring, const char *id, const uint8_t *plain,
                              size_t len, uint8_t **out, size_t *out_len,
                              struct sa_err *err) SA_MUST_CHECK;

/* Same with a given nonce (known-answer tests only). */
enum sa_code sa_envelope_seal_nonce(const struct sa_keyring *ring, const char *id,
                                    const uint8_t *plain, size_t len, const uint8_t nonce[24],
                                    uint8_t **out, size_t *out_len,
                                    struct sa_err *err) SA_MUST_CHECK;

/* Opens an envelope bound to id. On SA_OK *plain is a malloc'd buffer of *plain_len
 * bytes; free it with sa_envelope_free_plain, which wipes it. SA_EINVAL: too short or unknown
 * version; SA_ECRYPTO: unknown key id ("unknown key id 1a2b3c4d") or it does not open
 * (forged, tampered, or bound to another id). */
enum sa_code sa_envelope_open(const struct sa_keyring *ring, const char *id, const uint8_t *env,
                              size_t len, uint8_t **plain, size_t *plain_len,
                              struct sa_err *err) SA_MUST_CHECK;

void sa_envelope_free_plain(uint8_t *plain, size_t len);

/* 1 if env has a well-formed header whose key id the ring does not hold (sealed with a key
 * this reader has not loaded, for instance mid-rotation), else 0. */
int sa_envelope_key_unknown(const struct sa_keyring *ring, const uint8_t *env, size_t len);

#endif

/* Sealed envelopes (docs/architecture.md, "Data flow": a task is self-contained and travels
 * sealed; invariant 5: what does not open is refused with a reason, never a crash). The 29-byte
 * header and the task id together are the associated data, so a broker operator cannot move a task
 * to another id, relabel its key or version, or flip a bit anywhere without SA_ECRYPTO. The
 * plaintext buffer is wiped by sa_envelope_free_plain; it is plain malloc memory, not
 * sodium_malloc's guarded pages, which cost an mmap, mprotect, mlock and munmap per task
 * (docs/design-notes.md, "Where a burst's time went"). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "envelope.h"
#include "layout.h"
#include "random.h"

#define NONCE_BYTES crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_BYTES crypto_aead_xchacha20poly1305_ietf_ABYTES
#define KID_AT 1
#define NONCE_AT (1 + SA_KID_BYTES)

_Static_assert(SA_ENVELOPE_HEADER == NONCE_AT + NONCE_BYTES &&
                   SA_ENVELOPE_OVERHEAD == SA_ENVELOPE_HEADER + TAG_BYTES,
               "envelope.h's sizes must match libsodium's");

#define AD_ROOM (SA_ENVELOPE_HEADER + SA_ID_MAX) /* the AD of any valid id fits a stack room */

/* AD = header || id, in room (AD_ROOM bytes) when it fits, else allocated (the caller frees
 * what is not room). Returns NULL when out of memory. */
static uint8_t *
make_ad(const uint8_t *header, const char *id, uint8_t *room, size_t *ad_len)
{
    size_t id_len = strlen(id);
    uint8_t *ad =
        SA_ENVELOPE_HEADER + id_len <= AD_ROOM ? room : malloc(SA_ENVELOPE_HEADER + id_len);

    if (!ad)
        return NULL;
    memcpy(ad, header, SA_ENVELOPE_HEADER);
    memcpy(ad + SA_ENVELOPE_HEADER, id, id_len);
    *ad_len = SA_ENVELOPE_HEADER + id_len;
    return ad;
}

enum sa_code
sa_envelope_seal_nonce(const struct sa_keyring *ring, const char *id, const uint8_t *plain,
                       size_t len, const uint8_t nonce[24], uint8_t **out, size_t *out_len,
                       struct sa_err *err)
{
    const uint8_t *kid = NULL, *key = NULL;
    unsigned long long clen = 0;
    uint8_t *env = NULL, *ad = NULL, room[AD_ROOM];
    size_t ad_len = 0;
    enum sa_code rc = SA_OK;

    assert(ring && id && (plain || len == 0));
    *out = NULL;
    if (len > crypto_aead_xchacha20poly1305_ietf_MESSAGEBYTES_MAX ||
        len > SIZE_MAX - SA_ENVELOPE_OVERHEAD)
        return sa_fail(err, SA_EINVAL, "plaintext of %zu bytes is too large to seal", len);
    sa_keyring_newest(ring, &kid, &key);
    env = malloc(SA_ENVELOPE_OVERHEAD + len);
    if (!env)
        return sa_fail(err, SA_ENOMEM, "no memory to seal %zu bytes", len);
    env[0] = SA_ENVELOPE_VERSION;
    memcpy(env + KID_AT, kid, SA_KID_BYTES);
    memcpy(env + NONCE_AT, nonce, NONCE_BYTES);
    ad = make_ad(env, id, room, &ad_len);
    if (!ad) {
        rc = sa_fail(err, SA_ENOMEM, "no memory to seal %zu bytes", len);
        goto out;
    }
    if (crypto_aead_xchacha20poly1305_ietf_encrypt(env + SA_ENVELOPE_HEADER, &clen, plain, len, ad,
                                                   ad_len, NULL, nonce, key) != 0) {
        rc = sa_fail(err, SA_ECRYPTO, "sealing %zu bytes failed", len);
        goto out;
    }
    *out = env;
    *out_len = SA_ENVELOPE_HEADER + (size_t)clen;
    env = NULL;
out:
    if (ad != room)
        free(ad);
    free(env);
    return rc;
}

enum sa_code
sa_envelope_seal(const struct sa_keyring *ring, const char *id, const uint8_t *plain, size_t len,
                 uint8_t **out, size_t *out_len, struct sa_err *err)
{
    uint8_t nonce[NONCE_BYTES];

    sa_random_buf(nonce, sizeof(nonce)); /* 192 random bits: no counter to keep or lose */
    return sa_envelope_seal_nonce(ring, id, plain, len, nonce, out, out_len, err);
}

/* Checks what can be checked before any key is used: length, version, known kid. */
static enum sa_code
check_header(const struct sa_keyring *ring, const uint8_t *env, size_t len, const uint8_t **key,
             struct sa_err *err)
{
    const uint8_t *kid = env + KID_AT;

    if (len < SA_ENVELOPE_OVERHEAD)
        return sa_fail(err, SA_EINVAL, "envelope too short (%zu bytes)", len);
    if (env[0] != SA_ENVELOPE_VERSION)
        return sa_fail(err, SA_EINVAL, "unknown envelope version 0x%02x", env[0]);
    *key = sa_keyring_find(ring, kid);
    if (!*key)
        return sa_fail(err, SA_ECRYPTO, "unknown key id %02x%02x%02x%02x", kid[0], kid[1], kid[2],
                       kid[3]);
    return SA_OK;
}

enum sa_code
sa_envelope_open(const struct sa_keyring *ring, const char *id, const uint8_t *env, size_t len,
                 uint8_t **plain, size_t *plain_len, struct sa_err *err)
{
    const uint8_t *key = NULL;
    unsigned long long mlen = 0;
    uint8_t *ad = NULL, *buf = NULL, room[AD_ROOM];
    size_t ad_len = 0, cap;
    enum sa_code rc;

    assert(ring && id && (env || len == 0));
    *plain = NULL;
    *plain_len = 0;
    if ((rc = check_header(ring, env, len, &key, err)) != SA_OK)
        return rc;
    cap = len - SA_ENVELOPE_OVERHEAD;
    buf = malloc(cap ? cap : 1);
    ad = make_ad(env, id, room, &ad_len);
    if (!buf || !ad) {
        rc = sa_fail(err, SA_ENOMEM, "no memory to open %zu bytes", len);
        goto out;
    }
    if (crypto_aead_xchacha20poly1305_ietf_decrypt(buf, &mlen, NULL, env + SA_ENVELOPE_HEADER,
                                                   len - SA_ENVELOPE_HEADER, ad, ad_len,
                                                   env + NONCE_AT, key) != 0) {
        rc = sa_fail(err, SA_ECRYPTO,
                     "envelope does not open (forged, tampered or sealed for another id)");
        goto out;
    }
    *plain = buf;
    *plain_len = (size_t)mlen;
    buf = NULL;
out:
    if (ad != room)
        free(ad);
    free(buf); /* NULL on success; else never written (tag checked first) */
    return rc;
}

void
sa_envelope_free_plain(uint8_t *plain, size_t len)
{
    if (!plain)
        return;
    sodium_memzero(plain, len); /* recipients and bodies */
    free(plain);
}

int
sa_envelope_key_unknown(const struct sa_keyring *ring, const uint8_t *env, size_t len)
{
    return len >= SA_ENVELOPE_OVERHEAD && env[0] == SA_ENVELOPE_VERSION &&
           !sa_keyring_find(ring, env + KID_AT);
}

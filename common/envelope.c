/* Sealed envelopes (DESIGN: tasks are self-contained and sealed). The header (version, kid,
 * nonce) and the task id are the associated data, so neither can be swapped without the
 * envelope failing to open; a forged or tampered envelope is SA_ECRYPTO, never a crash. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "envelope.h"

#define NONCE_BYTES crypto_aead_xchacha20poly1305_ietf_NPUBBYTES

static uint8_t *
make_ad(const uint8_t *header, const char *id, size_t *ad_len)
{
    size_t id_len = strlen(id);
    uint8_t *ad = malloc(SA_ENVELOPE_HEADER + id_len);

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
    uint8_t *env, *ad;
    size_t ad_len = 0;

    *out = NULL;
    sa_keyring_newest(ring, &kid, &key);
    env = malloc(SA_ENVELOPE_OVERHEAD + len);
    if (!env)
        return sa_fail(err, SA_ENOMEM, "no memory to seal %zu bytes", len);
    env[0] = SA_ENVELOPE_VERSION;
    memcpy(env + 1, kid, SA_KID_BYTES);
    memcpy(env + 1 + SA_KID_BYTES, nonce, NONCE_BYTES);
    ad = make_ad(env, id, &ad_len);
    if (!ad) {
        free(env);
        return sa_fail(err, SA_ENOMEM, "no memory to seal");
    }
    crypto_aead_xchacha20poly1305_ietf_encrypt(env + SA_ENVELOPE_HEADER, &clen, plain, len, ad,
                                               ad_len, NULL, nonce, key);
    free(ad);
    *out = env;
    *out_len = SA_ENVELOPE_HEADER + (size_t)clen;
    return SA_OK;
}

enum sa_code
sa_envelope_seal(const struct sa_keyring *ring, const char *id, const uint8_t *plain, size_t len,
                 uint8_t **out, size_t *out_len, struct sa_err *err)
{
    uint8_t nonce[NONCE_BYTES];

    randombytes_buf(nonce, sizeof(nonce));
    return sa_envelope_seal_nonce(ring, id, plain, len, nonce, out, out_len, err);
}

enum sa_code
sa_envelope_open(const struct sa_keyring *ring, const char *id, const uint8_t *env, size_t len,
                 uint8_t **plain, size_t *plain_len, struct sa_err *err)
{
    const uint8_t *key;
    unsigned long long mlen = 0;
    uint8_t *ad, *out;
    size_t ad_len = 0, cap;
    int bad;

    *plain = NULL;
    if (len < SA_ENVELOPE_OVERHEAD)
        return sa_fail(err, SA_EINVAL, "envelope too short (%zu bytes)", len);
    if (env[0] != SA_ENVELOPE_VERSION)
        return sa_fail(err, SA_EINVAL, "unknown envelope version 0x%02x", env[0]);
    key = sa_keyring_find(ring, env + 1);
    if (!key)
        return sa_fail(err, SA_ECRYPTO, "unknown key id %02x%02x%02x%02x", env[1], env[2], env[3], env[4]);
    cap = len - SA_ENVELOPE_OVERHEAD;
    out = sodium_malloc(cap ? cap : 1);
    ad = make_ad(env, id, &ad_len);
    if (!out || !ad) {
        sodium_free(out);
        free(ad);
        return sa_fail(err, SA_ENOMEM, "no memory to open %zu bytes", len);
    }
    bad = crypto_aead_xchacha20poly1305_ietf_decrypt(out, &mlen, NULL, env + SA_ENVELOPE_HEADER,
                                                     len - SA_ENVELOPE_HEADER, ad, ad_len,
                                                     env + 1 + SA_KID_BYTES, key);
    free(ad);
    if (bad != 0) {
        sodium_free(out);
        return sa_fail(err, SA_ECRYPTO, "envelope does not open (forged, tampered or sealed for another id)");
    }
    *plain = out;
    *plain_len = (size_t)mlen;
    return SA_OK;
}

void
sa_envelope_free_plain(uint8_t *plain, size_t len)
{
    (void)len;
    sodium_free(plain); /* sodium_free wipes the whole allocation */
}

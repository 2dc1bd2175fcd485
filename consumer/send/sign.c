/* Signing at each attempt (never at schedule time), so webhook-timestamp is the attempt's
 * own time and receivers can enforce a freshness window. Several keys may sign at once so
 * receivers can rotate without a flag day. Keys live in sodium_malloc memory. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "sign.h"

#define SIGNER_MAX 8
#define HMAC_MAX 64

struct signer_key {
    int ed25519;
    size_t len;                              /* HMAC key length */
    uint8_t key[crypto_sign_SECRETKEYBYTES]; /* HMAC key, or Ed25519 secret key */
};

struct signer {
    int n;
    struct signer_key k[SIGNER_MAX];
};

static enum sa_code
add_key(struct signer *s, const char *entry, size_t n, struct sa_err *err)
{
    struct signer_key *k = &s->k[s->n];
    uint8_t seed[64];
    size_t len = 0;
    int ed = n > 5 && !strncmp(entry, "whsk_", 5);
    size_t skip = ed ? 5 : (n > 6 && !strncmp(entry, "whsec_", 6)) ? 6 : 0;

    if (!skip)
        return sa_fail(err, SA_EINVAL, "webhook secret %d must start with whsec_ or whsk_",
                       s->n + 1);
    if (s->n == SIGNER_MAX)
        return sa_fail(err, SA_EINVAL, "more than %d webhook secrets", SIGNER_MAX);
    if (sodium_base642bin(seed, sizeof(seed), entry + skip, n - skip, NULL, &len, NULL,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        (ed ? len != crypto_sign_SEEDBYTES : (len < 16 || len > HMAC_MAX)))
        return sa_fail(err, SA_EINVAL, "webhook secret %d is not valid base64 of the right size",
                       s->n + 1);
    k->ed25519 = ed;
    if (ed) {
        uint8_t pk[crypto_sign_PUBLICKEYBYTES];
        crypto_sign_seed_keypair(pk, k->key, seed);
    } else {
        memcpy(k->key, seed, len);
        k->len = len;
    }
    sodium_memzero(seed, sizeof(seed));
    s->n++;
    return SA_OK;
}

enum sa_code
signer_new(struct signer **out, const char *secrets, struct sa_err *err)
{
    struct signer *s;
    enum sa_code rc = SA_OK;

    *out = NULL;
    s = sodium_malloc(sizeof(*s));
    if (!s)
        return sa_fail(err, SA_ENOMEM, "no memory for webhook keys");
    sodium_memzero(s, sizeof(*s));
    for (const char *p = secrets ? secrets : ""; rc == SA_OK && *p;) {
        size_t n;
        p += strspn(p, " ,\t\n");
        n = strcspn(p, " ,\t\n");
        if (n)
            rc = add_key(s, p, n, err);
        p += n;
    }
    if (rc != SA_OK) {
        sodium_free(s);
        return rc;
    }
    *out = s;
    return SA_OK;
}

void
signer_free(struct signer *s)
{
    if (s)
        sodium_free(s);
}

static void
sign_one(const struct signer_key *k, const uint8_t *msg, size_t len, uint8_t *sig, size_t *sig_len)
{
    if (k->ed25519) {
        unsigned long long n = 0;
        crypto_sign_detached(sig, &n, msg, len, k->key);
        *sig_len = (size_t)n;
        return;
    }
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, k->key, k->len);
    crypto_auth_hmacsha256_update(&st, msg, len);
    crypto_auth_hmacsha256_final(&st, sig);
    *sig_len = crypto_auth_hmacsha256_BYTES;
}

int
signer_sign(const struct signer *s, char *out, size_t cap, const char *msg_id, int64_t ts_seconds,
            const uint8_t *body, size_t body_len)
{
    char prefix[160];
    int plen = snprintf(prefix, sizeof(prefix), "%s.%" PRId64 ".", msg_id, ts_seconds);
    uint8_t *msg, sig[crypto_sign_BYTES];
    size_t used = 0, sig_len = 0;

    if (!s || s->n == 0)
        return 0;
    msg = malloc((size_t)plen + body_len + 1);
    if (!msg || plen < 0 || (size_t)plen >= sizeof(prefix))
        return free(msg), -1;
    memcpy(msg, prefix, (size_t)plen);
    if (body_len)
        memcpy(msg + plen, body, body_len);
    for (int i = 0; i < s->n; i++) {
        const char *tag = s->k[i].ed25519 ? "v1a," : "v1,";
        sign_one(&s->k[i], msg, (size_t)plen + body_len, sig, &sig_len);
        if (used + strlen(tag) +
                sodium_base64_ENCODED_LEN(sig_len, sodium_base64_VARIANT_ORIGINAL) + 1 >
            cap)
            return free(msg), -1;
        used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? " " : "", tag);
        sodium_bin2base64(out + used, cap - used, sig, sig_len, sodium_base64_VARIANT_ORIGINAL);
        used += strlen(out + used);
    }
    free(msg);
    return (int)used;
}

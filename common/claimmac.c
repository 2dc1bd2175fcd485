/* The MAC subkeys and the records' MAC text (claimmac.h). Making or checking one MAC costs a
 * BLAKE2b pass over the record (a few hundred bytes) under a mutex held for that pass. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <sodium.h>

#include "claimmac.h"
#include "natserr.h"

#define RING_KEYS_MAX 64 /* keyring.c's RING_MAX */

struct subkeys {
    size_t n; /* oldest first, as in the ring: MACs are made with the first two */
    uint8_t kid[RING_KEYS_MAX][SA_KID_BYTES];
    uint8_t key[RING_KEYS_MAX][crypto_generichash_KEYBYTES];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct subkeys *keys;             /* NULL until sa_claimmac_use */
static _Atomic int64_t legacy_before_ms; /* sa_claimmac_trust_before */

void
sa_claimmac_trust_before(int64_t since_ms)
{
    atomic_store(&legacy_before_ms, since_ms > 0 ? since_ms : 0);
}

int
sa_claimmac_legacy(int64_t stored_ms)
{
    return stored_ms > 0 && stored_ms < atomic_load(&legacy_before_ms);
}

enum sa_code
sa_claimmac_use(const struct sa_keyring *ring, struct sa_err *err)
{
    struct subkeys *made, *old;
    size_t n = sa_keyring_count(ring);

    if (n == 0 || n > RING_KEYS_MAX)
        return sa_fail(err, SA_EINVAL, "a key ring of %zu keys cannot make claim MACs", n);
    made = sodium_malloc(sizeof(*made));
    if (!made)
        return sa_fail(err, SA_ENOMEM, "no memory for the claim MAC keys");
    made->n = n;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *kid, *key;

        sa_keyring_at(ring, i, &kid, &key);
        memcpy(made->kid[i], kid, SA_KID_BYTES);
        crypto_kdf_derive_from_key(made->key[i], sizeof(made->key[i]), 1, "sa_claim", key);
    }
    pthread_mutex_lock(&lock);
    old = keys;
    keys = made;
    pthread_mutex_unlock(&lock);
    sodium_free(old); /* wipes; accepts NULL */
    return SA_OK;
}

void
sa_claimmac_forget(void)
{
    pthread_mutex_lock(&lock);
    sodium_free(keys);
    keys = NULL;
    pthread_mutex_unlock(&lock);
}

int
sa_claimmac_ready(void)
{
    int yes;

    pthread_mutex_lock(&lock);
    yes = keys != NULL;
    pthread_mutex_unlock(&lock);
    return yes;
}

/* The tag of (kind, key, body) under subkey: each part is framed by its length's end (a NUL),
 * so "a" + "bc" and "ab" + "c" differ. */
static void
tag_of(uint8_t tag[SA_CLAIMMAC_TAG], const uint8_t *subkey, const char *kind, const char *key,
       const char *body, size_t len)
{
    crypto_generichash_state st;

    crypto_generichash_init(&st, subkey, crypto_generichash_KEYBYTES, SA_CLAIMMAC_TAG);
    crypto_generichash_update(&st, (const uint8_t *)kind, strlen(kind) + 1);
    crypto_generichash_update(&st, (const uint8_t *)key, strlen(key) + 1);
    crypto_generichash_update(&st, (const uint8_t *)body, len);
    crypto_generichash_final(&st, tag, SA_CLAIMMAC_TAG);
}

/* One MAC item "<kid hex>.<tag hex>" of (kind, key, body) under key i, at out. */
static void
item_of(char *out, size_t i, const char *kind, const char *key, const char *body, size_t len)
{
    uint8_t tag[SA_CLAIMMAC_TAG];

    tag_of(tag, keys->key[i], kind, key, body, len);
    sodium_bin2hex(out, 2 * SA_KID_BYTES + 1, keys->kid[i], SA_KID_BYTES);
    out[2 * SA_KID_BYTES] = '.';
    sodium_bin2hex(out + 2 * SA_KID_BYTES + 1, 2 * SA_CLAIMMAC_TAG + 1, tag, sizeof(tag));
}

enum sa_code
sa_claimmac_make(char *out, const char *kind, const char *key, const char *body, size_t len,
                 struct sa_err *err)
{
    size_t at = 0;

    out[0] = '\0';
    pthread_mutex_lock(&lock);
    for (size_t i = 0; keys && i < keys->n && i < SA_CLAIMMAC_KEYS; i++) { /* the oldest */
        if (i)
            out[at++] = ' ';
        item_of(out + at, i, kind, key, body, len);
        at += SA_CLAIMMAC_LEN;
    }
    pthread_mutex_unlock(&lock);
    if (!at)
        return sa_fail(err, SA_ECRYPTO,
                       "no key to authenticate the %s record of %s (give SENDAT_KEY_FILE)", kind,
                       key);
    return SA_OK;
}

/* 1 if item (SA_CLAIMMAC_LEN characters) is a MAC of (kind, key, body) under a key of the ring,
 * 0 if under one that does not verify, -1 if its key id is not in the ring or it is malformed.
 * Called with the lock held. */
static int
item_verifies(const char *item, const char *kind, const char *key, const char *body, size_t len)
{
    uint8_t kid[SA_KID_BYTES], want[SA_CLAIMMAC_TAG], tag[SA_CLAIMMAC_TAG];
    size_t got = 0, tag_got = 0;

    if (item[2 * SA_KID_BYTES] != '.' ||
        sodium_hex2bin(kid, sizeof(kid), item, 2 * SA_KID_BYTES, NULL, &got, NULL) != 0 ||
        got != sizeof(kid) ||
        sodium_hex2bin(want, sizeof(want), item + 2 * SA_KID_BYTES + 1, 2 * SA_CLAIMMAC_TAG, NULL,
                       &tag_got, NULL) != 0 ||
        tag_got != sizeof(want))
        return -1;
    for (size_t i = 0; keys && i < keys->n; i++)
        if (!memcmp(keys->kid[i], kid, SA_KID_BYTES)) {
            tag_of(tag, keys->key[i], kind, key, body, len);
            return sodium_memcmp(tag, want, sizeof(tag)) == 0;
        }
    return -1;
}

enum sa_code
sa_claimmac_check(const char *mac, size_t mac_len, const char *kind, const char *key,
                  const char *body, size_t len, struct sa_err *err)
{
    size_t items = (mac_len + 1) / (SA_CLAIMMAC_LEN + 1);
    int best = -1;

    if (items < 1 || items > SA_CLAIMMAC_KEYS || mac_len != items * (SA_CLAIMMAC_LEN + 1) - 1)
        return sa_fail(err, SA_ECRYPTO, "%s record of %s: its MAC is malformed", kind, key);
    for (size_t i = 1; i < items; i++)
        if (mac[i * (SA_CLAIMMAC_LEN + 1) - 1] != ' ')
            return sa_fail(err, SA_ECRYPTO, "%s record of %s: its MAC is malformed", kind, key);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < items && best < 1; i++) {
        int v = item_verifies(mac + i * (SA_CLAIMMAC_LEN + 1), kind, key, body, len);

        best = v > best ? v : best;
    }
    pthread_mutex_unlock(&lock);
    if (best == 1)
        return SA_OK;
    return best == 0
               ? sa_fail(err, SA_ECRYPTO, "%s record of %s: its MAC does not verify", kind, key)
               : sa_fail(err, SA_ECRYPTO, "%s record of %s: no MAC under a key of the ring", kind,
                         key);
}

int
sa_cancelrec_make(char *out, size_t cap, const char *key, const char *text)
{
    char mac[SA_CLAIMMAC_MAX + 1];
    size_t len = strlen(text), mac_len;

    if (strchr(text, ' ') ||
        sa_claimmac_make(mac, SA_CLAIMMAC_CANCEL, key, text, len, NULL) != SA_OK)
        return -1;
    mac_len = strlen(mac);
    if (len + 1 + mac_len >= cap)
        return -1;
    memcpy(out, text, len);
    out[len] = ' ';
    memcpy(out + len + 1, mac, mac_len + 1);
    return (int)(len + 1 + mac_len);
}

enum sa_code
sa_cancelrec_check(const char *value, size_t len, const char *key, int64_t stored_ms,
                   struct sa_err *err)
{
    const char *space = value ? memchr(value, ' ', len) : NULL;

    if (!space && len > 0 && sa_claimmac_legacy(stored_ms))
        return SA_OK; /* an older version's: a time alone */
    if (!space)
        return sa_fail(err, SA_ECRYPTO, "cancel record of %s carries no MAC", key);
    return sa_claimmac_check(space + 1, len - (size_t)(space + 1 - value), SA_CLAIMMAC_CANCEL, key,
                             value, (size_t)(space - value), err);
}

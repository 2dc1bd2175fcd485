/* Envelope seal/open: known-answer vectors made independently (tests/vectors/envelope.exp),
 * every tampered region refused, the id binding, unknown keys, rotation, truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "envelope.h"

static struct sa_keyring *
ring_of(const char *kid_hex, const uint8_t *key)
{
    uint8_t kid[1][SA_KID_BYTES], k[1][SA_KEY_BYTES];
    struct sa_keyring *r = NULL;

    assert_int_equal(sodium_hex2bin(kid[0], 4, kid_hex, 8, NULL, NULL, NULL), 0);
    memcpy(k[0], key, SA_KEY_BYTES);
    assert_int_equal(sa_keyring_from_keys(&r, (const uint8_t(*)[4])kid, (const uint8_t(*)[32])k, 1, NULL), SA_OK);
    return r;
}

static size_t
unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;

    if (!strcmp(hex, "-"))
        return 0;
    assert_int_equal(sodium_hex2bin(out, cap, hex, strlen(hex), NULL, &n, NULL), 0);
    return n;
}

static void
check_vector(char *kid, char *keyh, char *nonceh, char *id, char *plainh, char *envh)
{
    uint8_t key[32], nonce[24], plain[512], want[1024], *env = NULL, *back = NULL;
    size_t plen, wlen, elen = 0, blen = 0;
    struct sa_keyring *r;

    unhex(keyh, key, sizeof(key));
    unhex(nonceh, nonce, sizeof(nonce));
    plen = unhex(plainh, plain, sizeof(plain));
    wlen = unhex(envh, want, sizeof(want));
    r = ring_of(kid, key);
    assert_int_equal(sa_envelope_seal_nonce(r, id, plain, plen, nonce, &env, &elen, NULL), SA_OK);
    assert_int_equal(elen, wlen);
    assert_memory_equal(env, want, wlen);
    assert_int_equal(sa_envelope_open(r, id, want, wlen, &back, &blen, NULL), SA_OK);
    assert_int_equal(blen, plen);
    if (plen)
        assert_memory_equal(back, plain, plen);
    sa_envelope_free_plain(back, blen);
    free(env);
    sa_keyring_free(r);
}

static void
test_known_answers(void **state)
{
    const char *dir = getenv("SENDAT_VECTORS");
    char path[512], line[4096], f[6][1100];
    FILE *fp;
    int n = 0;

    (void)state;
    snprintf(path, sizeof(path), "%s/envelope.exp", dir ? dir : "tests/vectors");
    fp = fopen(path, "r");
    assert_non_null(fp);
    while (fgets(line, sizeof(line), fp)) {
        if (line[0] == '#')
            continue;
        assert_int_equal(sscanf(line, "%1099s %1099s %1099s %1099s %1099s %1099s", f[0], f[1], f[2], f[3], f[4], f[5]), 6);
        check_vector(f[0], f[1], f[2], f[3], f[4], f[5]);
        n++;
    }
    fclose(fp);
    assert_true(n >= 3);
}

static void
test_tamper_every_byte(void **state)
{
    uint8_t key[32], *env = NULL, *plain = NULL;
    size_t len = 0, plen = 0;
    struct sa_keyring *r;
    struct sa_err err = {0};

    (void)state;
    randombytes_buf(key, sizeof(key));
    r = ring_of("0a0b0c0d", key);
    assert_int_equal(sa_envelope_seal(r, "id-1", (const uint8_t *)"secret body", 11, &env, &len, NULL), SA_OK);
    for (size_t i = 0; i < len; i++) {
        env[i] ^= 0x01;
        sa_err_clear(&err);
        assert_int_not_equal(sa_envelope_open(r, "id-1", env, len, &plain, &plen, &err), SA_OK);
        assert_null(plain);
        env[i] ^= 0x01;
    }
    for (size_t cut = 0; cut < SA_ENVELOPE_OVERHEAD; cut++)
        assert_int_equal(sa_envelope_open(r, "id-1", env, cut, &plain, &plen, NULL), SA_EINVAL);
    assert_int_equal(sa_envelope_open(r, "id-2", env, len, &plain, &plen, &err), SA_ECRYPTO);
    free(env);
    sa_keyring_free(r);
}

static void
test_unknown_key_and_rotation(void **state)
{
    uint8_t kids[2][4] = {{1, 1, 1, 1}, {2, 2, 2, 2}}, keys[2][32], *env = NULL, *plain = NULL;
    struct sa_keyring *old = NULL, *both = NULL, *other;
    size_t len = 0, plen = 0;
    struct sa_err err = {0};

    (void)state;
    randombytes_buf(keys, sizeof(keys));
    assert_int_equal(sa_keyring_from_keys(&old, (const uint8_t(*)[4])kids, (const uint8_t(*)[32])keys, 1, NULL), SA_OK);
    assert_int_equal(sa_keyring_from_keys(&both, (const uint8_t(*)[4])kids, (const uint8_t(*)[32])keys, 2, NULL), SA_OK);
    assert_int_equal(sa_envelope_seal(old, "a", (const uint8_t *)"x", 1, &env, &len, NULL), SA_OK);
    assert_int_equal(sa_envelope_open(both, "a", env, len, &plain, &plen, NULL), SA_OK); /* old key still opens */
    sa_envelope_free_plain(plain, plen);
    free(env);
    assert_int_equal(sa_envelope_seal(both, "a", (const uint8_t *)"x", 1, &env, &len, NULL), SA_OK);
    assert_memory_equal(env + 1, kids[1], 4); /* seals with the newest */
    assert_int_equal(sa_envelope_open(old, "a", env, len, &plain, &plen, &err), SA_ECRYPTO);
    assert_non_null(strstr(err.msg, "unknown key id 02020202"));
    other = ring_of("01010101", keys[1]); /* same kid, wrong secret */
    free(env);
    assert_int_equal(sa_envelope_seal(old, "a", (const uint8_t *)"x", 1, &env, &len, NULL), SA_OK);
    assert_int_equal(sa_envelope_open(other, "a", env, len, &plain, &plen, NULL), SA_ECRYPTO);
    env[0] = 0x02;
    sa_err_clear(&err);
    assert_int_equal(sa_envelope_open(old, "a", env, len, &plain, &plen, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "version"));
    free(env);
    sa_keyring_free(old);
    sa_keyring_free(both);
    sa_keyring_free(other);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_tamper_every_byte),
        cmocka_unit_test(test_unknown_key_and_rotation),
    };
    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}

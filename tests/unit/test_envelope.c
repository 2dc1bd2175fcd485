/* Envelope seal/open: known-answer vectors made independently ($SENDAT_VECTORS/envelope.exp),
 * every region tampered (version, kid, nonce, ciphertext, tag), the id binding, the kid
 * binding, unknown keys, rotation, and every truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "envelope.h"
#include "random.h"

#define ID "1795340100000-abcdefghij"
#define BODY "{\"url\":\"https://example.com/hook\",\"body\":\"secret body\"}"

static struct sa_keyring *
ring_of(const char *kid_hex, const uint8_t *key)
{
    uint8_t kid[1][SA_KID_BYTES], k[1][SA_KEY_BYTES];
    struct sa_keyring *r = NULL;

    assert_int_equal(sodium_hex2bin(kid[0], 4, kid_hex, 8, NULL, NULL, NULL), 0);
    memcpy(k[0], key, SA_KEY_BYTES);
    assert_int_equal(
        sa_keyring_from_keys(&r, (const uint8_t(*)[4])kid, (const uint8_t(*)[32])k, 1, NULL),
        SA_OK);
    return r;
}

/* "-" is empty. Returns the byte count; *out is malloc'd. */
static size_t
unhex(const char *hex, uint8_t **out)
{
    size_t n = 0, len = strcmp(hex, "-") ? strlen(hex) : 0;

    *out = malloc(len / 2 + 1);
    assert_non_null(*out);
    assert_int_equal(len % 2, 0);
    assert_int_equal(sodium_hex2bin(*out, len / 2 + 1, hex, len, NULL, &n, NULL), 0);
    return n;
}

/* fields: kid key nonce id plain envelope */
static void
check_vector(char **f)
{
    uint8_t *key, *nonce, *plain, *want, *env = NULL, *back = NULL;
    size_t plen, wlen, elen = 0, blen = 0;
    struct sa_keyring *r;
    struct sa_err err = {0};

    assert_int_equal(unhex(f[1], &key), 32);
    assert_int_equal(unhex(f[2], &nonce), 24);
    plen = unhex(f[4], &plain);
    wlen = unhex(f[5], &want);
    r = ring_of(f[0], key);
    assert_int_equal(sa_envelope_seal_nonce(r, f[3], plain, plen, nonce, &env, &elen, &err), SA_OK);
    assert_int_equal(elen, wlen);
    assert_memory_equal(env, want, wlen);
    assert_int_equal(sa_envelope_open(r, f[3], want, wlen, &back, &blen, &err), SA_OK);
    assert_int_equal(blen, plen);
    if (plen)
        assert_memory_equal(back, plain, plen);
    sa_envelope_free_plain(back, blen);
    assert_int_equal(sa_envelope_open(r, "another-id", want, wlen, &back, &blen, NULL), SA_ECRYPTO);
    free(env);
    free(key);
    free(nonce);
    free(plain);
    free(want);
    sa_keyring_free(r);
}

static void
test_known_answers(void **state)
{
    const char *dir = getenv("SENDAT_VECTORS");
    char path[512], *line = NULL, *f[6], *save = NULL;
    size_t cap = 0;
    FILE *fp;
    int n = 0;

    (void)state;
    snprintf(path, sizeof(path), "%s/envelope.exp", dir ? dir : "tests/vectors");
    fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot open %s (set SENDAT_VECTORS to tests/vectors)", path);
    while (getline(&line, &cap, fp) > 0) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        for (int i = 0; i < 6; i++) {
            f[i] = strtok_r(i ? NULL : line, " \n", &save);
            assert_non_null(f[i]);
        }
        assert_null(strtok_r(NULL, " \n", &save));
        check_vector(f);
        n++;
    }
    free(line);
    fclose(fp);
    assert_true(n >= 8);
}

static void
seal_body(struct sa_keyring *r, uint8_t **env, size_t *len)
{
    assert_int_equal(sa_envelope_seal(r, ID, (const uint8_t *)BODY, strlen(BODY), env, len, NULL),
                     SA_OK);
    assert_int_equal(*len, SA_ENVELOPE_OVERHEAD + strlen(BODY));
}

static void
test_round_trip_sizes(void **state)
{
    static const size_t sizes[] = {0, 1, 15, 16, 17, 63, 64, 65, 1000, 256 * 1024};
    uint8_t key[32], *in = malloc(256 * 1024), *a = NULL, *b = NULL, *out = NULL;
    size_t alen = 0, blen = 0, olen = 0;
    struct sa_keyring *r;

    (void)state;
    assert_non_null(in);
    randombytes_buf(key, sizeof(key));
    randombytes_buf(in, 256 * 1024);
    r = ring_of("0a0b0c0d", key);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        assert_int_equal(sa_envelope_seal(r, ID, in, sizes[i], &a, &alen, NULL), SA_OK);
        assert_int_equal(sa_envelope_seal(r, ID, in, sizes[i], &b, &blen, NULL), SA_OK);
        assert_int_equal(alen, SA_ENVELOPE_OVERHEAD + sizes[i]);
        assert_memory_not_equal(a + 5, b + 5, 24); /* a fresh nonce each time */
        assert_int_equal(a[0], SA_ENVELOPE_VERSION);
        assert_memory_equal(a + 1, "\x0a\x0b\x0c\x0d", 4);
        assert_int_equal(sa_envelope_open(r, ID, a, alen, &out, &olen, NULL), SA_OK);
        assert_int_equal(olen, sizes[i]);
        if (olen)
            assert_memory_equal(out, in, olen);
        sa_envelope_free_plain(out, olen);
        free(a);
        free(b);
    }
    assert_int_equal(sa_envelope_seal(r, "", in, 3, &a, &alen, NULL), SA_OK); /* empty id */
    assert_int_equal(sa_envelope_open(r, "", a, alen, &out, &olen, NULL), SA_OK);
    sa_envelope_free_plain(out, olen);
    free(a);
    sa_envelope_free_plain(NULL, 0);
    free(in);
    sa_keyring_free(r);
}

/* Flips bits in every byte of [from, to) and expects code and message each time. */
static void
tamper_region(struct sa_keyring *r, uint8_t *env, size_t len, size_t from, size_t to,
              enum sa_code code, const char *msg)
{
    static const uint8_t masks[] = {0x01, 0x80, 0xff};
    uint8_t *plain = (uint8_t *)"not touched";
    size_t plen = 99;
    struct sa_err err;

    for (size_t i = from; i < to; i++) {
        for (size_t m = 0; m < sizeof(masks); m++) {
            env[i] ^= masks[m];
            sa_err_clear(&err);
            assert_int_equal(sa_envelope_open(r, ID, env, len, &plain, &plen, &err), code);
            assert_null(plain);
            assert_int_equal(plen, 0);
            if (!strstr(err.msg, msg))
                fail_msg("byte %zu ^ 0x%02x: \"%s\" lacks \"%s\"", i, masks[m], err.msg, msg);
            env[i] ^= masks[m];
        }
    }
}

static void
test_tamper_each_region(void **state)
{
    static const char *no_open =
        "envelope does not open (forged, tampered or sealed for another id)";
    uint8_t key[32], *env = NULL, *plain = NULL;
    size_t len = 0, plen = 0;
    struct sa_keyring *r;
    struct sa_err err = {0};

    (void)state;
    randombytes_buf(key, sizeof(key));
    r = ring_of("1a2b3c4d", key);
    seal_body(r, &env, &len);
    tamper_region(r, env, len, 0, 1, SA_EINVAL, "unknown envelope version 0x");
    tamper_region(r, env, len, 1, 5, SA_ECRYPTO, "unknown key id");
    tamper_region(r, env, len, 5, SA_ENVELOPE_HEADER, SA_ECRYPTO, no_open);        /* nonce */
    tamper_region(r, env, len, SA_ENVELOPE_HEADER, len - 16, SA_ECRYPTO, no_open); /* text */
    tamper_region(r, env, len, len - 16, len, SA_ECRYPTO, no_open);                /* tag */
    env[0] = 0x02;
    assert_int_equal(sa_envelope_open(r, ID, env, len, &plain, &plen, &err), SA_EINVAL);
    assert_string_equal(err.msg, "unknown envelope version 0x02");
    env[0] = SA_ENVELOPE_VERSION;
    assert_int_equal(sa_envelope_open(r, ID, env, len, &plain, &plen, NULL), SA_OK); /* restored */
    assert_memory_equal(plain, BODY, plen);
    sa_envelope_free_plain(plain, plen);
    free(env);
    sa_keyring_free(r);
}

static void
test_id_binding(void **state)
{
    static const char *others[] = {"1795340100000-abcdefghiJ", "1795340100000-abcdefghi",
                                   "1795340100000-abcdefghij ", "", "x"};
    uint8_t key[32], *env = NULL, *plain = NULL;
    size_t len = 0, plen = 0;
    struct sa_keyring *r;
    struct sa_err err;

    (void)state;
    randombytes_buf(key, sizeof(key));
    r = ring_of("01020304", key);
    seal_body(r, &env, &len);
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        sa_err_clear(&err);
        assert_int_equal(sa_envelope_open(r, others[i], env, len, &plain, &plen, &err), SA_ECRYPTO);
        assert_string_equal(err.msg,
                            "envelope does not open (forged, tampered or sealed for another id)");
        assert_null(plain);
    }
    free(env);
    sa_keyring_free(r);
}

/* Two kids sharing one secret: relabelling the kid still fails, because the kid is in the AD. */
static void
test_kid_binding(void **state)
{
    const uint8_t kids[2][SA_KID_BYTES] = {{1, 1, 1, 1}, {2, 2, 2, 2}};
    uint8_t keys[2][SA_KEY_BYTES], *env = NULL, *plain = NULL;
    size_t len = 0, plen = 0;
    struct sa_keyring *r = NULL;

    (void)state;
    randombytes_buf(keys[0], SA_KEY_BYTES);
    memcpy(keys[1], keys[0], SA_KEY_BYTES);
    assert_int_equal(sa_keyring_from_keys(&r, kids, (const uint8_t(*)[32])keys, 2, NULL), SA_OK);
    seal_body(r, &env, &len);
    assert_memory_equal(env + 1, kids[1], 4);
    memcpy(env + 1, kids[0], 4);
    assert_int_equal(sa_envelope_open(r, ID, env, len, &plain, &plen, NULL), SA_ECRYPTO);
    memcpy(env + 1, kids[1], 4);
    assert_int_equal(sa_envelope_open(r, ID, env, len, &plain, &plen, NULL), SA_OK);
    sa_envelope_free_plain(plain, plen);
    free(env);
    sa_keyring_free(r);
}

static void
test_unknown_key_and_rotation(void **state)
{
    uint8_t kids[2][4] = {{0x1a, 0x2b, 0x3c, 0x4d}, {2, 2, 2, 2}}, keys[2][32];
    uint8_t *env = NULL, *plain = NULL;
    struct sa_keyring *old = NULL, *both = NULL, *other;
    size_t len = 0, plen = 0;
    struct sa_err err = {0};

    (void)state;
    randombytes_buf(keys, sizeof(keys));
    assert_int_equal(
        sa_keyring_from_keys(&old, (const uint8_t(*)[4])kids, (const uint8_t(*)[32])keys, 1, NULL),
        SA_OK);
    assert_int_equal(
        sa_keyring_from_keys(&both, (const uint8_t(*)[4])kids, (const uint8_t(*)[32])keys, 2, NULL),
        SA_OK);
    seal_body(old, &env, &len);
    assert_int_equal(sa_envelope_open(both, ID, env, len, &plain, &plen, NULL),
                     SA_OK); /* old key */
    assert_memory_equal(plain, BODY, plen);
    sa_envelope_free_plain(plain, plen);
    free(env);
    seal_body(both, &env, &len);
    assert_memory_equal(env + 1, kids[1], 4); /* seals with the newest */
    assert_int_equal(sa_envelope_open(both, ID, env, len, &plain, &plen, NULL), SA_OK);
    sa_envelope_free_plain(plain, plen);
    assert_int_equal(sa_envelope_open(old, ID, env, len, &plain, &plen, &err), SA_ECRYPTO);
    assert_string_equal(err.msg, "unknown key id 02020202");
    assert_int_equal(sa_envelope_key_unknown(old, env, len), 1); /* "not yet": waits for a reload */
    assert_int_equal(sa_envelope_key_unknown(both, env, len), 0);
    assert_int_equal(sa_envelope_key_unknown(old, env, SA_ENVELOPE_OVERHEAD - 1), 0); /* junk */
    free(env);
    seal_body(both, &env, &len);
    memcpy(env + 1, "\x1a\x2b\x3c\x4d", 4);
    other = ring_of("deadbeef", keys[0]);
    sa_err_clear(&err);
    assert_int_equal(sa_envelope_open(other, ID, env, len, &plain, &plen, &err), SA_ECRYPTO);
    assert_string_equal(err.msg, "unknown key id 1a2b3c4d");
    sa_keyring_free(other);
    other = ring_of("1a2b3c4d", keys[1]); /* known kid, wrong secret */
    assert_int_equal(sa_envelope_open(other, ID, env, len, &plain, &plen, NULL), SA_ECRYPTO);
    free(env);
    sa_keyring_free(old);
    sa_keyring_free(both);
    sa_keyring_free(other);
}

static void
test_truncated(void **state)
{
    uint8_t key[32], *env = NULL, *plain = NULL, *copy;
    size_t len = 0, plen = 0;
    struct sa_keyring *r;
    struct sa_err err;
    char want[64];

    (void)state;
    randombytes_buf(key, sizeof(key));
    r = ring_of("01020304", key);
    seal_body(r, &env, &len);
    for (size_t cut = 0; cut < SA_ENVELOPE_OVERHEAD; cut++) {
        copy = malloc(cut ? cut : 1); /* exact size, so ASan sees any read past the end */
        assert_non_null(copy);
        memcpy(copy, env, cut);
        sa_err_clear(&err);
        assert_int_equal(sa_envelope_open(r, ID, cut ? copy : NULL, cut, &plain, &plen, &err),
                         SA_EINVAL);
        snprintf(want, sizeof(want), "envelope too short (%zu bytes)", cut);
        assert_string_equal(err.msg, want);
        assert_null(plain);
        free(copy);
    }
    for (size_t cut = SA_ENVELOPE_OVERHEAD; cut < len; cut++)
        assert_int_equal(sa_envelope_open(r, ID, env, cut, &plain, &plen, NULL), SA_ECRYPTO);
    copy = malloc(len + 1); /* one byte too many */
    assert_non_null(copy);
    memcpy(copy, env, len);
    copy[len] = 0;
    assert_int_equal(sa_envelope_open(r, ID, copy, len + 1, &plain, &plen, NULL), SA_ECRYPTO);
    free(copy);
    free(env);
    sa_keyring_free(r);
}

/* The buffered random source: 3,000 draws of a nonce's size, across block boundaries, are all
 * distinct, and a forked child does not hand out the bytes its parent would draw next. */
static void
test_random_block(void **state)
{
    enum { N = 3000, LEN = 24 };
    unsigned char *seen = malloc((size_t)N * LEN), next[LEN], child[LEN];
    int fds[2], status = 0;
    pid_t pid;

    (void)state;
    assert_non_null(seen);
    for (int i = 0; i < N; i++) {
        sa_random_buf(seen + (size_t)i * LEN, LEN);
        for (int j = 0; j < i; j++)
            assert_memory_not_equal(seen + (size_t)i * LEN, seen + (size_t)j * LEN, LEN);
    }
    free(seen);
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sa_random_buf(child, LEN);
        _exit(write(fds[1], child, LEN) == LEN ? 0 : 1);
    }
    sa_random_buf(next, LEN);
    assert_int_equal(read(fds[0], child, LEN), LEN);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(status, 0);
    assert_memory_not_equal(next, child, LEN);
    close(fds[0]);
    close(fds[1]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),      cmocka_unit_test(test_round_trip_sizes),
        cmocka_unit_test(test_tamper_each_region), cmocka_unit_test(test_id_binding),
        cmocka_unit_test(test_kid_binding),        cmocka_unit_test(test_unknown_key_and_rotation),
        cmocka_unit_test(test_truncated),          cmocka_unit_test(test_random_block),
    };
    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}

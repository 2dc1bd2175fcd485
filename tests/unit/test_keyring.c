/* Key files: generate (0600 whatever the umask), load, append (rotation, no kid collisions,
 * files without a final newline), and the refusals: loose modes, bad lines named by number,
 * duplicate ids, empty files, an existing file without --append, a missing one with it. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "keyring.h"

#define K1 "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define K2 "f0e1d2c3b4a5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff"

struct dir {
    char path[64];
    char key[128];
};

static int
setup(void **state)
{
    static struct dir d;

    snprintf(d.path, sizeof(d.path), "/tmp/sendat-keyring-XXXXXX");
    if (!mkdtemp(d.path))
        return -1;
    snprintf(d.key, sizeof(d.key), "%s/key", d.path);
    *state = &d;
    return 0;
}

static int
teardown(void **state)
{
    struct dir *d = *state;

    unlink(d->key);
    rmdir(d->path);
    return 0;
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f;

    unlink(path);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static size_t
read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n;

    assert_non_null(f);
    n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return n;
}

static void
hex_of(const uint8_t *p, size_t n, char *out)
{
    sodium_bin2hex(out, 2 * n + 1, p, n);
}

/* Each generated line is "<8 lower hex> <64 lower hex>\n" and its secret is in the ring. */
static void
check_lines_in_ring(const char *text, const struct sa_keyring *r, size_t want)
{
    size_t n = 0;
    uint8_t kid[SA_KID_BYTES];
    char hex[65];

    for (const char *p = text; *p; p += 74, n++) {
        assert_true(strlen(p) >= 74);
        assert_true(p[8] == ' ' && p[73] == '\n');
        assert_true(strspn(p, "0123456789abcdef") == 8 && strspn(p + 9, "0123456789abcdef") == 64);
        assert_int_equal(sodium_hex2bin(kid, 4, p, 8, NULL, NULL, NULL), 0);
        assert_non_null(sa_keyring_find(r, kid));
        hex_of(sa_keyring_find(r, kid), SA_KEY_BYTES, hex);
        assert_memory_equal(hex, p + 9, 64);
    }
    assert_int_equal(n, want);
}

static void
test_generate_and_append(void **state)
{
    struct dir *d = *state;
    struct sa_keyring *r = NULL;
    char kids[4][9], text[1024], hex[9];
    const uint8_t *kid, *key;
    struct stat st;
    struct sa_err err = {0};
    mode_t old = umask(0277); /* the file must come out 0600 whatever the umask */

    assert_int_equal(sa_keyring_generate(d->key, 0, kids[0], &err), SA_OK);
    assert_int_equal(stat(d->key, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    unlink(d->key);
    umask(0);
    assert_int_equal(sa_keyring_generate(d->key, 0, kids[0], &err), SA_OK);
    umask(old);
    assert_int_equal(stat(d->key, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(read_file(d->key, text, sizeof(text)), 74);
    assert_memory_equal(text, kids[0], 8);
    assert_int_equal(sa_keyring_generate(d->key, 0, kids[1], &err), SA_EINVAL); /* exists */
    assert_non_null(strstr(err.msg, "--append"));
    assert_int_equal(read_file(d->key, text, sizeof(text)), 74); /* untouched */
    for (int i = 1; i < 4; i++)
        assert_int_equal(sa_keyring_generate(d->key, 1, kids[i], NULL), SA_OK);
    assert_int_equal(sa_keyring_load(&r, d->key, NULL), SA_OK);
    assert_int_equal(sa_keyring_count(r), 4);
    sa_keyring_newest(r, &kid, &key);
    hex_of(kid, 4, hex);
    assert_string_equal(hex, kids[3]);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            assert_string_not_equal(kids[i], kids[j]);
    read_file(d->key, text, sizeof(text));
    check_lines_in_ring(text, r, 4);
    assert_int_equal(stat(d->key, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    sa_keyring_free(r);
}

static void
test_append_edges(void **state)
{
    struct dir *d = *state;
    struct sa_keyring *r = NULL;
    char kid[9], text[512];
    struct sa_err err = {0};

    write_file(d->key, "01020304 " K1, 0600); /* no final newline */
    assert_int_equal(sa_keyring_generate(d->key, 1, kid, NULL), SA_OK);
    assert_int_equal(sa_keyring_load(&r, d->key, NULL), SA_OK);
    assert_int_equal(sa_keyring_count(r), 2);
    sa_keyring_free(r);

    write_file(d->key, "01020304 " K1 "\n", 0644); /* loose mode: refused, unchanged */
    assert_int_equal(sa_keyring_generate(d->key, 1, kid, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "chmod 600"));
    assert_int_equal(read_file(d->key, text, sizeof(text)), 74);

    write_file(d->key, "0102030 " K1 "\n", 0600); /* a ring that would not load */
    assert_int_equal(sa_keyring_generate(d->key, 1, kid, NULL), SA_EINVAL);
    assert_int_equal(read_file(d->key, text, sizeof(text)), 73);

    unlink(d->key);
    sa_err_clear(&err);
    assert_int_equal(sa_keyring_generate(d->key, 1, kid, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "leave out --append"));
    assert_int_equal(access(d->key, F_OK), -1);
}

/* Issue 11 item 8: a FIFO used to hang open(2) for ever (alarm fails the test then), and a
 * file of another user was accepted. */
static void
test_not_ours(void **state)
{
    struct dir *d = *state;
    struct sa_keyring *r = NULL;
    struct sa_err err = {0};
    char kid[9], secret[16];

    unlink(d->key);
    assert_int_equal(mkfifo(d->key, 0600), 0);
    alarm(10);
    assert_int_equal(sa_keyring_load(&r, d->key, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "not a regular file"));
    sa_err_clear(&err);
    assert_int_equal(sa_keyring_generate(d->key, 1, kid, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_int_equal(sa_keyring_read_secret(d->key, secret, sizeof(secret), NULL), SA_EINVAL);
    alarm(0);
    unlink(d->key);
    assert_int_equal(mkdir(d->key, 0700), 0);
    assert_int_equal(sa_keyring_load(&r, d->key, NULL), SA_EINVAL);
    rmdir(d->key);
    if (geteuid() != 0) {
        print_message("not root: the other-owner case needs chown, skipped\n");
        return;
    }
    write_file(d->key, "01020304 " K1 "\n", 0600);
    assert_int_equal(chown(d->key, 65534, 65534), 0); /* nobody */
    sa_err_clear(&err);
    assert_int_equal(sa_keyring_load(&r, d->key, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "owned by uid 65534"));
    assert_null(r);
    assert_int_equal(sa_keyring_read_secret(d->key, secret, sizeof(secret), NULL), SA_EINVAL);
}

/* The webhook secret file gets the key file's checks, and a long one is cut at the buffer. */
static void
test_read_secret(void **state)
{
    struct dir *d = *state;
    char secret[16];

    write_file(d->key, "whsec_0123456789abcdef\n", 0600);
    assert_int_equal(sa_keyring_read_secret(d->key, secret, sizeof(secret), NULL), SA_OK);
    assert_string_equal(secret, "whsec_012345678");
    write_file(d->key, "whsec_x\n", 0644);
    assert_int_equal(sa_keyring_read_secret(d->key, secret, sizeof(secret), NULL), SA_EINVAL);
}

static void
test_load_accepts(void **state)
{
    struct dir *d = *state;
    struct sa_keyring *r = NULL;
    const uint8_t *kid, *key;
    uint8_t k1[32], k2[32];

    write_file(d->key,
               "# sendat ring\n\n   \n\t01020304 " K1 "  # first\r\n"
               "# rotated 2026-11\n"
               "A0B0C0D0\t" K2 "\n",
               0400);
    assert_int_equal(sa_keyring_load(&r, d->key, NULL), SA_OK);
    assert_int_equal(sa_keyring_count(r), 2);
    assert_int_equal(sodium_hex2bin(k1, 32, K1, 64, NULL, NULL, NULL), 0);
    assert_int_equal(sodium_hex2bin(k2, 32, K2, 64, NULL, NULL, NULL), 0);
    assert_memory_equal(sa_keyring_find(r, (const uint8_t[]){1, 2, 3, 4}), k1, 32);
    sa_keyring_newest(r, &kid, &key);
    assert_memory_equal(kid, ((const uint8_t[]){0xa0, 0xb0, 0xc0, 0xd0}), 4);
    assert_memory_equal(key, k2, 32);
    assert_null(sa_keyring_find(r, (const uint8_t[]){1, 2, 3, 5}));
    sa_keyring_free(r);
    sa_keyring_free(NULL);
}

static void
test_modes(void **state)
{
    static const mode_t loose[] = {0644, 0640, 0604, 0660, 0620, 0602, 0601, 0610, 0700 | 0004};
    struct dir *d = *state;
    struct sa_keyring *r = NULL;
    struct sa_err err;
    char want[300];

    for (size_t i = 0; i < sizeof(loose) / sizeof(loose[0]); i++) {
        write_file(d->key, "01020304 " K1 "\n", loose[i]);
        sa_err_clear(&err);
        assert_int_equal(sa_keyring_load(&r, d->key, &err), SA_EINVAL);
        assert_null(r);
        snprintf(want, sizeof(want), "key file %s is readable by others (mode %04o); chmod 600 it",
                 d->key, (unsigned)loose[i]);
        assert_string_equal(err.msg, want);
    }
    write_file(d->key, "01020304 " K1 "\n", 0600);
    assert_int_equal(sa_keyring_load(&r, d->key, NULL), SA_OK);
    sa_keyring_free(r);
    sa_err_clear(&err);
    assert_int_equal(sa_keyring_load(&r, d->path, &err), SA_EINVAL); /* a directory */
    assert_int_equal(sa_keyring_load(&r, "/nonexistent/sendat/key", &err), SA_EINVAL);
}

static void
test_bad_files(void **state)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "holds no key"},
        {"# only a comment\n\n", "holds no key"},
        {"\n\n\n", "holds no key"},
        {"0102030 " K1 "\n", "line 1: key id must be 8 hex"},
        {"010203040 " K1 "\n", "line 1: key id must be 8 hex"},
        {"0102030g " K1 "\n", "line 1: key id must be 8 hex"},
        {"# c\n01020304\n", "line 2: want \"<kid 8 hex> <secret 64 hex>\""},
        {"01020304 \n", "line 1: secret must be 64 hex"},
        {"01020304 " K1 "0\n", "line 1: secret must be 64 hex"},
        {"01020304 0001\n", "line 1: secret must be 64 hex"},
        {"01020304 zz02030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
         "line 1: secret must be 64 hex"},
        {"01020304 " K1 " extra\n", "line 1: unexpected text after the secret"},
        {"01020304:" K1 "\n", "line 1: key id must be 8 hex"},
        {"01020304 " K1 "\n\n# x\n01020304 " K2 "\n", "line 4: key id 01020304 appears twice"},
    };
    struct dir *d = *state;
    struct sa_keyring *r = NULL;
    struct sa_err err;
    FILE *f;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_file(d->key, bad[i].text, 0600);
        sa_err_clear(&err);
        assert_int_equal(sa_keyring_load(&r, d->key, &err), SA_EINVAL);
        assert_null(r);
        if (!strstr(err.msg, bad[i].msg))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].msg);
    }
    f = fopen(d->key, "w"); /* a NUL byte: fputs cannot write it */
    assert_non_null(f);
    fwrite("01020304 " K1 "\n\0", 1, 75, f);
    fclose(f);
    sa_err_clear(&err);
    assert_int_equal(sa_keyring_load(&r, d->key, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "NUL"));
}

static void
test_limits(void **state)
{
    struct dir *d = *state;
    struct sa_keyring *r = NULL;
    struct sa_err err = {0};
    FILE *f = fopen(d->key, "w");

    assert_non_null(f);
    for (int i = 0; i < 65; i++)
        fprintf(f, "%08x %s\n", (unsigned)i, K1);
    fclose(f);
    chmod(d->key, 0600);
    assert_int_equal(sa_keyring_load(&r, d->key, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "line 65: more than 64 keys"));
    f = fopen(d->key, "w");
    assert_non_null(f);
    for (int i = 0; i < 2000; i++)
        fprintf(f, "# %s %s\n", K1, K2);
    fclose(f);
    sa_err_clear(&err);
    assert_int_equal(sa_keyring_load(&r, d->key, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "larger than"));
}

static void
test_from_keys(void **state)
{
    const uint8_t kids[3][SA_KID_BYTES] = {{1, 1, 1, 1}, {2, 2, 2, 2}, {1, 1, 1, 1}};
    uint8_t keys[3][SA_KEY_BYTES];
    struct sa_keyring *r = NULL;
    const uint8_t *kid, *key;
    struct sa_err err = {0};

    (void)state;
    for (int i = 0; i < 3; i++)
        memset(keys[i], 'a' + i, SA_KEY_BYTES);
    assert_int_equal(sa_keyring_from_keys(&r, kids, (const uint8_t(*)[32])keys, 0, &err),
                     SA_EINVAL);
    assert_null(r);
    sa_err_clear(&err);
    assert_int_equal(sa_keyring_from_keys(&r, kids, (const uint8_t(*)[32])keys, 3, &err),
                     SA_EINVAL);
    assert_non_null(strstr(err.msg, "key id 01010101 appears twice"));
    assert_null(r);
    assert_int_equal(sa_keyring_from_keys(&r, kids, (const uint8_t(*)[32])keys, 2, NULL), SA_OK);
    assert_int_equal(sa_keyring_count(r), 2);
    sa_keyring_newest(r, &kid, &key);
    assert_memory_equal(kid, kids[1], 4);
    assert_memory_equal(key, keys[1], 32);
    assert_memory_equal(sa_keyring_find(r, kids[0]), keys[0], 32);
    sa_keyring_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_generate_and_append, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_accepts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_ours, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_secret, setup, teardown),
        cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_keys, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Key files: generate, load, append (rotation), and the refusals: loose mode, bad lines,
 * duplicate ids, empty files, an existing file without --append. */
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

#include "keyring.h"

static char dir[64], path[128];

static int
setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/sendat-keyring-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/key", dir);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static void
write_file(const char *text, mode_t mode)
{
    FILE *f;

    unlink(path);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static void
test_generate_load_append(void **state)
{
    struct sa_keyring *r = NULL;
    char kid1[9], kid2[9];
    struct stat st;
    const uint8_t *kid, *key;
    struct sa_err err = {0};

    (void)state;
    unlink(path);
    assert_int_equal(sa_keyring_generate(path, 0, kid1, NULL), SA_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(sa_keyring_generate(path, 0, kid2, &err), SA_EINVAL); /* exists */
    assert_non_null(strstr(err.msg, "--append"));
    assert_int_equal(sa_keyring_generate(path, 1, kid2, NULL), SA_OK);
    assert_int_equal(sa_keyring_load(&r, path, NULL), SA_OK);
    assert_int_equal(sa_keyring_count(r), 2);
    sa_keyring_newest(r, &kid, &key);
    {
        char hex[9];
        snprintf(hex, sizeof(hex), "%02x%02x%02x%02x", kid[0], kid[1], kid[2], kid[3]);
        assert_string_equal(hex, kid2);
    }
    sa_keyring_free(r);
}

static void
test_refusals(void **state)
{
    static const char *bad[] = {
        "",
        "# only a comment\n",
        "0102030 00\n",
        "01020304 zz02030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
        "01020304 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
        "01020304 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
        NULL};
    struct sa_keyring *r = NULL;
    struct sa_err err = {0};

    (void)state;
    for (int i = 0; bad[i]; i++) {
        write_file(bad[i], 0600);
        assert_int_equal(sa_keyring_load(&r, path, NULL), SA_EINVAL);
        assert_null(r);
    }
    write_file("01020304 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n", 0644);
    assert_int_equal(sa_keyring_load(&r, path, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "chmod 600"));
    write_file("# ring\n\n  01020304 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f  \n", 0600);
    assert_int_equal(sa_keyring_load(&r, path, NULL), SA_OK);
    assert_int_equal(sa_keyring_count(r), 1);
    sa_keyring_free(r);
    assert_int_equal(sa_keyring_load(&r, "/nonexistent/key", NULL), SA_EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generate_load_append),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

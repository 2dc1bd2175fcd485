/* sa_sdnotify against a real AF_UNIX datagram socket, as systemd listens on one: the state
 * arrives as sent, at a path and at an abstract name; nothing is sent without NOTIFY_SOCKET;
 * a name that is no socket path is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "sdnotify.h"

/* Binds a datagram socket at name (a path, or '@' and an abstract name). */
static int
listener(const char *name)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

    assert_true(fd >= 0);
    memcpy(sun.sun_path, name, len);
    if (name[0] == '@')
        sun.sun_path[0] = '\0';
    assert_int_equal(
        bind(fd, (struct sockaddr *)&sun,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/'))),
        0);
    return fd;
}

static void
expect_state(int fd, const char *want)
{
    char buf[64] = {0};
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

    assert_int_equal(n, (ssize_t)strlen(want));
    assert_string_equal(buf, want);
}

static void
test_path_socket(void **state)
{
    char dir[] = "/tmp/sdnotify-XXXXXX", path[64];
    struct sa_err err = {0};
    int fd;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/notify", dir);
    fd = listener(path);
    setenv("NOTIFY_SOCKET", path, 1);
    assert_int_equal(sa_sdnotify("READY=1", &err), SA_OK);
    expect_state(fd, "READY=1");
    close(fd);
    unlink(path);
    rmdir(dir);
}

static void
test_abstract_socket(void **state)
{
    char name[64];
    struct sa_err err = {0};
    int fd;

    (void)state;
    snprintf(name, sizeof(name), "@sendat-test-notify-%d", (int)getpid());
    fd = listener(name);
    setenv("NOTIFY_SOCKET", name, 1);
    assert_int_equal(sa_sdnotify("STOPPING=1", &err), SA_OK);
    expect_state(fd, "STOPPING=1");
    close(fd);
}

static void
test_unset_and_bad(void **state)
{
    struct sa_err err = {0};

    (void)state;
    unsetenv("NOTIFY_SOCKET");
    assert_int_equal(sa_sdnotify("READY=1", &err), SA_OK);
    setenv("NOTIFY_SOCKET", "relative/path", 1);
    assert_int_equal(sa_sdnotify("READY=1", &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "relative/path"));
    setenv("NOTIFY_SOCKET", "/nonexistent-dir/notify", 1);
    err = (struct sa_err){0};
    assert_int_equal(sa_sdnotify("READY=1", &err), SA_ERETRY);
    unsetenv("NOTIFY_SOCKET");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_socket),
        cmocka_unit_test(test_abstract_socket),
        cmocka_unit_test(test_unset_and_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The metadata headers of a task message (consumer/base/relay.c) are not sealed: a replayed task
 * can carry any value, and whatever it carries is read into range before the puller adds to it
 * (issue 11 item 12: Sendat-Moves 2147483647 overflowed pull.c's moves + 1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "relay.h"
#include "timeparse.h"

static void
read_one(const char *moves, const char *moved, struct relay_meta *m)
{
    natsMsg *msg = NULL;

    assert_int_equal(natsMsg_Create(&msg, "sendat.task.1.s.2.x", NULL, "x", 1), NATS_OK);
    assert_int_equal(natsMsgHeader_Set(msg, "Sendat-Scheduled", "1795340000000"), NATS_OK);
    if (moves)
        assert_int_equal(natsMsgHeader_Set(msg, "Sendat-Moves", moves), NATS_OK);
    if (moved)
        assert_int_equal(natsMsgHeader_Set(msg, "Sendat-Moved", moved), NATS_OK);
    relay_meta_read(msg, m);
    natsMsg_Destroy(msg);
}

static void
test_meta_in_range(void **state)
{
    static const char *bad[] = {"2147483647", "-1", "99999999999999999999", "1x", "", "2 ", "1001"};
    static const char *bad_ms[] = {"-1", "99999999999999999999", "9223372036854775807", "1x",
                                   "",   "253402300800000"};
    struct relay_meta m;

    (void)state;
    read_one("2", "1795340100000", &m);
    assert_int_equal(m.scheduled_ms, 1795340000000LL);
    assert_int_equal(m.moves, 2);
    assert_int_equal(m.moved_ms, 1795340100000LL);
    read_one(NULL, NULL, &m);
    assert_int_equal(m.moves, 0);
    assert_int_equal(m.moved_ms, 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        read_one(bad[i], "1795340100000", &m);
        assert_int_equal(m.moves, 0);
    }
    for (size_t i = 0; i < sizeof(bad_ms) / sizeof(bad_ms[0]); i++) {
        read_one("1", bad_ms[i], &m);
        assert_int_equal(m.moved_ms, 0);
    }
    read_one("1000", "253402300799999", &m); /* the ceilings themselves */
    assert_int_equal(m.moves, RELAY_MOVES_MAX);
    assert_int_equal(m.moved_ms, SA_TIME_MAX_MS);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_meta_in_range),
    };
    int rc;

    nats_Open(-1);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    nats_Close();
    return rc;
}

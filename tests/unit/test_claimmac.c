/* Claim and cancel records authenticated with the key ring (issue 37.1): a record made with a
 * key of the ring reads back as what it says; one with no MAC, a MAC of another id, a changed
 * byte or a key the ring lacks reads as junk; a record made under an older key still reads
 * after a rotation; a process without a key cannot write one and reads records unverified.
 * Also what a MAC costs (printed, not asserted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "claim.h"
#include "claimmac.h"

static const uint8_t kids[2][SA_KID_BYTES] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
static uint8_t keys[2][SA_KEY_BYTES];

/* Makes the process's MAC keys those of a ring of keys [from, to). */
static void
use_keys(size_t from, size_t to)
{
    struct sa_keyring *ring = NULL;

    memset(keys[0], 0x11, SA_KEY_BYTES);
    memset(keys[1], 0x22, SA_KEY_BYTES);
    assert_int_equal(sa_keyring_from_keys(&ring, &kids[from],
                                          (const uint8_t(*)[SA_KEY_BYTES]) & keys[from], to - from,
                                          NULL),
                     SA_OK);
    assert_int_equal(sa_claimmac_use(ring, NULL), SA_OK);
    sa_keyring_free(ring);
}

/* The stored bytes of a "sent" claim for key, as sa_claim_message writes them. */
static size_t
stored(const char *key, char *out, size_t cap)
{
    struct sa_claim c = {.state = SA_CLAIM_SENT, .at_ms = 1795340100123LL, .http_status = 200};
    natsMsg *m = NULL;
    size_t len;

    snprintf(c.consumer, sizeof(c.consumer), "c0");
    assert_int_equal(sa_claim_message(&m, "sendat_claims", key, &c, 0, NULL), SA_OK);
    len = (size_t)natsMsg_GetDataLength(m);
    assert_true(len < cap);
    memcpy(out, natsMsg_GetData(m), len);
    out[len] = '\0';
    natsMsg_Destroy(m);
    return len;
}

static void
test_authentic_reads_forged_is_junk(void **state)
{
    static const char forged[] = "{\"state\":\"sent\",\"consumer\":\"forger\",\"http_status\":200}";
    char rec[1024];
    struct sa_claim c;
    struct sa_err err = {0};
    size_t len;

    (void)state;
    use_keys(0, 1);
    len = stored("t1", rec, sizeof(rec));
    assert_int_equal(sa_claim_read(&c, "t1", rec, len, 0, NULL), SA_OK);
    assert_int_equal(c.state, SA_CLAIM_SENT);
    assert_int_equal(c.http_status, 200);
    assert_string_equal(c.consumer, "c0");
    assert_int_equal(c.unverified, 0);
    assert_int_equal(sa_claim_read(&c, "t2", rec, len, 0, &err), SA_ECRYPTO); /* another id */
    assert_int_equal(c.state, SA_CLAIM_JUNK);
    assert_non_null(strstr(c.error, "does not verify"));
    rec[10] ^= 1; /* one changed byte */
    assert_int_equal(sa_claim_read(&c, "t1", rec, len, 0, NULL), SA_ECRYPTO);
    assert_int_equal(sa_claim_read(&c, "t1", forged, strlen(forged), 0, NULL), SA_ECRYPTO);
    assert_int_equal(c.state, SA_CLAIM_JUNK);
    assert_non_null(strstr(c.error, "no MAC"));
    assert_int_equal(sa_claim_read(&c, "t1", "\x01junk", 5, 0, NULL), SA_ECRYPTO);
}

/* Key 0 old, key 1 new: a rotation adds key 1 everywhere, then retires key 0. */
static void
test_rotation_keeps_old_records(void **state)
{
    char old[1024], both[1024], cancel[300];
    struct sa_claim c;
    size_t old_len, both_len;
    int n;

    (void)state;
    use_keys(0, 1);
    old_len = stored("t1", old, sizeof(old)); /* before the rotation: MACed with key 0 */
    n = sa_cancelrec_make(cancel, sizeof(cancel), "t1", "2026-11-28T19:00:00Z");
    assert_true(n > 0);
    use_keys(0, 2); /* key 1 added: records of before still read */
    assert_int_equal(sa_claim_read(&c, "t1", old, old_len, 0, NULL), SA_OK);
    assert_int_equal(sa_cancelrec_check(cancel, (size_t)n, "t1", 0, NULL), SA_OK);
    assert_int_equal(sa_cancelrec_check(cancel, (size_t)n, "t2", 0, NULL), SA_ECRYPTO);
    both_len = stored("t1", both, sizeof(both)); /* MACed with keys 0 and 1 */
    use_keys(0, 1);                              /* a peer that has not loaded key 1 yet reads it */
    assert_int_equal(sa_claim_read(&c, "t1", both, both_len, 0, NULL), SA_OK);
    use_keys(1, 2); /* key 0 retired: what both keys MACed still reads, key 0's alone not */
    assert_int_equal(sa_claim_read(&c, "t1", both, both_len, 0, NULL), SA_OK);
    assert_int_equal(sa_claim_read(&c, "t1", old, old_len, 0, NULL), SA_ECRYPTO);
    assert_non_null(strstr(c.error, "no MAC under a key of the ring"));
    assert_int_equal(sa_cancelrec_check(cancel, (size_t)n, "t1", 0, NULL), SA_ECRYPTO);
    assert_int_equal(sa_cancelrec_check("2026-11-28T19:00:00Z", 20, "t1", 0, NULL), SA_ECRYPTO);
}

static void
test_no_key_writes_nothing(void **state)
{
    char rec[1024], cancel[300];
    struct sa_claim c = {.state = SA_CLAIM_CANCELLED};
    natsMsg *m = NULL;
    size_t len;

    (void)state;
    use_keys(0, 1);
    len = stored("t1", rec, sizeof(rec));
    sa_claimmac_forget();
    assert_int_equal(sa_claimmac_ready(), 0);
    assert_int_equal(sa_claim_message(&m, "sendat_claims", "t1", &c, 0, NULL), SA_ECRYPTO);
    assert_null(m);
    assert_int_equal(sa_cancelrec_make(cancel, sizeof(cancel), "t1", "now"), -1);
    assert_int_equal(sa_claim_read(&c, "t1", rec, len, 0, NULL), SA_OK); /* read, not checked */
    assert_int_equal(c.state, SA_CLAIM_SENT);
    assert_int_equal(c.unverified, 1);
}

/* Upgrading (issue 37.1): a record without a MAC that the server stored before the layout's
 * MAC mark is an older version's and reads as what it says; one stored at or after the mark,
 * or at an unknown time, is junk. A record with a MAC that fails is junk at any time. */
static void
test_older_versions_records(void **state)
{
    static const char claim[] = "{\"state\":\"cancelled\",\"at\":1795340000000}";
    static const char cancel[] = "2026-11-28T19:00:00.000Z";
    const int64_t mark = 1795340100000;
    char rec[1024];
    struct sa_claim c;
    size_t len;

    (void)state;
    use_keys(0, 1);
    len = stored("t1", rec, sizeof(rec));
    rec[len - 5] ^= 1; /* a MAC that fails */
    sa_claimmac_trust_before(mark);
    assert_int_equal(sa_claim_read(&c, "t1", claim, strlen(claim), mark - 1, NULL), SA_OK);
    assert_int_equal(c.state, SA_CLAIM_CANCELLED);
    assert_int_equal(sa_cancelrec_check(cancel, strlen(cancel), "t1", mark - 1, NULL), SA_OK);
    assert_int_equal(sa_claim_read(&c, "t1", claim, strlen(claim), mark, NULL), SA_ECRYPTO);
    assert_int_equal(sa_claim_read(&c, "t1", claim, strlen(claim), 0, NULL), SA_ECRYPTO);
    assert_int_equal(sa_cancelrec_check(cancel, strlen(cancel), "t1", mark, NULL), SA_ECRYPTO);
    assert_int_equal(sa_claim_read(&c, "t1", rec, len, mark - 1, NULL), SA_ECRYPTO);
    sa_claimmac_trust_before(0); /* a layout without a mark trusts nothing */
    assert_int_equal(sa_claim_read(&c, "t1", claim, strlen(claim), mark - 1, NULL), SA_ECRYPTO);
}

/* The cost of one MAC made and checked over a claim record (printed for docs/design-notes.md). */
static void
test_cost(void **state)
{
    char rec[1024];
    struct sa_claim c;
    struct timespec a, b;
    size_t len;
    enum { ROUNDS = 20000 };

    (void)state;
    use_keys(0, 2);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < ROUNDS; i++) {
        len = stored("sendat-claim-cost-id", rec, sizeof(rec));
        assert_int_equal(sa_claim_read(&c, "sendat-claim-cost-id", rec, len, 0, NULL), SA_OK);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    fprintf(stderr, "claim record written and read with its MAC: %.2f us each (%zu bytes)\n",
            ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / ROUNDS /
                1000.0,
            len);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < ROUNDS; i++) { /* the MAC alone: made and checked */
        char mac[SA_CLAIMMAC_MAX + 1];

        assert_int_equal(sa_claimmac_make(mac, "claim", "id", rec, len, NULL), SA_OK);
        assert_int_equal(sa_claimmac_check(mac, strlen(mac), "claim", "id", rec, len, NULL), SA_OK);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    fprintf(stderr, "its MAC alone, made and checked: %.2f us\n",
            ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / ROUNDS /
                1000.0);
    sa_claimmac_forget();
}

int
main(void)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_authentic_reads_forged_is_junk),
        cmocka_unit_test(test_rotation_keeps_old_records),
        cmocka_unit_test(test_no_key_writes_nothing),
        cmocka_unit_test(test_older_versions_records),
        cmocka_unit_test(test_cost),
    };

    int failed;

    nats_Open(-1); /* natsMsg_Destroy needs the library's state */
    failed = cmocka_run_group_tests(tests, NULL, NULL);
    nats_Close();
    return failed;
}

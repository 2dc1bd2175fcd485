/* The webhook address policy: the built-in deny list, `private`, ALLOW over DENY, IPv4-mapped
 * IPv6 judged as IPv4, and literal hosts in every form curl accepts. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "netpolicy.h"

/* 1 if p allows the textual address s (IPv4 or IPv6). */
static int
allows(const struct sa_netpolicy *p, const char *s)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};

    if (inet_pton(AF_INET, s, &sin.sin_addr) == 1)
        return sa_netpolicy_allows(p, (struct sockaddr *)&sin);
    assert_int_equal(inet_pton(AF_INET6, s, &sin6.sin6_addr), 1);
    return sa_netpolicy_allows(p, (struct sockaddr *)&sin6);
}

static struct sa_netpolicy *
policy(const char *allow, const char *deny)
{
    struct sa_netpolicy *p = NULL;
    struct sa_err err = {0};

    assert_int_equal(sa_netpolicy_new(&p, allow, deny, &err), SA_OK);
    return p;
}

static void
test_defaults(void **state)
{
    static const char *refused[] = {
        "169.254.169.254", "fd00:ec2::254", "100.100.100.200", "0.0.0.0", "0.1.2.3", "224.0.0.1",
        "239.255.255.250", "255.255.255.255", "fe80::1", "ff02::1", "::", "::ffff:169.254.169.254",
        "::ffff:0.0.0.0",
        /* IPv4 inside IPv6 (NAT64, 6to4, compatible, SIIT) */
        "64:ff9b::a9fe:a9fe", "64:ff9b::169.254.169.254", "2002:a9fe:a9fe::1", "::169.254.169.254",
        "::ffff:0:169.254.169.254", "64:ff9b::e000:1",
        /* and to a public IPv4 address: a translator on the network would take them (37.12) */
        "64:ff9b::5db8:d822", "2002:5db8:d822::1", "::ffff:0:8.8.8.8", "64:ff9b::7f00:1",
        /* the rest of the IANA registries' special addresses */
        "240.0.0.1", "192.0.2.1", "198.51.100.7", "203.0.113.9", "100::1", "2001::1", "2001:db8::1",
        "3fff::1", "5f00::1"};
    static const char *allowed[] = {
        "127.0.0.1",       "::1",         "10.1.2.3",       "192.168.1.1",
        "100.64.0.1",      "fd00::1",     "93.184.216.34",  "2606:2800:220:1::1",
        "100.100.100.201", "169.255.0.1", "2001:4860::8888"};
    struct sa_netpolicy *p = policy(NULL, "");

    (void)state;
    for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
        assert_false(allows(p, refused[i]));
    for (size_t i = 0; i < sizeof(allowed) / sizeof(*allowed); i++)
        assert_true(allows(p, allowed[i]));
    sa_netpolicy_free(p);
}

static void
test_private_and_allow(void **state)
{
    static const char *priv[] = {"10.0.0.1",
                                 "172.16.0.1",
                                 "172.31.255.255",
                                 "192.168.0.1",
                                 "127.0.0.1",
                                 "127.255.0.9",
                                 "::1",
                                 "100.64.0.1",
                                 "100.127.255.254",
                                 "fc00::1",
                                 "fd12:3456::1",
                                 "::ffff:127.0.0.1",
                                 "::ffff:10.9.8.7",
                                 "64:ff9b::a00:1",
                                 "64:ff9b::7f00:1",
                                 "2002:c0a8:101::1",
                                 "::10.0.0.1",
                                 "::127.0.0.1",
                                 "::ffff:0:192.168.0.1",
                                 "64:ff9b:1::a00:1",
                                 "192.0.0.9",
                                 "198.18.0.1",
                                 "2001:2::1"};
    static const char *public[] = {"172.32.0.1", "100.128.0.1", "11.0.0.1", "fe00::1", "8.8.8.8"};
    struct sa_netpolicy *p = policy(NULL, "private");
    struct sa_netpolicy *q = policy("127.0.0.1/32, 169.254.169.254", "private 8.8.8.0/24");

    (void)state;
    for (size_t i = 0; i < sizeof(priv) / sizeof(*priv); i++)
        assert_false(allows(p, priv[i]));
    for (size_t i = 0; i < sizeof(public) / sizeof(*public); i++)
        assert_true(allows(p, public[i]));
    assert_true(allows(q, "127.0.0.1"));        /* ALLOW wins over DENY */
    assert_true(allows(q, "::ffff:127.0.0.1")); /* the same address */
    assert_true(allows(q, "169.254.169.254"));  /* and over the built-in list */
    assert_false(allows(q, "127.0.0.2"));
    assert_false(allows(q, "::1"));
    assert_false(allows(q, "8.8.8.8"));
    assert_true(allows(q, "8.8.9.8"));
    /* a translation form is not the IPv4 address inside: routed to a gateway (issue 37.12) */
    assert_false(allows(q, "64:ff9b::7f00:1"));
    assert_false(allows(q, "2002:a9fe:a9fe::"));
    assert_false(allows(q, "64:ff9b::808:808"));
    sa_netpolicy_free(p);
    sa_netpolicy_free(q);
    /* ALLOW naming the range opens it, but not to an address the lists refuse */
    q = policy("64:ff9b::/96", "private");
    assert_true(allows(q, "64:ff9b::808:808"));
    assert_false(allows(q, "64:ff9b::a9fe:a9fe"));
    assert_false(allows(q, "64:ff9b::a00:1"));
    assert_false(allows(q, "2002:808:808::1"));
    sa_netpolicy_free(q);
}

static void
test_bad_lists(void **state)
{
    static const char *bad[] = {"10.0.0.0/33", "10.0.0.0/", "10.0.0/8",    "private,x",
                                "::1/129",     "/8",        "10.0.0.0/8x", "localhost"};
    struct sa_netpolicy *p = NULL;
    struct sa_err err = {0};

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        sa_err_clear(&err);
        assert_int_equal(sa_netpolicy_new(&p, NULL, bad[i], &err), SA_EINVAL);
        assert_null(p);
        assert_non_null(strstr(err.msg, "SENDAT_WEBHOOK_DENY"));
    }
    sa_err_clear(&err);
    assert_int_equal(sa_netpolicy_new(&p, "10.0.0.1/32 nope", NULL, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "SENDAT_WEBHOOK_ALLOW: \"nope\""));
    assert_int_equal(sa_netpolicy_new(&p, " , ", ",,\t", NULL), SA_OK); /* empty lists */
    sa_netpolicy_free(p);
}

static void
test_literal_urls(void **state)
{
    static const char *loopback[] = {"http://127.0.0.1:8080/",    "http://2130706433/",
                                     "http://0x7f000001:80/x",    "http://127.1/",
                                     "http://0177.0.0.1/",        "http://[::ffff:127.0.0.1]/",
                                     "http://[::ffff:7f00:1]:9/", "https://[::1]/",
                                     "http://127.0.0.1./"};
    struct sa_netpolicy *d = policy(NULL, NULL), *p = policy(NULL, "private");
    struct sa_err err = {0};

    (void)state;
    assert_int_equal(sa_netpolicy_check_url(d, "http://169.254.169.254/latest/meta-data/", &err),
                     SA_EINVAL);
    assert_non_null(strstr(err.msg, "refused by the webhook address policy"));
    assert_int_equal(sa_netpolicy_check_url(d, "http://[fd00:ec2::254]/", NULL), SA_EINVAL);
    assert_int_equal(sa_netpolicy_check_url(d, "http://100.100.100.200/", NULL), SA_EINVAL);
    assert_int_equal(sa_netpolicy_check_url(d, "http://[fe80::1%25eth0]/", NULL), SA_EINVAL);
    assert_int_equal(sa_netpolicy_check_url(d, "http://0x7f000001/", NULL), SA_OK);
    assert_int_equal(sa_netpolicy_check_url(d, "http://[64:ff9b::a9fe:a9fe]/", NULL), SA_EINVAL);
    assert_int_equal(sa_netpolicy_check_url(p, "http://[64:ff9b::a9fe:a9fe]/", NULL), SA_EINVAL);
    assert_int_equal(sa_netpolicy_check_url(p, "http://[2002:7f00:1::]/", NULL), SA_EINVAL);
    for (size_t i = 0; i < sizeof(loopback) / sizeof(*loopback); i++)
        assert_int_equal(sa_netpolicy_check_url(p, loopback[i], NULL), SA_EINVAL);
    /* names are judged where they resolve, at connect time */
    assert_int_equal(sa_netpolicy_check_url(p, "http://localhost/", NULL), SA_OK);
    assert_int_equal(sa_netpolicy_check_url(p, "http://metadata.google.internal/", NULL), SA_OK);
    assert_int_equal(sa_netpolicy_check_url(p, "https://example.org/hook", NULL), SA_OK);
    sa_netpolicy_free(d);
    sa_netpolicy_free(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_private_and_allow),
        cmocka_unit_test(test_bad_lists),
        cmocka_unit_test(test_literal_urls),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The webhook address policy (issue 11, item 5): a producer may name any host, so the
 * consumer must not become its way into the consumers' network. Every address is kept as
 * 16 bytes, IPv4 as ::ffff:a.b.c.d, so one comparison serves both families and an
 * IPv4-mapped IPv6 address is judged as the IPv4 address it reaches. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "netpolicy.h"

/* The IANA special-purpose address registries (IPv4 and IPv6) are the reference: each entry
 * not globally reachable is in one of the two lists below. `private` holds the inside
 * networks: RFC 1918, loopback, CGNAT (RFC 6598), ULA (RFC 4193), the IETF protocol
 * assignments 192.0.0.0/24, benchmarking (RFC 2544, RFC 5180) and local-use NAT64 (RFC 8215,
 * whose IPv4 address sits where its prefix length puts it, so it is judged as a whole). */
static const char private_nets[] =
    "10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 127.0.0.0/8 ::1/128 100.64.0.0/10 fc00::/7 "
    "192.0.0.0/24 198.18.0.0/15 2001:2::/48 64:ff9b:1::/48";

/* Refused unless ALLOW names them: this network (0/8), link-local (where the AWS, GCP and
 * Azure metadata services answer), the Alibaba and AWS IPv6 metadata addresses, multicast,
 * broadcast, reserved 240/4, the documentation ranges, discard-only 100::/64, Teredo
 * (2001::/32, an obfuscated IPv4 inside), SRv6 SIDs and the unspecified IPv6 address. The
 * translation prefixes that carry an IPv4 address are refused unless ALLOW names them
 * (embedded_v4). */
static const char default_deny[] =
    "0.0.0.0/8 169.254.0.0/16 100.100.100.200/32 224.0.0.0/4 240.0.0.0/4 255.255.255.255/32 "
    "192.0.2.0/24 198.51.100.0/24 203.0.113.0/24 fe80::/10 fd00:ec2::254/128 ff00::/8 ::/128 "
    "100::/64 2001::/32 2001:db8::/32 3fff::/20 5f00::/16";

struct net {
    uint8_t a[16];
    int bits; /* of the 128 */
};

struct list {
    struct net *v;
    size_t len, cap;
};

struct sa_netpolicy {
    struct list allow, deny;
};

static void
map_v4(uint8_t out[16], const void *v4)
{
    memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    memcpy(out + 12, v4, 4);
}

static int
contains(const struct net *n, const uint8_t a[16])
{
    int whole = n->bits / 8, rest = n->bits % 8;

    if (memcmp(n->a, a, (size_t)whole) != 0)
        return 0;
    return rest == 0 || ((n->a[whole] ^ a[whole]) & (0xff << (8 - rest)) & 0xff) == 0;
}

static int
list_has(const struct list *l, const uint8_t a[16])
{
    for (size_t i = 0; i < l->len; i++)
        if (contains(&l->v[i], a))
            return 1;
    return 0;
}

static enum sa_code
list_push(struct list *l, const struct net *n, const char *var, struct sa_err *err)
{
    struct net *v;

    if (l->len == SA_NETPOLICY_MAX)
        return sa_fail(err, SA_EINVAL, "%s: more than %d entries", var, SA_NETPOLICY_MAX);
    if (l->len == l->cap) {
        v = realloc(l->v, (l->cap ? l->cap * 2 : 16) * sizeof(*v));
        if (!v)
            return sa_fail(err, SA_ENOMEM, "no memory for %s", var);
        l->v = v;
        l->cap = l->cap ? l->cap * 2 : 16;
    }
    l->v[l->len++] = *n;
    return SA_OK;
}

/* "a.b.c.d[/bits]" or "v6[/bits]" into n; -1 if it is neither. */
static int
parse_net(const char *tok, struct net *n)
{
    char addr[64], *end = NULL;
    const char *slash = strchr(tok, '/');
    size_t len = slash ? (size_t)(slash - tok) : strlen(tok);
    uint8_t v4[4];
    long bits;
    int max;

    if (len == 0 || len >= sizeof(addr))
        return -1;
    memcpy(addr, tok, len);
    addr[len] = '\0';
    if (inet_pton(AF_INET, addr, v4) == 1) {
        map_v4(n->a, v4);
        max = 32;
    } else if (inet_pton(AF_INET6, addr, n->a) == 1) {
        max = 128;
    } else {
        return -1;
    }
    bits = max;
    if (slash &&
        (!slash[1] || (bits = strtol(slash + 1, &end, 10), *end) || bits < 0 || bits > max))
        return -1;
    n->bits = (int)bits + (128 - max);
    return 0;
}

/* Adds every entry of text (commas or white space between them) to l. */
static enum sa_code
list_add(struct list *l, const char *text, const char *var, struct sa_err *err)
{
    char tok[80];
    struct net n;
    enum sa_code rc;
    size_t len;

    for (const char *p = text; p && *p; p += len) {
        p += strspn(p, ", \t\n");
        len = strcspn(p, ", \t\n");
        if (len == 0)
            break;
        if (len >= sizeof(tok))
            return sa_fail(err, SA_EINVAL, "%s: \"%.40s...\" is too long for an entry", var, p);
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (!strcmp(tok, "private"))
            rc = list_add(l, private_nets, var, err);
        else if (parse_net(tok, &n) != 0)
            rc = sa_fail(err, SA_EINVAL, "%s: \"%s\" is not an address, address/bits or private",
                         var, tok);
        else
            rc = list_push(l, &n, var, err);
        if (rc != SA_OK)
            return rc;
    }
    return SA_OK;
}

enum sa_code
sa_netpolicy_new(struct sa_netpolicy **out, const char *allow, const char *deny, struct sa_err *err)
{
    struct sa_netpolicy *p = calloc(1, sizeof(*p));
    enum sa_code rc;

    *out = NULL;
    if (!p)
        return sa_fail(err, SA_ENOMEM, "no memory for the webhook address policy");
    rc = list_add(&p->allow, allow, "SENDAT_WEBHOOK_ALLOW", err);
    if (rc == SA_OK)
        rc = list_add(&p->deny, deny, "SENDAT_WEBHOOK_DENY", err);
    if (rc == SA_OK)
        rc = list_add(&p->deny, default_deny, "the built-in deny list", err);
    if (rc != SA_OK) {
        sa_netpolicy_free(p);
        return rc;
    }
    *out = p;
    return SA_OK;
}

void
sa_netpolicy_free(struct sa_netpolicy *p)
{
    if (!p)
        return;
    free(p->allow.v);
    free(p->deny.v);
    free(p);
}

/* The IPv6 forms that carry an IPv4 address for a translator on the network: NAT64's
 * well-known prefix 64:ff9b::/96 (RFC 6052), IPv4-compatible ::/96 (RFC 4291, not :: or ::1),
 * SIIT's ::ffff:0:0:0/96 (RFC 2765) and 6to4 2002::/16 (RFC 3056, the address in bytes 2-5).
 * The kernel routes them as IPv6, to whatever gateway the network has, never to the IPv4
 * address inside ([64:ff9b::7f00:1] is not this host's loopback), so they are judged neither
 * as that address nor as a plain IPv6 one. Only ::ffff:a.b.c.d (IPv4-mapped) is connected as
 * IPv4, and is kept as that address from the start (map_v4). */
static const struct embedding {
    uint8_t prefix[12];
    int bytes; /* of prefix to compare */
    int at;    /* where the IPv4 address starts */
} embeddings[] = {
    {{0x00, 0x64, 0xff, 0x9b}, 12, 12},
    {{0}, 12, 12},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}, 12, 12},
    {{0x20, 0x02}, 2, 2},
};

/* 1 and the IPv4 address a carries (as ::ffff:a.b.c.d) in v4, or 0. */
static int
embedded_v4(const uint8_t a[16], uint8_t v4[16])
{
    static const uint8_t low[15] = {0};

    for (size_t i = 0; i < sizeof(embeddings) / sizeof(*embeddings); i++) {
        const struct embedding *e = &embeddings[i];
        if (memcmp(a, e->prefix, (size_t)e->bytes) != 0)
            continue;
        if (i == 1 && !memcmp(a, low, sizeof(low)) && a[15] <= 1)
            return 0; /* :: and ::1 are themselves */
        map_v4(v4, a + e->at);
        return 1;
    }
    return 0;
}

/* A translation form (embedded_v4) passes only where ALLOW names its range, and even then
 * not to an IPv4 address the lists refuse: a NAT64 gateway would reach it. */
static int
allows16(const struct sa_netpolicy *p, const uint8_t a[16])
{
    uint8_t v4[16];

    if (embedded_v4(a, v4))
        return list_has(&p->allow, a) && (list_has(&p->allow, v4) || !list_has(&p->deny, v4));
    if (list_has(&p->allow, a))
        return 1;
    return !list_has(&p->deny, a);
}

int
sa_netpolicy_allows(const struct sa_netpolicy *p, const struct sockaddr *addr)
{
    uint8_t a[16];

    if (addr->sa_family == AF_INET)
        map_v4(a, &((const struct sockaddr_in *)addr)->sin_addr);
    else if (addr->sa_family == AF_INET6)
        memcpy(a, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
    else
        return 0;
    return allows16(p, a);
}

/* The literal address a host names, as 16 bytes; -1 for a name. curl has already turned
 * 0x7f000001, 2130706433 and 127.1 into 127.0.0.1; inet_aton reads those forms too, should
 * another curl leave them. */
static int
literal(const char *host, uint8_t a[16])
{
    char buf[64];
    size_t len = strlen(host);
    struct in_addr v4;

    if (len >= sizeof(buf))
        return -1;
    if (host[0] == '[' && len > 2 && host[len - 1] == ']') {
        memcpy(buf, host + 1, len - 2);
        buf[len - 2] = '\0';
        return inet_pton(AF_INET6, buf, a) == 1 ? 0 : -1;
    }
    memcpy(buf, host, len + 1);
    if (len > 1 && buf[len - 1] == '.')
        buf[len - 1] = '\0'; /* "127.0.0.1." */
    if (inet_aton(buf, &v4) == 0)
        return -1;
    map_v4(a, &v4);
    return 0;
}

enum sa_code
sa_netpolicy_check_url(const struct sa_netpolicy *p, const char *url, struct sa_err *err)
{
    CURLU *u = curl_url();
    char *host = NULL;
    uint8_t a[16];
    enum sa_code rc = SA_OK;

    if (!u)
        return sa_fail(err, SA_ENOMEM, "no memory to parse a URL");
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        rc = sa_fail(err, SA_EINVAL, "webhook URL \"%.100s\" does not parse%s", url,
                     strstr(url, "://") ? "" : ": want http:// or https://");
    else if (literal(host, a) == 0 && !allows16(p, a))
        rc = sa_fail(
            err, SA_EINVAL,
            "webhook address %.70s is refused by the webhook address policy "
            "(SENDAT_WEBHOOK_DENY and the built-in deny list; SENDAT_WEBHOOK_ALLOW opens it)",
            host);
    curl_free(host);
    curl_url_cleanup(u);
    return rc;
}

/* Limits are checked in the sending thread right before a send starts; a send that may not
 * start yet goes back into the wheel for later, so nothing waits while holding a connection.
 * Fleet leases are KV keys created only if absent (the claim mechanism again); the bucket's
 * TTL frees a lease whose holder died. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostlimits.h"

#define RULES_MAX 32
#define HOSTS_MAX 1024
#define FLEET_MAX 64
#define RATE_MIN (1.0 / 3600) /* sends per second: one an hour */
#define RATE_MAX 1e6

struct rule {
    char pattern[128];
    int concurrency; /* per consumer, 0: none */
    double rate;     /* sends per second, 0: none */
    int fleet;       /* fleet-wide concurrency, 0: none */
};

struct host {
    char name[256];
    const struct rule *rule;
    int inflight;
    double tokens;
    int64_t refilled_ms;
};

struct limits {
    struct rule rules[RULES_MAX];
    int n_rules;
    struct rule fallback; /* hosts no rule names: SENDAT_HOST_MAX_INFLIGHT, 0: none */
    char exempt[256];     /* a host the fallback leaves alone (the SMTP server), "" if none */
    struct host hosts[HOSTS_MAX];
    int n_hosts;
    kvStore *leases;
    char consumer[64];
};

static enum sa_code
parse_setting(struct rule *r, const char *kv, struct sa_err *err)
{
    char unit = 0;
    double v;
    int end = 0; /* %n: how far the pattern matched; a setting must match to its end */

    if (sscanf(kv, "concurrency:%d%n", &r->concurrency, &end) == 1 && !kv[end] &&
        r->concurrency > 0)
        return SA_OK;
    end = 0;
    if (sscanf(kv, "fleet:%d%n", &r->fleet, &end) == 1 && !kv[end] && r->fleet > 0 &&
        r->fleet <= FLEET_MAX)
        return SA_OK;
    end = 0;
    if (sscanf(kv, "rate:%lf/%c%n", &v, &unit, &end) == 2 && !kv[end] &&
        (unit == 's' || unit == 'm')) {
        r->rate = unit == 's' ? v : v / 60.0;
        /* false for NaN too: no wait computed from the rate can pass int64 */
        if (r->rate >= RATE_MIN && r->rate <= RATE_MAX)
            return SA_OK;
    }
    return sa_fail(err, SA_EINVAL,
                   "SENDAT_HOST_LIMITS: \"%.60s\" is not concurrency:N, rate:N/s, rate:N/m "
                   "or fleet:N (N up to %d, a rate from 1/h to 1000000/s)",
                   kv, FLEET_MAX);
}

static enum sa_code
parse_rule(struct limits *l, char *text, struct sa_err *err)
{
    char *eq = strchr(text, '='), *save = NULL;
    struct rule *r = &l->rules[l->n_rules];
    enum sa_code rc = SA_OK;

    if (!eq || eq == text || (size_t)(eq - text) >= sizeof(r->pattern))
        return sa_fail(err, SA_EINVAL, "SENDAT_HOST_LIMITS: \"%.60s\" is not host=settings", text);
    if (l->n_rules == RULES_MAX)
        return sa_fail(err, SA_EINVAL, "SENDAT_HOST_LIMITS: more than %d rules", RULES_MAX);
    memset(r, 0, sizeof(*r));
    snprintf(r->pattern, sizeof(r->pattern), "%.*s", (int)(eq - text), text);
    for (char *kv = strtok_r(eq + 1, ",", &save); rc == SA_OK && kv;
         kv = strtok_r(NULL, ",", &save))
        rc = parse_setting(r, kv, err);
    if (rc == SA_OK)
        l->n_rules++;
    return rc;
}

enum sa_code
limits_new(struct limits **out, const char *spec, const char *consumer_name, struct sa_err *err)
{
    struct limits *l = calloc(1, sizeof(*l));
    char *copy = strdup(spec ? spec : ""), *save = NULL;
    enum sa_code rc = (l && copy) ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory for limits");

    for (char *tok = copy ? strtok_r(copy, "; \t\n", &save) : NULL; rc == SA_OK && tok;
         tok = strtok_r(NULL, "; \t\n", &save))
        rc = parse_rule(l, tok, err);
    free(copy);
    if (rc != SA_OK) {
        free(l);
        return rc;
    }
    snprintf(l->consumer, sizeof(l->consumer), "%s", consumer_name);
    *out = l;
    return SA_OK;
}

void
limits_free(struct limits *l)
{
    free(l);
}

int
limits_need_leases(const struct limits *l)
{
    for (int i = 0; i < l->n_rules; i++)
        if (l->rules[i].fleet)
            return 1;
    return 0;
}

void
limits_set_default(struct limits *l, int concurrency, const char *exempt)
{
    snprintf(l->fallback.pattern, sizeof(l->fallback.pattern), "*");
    l->fallback.concurrency = concurrency > 0 ? concurrency : 0;
    snprintf(l->exempt, sizeof(l->exempt), "%s", exempt ? exempt : "");
}

/* A free place in the host table: an unused one, else one of a host under the fallback cap with
 * nothing in flight (it holds no tokens or leases, so forgetting it loses nothing). */
static struct host *
host_slot(struct limits *l)
{
    if (l->n_hosts < HOSTS_MAX)
        return &l->hosts[l->n_hosts++];
    for (int i = 0; i < HOSTS_MAX; i++)
        if (l->hosts[i].rule == &l->fallback && l->hosts[i].inflight == 0)
            return &l->hosts[i];
    return NULL;
}

void
limits_set_leases(struct limits *l, kvStore *kv)
{
    l->leases = kv;
}

static struct host *
host_of(struct limits *l, const char *name)
{
    const struct rule *rule = NULL;
    struct host *h;

    for (int i = 0; i < l->n_hosts; i++)
        if (!strcmp(l->hosts[i].name, name))
            return &l->hosts[i];
    for (int i = 0; i < l->n_rules && !rule; i++)
        if (fnmatch(l->rules[i].pattern, name, FNM_CASEFOLD) == 0)
            rule = &l->rules[i];
    if (!rule && l->fallback.concurrency && strcasecmp(name, l->exempt) != 0)
        rule = &l->fallback;
    if (!rule || !(h = host_slot(l)))
        return NULL; /* no rule: no limit */
    memset(h, 0, sizeof(*h));
    snprintf(h->name, sizeof(h->name), "%s", name);
    h->rule = rule;
    h->tokens = rule->rate > 1 ? rule->rate : 1;
    return h;
}

static void
lease_key(char *out, size_t cap, const char *host, int i)
{
    size_t n = (size_t)snprintf(out, cap, "%s.%d", host, i);

    for (size_t k = 0; k < n && k < cap; k++)
        if (!strchr("-_=.", out[k]) &&
            !((out[k] >= 'a' && out[k] <= 'z') || (out[k] >= 'A' && out[k] <= 'Z') ||
              (out[k] >= '0' && out[k] <= '9')))
            out[k] = '_';
}

static int
take_lease(struct limits *l, const struct host *h)
{
    char key[300];
    uint64_t rev;

    for (int i = 0; l->leases && i < h->rule->fleet; i++) {
        lease_key(key, sizeof(key), h->name, i);
        if (kvStore_CreateString(&rev, l->leases, key, l->consumer) == NATS_OK)
            return i;
    }
    return -1;
}

static int
refill(struct host *h, int64_t now_ms, int64_t *retry_at_ms)
{
    double burst = h->rule->rate > 1 ? h->rule->rate : 1;

    if (!h->rule->rate)
        return 1;
    h->tokens += (double)(now_ms - h->refilled_ms) * h->rule->rate / 1000.0;
    h->refilled_ms = now_ms;
    if (h->tokens > burst)
        h->tokens = burst;
    if (h->tokens >= 1)
        return 1;
    *retry_at_ms = now_ms + (int64_t)((1 - h->tokens) * 1000.0 / h->rule->rate) + 1;
    return 0;
}

int
limits_acquire(struct limits *l, const char *host, int64_t now_ms, int64_t *retry_at_ms, int *lease)
{
    struct host *h = host_of(l, host);

    *lease = -1;
    if (!h)
        return 1;
    *retry_at_ms = now_ms + 20; /* a slot frees when a send ends: look again soon */
    if (h->rule->concurrency && h->inflight >= h->rule->concurrency)
        return 0;
    if (!refill(h, now_ms, retry_at_ms))
        return 0;
    if (h->rule->fleet && (*lease = take_lease(l, h)) < 0) {
        *retry_at_ms = now_ms + 50;
        return 0;
    }
    if (h->rule->rate)
        h->tokens -= 1;
    h->inflight++;
    return 1;
}

void
limits_release(struct limits *l, const char *host, int lease)
{
    struct host *h = host_of(l, host);
    char key[300];

    if (!h)
        return;
    if (h->inflight > 0)
        h->inflight--;
    if (lease >= 0 && l->leases) {
        lease_key(key, sizeof(key), h->name, lease);
        kvStore_Delete(l->leases, key);
    }
}

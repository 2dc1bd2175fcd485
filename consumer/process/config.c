/* The consumer is configured by environment variables only (containers), each with a
 * documented default; a bad value stops it at start with the variable named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "claimmac.h"
#include "config.h"
#include "keywait.h"
#include "sign.h"
#include "smtp.h"
#include "log.h"
#include "timeparse.h"

static const char usage[] =
    "usage: sendat-consumer [--help | --version]\n"
    "A daemon: pulls due tasks from NATS JetStream and sends them. Configured by environment:\n"
    "  SENDAT_NATS_URL            server URL(s), comma-separated (default " SA_DEFAULT_URL ")\n"
    "  SENDAT_NATS_CREDS, SENDAT_NATS_NKEY, SENDAT_NATS_USER, SENDAT_NATS_PASSWORD,\n"
    "  SENDAT_NATS_TOKEN, SENDAT_NATS_CA, SENDAT_NATS_CERT, SENDAT_NATS_KEY   credentials, TLS\n"
    "  SENDAT_NATS_INBOX_PREFIX   where replies and pulled tasks arrive (default\n"
    "                             _INBOX_sendat_consumer, the consumer role's own)\n"
    "  SENDAT_KEY_FILE            key ring to open tasks with (required)\n"
    "  SENDAT_CONSUMER_NAME       name in claims and logs (default hostname-pid)\n"
    "  SENDAT_MAX_INFLIGHT        sends in flight at once (default 256)\n"
    "  SENDAT_HTTP_TIMEOUT        one webhook request's time limit (default 10s)\n"
    "  SENDAT_CLAIM_LEAD_MS       claim a task this long (and up to a quarter more) before it\n"
    "                             is due, send on the dot\n"
    "                             (default 50; a cancel in that time is too late; 0: off)\n"
    "  SENDAT_FETCH_BATCH         tasks per pull request (default 64; smaller shares a\n"
    "                             burst more evenly across the fleet)\n"
    "  SENDAT_RETRY_ATTEMPTS      attempts before the dead letter (default 5)\n"
    "  SENDAT_RETRY_BASE_MS       first backoff, doubled each attempt, full jitter (default 1000)\n"
    "  SENDAT_RETRY_MAX_MS        longest backoff (default 300000)\n"
    "  SENDAT_DRAIN_TIMEOUT       SIGTERM grace for sends in flight (default 20s)\n"
    "  SENDAT_MAX_HELD            tasks held in memory at once (default 200000)\n"
    "  SENDAT_MAX_ACK_PENDING     tasks the fleet may hold unacked from one level (the\n"
    "                             MaxAckPending of the level durables this member makes;\n"
    "                             default 100000)\n"
    "  SENDAT_WEBHOOK_SECRET_FILE the same keys from a file, read again on SIGHUP\n"
    "  SENDAT_WEBHOOK_SECRET      Standard Webhooks keys, space-separated: whsec_<base64> (v1,\n"
    "                             HMAC-SHA256) and/or whsk_<base64 seed> (v1a, Ed25519); each "
    "signs\n"
    "  SENDAT_WEBHOOK_DENY        addresses webhooks may not reach: CIDR list, `private` = RFC "
    "1918,\n"
    "                             loopback, CGNAT, ULA (e.g. \"private\" for multi-tenant use);\n"
    "                             link-local, metadata, 0.0.0.0/8, multicast, reserved and\n"
    "                             documentation ranges are refused too; NAT64, 6to4 and other\n"
    "                             IPv6 forms of an IPv4 address are judged as that address\n"
    "  SENDAT_WEBHOOK_ALLOW       CIDR list allowed although denied (wins over both lists)\n"
    ""; /* two strings: ISO C promises string literals of 4,095 characters, no more */
static const char usage_smtp_on[] =
    "  SENDAT_SMTP_URL            smtp://host:587 (STARTTLS required) or smtps://host:465\n"
    "                             (unset: webhooks only, email left to members with it)\n"
    "  SENDAT_SMTP_USER, SENDAT_SMTP_PASSWORD   SMTP login\n"
    "  SENDAT_SMTP_FROM           From when a task has none\n"
    "  SENDAT_SMTP_EHLO           name to greet the server with (default: this host's)\n"
    "  SENDAT_SMTP_CA_FILE        CA bundle to verify the server with\n"
    "  SENDAT_SMTP_TLS            required (default) | off (refused unless the server is "
    "loopback)\n"
    "  SENDAT_MAX_HOST_CONNECTIONS  connections to one host at once (default 0: no cap)\n"
    "  SENDAT_HOST_MAX_INFLIGHT   sends in flight to one host no SENDAT_HOST_LIMITS rule names\n"
    "                             (default: half of SENDAT_MAX_INFLIGHT; 0: no cap)\n"
    "  SENDAT_HOST_LIMITS         per destination host (glob): concurrency:N (this consumer),\n"
    "                             rate:N/s or N/m (this consumer), fleet:N (whole fleet, exact);\n"
    "                             e.g. \"api.pay.example=fleet:3;*.example.org=rate:50/s\"\n"
    "  SENDAT_UNKNOWN_KEY_WAIT    how long a task sealed with a key id no member has loaded is\n"
    "                             handed around (a rotation in progress) before it is a dead\n"
    "                             letter naming the key (default 1h)\n"
    "  SENDAT_SWEEP_INTERVAL      how often the fleet looks for tasks no level will read (bad\n"
    "                             subjects, windows behind the catch-up cursor) and dead-letters\n"
    "                             them; one member per turn (default 60s; off: never)\n"
    "  SENDAT_LEADER_BALANCE      how often the fleet looks whether one server leads more of\n"
    "                             the shards' task streams or claims buckets than its share\n"
    "                             and moves one leader to a server leading fewer (a failover\n"
    "                             moved them); one member per turn (default 60s; off: never)\n"
    "  SENDAT_MARKS_KEEP          how long a slot's level mark outlives the slot (default 60s;\n"
    "                             the clock skew between members it covers; the same on each)\n"
    "  SENDAT_SHARDS              the shards this consumer pulls and sweeps: numbers and ranges\n"
    "                             like \"0,2,4-7\" (default: every shard of `sendat init "
    "--shards`;\n"
    "                             a shard nobody serves is never sent)\n"
    "  SENDAT_HTTP_ADDR           /healthz, /readyz, /metrics: host:port, :port or off (default "
    ":8080,\n"
    "                             or the next free port up to 8099 when another consumer has it;\n"
    "                             8 connections per client, idle ones closed after 10 s)\n"
    "  SENDAT_LOG_LEVEL           debug|info|warn|error (default info)\n"
    "  SENDAT_SERVER_FEATURES     auto (default: what the server's API level offers) | none\n"
    "                             (the nats-server 2.9 path on any server)\n"
    "SIGTERM/SIGINT: stop pulling, release held tasks to the fleet, finish sends, exit 0.\n"
    "SIGHUP: read SENDAT_KEY_FILE and SENDAT_WEBHOOK_SECRET_FILE again (key rotation; a task\n"
    "sealed with a key id not loaded here also triggers a reading of the key file).\n"
    "SENDAT_LOG_FORMAT=logfmt|json: the log lines' format (default logfmt).\n";

void
config_usage(void)
{
    fputs(usage, stdout);
    fputs(usage_smtp_on, stdout);
}

static int
env_int(const char *name, int64_t def, int64_t min, int64_t max, int64_t *out)
{
    const char *v = getenv(name);
    char *end = NULL;
    long long x;

    *out = def;
    if (!v || !*v)
        return 0;
    x = strtoll(v, &end, 10);
    if (*end || x < min || x > max) {
        fprintf(stderr, "sendat-consumer: %s=%s: want a whole number from %lld to %lld\n", name, v,
                (long long)min, (long long)max);
        return -1;
    }
    *out = x;
    return 0;
}

static int
env_dur(const char *name, int64_t def, int64_t *out)
{
    const char *v = getenv(name);
    struct sa_err err = {0};

    *out = def;
    if (!v || !*v)
        return 0;
    if (sa_duration_parse(v, out, &err) != SA_OK || *out <= 0) {
        fprintf(stderr, "sendat-consumer: %s=%s: %s\n", name, v,
                err.msg[0] ? err.msg : "must be positive");
        return -1;
    }
    return 0;
}

static int
policy_load(struct sa_netpolicy **out)
{
    struct sa_err err = {0};

    if (sa_netpolicy_new(out, getenv("SENDAT_WEBHOOK_ALLOW"), getenv("SENDAT_WEBHOOK_DENY"),
                         &err) == SA_OK)
        return 0;
    fprintf(stderr, "sendat-consumer: %s\n", err.msg);
    return -1;
}

/* SENDAT_SHARDS: "0,2,4-7" as bits (0: unset, every shard). Whether each shard exists is known
 * only once the layout is read (consumer_serve). */
static int
env_shards(uint64_t *out)
{
    const char *v = getenv("SENDAT_SHARDS"), *p = v;

    *out = 0;
    if (!v || !*v)
        return 0;
    while (*p) {
        char *end = NULL;
        long from = strtol(p, &end, 10), to = from;

        if (end != p && *end == '-') {
            p = end + 1;
            to = strtol(p, &end, 10);
        }
        if (end == p || (*end && *end != ',') || from < 0 || to < from || to >= SA_SHARDS_MAX) {
            fprintf(stderr,
                    "sendat-consumer: SENDAT_SHARDS=%s: want shard numbers 0-%d and ranges like "
                    "\"0,2,4-7\"\n",
                    v, SA_SHARDS_MAX - 1);
            return -1;
        }
        for (long k = from; k <= to; k++)
            *out |= 1ULL << k;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int
env_dur_or_off(const char *name, int64_t def, int64_t *out)
{
    const char *v = getenv(name);

    *out = 0;
    return v && !strcmp(v, "off") ? 0 : env_dur(name, def, out);
}

int
config_load(struct config *cfg)
{
    int64_t inflight, batch, attempts, held, host_conns, ack_pending, host_inflight;
    char host[48] = "consumer";
    const char *name = getenv("SENDAT_CONSUMER_NAME");
    int bad = 0;

    memset(cfg, 0, sizeof(*cfg));
    cfg->url = getenv("SENDAT_NATS_URL");
    cfg->key_file = getenv("SENDAT_KEY_FILE");
    gethostname(host, sizeof(host) - 1);
    if (name && *name)
        snprintf(cfg->name, sizeof(cfg->name), "%s", name);
    else
        snprintf(cfg->name, sizeof(cfg->name), "%s-%d", host, (int)getpid());
    bad |= env_int("SENDAT_MAX_INFLIGHT", 256, 1, 100000, &inflight);
    bad |= env_int("SENDAT_FETCH_BATCH", 64, 1, 10000, &batch);
    bad |= env_int("SENDAT_RETRY_ATTEMPTS", 5, 1, 100, &attempts);
    bad |= env_int("SENDAT_RETRY_BASE_MS", 1000, 1, 86400000, &cfg->retry_base_ms);
    bad |= env_int("SENDAT_RETRY_MAX_MS", 300000, 1, 7 * 86400000LL, &cfg->retry_max_ms);
    bad |= env_int("SENDAT_MAX_HELD", 200000, 100, 100000000, &held);
    bad |= env_int("SENDAT_MAX_ACK_PENDING", 100000, 1, 10000000, &ack_pending);
    bad |= env_int("SENDAT_MAX_HOST_CONNECTIONS", 0, 0, 100000, &host_conns);
    bad |= env_int("SENDAT_HOST_MAX_INFLIGHT", -1, 0, 100000, &host_inflight);
    bad |= env_int("SENDAT_CLAIM_LEAD_MS", 50, 0, 1000, &cfg->claim_lead_ms);
    bad |= env_dur("SENDAT_HTTP_TIMEOUT", 10000, &cfg->http_timeout_ms);
    bad |= env_dur("SENDAT_DRAIN_TIMEOUT", 20000, &cfg->drain_ms);
    bad |= env_dur_or_off("SENDAT_SWEEP_INTERVAL", 60000, &cfg->sweep_interval_ms);
    bad |= env_dur_or_off("SENDAT_LEADER_BALANCE", 60000, &cfg->leader_balance_ms);
    bad |= env_dur("SENDAT_MARKS_KEEP", 60000, &cfg->marks_keep_ms);
    bad |= env_dur("SENDAT_UNKNOWN_KEY_WAIT", KEYWAIT_GIVE_UP_MS, &cfg->key_wait_ms);
    bad |= env_shards(&cfg->shards);
    bad |= smtp_config_load(&cfg->smtp);
    bad |= policy_load(&cfg->policy);
    if (!cfg->key_file || !*cfg->key_file) {
        fprintf(stderr, "sendat-consumer: SENDAT_KEY_FILE is not set (see --help)\n");
        bad = -1;
    }
    cfg->max_inflight = (int)inflight;
    cfg->fetch_batch = (int)batch;
    cfg->max_attempts = (int)attempts;
    cfg->max_held = held;
    cfg->max_host_connections = (int)host_conns;
    cfg->max_ack_pending = (int)ack_pending;
    /* unset: half the slots, so one destination never holds them all */
    cfg->host_max_inflight = host_inflight >= 0 ? (int)host_inflight : (int)(inflight + 1) / 2;
    return bad ? -1 : 0;
}

enum sa_code
consumer_load_signer(struct signer **out, struct sa_err *err)
{
    const char *path = getenv("SENDAT_WEBHOOK_SECRET_FILE");
    char buf[4096] = "";
    enum sa_code rc;

    if (!path || !*path)
        return signer_new(out, getenv("SENDAT_WEBHOOK_SECRET"), err);
    rc = sa_keyring_read_secret(path, buf, sizeof(buf), err); /* a FIFO would stall SIGHUP */
    if (rc == SA_OK)
        rc = signer_new(out, buf, err);
    sodium_memzero(buf, sizeof(buf));
    return rc;
}

void
consumer_reload(struct consumer *c)
{
    struct sa_keyring *ring = NULL, *old_ring;
    struct signer *signer = NULL;
    struct sa_err err = {0};

    if (sa_keyring_load(&ring, c->cfg.key_file, &err) != SA_OK ||
        consumer_load_signer(&signer, &err) != SA_OK || sa_claimmac_use(ring, &err) != SA_OK) {
        sa_keyring_free(ring);
        signer_free(signer);
        sa_log(SA_LOG_ERROR, "reload_failed", "error=\"%s\" (the old keys stay)", err.msg);
        return;
    }
    pthread_rwlock_wrlock(&c->ring_lock);
    old_ring = c->ring;
    c->ring = ring;
    pthread_rwlock_unlock(&c->ring_lock);
    if (sa_keyring_gained(old_ring, ring))
        atomic_store(&c->keys_gained, 1); /* the puller has the park come round (park.h) */
    sa_keyring_free(old_ring);
    signer_free(c->signer);
    c->signer = signer; /* only this (the main) thread signs */
    sa_log(SA_LOG_INFO, "reloaded", "keys=%zu", sa_keyring_count(ring));
}

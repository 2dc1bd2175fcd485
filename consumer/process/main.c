/* sendat-consumer: configuration, signals and orderly shutdown. Its own threads: the puller
 * (pull.c), the cancel watcher (cancel.c), the sweep for tasks nobody reads (sweep.c), the
 * leader balance (leaders.c), the health server's (health.c, libmicrohttpd), one that alone
 * receives signals, and this one, which fires and sends (deliver.c); nats.c's threads run the
 * PubAck callbacks of mover.c and claimq.c.
 * SIGTERM stops pulling, releases held tasks to the fleet and finishes sends in flight. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <sodium.h>

#include "cancel.h"
#include "claimmac.h"
#include "ledgermark.h"
#include "ledgerwatch.h"
#include "transfer.h"
#include "claimq.h"
#include "patient.h"
#include "claims.h"
#include "config.h"
#include "deliver.h"
#include "log.h"
#include "mover.h"
#include "pull.h"
#include "health.h"
#include "sa_version.h"
#include "sdnotify.h"
#include "shutdown.h"
#include "hostlimits.h"
#include "sign.h"
#include "sweep.h"
#include "timeparse.h"
#include "leaders.h"
#include "wheel.h"

#define WAIT_FIRST_MS 250 /* backoff while waiting for the server: doubles up to */
#define WAIT_MAX_MS 5000

static struct consumer the;
static struct deliver *the_deliver; /* under deliver_lock: the signal thread wakes it */
static pthread_mutex_t deliver_lock = PTHREAD_MUTEX_INITIALIZER;

static void
on_signal(int sig)
{
    if (sig == SIGHUP)
        atomic_store(&the.reload, 1);
    else {
        int64_t none = 0;

        atomic_compare_exchange_strong(&the.stop_ms, &none, sa_now_ms());
        atomic_store(&the.stopping, 1);
    }
    pthread_mutex_lock(&deliver_lock);
    if (the_deliver)
        deliver_wakeup(the_deliver);
    pthread_mutex_unlock(&deliver_lock);
}

/* SIGTERM, SIGINT and SIGHUP reach this thread alone. A handler may run on any thread that
 * does not block the signal, and one that interrupted nats.c's reader made its poll() fail
 * with EINTR, which nats.c 3.4 takes for a broken connection: it reconnected, what had
 * arrived in the socket (tasks pushed to the pull inbox) was lost until the ack wait, and
 * meanwhile the others found this member gone and rescued its levels. */
static void *
signal_loop(void *arg)
{
    const sigset_t *set = arg;
    int sig = 0;

    while (sigwait(set, &sig) == 0)
        on_signal(sig);
    return NULL;
}

/* Before any other thread starts: each inherits the blocked signals. */
static int
catch_signals(void)
{
    static sigset_t set;
    pthread_t t;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    signal(SIGPIPE, SIG_IGN);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
        pthread_create(&t, NULL, signal_loop, &set) != 0)
        return -1;
    pthread_detach(t); /* waits in sigwait until the process ends */
    return 0;
}

/* Sleeps ms in steps, so a SIGTERM while waiting for the server ends the wait soon. */
static void
nap(struct consumer *c, int64_t ms)
{
    struct timespec step = {0, 50 * 1000000L};

    for (int64_t slept = 0; slept < ms && !atomic_load(&c->stopping); slept += 50)
        nanosleep(&step, NULL);
}

/* A layout an older version made, its records without MACs, until `sendat init` of this
 * version marks since when records carry one (claimmac.h): before that mark this consumer
 * would read every older record as junk, a cancel among them, so it does not start. */
static enum sa_code
macs_marked(const struct sa_nats *n, struct sa_err *err)
{
    if (n->mac_since_ms > 0)
        return SA_OK;
    return sa_fail(err, SA_ENOTFOUND,
                   "no mark of since when claim and cancel records carry MACs: run `sendat "
                   "init` of this version (the layout is an older version's, or an init still "
                   "runs)");
}

/* Containers start in any order: while no server answers (or JetStream is not up yet), or
 * the server has no `sendat init` yet (or none of this version), try again with backoff and say so
 * each time (and in /readyz). Anything else (refused credentials) is an error for people: returned
 * at once. */
static enum sa_code
connect_when_up(struct consumer *c, struct sa_err *err)
{
    int64_t backoff = WAIT_FIRST_MS;
    enum sa_code rc;

    for (int attempt = 1;; attempt++) {
        struct sa_err why = {0};
        char refused[8];

        if ((rc = sa_nats_connect(&c->n, c->cfg.url, c->cfg.name, SA_INBOX_CONSUMER, &why)) ==
                SA_OK &&
            (rc = sa_nats_bind(c->n, &why)) == SA_OK && (rc = macs_marked(c->n, &why)) == SA_OK &&
            (rc = sa_ledger_check(c->n, &why)) == SA_OK)
            return SA_OK;
        if ((rc != SA_ERETRY && rc != SA_ENOTFOUND) ||
            sa_nats_refused(c->n, refused, sizeof(refused))) {
            *err = why; /* a refused subject is a wrong user, not a server still starting */
            return rc != SA_OK ? rc : SA_EPERM;
        }
        sa_nats_close(c->n);
        c->n = NULL;
        if (atomic_load(&c->stopping))
            return sa_fail(err, SA_ERETRY, "stopped while waiting for the server");
        atomic_store(&c->waiting, rc == SA_ENOTFOUND ? CONSUMER_WAIT_INIT : CONSUMER_WAIT_SERVER);
        sa_log(SA_LOG_WARN, rc == SA_ENOTFOUND ? "waiting_for_init" : "waiting_for_server",
               "attempt=%d backoff_ms=%lld error=\"%s\"", attempt, (long long)backoff, why.msg);
        nap(c, backoff);
        backoff = backoff * 2 < WAIT_MAX_MS ? backoff * 2 : WAIT_MAX_MS;
    }
}

static int
setup_local(struct consumer *c, struct sa_err *err)
{
    unsigned char nonce[8];
    pthread_condattr_t attr;

    randombytes_buf(nonce, sizeof(nonce));
    sodium_bin2hex(c->instance, sizeof(c->instance), nonce, sizeof(nonce));
    pthread_rwlock_init(&c->ring_lock, NULL);
    c->reload_hook = consumer_reload;  /* sending calls it on SIGHUP (deliver.c) */
    c->claiming_hook = wheel_claiming; /* the ledger counts its claims there (claims.c) */
    c->claimed_elsewhere_hook = wheel_claimed_elsewhere;
    pthread_mutex_init(&c->makers_lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* a clock step stalls no maker */
    pthread_cond_init(&c->makers_wake, &attr);
    pthread_condattr_destroy(&attr);
    if (consumer_load_signer(&c->signer, err) != SA_OK ||
        sa_keyring_load(&c->ring, c->cfg.key_file, err) != SA_OK ||
        sa_claimmac_use(c->ring, err) != SA_OK) /* claim and cancel records' MACs */
        return -1;
    return 0;
}

/* The shards of SENDAT_SHARDS, or every shard; SA_EINVAL for one the cluster does not have. */
static enum sa_code
choose_shards(struct consumer *c, struct sa_err *err)
{
    int shards = c->n->layout.shards;
    uint64_t all = shards >= 64 ? ~0ULL : (1ULL << shards) - 1, extra = c->cfg.shards & ~all;

    if (extra)
        return sa_fail(err, SA_EINVAL,
                       "SENDAT_SHARDS names shard %d, but `sendat init` made %d shard(s) (0-%d)",
                       __builtin_ctzll(extra), shards, shards - 1);
    c->served = c->cfg.shards ? c->cfg.shards : all;
    return SA_OK;
}

/* deliver_new, the result handed to the signal thread under its lock. */
static enum sa_code
start_deliver(struct consumer *c, struct sa_err *err)
{
    struct deliver *d = NULL;
    enum sa_code rc = deliver_new(&d, c, err);

    pthread_mutex_lock(&deliver_lock);
    the_deliver = d;
    pthread_mutex_unlock(&deliver_lock);
    return rc;
}

/* The host of the SMTP server, where all mail goes ("" without one): the operator's own relay,
 * which the per-host cap for destinations no rule names leaves alone. */
static const char *
smtp_host(const struct consumer *c, char *out, size_t cap)
{
    struct sa_task mail = {.channel = SA_CHANNEL_EMAIL};

    out[0] = '\0';
    if (c->cfg.smtp.url[0])
        transfer_host(c, &mail, out, cap);
    return out;
}

static int
setup(struct consumer *c, struct sa_err *err)
{
    char host[256];

    if (choose_shards(c, err) != SA_OK || claims_read_ttl(c, err) != SA_OK ||
        start_deliver(c, err) != SA_OK ||
        claimq_new(&c->claimq, c, deliver_wakeup, the_deliver, err) != SA_OK ||
        patient_new(&c->patient, c, deliver_wakeup, the_deliver, err) != SA_OK ||
        mover_new(&c->mover, c, err) != SA_OK ||
        wheel_new(&c->wheel, c->n->nc, deliver_wakeup, the_deliver, err) != SA_OK ||
        cancel_start(&c->cancels, c->n->cancel, c->claims_ttl_ms, err) != SA_OK ||
        limits_new(&c->limits, getenv("SENDAT_HOST_LIMITS"), c->cfg.name, err) != SA_OK)
        return -1;
    limits_set_default(c->limits, c->cfg.host_max_inflight, smtp_host(c, host, sizeof(host)));
    if (limits_need_leases(c->limits)) {
        if (js_KeyValue(&c->leases, c->n->js, LEASES_BUCKET) != NATS_OK) {
            sa_fail(err, SA_ENOTFOUND, "bucket %s does not exist: run `sendat init` first",
                    LEASES_BUCKET);
            return -1;
        }
        limits_set_leases(c->limits, c->leases);
    }
    return 0;
}

static void
teardown(struct consumer *c)
{
    struct deliver *d = the_deliver;

    cancel_stop(c->cancels);
    wheel_free(c->wheel);
    pthread_mutex_lock(&deliver_lock);
    the_deliver = NULL; /* a second SIGTERM now wakes nothing freed */
    pthread_mutex_unlock(&deliver_lock);
    deliver_free(d);
    /* before the connection: a publisher's context must end while its PubAck subscription is
     * still open (nats.c 3.4 queues a timeout message for every publish with a deadline, and
     * one queued on a subscription already closed is never freed) */
    patient_free(c->patient);
    claimq_free(c->claimq);
    mover_free(c->mover);
    sa_nats_close(c->n);
    sa_keyring_free(c->ring);
    sa_claimmac_forget();
    signer_free(c->signer);
    limits_free(c->limits);
    kvStore_Destroy(c->leases);
    sa_netpolicy_free(c->cfg.policy);
}

/* A subject the server refused shows here only as a timeout: name it, and the likely cause. */
static void
log_start_failed(struct consumer *c, const struct sa_err *err)
{
    char why[300];

    if (sa_nats_refused(c->n, why, sizeof(why)))
        sa_log(SA_LOG_ERROR, "start_failed",
               "error=\"%s\" refused=\"%s\" hint=\"this NATS user lacks "
               "the consumer role's permissions (deploy/nats/accounts.conf)\"",
               err->msg, why);
    else
        sa_log(SA_LOG_ERROR, "start_failed", "error=\"%s\"", err->msg);
}

/* systemd's Type=notify (deploy/systemd): started (connected, the layout read, pulling); /readyz
 * answers 200 from the first pull on. */
static void
notify_ready(void)
{
    struct sa_err err = {0};

    if (sa_sdnotify("READY=1", &err) != SA_OK)
        sa_log(SA_LOG_WARN, "notify_failed", "error=\"%s\"", err.msg);
}

static int
run(struct consumer *c)
{
    struct puller p;
    struct health *http = NULL;
    struct sweep *sweep = NULL;
    struct leaders *leaders = NULL;
    struct ledgerwatch *watch = NULL;
    struct sa_err err = {0};
    char feats[64];

    if (setup_local(c, &err) != 0) { /* the key ring or the signing keys: settings */
        log_start_failed(c, &err);
        return err.code == SA_ENOMEM ? 1 : 2;
    }
    if (health_start(&http, c, getenv("SENDAT_HTTP_ADDR"), &err) != SA_OK) {
        log_start_failed(c, &err);
        return 2;
    }
    if (connect_when_up(c, &err) != SA_OK || setup(c, &err) != 0 ||
        pull_start(&p, c, &err) != SA_OK) {
        if (atomic_load(&c->stopping) && !c->n) { /* stopped while waiting for the server */
            health_stop(http);
            return 0;
        }
        log_start_failed(c, &err);
        health_stop(http);
        return err.code == SA_EINVAL ? 2 : 1; /* a bad setting (exit 2) is not restarted */
    }
    if (sweep_start(&sweep, c, c->cfg.sweep_interval_ms, &err) != SA_OK)
        sa_log(SA_LOG_WARN, "no_sweep", "error=\"%s\"", err.msg); /* sends go on without it */
    if (leaders_start(&leaders, c, c->cfg.leader_balance_ms, &err) != SA_OK)
        sa_log(SA_LOG_WARN, "no_leader_balance", "error=\"%s\"", err.msg);
    if (ledgerwatch_start(&watch, c, &err) != SA_OK)
        sa_log(SA_LOG_WARN, "no_ledger_watch", "error=\"%s\"", err.msg); /* claims still fail */
    atomic_store(&c->started, 1);
    sa_log(SA_LOG_INFO, "started",
           "consumer=%s claims_ttl_ms=%" PRId64 " shards=%d serving=%d api_level=%d features=%s",
           c->cfg.name, c->claims_ttl_ms, c->n->layout.shards, __builtin_popcountll(c->served),
           c->n->feat.api_level, sa_jsfeat_names(c->n->feat.have, feats, sizeof(feats)));
    if (!c->cfg.smtp.url[0])
        sa_log(SA_LOG_WARN, "no_smtp",
               "reason=\"no SENDAT_SMTP_URL: email tasks are left to members that can send "
               "mail, and wait while none can\"");
    notify_ready();
    deliver_run(the_deliver); /* returns once stopping and drained */
    ledgerwatch_stop(watch);
    leaders_stop(leaders);
    sweep_stop(sweep);
    pull_join(&p);
    if (mover_wait(c->mover, c->cfg.drain_ms) > 0)
        sa_log(SA_LOG_WARN, "moves_unconfirmed",
               "error=\"no PubAck: redelivered after the ack wait\"");
    sa_log(SA_LOG_INFO, "stopped", "released=%zu", wheel_release_all(c->wheel));
    pull_close(&p);
    health_stop(http);
    counters_log(c, "counters");
    return 0;
}

int
main(int argc, char **argv)
{
    int rc;

    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        config_usage();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--version")) {
        puts("sendat-consumer " SA_VERSION);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "sendat-consumer: unknown argument %s (see --help)\n", argv[1]);
        return 2;
    }
    /* first: a SIGTERM while the settings are read is a stop like any other (exit 0), not the
     * default action's death by the signal */
    if (catch_signals() != 0)
        return 1;
    sa_log_init("sendat-consumer");
    if (config_load(&the.cfg) != 0) {
        sa_netpolicy_free(the.cfg.policy);
        return 2;
    }
    if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    nats_Open(-1);
    rc = run(&the);
    teardown(&the);
    curl_global_cleanup();
    /* Waits for the library's threads: a message destroyed last sits on nats.c's garbage
     * list until its collector thread frees it, and an exit before that is a leak report.
     * Then frees what their handlers could still reach. */
    sa_nats_shutdown(5000);
    return rc;
}

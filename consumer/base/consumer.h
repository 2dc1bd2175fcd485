/* What the consumer's threads share: the connection, the key ring, the configuration, the
 * wheel, the cancel set and the counters. Each module documents which thread calls it. */
#ifndef CONSUMER_H
#define CONSUMER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "easypool.h"
#include "jspull.h" /* how every pulled message is answered (and nats.c's acks poisoned) */
#include "keyring.h"
#include "lateness.h"
#include "natsconn.h"
#include "netpolicy.h"

struct smtp_config {
    char url[600]; /* empty: no SMTP server, email tasks are left to other members */
    const char *user, *password, *from, *ca_file;
    int tls_off; /* only ever for a loopback server */
};

struct config {
    const char *url;
    const char *key_file;
    char name[64];
    int max_inflight;      /* sends in flight at once */
    int64_t claim_lead_ms; /* claim this long (up to a quarter more) before the due time */
    int64_t http_timeout_ms;
    int fetch_batch;
    int max_attempts; /* attempts before the dead letter */
    int64_t retry_base_ms;
    int64_t retry_max_ms;
    int64_t drain_ms;          /* SIGTERM grace for sends in flight */
    int64_t max_held;          /* tasks held in memory at once */
    int max_ack_pending;       /* per level durable; fleet-wide bound */
    int host_max_inflight;     /* sends in flight to one host no rule names, 0: no cap */
    int max_host_connections;  /* connections to one host at once, 0: no cap */
    int64_t sweep_interval_ms; /* a turn at the sweep for unread tasks, 0: off */
    int64_t leader_balance_ms; /* a turn at spreading the shards' leaders, 0: off */
    int64_t marks_keep_ms;     /* how long a level mark outlives its slot (pull_marks.h) */
    int64_t key_wait_ms;       /* how long a task sealed with an unknown key id circulates */
    uint64_t shards;           /* SENDAT_SHARDS: bit k set serves shard k (0: every shard) */
    struct smtp_config smtp;
    struct sa_netpolicy *policy; /* SENDAT_WEBHOOK_ALLOW / _DENY (owned; freed at exit) */
};

/* A lateness histogram: cumulative buckets (see lateness_bounds_ms), count and sum. */
struct histogram {
    atomic_long le[LATENESS_BUCKETS];
    atomic_long count, sum_ms;
};

/* Counters and gauges for logs and /metrics. Indexed by enum sa_channel where it says [3]
 * (0: a message that never opened). */
struct counters {
    atomic_long pulled, held, moved, cancelled, duplicates, redelivered_held, key_waits;
    atomic_long parked, dead_deferred; /* park.h */
    atomic_long mail_left; /* email tasks left to members with SMTP settings (park_unsendable) */
    /* re-publishes (moves, retries, next occurrences) a full task stream refused: the
     * original stays and comes again later (init --max-tasks) */
    atomic_long stream_full;
    atomic_long sent[3], failed[3], retried[3], dead[3];
    struct histogram dispatch; /* the first attempt's start minus the due time */
    struct histogram delivery; /* the receiver's acceptance minus the first due time */
    /* sends of tasks booked after their due time (accepted up to 10 minutes late): counted
     * here, not in the histograms above, whose lateness would be the booking's, not sendat's */
    atomic_long booked_late, booked_late_ms;
    atomic_long inflight, backlog, last_pull_ok_ms;
};

/* Records one send's dispatch and delivery lateness; a task booked booked_late_ms after its
 * due time (> 0) is counted apart instead. */
void counters_lateness(struct counters *k, int64_t dispatch_ms, int64_t delivery_ms,
                       int64_t booked_late_ms);

/* The sum over channels of a [3] counter. */
long counters_sum(const atomic_long v[3]);

struct wheel;
struct cancel_set;
struct signer;
struct transfer;
struct limits;
struct claimq;
struct patient;
struct mover;
struct members;

/* What a consumer still starting waits for (struct consumer's waiting). */
enum consumer_wait { CONSUMER_WAIT_NONE, CONSUMER_WAIT_SERVER, CONSUMER_WAIT_INIT };

struct held;

struct consumer {
    struct sa_nats *n;
    struct sa_keyring *ring;
    struct config cfg;
    char instance[24];     /* random per process: a restart under the same name is another holder */
    int64_t claims_ttl_ms; /* the claims bucket's TTL, read at start (0: claims kept for ever) */
    uint64_t served;       /* the shards this member pulls and sweeps (bit k: shard k) */
    struct wheel *wheel;
    struct cancel_set *cancels;
    struct signer *signer;     /* webhook signing keys (SENDAT_WEBHOOK_SECRET) */
    struct limits *limits;     /* per-host limits (SENDAT_HOST_LIMITS) */
    kvStore *leases;           /* fleet-wide concurrency leases, when a limit asks for them */
    struct claimq *claimq;     /* claim writes in flight (main thread; PubAcks on a nats thread) */
    struct patient *patient;   /* outcome writes the broker did not take at once (its thread) */
    struct mover *mover;       /* moves down a level in flight (puller; PubAcks on a nats thread) */
    struct transfer *inflight; /* sends in flight (main thread only) */
    struct easypool easy;      /* easy handles for the next sends (main thread only) */
    struct members *members;   /* fleet members alive (owned by the puller) */
    struct counters counters;
    atomic_int waiting;      /* CONSUMER_WAIT_*: what start waits for (/readyz says it) */
    atomic_int started;      /* connected, layout read, every part set up: /readyz may look */
    atomic_int stopping;     /* set by SIGTERM: stop pulling, release what is held */
    _Atomic int64_t stop_ms; /* when the first SIGTERM came: the drain's time counts from it */
    atomic_int reload;       /* set by SIGHUP: read the key ring and webhook secrets again */
    atomic_int keys_gained;  /* a reload brought a key id: the park comes round at once */
    atomic_int sender_busy;  /* due tasks wait for a free send slot: pull no more due ones */
    atomic_int ledger_lost;  /* a claims bucket is not init's (ledgerwatch.h): claim nothing */
    atomic_int js_silent;    /* JetStream answers nothing on a live connection (ledgerwatch.h) */
    _Atomic int64_t writes_until_ms; /* set when the drain ends: outcome writes stop then */
    pthread_mutex_t makers_lock;     /* guards makers_made; makers_wake tells the durable makers */
    pthread_cond_t makers_wake;      /* (pull_prepare.c) that this member made a mark: they look */
    long makers_made;                /* for durables to make at once (relay.c) */
    pthread_rwlock_t ring_lock;      /* the puller opens under it; the main thread swaps rings */
    /* main thread, on SIGHUP: consumer_reload (config.h), set by main so sending calls it
     * without a reference up to the process */
    void (*reload_hook)(struct consumer *c);
    /* the wheel's count of the task ids claimed here (wheel.h: wheel_claiming,
     * wheel_claimed_elsewhere), set by main so the ledger calls them without a reference up;
     * without them (a ledger alone, in unit tests) a claim of this process counts as a send
     * under way */
    void (*claiming_hook)(struct held *h);
    int (*claimed_elsewhere_hook)(const struct held *h);
};

/* Logs the counters as one line (event=counters). */
void counters_log(const struct consumer *c, const char *event);

#endif

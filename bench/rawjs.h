/* What sendat-rawjs's files share: its options, and the helpers its commands use. */
#ifndef RAWJS_H
#define RAWJS_H

#include <stdint.h>

#include <nats/nats.h>

struct rawpull;

struct rawjs_opts {
    const char *server, *stream, *url, *data, *dump, *sink;
    long n, kv_n, subjects, msg_id;
    int fast;          /* batch: also the fast batch (nats-server 2.14+) */
    int clients;       /* batch: connections writing at once */
    int64_t window;    /* junk: the window level's start (ms) */
    int64_t slot;      /* junk --shape slot: the slot level's start (ms) */
    const char *shape; /* junk: sealed (default), garbage, realkey, one or slot (rawtools.c) */
    const char *server_pids;
    long pace_n;
    int size, replicas, batch, inflight;
    double sync_seconds, pace_seconds;
    int64_t due_ms, spread_ms;   /* native: the first schedule's time, and the span of the rest */
    int64_t due_in_ms, align_ms; /* native: or the first due this long after the stream is made */
    double wait_seconds;         /* native: how long after the last due time deliveries may come */
    int post_only;               /* bench: only the pull + POST + ack phase (issue 32.1) */
    int post_batch;              /* bench: messages per pull of the POST phases (default 64) */
    const char *hold_file;       /* bench --post-only: written once stored; waits for FILE.go */
    long cancel_every;           /* ledger: a cancel for every K-th id before the consumer starts */
    double group_ms;             /* ledger: one outcome record per this many ms of finished sends */
    int watch_thread;            /* ledger: the watcher on the library's thread, not the loop's */
};

/* Says what failed and exits 1. */
void rawjs_die(const char *what, natsStatus s);
/* A connection to url, or exits. */
natsConnection *rawjs_connect(const char *url);
/* Pulls up to want messages (at most batch) through sub into list; returns how many came. */
int rawjs_pull(struct rawpull *sub, natsMsgList *list, long want, int batch);

/* The commands of rawbench.c and rawtools.c; each prints one JSON object and returns the exit
 * code. */
int rawjs_bench(const struct rawjs_opts *o);
int rawjs_fill(const struct rawjs_opts *o);
int rawjs_sealed(const struct rawjs_opts *o);
int rawjs_info(const struct rawjs_opts *o);
int rawjs_junk(const struct rawjs_opts *o);
/* 1 if o->shape is a shape rawjs_junk knows (and --shape slot has a --slot in --window). */
int rawjs_junk_shape_ok(const struct rawjs_opts *o);
int rawjs_claims(const struct rawjs_opts *o);
/* rawbatch.c: claim-like creates one by one and in atomic batches (issue 25.3). */
int rawjs_batch(const struct rawjs_opts *o);
/* rawnative.c: the server's own scheduler; exits 3 on a server without it. */
int rawjs_native(const struct rawjs_opts *o);
/* rawledger.c: the per-batch claim ledger prototype (issue 32 item 2). */
int rawjs_ledger(const struct rawjs_opts *o);

#endif

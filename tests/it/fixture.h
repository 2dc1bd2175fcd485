/* A sendat deployment for one integration test: its own nats-server (or 3-node cluster), a
 * key, `sendat init` with a small layout so windows pass in seconds, an HTTP receiver, and
 * real sendat / sendat-consumer processes. */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <nats/nats.h>

#include "natsd.h"
#include "proc.h"
#include "receiver.h"

#define FX_MAX_CONSUMERS 8

struct fx {
    struct natsd srv;
    struct natsd_cluster cluster;
    int clustered;
    char dir[256];
    char key[300];
    char env_url[300];
    char env_key[320];
    struct receiver *recv;
    struct proc consumers[FX_MAX_CONSUMERS];
    int n_consumers;
};

/* Starts a server (clustered: 3 nodes and replicas 3), writes a key and runs sendat init
 * with window 10s, slot 2s, lead 1s, ack-wait 5s (fx_slot and fx_ack_wait change the two). Fails
 * the test if any step fails. */
void fx_start(struct fx *f, int clustered);
/* The --ack-wait fx_start gives init ("5s"; a test may set another before fx_start). */
extern const char *fx_ack_wait;
/* The --slot fx_start gives init ("2s"; a test may set another, with an --ack-wait above it
 * and the 1 s lead by more than 1 s, before fx_start). */
extern const char *fx_slot;
/* The --shards fx_start gives init (NULL: none, one shard; a test may set one before fx_start). */
extern const char *fx_shards;
/* The --replicas fx_start gives init (NULL: 3 clustered, 1 on one server). */
extern const char *fx_replicas;
/* 0: fx_start leaves `sendat init` out (the test runs fx_init when it wants; default 1). */
extern int fx_do_init;
/* The single server's configuration (natsd_start_config; NULL: natsd_start's -js). */
extern const char *fx_server_config;
void fx_init(struct fx *f);
void fx_stop(struct fx *f);

/* Sets the task stream's dedupe window (single server) to ms, as an operator could with the
 * nats CLI: a publish under a Msg-Id older than that is stored again, not deduplicated. */
void fx_dedupe_window(struct fx *f, int64_t ms);

/* The usual end of a test: every consumer exits 0 on SIGTERM (drained), then fx_stop. */
void fx_finish(struct fx *f);

/* Starts consumer number i with name c<i> (extra "K=V" env entries may be NULL). */
void fx_consumer(struct fx *f, int i, char *const extra_env[]);

/* SIGTERMs every consumer still running and waits for it; returns how many exited non-zero. */
int fx_stop_consumers(struct fx *f);

/* Runs `sendat ARGS...` (NULL-terminated) with the fixture's environment; stdout into out. */
int fx_sendat(struct fx *f, char *out, size_t cap, char *err, size_t errcap, ...);

/* Schedules a webhook to the receiver path at @due (ms); writes the id; returns exit code. */
int fx_schedule(struct fx *f, int64_t due_ms, const char *path, char *id, size_t cap);

/* Schedules n webhooks at @due (ms) to the receiver paths "<prefix>/0" .. "<prefix>/<n-1>" with
 * one `sendat schedule --batch` (one process: many bookings in well under a second on a busy
 * machine), writing the id of path k into ids[k]; returns the exit code (0: every line). */
int fx_schedule_many(struct fx *f, int64_t due_ms, const char *prefix, int n, char (*ids)[80]);

/* fx_schedule_many, with task k at-most-once when k is odd and mixed is set. */
int fx_schedule_many_mixed(struct fx *f, int64_t due_ms, const char *prefix, int n, char (*ids)[80],
                           int mixed);

/* Books n webhooks to "<prefix>/0" .. "<prefix>/<n-1>" with one `sendat schedule --batch`, task
 * k due at start_ms + k * span_ms / n, writing the id of task k into ids[k]; returns the
 * command's exit code (0: every line booked). */
int fx_schedule_spread(struct fx *f, int64_t start_ms, int64_t span_ms, const char *prefix, int n,
                       char (*ids)[80]);

/* Starts the SMTP sink (tests/support/smtp_sink.py) on a free loopback port; it stores mail
 * in DIR/maildir and logs every attempt to DIR/smtp-attempts.log (DIR: f->dir). env gets
 * "SENDAT_SMTP_URL=smtp://127.0.0.1:PORT" for a consumer. Fails the test if it does not start. */
void fx_smtp_sink(struct fx *f, struct proc *sink, char *env, size_t cap);

#define FX_BODY_MAX 65536

/* Prints consumer i's log to stderr (for a failed wait). */
void fx_print_log(struct fx *f, int i);

/* Consumer i's HTTP port from its "event=http_listening" log line; 0 until it listens. */

int fx_consumer_port(struct fx *f, int i);

/* GETs path from consumer i into body (FX_BODY_MAX bytes); returns the HTTP status, 0 if
 * it does not listen yet or does not answer. */
long fx_consumer_get(struct fx *f, int i, const char *path, char *body);

/* 1 once consumer i's /readyz answers 200 (it started and pulls), within timeout_ms; else 0. */
int fx_consumer_ready(struct fx *f, int i, int64_t timeout_ms);

/* A metric without labels from consumer i's /metrics ("sendat_held"); -1 if not there. */
long fx_consumer_metric(struct fx *f, int i, const char *name);

/* A counter from the consumer's final "event=counters" log line (consumer must have exited). */
long fx_counter(struct fx *f, int i, const char *name);

/* 1 once `sendat status ID` succeeds and its output holds word, within timeout_ms; else 0,
 * after printing the last output. An outcome is written after the receiver's answer, so a
 * test that saw the request waits for the status instead of reading it once. */
int fx_status_says(struct fx *f, const char *id, const char *word, int64_t timeout_ms);

/* Counts the receiver's requests for paths "<prefix><k>", 0 <= k < n: seen[k] gets each k's
 * number of requests; returns how many k arrived at least once. */
int fx_arrivals(struct fx *f, const char *prefix, int *seen, int n);

/* The instance id the members bucket names for consumer name (it beats each second) into
 * out; 0 while there is none. */
int fx_member_instance(kvStore *members, const char *name, char *out, size_t cap);

/* An integration test's main: libsodium, libcurl and nats.c set up around the cmocka group
 * (setup and teardown may be NULL); returns the group's result for main to return. */
int fx_run(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
           CMFixtureFunction teardown);
#define FX_RUN(tests) fx_run((tests), sizeof(tests) / sizeof((tests)[0]), NULL, NULL)

/* Path of the sendat binaries. */
const char *fx_sendat_bin(void);
const char *fx_consumer_bin(void);

/* The claims bucket init made replaced, before any consumer starts, by one whose TTL is ttl_ms
 * (below init's --claims-ttl floor of 1 h, so a test sees the TTL pass), and recorded by
 * `sendat init` (ledgermark.h) as an operator remaking it would. Returns the bucket's handle. */
kvStore *fx_short_ledger(struct fx *f, jsCtx *js, int64_t ttl_ms);

/* A connection to f's (single) server and its JetStream context; fx_js_close destroys both
 * and sets them to NULL. */
void fx_js_open(struct fx *f, natsConnection **nc, jsCtx **js);
void fx_js_close(natsConnection **nc, jsCtx **js);

/* The messages stream holds now (fails the test if its info cannot be read). */
uint64_t fx_stream_msgs(jsCtx *js, const char *stream);

#endif

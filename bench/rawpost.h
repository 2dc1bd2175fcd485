/* The raw ceiling of delivering stored messages as webhooks: pull, one HTTP POST, ack; no
 * claim, no status, no decryption. What any scheduler on JetStream pays at least per send. */
#ifndef RAWPOST_H
#define RAWPOST_H

#include <curl/curl.h>
#include <nats/nats.h>

/* CLOCK_MONOTONIC in seconds: the one clock of sendat-rawjs's phases. */
double rawpost_now_s(void);

struct rawpull;

/* One delivery run: n messages, pulled batch at a time, POSTed to url with up to inflight
 * requests at once, for at most max_secs. With pace_s > 0, the i-th message pulled is POSTed
 * no earlier than i * pace_s / n after the start, as a scheduler sends tasks due evenly over
 * pace_s: pulled ahead in batches, each sent on its own at its instant. */
struct rawpost_run {
    long n;
    int batch, inflight;
    const char *url;
    double max_secs, pace_s;
    /* Set: each POST carries this header of its message as its webhook-id (the sink's record). */
    const char *id_header;
    /* Set: the level stays empty until its first message (due later); until then only max_secs
     * ends the wait. */
    int wait_first;
    /* Set: each finished request's message is handed to finish (ok: the answer was 2xx), which
     * owns it from then on, instead of being acked (2xx) or naked and destroyed here. */
    void (*finish)(void *arg, natsMsg *m, int ok);
    void *finish_arg;
};

/* Pulls up to run->n messages through sub (rawpull.h) (stops after max_secs or when the level
 * stays empty), POSTs each one's payload over keep-alive connections, and acks it once the
 * receiver answered 2xx. Returns how many were acked; *secs is the time taken, *refused counts
 * answers that were not 2xx. */
long rawpost_consume(struct rawpull *sub, const struct rawpost_run *run, double *secs,
                     long *refused);

/* The pieces of rawpost_consume, for a loop of its own (rawledger.c): a multi handle for
 * run's requests (one run at a time), a POST of m's payload to run->url (0 once started; the
 * request owns m), and the finished requests handed on (returns how many finished, counted
 * into *acked or *refused); rawpost_close frees the handle and the idle requests. */
CURLM *rawpost_open(const struct rawpost_run *run);
int rawpost_start(CURLM *multi, const struct rawpost_run *run, natsMsg *m);
int rawpost_collect(CURLM *multi, const struct rawpost_run *run, natsConnection *nc, long *acked,
                    long *refused);
void rawpost_close(CURLM *multi);

#endif

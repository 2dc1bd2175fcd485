/* The raw ceiling of delivering stored messages as webhooks: pull, one HTTP POST, ack; no
 * claim, no status, no decryption. What any scheduler on JetStream pays at least per send. */
#ifndef RAWPOST_H
#define RAWPOST_H

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
};

/* Pulls up to run->n messages through sub (rawpull.h) (stops after max_secs or when the level
 * stays empty), POSTs each one's payload over keep-alive connections, and acks it once the
 * receiver answered 2xx. Returns how many were acked; *secs is the time taken, *refused counts
 * answers that were not 2xx. */
long rawpost_consume(struct rawpull *sub, const struct rawpost_run *run, double *secs,
                     long *refused);

#endif

/* The raw ceiling of delivering stored messages as webhooks: pull, one HTTP POST, ack; no
 * claim, no status, no decryption. What any scheduler on JetStream pays at least per send. */
#ifndef RAWPOST_H
#define RAWPOST_H

#include <nats/nats.h>

/* CLOCK_MONOTONIC in seconds: the one clock of sendat-rawjs's phases. */
double rawpost_now_s(void);

struct rawpull;
/* Pulls up to n messages through sub (rawpull.h) (stops after max_secs or when the level stays
 * empty), POSTs each one's payload to url with up to inflight requests at once over keep-alive
 * connections, and acks it once the receiver answered 2xx. Returns how many were acked;
 * *secs is the time taken, *refused counts answers that were not 2xx. */
long rawpost_consume(struct rawpull *sub, long n, int batch, const char *url, int inflight,
                     double max_secs, double *secs, long *refused);

#endif

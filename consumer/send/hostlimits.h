/* Provider limits per destination host: concurrency and a token-bucket rate in each consumer,
 * and an exact fleet-wide concurrency through leases in a KV bucket. Configured by
 * SENDAT_HOST_LIMITS, e.g. "api.pay.example=fleet:3;*.example.org=concurrency:8,rate:50/s". */
#ifndef HOSTLIMITS_H
#define HOSTLIMITS_H

#include <stdint.h>

#include <nats/nats.h>

#include "sa_err.h"
#include "layout.h"

#define LEASES_BUCKET SA_LEASES_BUCKET

struct limits;

/* Parses the rules (NULL or empty: no limits). SA_EINVAL names the bad rule. */
enum sa_code limits_new(struct limits **out, const char *spec, const char *consumer_name,
                        struct sa_err *err) SA_MUST_CHECK;
void limits_free(struct limits *l);

/* Caps the sends in flight to each host no rule names (0: no cap), so one destination that never
 * answers cannot hold all of this consumer's send slots (SENDAT_HOST_MAX_INFLIGHT); but not
 * exempt ("" or NULL: none), the operator's own SMTP server, where all mail goes. */
void limits_set_default(struct limits *l, int concurrency, const char *exempt);

/* Whether any rule asks for fleet-wide leases (then bind the leases bucket). */
int limits_need_leases(const struct limits *l);
void limits_set_leases(struct limits *l, kvStore *kv);

/* Takes room for one send to host at now_ms: 1 if it may start (*lease is the fleet lease
 * taken, or -1), 0 if not now (*retry_at_ms says when to look again). */
int limits_acquire(struct limits *l, const char *host, int64_t now_ms, int64_t *retry_at_ms,
                   int *lease);

/* Gives back what limits_acquire took for a send to host. */
void limits_release(struct limits *l, const char *host, int lease);

#endif

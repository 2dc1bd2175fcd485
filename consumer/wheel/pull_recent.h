/* What this member did over the last hour, minute by minute, for its beat (`sendat stats`, the
 * console's recent delivery): sends, retries and dead letters per wall-clock minute, and the
 * hour's dispatch and delivery lateness by bucket. Kept as one snapshot of the cumulative
 * counters per minute; used by the puller thread only. */
#ifndef RECENT_H
#define RECENT_H

#include <stddef.h>
#include <stdint.h>

#include "consumer.h"

#define RECENT_MINUTES 60

struct recent_snap {
    long sent, retried, dead;
    long dispatch[LATENESS_BUCKETS + 1], delivery[LATENESS_BUCKETS + 1]; /* cumulative, + count */
};

struct recent {
    int64_t minute; /* the wall-clock minute (ms / 60000) of the newest snapshot */
    int len;        /* snapshots kept, at most RECENT_MINUTES */
    struct recent_snap snap[RECENT_MINUTES];
};

/* Takes the snapshot of each minute begun since the last call. */
void recent_tick(struct recent *r, const struct counters *k, int64_t now_ms);

/* Writes "minute":M,"per_minute":[[sent,retried,dead],...] (newest first) and
 * "dispatch":[...],"delivery":[...] (the hour's counts per bucket of lateness_bounds_ms, then
 * the count past the last bound) into out. Returns the length, or -1 if n is too small. */
int recent_json(const struct recent *r, const struct counters *k, char *out, size_t n);

#endif

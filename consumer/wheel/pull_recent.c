/* See pull_recent.h. */
#include <stdio.h>
#include <string.h>

#include "pull_recent.h"

static void
take_histogram(long out[LATENESS_BUCKETS + 1], const struct histogram *h)
{
    for (int i = 0; i < LATENESS_BUCKETS; i++)
        out[i] = atomic_load(&h->le[i]);
    out[LATENESS_BUCKETS] = atomic_load(&h->count);
}

static void
take(struct recent_snap *s, const struct counters *k)
{
    s->sent = counters_sum(k->sent);
    s->retried = counters_sum(k->retried);
    s->dead = counters_sum(k->dead);
    take_histogram(s->dispatch, &k->dispatch);
    take_histogram(s->delivery, &k->delivery);
}

static const struct recent_snap *
at(const struct recent *r, int64_t minute)
{
    return &r->snap[minute % RECENT_MINUTES];
}

void
recent_tick(struct recent *r, const struct counters *k, int64_t now_ms)
{
    int64_t minute = now_ms / 60000;

    if (r->len == 0 || minute - r->minute >= RECENT_MINUTES) {
        r->len = 0;
        r->minute = minute - 1;
    }
    while (r->minute < minute) { /* what minutes without a tick did counts in the one before */
        ++r->minute;
        take(&r->snap[r->minute % RECENT_MINUTES], k);
        if (r->len < RECENT_MINUTES)
            r->len++;
    }
}

struct out {
    char *p;
    size_t n, len;
    int full;
};

static void
put(struct out *o, const char *fmt, long a, long b, long c)
{
    int w = o->full ? -1 : snprintf(o->p + o->len, o->n - o->len, fmt, a, b, c);

    if (w < 0 || (size_t)w >= o->n - o->len)
        o->full = 1;
    else
        o->len += (size_t)w;
}

/* The hour's counts per bucket: the cumulative counts now less those then, bucket by bucket,
 * the last one past every bound. */
static void
put_buckets(struct out *o, const long now[], const long then[])
{
    long prev = 0;

    for (int i = 0; i <= LATENESS_BUCKETS; i++) {
        long cum = now[i] - then[i];

        put(o, i ? ",%ld" : "%ld", cum - prev, 0, 0);
        prev = cum;
    }
    put(o, "]", 0, 0, 0);
}

int
recent_json(const struct recent *r, const struct counters *k, char *out, size_t n)
{
    struct out o = {out, n, 0, n == 0};
    struct recent_snap cur;
    const struct recent_snap *oldest;

    if (r->len == 0) {
        put(&o, "\"per_minute\":[]", 0, 0, 0);
        return o.full ? -1 : (int)o.len;
    }
    take(&cur, k);
    put(&o, "\"minute\":%ld,\"per_minute\":[", (long)r->minute, 0, 0);
    for (int j = 0; j < r->len; j++) {
        const struct recent_snap *newer = j ? at(r, r->minute - j + 1) : &cur;
        const struct recent_snap *s = at(r, r->minute - j);

        put(&o, j ? ",[%ld,%ld,%ld]" : "[%ld,%ld,%ld]", newer->sent - s->sent,
            newer->retried - s->retried, newer->dead - s->dead);
    }
    oldest = at(r, r->minute - r->len + 1);
    put(&o, "],\"dispatch\":[", 0, 0, 0);
    put_buckets(&o, cur.dispatch, oldest->dispatch);
    put(&o, ",\"delivery\":[", 0, 0, 0);
    put_buckets(&o, cur.delivery, oldest->delivery);
    return o.full ? -1 : (int)o.len;
}

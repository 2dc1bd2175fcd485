/* The counters shared by every part of the consumer (struct counters, consumer.h). */
#include "consumer.h"
#include "log.h"

static void
observe(struct histogram *h, int64_t ms)
{
    for (int i = 0; i < LATENESS_BUCKETS; i++)
        if (ms <= lateness_bounds_ms[i])
            atomic_fetch_add(&h->le[i], 1);
    atomic_fetch_add(&h->count, 1);
    atomic_fetch_add(&h->sum_ms, ms > 0 ? (long)ms : 0);
}

void
counters_lateness(struct counters *k, int64_t dispatch_ms, int64_t delivery_ms,
                  int64_t booked_late_ms)
{
    if (booked_late_ms > 0) {
        atomic_fetch_add(&k->booked_late, 1);
        atomic_fetch_add(&k->booked_late_ms, (long)booked_late_ms);
        return;
    }
    observe(&k->dispatch, dispatch_ms);
    observe(&k->delivery, delivery_ms);
}

long
counters_sum(const atomic_long v[3])
{
    return atomic_load(&v[0]) + atomic_load(&v[1]) + atomic_load(&v[2]);
}

void
counters_log(const struct consumer *c, const char *event)
{
    const struct counters *k = &c->counters;

    sa_log(SA_LOG_INFO, event,
           "consumer=%s pulled=%ld held=%ld moved=%ld sent=%ld failed=%ld retried=%ld dead=%ld "
           "cancelled=%ld duplicates=%ld redelivered_held=%ld key_waits=%ld parked=%ld",
           c->cfg.name, atomic_load(&k->pulled), atomic_load(&k->held), atomic_load(&k->moved),
           counters_sum(k->sent), counters_sum(k->failed), counters_sum(k->retried),
           counters_sum(k->dead), atomic_load(&k->cancelled), atomic_load(&k->duplicates),
           atomic_load(&k->redelivered_held), atomic_load(&k->key_waits), atomic_load(&k->parked));
}

/* Tasks claimed ahead of their due instant (SENDAT_CLAIM_LEAD): the "sending" claim is taken
 * a little before the task is due, so its round trip to the claims bucket is not paid after
 * the due instant; the send then starts on the dot. A min-heap by due time, owned by the
 * sending thread, never larger than the sends allowed in flight. */
#ifndef READY_H
#define READY_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"
#include "minheap.h"
#include "wheel.h"

struct ready_entry {
    struct held *h;
    uint64_t rev; /* the claim's revision */
    int lease;    /* the fleet lease taken for host, or -1 */
    char host[256];
};

/* A zeroed struct ready is an empty one. */
struct ready {
    struct minheap heap; /* of struct ready_entry, by the task's due time */
};

/* Adds a claimed task; SA_ENOMEM if the heap cannot grow (the caller sends it at once). */
enum sa_code ready_push(struct ready *r, const struct ready_entry *e,
                        struct sa_err *err) SA_MUST_CHECK;

/* The earliest due time waiting, or INT64_MAX. */
int64_t ready_next_due(const struct ready *r);

/* Takes the earliest entry into *out if it is due at now_ms; 1 if it did, else 0. */
int ready_pop_due(struct ready *r, int64_t now_ms, struct ready_entry *out);

/* How many wait. */
size_t ready_count(const struct ready *r);

void ready_free(struct ready *r);

#endif

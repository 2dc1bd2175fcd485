/* A set of stream sequences: which messages this consumer holds right now, so a redelivery of
 * one it still holds (its ack wait ran out during a broker election, say) is not held twice.
 * Open addressing with linear probing; removal shifts the run back, so there are no tombstones.
 * Not thread-safe: the wheel guards it with its lock. */
#ifndef SEQSET_H
#define SEQSET_H

#include <stddef.h>
#include <stdint.h>

struct seqset {
    uint64_t *slot; /* 0: empty (stream sequences start at 1) */
    size_t cap;     /* a power of two, or 0 */
    size_t len;
};

/* 1 if seq was added, 0 if it was there already, -1 if out of memory. */
int seqset_add(struct seqset *s, uint64_t seq);
/* Removes seq if present. */
void seqset_remove(struct seqset *s, uint64_t seq);
void seqset_free(struct seqset *s);

#endif

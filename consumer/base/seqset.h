/* A set of non-zero 64-bit keys, each with an optional value. The wheel keeps in it the stream
 * sequences it holds, so a redelivery of one it still holds (its ack wait ran out during a
 * broker election, say) is not held twice; the claim pipeline (claimq.c) and the mover
 * (mover.c) map their publishes in flight to their tasks, and the wheel counts the held tasks
 * per claimed task id in one (wheel_claiming). Open addressing with linear probing;
 * removal shifts the run back, so there are no tombstones. Not thread-safe: the owner guards it
 * with its lock. */
#ifndef SEQSET_H
#define SEQSET_H

#include <stddef.h>
#include <stdint.h>

struct seqset_entry {
    uint64_t key; /* 0: empty (stream sequences start at 1) */
    void *val;
};

struct seqset {
    struct seqset_entry *slot;
    size_t cap; /* a power of two, or 0 */
    size_t len;
};

enum seqset_put {
    SEQSET_ADDED,   /* seq was added (with val) */
    SEQSET_PRESENT, /* it was there already (or is 0): nothing changes */
    SEQSET_NOMEM,   /* out of memory: nothing changes */
};

enum seqset_put seqset_put(struct seqset *s, uint64_t seq, void *val);
/* seqset_put with no value. */
enum seqset_put seqset_add(struct seqset *s, uint64_t seq);
/* seq's value, left in place (NULL if absent or stored without one). */
void *seqset_get(const struct seqset *s, uint64_t seq);
/* Removes seq if present and returns its value (NULL if absent or stored without one). */
void *seqset_take(struct seqset *s, uint64_t seq);
/* Removes seq if present. */
void seqset_remove(struct seqset *s, uint64_t seq);
void seqset_free(struct seqset *s);

#endif

/* The fleet's side of level marks (common/levelmark.h): whether a slot about to be taken up
 * was published into, and the marks of slots long over purged. */
#ifndef MARKS_H
#define MARKS_H

#include <stdint.h>

#include "consumer.h"

/* A mark outlives its slot's end by SENDAT_MARKS_KEEP (c->cfg.marks_keep_ms, default a minute),
 * so a member whose clock is up to this far behind still finds it while it counts the slot as
 * running. */
/* How often a shard whose marks do not decide yet is looked at again (marks_slot_used). */
#define MARKS_GATE_EVERY_MS 10000

/* Whether marks decide for a shard: once every task stored before its marks started is gone
 * (the stream's first sequence past the "since" `sendat init` wrote), for good. Zeroed: not
 * known yet. */
struct marks_gate {
    int in_force;
    int64_t next_ms; /* when to look again */
};

/* Whether shard's slot (in stream) may hold tasks: 1 if its mark exists, if marks do not
 * decide for the shard yet (g), if the slot ended more than marks_keep_ms ago (its mark may be
 * gone), if there are no marks (no bucket) or if the broker did not say; 0 only if nobody
 * marked it. */
int marks_slot_used(struct consumer *c, struct marks_gate *g, int shard, const char *stream,
                    int64_t slot);

/* Purges the marks of shard's slots from *next on that ended marks_keep_ms before now_ms,
 * and moves *next past them (0: start a window further back). Stops at the first failure
 * (again next call). */
void marks_drop_over(struct consumer *c, int shard, int64_t *next, int64_t now_ms);

#endif

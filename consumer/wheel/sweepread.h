/* How the sweep reads a task stream in sequence order: direct gets "next by subject", many in
 * flight at once on an inbox of its own. One nats.c request at a time cost the consumer ~50 µs
 * of CPU per message (1.9 % of a core per member with 1,000,000 tasks booked). (A consumer of
 * its own cannot read it: the task stream is a work queue, where consumers may not overlap.) */
#ifndef SWEEPREAD_H
#define SWEEPREAD_H

#include <stdint.h>

#include "natsconn.h"

struct sweepread;

/* Opens a reader of the messages of stream on subjects from sequence from on, which waits for
 * no answer past until (ms since the epoch). SA_ENOMEM, or SA_ERETRY if it cannot subscribe. */
enum sa_code sweepread_open(struct sweepread **out, const struct sa_nats *n, const char *stream,
                            const char *subjects, uint64_t from, int64_t until,
                            struct sa_err *err) SA_MUST_CHECK;

/* The next stored message's sequence and subject (cut to cap; a subject cut ends in '?'), and
 * the message as the direct get answered it (*msg, the caller's to destroy; its data is the
 * stored body). NATS_NOT_FOUND: nothing more is stored now; any other status: the broker did
 * not answer in time, read on next turn. */
natsStatus sweepread_next(struct sweepread *r, uint64_t *seq, char *subject, size_t cap,
                          natsMsg **msg);

/* Frees r. NULL is fine. */
void sweepread_close(struct sweepread *r);

#endif

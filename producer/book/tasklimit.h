/* A task stream's size limit (sendat init --max-tasks, --max-task-bytes; issue 24.6): the
 * producers refuse a booking once a stream holds the limit, and the stream itself (max msgs,
 * max bytes, discard new) holds some headroom more, so the consumers' moves, retries and
 * next occurrences, each stored before its original is acked, still find room. Nothing
 * waiting is ever deleted. The limit is read back from the stream's config, so it is true on
 * every producer without a record of its own. */
#ifndef TASKLIMIT_H
#define TASKLIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "natsconn.h"

/* The headroom: a tenth of the limit, at least TASKLIMIT_MSGS_MIN tasks or
 * TASKLIMIT_BYTES_MIN bytes. */
#define TASKLIMIT_MSGS_MIN 10000
#define TASKLIMIT_BYTES_MIN (64LL << 20)

/* The stream's max msgs (bytes: max bytes) for a producers' limit; limit > 0. */
int64_t tasklimit_hard(int64_t limit, int bytes);

/* The producers' limit a stream's max msgs (bytes: max bytes) stands for (the inverse of
 * tasklimit_hard); 0 for a stream without one (hard <= 0). */
int64_t tasklimit_of(int64_t hard, int bytes);

/* Whether one more task of `bytes` may go into its shard's stream: SA_EFULL (err naming the
 * limit and the count) once the stream holds the producers' limit, else SA_OK. The stream is
 * asked at most once a second per shard by a process (what was admitted since counts on top);
 * a stream that does not answer admits (its publish says what is wrong). Thread-safe. */
enum sa_code tasklimit_admit(struct sa_nats *n, int shard, size_t bytes,
                             struct sa_err *err) SA_MUST_CHECK;

#endif

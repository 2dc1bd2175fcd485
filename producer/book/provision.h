/* Making the streams and buckets `sendat init` asks for (cli/cmd_init.c reads the flags and
 * settles the layout). */
#ifndef PROVISION_H
#define PROVISION_H

#include "natsconn.h"

/* What to make, as init's flags give it. */
struct provision {
    struct sa_layout layout; /* the layout in force (its shard count) */
    int replicas;
    int64_t dedupe_ms;
    int64_t claims_ttl_ms;
    int64_t dlq_age_ms;
    int64_t dlq_bytes;
    long max_tasks;         /* --max-tasks: the producers' limit per task stream; 0: none */
    int64_t max_task_bytes; /* --max-task-bytes; 0: none */
    int limits_given;       /* either flag: existing task streams get the limits */
};

/* Makes the meta bucket (if there is none) and binds n->meta. SA_ENATS. */
enum sa_code provision_meta(struct sa_nats *n, int replicas, struct sa_err *err) SA_MUST_CHECK;

/* Called for shard k once its task stream (named stream) and claims bucket exist, before its
 * level marks start: init records the claims bucket there (ledgermark.h). */
typedef enum sa_code provision_record_fn(struct sa_nats *n, int k, const char *stream,
                                         struct sa_err *err);

/* Makes the dead-letter stream and the buckets, then each shard's task stream and claims bucket
 * (record, if not NULL, called for each), where its level marks and its catch-up start. An
 * existing stream is kept as it is, except for the limits given (a task stream's
 * --max-tasks/--max-task-bytes, lower than what it holds: SA_EINVAL) and a dead-letter stream
 * made before it had a byte limit. */
enum sa_code provision_all(struct sa_nats *n, const struct provision *o,
                           provision_record_fn *record, struct sa_err *err) SA_MUST_CHECK;

#endif

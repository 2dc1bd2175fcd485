/* Reading the dead-letter stream for `sendat dlq` and `/v1/dead-letters`: dlq_page and dlq_get
 * give it as JSON (cli/cmd_dlq.c prints it). Each returns
 * SA_OK, SA_ENOTFOUND for an id with no dead letter, or another code with the reason in err
 * (cmd_dlq.c turns them into exit codes, serve_dlq.c into HTTP statuses). Replay and purge are
 * book/dlq_write.h. */
#ifndef DLQ_H
#define DLQ_H

#include <stdio.h>

#include <jansson.h>

#include "keyring.h"
#include "natsconn.h"

/* Up to limit dead letters after stream sequence after, oldest first, appended to out as
 * {"id","failed","attempts","reason","seq"}; *last is the sequence of the last one (after if
 * none). */
enum sa_code dlq_page(struct sa_nats *n, uint64_t after, long limit, json_t *out, uint64_t *last,
                      struct sa_err *err) SA_MUST_CHECK;

/* What dlq_get adds to the entry and its failed attempts: the webhook address, and the
 * content (header, data; email, subject, text, html). */
enum { DLQ_WEBHOOK = 1, DLQ_CONTENT = 2 };
enum sa_code dlq_get(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int parts,
                     json_t **out, struct sa_err *err) SA_MUST_CHECK;

#define DLQ_PREFIX "sendat.dlq." /* a dead letter's subject: DLQ_PREFIX and the task's id */

/* The first dead letter after stream sequence after whose subject matches filter, into *msg
 * (the caller destroys it); NATS_NOT_FOUND at the end. */
natsStatus dlq_next(struct sa_nats *n, uint64_t after, const char *filter, natsMsg **msg);

#endif

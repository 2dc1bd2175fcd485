/* The dead-letter stream's operations behind `sendat dlq` and `/v1/dead-letters`. dlq_list and
 * dlq_show print their result on stdout; dlq_page and dlq_get give it as JSON. Each returns
 * SA_OK, SA_ENOTFOUND for an id with no dead letter, or another code with the reason in err
 * (cmd_dlq.c turns them into exit codes, serve_dlq.c into HTTP statuses). */
#ifndef DLQ_H
#define DLQ_H

#include <stdio.h>

#include <jansson.h>

#include "keyring.h"
#include "natsconn.h"

/* Prints the first limit dead letters, a line each, or with json one document
 * {"dead_letters":[...],"next_cursor"} as GET /v1/dead-letters answers. */
enum sa_code dlq_list(struct sa_nats *n, int json, long limit, struct sa_err *err) SA_MUST_CHECK;
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

/* full: also the task's content (recipients, headers, body), which only the key opens. */
enum sa_code dlq_show(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int json,
                      int full, struct sa_err *err) SA_MUST_CHECK;
/* id NULL: every dead letter. at_ms 0: now. Each replayed id is named on report (NULL: none);
 * a dead letter that cannot be replayed is named on stderr (if report) and the others are
 * still replayed; err then counts the failures, or says why the one id failed. */
enum sa_code dlq_replay(struct sa_nats *n, const struct sa_keyring *ring, const char *id,
                        int64_t at_ms, FILE *report, struct sa_err *err) SA_MUST_CHECK;
/* id NULL: every dead letter. An id without a dead letter: SA_ENOTFOUND. Prints nothing. */
enum sa_code dlq_purge(struct sa_nats *n, const char *id, struct sa_err *err) SA_MUST_CHECK;

#endif

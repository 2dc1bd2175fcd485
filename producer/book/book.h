/* Booking one task: the path `sendat schedule` and `POST /v1/tasks` share, from a built task
 * (or a JSON object describing one) to a stored task, its series registered first. */
#ifndef BOOK_H
#define BOOK_H

#include <jansson.h>

#include "dupcheck.h"
#include "book_req.h"

/* Registers t's series if it is one and publishes t. id gets the task's id (a series: the
 * series id). A single task under an id the user gave (id_given) is first refused if that id's
 * task finished and is still remembered (dupcheck_gone: SA_ENOTFOUND, *gone says what and
 * when; gone may be NULL). SA_EEXIST: that very task or series was scheduled already (nothing
 * new was published); SA_ECONFLICT, SA_ENOTFOUND as dupcheck_verify; else a broker error. */
enum sa_code book_task(struct sa_nats *n, const struct sa_keyring *ring, const struct sa_task *t,
                       int id_given, char id[SA_ID_MAX + 1], struct dupcheck_gone *gone,
                       struct sa_err *err) SA_MUST_CHECK;

/* Builds (and checks) the task a JSON object describes, without booking it; *out is the
 * caller's. SA_EINVAL: bad input, err says which key. */
enum sa_code book_build_json(json_t *obj, struct sa_task **out, struct sa_err *err) SA_MUST_CHECK;

/* Builds the task a JSON object describes (its keys are the long flag names: "at",
 * "webhook", "data", ..., as in batch lines) and books it (book_task; its "id" is given).
 * SA_EINVAL: bad input, err says which key. */
enum sa_code book_json(struct sa_nats *n, const struct sa_keyring *ring, json_t *obj,
                       char id[SA_ID_MAX + 1], struct dupcheck_gone *gone,
                       struct sa_err *err) SA_MUST_CHECK;

#endif

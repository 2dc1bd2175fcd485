/* sa_nats_fail: a nats.c status as an sa_err (natserr.c). */
#ifndef SA_NATSERR_H
#define SA_NATSERR_H

#include <nats/nats.h>

#include "sa_err.h"

/* Converts a nats.c status (and JetStream error code, 0 if none) once, at the boundary:
 * "what: <status text> (<last error>)". Timeouts and lost connections map to SA_ERETRY. */
enum sa_code sa_nats_fail(struct sa_err *err, natsStatus s, jsErrCode jerr, const char *what);

/* Whether a publish failed because its stream holds its message or byte limit (discard new:
 * "maximum messages exceeded", "maximum bytes exceeded"); sa_nats_fail gives it SA_EFULL. */
int sa_nats_is_full(jsErrCode jerr, const char *text);

#endif

/* Reading a cancel bucket key: a task's or series' cancel, or a series' pause key (issue 37.8).
 * The key holds the records sendat made (sa_cancelrec_make) and whatever else a client allowed
 * to write the bucket put over them: a DEL marker, or bytes without the key's MAC. Neither
 * clears a cancel or a pause. Only an authentic record decides, the newest one: a cancel or a
 * pause (text: a time), or a lift (text: SA_CANCELREC_LIFT and a time; `series resume` writes
 * one, then a DEL for consumers of older versions). What lies over it is passed over, read from
 * the key's history (the bucket keeps SA_CANCEL_HISTORY entries a key, `sendat init`). */
#ifndef SA_CANCELREC_H
#define SA_CANCELREC_H

#include <stddef.h>
#include <stdint.h>

#include <nats/nats.h>

#include "sa_err.h"

#define SA_CANCELREC_LIFT "resumed@"
#define SA_CANCEL_HISTORY 16

/* Whether an authentic value (sa_cancelrec_check) lifts what was there (a resume). */
int sa_cancelrec_is_lift(const char *value, size_t len);

/* Reads key's cancel record: SA_OK with *at_ms when the deciding record was written (the
 * server's clock) if it is a cancel or pause; SA_ENOTFOUND if the key holds none, or the newest
 * authentic one is a lift; SA_ECRYPTO if the key holds only junk and markers, fewer than its
 * history keeps (nothing sendat wrote was ever there: it cancels nothing); SA_EINVAL, *at_ms the
 * last entry's time, if junk and markers fill the whole history the bucket keeps (what they
 * pushed out may have been a cancel: in doubt); SA_ENATS if the bucket did not answer. A
 * process without a key cannot check: the last value reads as SA_OK, a DEL as SA_ENOTFOUND
 * (`sendat series list` or `status` without one show what the records say). */
enum sa_code sa_cancelrec_get(jsCtx *js, kvStore *kv, const char *key, int64_t *at_ms,
                              struct sa_err *err) SA_MUST_CHECK;

#endif

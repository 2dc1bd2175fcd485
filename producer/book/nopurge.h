/* A claims bucket refuses PURGE markers. A KV purge is a publish with a `Nats-Rollup` header
 * that erases the key's history, so a client allowed to write claim keys (the producer role:
 * `sendat cancel` writes them) could erase a "sent" record and every record under it; a
 * captured sealed task published again would then find nothing and be sent a second time.
 * sendat never purges a claim, so the bucket's stream is kept with rollups disallowed; DEL
 * markers and junk leave the history in place (claim.h, sa_claim_get_under). */
#ifndef NOPURGE_H
#define NOPURGE_H

#include <nats/nats.h>

#include "sa_err.h"

/* Updates stream (a claims bucket's, "KV_...") to disallow rollups if it allows them. SA_OK
 * when it does not (already, or now); else the broker's failure. */
enum sa_code nopurge_settle(jsCtx *js, const char *stream, struct sa_err *err) SA_MUST_CHECK;

#endif

/* The claims buckets `sendat init` made (issue 37.10). A claims bucket deleted and made again
 * (by an admin, or by an init after the delete) has lost the record of every send and cancel
 * before: a consumer that went on would send a task a member sent already. So init writes, per
 * shard, the creation time of its claims bucket's stream into the meta bucket ("ledger",
 * "ledger.<k>"); a consumer sends only while every bucket it claims in is the one recorded,
 * and init, finding another (or none), says what was lost before it records the new one. */
#ifndef SA_LEDGERMARK_H
#define SA_LEDGERMARK_H

#include <stdint.h>

#include "sa_err.h"
#include "natsconn.h"

#define SA_LEDGER_META "ledger"

/* The server's creation time (ns) of shard k's claims bucket stream; SA_ENOTFOUND if there
 * is none, SA_ENATS if the server did not answer. */
enum sa_code sa_ledger_created(jsCtx *js, int k, int64_t *ns, struct sa_err *err) SA_MUST_CHECK;

/* The creation time init recorded for shard k (0 if none: a layout of a version before it). */
enum sa_code sa_ledger_recorded(kvStore *meta, int k, int64_t *ns, uint64_t *rev,
                                struct sa_err *err) SA_MUST_CHECK;

/* SA_OK if shard k's claims bucket is the one init recorded; SA_ENOTFOUND (why: the bucket
 * gone, made again since init, or never recorded) if not; SA_ERETRY if the server did not
 * answer, SA_ENATS if it answered an error. Costs a stream info and a meta get. */
enum sa_code sa_ledger_check_shard(const struct sa_nats *n, int k,
                                   struct sa_err *err) SA_MUST_CHECK;

/* sa_ledger_check_shard for every shard, the first that is not SA_OK deciding. */
enum sa_code sa_ledger_check(const struct sa_nats *n, struct sa_err *err) SA_MUST_CHECK;

#endif

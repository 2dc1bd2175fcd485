/* Groups (SendGrid's batch_id): a task booked with a group gets the key "<group>.<task id>"
 * in the sendat_groups bucket, and `sendat cancel --group` / DELETE /v1/groups/{name} cancel
 * every task of the group not sent yet, each by the claim race of a single cancel
 * (invariant 3), many claims in flight at once. */
#ifndef GROUP_H
#define GROUP_H

#include "natsconn.h"
#include "task.h"

/* The membership write of t (which has a group): a KV put on $KV.sendat_groups.<group>.<id>,
 * the due time as its value, to publish synchronously or asynchronously. */
enum sa_code group_member_msg(natsMsg **out, const struct sa_task *t,
                              struct sa_err *err) SA_MUST_CHECK;

/* How long a membership lives (the groups bucket's max age: the claims TTL), 0 for ever; one
 * stream info request. */
enum sa_code group_ttl(struct sa_nats *n, int64_t *ttl_ms, struct sa_err *err) SA_MUST_CHECK;

/* SA_EINVAL (field "group") if t, booked at now, is due after its membership would expire
 * (ttl_ms from now; 0: never): `cancel --group` could not reach it. SA_OK without a group. */
enum sa_code group_fits(const struct sa_task *t, int64_t now, int64_t ttl_ms,
                        struct sa_err *err) SA_MUST_CHECK;

/* Writes t's membership and waits for the PubAck (nothing to do if t has no group), once
 * group_fits. */
enum sa_code group_record(struct sa_nats *n, const struct sa_task *t,
                          struct sa_err *err) SA_MUST_CHECK;

struct group_result {
    long cancelled; /* will never be sent (including those cancelled before) */
    long too_late;  /* sent, or being sent, before the cancel reached them */
};

/* Cancels every task of group. A group nobody booked answers 0 and 0. SA_EINVAL for a name
 * no group can have, else a broker error. */
enum sa_code group_cancel(struct sa_nats *n, const char *group, struct group_result *out,
                          struct sa_err *err) SA_MUST_CHECK;

#endif

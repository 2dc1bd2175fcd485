/* Groups an operator can browse: `sendat group list|show`, GET /v1/groups and
 * GET /v1/groups/{name}. A group's members are the keys "<group>.<id>" of the groups bucket
 * (the due time their value); each member's state is its claim's, read in one pipelined pass
 * (claimscan.h). */
#ifndef GROUPVIEW_H
#define GROUPVIEW_H

#include <jansson.h>

#include "natsconn.h"

#define GROUPVIEW_LIMIT_MAX 1000
#define GROUPVIEW_MEMBERS_MAX 200000 /* the most members one call reads (else SA_ENOMEM) */
/* The most members one page of groupview_list reads: past it, the newest (issue 37.8) */
#define GROUPVIEW_LIST_SCAN 50000
/* The most claims one page of groupview_list reads (a larger group alone still makes a page):
 * the states of the page's own groups only; the others' keys are read, not their claims. */
#define GROUPVIEW_PAGE_CLAIMS 20000
#define GROUPVIEW_CURSOR_MAX (48 + SA_ID_MAX)

/* One page of the groups, newest booking first (then by name), after cursor (NULL or "": from
 * the start): appends to out {"group","tasks","waiting","sent","failed","dead","cancelled",
 * "first_due","last_due","next_send" (null if none waits),"booked" (its newest booking)}. next
 * gets the cursor of the next page, or "". A page ends before limit where its groups' members
 * would pass GROUPVIEW_PAGE_CLAIMS (every group's keys are read, the page's claims only).
 * When the bucket stores more than GROUPVIEW_LIST_SCAN members, only the newest
 * GROUPVIEW_LIST_SCAN are read and *truncated is 1: older groups are missing and a group
 * booked across the boundary counts only its newer members (groupview_show reads one group
 * whole); else 0. SA_EINVAL for a bad cursor, else broker errors. */
enum sa_code groupview_list(struct sa_nats *n, long limit, const char *cursor, json_t *out,
                            char next[GROUPVIEW_CURSOR_MAX], int *truncated,
                            struct sa_err *err) SA_MUST_CHECK;

/* One group: its figures (as a groupview_list item), "cancel" {"will_cancel" (waiting,
 * failed or dead: a group cancel makes them cancelled),"already_cancelled","already_sent"},
 * and one page of its tasks in due order, "members" [{"id","due","state"}], after cursor, with
 * "next_cursor". SA_ENOTFOUND if the group has no member, SA_EINVAL for a bad name or cursor. */
enum sa_code groupview_show(struct sa_nats *n, const char *group, long limit, const char *cursor,
                            json_t **out, struct sa_err *err) SA_MUST_CHECK;

#endif

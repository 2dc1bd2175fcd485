/* sendat init's marks (init_marks.c). */
#ifndef INIT_MARKS_H
#define INIT_MARKS_H

#include "natsconn.h"

/* Records shard k's claims bucket (of task stream `stream`) as init's (ledgermark.h), saying
 * on stderr what was lost if another was recorded: until then the consumers claim nothing in
 * it. A provision_record_fn. */
enum sa_code init_record_ledger(struct sa_nats *n, int k, const char *stream,
                                struct sa_err *err) SA_MUST_CHECK;

/* Marks when claim and cancel records began to carry MACs (claimmac.h), once: the record's
 * server time is the line before which a record without a MAC is an older version's. Run last,
 * when every bucket exists: consumers wait for it (an upgrade's consumers until this init).
 * layout_existed: an earlier init ran (records stored until now are named on stderr). */
enum sa_code init_mark_mac_since(struct sa_nats *n, int layout_existed,
                                 struct sa_err *err) SA_MUST_CHECK;

#endif

/* The claims buckets watched (issue 37.10): every LEDGERWATCH_MS, on a thread of its own, the
 * consumer asks whether one shard's claims bucket is still the one `sendat init` recorded
 * (ledgermark.h), the shards in turn (every one was checked at start): a bucket lost is seen
 * within LEDGERWATCH_MS times the shard count, and each member asks a stream info and a meta
 * get per turn whatever the shard count. A shard found lost is asked again every turn until
 * it is back. While one is gone or was made again, c->ledger_lost is set: the
 * sender claims nothing (a task waits, held, for the bucket), /readyz says why, and the
 * consumer logs ledger_lost once; ledger_back when init has recorded the bucket again.
 *
 * The same look tells when JetStream stops answering while the connection is up (issue 37.9:
 * a full store disk wedges nats-server 2.9's JetStream, and it answers nothing until it is
 * restarted, even once space is back): after LEDGERWATCH_SILENT_MS without an answer,
 * c->js_silent is set, /readyz and the log (jetstream_silent, once) say what to do, and
 * jetstream_back is logged when it answers again. Nothing held is lost meanwhile: tasks stay
 * in the stream and go out once the server answers. */
#ifndef LEDGERWATCH_H
#define LEDGERWATCH_H

#include "consumer.h"

#define LEDGERWATCH_MS 2000
#define LEDGERWATCH_SILENT_MS 15000

struct ledgerwatch;

enum sa_code ledgerwatch_start(struct ledgerwatch **out, struct consumer *c,
                               struct sa_err *err) SA_MUST_CHECK;
void ledgerwatch_stop(struct ledgerwatch *w); /* accepts NULL */

#endif

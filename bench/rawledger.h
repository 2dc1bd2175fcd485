/* The per-batch claim ledger prototype of issue 32 item 2 (sendat-rawjs ledger): the ledger
 * stream's names, and what rawledger.c and rawledger_cancel.c share. */
#ifndef RAWLEDGER_H
#define RAWLEDGER_H

#include <stdint.h>

#include <nats/nats.h>

#define RAWLEDGER_STREAM "RAWLEDGER"
/* Claim blocks and cancels: what the watcher reads, in the one order that decides between them */
#define RAWLEDGER_WATCHED "ledger.s0.k.>"
#define RAWLEDGER_CLAIM "ledger.s0.k.claim"
#define RAWLEDGER_CANCEL "ledger.s0.k.cancel"
/* Outcome blocks: in the same stream, not read by the watcher */
#define RAWLEDGER_OUTCOME "ledger.s0.o"
/* A task id as a block names it: sendat's ids are 26 characters */
#define RAWLEDGER_ID_LEN 26

/* Replaces the stream RAWLEDGER (limits retention, file storage) by an empty one. */
void rawledger_make(jsCtx *js, int replicas);
/* Writes task index i as a block names it (RAWLEDGER_ID_LEN characters and a NUL) into id. */
void rawledger_id(char *id, long i);
/* An ordered consumer of RAWLEDGER_WATCHED from start_ns (UTC nanoseconds; 0: from the first
 * record): read with natsSubscription_NextMsg, or with cb set, handed to cb(arg) on the
 * library's thread. Exits if it cannot be made. */
natsSubscription *rawledger_watch(jsCtx *js, int64_t start_ns, natsMsgHandler cb, void *arg);

/* What a cancel's answer costs once the burst is over: appends a cancel for task index id,
 * then reads the ledger from start_ns up to the cancel's own sequence, looking for a claim
 * block that names the id. Prints ,"NAME":{answer, ms, records_read, bytes_read}. */
void rawledger_answer_cancel(jsCtx *js, long id, int64_t start_ns, const char *name);

#endif

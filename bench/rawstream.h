/* The stream RAWJS that sendat-rawjs's bench and fill publish to, shaped like sendat's (work
 * queue, file storage, one subject per message, an hour's dedupe window), and its async
 * publishing: every PubAck is counted, and a re-published message's original is acked once
 * its copy is stored. */
#ifndef RAWSTREAM_H
#define RAWSTREAM_H

#include <nats/nats.h>

#define RAWSTREAM_NAME "RAWJS"
#define RAWSTREAM_W 1000000000000LL /* the "window" token of every subject: any fixed number */

/* Replaces the stream RAWJS (a leftover of an interrupted run) by an empty one; exits if it
 * cannot. */
void rawstream_make(jsCtx *js, int replicas);
/* Replaces KV bucket name (history 1, file storage) by an empty one; exits if it cannot. */
kvStore *rawstream_bucket(jsCtx *js, const char *name, int replicas);
/* A JetStream context whose async publishes report to this file's PubAck handler. */
jsCtx *rawstream_js(natsConnection *nc);
/* Waits (up to 2 min) until every async publish of js has its PubAck; exits if not. */
void rawstream_wait(jsCtx *js);
/* Publishes n messages of size bytes to rawjs.W.level.I asynchronously, with a Msg-Id and one
 * header as sendat's producer sends if with_id, and waits for their PubAcks. Returns the
 * seconds taken. */
double rawstream_publish(jsCtx *js, const char *level, long n, const char *payload, int size,
                         int with_id);
/* From now on the I of the subjects rawstream_publish writes is i % mod (0: i, one each). */
void rawstream_share_subjects(long mod);
/* Once the copy of pulled message I (the last token of its subject) is stored, originals[I] is
 * acked through nc, destroyed and set to NULL. originals NULL: no more of that. */
void rawstream_ack_originals(natsConnection *nc, natsMsg **originals);
/* The last token of a subject as a number, -1 without one. */
long rawstream_index(const char *subject);
/* How many async publishes failed so far. */
long rawstream_failed(void);

#endif

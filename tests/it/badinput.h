/* What the bad-input tests share (test_badinput.c, test_badinput_park.c): a fleet with a
 * plain JetStream connection beside it to publish what no producer would, and to read the
 * streams and the dead letters it leads to. */
#ifndef BADINPUT_H
#define BADINPUT_H

#include <stdint.h>

#include "fixture.h"

extern struct fx F;
extern natsConnection *nc;
extern jsCtx *js;

/* The messages stream holds now (fx_stream_msgs on the connection beside the fleet). */
uint64_t stream_msgs(const char *stream);
/* Publishes raw bytes on a task subject of the current window, under id. */
void publish_raw(const char *id, const void *data, int len);
/* Checks id's dead letter gives a reason with want in it, and names no address. */
void dead_reason(const char *id, const char *want);
/* wait_until condition: the dead-letter stream holds at least (intptr_t)arg messages. */
int dlq_has(void *arg);
/* A server, the connection beside it and one consumer (a made-up key id waited 2 s). */
void start_with_consumer(void);
/* Stops the consumer (it must exit 0), the connection and the server. */
void stop_with_consumer(void);

#endif

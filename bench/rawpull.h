/* The benchmark's pull: one request at a time to a durable over a plain inbox subscription
 * (common/jspull.h), answered as a list, as a plain JetStream client would pull. */
#ifndef RAWPULL_H
#define RAWPULL_H

#include <nats/nats.h>

struct rawpull {
    natsConnection *nc;
    natsSubscription *sub;
    char stream[64], durable[64], prefix[64];
    unsigned req;
};

/* Subscribes to a fresh inbox for durable of stream. 0 on success. */
int rawpull_open(struct rawpull *r, natsConnection *nc, const char *stream, const char *durable);

/* Asks for up to batch messages, open on the server for expires_ms, and returns them in
 * list (natsMsgList_Destroy frees it) once the batch is in or the server closes the request.
 * A late message of an earlier request is taken too. Returns list->Count. */
int rawpull_get(struct rawpull *r, natsMsgList *list, int batch, int64_t expires_ms);

void rawpull_close(struct rawpull *r);

#endif

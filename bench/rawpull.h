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

/* Adds durable on stream for filter (explicit acks, 60 s ack wait, up to 100,000 pending:
 * what sendat gives each level) and opens a pull on it, freed with rawpull_free. Exits with
 * the reason on failure, as every phase of the bench does. */
struct rawpull *rawpull_durable(natsConnection *nc, jsCtx *js, const char *stream,
                                const char *durable, const char *filter);
/* Closes a pull of rawpull_durable and frees it. */
void rawpull_free(struct rawpull *r);

#endif

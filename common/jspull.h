/* JetStream's pull protocol (ADR-13) over a plain subscription the caller owns: requests left
 * open on the server with a long expiry and idle heartbeats, answered whenever something
 * arrives. nats.c 3.4's fetch is not used: it had a heap overflow on late answers (fixed in
 * 3.10), and it waits out an empty level in the calling thread. */
#ifndef SA_JSPULL_H
#define SA_JSPULL_H

#include <nats/nats.h>

#include "sa_err.h"

/* What a message that reached a pull inbox is: a task (a stream message to ack), or one of
 * the server's status messages about the request it answers. */
enum sa_jspull_kind {
    SA_JSPULL_TASK = 0,
    SA_JSPULL_HEARTBEAT,   /* 100: the request is still open */
    SA_JSPULL_NO_MESSAGES, /* 404: a no-wait request found nothing */
    SA_JSPULL_TIMEOUT,     /* 408: the request expired (or was pushed out); it is closed */
    SA_JSPULL_CLOSED,      /* 409 and any other status: the request is closed */
};

/* Asks durable of stream for up to batch messages, delivered to reply, the request open on
 * the server for expires_ms with a heartbeat every heartbeat_ms while idle (0: none; at most
 * half the expiry). Publishes only: nothing waits for the answer. */
natsStatus sa_jspull_request(natsConnection *nc, const char *stream, const char *durable,
                             const char *reply, int batch, int64_t expires_ms,
                             int64_t heartbeat_ms);

/* Classifies msg; for a status, *pending (may be NULL) gets Nats-Pending-Messages (what the
 * closed request had not received), else 0. */
enum sa_jspull_kind sa_jspull_classify(natsMsg *msg, long *pending);

/* The stream and durable a task message came from (its ack subject's stream and consumer
 * tokens), copied into stream and durable; 0 if the reply subject is not a JetStream ack
 * subject or a token does not fit. */
int sa_jspull_origin(char *stream, size_t scap, char *durable, size_t dcap, natsMsg *msg);

enum sa_jspull_ack {
    SA_JSPULL_ACK,      /* done: the stream forgets it */
    SA_JSPULL_NAK,      /* give it back now (or after delay_ms) */
    SA_JSPULL_PROGRESS, /* still working: the ack wait starts again */
};

/* Answers a task message through its reply subject on nc (nats.c's natsMsg_Ack needs a
 * JetStream subscription and crashes on a message of a plain one). delay_ms only for a nak. */
natsStatus sa_jspull_ack(natsConnection *nc, natsMsg *msg, enum sa_jspull_ack kind,
                         int64_t delay_ms);

/* So that a file pulling this way cannot answer a message with them by mistake: a compile
 * error instead of a crash. */
#pragma GCC poison natsMsg_Ack natsMsg_AckSync natsMsg_Nak natsMsg_NakWithDelay
#pragma GCC poison natsMsg_InProgress natsMsg_Term

#endif

/* The pull protocol by hand: a request is one publish of {"batch","expires","idle_heartbeat"}
 * to the API's CONSUMER.MSG.NEXT.<stream>.<durable> with the caller's inbox as reply; the server
 * sends stream messages (subject: the task's, reply: its $JS.ACK subject) and status
 * messages (no body, a Status header) to that inbox. Acks go to the ack subject. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jspull.h"
#include "jsapi.h"

#define ACK_PREFIX "$JS.ACK."

natsStatus
sa_jspull_request(natsConnection *nc, const char *stream, const char *durable, const char *reply,
                  int batch, int64_t expires_ms, int64_t heartbeat_ms)
{
    char subject[256], body[128];

    sa_jsapi_subject(subject, sizeof(subject), "CONSUMER.MSG.NEXT.%s.%s", stream, durable);
    if (heartbeat_ms > 0)
        snprintf(body, sizeof(body),
                 "{\"batch\":%d,\"expires\":%" PRId64 ",\"idle_heartbeat\":%" PRId64 "}", batch,
                 expires_ms * 1000000, heartbeat_ms * 1000000);
    else
        snprintf(body, sizeof(body), "{\"batch\":%d,\"expires\":%" PRId64 "}", batch,
                 expires_ms * 1000000);
    return natsConnection_PublishRequestString(nc, subject, reply, body);
}

enum sa_jspull_kind
sa_jspull_classify(natsMsg *msg, long *pending)
{
    const char *status = NULL, *left = NULL;

    if (pending)
        *pending = 0;
    if (natsMsg_GetDataLength(msg) > 0 || natsMsgHeader_Get(msg, "Status", &status) != NATS_OK ||
        !status)
        return SA_JSPULL_TASK;
    if (pending && natsMsgHeader_Get(msg, "Nats-Pending-Messages", &left) == NATS_OK && left)
        *pending = strtol(left, NULL, 10);
    if (!strncmp(status, "100", 3))
        return SA_JSPULL_HEARTBEAT;
    if (!strncmp(status, "404", 3))
        return SA_JSPULL_NO_MESSAGES;
    if (!strncmp(status, "408", 3))
        return SA_JSPULL_TIMEOUT;
    return SA_JSPULL_CLOSED;
}

/* Copies the token that starts at from (up to the next dot) into out; the character after
 * it, or NULL if there is no dot or it does not fit. */
static const char *
token(char *out, size_t cap, const char *from)
{
    const char *end = strchr(from, '.');

    if (!end || (size_t)(end - from) >= cap)
        return NULL;
    memcpy(out, from, (size_t)(end - from));
    out[end - from] = '\0';
    return end + 1;
}

int
sa_jspull_origin(char *stream, size_t scap, char *durable, size_t dcap, natsMsg *msg)
{
    const char *reply = natsMsg_GetReply(msg), *next;

    /* $JS.ACK.<stream>.<durable>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending> */
    if (!reply || strncmp(reply, ACK_PREFIX, strlen(ACK_PREFIX)) != 0)
        return 0;
    next = token(stream, scap, reply + strlen(ACK_PREFIX));
    return next && token(durable, dcap, next) != NULL;
}

natsStatus
sa_jspull_ack(natsConnection *nc, natsMsg *msg, enum sa_jspull_ack kind, int64_t delay_ms)
{
    const char *reply = natsMsg_GetReply(msg);
    char body[64];

    if (!reply || strncmp(reply, ACK_PREFIX, strlen(ACK_PREFIX)) != 0)
        return NATS_ILLEGAL_STATE; /* not a JetStream message */
    switch (kind) {
    case SA_JSPULL_ACK:
        return natsConnection_PublishString(nc, reply, "+ACK");
    case SA_JSPULL_PROGRESS:
        return natsConnection_PublishString(nc, reply, "+WPI");
    case SA_JSPULL_NAK:
        break;
    }
    if (delay_ms <= 0)
        return natsConnection_PublishString(nc, reply, "-NAK");
    snprintf(body, sizeof(body), "-NAK {\"delay\":%" PRId64 "}", delay_ms * 1000000);
    return natsConnection_PublishString(nc, reply, body);
}

/* See stepdown.h. The answer is {"type":...,"success":true} or {"type":...,"error":{...}}:
 * jansson reads the error's description for the caller's log. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "natserr.h"
#include "stepdown.h"

/* The error an answer carries; SA_OK if it has none. */
static enum sa_code
answer(const char *stream, const char *data, int len, struct sa_err *err)
{
    json_t *root = json_loadb(data, (size_t)len, 0, NULL);
    json_t *e = root ? json_object_get(root, "error") : NULL;
    enum sa_code rc = SA_OK;

    if (!root)
        rc = sa_fail(err, SA_ENATS, "step down %s: the answer is not JSON", stream);
    else if (e)
        rc = sa_fail(err, SA_ENATS, "step down %s: %s", stream,
                     json_string_value(json_object_get(e, "description"))
                         ? json_string_value(json_object_get(e, "description"))
                         : "refused");
    json_decref(root);
    return rc;
}

enum sa_code
sa_stepdown(natsConnection *nc, const char *stream, const char *to, int timeout_ms,
            struct sa_err *err)
{
    char subject[160], body[160];
    natsMsg *reply = NULL;
    natsStatus s;
    enum sa_code rc;

    if (to && (strpbrk(to, "\"\\") || strlen(to) > 100))
        return sa_fail(err, SA_EINVAL, "step down %s: server name %s cannot be sent", stream, to);
    snprintf(subject, sizeof(subject), "$JS.API.STREAM.LEADER.STEPDOWN.%s", stream);
    if (to) {
        snprintf(body, sizeof(body), "{\"placement\":{\"preferred\":\"%s\"}}", to);
        s = natsConnection_RequestString(&reply, nc, subject, body, timeout_ms);
    } else {
        s = natsConnection_Request(&reply, nc, subject, NULL, 0, timeout_ms);
    }
    if (s != NATS_OK) {
        snprintf(subject, sizeof(subject), "step down %s", stream);
        return sa_nats_fail(err, s, 0, subject);
    }
    rc = answer(stream, natsMsg_GetData(reply), natsMsg_GetDataLength(reply), err);
    natsMsg_Destroy(reply);
    return rc;
}

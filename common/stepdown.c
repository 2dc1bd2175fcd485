/* See stepdown.h. The answer is {"type":...,"success":true} or {"type":...,"error":{...}}, whose
 * description jsapi.c puts in the caller's error. */
#include <stdio.h>
#include <string.h>

#include "jsapi.h"
#include "stepdown.h"

enum sa_code
sa_stepdown(natsConnection *nc, const char *stream, const char *to, int timeout_ms,
            struct sa_err *err)
{
    char api[160], body[160] = "";

    if (to && (strpbrk(to, "\"\\") || strlen(to) > 100))
        return sa_fail(err, SA_EINVAL, "step down %s: server name %s cannot be sent", stream, to);
    snprintf(api, sizeof(api), "STREAM.LEADER.STEPDOWN.%s", stream);
    if (to)
        snprintf(body, sizeof(body), "{\"placement\":{\"preferred\":\"%s\"}}", to);
    return sa_jsapi_request(nc, api, body, timeout_ms, NULL, NULL, err);
}

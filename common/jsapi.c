/* Raw JetStream API requests (jsapi.h). An answer is {"type":...,...} or
 * {"type":...,"error":{"code":...,"err_code":...,"description":...}}. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jsapi.h"
#include "natserr.h"

#define PREFIX "$JS.API."

int
sa_jsapi_subject(char *out, size_t cap, const char *fmt, ...)
{
    int n = snprintf(out, cap, PREFIX), m;
    va_list ap;

    if (n < 0 || (size_t)n >= cap)
        return -1;
    va_start(ap, fmt);
    m = vsnprintf(out + n, cap - (size_t)n, fmt, ap);
    va_end(ap);
    return m < 0 || (size_t)m >= cap - (size_t)n ? -1 : n + m;
}

natsStatus
sa_jsapi_raw(natsMsg **reply, natsConnection *nc, const char *api, const char *body,
             int64_t wait_ms)
{
    char subject[512];

    *reply = NULL;
    if (sa_jsapi_subject(subject, sizeof(subject), "%s", api) < 0)
        return NATS_INVALID_ARG;
    return natsConnection_RequestString(reply, nc, subject, body ? body : "", wait_ms);
}

/* The error an answer carries into err (and *code); SA_OK if it has none. */
static enum sa_code
answer_error(const char *api, json_t *doc, int *code, struct sa_err *err)
{
    json_t *e = json_object_get(doc, "error");
    const char *why = json_string_value(json_object_get(e, "description"));

    if (!e)
        return SA_OK;
    if (code)
        *code = (int)json_integer_value(json_object_get(e, "err_code"));
    return sa_fail(err, SA_ENATS, "%s: %s", api, why ? why : "refused");
}

enum sa_code
sa_jsapi_request(natsConnection *nc, const char *api, const char *body, int64_t wait_ms,
                 json_t **answer, int *code, struct sa_err *err)
{
    natsMsg *reply = NULL;
    natsStatus s = sa_jsapi_raw(&reply, nc, api, body, wait_ms);
    json_t *doc = NULL;
    enum sa_code rc;

    if (answer)
        *answer = NULL;
    if (code)
        *code = 0;
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, api);
    doc = json_loadb(natsMsg_GetData(reply), (size_t)natsMsg_GetDataLength(reply), 0, NULL);
    natsMsg_Destroy(reply);
    if (!doc)
        return sa_fail(err, SA_ENATS, "%s: the answer is no JSON", api);
    rc = answer_error(api, doc, code, err);
    if (rc == SA_OK && answer)
        *answer = doc;
    else
        json_decref(doc);
    return rc;
}

/* Server features from the JetStream API level: see jsfeat.h. */
#include "jsfeat.h"
#include "jsapi.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INFO_WAIT_MS 2000

unsigned
sa_jsfeat_of_level(int level)
{
    unsigned have = 0;

    if (level >= 1)
        have |= SA_JSFEAT_MSG_TTL;
    if (level >= 2)
        have |= SA_JSFEAT_ATOMIC | SA_JSFEAT_SCHEDULE;
    if (level >= 4)
        have |= SA_JSFEAT_RESET;
    return have;
}

/* The API level in an account info answer; 0 if it names none. */
static int
level_of(const char *data, int len)
{
    json_t *root = json_loadb(data, (size_t)len, 0, NULL);
    json_t *level = json_object_get(json_object_get(root, "api"), "level");
    int v = json_is_integer(level) ? (int)json_integer_value(level) : 0;

    json_decref(root);
    return v > 0 && v < 1000 ? v : 0;
}

enum sa_code
sa_jsfeat_detect(natsConnection *nc, struct sa_jsfeat *out, struct sa_err *err)
{
    const char *want = getenv("SENDAT_SERVER_FEATURES");
    natsMsg *reply = NULL;

    memset(out, 0, sizeof(*out));
    if (want && *want && strcmp(want, "auto") != 0 && strcmp(want, "none") != 0)
        return sa_fail(err, SA_EINVAL, "SENDAT_SERVER_FEATURES=%s: use auto or none", want);
    if (sa_jsapi_raw(&reply, nc, "INFO", "", INFO_WAIT_MS) == NATS_OK) {
        out->api_level = level_of(natsMsg_GetData(reply), natsMsg_GetDataLength(reply));
        natsMsg_Destroy(reply);
    }
    if (!(want && strcmp(want, "none") == 0))
        out->have = sa_jsfeat_of_level(out->api_level);
    return SA_OK;
}

const char *
sa_jsfeat_names(unsigned have, char *buf, size_t cap)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{SA_JSFEAT_MSG_TTL, "ttl"},
                 {SA_JSFEAT_ATOMIC, "atomic"},
                 {SA_JSFEAT_SCHEDULE, "schedule"},
                 {SA_JSFEAT_RESET, "reset"}};
    size_t n = 0;

    if (cap == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!(have & names[i].bit))
            continue;
        int w = snprintf(buf + n, cap - n, "%s%s", n ? "," : "", names[i].name);
        if (w < 0 || (size_t)w >= cap - n)
            break;
        n += (size_t)w;
    }
    if (n == 0)
        snprintf(buf, cap, "none");
    return buf;
}

/* What the duplicate-id tests share: see dupid.h. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "dupid.h"

struct fx F;
natsConnection *nc;
jsCtx *js;

int
book_to(const char *id, int64_t due_ms, const char *path, const char *data, char *out, char *err)
{
    char at[40], url[300];

    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due_ms / 1000, (int)(due_ms % 1000));
    snprintf(url, sizeof(url), "%s%s", receiver_url(F.recv), path);
    return fx_sendat(&F, out, 256, err, 4096, "schedule", "--id", id, "--at", at, "--webhook", url,
                     "--data", data, NULL);
}

int
consumer_ready(void *arg)
{
    static char body[FX_BODY_MAX];

    return fx_consumer_get(&F, *(int *)arg, "/readyz", body) == 200;
}

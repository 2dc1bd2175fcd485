/* What the bad-input tests share: see badinput.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "badinput.h"
#include "check.h"
#include "layout.h"

struct fx F;
natsConnection *nc;
jsCtx *js;

uint64_t
stream_msgs(const char *stream)
{
    return fx_stream_msgs(js, stream);
}

void
publish_raw(const char *id, const void *data, int len)
{
    char subject[SA_SUBJECT_MAX];

    sa_layout_window_subject(subject, sizeof(subject), 0, test_now_ms() / 10000 * 10000, id);
    assert_int_equal(js_Publish(NULL, js, subject, data, len, NULL, NULL), NATS_OK);
}

void
dead_reason(const char *id, const char *want)
{
    char subject[SA_SUBJECT_MAX];
    natsMsg *m = NULL;
    const char *why = NULL;

    snprintf(subject, sizeof(subject), "sendat.dlq.%s", id);
    assert_int_equal(js_GetLastMsg(&m, js, SA_DLQ_STREAM, subject, NULL, NULL), NATS_OK);
    assert_int_equal(natsMsgHeader_Get(m, "Sendat-Reason", &why), NATS_OK);
    if (!strstr(why, want))
        fail_msg("dead letter %s: reason \"%s\" lacks \"%s\"", id, why, want);
    if (strstr(why, "mple.test"))
        fail_msg("dead letter %s: reason \"%s\" names an address", id, why);
    natsMsg_Destroy(m);
}

int
dlq_has(void *arg)
{
    return stream_msgs(SA_DLQ_STREAM) >= (uint64_t)(intptr_t)arg;
}

void
start_with_consumer(void)
{
    static char *env[] = {"SENDAT_UNKNOWN_KEY_WAIT=2s", NULL}; /* a made-up key id: not an hour */

    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    fx_consumer(&F, 0, env);
}

void
stop_with_consumer(void)
{
    assert_int_equal(fx_stop_consumers(&F), 0);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

/* Writes over a claim key as a client allowed to write the claims bucket may (forge.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "claim.h"
#include "claimmac.h"
#include "forge.h"
#include "layout.h"

void
forge_claim(struct fx *f, const char *id, const char *what)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL;
    uint64_t rev = 0;

    assert_int_equal(natsConnection_ConnectTo(&nc, f->srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(js_KeyValue(&kv, js, SA_CLAIMS_BUCKET), NATS_OK);
    if (!strcmp(what, "purge")) {
        assert_int_not_equal(kvStore_Purge(kv, id, NULL), NATS_OK); /* no rollups: nopurge.h */
    } else if (!strcmp(what, "delete")) {
        assert_int_equal(kvStore_Delete(kv, id), NATS_OK);
    } else if (!strcmp(what, "keyed sent")) {
        struct sa_keyring *ring = NULL;
        struct sa_claim c = {.state = SA_CLAIM_SENT, .at_ms = test_now_ms(), .http_status = 200};

        snprintf(c.consumer, sizeof(c.consumer), "a consumer before");
        assert_int_equal(sa_keyring_load(&ring, f->key, NULL), SA_OK);
        assert_int_equal(sa_claimmac_use(ring, NULL), SA_OK);
        assert_int_equal(sa_claim_create(kv, id, &c, &rev, NULL), SA_OK);
        sa_claimmac_forget();
        sa_keyring_free(ring);
    } else {
        assert_int_equal(kvStore_PutString(&rev, kv, id, what), NATS_OK);
    }
    kvStore_Destroy(kv);
    fx_js_close(&nc, &js);
}

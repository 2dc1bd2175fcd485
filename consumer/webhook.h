/* One webhook POST on the multi handle: the task's body and headers plus webhook-id (the
 * receiver's idempotency key: task id, identical across retries) and webhook-timestamp. */
#ifndef WEBHOOK_H
#define WEBHOOK_H

#include <stdint.h>

#include <curl/curl.h>

#include "consumer.h"
#include "wheel.h"

struct webhook_result {
    int transport_ok;
    long http_status;
    char error[256];
    int64_t started_ms;
    int64_t retry_after_ms; /* from Retry-After, 0 if none */
};

/* Adds the POST for h to multi; h travels with the transfer until webhook_collect hands it
 * to deliver_done. On failure h is still the caller's. */
enum sa_code webhook_start(CURLM *multi, struct consumer *c, struct held *h, uint64_t rev,
                           int64_t now_ms, struct sa_err *err) SA_MUST_CHECK;

/* Hands every finished transfer to deliver_done; returns how many finished. */
int webhook_collect(CURLM *multi, struct consumer *c);

#endif

/* libcurl easy handles kept for the next send instead of made and cleaned up for each one: a
 * handle's setup and cleanup were about a tenth of a consumer's CPU in a burst. A handle given
 * back is reset to libcurl's defaults (curl_easy_reset), so no option of one send reaches the
 * next. A reset keeps the handle's TLS session cache; a session is only offered again to the
 * same host with the same TLS settings. Main thread only. */
#ifndef EASYPOOL_H
#define EASYPOOL_H

#include <curl/curl.h>

struct easypool {
    CURL **spare;
    int n, cap;
};

/* Keeps at most cap handles (cap 0: none kept, every handle cleaned up). */
void easypool_init(struct easypool *p, int cap);

/* A spare handle, or a new one; NULL when out of memory. */
CURL *easypool_take(struct easypool *p);

/* e, removed from its multi handle, is reset and kept, or cleaned up when the pool is full. */
void easypool_give(struct easypool *p, CURL *e);

void easypool_free(struct easypool *p);

#endif

/* The integration tests' reads of a consumer's HTTP port: /readyz, /metrics (fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "check.h"
#include "fixture.h"

static size_t
collect(char *data, size_t size, size_t n, void *arg)
{
    char *buf = arg;
    size_t have = strlen(buf), add = size * n;

    if (have + add < FX_BODY_MAX) {
        memcpy(buf + have, data, add);
        buf[have + add] = '\0';
    }
    return add;
}

int
fx_consumer_port(struct fx *f, int i)
{
    char *log = proc_read_file(f->consumers[i].err_path), *p;
    int port = 0;

    p = log ? strstr(log, "event=http_listening") : NULL;
    if (p && (p = strstr(p, "port=")))
        port = atoi(p + 5);
    free(log);
    return port;
}

long
fx_consumer_get(struct fx *f, int i, const char *path, char *body)
{
    char url[128];
    long status = 0;
    int port = fx_consumer_port(f, i);
    CURL *e = NULL;

    body[0] = '\0';
    if (port <= 0 || !(e = curl_easy_init()))
        return 0;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L);
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(e);
    return status;
}

long
fx_consumer_metric(struct fx *f, int i, const char *name)
{
    static char body[FX_BODY_MAX];
    char want[128], *p;

    if (fx_consumer_get(f, i, "/metrics", body) != 200)
        return -1;
    snprintf(want, sizeof(want), "\n%s ", name);
    p = strstr(body, want);
    return p ? atol(p + strlen(want)) : -1;
}

struct ready_wait {
    struct fx *f;
    int i;
};

static int
answers_ready(void *arg)
{
    const struct ready_wait *w = arg;
    char *body = malloc(FX_BODY_MAX);
    int ok = body && fx_consumer_get(w->f, w->i, "/readyz", body) == 200;

    free(body);
    return ok;
}

int
fx_consumer_ready(struct fx *f, int i, int64_t timeout_ms)
{
    struct ready_wait w = {f, i};

    return wait_until(answers_ready, &w, timeout_ms);
}

/* Webhook transfers: built from the opened task only (a task is self-contained), redirects
 * not followed, only http and https, one time limit per request. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "deliver.h"
#include "sign.h"
#include "timeparse.h"
#include "webhook.h"

struct transfer {
    struct held *h;
    uint64_t rev;
    struct curl_slist *hdrs;
    int64_t started_ms;
    char errbuf[CURL_ERROR_SIZE];
};

static int
has_header(const struct sa_task *t, const char *name)
{
    for (size_t i = 0; i < t->n_headers; i++)
        if (!strcasecmp(t->headers[i].name, name))
            return 1;
    return 0;
}

static struct curl_slist *
append(struct curl_slist *l, int *bad, const char *fmt, const char *a, const char *b)
{
    char line[SA_HEADER_MAX + 8];
    struct curl_slist *n;

    snprintf(line, sizeof(line), fmt, a, b);
    n = curl_slist_append(l, line);
    if (!n)
        *bad = 1;
    return n ? n : l;
}

static struct curl_slist *
build_headers(const struct consumer *c, const struct sa_task *t, int64_t now_ms, int *bad)
{
    struct curl_slist *l = NULL;
    char ts[24], sig[1024];
    int n;

    snprintf(ts, sizeof(ts), "%" PRId64, now_ms / 1000);
    n = signer_sign(c->signer, sig, sizeof(sig), t->id, now_ms / 1000, t->body, t->body_len);
    if (n < 0)
        *bad = 1;
    if (n > 0)
        l = append(l, bad, "webhook-signature: %s%s", sig, "");
    for (size_t i = 0; i < t->n_headers; i++)
        l = append(l, bad, "%s: %s", t->headers[i].name, t->headers[i].value);
    if (!has_header(t, "Content-Type"))
        l = append(l, bad, "%s%s", "Content-Type: application/json", "");
    l = append(l, bad, "webhook-id: %s%s", t->id, "");
    l = append(l, bad, "webhook-timestamp: %s%s", ts, "");
    l = append(l, bad, "%s%s", "User-Agent: sendat/0.1", "");
    l = append(l, bad, "%s%s", "Expect:", ""); /* no 100-continue round trip */
    return l;
}

static CURL *
make_easy(struct consumer *c, struct transfer *x)
{
    const struct sa_task *t = x->h->task;
    CURL *e = curl_easy_init();

    if (!e)
        return NULL;
    curl_easy_setopt(e, CURLOPT_URL, t->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body ? (const char *)t->body : "");
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)t->body_len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->cfg.http_timeout_ms);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    return e;
}

enum sa_code
webhook_start(CURLM *multi, struct consumer *c, struct held *h, uint64_t rev, int64_t now_ms,
              struct sa_err *err)
{
    struct transfer *x = calloc(1, sizeof(*x));
    CURL *e = NULL;
    int bad = 0;

    if (!x)
        return sa_fail(err, SA_ENOMEM, "no memory for a transfer");
    x->h = h;
    x->rev = rev;
    x->started_ms = now_ms;
    x->hdrs = build_headers(c, h->task, now_ms, &bad);
    if (!bad)
        e = make_easy(c, x);
    if (!e || curl_multi_add_handle(multi, e) != CURLM_OK) {
        curl_easy_cleanup(e);
        curl_slist_free_all(x->hdrs);
        free(x);
        return sa_fail(err, SA_ENOMEM, "cannot start a transfer");
    }
    return SA_OK;
}

static int64_t
retry_after(CURL *e)
{
    struct curl_header *hdr = NULL;
    long long secs;

    if (curl_easy_header(e, "Retry-After", 0, CURLH_HEADER, -1, &hdr) != CURLHE_OK)
        return 0;
    secs = strtoll(hdr->value, NULL, 10);
    return secs > 0 && secs < 86400 ? secs * 1000 : 0;
}

static void
result_of(CURL *e, CURLcode cc, struct transfer *x, struct webhook_result *r)
{
    memset(r, 0, sizeof(*r));
    r->started_ms = x->started_ms;
    r->transport_ok = cc == CURLE_OK;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->http_status);
    if (!r->transport_ok)
        snprintf(r->error, sizeof(r->error), "%s: %.200s", curl_easy_strerror(cc), x->errbuf);
    else if (r->http_status < 200 || r->http_status >= 300)
        snprintf(r->error, sizeof(r->error), "HTTP %ld", r->http_status);
    if (r->http_status == 429 || r->http_status == 503)
        r->retry_after_ms = retry_after(e);
}

int
webhook_collect(CURLM *multi, struct consumer *c)
{
    struct webhook_result r;
    struct transfer *x = NULL;
    CURLMsg *m;
    int left, done = 0;

    while ((m = curl_multi_info_read(multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        result_of(m->easy_handle, m->data.result, x, &r);
        curl_multi_remove_handle(multi, m->easy_handle);
        curl_easy_cleanup(m->easy_handle);
        curl_slist_free_all(x->hdrs);
        deliver_done(c, x->h, x->rev, &r);
        free(x);
        done++;
    }
    return done;
}

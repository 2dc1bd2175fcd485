/* Webhook sends: built from the opened task only (a task is self-contained), redirects
 * not followed, only http and https, one time limit per request. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "deliver.h"
#include "sign.h"
#include "timeparse.h"
#include "transfer.h"


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

enum sa_code
webhook_setup(CURL *e, struct consumer *c, struct transfer *x, struct sa_err *err)
{
    const struct sa_task *t = x->h->task;
    int bad = 0;

    x->hdrs = build_headers(c, t, x->started_ms, &bad);
    if (bad)
        return sa_fail(err, SA_ENOMEM, "no memory for the webhook headers");
    curl_easy_setopt(e, CURLOPT_URL, t->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body ? (const char *)t->body : "");
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)t->body_len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->cfg.http_timeout_ms);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
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

void
webhook_result(CURL *e, CURLcode cc, const struct transfer *x, struct transfer_result *r)
{
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
    if (cc != CURLE_OK) {
        snprintf(r->error, sizeof(r->error), "%s: %.200s", curl_easy_strerror(cc), x->errbuf);
        return; /* timeouts, refused connections: retry */
    }
    r->ok = r->status >= 200 && r->status < 300;
    if (!r->ok)
        snprintf(r->error, sizeof(r->error), "HTTP %ld", r->status);
    /* 408, 429 and 5xx are worth another try; any other answer will not change */
    r->permanent = !r->ok && r->status != 408 && r->status != 429 && r->status < 500;
    if (r->status == 429 || r->status == 503)
        r->retry_after_ms = retry_after(e);
}

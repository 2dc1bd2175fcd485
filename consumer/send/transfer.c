/* Starting and collecting sends on libcurl's multi handle for every channel; the channel
 * modules only set up the easy handle and classify its result. */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "jspull.h"
#include "hostlimits.h"
#include "transfer.h"

static void
link(struct consumer *c, struct transfer *x)
{
    x->next = c->inflight;
    if (c->inflight)
        c->inflight->prev = x;
    c->inflight = x;
}

static void
unlink_transfer(struct consumer *c, struct transfer *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else if (c->inflight == x)
        c->inflight = x->next;
    if (x->next)
        x->next->prev = x->prev;
}

void
transfer_touch(struct consumer *c, int64_t now_ms, int64_t interval_ms)
{
    for (struct transfer *x = c->inflight; x; x = x->next) {
        if (now_ms - x->h->touched_ms < interval_ms)
            continue;
        sa_jspull_ack(c->n->nc, x->h->msg, SA_JSPULL_PROGRESS, 0);
        x->h->touched_ms = now_ms;
    }
}

static void
transfer_free(struct transfer *x)
{
    curl_slist_free_all(x->hdrs);
    curl_slist_free_all(x->rcpts);
    curl_mime_free(x->mime);
    free(x);
}

/* A receiver's response body is not ours to keep: not in memory, not in the logs. */
static size_t
discard(char *data, size_t size, size_t n, void *arg)
{
    (void)data;
    (void)arg;
    return size * n;
}

enum sa_code
transfer_start(CURLM *multi, struct consumer *c, struct held *h, uint64_t rev, int64_t now_ms,
               const char *host, int lease, struct sa_err *err)
{
    struct transfer *x = calloc(1, sizeof(*x));
    CURL *e = easypool_take(&c->easy);
    enum sa_code rc;

    if (!x || !e) {
        free(x);
        easypool_give(&c->easy, e);
        return sa_fail(err, SA_ENOMEM, "no memory for a transfer");
    }
    x->easy = e;
    x->h = h;
    x->rev = rev;
    x->started_ms = now_ms;
    x->lease = lease;
    snprintf(x->host, sizeof(x->host), "%s", host);
    rc = h->task->channel == SA_CHANNEL_EMAIL ? smtp_setup(e, c, x, err)
                                              : webhook_setup(e, c, x, err);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard); /* libcurl's default writes to stdout */
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    if (rc == SA_OK && curl_multi_add_handle(multi, e) != CURLM_OK)
        rc = sa_fail(err, SA_ENOMEM, "cannot start a transfer");
    if (rc == SA_OK)
        link(c, x);
    if (rc != SA_OK) {
        easypool_give(&c->easy, e); /* reset before x's lists, which e may point at, go */
        transfer_free(x);
    }
    return rc;
}

/* The host of url as libcurl parses it, into out ("" if none). */
static void
parse_host(const char *url, char *out, size_t cap)
{
    CURLU *u = curl_url();
    char *host = NULL;

    out[0] = '\0';
    if (u && url && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
        snprintf(out, cap, "%s", host);
    curl_free(host);
    curl_url_cleanup(u);
}

void
transfer_host(const struct consumer *c, const struct sa_task *t, char *out, size_t cap)
{
    /* the last URL's host, per thread: a burst's tasks mostly go to one URL, and parsing it
     * for each send cost about 1.5 % of a consumer's CPU */
    static __thread char last_url[SA_URL_MAX + 1], last_host[256];
    const char *url = t->channel == SA_CHANNEL_EMAIL ? c->cfg.smtp.url : t->url;

    if (!url || strlen(url) > SA_URL_MAX) {
        parse_host(url, out, cap);
        return;
    }
    if (strcmp(url, last_url) != 0) {
        parse_host(url, last_host, sizeof(last_host));
        snprintf(last_url, sizeof(last_url), "%s", url);
    }
    snprintf(out, cap, "%s", last_host);
}

int
transfer_collect(CURLM *multi, struct consumer *c)
{
    struct transfer_result r;
    struct transfer *x = NULL;
    CURLMsg *m;
    int left, done = 0;

    while ((m = curl_multi_info_read(multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        memset(&r, 0, sizeof(r));
        r.started_ms = x->started_ms;
        if (x->h->task->channel == SA_CHANNEL_EMAIL)
            smtp_result(m->easy_handle, m->data.result, x, &r);
        else
            webhook_result(m->easy_handle, m->data.result, x, &r);
        unlink_transfer(c, x);
        curl_multi_remove_handle(multi, m->easy_handle);
        easypool_give(&c->easy, m->easy_handle);
        limits_release(c->limits, x->host, x->lease);
        outcome_done(c, x->h, x->rev, &r);
        transfer_free(x);
        done++;
    }
    return done;
}

int
transfer_abandon_all(CURLM *multi, struct consumer *c)
{
    int n = 0;

    for (struct transfer *x = c->inflight, *next; x; x = next, n++) {
        next = x->next;
        curl_multi_remove_handle(multi, x->easy);
        curl_easy_cleanup(x->easy);
        limits_release(c->limits, x->host, x->lease);
        sa_jspull_ack(c->n->nc, x->h->msg, SA_JSPULL_NAK, 0);
        held_free(x->h);
        transfer_free(x);
    }
    c->inflight = NULL;
    return n;
}

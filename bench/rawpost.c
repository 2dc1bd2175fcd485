/* See rawpost.h. One thread: pulls a batch whenever half the requests allowed are free,
 * drives a curl multi handle in between, acks each message when its request ends. */
#include <stdlib.h>
#include <time.h>

#include <curl/curl.h>

#include "jspull.h"
#include "rawpost.h"
#include "rawpull.h"

struct post {
    CURL *e;
    natsMsg *m;
    struct post *next; /* in the pool of idle requests */
};

static struct curl_slist *hdrs;
static struct post *idle; /* easy handles are reused: each keeps its settings */

double
rawpost_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

static struct post *
new_post(const char *url)
{
    struct post *p = calloc(1, sizeof(*p));

    if (!p || !(p->e = curl_easy_init())) {
        free(p);
        return NULL;
    }
    curl_easy_setopt(p->e, CURLOPT_URL, url);
    curl_easy_setopt(p->e, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(p->e, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(p->e, CURLOPT_PRIVATE, p);
    curl_easy_setopt(p->e, CURLOPT_TIMEOUT_MS, 10000L);
    return p;
}

static int
start_post(CURLM *multi, const char *url, natsMsg *m)
{
    struct post *p = idle;

    if (p)
        idle = p->next;
    else if (!(p = new_post(url)))
        return -1;
    p->m = m;
    curl_easy_setopt(p->e, CURLOPT_POSTFIELDS, natsMsg_GetData(m));
    curl_easy_setopt(p->e, CURLOPT_POSTFIELDSIZE, (long)natsMsg_GetDataLength(m));
    if (curl_multi_add_handle(multi, p->e) == CURLM_OK)
        return 0;
    p->next = idle;
    idle = p;
    return -1;
}

/* Acks (2xx) or naks each finished request's message; returns how many finished. */
static int
collect(CURLM *multi, natsConnection *nc, long *acked, long *refused)
{
    CURLMsg *cm;
    int left, n = 0;

    while ((cm = curl_multi_info_read(multi, &left))) {
        struct post *p = NULL;
        long code = 0;

        if (cm->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(cm->easy_handle, CURLINFO_PRIVATE, (char **)&p);
        curl_easy_getinfo(cm->easy_handle, CURLINFO_RESPONSE_CODE, &code);
        if (cm->data.result == CURLE_OK && code >= 200 && code < 300) {
            sa_jspull_ack(nc, p->m, SA_JSPULL_ACK, 0);
            (*acked)++;
        } else {
            sa_jspull_ack(nc, p->m, SA_JSPULL_NAK, 0);
            (*refused)++;
        }
        curl_multi_remove_handle(multi, p->e);
        natsMsg_Destroy(p->m);
        p->m = NULL;
        p->next = idle;
        idle = p;
        n++;
    }
    return n;
}

/* Pulls up to want messages; a request waits up to 100 ms if requests are in flight (as the
 * consumer's puller), else up to 2 s. */
static int
fetch(struct rawpull *r, natsMsgList *list, long want, int batch, int busy)
{
    return rawpull_get(r, list, want < batch ? (int)want : batch, busy ? 100 : 2000);
}

long
rawpost_consume(struct rawpull *sub, long n, int batch, const char *url, int inflight,
                double max_secs, double *secs, long *refused)
{
    CURLM *multi = curl_multi_init();
    double t0 = rawpost_now_s();
    long pulled = 0, acked = 0;
    int running = 0, flying = 0, empty = 0;

    *refused = 0;
    hdrs = curl_slist_append(NULL, "content-type: application/octet-stream");
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)inflight);
    while ((pulled < n || flying > 0) && rawpost_now_s() - t0 < max_secs && empty < 3) {
        if (pulled < n && flying <= inflight / 2) {
            natsMsgList list = {0};
            int got = fetch(sub, &list, n - pulled, batch, flying > 0);

            empty = got || flying ? 0 : empty + 1;
            for (int i = 0; i < got; i++) {
                if (start_post(multi, url, list.Msgs[i]) == 0) {
                    list.Msgs[i] = NULL; /* the request owns it now */
                    flying++;
                }
            }
            pulled += got;
            natsMsgList_Destroy(&list);
        }
        curl_multi_perform(multi, &running);
        flying -= collect(multi, sub->nc, &acked, refused);
        if (flying > inflight / 2 || pulled >= n)
            curl_multi_poll(multi, NULL, 0, 10, NULL);
    }
    curl_multi_cleanup(multi);
    for (struct post *p; (p = idle);) {
        idle = p->next;
        curl_easy_cleanup(p->e);
        free(p);
    }
    curl_slist_free_all(hdrs);
    *secs = rawpost_now_s() - t0;
    return acked;
}

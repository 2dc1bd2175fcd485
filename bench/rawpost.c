/* See rawpost.h. One thread: pulls a batch whenever half the requests allowed are free,
 * drives a curl multi handle in between, acks each message when its request ends. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <curl/curl.h>

#include "jspull.h"
#include "rawpost.h"
#include "rawpull.h"

struct post {
    CURL *e;
    natsMsg *m;
    struct curl_slist *own_hdrs; /* with its webhook-id, when the run names one */
    struct post *next;           /* in the pool of idle requests */
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

/* The shared headers, and the message's id_header as webhook-id; NULL without one. */
static struct curl_slist *
id_headers(natsMsg *m, const char *id_header)
{
    const char *id = NULL;
    char line[128];
    struct curl_slist *l;

    if (natsMsgHeader_Get(m, id_header, &id) != NATS_OK || !id)
        return NULL;
    snprintf(line, sizeof(line), "webhook-id: %s", id);
    l = curl_slist_append(NULL, "content-type: application/octet-stream");
    return l ? curl_slist_append(l, line) : NULL;
}

int
rawpost_start(CURLM *multi, const struct rawpost_run *run, natsMsg *m)
{
    struct post *p = idle;

    if (p)
        idle = p->next;
    else if (!(p = new_post(run->url)))
        return -1;
    p->m = m;
    if (run->id_header) {
        curl_slist_free_all(p->own_hdrs);
        p->own_hdrs = id_headers(m, run->id_header);
        curl_easy_setopt(p->e, CURLOPT_HTTPHEADER, p->own_hdrs ? p->own_hdrs : hdrs);
    }
    curl_easy_setopt(p->e, CURLOPT_POSTFIELDS, natsMsg_GetData(m));
    curl_easy_setopt(p->e, CURLOPT_POSTFIELDSIZE, (long)natsMsg_GetDataLength(m));
    if (curl_multi_add_handle(multi, p->e) == CURLM_OK)
        return 0;
    p->next = idle;
    idle = p;
    return -1;
}

int
rawpost_collect(CURLM *multi, const struct rawpost_run *run, natsConnection *nc, long *acked,
                long *refused)
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
        int ok = cm->data.result == CURLE_OK && code >= 200 && code < 300;
        *(ok ? acked : refused) += 1;
        curl_multi_remove_handle(multi, p->e);
        if (run->finish) {
            run->finish(run->finish_arg, p->m, ok);
        } else {
            sa_jspull_ack(nc, p->m, ok ? SA_JSPULL_ACK : SA_JSPULL_NAK, 0);
            natsMsg_Destroy(p->m);
        }
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

/* When message i may start: at once, or its instant of the paced run. */
static double
due_at(const struct rawpost_run *run, double t0, long i)
{
    return run->pace_s > 0 ? t0 + run->pace_s * (double)i / (double)run->n : t0;
}

/* Starts the held messages that are due; returns how many started. */
static int
start_due(CURLM *multi, const struct rawpost_run *run, natsMsgList *held, int *next, double t0,
          long first_index)
{
    int started = 0;

    while (*next < held->Count && rawpost_now_s() >= due_at(run, t0, first_index + *next)) {
        if (rawpost_start(multi, run, held->Msgs[*next]) == 0) {
            held->Msgs[*next] = NULL; /* the request owns it now */
            started++;
        }
        (*next)++;
    }
    return started;
}

/* How long curl may wait for sockets: until the next held message is due, at most 10 ms. */
static int
wait_ms(const struct rawpost_run *run, const natsMsgList *held, int next, double t0,
        long first_index)
{
    double left;

    if (next >= held->Count)
        return 10;
    left = due_at(run, t0, first_index + next) - rawpost_now_s();
    return left <= 0 ? 0 : left >= 0.010 ? 10 : (int)(left * 1000) + 1;
}

CURLM *
rawpost_open(const struct rawpost_run *run)
{
    CURLM *multi = curl_multi_init();

    hdrs = curl_slist_append(NULL, "content-type: application/octet-stream");
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)run->inflight);
    return multi;
}

void
rawpost_close(CURLM *multi)
{
    curl_multi_cleanup(multi);
    for (struct post *p; (p = idle);) {
        idle = p->next;
        curl_easy_cleanup(p->e);
        curl_slist_free_all(p->own_hdrs);
        free(p);
    }
    curl_slist_free_all(hdrs);
    hdrs = NULL;
}

long
rawpost_consume(struct rawpull *sub, const struct rawpost_run *run, double *secs, long *refused)
{
    CURLM *multi = rawpost_open(run);
    double t0 = rawpost_now_s();
    natsMsgList held = {0}; /* pulled, not started yet */
    long pulled = 0, acked = 0, first_index = 0;
    int running = 0, flying = 0, empty = 0, next = 0;

    *refused = 0;
    while ((pulled < run->n || flying > 0 || next < held.Count) &&
           rawpost_now_s() - t0 < run->max_secs && empty < 3) {
        if (pulled < run->n && next >= held.Count && flying <= run->inflight / 2) {
            natsMsgList_Destroy(&held);
            first_index = pulled;
            fetch(sub, &held, run->n - pulled, run->batch, flying > 0);
            next = 0;
            empty = held.Count || flying || (run->wait_first && !pulled) ? 0 : empty + 1;
            pulled += held.Count;
        }
        flying += start_due(multi, run, &held, &next, t0, first_index);
        curl_multi_perform(multi, &running);
        flying -= rawpost_collect(multi, run, sub->nc, &acked, refused);
        if (flying > run->inflight / 2 || pulled >= run->n || next < held.Count)
            curl_multi_poll(multi, NULL, 0, wait_ms(run, &held, next, t0, first_index), NULL);
    }
    natsMsgList_Destroy(&held);
    rawpost_close(multi);
    *secs = rawpost_now_s() - t0;
    return acked;
}

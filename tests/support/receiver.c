/* The test receiver: libmicrohttpd with one thread per connection, bound to 127.0.0.1 only.
 * A request is recorded as soon as its body is complete, before it is answered, so a test
 * that sees a hit never races the answer; a mutex guards the hits and the scripted answers,
 * and hangs wait on a condition variable so receiver_stop never waits for them to run out.
 * This file serves requests; what they are answered is in receiver_script.c, and what tests
 * read of the record in receiver_hits.c. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "receiver.h"
#include "receiver_private.h"

#define BODY_MAX (1024 * 1024)

struct pending { /* one request from its request line until MHD is done with it */
    struct receiver_hit hit;
    size_t body_cap;
    int started; /* headers arrived, counted in r->open */
    int open;    /* still counted in r->open */
    int too_big;
};

/* Called with the raw request line's URI, query string included (MHD strips it later). */
static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct pending *p = calloc(1, sizeof(*p));

    (void)cls;
    (void)c;
    if (p)
        snprintf(p->hit.path, sizeof(p->hit.path), "%s", uri);
    return p;
}

static enum MHD_Result
add_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    struct pending *p = cls;
    size_t old = p->hit.headers ? strlen(p->hit.headers) : 0;
    size_t add;
    char *h;

    (void)kind;
    if (!value)
        value = "";
    add = strlen(key) + strlen(value) + 3;
    h = realloc(p->hit.headers, old + add + 1);
    if (!h)
        return MHD_NO;
    snprintf(h + old, add + 1, "%s: %s\n", key, value);
    p->hit.headers = h;
    return MHD_YES;
}

/* The first call for a request: its headers are complete. */
static void
start(struct receiver *r, struct pending *p, struct MHD_Connection *c, const char *url,
      const char *method)
{
    p->hit.at_ms = test_now_ms();
    p->started = 1;
    p->open = 1;
    snprintf(p->hit.method, sizeof(p->hit.method), "%s", method);
    if (!p->hit.path[0])
        snprintf(p->hit.path, sizeof(p->hit.path), "%s", url);
    MHD_get_connection_values(c, MHD_HEADER_KIND, add_header, p);
    pthread_mutex_lock(&r->lock);
    if (++r->open > r->max_open)
        r->max_open = r->open;
    pthread_mutex_unlock(&r->lock);
}

static void
close_open(struct receiver *r, struct pending *p)
{
    if (!p->open)
        return;
    p->open = 0;
    pthread_mutex_lock(&r->lock);
    r->open--;
    pthread_mutex_unlock(&r->lock);
}

/* Keeps at most BODY_MAX bytes; anything beyond marks the request too big (answered 413). */
static void
append_body(struct pending *p, const char *data, size_t len)
{
    if (p->too_big || p->hit.body_len + len > BODY_MAX) {
        p->too_big = 1;
        return;
    }
    if (p->hit.body_len + len + 1 > p->body_cap) {
        size_t cap = (p->hit.body_len + len + 1) * 2;
        char *b = realloc(p->hit.body, cap);
        if (!b) {
            p->too_big = 1;
            return;
        }
        p->hit.body = b;
        p->body_cap = cap;
    }
    memcpy(p->hit.body + p->hit.body_len, data, len);
    p->hit.body_len += len;
    p->hit.body[p->hit.body_len] = '\0';
}

/* Moves the hit into the record and picks its answer. */
static void
record(struct receiver *r, struct pending *p, struct answer *a)
{
    pthread_mutex_lock(&r->lock);
    receiver_pick_answer(r, p->hit.path, a);
    if (r->n == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 256;
        struct receiver_hit *h = realloc(r->hits, ncap * sizeof(*h));
        if (h) {
            r->hits = h;
            r->cap = ncap;
        }
    }
    if (r->n < r->cap) {
        r->hits[r->n++] = p->hit;
        memset(&p->hit, 0, sizeof(p->hit));
    }
    pthread_mutex_unlock(&r->lock);
}

/* Waits ms in this connection's thread, or less if the receiver is being stopped. */
static void
hang(struct receiver *r, int ms)
{
    struct timespec until;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->lock);
    while (!r->stopping && pthread_cond_timedwait(&r->wake, &r->lock, &until) == 0)
        ; /* woken early: look at stopping again */
    pthread_mutex_unlock(&r->lock);
}

static struct MHD_Response *
make_response(const char *extra)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(2, "ok", MHD_RESPMEM_PERSISTENT);
    const char *colon = strchr(extra, ':');
    char name[128];

    if (resp && colon) {
        const char *v = colon + 1;
        snprintf(name, sizeof(name), "%.*s", (int)(colon - extra), extra);
        while (*v == ' ')
            v++;
        MHD_add_response_header(resp, name, v);
    }
    return resp;
}

static enum MHD_Result
answer(struct receiver *r, struct MHD_Connection *c, struct pending *p)
{
    struct MHD_Response *resp;
    struct answer a;
    enum MHD_Result ret;
    int too_big = p->too_big;

    record(r, p, &a);
    if (a.hang_ms > 0)
        hang(r, a.hang_ms);
    resp = make_response(a.extra);
    close_open(r, p);
    if (!resp)
        return MHD_NO;
    ret = MHD_queue_response(c, too_big ? MHD_HTTP_CONTENT_TOO_LARGE : (unsigned)a.status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
           const char *version, const char *data, size_t *data_size, void **con_cls)
{
    struct receiver *r = cls;
    struct pending *p = *con_cls;

    (void)version;
    if (!p && !(p = *con_cls = on_uri(r, "", c)))
        return MHD_NO;
    if (!p->started) {
        start(r, p, c, url, method);
        return MHD_YES;
    }
    if (*data_size) {
        append_body(p, data, *data_size);
        *data_size = 0;
        return MHD_YES;
    }
    return answer(r, c, p);
}

static void
on_done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct pending *p = *con_cls;

    (void)c;
    (void)toe;
    if (!p)
        return;
    close_open(cls, p); /* a request the client abandoned before its answer */
    receiver_hit_free(&p->hit);
    free(p);
    *con_cls = NULL;
}

static struct MHD_Daemon *
start_daemon(struct receiver *r)
{
    struct sockaddr_in addr;

    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = 0; /* a free port, read back below */
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return MHD_start_daemon(
        MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG, 0, NULL,
        NULL, on_request, r, MHD_OPTION_NOTIFY_COMPLETED, on_done, r, MHD_OPTION_URI_LOG_CALLBACK,
        on_uri, r, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_TIMEOUT,
        120u, MHD_OPTION_END);
}

int
receiver_start(struct receiver **out)
{
    struct receiver *r = calloc(1, sizeof(*r));
    const union MHD_DaemonInfo *info = NULL;
    pthread_condattr_t ca;

    *out = NULL;
    if (!r)
        return -1;
    pthread_mutex_init(&r->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->wake, &ca);
    pthread_condattr_destroy(&ca);
    r->d = start_daemon(r);
    if (r->d)
        info = MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT);
    if (!info || info->port == 0) {
        receiver_stop(r);
        return -1;
    }
    snprintf(r->url, sizeof(r->url), "http://127.0.0.1:%u", (unsigned)info->port);
    *out = r;
    return 0;
}

void
receiver_stop(struct receiver *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->stopping = 1;
    pthread_cond_broadcast(&r->wake);
    pthread_mutex_unlock(&r->lock);
    if (r->d)
        MHD_stop_daemon(r->d); /* joins every connection thread */
    for (size_t i = 0; i < r->n; i++)
        receiver_hit_free(&r->hits[i]);
    free(r->hits);
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

const char *
receiver_url(struct receiver *r)
{
    return r->url;
}

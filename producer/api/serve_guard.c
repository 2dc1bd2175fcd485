/* Deadlines for request heads and bodies, and a request rate and a share of connections per
 * token for `sendat serve`. libmicrohttpd's
 * idle timeout restarts at every byte, so a client sending a header line every 5 s held its
 * connections for ever (1,100 of them kept the API unreachable past the 60 s timeout); here a
 * head must be complete within its deadline from the connection's start, or from the previous
 * answer on a kept-alive one. A body then has the same time again plus a second per
 * BODY_MIN_RATE bytes that came, not counting the time we spent booking them (a reader's
 * token trickling bodies held 1,088 connections and nobody else was answered, issue 37.6);
 * its connection counts in its token's share until its answer. The reaper shuts a late connection's
 * socket down and the daemon then closes it; it holds the lock that the close notification takes,
 * so it never touches a descriptor already closed and reused. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "log.h"
#include "serve_guard.h"
#include "timeparse.h"
#include "tokens.h"

#define REAP_EVERY_MS 250
#define BUCKETS 1024        /* tokens tracked at once; a full table admits (the file bounds them) */
#define BODY_MIN_RATE 16384 /* bytes a second a body must average, past its first deadline */

struct serve_guard_conn {
    int fd;
    int64_t deadline_ms; /* 0: none (a request is being served, or already reaped) */
    int begun;           /* a request line came: a head under way, not an idle keep-alive */
    int shut;            /* shut down by us, its close not seen yet */
    int body;            /* a body under way: its deadline is the body's, never made room with */
    struct bucket *held; /* the token whose share its request counts in, or NULL */
    struct serve_guard_conn *prev, *next;
};

struct bucket {
    char name[TOKEN_NAME_MAX + 1];
    double level; /* requests left */
    int64_t at_ms;
    int open; /* requests of this token under way (connections held) */
};

struct serve_guard {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t reaper;
    int stop, running;
    int64_t head_ms;
    int rate, share;
    size_t keep, live; /* open connections kept before the oldest waiting one is shut */
    long evicted;
    struct serve_guard_conn *conns, *last; /* oldest first */
    struct bucket *buckets;
};

/* Shuts c down: the daemon sees the end and closes it. */
static void
shut(struct serve_guard *g, struct serve_guard_conn *c)
{
    shutdown(c->fd, SHUT_RDWR);
    c->deadline_ms = 0;
    c->shut = 1;
    g->live--;
}

static void
reap(struct serve_guard *g, int64_t now)
{
    long late = 0, idle = 0, slow = 0;

    for (struct serve_guard_conn *c = g->conns; c; c = c->next)
        if (c->deadline_ms && now > c->deadline_ms && !c->shut) {
            if (c->body)
                slow++;
            else if (c->begun)
                late++;
            else
                idle++;
            shut(g, c);
        }
    if (late)
        sa_log(SA_LOG_WARN, "api_request_timeout", "connections=%ld head_ms=%lld", late,
               (long long)g->head_ms);
    if (slow)
        sa_log(SA_LOG_WARN, "api_body_timeout", "connections=%ld min_rate=%d", slow, BODY_MIN_RATE);
    if (idle)
        sa_log(SA_LOG_DEBUG, "api_idle_closed", "connections=%ld", idle);
}

static void *
reaper_main(void *arg)
{
    struct serve_guard *g = arg;
    struct timespec ts;

    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += REAP_EVERY_MS * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&g->wake, &g->lock, &ts);
        reap(g, sa_now_ms());
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

enum sa_code
serve_guard_new(struct serve_guard **out, int64_t head_ms, int rate, int share, size_t keep,
                struct sa_err *err)
{
    struct serve_guard *g = calloc(1, sizeof(*g));

    *out = NULL;
    if (!g || !(g->buckets = calloc(BUCKETS, sizeof(*g->buckets)))) {
        free(g);
        return sa_fail(err, SA_ENOMEM, "no memory for the API's request guard");
    }
    g->head_ms = head_ms;
    g->rate = rate;
    g->share = share;
    g->keep = keep;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->wake, NULL);
    if (pthread_create(&g->reaper, NULL, reaper_main, g) != 0) {
        serve_guard_free(g);
        return sa_fail(err, SA_ENOMEM, "cannot start the API's request guard");
    }
    g->running = 1; /* serve_guard_free joins it */
    *out = g;
    return SA_OK;
}

void
serve_guard_free(struct serve_guard *g)
{
    if (!g)
        return;
    if (g->running) {
        pthread_mutex_lock(&g->lock);
        g->stop = 1;
        pthread_cond_signal(&g->wake);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->reaper, NULL);
    }
    while (g->conns) {
        struct serve_guard_conn *c = g->conns;
        g->conns = c->next;
        free(c);
    }
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->lock);
    free(g->buckets);
    free(g);
}

/* Past keep open connections, the oldest ones not being served (idle, or a head under way;
 * a body under way has its own deadline and its token's share) are shut: per-address caps do not
 * stop many addresses, and a new client, which asks at once, is then the newest and served. */
static void
make_room(struct serve_guard *g)
{
    long n = 0;

    for (struct serve_guard_conn *c = g->conns; c && g->live > g->keep; c = c->next)
        if (c->deadline_ms && !c->shut && !c->body) {
            shut(g, c);
            n++;
        }
    if (n && (g->evicted += n) % 1000 == n) /* a line now and then, not per one */
        sa_log(SA_LOG_WARN, "api_connections_full", "shut=%ld kept=%zu", g->evicted, g->keep);
}

struct serve_guard_conn *
serve_guard_opened(struct serve_guard *g, int fd)
{
    struct serve_guard_conn *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->fd = fd;
    c->deadline_ms = sa_now_ms() + g->head_ms;
    pthread_mutex_lock(&g->lock);
    c->prev = g->last;
    if (g->last)
        g->last->next = c;
    else
        g->conns = c;
    g->last = c;
    g->live++;
    make_room(g);
    pthread_mutex_unlock(&g->lock);
    return c;
}

void
serve_guard_begun(struct serve_guard *g, struct serve_guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    c->begun = 1;
    pthread_mutex_unlock(&g->lock);
}

void
serve_guard_head_in(struct serve_guard *g, struct serve_guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    c->deadline_ms = sa_now_ms() + g->head_ms;
    c->body = 1;
    pthread_mutex_unlock(&g->lock);
}

void
serve_guard_body(struct serve_guard *g, struct serve_guard_conn *c, size_t len, int64_t busy_ms)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    if (c->deadline_ms)
        c->deadline_ms += (int64_t)(len * 1000 / BODY_MIN_RATE) + busy_ms;
    pthread_mutex_unlock(&g->lock);
}

void
serve_guard_body_in(struct serve_guard *g, struct serve_guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    c->deadline_ms = 0;
    c->body = 0;
    pthread_mutex_unlock(&g->lock);
}

/* c's request no longer counts in its token's share; call with the lock held. */
static void
release(struct serve_guard_conn *c)
{
    if (c->held)
        c->held->open--;
    c->held = NULL;
}

void
serve_guard_answered(struct serve_guard *g, struct serve_guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    release(c);
    c->deadline_ms = sa_now_ms() + g->head_ms;
    c->begun = 0;
    c->body = 0;
    pthread_mutex_unlock(&g->lock);
}

void
serve_guard_closed(struct serve_guard *g, struct serve_guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        g->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        g->last = c->prev;
    if (!c->shut)
        g->live--;
    release(c);
    pthread_mutex_unlock(&g->lock);
    free(c);
}

/* name's bucket (found or claimed), or NULL when the table is full. */
static struct bucket *
bucket_of(struct serve_guard *g, const char *name)
{
    size_t h = 5381;

    for (const char *p = name; *p; p++)
        h = h * 33 + (unsigned char)*p;
    for (size_t i = 0; i < BUCKETS; i++) {
        struct bucket *b = &g->buckets[(h + i) % BUCKETS];
        if (!b->name[0]) {
            strncpy(b->name, name, sizeof(b->name) - 1);
            b->level = g->rate;
            b->at_ms = sa_now_ms();
            return b;
        }
        if (!strcmp(b->name, name))
            return b;
    }
    return NULL;
}

int
serve_guard_admit(struct serve_guard *g, const char *name, int *retry_s)
{
    struct bucket *b;
    int64_t now = sa_now_ms();
    int ok = 1;

    *retry_s = 0;
    if (g->rate <= 0)
        return 1;
    pthread_mutex_lock(&g->lock);
    if ((b = bucket_of(g, name))) {
        b->level += (double)(now - b->at_ms) * g->rate / 1000.0;
        if (b->level > g->rate)
            b->level = g->rate;
        b->at_ms = now;
        if (b->level >= 1.0)
            b->level -= 1.0;
        else {
            ok = 0;
            *retry_s = 1;
        }
    }
    pthread_mutex_unlock(&g->lock);
    return ok;
}

int
serve_guard_enter(struct serve_guard *g, struct serve_guard_conn *c, const char *name)
{
    struct bucket *b;
    int ok = 1;

    if (!c)
        return 1;
    pthread_mutex_lock(&g->lock);
    release(c);
    if ((b = bucket_of(g, name)) && b->open >= g->share)
        ok = 0;
    else if (b) {
        b->open++;
        c->held = b;
    }
    pthread_mutex_unlock(&g->lock);
    return ok;
}

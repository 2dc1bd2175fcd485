/* The test receiver: one thread per connection (libmicrohttpd), a mutex around the record
 * of hits and the scripted answers. */
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "check.h"
#include "receiver.h"

#define BODY_MAX (1024 * 1024)
#define SCRIPT_MAX 64

struct script {
    char path[256];
    int status, times, hang_ms;
    char extra[128];
};

struct receiver {
    struct MHD_Daemon *d;
    char url[64];
    pthread_mutex_t lock;
    struct receiver_hit *hits;
    size_t n, cap;
    int open, max_open, delay_ms;
    struct script scripts[SCRIPT_MAX];
    int n_scripts;
};

struct pending { /* one request while its body arrives */
    struct receiver_hit hit;
    size_t body_cap;
};

static int
add_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    struct pending *p = cls;
    size_t old = p->hit.headers ? strlen(p->hit.headers) : 0, add = strlen(key) + strlen(value) + 3;
    char *h = realloc(p->hit.headers, old + add + 1);

    (void)kind;
    if (!h)
        return MHD_NO;
    snprintf(h + old, add + 1, "%s: %s\n", key, value);
    p->hit.headers = h;
    return MHD_YES;
}

static struct pending *
begin(struct receiver *r, struct MHD_Connection *c, const char *url, const char *method)
{
    struct pending *p = calloc(1, sizeof(*p));

    if (!p)
        return NULL;
    p->hit.at_ms = test_now_ms();
    snprintf(p->hit.method, sizeof(p->hit.method), "%s", method);
    snprintf(p->hit.path, sizeof(p->hit.path), "%s", url);
    MHD_get_connection_values(c, MHD_HEADER_KIND, (MHD_KeyValueIterator)add_header, p);
    pthread_mutex_lock(&r->lock);
    if (++r->open > r->max_open)
        r->max_open = r->open;
    pthread_mutex_unlock(&r->lock);
    return p;
}

static int
append_body(struct pending *p, const char *data, size_t len)
{
    if (p->hit.body_len + len > BODY_MAX)
        return -1;
    if (p->hit.body_len + len + 1 > p->body_cap) {
        size_t cap = (p->hit.body_len + len + 1) * 2;
        char *b = realloc(p->hit.body, cap);
        if (!b)
            return -1;
        p->hit.body = b;
        p->body_cap = cap;
    }
    memcpy(p->hit.body + p->hit.body_len, data, len);
    p->hit.body_len += len;
    p->hit.body[p->hit.body_len] = '\0';
    return 0;
}

/* Records the hit and picks the scripted answer (under the lock). */
static void
record(struct receiver *r, struct pending *p, int *status, int *hang, char *extra, size_t cap)
{
    pthread_mutex_lock(&r->lock);
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
    *status = 200;
    *hang = r->delay_ms;
    extra[0] = '\0';
    for (int i = r->n_scripts - 1, answered = 0; i >= 0; i--) { /* newest live answer wins */
        struct script *s = &r->scripts[i];
        if (strcmp(s->path, r->n ? r->hits[r->n - 1].path : "") != 0)
            continue;
        if (s->hang_ms)
            *hang = s->hang_ms;
        if (!answered && s->status && s->times != 0) {
            answered = 1;
            *status = s->status;
            snprintf(extra, cap, "%s", s->extra);
            if (s->times > 0)
                s->times--;
        }
    }
    pthread_mutex_unlock(&r->lock);
}

static enum MHD_Result
answer(struct receiver *r, struct MHD_Connection *c, struct pending *p)
{
    struct MHD_Response *resp;
    struct timespec ts;
    char extra[128];
    int status, hang;
    enum MHD_Result ret;

    record(r, p, &status, &hang, extra, sizeof(extra));
    if (hang > 0) {
        ts.tv_sec = hang / 1000;
        ts.tv_nsec = (long)(hang % 1000) * 1000000L;
        nanosleep(&ts, NULL);
    }
    resp = MHD_create_response_from_buffer(2, "ok", MHD_RESPMEM_PERSISTENT);
    if (extra[0] && strchr(extra, ':')) {
        char name[64];
        const char *v = strchr(extra, ':') + 1;
        snprintf(name, sizeof(name), "%.*s", (int)(strchr(extra, ':') - extra), extra);
        while (*v == ' ')
            v++;
        MHD_add_response_header(resp, name, v);
    }
    pthread_mutex_lock(&r->lock);
    r->open--;
    pthread_mutex_unlock(&r->lock);
    ret = MHD_queue_response(c, (unsigned)status, resp);
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
    if (!p) {
        *con_cls = begin(r, c, url, method);
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*data_size) {
        if (append_body(p, data, *data_size) != 0)
            return MHD_NO;
        *data_size = 0;
        return MHD_YES;
    }
    return answer(r, c, p);
}

static void
on_done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct pending *p = *con_cls;

    (void)cls;
    (void)c;
    (void)toe;
    if (!p)
        return;
    receiver_hit_free(&p->hit);
    free(p);
    *con_cls = NULL;
}

int
receiver_start(struct receiver **out)
{
    struct receiver *r = calloc(1, sizeof(*r));
    const union MHD_DaemonInfo *info;

    *out = NULL;
    if (!r)
        return -1;
    pthread_mutex_init(&r->lock, NULL);
    r->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                                MHD_USE_ERROR_LOG,
                            0, NULL, NULL, on_request, r, MHD_OPTION_NOTIFY_COMPLETED, on_done, r,
                            MHD_OPTION_SOCK_ADDR, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
    info = r->d ? MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    if (!info) {
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
    if (r->d)
        MHD_stop_daemon(r->d);
    for (size_t i = 0; i < r->n; i++)
        receiver_hit_free(&r->hits[i]);
    free(r->hits);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

const char *
receiver_url(struct receiver *r)
{
    return r->url;
}

size_t
receiver_count(struct receiver *r)
{
    size_t n;

    pthread_mutex_lock(&r->lock);
    n = r->n;
    pthread_mutex_unlock(&r->lock);
    return n;
}

size_t
receiver_count_path(struct receiver *r, const char *path)
{
    size_t n = 0;

    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n; i++)
        n += strcmp(r->hits[i].path, path) == 0;
    pthread_mutex_unlock(&r->lock);
    return n;
}

static char *
dup_bytes(const char *s, size_t len)
{
    char *d = malloc(len + 1);

    if (d) {
        if (len)
            memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

int
receiver_hit_copy(struct receiver *r, size_t i, struct receiver_hit *out)
{
    int rc = -1;

    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&r->lock);
    if (i < r->n) {
        *out = r->hits[i];
        out->headers = dup_bytes(r->hits[i].headers ? r->hits[i].headers : "",
                                 r->hits[i].headers ? strlen(r->hits[i].headers) : 0);
        out->body = dup_bytes(r->hits[i].body ? r->hits[i].body : "", r->hits[i].body_len);
        rc = 0;
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

void
receiver_hit_free(struct receiver_hit *h)
{
    free(h->headers);
    free(h->body);
    h->headers = h->body = NULL;
}

const char *
receiver_hit_header(const struct receiver_hit *h, const char *name, char *buf, size_t cap)
{
    size_t n = strlen(name);

    for (const char *line = h->headers; line && *line;) {
        const char *end = strchr(line, '\n');
        if (!strncasecmp(line, name, n) && line[n] == ':') {
            const char *v = line + n + 1;
            while (*v == ' ')
                v++;
            snprintf(buf, cap, "%.*s", (int)((end ? end : v + strlen(v)) - v), v);
            return buf;
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

int
receiver_max_concurrent(struct receiver *r)
{
    int m;

    pthread_mutex_lock(&r->lock);
    m = r->max_open;
    pthread_mutex_unlock(&r->lock);
    return m;
}

static struct script *
script_new(struct receiver *r, const char *path)
{
    if (r->n_scripts == SCRIPT_MAX)
        return NULL;
    snprintf(r->scripts[r->n_scripts].path, sizeof(r->scripts[0].path), "%s", path);
    return &r->scripts[r->n_scripts++];
}

void
receiver_respond(struct receiver *r, const char *path, int status, int times, const char *extra_header)
{
    struct script *s;

    pthread_mutex_lock(&r->lock);
    for (int i = 0; times < 0 && i < r->n_scripts; i++)
        if (!strcmp(r->scripts[i].path, path) && r->scripts[i].status)
            r->scripts[i].times = 0; /* "from now on" replaces what was scripted before */
    if ((s = script_new(r, path))) {
        s->status = status;
        s->times = times;
        snprintf(s->extra, sizeof(s->extra), "%s", extra_header ? extra_header : "");
    }
    pthread_mutex_unlock(&r->lock);
}

void
receiver_hang(struct receiver *r, const char *path, int ms)
{
    struct script *s;

    pthread_mutex_lock(&r->lock);
    if ((s = script_new(r, path)))
        s->hang_ms = ms;
    pthread_mutex_unlock(&r->lock);
}

void
receiver_set_delay(struct receiver *r, int ms)
{
    pthread_mutex_lock(&r->lock);
    r->delay_ms = ms;
    pthread_mutex_unlock(&r->lock);
}

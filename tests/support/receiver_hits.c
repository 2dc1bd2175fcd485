/* What a test reads of the test receiver's record: counts, waits, copies of hits and their
 * headers, and the most requests open at once. Each call takes the lock once, so what it
 * returns is a consistent view while requests keep arriving. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "receiver.h"
#include "receiver_private.h"

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

struct waiting {
    struct receiver *r;
    const char *path;
    size_t n;
};

static int
enough(void *arg)
{
    struct waiting *w = arg;

    return (w->path ? receiver_count_path(w->r, w->path) : receiver_count(w->r)) >= w->n;
}

int
receiver_wait(struct receiver *r, const char *path, size_t n, int64_t timeout_ms)
{
    struct waiting w = {r, path, n};

    return wait_until(enough, &w, timeout_ms);
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
        const struct receiver_hit *h = &r->hits[i];
        *out = *h;
        out->headers = dup_bytes(h->headers ? h->headers : "", h->headers ? strlen(h->headers) : 0);
        out->body = dup_bytes(h->body ? h->body : "", h->body_len);
        rc = out->headers && out->body ? 0 : -1;
    }
    pthread_mutex_unlock(&r->lock);
    if (rc != 0)
        receiver_hit_free(out);
    return rc;
}

void
receiver_hit_free(struct receiver_hit *h)
{
    if (!h)
        return;
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

/* sendat-httpload: how many webhook-shaped POSTs per second a receiver answers over
 * keep-alive connections, so the benchmark can show its sink is not what limits it.
 *
 *   sendat-httpload --port N [--conns 64] [--seconds 2] [--threads 1]
 *
 * Each connection sends one request, waits for the whole answer, sends the next. Prints
 * "requests=N seconds=S rate=R errors=E". */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF 8192

struct conn {
    int fd;
    char in[BUF];
    size_t have;
    long seq;
};

struct worker {
    int port, conns, id;
    double seconds;
    long done, errors;
    pthread_t thread;
};

static double
mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
dial(int port)
{
    struct sockaddr_in a;
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static int
send_request(struct worker *w, struct conn *c)
{
    static const char body[] = "{\"order\":123456,\"event\":\"reminder\"}";
    char req[512];
    int n = snprintf(req, sizeof(req),
                     "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "webhook-id: load-%d-%d-%ld\r\nContent-Length: %zu\r\n\r\n%s",
                     w->id, c->fd, c->seq++, sizeof(body) - 1, body);

    return write(c->fd, req, (size_t)n) == n ? 0 : -1;
}

/* One whole answer at the start of c->in: its length, 0 if incomplete, -1 if malformed. */
static long
answer_len(const struct conn *c)
{
    const char *end = memmem(c->in, c->have, "\r\n\r\n", 4);
    long body = 0;

    if (!end)
        return c->have >= BUF ? -1 : 0;
    for (const char *p = c->in; p < end; p++) {
        if ((p == c->in || p[-1] == '\n') && !strncasecmp(p, "Content-Length:", 15)) {
            body = strtol(p + 15, NULL, 10);
            break;
        }
    }
    if (strncmp(c->in, "HTTP/1.1 2", 10) != 0)
        return -1;
    if ((size_t)(end + 4 - c->in) + (size_t)body > c->have)
        return 0;
    return (long)(end + 4 - c->in) + body;
}

static void *
run(void *arg)
{
    struct worker *w = arg;
    struct conn *cs = calloc((size_t)w->conns, sizeof(*cs));
    struct epoll_event ev, evs[256];
    int ep = epoll_create1(0);
    double stop;

    for (int i = 0; i < w->conns; i++) {
        cs[i].fd = dial(w->port);
        if (cs[i].fd < 0 || send_request(w, &cs[i]) != 0) {
            w->errors++;
            continue;
        }
        ev.events = EPOLLIN;
        ev.data.ptr = &cs[i];
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
    }
    stop = mono() + w->seconds;
    while (mono() < stop) {
        int n = epoll_wait(ep, evs, 256, 100);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            ssize_t got = read(c->fd, c->in + c->have, BUF - c->have);
            long len;
            if (got <= 0) {
                w->errors++;
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                continue;
            }
            c->have += (size_t)got;
            while ((len = answer_len(c)) > 0) {
                memmove(c->in, c->in + len, c->have - (size_t)len);
                c->have -= (size_t)len;
                w->done++;
                if (send_request(w, c) != 0)
                    w->errors++;
            }
            if (len < 0) {
                w->errors++;
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
            }
        }
    }
    for (int i = 0; i < w->conns; i++)
        if (cs[i].fd >= 0)
            close(cs[i].fd);
    close(ep);
    free(cs);
    return NULL;
}

int
main(int argc, char **argv)
{
    int port = 0, conns = 64, threads = 1;
    double seconds = 2, t0;
    long done = 0, errors = 0;
    struct worker *ws;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port"))
            port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--conns"))
            conns = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[i + 1]);
    }
    if (port <= 0 || conns < 1 || threads < 1 || seconds <= 0) {
        fputs("usage: sendat-httpload --port N [--conns 64] [--seconds 2] [--threads 1]\n", stderr);
        return 2;
    }
    ws = calloc((size_t)threads, sizeof(*ws));
    t0 = mono();
    for (int i = 0; i < threads; i++) {
        ws[i] = (struct worker){.port = port,
                                .conns = conns / threads > 0 ? conns / threads : 1,
                                .id = i,
                                .seconds = seconds};
        pthread_create(&ws[i].thread, NULL, run, &ws[i]);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(ws[i].thread, NULL);
        done += ws[i].done;
        errors += ws[i].errors;
    }
    t0 = mono() - t0;
    printf("requests=%ld seconds=%.3f rate=%.0f errors=%ld\n", done, t0, (double)done / t0, errors);
    free(ws);
    return errors ? 1 : 0;
}

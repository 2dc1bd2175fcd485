/* The consumer's HTTP face for orchestrators and Prometheus. Alive means the process answers;
 * ready means the consumer started (the server came and the layout was read), NATS is connected
 * and the puller heard from the stream within 10 s. Metrics are read from atomic counters: the
 * endpoint never takes a lock the send path holds. Idle or greedy clients cannot starve the
 * probes: connections per client are capped, idle ones time out, and past IDLE_KEEP open
 * connections the oldest one that has asked nothing is shut to make room for a new one (40
 * addresses holding 8 idle connections each, reopened every 8 s, failed every probe). */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "health.h"
#include "listen.h"
#include "log.h"
#include "timeparse.h"
#include "wheel.h"

#define METRICS_MAX 16384
/* One client (a kubelet, a Prometheus) needs a few connections; an idle one is closed after
 * IDLE_TIMEOUT_S. 1,030 idle connections once held the endpoint for as long as they stayed:
 * select() stopped at FD_SETSIZE, and nothing closed them. */
#define PER_CLIENT_MAX 8
#define CONNECTIONS_MAX 512 /* libmicrohttpd's hard cap: room above IDLE_KEEP for a burst */
#define IDLE_KEEP 128       /* open connections kept before the oldest idle one is shut */
#define IDLE_TIMEOUT_S 10
/* SENDAT_HTTP_ADDR unset: :8080, or the next free port up to 8099 */
#define DEFAULT_PORT 8080u
#define DEFAULT_PORT_LAST 8099u

/* One open connection, in the order they opened (a served one goes to the back again). */
struct tracked {
    int fd;
    int busy; /* a request is being answered: never shut */
    int shut; /* shut down, its close not yet seen */
    struct tracked *prev, *next;
};

/* Touched only from the daemon's one thread (MHD_USE_AUTO_INTERNAL_THREAD, no pool). */
struct health {
    struct MHD_Daemon *d;
    struct consumer *c;
    struct tracked *head, *tail;
    size_t live; /* open and not shut */
    long evicted;
};

static void
unlink_tracked(struct health *h, struct tracked *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        h->head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        h->tail = t->prev;
    t->prev = t->next = NULL;
}

static void
append_tracked(struct health *h, struct tracked *t)
{
    t->prev = h->tail;
    if (h->tail)
        h->tail->next = t;
    else
        h->head = t;
    h->tail = t;
}

/* Shuts the oldest idle connections down until IDLE_KEEP are left; the daemon sees the end
 * of each and closes it (its descriptor is open until our close notification). */
static void
make_room(struct health *h)
{
    for (struct tracked *t = h->head; t && h->live > IDLE_KEEP; t = t->next)
        if (!t->busy && !t->shut) {
            shutdown(t->fd, SHUT_RDWR);
            t->shut = 1;
            h->live--;
            h->evicted++;
        }
}

static void
on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
              enum MHD_ConnectionNotificationCode what)
{
    struct health *h = cls;
    struct tracked *t = *socket_ctx;
    const union MHD_ConnectionInfo *ci;

    if (what == MHD_CONNECTION_NOTIFY_STARTED) {
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!ci || !(t = calloc(1, sizeof(*t))))
            return; /* untracked: still capped by the daemon's limits */
        t->fd = ci->connect_fd;
        append_tracked(h, t);
        h->live++;
        *socket_ctx = t;
        make_room(h);
        return;
    }
    if (!t)
        return;
    unlink_tracked(h, t);
    if (!t->shut)
        h->live--;
    free(t);
    *socket_ctx = NULL;
}

static struct tracked *
tracked_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

/* A request was answered: the connection is idle again, and the newest such. */
static void
on_done(void *cls, struct MHD_Connection *conn, void **ctx, enum MHD_RequestTerminationCode why)
{
    struct health *h = cls;
    struct tracked *t = tracked_of(conn);

    (void)ctx;
    (void)why;
    if (!t)
        return;
    t->busy = 0;
    unlink_tracked(h, t);
    append_tracked(h, t);
}

static int
ready(struct consumer *c)
{
    return atomic_load(&c->started) && /* else c->n may not be set yet: waiting for the server */
           natsConnection_Status(c->n->nc) == NATS_CONN_STATUS_CONNECTED &&
           !atomic_load(&c->ledger_lost) &&
           sa_now_ms() - atomic_load(&c->counters.last_pull_ok_ms) < 10000;
}

/* Why /readyz says no: what start waits for, if it still waits (a literal, as reply takes). */
static char *
not_ready_text(struct consumer *c)
{
    if (atomic_load(&c->started) && atomic_load(&c->js_silent))
        return "not ready: connected, but JetStream answers nothing (a full store disk stops "
               "nats-server 2.9's JetStream until it is restarted: free space, restart it)\n";
    if (atomic_load(&c->started) && atomic_load(&c->ledger_lost))
        return "not ready: a claims bucket is gone or was made again since sendat init recorded "
               "it (run sendat init: it says what was lost)\n";
    if (atomic_load(&c->started))
        return "not ready\n";
    switch (atomic_load(&c->waiting)) {
    case CONSUMER_WAIT_SERVER:
        return "not ready: waiting for the NATS server\n";
    case CONSUMER_WAIT_INIT:
        return "not ready: waiting for sendat init (no streams or buckets on the server yet, or "
               "none of this version)\n";
    default:
        return "not ready: starting\n";
    }
}

/* /readyz's answer when ready: a member without SMTP settings is ready for webhooks only. */
static char *
ready_text(struct consumer *c)
{
    return c->cfg.smtp.url[0] ? "ready\n"
                              : "ready (webhooks only: no SENDAT_SMTP_URL, email tasks are left "
                                "to members that can send mail)\n";
}

static int put(char *buf, int used, const char *fmt, ...) SA_PRINTF(3, 4);

static int
put(char *buf, int used, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (used >= METRICS_MAX)
        return used;
    va_start(ap, fmt);
    n = vsnprintf(buf + used, (size_t)(METRICS_MAX - used), fmt, ap);
    va_end(ap);
    return n < 0 ? used : used + n;
}

static int
channel_counter(char *buf, int n, const char *name, const char *help, const atomic_long v[3])
{
    static const char *ch[] = {"unknown", "webhook", "email"};

    n = put(buf, n, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
    for (int i = 0; i < 3; i++)
        n = put(buf, n, "%s{channel=\"%s\"} %ld\n", name, ch[i], atomic_load(&v[i]));
    return n;
}

static int
histogram(char *buf, int n, const char *name, const char *help, const struct histogram *h)
{
    n = put(buf, n, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    for (int i = 0; i < LATENESS_BUCKETS; i++)
        n = put(buf, n, "%s_bucket{le=\"%g\"} %ld\n", name, lateness_bounds_ms[i] / 1000.0,
                atomic_load(&h->le[i]));
    n = put(buf, n, "%s_bucket{le=\"+Inf\"} %ld\n", name, atomic_load(&h->count));
    n = put(buf, n, "%s_sum %g\n", name, atomic_load(&h->sum_ms) / 1000.0);
    return put(buf, n, "%s_count %ld\n", name, atomic_load(&h->count));
}

static int
lateness(char *buf, int n, const struct counters *k)
{
    n = histogram(buf, n, "sendat_lateness_seconds",
                  "Dispatch lateness: the first attempt's start minus the due time.", &k->dispatch);
    n = histogram(buf, n, "sendat_delivery_lateness_seconds",
                  "Delivery lateness: the receiver's acceptance minus the first due time.",
                  &k->delivery);
    n = put(buf, n,
            "# HELP sendat_booked_late_total Sends of tasks booked after their due time (not in "
            "the lateness histograms).\n# TYPE sendat_booked_late_total counter\n"
            "sendat_booked_late_total %ld\n",
            atomic_load(&k->booked_late));
    return put(buf, n,
               "# HELP sendat_booked_late_seconds_total How late those tasks were booked, summed."
               "\n# TYPE sendat_booked_late_seconds_total counter\n"
               "sendat_booked_late_seconds_total %g\n",
               atomic_load(&k->booked_late_ms) / 1000.0);
}

/* One metric of one value: its help line, its type line and the value. */
static int
one(char *buf, int n, const char *type, const char *name, const char *help, long v)
{
    return put(buf, n, "# HELP %s %s\n# TYPE %s %s\n%s %ld\n", name, help, name, type, name, v);
}

static int
counters(char *buf, int n, const struct counters *k)
{
    static const struct {
        const char *name, *help;
        size_t at; /* offsetof the atomic_long in struct counters */
    } rows[] = {
        {"sendat_cancelled_total", "Tasks found cancelled when pulled or when claimed (not sent).",
         offsetof(struct counters, cancelled)},
        {"sendat_duplicates_skipped_total",
         "Copies of a task the claim ledger showed taken or finished already (not sent).",
         offsetof(struct counters, duplicates)},
        {"sendat_redelivered_held_total",
         "Redeliveries of a task this consumer still held (not held twice).",
         offsetof(struct counters, redelivered_held)},
        {"sendat_unknown_key_total", "Tasks handed back because their key id is not loaded here.",
         offsetof(struct counters, key_waits)},
        {"sendat_parked_total",
         "Messages that did not open, moved out of their level into the park.",
         offsetof(struct counters, parked)},
        {"sendat_dead_letter_deferred_total",
         "Dead letters of messages that did not open left in the park for a later interval (over "
         "the budget).",
         offsetof(struct counters, dead_deferred)},
        {"sendat_mail_left_total",
         "Email tasks handed to the park for members that can send mail (this one has no "
         "SENDAT_SMTP_URL).",
         offsetof(struct counters, mail_left)},
        {"sendat_stream_full_total",
         "Moves, retries and next occurrences a full task stream refused (each original stays "
         "and comes again later).",
         offsetof(struct counters, stream_full)},
        {"sendat_republished_total",
         "Tasks moved down from their window level to their slot (the copy stored, the original "
         "acked).",
         offsetof(struct counters, moved)},
        {"sendat_pulled_total", "Messages delivered to this consumer from the levels and the park.",
         offsetof(struct counters, pulled)},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        n = one(buf, n, "counter", rows[i].name, rows[i].help,
                atomic_load((const atomic_long *)((const char *)k + rows[i].at)));
    return n;
}

static int
metrics(struct consumer *c, char *buf)
{
    struct counters *k = &c->counters;
    int n = 0;

    n = channel_counter(buf, n, "sendat_sent_total", "Sends the receiver accepted.", k->sent);
    n = channel_counter(buf, n, "sendat_failed_total", "Attempts that failed.", k->failed);
    n = channel_counter(buf, n, "sendat_retried_total", "Retries put back into the wheel.",
                        k->retried);
    n = channel_counter(buf, n, "sendat_dead_lettered_total",
                        "Tasks sent to the dead-letter stream.", k->dead);
    n = counters(buf, n, k);
    n = one(buf, n, "gauge", "sendat_can_send_mail",
            "1 if this member has SMTP settings (SENDAT_SMTP_URL), 0 if it leaves email tasks to "
            "the others.",
            c->cfg.smtp.url[0] != '\0');
    n = one(buf, n, "gauge", "sendat_in_flight", "Sends under way now.", atomic_load(&k->inflight));
    n = one(buf, n, "gauge", "sendat_held", "Tasks this consumer holds until their due time.",
            atomic_load(&c->started) ? (long)wheel_count(c->wheel) : 0);
    n = one(buf, n, "gauge", "sendat_backlog",
            "Tasks waiting in the current window, fleet-wide (read every 30 s).",
            atomic_load(&k->backlog));
    n = one(buf, n, "gauge", "sendat_ready", "1 when /readyz answers 200.", ready(c));
    return lateness(buf, n, k);
}

static enum MHD_Result
reply(struct MHD_Connection *conn, unsigned status, const char *type, char *body,
      enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, mode);
    enum MHD_Result ret;

    MHD_add_response_header(r, "Content-Type", type);
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
           const char *version, const char *data, size_t *size, void **state)
{
    struct health *h = cls;
    char *buf;

    struct tracked *t = tracked_of(conn);

    (void)version;
    (void)data;
    (void)size;
    (void)state;
    if (t)
        t->busy = 1;
    if (strcmp(method, "GET") != 0)
        return reply(conn, 405, "text/plain", "GET only\n", MHD_RESPMEM_PERSISTENT);
    if (!strcmp(url, "/healthz"))
        return reply(conn, 200, "text/plain", "ok\n", MHD_RESPMEM_PERSISTENT);
    if (!strcmp(url, "/readyz"))
        return ready(h->c)
                   ? reply(conn, 200, "text/plain", ready_text(h->c), MHD_RESPMEM_PERSISTENT)
                   : reply(conn, 503, "text/plain", not_ready_text(h->c), MHD_RESPMEM_PERSISTENT);
    if (strcmp(url, "/metrics") != 0)
        return reply(conn, 404, "text/plain", "not found\n", MHD_RESPMEM_PERSISTENT);
    buf = malloc(METRICS_MAX + 1);
    if (!buf)
        return MHD_NO;
    metrics(h->c, buf);
    return reply(conn, 200, "text/plain; version=0.0.4", buf, MHD_RESPMEM_MUST_FREE);
}

/* The daemon on sin, or NULL with errno set. */
static struct MHD_Daemon *
listen_on(struct health *h, struct sockaddr_in *sin)
{
    /* epoll (or poll): no FD_SETSIZE ceiling on descriptor numbers */
    return MHD_start_daemon(
        MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)sin, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PER_CLIENT_MAX,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS_MAX, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_NOTIFY_COMPLETED, on_done, h, MHD_OPTION_END);
}

/* The default address: DEFAULT_PORT, else the next free port up to DEFAULT_PORT_LAST, so
 * several consumers on one host start without settings (each logs its port). */
static struct MHD_Daemon *
listen_default(struct health *h, struct sockaddr_in *sin)
{
    struct MHD_Daemon *d = NULL;

    for (unsigned port = DEFAULT_PORT; !d && port <= DEFAULT_PORT_LAST; port++) {
        sin->sin_port = htons((uint16_t)port);
        d = listen_on(h, sin);
        if (!d && errno != EADDRINUSE)
            return NULL;
        if (d && port != DEFAULT_PORT)
            sa_log(SA_LOG_WARN, "http_port_taken",
                   "port=%u listening=%u hint=\"port %u is in use (another consumer on this "
                   "host?): listening on %u; set SENDAT_HTTP_ADDR to choose\"",
                   DEFAULT_PORT, port, DEFAULT_PORT, port);
    }
    return d;
}

enum sa_code
health_start(struct health **out, struct consumer *c, const char *addr, struct sa_err *err)
{
    struct sockaddr_in sin;
    struct health *h;
    const union MHD_DaemonInfo *info;
    int by_default = !addr || !*addr;

    *out = NULL;
    if (by_default)
        addr = ":8080";
    if (!strcmp(addr, "off"))
        return SA_OK;
    if (sa_listen_parse("SENDAT_HTTP_ADDR", addr, &sin, err) != SA_OK)
        return SA_EINVAL;
    h = calloc(1, sizeof(*h));
    if (!h)
        return sa_fail(err, SA_ENOMEM, "no memory for the HTTP endpoint");
    h->c = c;
    h->d = by_default ? listen_default(h, &sin) : listen_on(h, &sin);
    if (!h->d) { /* a consumer without its probes would be restarted or go unwatched */
        int e = errno;
        free(h);
        return sa_fail(err, SA_EINVAL,
                       "cannot listen on %s%s for /healthz and /metrics (%s): set "
                       "SENDAT_HTTP_ADDR to a free host:port, :0 for any free port, or off",
                       addr, by_default ? " (nor the next ports up to 8099)" : "",
                       e == EADDRINUSE ? "in use, by another consumer?" : strerror(e));
    }
    info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    sa_log(SA_LOG_INFO, "http_listening", "addr=%s port=%u", addr,
           info ? (unsigned)info->port : 0u);
    *out = h;
    return SA_OK;
}

void
health_stop(struct health *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}

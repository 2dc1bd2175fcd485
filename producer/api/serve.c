/* The HTTP side of `sendat serve` (libmicrohttpd, a thread pool, keep-alive): the bearer token
 * checked from the head before any body is read, bodies gathered up to their route's ceiling
 * (a batch's lines booked as they come), every answer JSON and logged once.
 * A missing or unknown token is 401 and a role too small 403 (serve_answer.c), neither saying
 * more; GET /v1/openapi.json alone needs no token, and so do the console's files outside /v1
 * (serve_console.c). */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>
#include <sodium.h>

#include "listen.h"
#include "log.h"
#include "serve.h"
#include "serve_guard.h"
#include "timeparse.h"

#define IDLE_TIMEOUT_S 60
#define CONNECTIONS_MAX 1024
#define CONNECTIONS_KEPT 768      /* then the oldest waiting one makes room (serve_guard.c) */
#define TRIM_AT (2 * 1024 * 1024) /* an answer this big is freed with serve_trim_after */

/* Frees a big answer's text and gives the memory back (serve_trim_after). */
static void
free_big(void *text)
{
    free(text);
    serve_trim_after(TRIM_AT);
}

/* r's answer as a response: its text as given (taken), or its document dumped. */
static struct MHD_Response *
answer_body(struct request *r)
{
    struct MHD_Response *resp;
    size_t len = r->answer_len;
    char *text = r->answer_text;

    r->answer_text = NULL;
    if (!text) {
        if (r->role == TOKEN_READER)
            serve_redact_for_reader(r->answer);
        text = r->answer ? json_dumps(r->answer, JSON_COMPACT) : strdup("{}");
        len = text ? strlen(text) : 0;
    }
    if (!text)
        return NULL;
    if (len >= TRIM_AT)
        resp = MHD_create_response_from_buffer_with_free_callback(len, text, free_big);
    else
        resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!resp)
        free(text);
    return resp;
}

static enum MHD_Result
send_answer(struct MHD_Connection *conn, struct request *r)
{
    struct MHD_Response *resp;
    enum MHD_Result ok;
    char retry[16];

    resp = answer_body(r);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    if (r->s->tls)
        MHD_add_response_header(resp, "Strict-Transport-Security", SERVE_HSTS);
    if (r->status == 401)
        MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
    if (r->close)
        MHD_add_response_header(resp, "Connection", "close");
    if (r->status == 429) {
        snprintf(retry, sizeof(retry), "%d", r->retry_after_s);
        MHD_add_response_header(resp, "Retry-After", retry);
    }
    ok = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static void
authenticate(struct request *r)
{
    const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");

    r->role = TOKEN_NONE;
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return;
    serve_follow_tokens(r->s);
    pthread_rwlock_rdlock(&r->s->tokens_lock);
    r->role = tokens_check(r->s->tokens, h + 7, r->who);
    pthread_rwlock_unlock(&r->s->tokens_lock);
}

/* Splits the path below /v1 into parts; 0 if it is not under /v1 or has too many parts. */
static int
split_path(struct request *r, const char *url)
{
    char *copy, *save = NULL;

    if (strncmp(url, "/v1/", 4) != 0 && strcmp(url, "/v1") != 0)
        return 0;
    copy = strdup(url + 3);
    if (!copy)
        return 0;
    for (char *tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (r->n_parts == SERVE_PATH_PARTS) {
            free(copy);
            return 0;
        }
        r->parts[r->n_parts] = strdup(tok);
        if (!r->parts[r->n_parts]) {
            free(copy);
            return 0;
        }
        r->n_parts++;
    }
    free(copy);
    return 1;
}

static void
request_free(struct request *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_parts; i++)
        free(r->parts[i]);
    if (r->body)
        sodium_memzero(r->body, r->body_len); /* may hold recipients and bodies */
    free(r->body);
    serve_batch_free(r->batch);
    free(r->answer_text);
    json_decref(r->answer);
    free(r);
}

static int
is_batch(const struct request *r)
{
    return !strcmp(r->method, "POST") && r->n_parts == 1 && !strcmp(r->parts[0], "batches");
}

/* Each route's ceiling: a batch is read line by line, a task is one JSON document, and no
 * other route takes more than a small object. */
static size_t
body_limit(const struct request *r)
{
    if (is_batch(r))
        return SERVE_BATCH_MAX;
    if (!strcmp(r->method, "POST") && r->n_parts == 1 &&
        (!strcmp(r->parts[0], "tasks") || !strcmp(r->parts[0], "series")))
        return SERVE_BODY_MAX;
    return SERVE_SMALL_MAX;
}

/* Takes a piece of the body (a batch's lines go on at once); 0 once it passed its ceiling
 * (the answer is then 413). */
static int
take_body(struct request *r, const char *data, size_t len)
{
    char *grown;

    if (r->status || r->body_len + len > body_limit(r)) {
        if (!r->status)
            serve_fail(r, 413, NULL, "the body is larger than %zu bytes", body_limit(r));
        return 0;
    }
    if (r->batch) {
        r->body_len += len;
        serve_batch_feed(r, data, len);
        return 1;
    }
    grown = realloc(r->body, r->body_len + len + 1);
    if (!grown) {
        serve_fail(r, 503, NULL, "no memory for the body");
        return 0;
    }
    r->body = grown;
    memcpy(r->body + r->body_len, data, len);
    r->body_len += len;
    r->body[r->body_len] = '\0';
    return 1;
}

/* A path part the log may print as is: a word of the API, never an id or a client's bytes. */
static int
plain_word(const char *p)
{
    size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz-.");

    return n > 0 && n <= 16 && !p[n];
}

/* The route as the log names it: /v1/tasks/{id}, "console" for the console's files, "-" for
 * a path outside them. */
static void
route_name(const struct request *r, char *out, size_t cap)
{
    size_t used;

    if (r->console >= 0 || !r->n_parts) {
        snprintf(out, cap, "%s", r->console >= 0 ? "console" : "-");
        return;
    }
    used = (size_t)snprintf(out, cap, "/v1");
    for (int i = 0; i < r->n_parts && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "/%s",
                                 i != 1 && plain_word(r->parts[i]) ? r->parts[i] : "{id}");
}

/* One line per answer: 5xx at warning level, the rest at info. */
static void
log_answer(const struct request *r)
{
    char route[128];
    int status = r->status;

    if (!status) /* the client went away before its answer */
        return;
    route_name(r, route, sizeof(route));
    sa_log(status >= 500 ? SA_LOG_WARN : SA_LOG_INFO, "api",
           "method=%s route=%s status=%d ms=%lld token=%s",
           r->method[strspn(r->method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")] ? "other" : r->method, route,
           status, (long long)(sa_now_ms() - r->started_ms), r->who[0] ? r->who : "-");
}

static struct serve_guard_conn *
guard_conn(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

/* The first call, with the head only: the token, its share of connections, its rate and the
 * size are checked before a byte of the body is read (twenty unauthenticated 60 MiB batches once
 * held 1.2 GiB). 1 if the body may come; 0 with r->status set, answered at once. */
static int
admit(struct request *r, struct MHD_Connection *conn, const char *url)
{
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");

    r->console = serve_console_find(r->method, url);
    if (r->console >= 0)
        return 1;
    if (!split_path(r, url))
        return serve_fail(r, 404, NULL, "no such resource; the API lives under /v1");
    authenticate(r);
    if (serve_is_public(r))
        return 1;
    if (r->role == TOKEN_NONE)
        return serve_fail(r, 401, NULL, "a valid bearer token is required");
    if (!serve_guard_enter(r->s->guard, guard_conn(conn), r->who)) {
        r->close = 1; /* its connection goes: the token holds its share already */
        r->retry_after_s = 1;
        return serve_fail(r, 429, NULL, "this token has %d requests under way; retry after 1 s",
                          r->s->per_token);
    }
    if (!serve_guard_admit(r->s->guard, r->who, &r->retry_after_s))
        return serve_fail(r, 429, NULL, "too many requests for this token; retry after %d s",
                          r->retry_after_s);
    if (cl && strtoull(cl, NULL, 10) > body_limit(r))
        return serve_fail(r, 413, NULL, "the body is larger than %zu bytes", body_limit(r));
    if (is_batch(r)) /* read as it comes, by a producer only */
        return serve_need(r, TOKEN_PRODUCER) && serve_batch_begin(r);
    return 1;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
           const char *version, const char *data, size_t *data_size, void **ctx)
{
    struct request *r = *ctx;

    (void)version;
    if (!r) { /* the head is in: refuse what needs no body before reading it */
        r = calloc(1, sizeof(*r));
        if (!r)
            return MHD_NO;
        r->s = cls;
        r->conn = conn;
        r->method = method;
        r->started_ms = sa_now_ms();
        *ctx = r;
        serve_guard_head_in(r->s->guard, guard_conn(conn));
        return admit(r, conn, url) ? MHD_YES : send_answer(conn, r);
    }
    if (r->console >= 0 && !*data_size) {
        r->status = 200; /* for the log */
        return (enum MHD_Result)serve_console_send(conn, r->console, r->s->tls);
    }
    if (*data_size) {
        int64_t t0 = sa_now_ms();
        take_body(r, data, *data_size);
        serve_guard_body(r->s->guard, guard_conn(conn), *data_size, sa_now_ms() - t0);
        *data_size = 0;
        return MHD_YES;
    }
    serve_guard_body_in(r->s->guard, guard_conn(conn));
    if (!r->status) {
        if (serve_is_public(r))
            serve_openapi(r);
        else
            serve_route(r);
    }
    if (!r->status)
        serve_fail(r, 500, NULL, "the route gave no answer");
    return send_answer(conn, r);
}

static void
on_done(void *cls, struct MHD_Connection *conn, void **ctx, enum MHD_RequestTerminationCode why)
{
    struct server *s = cls;
    struct request *r = *ctx;

    (void)why;
    if (r)
        log_answer(r);
    serve_guard_answered(s->guard, guard_conn(conn));
    request_free(r);
    *ctx = NULL;
}

/* The request line is in (libmicrohttpd's URI log): a head is under way. Returns the request's
 * first context, NULL, so on_request sets it up. */
static void *
on_request_line(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct server *s = cls;

    (void)uri;
    serve_guard_begun(s->guard, guard_conn(conn));
    return NULL;
}

static void
on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
              enum MHD_ConnectionNotificationCode what)
{
    struct server *s = cls;
    const union MHD_ConnectionInfo *ci;

    if (what == MHD_CONNECTION_NOTIFY_STARTED) {
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_ctx = ci ? serve_guard_opened(s->guard, ci->connect_fd) : NULL;
    } else {
        serve_guard_closed(s->guard, *socket_ctx);
        *socket_ctx = NULL;
    }
}

/* Plain HTTP only on loopback, unless the operator says a TLS proxy stands in front. */
static enum sa_code
check_plain(const struct sockaddr_in *sin, const char *addr, const struct serve_tls *tls,
            struct sa_err *err)
{
    const char *insecure = getenv("SENDAT_API_INSECURE");

    if (tls->cert || (ntohl(sin->sin_addr.s_addr) >> 24) == 127 ||
        (insecure && !strcmp(insecure, "1")))
        return SA_OK;
    return sa_fail(err, SA_EINVAL,
                   "plain HTTP on %s (not loopback) is refused: set SENDAT_API_TLS_CERT and "
                   "SENDAT_API_TLS_KEY, or SENDAT_API_INSECURE=1 behind a TLS proxy",
                   addr);
}

/* TLS 1.2 at least: GnuTLS's NORMAL still offers 1.0 and 1.1 on some builds. */
#define TLS_PRIORITIES "NORMAL:-VERS-TLS1.0:-VERS-TLS1.1:-VERS-SSL3.0"

static enum sa_code
start_daemon(struct server *s, struct sockaddr_in *sin, int threads, const struct serve_tls *tls,
             const struct serve_limits *lim)
{
    const char *prio = getenv("SENDAT_API_TLS_PRIORITIES");
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, sin},
        {MHD_OPTION_THREAD_POOL_SIZE, threads, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, CONNECTIONS_MAX, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, lim->per_client, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, IDLE_TIMEOUT_S, NULL}, /* slow clients */
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_done, s},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_request_line, s},
        {tls->cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, tls->cert},
        {tls->key ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, tls->key},
        {tls->cert ? MHD_OPTION_HTTPS_PRIORITIES : MHD_OPTION_END, 0,
         (void *)(prio && *prio ? prio : TLS_PRIORITIES)},
        {MHD_OPTION_END, 0, NULL},
    };

    if (tls->cert)
        flags |= MHD_USE_TLS;
    s->tls = tls->cert != NULL;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, opts,
                            MHD_OPTION_END);
    return s->d ? SA_OK : SA_EINVAL;
}

enum sa_code
serve_start(struct server *s, const char *addr, int threads, const struct serve_tls *tls,
            const struct serve_limits *lim, struct sa_err *err)
{
    struct sockaddr_in sin;
    enum sa_code rc = sa_listen_parse("SENDAT_API_ADDR", addr, &sin, err);

    if (rc == SA_OK)
        rc = check_plain(&sin, addr, tls, err);
    if (rc != SA_OK)
        return rc;
    /* Blocks from 256 KiB on (a batch's results and answer) are mapped apart and unmapped when
     * freed: with glibc's threshold moving up, each worker's arena kept ~25 MiB a junk batch. */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    if (tls->cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return sa_fail(err, SA_EINVAL, "this libmicrohttpd has no TLS: SENDAT_API_TLS_CERT");
    s->per_token = lim->per_token;
    if ((rc = serve_guard_new(&s->guard, (int64_t)lim->head_s * 1000, lim->rate, lim->per_token,
                              CONNECTIONS_KEPT, err)) != SA_OK)
        return rc;
    if (start_daemon(s, &sin, threads, tls, lim) != SA_OK) {
        serve_guard_free(s->guard);
        s->guard = NULL;
        return sa_fail(err, SA_EINVAL,
                       "cannot listen on %s (%s): set SENDAT_API_ADDR (and check "
                       "SENDAT_API_TLS_CERT, SENDAT_API_TLS_KEY, SENDAT_API_TLS_PRIORITIES)",
                       addr, strerror(errno));
    }
    return SA_OK;
}

unsigned
serve_port(const struct server *s)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);

    return info ? (unsigned)info->port : 0u;
}

void
serve_stop(struct server *s)
{
    if (s->d)
        MHD_stop_daemon(s->d);
    s->d = NULL;
    serve_guard_free(s->guard);
    s->guard = NULL;
}

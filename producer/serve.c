/* The HTTP side of `sendat serve` (libmicrohttpd, a thread pool, keep-alive): bodies gathered
 * up to their ceiling, the bearer token checked before any route runs, and every answer JSON.
 * A missing or unknown token is 401 and a role too small 403 (serve_routes.c), neither saying
 * more; GET /v1/openapi.json alone needs no token, and so do the console's files outside /v1
 * (serve_console.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>
#include <sodium.h>

#include "listen.h"
#include "log.h"
#include "serve.h"

#define IDLE_TIMEOUT_S 60
#define CONNECTIONS_MAX 1024

void
serve_reply(struct request *r, int status, json_t *doc)
{
    json_decref(r->answer);
    r->status = status;
    r->answer = doc;
}

int
serve_fail(struct request *r, int status, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    json_t *e;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    e = json_pack("{s:i, s:s}", "status", status, "message", msg);
    json_object_set_new(e, "field", field ? json_string(field) : json_null());
    serve_reply(r, status, json_pack("{s:o}", "error", e));
    return 0;
}

int
serve_need(struct request *r, enum token_role role)
{
    if (r->role >= role)
        return 1;
    serve_fail(r, 403, NULL, "forbidden");
    return 0;
}

const char *
serve_query(struct request *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

int
serve_query_number(struct request *r, const char *name, int64_t lo, int64_t hi, int64_t *out)
{
    const char *v = serve_query(r, name);
    char *end = NULL;
    long long x;

    if (!v)
        return 1;
    errno = 0;
    x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return serve_fail(r, 400, name, "%s must be a whole number from %" PRId64 " to %" PRId64,
                          name, lo, hi);
    *out = (int64_t)x;
    return 1;
}

static enum MHD_Result
send_answer(struct MHD_Connection *conn, struct request *r)
{
    char *text = r->answer ? json_dumps(r->answer, JSON_COMPACT) : strdup("{}");
    struct MHD_Response *resp;
    enum MHD_Result ok;

    if (!text)
        return MHD_NO;
    resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    if (r->status == 401)
        MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
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
    json_decref(r->answer);
    free(r);
}

static size_t
body_limit(const struct request *r)
{
    return r->n_parts == 1 && !strcmp(r->parts[0], "batches") ? SERVE_BATCH_MAX : SERVE_BODY_MAX;
}

/* Appends a piece of the body; 0 once it passed its ceiling (the answer is then 413). */
static int
take_body(struct request *r, const char *data, size_t len)
{
    char *grown;

    if (r->status || r->body_len + len > body_limit(r)) {
        if (!r->status)
            serve_fail(r, 413, NULL, "the body is larger than %zu bytes", body_limit(r));
        return 0;
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

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
           const char *version, const char *data, size_t *data_size, void **ctx)
{
    struct request *r = *ctx;

    (void)version;
    if (!r) { /* the headers are in: set up, and refuse early what needs no body */
        r = calloc(1, sizeof(*r));
        if (!r)
            return MHD_NO;
        r->s = cls;
        r->conn = conn;
        r->method = method;
        *ctx = r;
        r->console = serve_console_find(method, url);
        if (r->console < 0 && !split_path(r, url))
            serve_fail(r, 404, NULL, "no such resource; the API lives under /v1");
        return MHD_YES;
    }
    if (r->console >= 0 && !*data_size)
        return (enum MHD_Result)serve_console_send(conn, r->console);
    if (*data_size) {
        take_body(r, data, *data_size);
        *data_size = 0;
        return MHD_YES;
    }
    if (!r->status) {
        authenticate(r);
        if (serve_is_public(r))
            serve_openapi(r);
        else if (r->role == TOKEN_NONE)
            serve_fail(r, 401, NULL, "a valid bearer token is required");
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
    (void)cls;
    (void)conn;
    (void)why;
    request_free(*ctx);
    *ctx = NULL;
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

enum sa_code
serve_start(struct server *s, const char *addr, int threads, const struct serve_tls *tls,
            struct sa_err *err)
{
    struct sockaddr_in sin;
    enum sa_code rc = sa_listen_parse("SENDAT_API_ADDR", addr, &sin, err);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, &sin},
        {MHD_OPTION_THREAD_POOL_SIZE, threads, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, CONNECTIONS_MAX, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, IDLE_TIMEOUT_S, NULL}, /* slow clients */
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_done, s},
        {tls->cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, tls->cert},
        {tls->key ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, tls->key},
        {MHD_OPTION_END, 0, NULL},
    };

    if (rc == SA_OK)
        rc = check_plain(&sin, addr, tls, err);
    if (rc != SA_OK)
        return rc;
    if (tls->cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return sa_fail(err, SA_EINVAL, "this libmicrohttpd has no TLS: SENDAT_API_TLS_CERT");
    if (tls->cert)
        flags |= MHD_USE_TLS;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, opts,
                            MHD_OPTION_END);
    if (!s->d)
        return sa_fail(err, SA_EINVAL,
                       "cannot listen on %s (%s): set SENDAT_API_ADDR (and check "
                       "SENDAT_API_TLS_CERT, SENDAT_API_TLS_KEY)",
                       addr, strerror(errno));
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
}

enum sa_code
serve_reload_tokens(struct server *s, struct sa_err *err)
{
    struct tokens *fresh = NULL, *old;
    enum sa_code rc = tokens_load(&fresh, s->tokens_file, err);

    if (rc != SA_OK)
        return rc;
    pthread_rwlock_wrlock(&s->tokens_lock);
    old = s->tokens;
    s->tokens = fresh;
    pthread_rwlock_unlock(&s->tokens_lock);
    tokens_free(old);
    return SA_OK;
}

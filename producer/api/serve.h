/* `sendat serve`: the producer role over HTTP/1.1 (JSON under /v1, bearer tokens with roles,
 * and the web console's files outside /v1). serve.c owns the HTTP side (requests, bodies,
 * authentication, one error shape); serve_routes.c picks the route and answers tasks and
 * whoami itself, and the other routes have a file each (serve_batch.c, serve_series.c,
 * serve_groups.c, serve_tasklist.c, serve_stats.c, serve_dlq.c, serve_openapi.c). Every /v1
 * route answers through serve_answer.c (serve_reply, serve_fail and the shared answers), which
 * calls no route and not serve.c; the console is serve_console.c. */
#ifndef SERVE_H
#define SERVE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "natsconn.h"
#include "tokens.h"

#define SERVE_BODY_MAX (1024 * 1024)       /* one task: a 256 KiB body and its envelope */
#define SERVE_BATCH_MAX (64 * 1024 * 1024) /* a batch: up to 64 MiB of NDJSON, read as it comes */
#define SERVE_SMALL_MAX (16 * 1024)        /* any other route: a replay's {"at"} at most */
#define SERVE_HSTS "max-age=31536000"      /* sent on every answer over TLS */
#define SERVE_PATH_PARTS 6

struct server {
    struct sa_nats *n;
    struct sa_keyring *ring; /* swapped on SIGHUP under ring_lock */
    pthread_rwlock_t ring_lock;
    struct tokens *tokens; /* swapped on SIGHUP under tokens_lock */
    pthread_rwlock_t tokens_lock;
    const char *tokens_file;
    /* the tokens file as last read (inode, size, modification time): a request that finds it
     * changed has it read again (serve.c), so `sendat token create` and `revoke` apply at once */
    pthread_mutex_t follow_lock;
    char tokens_seen[96];
    struct MHD_Daemon *d;
    struct serve_guard *guard; /* request deadlines, rates and shares per token (serve_guard.c) */
    int tls;
    int per_token; /* a token's share of requests under way, for its 429 */
};

/* What one client may take (issue 24.4), from the environment (cmd_serve.c). */
struct serve_limits {
    int per_client; /* connections from one address: SENDAT_API_CLIENT_CONNECTIONS */
    int head_s;     /* seconds to a complete request head: SENDAT_API_REQUEST_TIMEOUT */
    int rate;       /* requests a second per token, 0 no limit: SENDAT_API_RATE */
    int per_token;  /* requests one token may have under way: SENDAT_API_TOKEN_CONNECTIONS */
};

/* One request as the routes see it. */
struct request {
    struct server *s;
    const char *method;
    char *parts[SERVE_PATH_PARTS]; /* the path below /v1 split at '/', decoded */
    int n_parts;
    void *conn; /* struct MHD_Connection */
    char *body; /* NUL-terminated */
    size_t body_len;
    enum token_role role;
    char who[TOKEN_NAME_MAX + 1]; /* the token's name, for logs */
    int status;                   /* the answer, set by serve_reply / serve_fail */
    int console;                  /* outside /v1: the console file (serve_console.c), or -1 */
    int retry_after_s;            /* a 429's Retry-After */
    int close;                    /* answer with Connection: close */
    int64_t started_ms;           /* when its head was in, for the log */
    struct serve_batch *batch;    /* POST /v1/batches: lines booked as they arrive */
    json_t *answer;
    char *answer_text; /* or the answer as JSON text already (serve_reply_text) */
    size_t answer_len;
};

/* The answer: status and a JSON document (taken). */
void serve_reply(struct request *r, int status, json_t *doc);
/* The answer: status and a JSON document as text of len bytes (taken, malloc'd), for an answer
 * too big to hold as jansson objects (a batch's); never redacted, so no route a reader may
 * call gives one. */
void serve_reply_text(struct request *r, int status, char *text, size_t len);
/* After a request that held more than a megabyte (bytes), gives glibc's free memory back to the
 * system (malloc_trim): its arenas kept a junk batch's ~90 MiB until a restart. */
void serve_trim_after(size_t bytes);

/* The one error shape: {"error": {"status": S, "message": ..., "field": ...}}; field may be
 * NULL, else the request field at fault. Always returns 0 so routes can `return serve_fail()`. */
int serve_fail(struct request *r, int status, const char *field, const char *fmt, ...)
    SA_PRINTF(4, 5);

/* 1 if the request's role is at least role; else answers 403 and returns 0. */
int serve_need(struct request *r, enum token_role role);

/* The one error shape's inner object for err (its "field" is err->field, the batch key the
 * core named; null if it named none), and the HTTP status for a booking's code. */
json_t *serve_error_object(int status, const struct sa_err *err);
int serve_status_for(enum sa_code rc);

struct dupcheck_gone;
/* A refused booking's error (serve_error_object); one refused because its id's task finished
 * also says which state and when ("state", "at"), and until when the id is remembered
 * ("until", null: for ever). */
json_t *serve_gone_error(int status, const struct sa_err *err, const struct dupcheck_gone *gone);

/* serve_routes.c: rewrites every string "error" and "reason" in doc into what a reader is
 * told, one class ("delivery failed") for every failed connection. */
void serve_redact_for_reader(json_t *doc);

/* serve_batch.c: POST /v1/batches, read line by line as the body arrives (a 64 MiB batch is
 * never held whole). serve_batch_begin once the producer's token is checked (0 after an
 * answer such as 503), serve_batch_feed for each piece of the body, serve_batch (the route)
 * at its end; serve_batch_free (NULL allowed) with the request. */
int serve_batch_begin(struct request *r);
void serve_batch_feed(struct request *r, const char *data, size_t len);
void serve_batch(struct request *r);
void serve_batch_free(struct serve_batch *b);

/* A query parameter of the request, or NULL. */
const char *serve_query(struct request *r, const char *name);

/* The query parameter name as a number in lo..hi into *out (left alone if absent): 1, or 0
 * after a 400 naming the parameter. */
int serve_query_number(struct request *r, const char *name, int64_t lo, int64_t hi, int64_t *out);

/* PEM certificate chain and key, read from SENDAT_API_TLS_CERT and SENDAT_API_TLS_KEY; both
 * NULL for plain HTTP. */
struct serve_tls {
    char *cert, *key;
};

/* Starts listening on addr ("host:port" or ":port"), with TLS when tls holds a certificate
 * (TLS 1.2 at least unless SENDAT_API_TLS_PRIORITIES says otherwise, and HSTS), within lim.
 * Plain HTTP on an address other than loopback is refused (SA_EINVAL) unless
 * SENDAT_API_INSECURE=1. */
enum sa_code serve_start(struct server *s, const char *addr, int threads,
                         const struct serve_tls *tls, const struct serve_limits *lim,
                         struct sa_err *err) SA_MUST_CHECK;
/* The port listened on (after serve_start). */
unsigned serve_port(const struct server *s);
/* Stops listening and waits for requests in progress. */
void serve_stop(struct server *s);
/* serve_tokens.c: reads the tokens file again and swaps it in; on a bad file the old tokens
 * stay. */
enum sa_code serve_reload_tokens(struct server *s, struct sa_err *err) SA_MUST_CHECK;
/* Reads the tokens file again if it changed since it was last read; a file that does not read
 * leaves the old tokens in place (and is tried again once it changes). */
void serve_follow_tokens(struct server *s);

/* serve_routes.c: answers r (method, parts, role checked there). */
void serve_route(struct request *r);
/* The answer with id's history, as a collector returned it (rc, events, err): 200
 * {"id","events"}, 404 or 503. */
void serve_history(struct request *r, const char *id, enum sa_code rc, json_t *events,
                   const struct sa_err *err);
/* The answer to a cancel of id: 200 cancelled, 409 too late (with sent_at, sending_since or
 * finished_at), 404 unknown. */
struct cancel_result;
void serve_cancel_answer(struct request *r, const char *id, const struct cancel_result *res);
/* serve_series.c: GET and DELETE /v1/series/{id}. */
void serve_series(struct request *r);
/* serve_dlq.c: /v1/dead-letters and below. */
void serve_dead_letters(struct request *r);
/* serve_openapi.c: whether r needs no token (GET /v1/openapi.json), and its answer. */
int serve_is_public(const struct request *r);
void serve_openapi(struct request *r);
/* serve_console.c: the console file a GET or HEAD of url asks for (an index), or -1; and its
 * answer (struct MHD_Connection *conn). */
int serve_console_find(const char *method, const char *url);
int serve_console_send(void *conn, int file, int hsts); /* MHD_YES or MHD_NO */
/* serve_stats.c: GET /v1/stats. */
void serve_stats(struct request *r);
/* serve_tasklist.c: GET /v1/tasks?from=&to=[&limit=&cursor=]. */
void serve_task_list(struct request *r);

/* The series routes (serve_series.c): 1 if r was one of them and is answered, else 0. */
int serve_series_route(struct request *r);

/* DELETE /v1/groups/{name} (serve_groups.c): 1 if r was it and is answered, else 0. */
int serve_groups_route(struct request *r);

#endif

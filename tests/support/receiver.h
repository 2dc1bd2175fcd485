/* A real HTTP receiver on 127.0.0.1 (libmicrohttpd) that records every request with its
 * arrival time and can be told how to answer. Every function is thread-safe. */
#ifndef RECEIVER_H
#define RECEIVER_H

#include <stddef.h>
#include <stdint.h>

struct receiver_hit {
    int64_t at_ms; /* when the request's headers arrived (CLOCK_REALTIME, ms since the epoch) */
    char method[8];
    char path[512]; /* the request URI as sent, query string included: "/hook?a=1" */
    char *headers;  /* "Name: value\n" lines */
    char *body;     /* body_len bytes, NUL-terminated */
    size_t body_len;
};

struct receiver;

/* Starts a receiver on a free port of 127.0.0.1; *out owns its threads until receiver_stop.
 * Answers 200 "ok" unless scripted; a body over 1 MiB is answered 413 (the hit keeps the
 * first part). Returns 0, or -1 with *out = NULL. */
int receiver_start(struct receiver **out);
/* Stops the server (cutting hangs short) and frees the receiver and its hits; NULL is fine. */
void receiver_stop(struct receiver *r);
/* "http://127.0.0.1:PORT", valid until receiver_stop. */
const char *receiver_url(struct receiver *r);
/* Requests recorded so far; a request counts once its body arrived, before it is answered. */
size_t receiver_count(struct receiver *r);
/* Recorded requests whose path (with query) equals path exactly. */
size_t receiver_count_path(struct receiver *r, const char *path);
/* Waits until at least n requests arrived on path (any path if NULL); 0 if timeout_ms times
 * the timeout multiplier passed first. */
int receiver_wait(struct receiver *r, const char *path, size_t n, int64_t timeout_ms);
/* Deep copy of hit i (in arrival order) into out; free it with receiver_hit_free. 0, or -1 if
 * there is no hit i. */
int receiver_hit_copy(struct receiver *r, size_t i, struct receiver_hit *out);
void receiver_hit_free(struct receiver_hit *h);
/* Value of header name (case-insensitive) copied into buf, or NULL if the hit has none. */
const char *receiver_hit_header(const struct receiver_hit *h, const char *name, char *buf,
                                size_t cap);
/* The most requests that were open at once (from headers arrived until the answer is queued). */
int receiver_max_concurrent(struct receiver *r);

/* Scripts an answer for path: the next `times` requests get status, with an extra header line
 * such as "Retry-After: 2" (or NULL), then 200 again. The newest scripted answer with uses left
 * wins, so a short override can sit on top of a standing one; times < 0 means "from now on"
 * and replaces every answer scripted before for that path. A script for "/a" also applies to
 * "/a?x=1"; one for "/a?x=1" only to that URI. */
void receiver_respond(struct receiver *r, const char *path, int status, int times,
                      const char *extra_header);
/* Requests to path are answered only after ms (in that connection's thread); the newest call
 * for a path wins and ms = 0 ends hanging. */
void receiver_hang(struct receiver *r, const char *path, int ms);
/* Every answer not hung by receiver_hang is delayed by ms (0: none). */
void receiver_set_delay(struct receiver *r, int ms);

#endif

/* A real HTTP receiver on 127.0.0.1 (libmicrohttpd) that records every request with its
 * arrival time and can be told how to answer. */
#ifndef RECEIVER_H
#define RECEIVER_H

#include <stddef.h>
#include <stdint.h>

struct receiver_hit {
    int64_t at_ms; /* when the request's headers arrived (CLOCK_REALTIME) */
    char method[8];
    char path[512];
    char *headers; /* "Name: value\n" lines */
    char *body;
    size_t body_len;
};

struct receiver;

int receiver_start(struct receiver **out);
void receiver_stop(struct receiver *r);
const char *receiver_url(struct receiver *r); /* http://127.0.0.1:PORT */
size_t receiver_count(struct receiver *r);
size_t receiver_count_path(struct receiver *r, const char *path);
int receiver_hit_copy(struct receiver *r, size_t i, struct receiver_hit *out);
void receiver_hit_free(struct receiver_hit *h);
const char *receiver_hit_header(const struct receiver_hit *h, const char *name, char *buf, size_t cap);
int receiver_max_concurrent(struct receiver *r);

/* Scripts an answer for path: the next `times` requests get status, with an extra header line
 * such as "Retry-After: 2" (or NULL). The newest scripted answer with uses left wins, so a
 * short override can sit on top of a standing one; times < 0 means "from now on" and
 * replaces every answer scripted before for that path. */
void receiver_respond(struct receiver *r, const char *path, int status, int times, const char *extra_header);
/* Requests to path are answered only after ms. */
void receiver_hang(struct receiver *r, const char *path, int ms);
/* Every answer is delayed by ms. */
void receiver_set_delay(struct receiver *r, int ms);

#endif

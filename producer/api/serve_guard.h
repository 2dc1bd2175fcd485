/* What keeps one client of `sendat serve` from taking it from the others (issue 24.4): a
 * deadline for each request's head, enforced from a thread of its own, and a request rate per
 * token, and room for a new client when many addresses hold connections. Per-address
 * connection caps are libmicrohttpd's (serve.c). */
#ifndef SERVE_GUARD_H
#define SERVE_GUARD_H

#include <stdint.h>

#include "err.h"

struct serve_guard;
struct serve_guard_conn; /* one connection's deadline, libmicrohttpd's socket context */

/* Starts the reaper: a connection that has not sent a complete request head head_ms after it
 * opened (or after its previous answer) is shut down, and past keep open connections the
 * oldest one not being served is. rate: requests a second one token may make (0: no limit),
 * with a burst of as many. SA_ENOMEM. */
enum sa_code serve_guard_new(struct serve_guard **out, int64_t head_ms, int rate, size_t keep,
                             struct sa_err *err) SA_MUST_CHECK;
/* Stops the reaper and frees g (NULL allowed); call after the daemon stopped. */
void serve_guard_free(struct serve_guard *g);

/* A connection opened on fd: its deadline starts (NULL if no memory: it then has none). */
struct serve_guard_conn *serve_guard_opened(struct serve_guard *g, int fd);
/* Its request line arrived: a head is under way (a late one is logged as a warning; an idle
 * kept-alive connection is closed quietly). */
void serve_guard_begun(struct serve_guard *g, struct serve_guard_conn *c);
/* Its request head arrived: no deadline while the request is served. */
void serve_guard_head_in(struct serve_guard *g, struct serve_guard_conn *c);
/* Its answer went out: the next request's head has the deadline again. */
void serve_guard_answered(struct serve_guard *g, struct serve_guard_conn *c);
/* It closed (c freed); the fd is still open, so the reaper never shuts down a reused one. */
void serve_guard_closed(struct serve_guard *g, struct serve_guard_conn *c);

/* 1 if the token called name may make a request now (and counts it), else 0 with the seconds
 * to wait in *retry_s. */
int serve_guard_admit(struct serve_guard *g, const char *name, int *retry_s);

#endif

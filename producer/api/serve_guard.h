/* What keeps one client of `sendat serve` from taking it from the others (issue 24.4, 37.6): a
 * deadline for each request's head and body, enforced from a thread of its own, a request rate
 * and a share of connections per token, and room for a new client when many addresses hold
 * connections. Per-address connection caps are libmicrohttpd's (serve.c). */
#ifndef SERVE_GUARD_H
#define SERVE_GUARD_H

#include <stdint.h>

#include "sa_err.h"

struct serve_guard;
struct serve_guard_conn; /* one connection's deadline, libmicrohttpd's socket context */

/* Starts the reaper: a connection that has not sent a complete request head head_ms after it
 * opened (or after its previous answer), or its body in head_ms more plus a second per 16 KiB,
 * is shut down, and past keep open connections the oldest one not being served is. rate:
 * requests a second one token may make (0: no limit), with a burst of as many; share: the
 * requests one token may have under way at once. SA_ENOMEM. */
enum sa_code serve_guard_new(struct serve_guard **out, int64_t head_ms, int rate, int share,
                             size_t keep, struct sa_err *err) SA_MUST_CHECK;
/* Stops the reaper and frees g (NULL allowed); call after the daemon stopped. */
void serve_guard_free(struct serve_guard *g);

/* A connection opened on fd: its deadline starts (NULL if no memory: it then has none). */
struct serve_guard_conn *serve_guard_opened(struct serve_guard *g, int fd);
/* Its request line arrived: a head is under way (a late one is logged as a warning; an idle
 * kept-alive connection is closed quietly). */
void serve_guard_begun(struct serve_guard *g, struct serve_guard_conn *c);
/* Its request head arrived: the body's deadline starts (head_ms from now). */
void serve_guard_head_in(struct serve_guard *g, struct serve_guard_conn *c);
/* len bytes of its body came and took us busy_ms to take in: its deadline moves on by a second
 * per 16 KiB and by busy_ms (our time is not the client's). */
void serve_guard_body(struct serve_guard *g, struct serve_guard_conn *c, size_t len,
                      int64_t busy_ms);
/* Its body is complete: no deadline while the request is served. */
void serve_guard_body_in(struct serve_guard *g, struct serve_guard_conn *c);
/* Its answer went out: its request leaves its token's share, and the next request's head has
 * the deadline again. */
void serve_guard_answered(struct serve_guard *g, struct serve_guard_conn *c);
/* It closed (c freed); the fd is still open, so the reaper never shuts down a reused one. */
void serve_guard_closed(struct serve_guard *g, struct serve_guard_conn *c);

/* 1 if the token called name may have one more request under way (c's, counted in its share
 * until its answer or close), else 0: it holds its share already. */
int serve_guard_enter(struct serve_guard *g, struct serve_guard_conn *c, const char *name);

/* 1 if the token called name may make a request now (and counts it), else 0 with the seconds
 * to wait in *retry_s. */
int serve_guard_admit(struct serve_guard *g, const char *name, int *retry_s);

#endif

/* The end of a process that used nats.c. A callback of the library (a PubAck handler, a
 * reconnect handler) runs on the library's own threads and may still be under way, or queued,
 * when the object it belongs to is destroyed: the memory its closure points at must outlive
 * those threads. Such memory is handed to sa_free_late and freed by sa_nats_shutdown, once
 * nats_CloseAndWait says every thread of the library is gone. */
#ifndef SA_SHUTDOWN_H
#define SA_SHUTDOWN_H

#include <stdint.h>

#include <nats/nats.h>

#include "sa_err.h"

/* Makes sure no asynchronous-publish handler of js runs any more, so that what its closure
 * points at may be freed now: the publishes still waiting for their PubAck are taken out of
 * nats.c's map (their messages destroyed; a PubAck that comes later finds nothing and calls
 * nothing), then a handler already under way is waited for, up to wait_ms. SA_OK once none
 * can run; SA_ERETRY if one was still running: then the memory must go to sa_free_late.
 * published: whether a publish on js ever succeeded (nats.c 3.4 crashes taking the pending
 * list of a context that never published). */
enum sa_code sa_js_quiesce(jsCtx *js, int published, int64_t wait_ms) SA_MUST_CHECK;

/* How long a PubAck handler under way is waited for: it only takes a lock and a few lists. */
#define SA_QUIESCE_MS 5000

/* Calls fn(p) in sa_nats_shutdown, after nats.c's threads are gone (p NULL: nothing). */
void sa_free_late(void (*fn)(void *), void *p);

/* nats_CloseAndWait(timeout_ms), then the calls sa_free_late put off, newest first. If the
 * library's threads did not end in time, the memory is left to the exit instead: a callback
 * may still reach it. */
void sa_nats_shutdown(int64_t timeout_ms);

#endif

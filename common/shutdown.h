/* The end of a process that used nats.c. A callback of the library (a PubAck handler, a
 * reconnect handler) runs on the library's own threads and may still be under way, or queued,
 * when the object it belongs to is destroyed: the memory its closure points at must outlive
 * those threads. Such memory is handed to sa_free_late and freed by sa_nats_shutdown, once
 * nats_CloseAndWait says every thread of the library is gone. */
#ifndef SA_SHUTDOWN_H
#define SA_SHUTDOWN_H

#include <stdint.h>

/* Calls fn(p) in sa_nats_shutdown, after nats.c's threads are gone (p NULL: nothing). */
void sa_free_late(void (*fn)(void *), void *p);

/* nats_CloseAndWait(timeout_ms), then the calls sa_free_late put off, newest first. If the
 * library's threads did not end in time, the memory is left to the exit instead: a callback
 * may still reach it. */
void sa_nats_shutdown(int64_t timeout_ms);

#endif

/* One line per event to stderr: level, UTC time and key=value pairs. Only the binaries call
 * sa_log; code in common/ returns errors instead. */
#ifndef SA_LOG_H
#define SA_LOG_H

#include "sa_err.h"

enum sa_log_level { SA_LOG_DEBUG = 0, SA_LOG_INFO, SA_LOG_WARN, SA_LOG_ERROR };

/* Reads SENDAT_LOG_LEVEL (debug|info|warn|error, default info) and SENDAT_LOG_FORMAT
 * (logfmt|json, default logfmt). Call once at start. */
void sa_log_init(const char *prog);

/* fmt is a list of key=value pairs ("task=%s attempt=%d"); msg is the event name. */
void sa_log(enum sa_log_level level, const char *event, const char *fmt, ...) SA_PRINTF(3, 4);

/* A thread that logs a line per task (the sending loop) may hold its lines and write them
 * together at sa_log_flush: on a burst, a write(2) per "sent" line cost about 2 % of a
 * consumer's CPU. Held lines are written in pieces of at most PIPE_BUF bytes that end at a
 * line's end, so they stay whole on a pipe too, and in the order the thread logged them
 * (another thread's lines may come between). A warning or an error is written at once, after
 * what is held. The holder flushes before each of its waits; lines still held when the
 * process is killed are lost. sa_log_hold(0) flushes. */
void sa_log_hold(int on);
void sa_log_flush(void);

#endif

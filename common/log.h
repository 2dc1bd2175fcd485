/* One line per event to stderr: level, UTC time and key=value pairs. Only the binaries call
 * sa_log; code in common/ returns errors instead. */
#ifndef SA_LOG_H
#define SA_LOG_H

#include "err.h"

enum sa_log_level { SA_LOG_DEBUG = 0, SA_LOG_INFO, SA_LOG_WARN, SA_LOG_ERROR };

/* Reads SENDAT_LOG_LEVEL (debug|info|warn|error, default info) and SENDAT_LOG_FORMAT
 * (logfmt|json, default logfmt). Call once at start. */
void sa_log_init(const char *prog);

/* fmt is a list of key=value pairs ("task=%s attempt=%d"); msg is the event name. */
void sa_log(enum sa_log_level level, const char *event, const char *fmt, ...) SA_PRINTF(3, 4);

/* A thread that logs a line per task (the sending loop) may hold its lines and write them
 * together at sa_log_flush, one write(2) for many: on a burst, a write per "sent" line cost
 * about 2 % of a consumer's CPU. Lines are still whole and in order, and a warning or an error
 * is written at once with whatever is held before it. Held lines are lost if the process
 * dies before the flush: the holder flushes before every wait. sa_log_hold(0) flushes. */
void sa_log_hold(int on);
void sa_log_flush(void);

#endif

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

#endif

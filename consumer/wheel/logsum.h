/* Log lines of one cause, summarised (issue 24: 100,000 junk messages wrote half a million
 * `unknown_key` lines, 100-160 MB, in 30 s). The first LOGSUM_WHOLE events of an interval are
 * logged whole, the others only counted, and an interval that had more ends with one line
 * that says how many. Not locked: one per thread that logs the cause. */
#ifndef LOGSUM_H
#define LOGSUM_H

#include <stdint.h>

#define LOGSUM_EVERY_MS 10000
#define LOGSUM_WHOLE 5

struct logsum {
    const char *event; /* the cause's event name; the summary is "<event>_summary" */
    int64_t from_ms;   /* the interval's start (0: none yet) */
    long seen, whole;  /* events in the interval, and how many of them were logged whole */
};

/* Counts one event at now: 1 if its line is to be logged whole. Ends the interval first (with
 * its summary) if it is over. */
int logsum_take(struct logsum *s, int64_t now_ms);

/* Ends the interval if it is over: one line `event=<event>_summary count=N logged=K` when some
 * of its events were not logged whole. Call it now and then, so a burst's summary does not
 * wait for the next event. */
void logsum_tick(struct logsum *s, int64_t now_ms);

#endif

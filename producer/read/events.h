/* A task's or series' history as a list of events for `sendat status`: each event carries the
 * time it happened (never the time of the query), the list is printed in time order after its
 * "due" line, and text and --json are two renderings of the same list. */
#ifndef EVENTS_H
#define EVENTS_H

#include <stdint.h>

#include <jansson.h>

/* Appends {"at", "at_ms", "event", fields...} to events (fields is taken; NULL for none). */
void events_add(json_t *events, int64_t at_ms, const char *name, json_t *fields);

/* Sorts events by time, keeping the order of equal times and any "due" event first. */
void events_sort(json_t *events);

/* The latest time among events, 0 for none. */
int64_t events_latest(const json_t *events);

#endif

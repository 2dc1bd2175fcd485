/* Events of `sendat status` (see events.h): one shape for tasks and series, sorted by time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "timeparse.h"

void
events_add(json_t *events, int64_t at_ms, const char *name, json_t *fields)
{
    char text[40];

    if (!fields)
        fields = json_object();
    sa_time_format(text, sizeof(text), at_ms);
    json_object_set_new(fields, "at", json_string(text));
    json_object_set_new(fields, "at_ms", json_integer(at_ms));
    json_object_set_new(fields, "event", json_string(name));
    json_array_append_new(events, fields);
}

static int64_t
at_of(const json_t *e)
{
    return json_integer_value(json_object_get(e, "at_ms"));
}

static int
is_due(const json_t *e)
{
    return !strcmp(json_string_value(json_object_get(e, "event")), "due");
}

void
events_sort(json_t *events)
{
    size_t n = json_array_size(events);

    for (size_t i = 1; i < n; i++) { /* insertion sort: stable, and lists are short */
        json_t *e = json_incref(json_array_get(events, i));
        size_t j = i;
        while (j > 0 && !is_due(json_array_get(events, j - 1)) &&
               (is_due(e) || at_of(json_array_get(events, j - 1)) > at_of(e))) {
            json_array_set(events, j, json_array_get(events, j - 1));
            j--;
        }
        json_array_set_new(events, j, e);
    }
}

int64_t
events_latest(const json_t *events)
{
    size_t i;
    json_t *e;
    int64_t latest = 0;

    json_array_foreach(events, i, e)
    {
        if (!is_due(e) && at_of(e) > latest)
            latest = at_of(e);
    }
    return latest;
}

/* Many webhooks booked with one `sendat schedule --batch`, each due at its own time: one
 * process however many tasks, so a test's lead need not cover a process per booking. */
#ifndef BOOKSPREAD_H
#define BOOKSPREAD_H

#include <stdint.h>

#include "fixture.h"

/* Books n webhooks to the receiver paths "<prefix>/0" .. "<prefix>/<n-1>", task k due at
 * start_ms + k * span_ms / n, writing the id of task k into ids[k]; returns the exit code of
 * `sendat schedule --batch` (0: every line booked). */
int fx_schedule_spread(struct fx *f, int64_t start_ms, int64_t span_ms, const char *prefix, int n,
                       char (*ids)[80]);

#endif

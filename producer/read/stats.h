/* What `sendat stats` and `GET /v1/stats` report, gathered as one JSON document. */
#ifndef STATS_H
#define STATS_H

#include <jansson.h>

#include "natsconn.h"

/* {"tasks","bytes","levels":[{"level":"window"|"slot","start","tasks"}] oldest first,
 *  "pulling":[{"durable","pending","unacked","waiting"}], "dead_letters",
 *  "members":[{"name","instance"}] (the fleet members alive), "sweep":{...} or null}.
 * The backlog (tasks, levels) must be read; the rest is left out (or null) when it cannot. */
enum sa_code stats_collect(struct sa_nats *n, json_t **out, struct sa_err *err) SA_MUST_CHECK;

#endif

/* What the fleet is doing and what its sweep found, the parts of stats_collect's document
 * (stats.h) read from the level durables, the dead-letter stream, the members bucket and the
 * meta records. */
#ifndef STATS_FLEET_H
#define STATS_FLEET_H

#include <jansson.h>

#include "natsconn.h"

/* A member whose last beat is older than this is silent: dead or hung (a member beats every
 * second). */
#define MEMBER_SILENT_MS 3000

/* Adds "idle_past_durables", "pulling", "dead_letters" (null if unread), "members", "mail"
 * (who of them can send mail, stats_fleet.c) and "delivery" (the fleet's last hour from the
 * members' beats) to doc, in that order. */
void stats_fleet_add(struct sa_nats *n, json_t *doc);
/* The sweep of one shard as it is (null: never swept); of several, what they found and
 * looked at in all, the oldest last run, and each swept shard's record under "shards" (null if
 * none was swept; while a shard was never swept there is no last_run). A new reference. */
json_t *stats_fleet_sweep(struct sa_nats *n);

#endif

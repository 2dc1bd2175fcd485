/* Where `sendat init` puts each shard on a cluster: shard k's task stream and claims bucket
 * on the k-th server (by name), so the shards' writes go through different nodes. */
#ifndef PLACEMENT_H
#define PLACEMENT_H

#include <nats/nats.h>

#include "sa_err.h"

/* Replicas a new shard's stream and bucket are made with so that placement_settle can choose
 * their server: on a cluster, 3 or replicas if more; 0 on one server (nothing to choose). */
int placement_create_replicas(jsCtx *js, int replicas);

/* Stream (just made with placement_create_replicas) gets the k-th of its servers, by name and
 * modulo their count, as its leader, then is scaled down to replicas (the server keeps the
 * leader when it drops peers). SA_OK also on one server (nothing to place); SA_ENATS when the
 * cluster did not follow within its bounds (the stream is usable, only not placed). */
enum sa_code placement_settle(natsConnection *nc, jsCtx *js, const char *stream, int k,
                              int replicas, struct sa_err *err) SA_MUST_CHECK;

#endif

/* The fleet's members: who is alive, how many share a slot, and who died holding tasks.
 * Every member puts its name -> instance id into the members bucket each second and answers
 * on its own liveness subject, sendat.alive.<instance>. Only that answer decides liveness: any
 * client allowed to write the bucket can write anything there, so an entry only names an
 * instance to probe. A member whose process is gone (kill -9, a crash, a stopped container)
 * gets "no responders" there from the server; once that held for three beats with no answer
 * between (a member that lost its connection for a moment is back well before), it is dead:
 * its levels are delivered again (harmless if it lived: every copy is settled by the claim
 * ledger) and its "sending" claims are taken over. A process answers only while its puller
 * beats (or it drains after SIGTERM), so one that does not answer at all for 20 s is hung and
 * dead too (liveness.c judges). Used by the puller thread (beats, probes) and the main
 * thread (is a claim's holder alive). */
#ifndef MEMBERS_H
#define MEMBERS_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"
#include "natsconn.h"

#define MEMBERS_MAX 256
#define MEMBERS_INSTANCE_MAX 24
#define MEMBERS_FACTS_MAX 1600 /* a beat's facts, the hour's counts included */

struct members;

/* Binds the bucket (none: a fleet of one, with a warning) and starts answering probes. */
enum sa_code members_start(struct members **out, struct sa_nats *n, const char *name,
                           const char *instance, struct sa_err *err) SA_MUST_CHECK;

/* Puller thread: says "alive" (the instance id, then a space and facts, a small JSON object
 * for `sendat stats` and the console, may follow), re-reads the member list now and then,
 * and probes the others; those found dead wait for members_take_dead. */
void members_beat(struct members *m, int64_t now_ms, const char *facts);

/* The number of members sharing slots (at least 1). */
long members_fleet_size(const struct members *m);

/* Takes one instance found dead into out; 0 when none is left. Each is reported once. */
int members_take_dead(struct members *m, char *out, size_t n);

/* 1 if this member is the one to hand back what the dead instance held in shard (a create in
 * the bucket, "rescue.<instance>.<shard>": exactly one member wins each shard). */
int members_won_rescue(struct members *m, const char *dead_instance, int shard);

/* Is the holder of a claim (its consumer name and instance) alive? Asks the instance itself:
 * 0 only once it is dead as above, 1 while it answers or it is too soon to tell (ask again
 * later, never guess). The bucket is read only for a claim that names no instance. */
int members_holder_alive(struct members *m, const char *name, const char *instance);

/* The puller stopped beating for good (SIGTERM): sends in flight are still finishing, so the
 * probes are answered until members_leave, however long the drain takes. */
void members_drain(struct members *m);

/* Leaves the bucket (the others share without us) and stops answering. */
void members_leave(struct members *m);
/* Stops answering if still answering, waits (at most 5 s) until no probe answer runs and the
 * server sends no more probes, then frees m (after that wait in vain m is left allocated). */
void members_free(struct members *m);

#endif

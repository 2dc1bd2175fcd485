/* The deployment test_roles*.c run their tests against (roles.c): a 3-node cluster from the very
 * files in deploy/nats, `sendat init --replicas 3` as admin, a receiver, and the credentials of
 * the three roles (admin, producer, consumer). */
#ifndef ROLES_H
#define ROLES_H

#include "fixture.h"

extern struct fx F; /* the deployment, shared by every test of the binary */

/* Starts the deployment on the first call, failing the test if any step fails (and every later
 * call after such a failure); returns at once once it is up. */
void roles_start_once(void);
/* The password of user (admin, producer or consumer); fails the test for any other user. */
const char *roles_password(const char *user);
/* sendat (fx_sendat) runs with our environment: from now on as this user. */
void roles_act_as(const char *user);
/* Starts consumer i with the credentials of user (in its environment, not ours). */
void roles_consumer_as(int i, const char *user);
/* Connects to the cluster as user, with a JetStream context whose requests give up after 2 s
 * times the timeout multiplier (a refused one is never answered). Fails the test if either
 * cannot be had. */
void roles_connect_js(const char *user, natsConnection **nc, jsCtx **js);
/* wait_until condition: consumer (int)(intptr_t)arg answers /readyz with 200. */
int roles_consumer_ready(void *arg);
#define ROLES_N_TASKS 12
/* The fleet up (two consumers with the consumer user's credentials, ready) and ROLES_N_TASKS
 * booked as the producer, path "<prefix>/k" due in_ms + k * step_ms from then, their ids in
 * ids. */
void roles_fleet_books(const char *prefix, int in_ms, int step_ms, char (*ids)[80]);
/* Its two halves: the fleet up (consumers 0 and 1, ready), and the bookings alone. */
void roles_fleet_up(void);
void roles_books(const char *prefix, int in_ms, int step_ms, char (*ids)[80]);
/* The group teardown for fx_run: stops what roles_start_once started. Returns 0. */
int roles_stop(void **state);

#endif

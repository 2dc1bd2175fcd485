/* The held task (struct held), passed between the wheel, sending and the ledger; the wheel
 * holds and frees it (wheel.h, held_free). */
#ifndef HELD_H
#define HELD_H

#include <stdint.h>

#include <nats/nats.h>

#include "claim.h"
#include "task.h"

struct wheel;

/* A fetched, unacked task. Whoever acks, naks or terms msg destroys it (and frees the held). */
struct held {
    natsMsg *msg;
    struct sa_task *task;
    int64_t due_ms;     /* when the task is due: lateness is measured from here */
    int64_t fire_ms;    /* when the wheel hands it out: due_ms, later if a limit deferred it */
    int deferred;       /* a limit deferred it: handed out at fire_ms, never claimed ahead */
    int64_t touched_ms; /* fetched or last marked in progress */
    int64_t scheduled_ms;
    int64_t moved_ms;
    int moves;
    uint64_t seq;                         /* the message's stream sequence */
    char write_id[SA_CLAIM_WRITE_ID_LEN]; /* every "sending" write for it carries this one */
    int64_t claim_failed_ms; /* the claims bucket first failed to answer for it (0: never) */
    int claim_tries;         /* claims tried again since */
    int claiming;            /* counted by wheel_claiming: 1, or 2 if it could not be counted */
    struct wheel *owner;     /* set by wheel_post; held_free forgets seq there */
    struct held *next;       /* inbox link */
};

#endif

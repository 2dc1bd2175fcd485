/* Messages that do not open, kept out of the levels' max-ack-pending (issue 24). A level's
 * durable delivers no more than max-ack-pending unacked messages, and a message handed back
 * with a delay stays unacked: 100,000 junk messages sealed under made-up key ids, handed round
 * for an hour, held every place of the current window and its valid tasks waited. Now a
 * message that does not open leaves its level at once: sealed under a key id this member does
 * not hold (a rotation may be under way), or past this member's dead-letter budget, it is
 * re-published into the park (layout.h) and acked; otherwise it is dead-lettered. The park's
 * durable has a max-ack-pending no junk fills and is pulled by every member like a level: a parked
 * task that opens is held or moved down as if it came from its window; one that still does not is
 * handed round again, up to a minute apart, until SENDAT_UNKNOWN_KEY_WAIT after it was parked,
 * and then dead-lettered within the budget (beyond it, it waits in the park: nothing is
 * dropped). A member that loads a new key has the park's durable deliver everything again at
 * once. Invariants 1 and 2: the parked copy has a Msg-Id from the original's sequence and the
 * original is acked after its PubAck (mover.c). Puller thread only. */
#ifndef PARK_H
#define PARK_H

#include "consumer.h"
#include "logsum.h"

/* Dead letters of messages that did not open, per member and interval: past this they wait
 * in the park, so junk cannot flood the dead-letter stream nor hold up the puller with a
 * publish each. */
#define PARK_DEAD_BUDGET 100
/* The park durable's MaxAckPending: no bound in practice. Not -1: nats.c 3.4 sends the field
 * only when it is above 0, and the server then applies its default of 1,000, which 1,000 junk
 * messages filled (it_keyrot test_rotation_amid_junk: the tasks behind them never came). */
#define PARK_MAX_ACK_PENDING 1000000000
#define PARK_DEAD_EVERY_MS 10000
/* The longest delay between two deliveries of a parked email task this member cannot send:
 * shorter than KEYWAIT_MAX_MS, so a member with SMTP settings gets it soon whoever pulls it. */
#define PARK_MAIL_MAX_MS 10000
/* The window and slot of a shard's park among the puller's targets (pull.h): pulled for as
 * long as the member runs, never dropped. */
#define PULL_PARK (-1)

struct park {
    struct consumer *c;
    int64_t reload_from_ms; /* a task with an unknown key id may ask for a reload from then */
    int64_t dead_from_ms;   /* the budget's interval */
    int dead_used;
    struct logsum unknown, parked, dead, deferred, no_smtp;
};

void park_init(struct park *k, struct consumer *c);

/* A message of a level that did not open (reason says why; key_unknown: its key id is not
 * loaded here). Takes msg: parked, dead-lettered or handed back. id may be NULL (the subject
 * names none). */
void park_unopened(struct park *k, natsMsg *msg, int shard, const char *id, int key_unknown,
                   const char *reason);

/* A parked message that did not open again. Takes msg: handed round again, dead-lettered, or
 * left in the park for the next interval's budget. */
void park_again(struct park *k, natsMsg *msg, const char *id, int key_unknown, const char *reason);

/* An email task this member cannot send (no SENDAT_SMTP_URL; parked: it came from the park).
 * Takes msg: moved into the park, or handed round again at most PARK_MAIL_MAX_MS later, for
 * as long as it takes a member with SMTP settings to pull it. Never dead-lettered: without
 * any such member the task waits, and `sendat stats` says so (the beats' "mail" fact). */
void park_unsendable(struct park *k, natsMsg *msg, int shard, const char *id, int parked);

/* Writes the summaries of intervals that are over. */
void park_tick(struct park *k, int64_t now_ms);

#endif

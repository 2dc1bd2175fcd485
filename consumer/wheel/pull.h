/* The puller thread: pulls every level that is due now (current window, active slots, and
 * older windows that still hold tasks), moves not-yet-due tasks down a level and hands the
 * rest to the wheel. Every level's tasks come through one inbox, answers to pull requests
 * left open on the server (pull_asks.c). */
#ifndef PULL_H
#define PULL_H

#include <pthread.h>

#include "consumer.h"
#include "park.h"
#include "pull_recent.h"

struct prepare;

#define PULL_MAX_TARGETS 1024
#define PULL_INBOX_MAX 64
#define PULL_QUIET_WINDOWS 8
#define SHARE_AGAIN_MS 250 /* a member whose share is in reads the level's count again */

/* One shard this member serves (all, or those in SENDAT_SHARDS): its stream and what the
 * puller knows of it. */
struct served {
    int shard;
    char stream[32];
    int64_t done_until_ms;             /* levels ending before this were seen drained */
    int64_t next_slot_ms;              /* the first slot not yet taken up */
    int64_t quiet[PULL_QUIET_WINDOWS]; /* windows over and seen empty: not looked at again */
    int quiet_next;
    int64_t rescue_until_ms; /* a dead member's levels taken up before this are handed back too */
    int rescue_reset;        /* and may be reset: the dead one is gone from the server (pull.c) */
};

/* One level being pulled: a window's window level (slot 0) or one slot of one shard, through
 * a durable pull consumer shared by the whole fleet. */
struct target {
    struct served *sv;
    int64_t window;
    int64_t slot;
    int64_t start_ms; /* when the level starts: its window, or its slot */
    int64_t end_ms;   /* once past and drained fleet-wide, the target is dropped */
    char durable[32];
    int empty;              /* a slot nobody marked: no durable, nothing asked (pull_prepare.h) */
    long prefetch_cap;      /* before the level starts: this member's share of it (-1: no cap; 0
                             * until its first task says) */
    long fetched;           /* tasks it brought us */
    uint32_t req;           /* the request open on the server (0: none) */
    long credit;            /* messages it may still bring */
    int64_t expires_ms;     /* when the server closes it by itself */
    int64_t heard_ms;       /* its last message or heartbeat */
    int64_t retry_ms;       /* after a refusal: no new request before this */
    int64_t share_again_ms; /* its share, once taken, is read again from this time */
    int64_t share_every_ms; /* and then after this long (pull_asks.c) */
};

struct puller {
    struct consumer *c;
    struct served sv[SA_SHARDS_MAX];
    int nsv;
    struct target t[PULL_MAX_TARGETS];
    int n;
    int64_t next_refresh_ms;
    int64_t next_probe_ms, next_backlog_ms;
    int64_t next_member_ms;
    struct members *members; /* fleet membership: shares of a slot, members found dead */
    struct prepare *prepare; /* the threads that make level durables ahead of their time */
    natsSubscription *inbox; /* every level's answers: <inbox_prefix>.<request> */
    char inbox_prefix[PULL_INBOX_MAX];
    uint32_t next_req;
    long reconnects;       /* the connection's count when the requests were last made */
    struct recent recent;  /* the last hour minute by minute, for the beats */
    struct park park;      /* messages that do not open (park.h) */
    int64_t level_task_ms; /* the last task a level (not the park) brought: pull_asks.c */
    int no_reset;          /* a consumer reset failed once: levels are made anew (pull_targets.c) */
    pthread_t thread;
};

/* Starts the thread, serving the shards in c->served. */
enum sa_code pull_start(struct puller *p, struct consumer *c, struct sa_err *err) SA_MUST_CHECK;

/* Joins the thread once c->stopping is set. */
void pull_join(struct puller *p);

/* Leaves the members bucket and forgets the levels (the durables stay for the fleet). */
void pull_close(struct puller *p);

/* pull_targets.c: keeping the set of levels to pull; targets_probe, the catch-up of older windows
 * and past slots from the fleet's cursor, is in pull_probe.c. */
int targets_find(const struct puller *p, const struct served *sv, int64_t window, int64_t slot);
enum sa_code targets_add(struct puller *p, struct served *sv, int64_t window, int64_t slot,
                         struct sa_err *err) SA_MUST_CHECK;
void targets_refresh(struct puller *p, int64_t now_ms);
void targets_probe(struct puller *p, int64_t now_ms);
void targets_reap(struct puller *p, int64_t now_ms);
/* Whether t is pulled: a slot found empty is once its durable is made (pull_prepare.h). */
int targets_wake(struct puller *p, struct target *t, int64_t now);
void targets_close(struct puller *p);
/* A member died: every level of shard sv with unacked tasks is reset to its ack floor (a server
 * with consumer reset, sv->rescue_reset) or made anew (same durable, same settings), so the
 * server delivers them again now instead of after the ack wait. Live members'
 * held copies come back too and are settled by their holders. Returns how many levels. */
int targets_redeliver(struct puller *p, const struct served *sv);
/* The same for the shard's park, once a new key is loaded: 1 if it was handed out again. */
int targets_redeliver_park(struct puller *p, const struct served *sv);
/* This member's share of level t before it starts (-1: none), see pull_targets.c. */
long targets_share(struct puller *p, const struct target *t);
/* pull_asks.c: the pull requests open on the server. asks_send asks every level without an open
 * request that the limits allow and returns how long the puller may wait for a message;
 * asks_answer counts a task against its level and returns 1, or takes in a status (destroys
 * it) and returns 0; asks_forget drops every request (the connection was lost). */
int64_t asks_send(struct puller *p, int64_t now_ms);
int asks_answer(struct puller *p, natsMsg *msg, int64_t now_ms);
void asks_forget(struct puller *p);

#endif

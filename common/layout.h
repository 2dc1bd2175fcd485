/* The timing wheel built from subjects: window and slot math, subject and durable names,
 * deterministic Msg-Ids and task ids. These are cluster-wide facts: the numbers in
 * struct sa_layout are written once by `sendat init` and read by every process. */
#ifndef SA_LAYOUT_H
#define SA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"

#define SA_ID_MAX 64       /* longest task id, excluding the NUL */
#define SA_SUBJECT_MAX 160 /* longest subject this layout produces, including the NUL */
#define SA_TASKS_STREAM "SENDAT_TASKS"
#define SA_DLQ_STREAM "SENDAT_DLQ"
#define SA_CLAIMS_BUCKET "sendat_claims"
#define SA_CANCEL_BUCKET "sendat_cancel"
#define SA_PAUSE_PREFIX "pause." /* cancel-map key of a paused series: "pause.<series id>" */
#define SA_META_BUCKET "sendat_meta"
#define SA_LEASES_BUCKET "sendat_leases"
#define SA_SERIES_BUCKET "sendat_series"
/* "<group>.<task id>": the due time, for cancel --group */
#define SA_GROUPS_BUCKET "sendat_groups"
#define SA_MEMBERS_BUCKET "sendat_members"
/* keys of the members bucket that are locks of the fleet, not members (consumer/ledger/members.c)
 */
#define SA_MEMBERS_RESCUE_PREFIX "rescue."
/* Shards (`sendat init --shards N`): shard 0 is SA_TASKS_STREAM with sendat.task.<W>.<w|S>.<id>
 * and the bucket SA_CLAIMS_BUCKET, shard k > 0 is SENDAT_TASKS_<k> with
 * sendat.shard.<k>.<W>.<w|S>.<id> and sendat_claims_<k>. A task's shard follows from its id. */
#define SA_SHARDS_MAX 64
#define SA_DLQ_SUBJECTS "sendat.dlq.*"

struct sa_layout {
    int64_t window_ms;   /* coarse level: producers publish here (default 10 min) */
    int64_t slot_ms;     /* fine level: consumers move tasks down here (default 10 s) */
    int64_t ack_wait_ms; /* JetStream AckWait of every task consumer (default 30 s) */
    int64_t lead_ms;     /* how long before its start a level is pulled (default 2 s) */
    int shards;          /* task streams (and claims buckets), 1..SA_SHARDS_MAX (default 1) */
};

/* Where a task message sits, parsed from its subject. slot is 0 at the window level. */
struct sa_place {
    int shard;
    int64_t window;
    int64_t slot;
    char id[SA_ID_MAX + 1];
};

void sa_layout_defaults(struct sa_layout *l);

/* Whether two layouts have the same numbers. */
int sa_layout_equal(const struct sa_layout *a, const struct sa_layout *b);

/* Checks that the numbers fit together (slot divides window, ack wait covers a slot). */
enum sa_code sa_layout_check(const struct sa_layout *l, struct sa_err *err) SA_MUST_CHECK;

/* "window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000" and back; with more than
 * one shard the record starts with "shards=N " (a record without it is one shard). */
int sa_layout_format(char *out, size_t cap, const struct sa_layout *l);
enum sa_code sa_layout_parse(struct sa_layout *l, const char *text,
                             struct sa_err *err) SA_MUST_CHECK;

int64_t sa_layout_window(const struct sa_layout *l, int64_t t_ms); /* start of t's window */
int64_t sa_layout_slot(const struct sa_layout *l, int64_t t_ms);   /* start of t's slot */

/* The shard of a task: FNV-1a of its id modulo l->shards. */
int sa_layout_shard_of(const struct sa_layout *l, const char *id);

/* A shard's task stream, the subjects it stores and its claims bucket. Each of these and the
 * subject functions below return the length, or -1 if cap is short. */
int sa_layout_stream(char *out, size_t cap, int shard);
int sa_layout_stream_subjects(char *out, size_t cap, int shard);
int sa_layout_claims_bucket(char *out, size_t cap, int shard);

/* A meta bucket key kept per shard: base itself for shard 0, "<base>.<k>" for shard k. */
int sa_layout_meta_key(char *out, size_t cap, const char *base, int shard);

/* <prefix>.<W>.w.<id> and <prefix>.<W>.<S>.<id>, the prefix sendat.task for shard 0 and
 * sendat.shard.<k> for shard k. */
int sa_layout_window_subject(char *out, size_t cap, int shard, int64_t window, const char *id);
int sa_layout_slot_subject(char *out, size_t cap, int shard, int64_t window, int64_t slot,
                           const char *id);

/* Filters of one shard: one level of one window (slot 0) or one slot; everything in a window;
 * one id anywhere. */
int sa_layout_level_filter(char *out, size_t cap, int shard, int64_t window, int64_t slot);
int sa_layout_window_all_filter(char *out, size_t cap, int shard, int64_t window);
int sa_layout_id_filter(char *out, size_t cap, int shard, const char *id);

/* Durable consumer name of a level: w<W> for the window level, s<S> for a slot. */
int sa_layout_durable(char *out, size_t cap, int64_t window, int64_t slot);

/* Parses a task subject of any shard; SA_EINVAL for anything that is not
 * sendat.task.<W>.(w|<S>).<id> or sendat.shard.<k>.<W>.(w|<S>).<id> with k in 1..SA_SHARDS_MAX-1.
 */
enum sa_code sa_layout_parse_subject(struct sa_place *p, const char *subject,
                                     struct sa_err *err) SA_MUST_CHECK;

/* Which level pulls subject: its window and slot (0: the window level) if both are written as
 * this layout writes them (aligned, no leading zero, the slot inside its window, a shard of
 * this layout). Otherwise
 * SA_EINVAL, and err says what is wrong without quoting the subject: no durable's filter
 * matches such a subject, so no consumer ever reads it. The id is not looked at. */
enum sa_code sa_layout_level_of(const struct sa_layout *l, const char *subject, int64_t *window,
                                int64_t *slot, struct sa_err *err) SA_MUST_CHECK;

/* A task id is 1..64 of [A-Za-z0-9_-]: one subject token, one KV key. */
int sa_layout_id_valid(const char *id);

/* New id "<due_ms>-<10 random base32 chars>"; the due time in it lets cancel and status
 * compute the subjects directly. */
void sa_layout_id_new(char *out, size_t cap, int64_t due_ms);

/* The due time a generated id carries; 0 if the id has none. */
int64_t sa_layout_id_due(const char *id);

/* The id of a series' occurrence: "<occ_ms>-<series>" (so it carries its due time), and the
 * occurrence time back from such an id (0 if it has none). A series id is 1-50 characters. */
#define SA_SERIES_ID_MAX 50
void sa_layout_series_new(char *out, size_t cap); /* 10 random characters */
int sa_layout_occurrence_id(char *out, size_t cap, const char *series, int64_t occ_ms);
int64_t sa_layout_occurrence_ms(const char *id);

/* Msg-Id of a move down to a slot, of a retry, of a dead letter, of a replay. Each is derived
 * from the stream sequence of the message it succeeds: the same on every redelivery of that
 * message (so a crash between publish and ack cannot fork a task), different for every new
 * message of the same task (so a replayed task is never mistaken for a duplicate). */
int sa_layout_move_msgid(char *out, size_t cap, const char *id, uint64_t seq);
int sa_layout_retry_msgid(char *out, size_t cap, const char *id, uint64_t seq);
int sa_layout_dead_msgid(char *out, size_t cap, const char *id, uint64_t seq);
int sa_layout_replay_msgid(char *out, size_t cap, const char *id, uint64_t seq);
/* Msg-Id of a task parked because it does not open here (see sa_layout_park_subject). */
int sa_layout_park_msgid(char *out, size_t cap, const char *id, uint64_t seq);

/* The park: where a consumer puts a message sealed under a key id it does not hold, so that it
 * stops taking one of its level's max-ack-pending places (issue 24). "<prefix>.park.k.<id>"
 * in the task stream (three tokens like a level, so the stream's subjects and the NATS
 * permissions take it; no level's filter matches it); its one durable, SA_PARK_DURABLE, is
 * pulled by every member and hands each message round again until its key comes. */
#define SA_PARK_DURABLE "park"
int sa_layout_park_subject(char *out, size_t cap, int shard, const char *id);
int sa_layout_park_filter(char *out, size_t cap, int shard);
/* 1 if subject is a park subject (any shard prefix); its id goes to id (SA_ID_MAX + 1 bytes)
 * when id is not NULL. */
int sa_layout_is_park(const char *subject, char *id);

/* Where the producer books a task due at due_ms, seen at now_ms: the start of its slot when
 * that slot starts at least lead_ms + slot_ms after now_ms (no member pulls it yet, and none
 * has dropped it), so the task is never moved; else 0: its window level (a window's tasks due
 * soon are held straight from it). */
int64_t sa_layout_book_slot(const struct sa_layout *l, int64_t due_ms, int64_t now_ms);

/* v in decimal into out, NUL-terminated, as "%" PRId64 writes it but without printf (subjects
 * and headers are written once per task); returns its length. */
#define SA_I64_TEXT 24
size_t sa_layout_i64(char out[SA_I64_TEXT], int64_t v);

#endif

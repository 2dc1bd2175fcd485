/* The batch run both doors drive (`sendat schedule --batch`, `POST /v1/batches`): each built
 * task is fitted to its group's TTL, a series registered, sealed and held; the held lines go
 * out BOOKER_RUN at a time with their PubAcks outstanding in bulk, those that name their own
 * id checked at once first (dupcheck_gone_many); duplicate PubAcks are read back and compared
 * (dupcheck_verify_sealed). What becomes of each line is told to the door's report function;
 * the door reads the input and renders the results. */
#ifndef BOOKER_H
#define BOOKER_H

#include <pthread.h>

#include "dupcheck.h"
#include "keyring.h"
#include "natsconn.h"
#include "task.h"

#define BOOKER_RUN 64          /* lines held before they are checked and published in one run */
#define BOOKER_IN_FLIGHT 4096  /* PubAcks outstanding at most */
#define BOOKER_FINISH_MS 60000 /* the longest wait for the last PubAcks */

/* What became of a line after booker_add took it. */
enum booker_what {
    BOOKER_SENT,     /* published; its PubAck may still say otherwise (the kinds below) */
    BOOKER_NOT_SENT, /* not published: rc, err (its id checks could not be asked, or the publish
                        failed at once; a full task stream is SA_EFULL) */
    BOOKER_GONE,     /* its id's task finished and is remembered: rc SA_ENOTFOUND, err, gone */
    BOOKER_ALREADY,  /* a duplicate PubAck, and the stored task is this very one */
    BOOKER_DUP,      /* a duplicate PubAck that is not this task: rc, err as dupcheck_verify */
    BOOKER_FAILED,   /* its PubAck was an error: rc SA_ENATS, err "not stored: ..." */
};

struct booker_outcome {
    enum booker_what what;
    long line;
    const char *id; /* the task's (a series: the series') id; NULL for BOOKER_FAILED */
    int id_given;   /* the line named its id */
    int series;     /* the line was a series */
    enum sa_code rc;
    const struct sa_err *err;         /* NULL for BOOKER_SENT and BOOKER_ALREADY */
    const struct dupcheck_gone *gone; /* BOOKER_GONE only */
};

/* A door's report of one outcome. SA_OK goes on; any other code (err says why) stops the run
 * there: the lines held after it are dropped unpublished, and booker_step or booker_finish
 * returns that code and err. */
typedef enum sa_code (*booker_report)(void *ctx, const struct booker_outcome *o,
                                      struct sa_err *err);

struct booker;

/* A booker publishing through n, sealing with *ring (read under *ring_lock when that is not
 * NULL: a server swaps its ring). all_or_none: hold every line until booker_finish, and
 * publish none if any of them is gone (--strict). SA_ENOMEM, SA_ENATS. */
enum sa_code booker_new(struct booker **out, struct sa_nats *n, struct sa_keyring *const *ring,
                        pthread_rwlock_t *ring_lock, int all_or_none, booker_report report,
                        void *ctx, struct sa_err *err) SA_MUST_CHECK;
/* Takes t (always: freed on failure) built from input line `line`, id_given if the line named
 * its id. SA_OK: held, id is its id; SA_EEXIST: a series scheduled already, nothing will be
 * published, id is the series'; else the line is refused (err), SA_EFULL and SA_ENOMEM
 * included. Reports nothing itself. */
enum sa_code booker_add(struct booker *bk, long line, struct sa_task *t, int id_given,
                        char id[SA_ID_MAX + 1], struct sa_err *err) SA_MUST_CHECK;
/* Reports the duplicate PubAcks arrived so far, and publishes the run if it is full. Returns
 * what a report stopped with, or SA_ENOMEM. */
enum sa_code booker_step(struct booker *bk, struct sa_err *err) SA_MUST_CHECK;
/* Publishes what is held (publish = 0: drops it), waits for every PubAck and reports the
 * duplicates and, if all went out, the failed PubAcks. Returns what a report stopped with, or
 * the wait's error. */
enum sa_code booker_finish(struct booker *bk, int publish, struct sa_err *err) SA_MUST_CHECK;
/* PubAcks so far (publisher_counts) and the i-th failure kept (publisher_failure). */
void booker_counts(struct booker *bk, long *acked, long *duplicates, long *failed);
const char *booker_failure(struct booker *bk, long i, long *line);
/* Frees bk and what it still holds (NULL allowed). */
void booker_free(struct booker *bk);

#endif

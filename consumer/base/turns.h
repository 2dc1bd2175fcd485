/* A thread that runs one turn every interval until stopped, or until the process stops: the
 * fleet's housekeeping (the sweep, the leader balance, the claims bucket watch) runs on one
 * each. */
#ifndef TURNS_H
#define TURNS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"

struct turns {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    atomic_int stop;
    const atomic_int *process_stopping; /* the consumer's SIGTERM flag */
    int64_t interval_ms;
    void (*turn)(void *arg);
    void *arg;
};

/* Starts t's thread: turn(arg) every interval_ms, the first one interval_ms from now. `what`
 * names the thread in the error. */
enum sa_code turns_start(struct turns *t, int64_t interval_ms, const atomic_int *process_stopping,
                         void (*turn)(void *arg), void *arg, const char *what,
                         struct sa_err *err) SA_MUST_CHECK;

/* Whether t is stopping (turns_stop, or the process): a turn under way should end. */
int turns_stopping(const struct turns *t);

/* Wakes and joins t's thread (a turn under way finishes first). */
void turns_stop(struct turns *t);

/* For an object whose first member is its struct turns (a sweep, the leader balance, the
 * claims bucket watch): allocates size bytes, zeroed, has init(obj, arg) fill them, then starts
 * turn(obj) every interval_ms. The started object, or NULL with err saying why ("... the
 * <what>"). */
void *turns_spawn(size_t size, int64_t interval_ms, const atomic_int *process_stopping,
                  void (*init)(void *obj, void *arg), void *arg, void (*turn)(void *obj),
                  const char *what, struct sa_err *err);

/* turns_stop, then frees the turns_alloc'd object t starts (NULL accepted). */
void turns_free(struct turns *t);

#endif

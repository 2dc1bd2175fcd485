/* One turn per interval on a thread of its own (see turns.h). */
#include <stdlib.h>
#include <time.h>

#include "turns.h"

int
turns_stopping(const struct turns *t)
{
    return atomic_load(&t->stop) || atomic_load(t->process_stopping);
}

static void *
loop(void *arg)
{
    struct turns *t = arg;
    struct timespec at;

    pthread_mutex_lock(&t->lock);
    while (!turns_stopping(t)) {
        clock_gettime(CLOCK_REALTIME, &at);
        at.tv_sec += t->interval_ms / 1000;
        at.tv_nsec += (t->interval_ms % 1000) * 1000000L;
        if (at.tv_nsec >= 1000000000L) {
            at.tv_sec++;
            at.tv_nsec -= 1000000000L;
        }
        while (!turns_stopping(t) && pthread_cond_timedwait(&t->wake, &t->lock, &at) == 0)
            ; /* woken early: only turns_stop signals */
        if (turns_stopping(t))
            break;
        pthread_mutex_unlock(&t->lock);
        t->turn(t->arg);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

enum sa_code
turns_start(struct turns *t, int64_t interval_ms, const atomic_int *process_stopping,
            void (*turn)(void *arg), void *arg, const char *what, struct sa_err *err)
{
    atomic_init(&t->stop, 0);
    t->process_stopping = process_stopping;
    t->interval_ms = interval_ms;
    t->turn = turn;
    t->arg = arg;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    if (pthread_create(&t->thread, NULL, loop, t) != 0) {
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->wake);
        return sa_fail(err, SA_ENOMEM, "cannot start the %s thread", what);
    }
    return SA_OK;
}

void
turns_stop(struct turns *t)
{
    pthread_mutex_lock(&t->lock);
    atomic_store(&t->stop, 1);
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->wake);
}

void *
turns_spawn(size_t size, int64_t interval_ms, const atomic_int *process_stopping,
            void (*init)(void *obj, void *arg), void *arg, void (*turn)(void *obj),
            const char *what, struct sa_err *err)
{
    struct turns *t = calloc(1, size); /* the object's first member */

    if (!t) {
        sa_fail(err, SA_ENOMEM, "no memory for the %s", what);
        return NULL;
    }
    init(t, arg);
    if (turns_start(t, interval_ms, process_stopping, turn, t, what, err) != SA_OK) {
        free(t);
        return NULL;
    }
    return t;
}

void
turns_free(struct turns *t)
{
    if (!t)
        return;
    turns_stop(t);
    free(t);
}

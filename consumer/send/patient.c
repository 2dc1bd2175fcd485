/* The patient outcome writer (patient.h): one thread, a queue in, a list out. */
#include <pthread.h>
#include <stdlib.h>

#include "claims.h"
#include "patient.h"

struct patient {
    struct consumer *c;
    void (*wake)(void *);
    void *arg;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more;
    struct claim_job *todo, *todo_tail; /* put, not yet written */
    struct claim_job *done, *done_tail; /* written, for the main loop */
    int pending;                        /* put and not taken back by patient_done */
    int stop;
    int started;
};

static void
append(struct claim_job **head, struct claim_job **tail, struct claim_job *j)
{
    j->next = NULL;
    if (*tail)
        (*tail)->next = j;
    else
        *head = j;
    *tail = j;
}

static struct claim_job *
pop(struct patient *p)
{
    struct claim_job *j = p->todo;

    if (j && !(p->todo = j->next))
        p->todo_tail = NULL;
    return j;
}

/* Writes until the outcome is in: each claims_finish waits out the broker for a while; the
 * task's message stays held meanwhile (its claim says "sending" by a live member). */
static void
write_job(struct patient *p, struct claim_job *j)
{
    int stop;

    do {
        if (claims_finish(p->c, j->h, j->last, j->rec.state, j->rec.http_status, j->rec.error,
                          j->rec.lateness_ms) == SA_OK)
            break;
        pthread_mutex_lock(&p->lock);
        stop = p->stop;
        pthread_mutex_unlock(&p->lock);
    } while (!stop);
    j->ok = 1; /* written, or given up at the stop: the task goes on as if written */
}

static void *
run(void *arg)
{
    struct patient *p = arg;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        struct claim_job *j;
        int first;
        while (!p->todo && !p->stop)
            pthread_cond_wait(&p->more, &p->lock);
        if (!(j = pop(p)))
            break; /* stopping with nothing left */
        pthread_mutex_unlock(&p->lock);
        write_job(p, j);
        pthread_mutex_lock(&p->lock);
        first = !p->done;
        append(&p->done, &p->done_tail, j);
        if (first)
            p->wake(p->arg);
        if (p->stop)
            break; /* the rest come back unwritten */
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

enum sa_code
patient_new(struct patient **out, struct consumer *c, void (*wake)(void *), void *arg,
            struct sa_err *err)
{
    struct patient *p = calloc(1, sizeof(*p));

    *out = NULL;
    if (!p)
        return sa_fail(err, SA_ENOMEM, "no memory for the outcome writer");
    p->c = c;
    p->wake = wake;
    p->arg = arg;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    if (pthread_create(&p->thread, NULL, run, p) != 0) {
        patient_free(p);
        return sa_fail(err, SA_ENOMEM, "cannot start the outcome writer");
    }
    p->started = 1;
    *out = p;
    return SA_OK;
}

void
patient_stop(struct patient *p)
{
    if (!p || !p->started)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->more);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    p->started = 0;
    for (struct claim_job *j; (j = pop(p));) /* never written: ok stays 0 */
        append(&p->done, &p->done_tail, j);
}

void
patient_free(struct patient *p)
{
    if (!p)
        return;
    patient_stop(p);
    for (struct claim_job *j = p->done, *next; j; j = next) { /* none after the drain */
        next = j->next;
        free(j);
    }
    pthread_cond_destroy(&p->more);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

void
patient_put(struct patient *p, struct claim_job *job)
{
    pthread_mutex_lock(&p->lock);
    job->ok = 0;
    append(&p->todo, &p->todo_tail, job);
    p->pending++;
    pthread_cond_signal(&p->more);
    pthread_mutex_unlock(&p->lock);
}

struct claim_job *
patient_done(struct patient *p)
{
    struct claim_job *list;
    int n = 0;

    pthread_mutex_lock(&p->lock);
    list = p->done;
    p->done = p->done_tail = NULL;
    for (struct claim_job *j = list; j; j = j->next)
        n++;
    p->pending -= n;
    pthread_mutex_unlock(&p->lock);
    return list;
}

int
patient_pending(struct patient *p)
{
    int n;

    pthread_mutex_lock(&p->lock);
    n = p->pending;
    pthread_mutex_unlock(&p->lock);
    return n;
}

/* See shutdown.h. */
#include <pthread.h>
#include <stdlib.h>

#include <nats/nats.h>

#include "shutdown.h"

struct late {
    void (*fn)(void *);
    void *p;
    struct late *next;
};

static pthread_mutex_t late_lock = PTHREAD_MUTEX_INITIALIZER;
static struct late *late_list;

void
sa_free_late(void (*fn)(void *), void *p)
{
    struct late *l;

    if (!p)
        return;
    l = malloc(sizeof(*l));
    if (!l)
        return; /* left to the exit: never freed under a running callback */
    l->fn = fn;
    l->p = p;
    pthread_mutex_lock(&late_lock);
    l->next = late_list;
    late_list = l;
    pthread_mutex_unlock(&late_lock);
}

enum sa_code
sa_js_quiesce(jsCtx *js, int published, int64_t wait_ms)
{
    natsMsgList pending = {0};
    jsPubOptions po;

    if (!js || !published)
        return SA_OK;
    if (js_PublishAsyncGetPendingList(&pending, js) == NATS_OK)
        natsMsgList_Destroy(&pending);
    /* nats.c counts a handler under way as pending until it returns */
    jsPubOptions_Init(&po);
    po.MaxWait = wait_ms > 0 ? wait_ms : 1;
    return js_PublishAsyncComplete(js, &po) == NATS_OK ? SA_OK : SA_ERETRY;
}

void
sa_nats_shutdown(int64_t timeout_ms)
{
    struct late *l, *next;

    if (nats_CloseAndWait(timeout_ms) != NATS_OK)
        return;
    pthread_mutex_lock(&late_lock);
    l = late_list;
    late_list = NULL;
    pthread_mutex_unlock(&late_lock);
    for (; l; l = next) {
        next = l->next;
        l->fn(l->p);
        free(l);
    }
}

/* What receiver.c, receiver_script.c and receiver_hits.c share, and no test sees: the
 * receiver itself, its scripted answers, and how a request's answer is picked. Every field of
 * struct receiver below lock is read and written under it. */
#ifndef RECEIVER_PRIVATE_H
#define RECEIVER_PRIVATE_H

#include <microhttpd.h>
#include <pthread.h>
#include <stddef.h>

#include "receiver.h"

#define SCRIPT_MAX 64

struct script {
    char path[512];
    int status, times;    /* an answer: status for the next `times` requests (< 0: always) */
    int is_hang, hang_ms; /* or a hang */
    char extra[128];
};

struct receiver {
    struct MHD_Daemon *d;
    char url[64];
    pthread_mutex_t lock;
    pthread_cond_t wake; /* broadcast by receiver_stop to cut hangs short */
    int stopping;
    struct receiver_hit *hits;
    size_t n, cap;
    int open, max_open, delay_ms;
    struct script scripts[SCRIPT_MAX];
    int n_scripts;
};

struct answer { /* what one request gets: a status, an extra header line, a hang first */
    int status;
    int hang_ms;
    char extra[128];
};

/* The newest live scripted answer and the newest hang for uri into *a (under r->lock); an
 * answer with uses left loses one. */
void receiver_pick_answer(struct receiver *r, const char *uri, struct answer *a);

#endif

/* How the test receiver answers: scripted statuses with an extra header, for a number of
 * requests or from now on, hangs and a delay for every answer. The newest script for a path
 * wins; all of it is read and written under the receiver's lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "receiver.h"
#include "receiver_private.h"

/* A script for "/a" also matches "/a?x=1"; one for "/a?x=1" only that URI. */
static int
script_matches(const struct script *s, const char *uri)
{
    size_t n = strlen(s->path);

    return strncmp(s->path, uri, n) == 0 &&
           (uri[n] == '\0' || (uri[n] == '?' && !strchr(s->path, '?')));
}

/* The newest live scripted answer and the newest hang for uri win (under the lock). */
void
receiver_pick_answer(struct receiver *r, const char *uri, struct answer *a)
{
    int answered = 0, hung = 0;

    a->status = 200;
    a->hang_ms = r->delay_ms;
    a->extra[0] = '\0';
    for (int i = r->n_scripts - 1; i >= 0; i--) {
        struct script *s = &r->scripts[i];
        if (!script_matches(s, uri))
            continue;
        if (s->is_hang && !hung) {
            hung = 1;
            a->hang_ms = s->hang_ms > 0 ? s->hang_ms : r->delay_ms;
        } else if (!s->is_hang && !answered && s->times != 0) {
            answered = 1;
            a->status = s->status;
            snprintf(a->extra, sizeof(a->extra), "%s", s->extra);
            if (s->times > 0)
                s->times--;
        }
    }
}

/* A free slot for a script (under the lock); used-up answers are dropped when full. */
static struct script *
script_new(struct receiver *r, const char *path)
{
    struct script *s;

    if (r->n_scripts == SCRIPT_MAX) {
        int k = 0;
        for (int i = 0; i < r->n_scripts; i++)
            if (r->scripts[i].is_hang || r->scripts[i].times != 0)
                r->scripts[k++] = r->scripts[i];
        r->n_scripts = k;
    }
    if (r->n_scripts == SCRIPT_MAX)
        return NULL;
    s = &r->scripts[r->n_scripts++];
    memset(s, 0, sizeof(*s));
    snprintf(s->path, sizeof(s->path), "%s", path);
    return s;
}

void
receiver_respond(struct receiver *r, const char *path, int status, int times,
                 const char *extra_header)
{
    struct script *s;

    pthread_mutex_lock(&r->lock);
    for (int i = 0; times < 0 && i < r->n_scripts; i++)
        if (!strcmp(r->scripts[i].path, path) && !r->scripts[i].is_hang)
            r->scripts[i].times = 0; /* "from now on" replaces what was scripted before */
    if ((s = script_new(r, path))) {
        s->status = status;
        s->times = times;
        snprintf(s->extra, sizeof(s->extra), "%s", extra_header ? extra_header : "");
    }
    pthread_mutex_unlock(&r->lock);
}

void
receiver_hang(struct receiver *r, const char *path, int ms)
{
    struct script *s;

    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->n_scripts; i++)
        if (!strcmp(r->scripts[i].path, path) && r->scripts[i].is_hang) {
            r->scripts[i].is_hang = 0; /* replaced: now a used-up answer, so its slot is free */
            r->scripts[i].times = 0;
        }
    if ((s = script_new(r, path))) {
        s->is_hang = 1;
        s->hang_ms = ms;
    }
    pthread_mutex_unlock(&r->lock);
}

void
receiver_set_delay(struct receiver *r, int ms)
{
    pthread_mutex_lock(&r->lock);
    r->delay_ms = ms;
    pthread_mutex_unlock(&r->lock);
}

/* `sendat serve`'s tokens file followed: read again when it changed (serve.h), so a token
 * created or revoked by `sendat token` is in force at the next request. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "serve.h"

/* The tokens file's identity as it is now ("" if it cannot be read). */
static void
file_seen(const char *path, char *out, size_t cap)
{
    struct stat st;

    out[0] = '\0';
    if (stat(path, &st) == 0)
        snprintf(out, cap, "%ju %jd %jd.%09ld", (uintmax_t)st.st_ino, (intmax_t)st.st_size,
                 (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* Reads the tokens file and swaps the tokens in; the caller holds follow_lock. What the file
 * was is noted first, so a change while it is read is read again, and a file that failed is
 * not read again until it changes. */
static enum sa_code
reload_tokens(struct server *s, struct sa_err *err)
{
    struct tokens *fresh = NULL, *old;
    enum sa_code rc;

    file_seen(s->tokens_file, s->tokens_seen, sizeof(s->tokens_seen));
    if ((rc = tokens_load(&fresh, s->tokens_file, err)) != SA_OK)
        return rc;
    pthread_rwlock_wrlock(&s->tokens_lock);
    old = s->tokens;
    s->tokens = fresh;
    pthread_rwlock_unlock(&s->tokens_lock);
    tokens_free(old);
    return SA_OK;
}

void
serve_follow_tokens(struct server *s)
{
    char now[sizeof(s->tokens_seen)];
    struct sa_err err = {0};

    file_seen(s->tokens_file, now, sizeof(now));
    pthread_mutex_lock(&s->follow_lock);
    if (strcmp(now, s->tokens_seen) != 0) {
        if (reload_tokens(s, &err) == SA_OK)
            sa_log(SA_LOG_INFO, "tokens_reloaded", "tokens=%zu", tokens_count(s->tokens));
        else
            sa_log(SA_LOG_ERROR, "reload_failed", "error=\"%s\" (the old tokens stay)", err.msg);
    }
    pthread_mutex_unlock(&s->follow_lock);
}

enum sa_code
serve_reload_tokens(struct server *s, struct sa_err *err)
{
    enum sa_code rc;

    pthread_mutex_lock(&s->follow_lock);
    rc = reload_tokens(s, err);
    pthread_mutex_unlock(&s->follow_lock);
    return rc;
}

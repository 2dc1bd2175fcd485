/* Task values, their protobuf-c codec and their validation. The only includer of the
 * generated sendat.pb-c.h: protobuf-c memory never leaves this file (invariant 5: what a
 * consumer sends has passed sa_task_validate, at the producer and again after opening). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <sodium.h>

#include "mailhdr.h"
#include "task.h"
#include "timeparse.h"

enum sa_code
sa_task_new(struct sa_task **out, struct sa_err *err)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return sa_fail(err, SA_ENOMEM, "no memory for a task");
    (*out)->attempt = 1;
    (*out)->channel = SA_CHANNEL_WEBHOOK;
    return SA_OK;
}

void
sa_task_free(struct sa_task *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_headers; i++) {
        free(t->headers[i].name);
        free(t->headers[i].value);
    }
    for (size_t i = 0; i < t->n_attempts; i++)
        free(t->attempt_error[i]);
    free(t->attempt_at_ms);
    free(t->attempt_error);
    free(t->headers);
    free(t->url);
    sa_task_free_email(t);
    free(t->cron);
    free(t->tz);
    if (t->body)
        sodium_memzero(t->body, t->body_len);
    free(t->body);
    sodium_memzero(t, sizeof(*t));
    free(t);
}

static int
is_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static enum sa_code
check_header(const char *name, const char *value, struct sa_err *err)
{
    static const char *reserved[] = {
        "host",       "content-length",    "transfer-encoding", "connection",
        "webhook-id", "webhook-timestamp", "webhook-signature", NULL};
    size_t n = strlen(name);

    if (n == 0 || n > 256)
        return sa_fail(err, SA_EINVAL, "header name must be 1 to 256 characters");
    for (size_t i = 0; i < n; i++)
        if (!is_tchar(name[i]))
            return sa_fail(err, SA_EINVAL,
                           "header name \"%.60s\" has a character not allowed in a name", name);
    for (int i = 0; reserved[i]; i++)
        if (!strcasecmp(name, reserved[i]))
            return sa_fail(err, SA_EINVAL, "header %s is set by sendat and cannot be given", name);
    if (strpbrk(value, "\r\n"))
        return sa_fail(err, SA_EINVAL, "header %.60s has CR or LF in its value", name);
    if (!sa_mailhdr_value_ok(value)) /* control bytes (C0, DEL, C1), broken UTF-8 */
        return sa_fail(err, SA_EINVAL,
                       "header %.60s has a control byte or broken UTF-8 in its value", name);
    if (n + strlen(value) + 2 > SA_HEADER_MAX)
        return sa_fail(err, SA_EINVAL, "header %.60s is longer than %d bytes", name, SA_HEADER_MAX);
    return SA_OK;
}

enum sa_code
sa_task_add_header(struct sa_task *t, const char *name, const char *value, struct sa_err *err)
{
    struct sa_header *h;
    enum sa_code rc = check_header(name, value, err);

    if (rc != SA_OK)
        return rc;
    if (t->n_headers >= SA_HEADERS_MAX)
        return sa_fail(err, SA_EINVAL, "more than %d headers", SA_HEADERS_MAX);
    h = realloc(t->headers, (t->n_headers + 1) * sizeof(*h));
    if (!h)
        return sa_fail(err, SA_ENOMEM, "no memory for a header");
    t->headers = h;
    h[t->n_headers].name = strdup(name);
    h[t->n_headers].value = strdup(value);
    if (!h[t->n_headers].name || !h[t->n_headers].value) {
        free(h[t->n_headers].name);
        free(h[t->n_headers].value);
        return sa_fail(err, SA_ENOMEM, "no memory for a header");
    }
    t->n_headers++;
    return SA_OK;
}

enum sa_code
sa_task_add_header_line(struct sa_task *t, const char *line, struct sa_err *err)
{
    const char *colon = strchr(line, ':');
    char name[257];
    size_t n;

    if (!colon)
        return sa_fail(err, SA_EINVAL, "header \"%.60s\" is not \"Name: value\"", line);
    n = (size_t)(colon - line);
    if (n == 0 || n >= sizeof(name))
        return sa_fail(err, SA_EINVAL, "header \"%.60s\" has no name or a name too long", line);
    memcpy(name, line, n);
    name[n] = '\0';
    colon++;
    while (*colon == ' ' || *colon == '\t')
        colon++;
    return sa_task_add_header(t, name, colon, err);
}

/* The last URL this thread found good: the check depends on the text alone. */
static _Thread_local char last_good_url[SA_URL_MAX + 1];

enum sa_code
sa_task_check_url(const char *url, struct sa_err *err)
{
    CURLU *u = NULL;
    char *scheme = NULL, *host = NULL;
    enum sa_code rc = SA_OK;

    if (!url || !*url)
        return sa_fail(err, SA_EINVAL, "webhook URL is missing");
    if (strlen(url) > SA_URL_MAX || strpbrk(url, "\r\n \t"))
        return sa_fail(err, SA_EINVAL, "webhook URL is too long or has white space or CR/LF");
    if (!strcmp(url, last_good_url))
        return SA_OK; /* a batch books the same URL again and again; the parse is a third of it */
    u = curl_url();
    if (!u)
        return sa_fail(err, SA_ENOMEM, "no memory to parse a URL");
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
        /* reasons reach the broker: the URL is not quoted */
        rc = sa_fail(err, SA_EINVAL,
                     strstr(url, "://") ? "webhook URL does not parse"
                                        : "webhook URL does not parse: want http:// or https://");
    else if (strcasecmp(scheme, "http") && strcasecmp(scheme, "https"))
        rc = sa_fail(err, SA_EINVAL, "webhook URL scheme %s is not http or https", scheme);
    if (rc == SA_OK)
        memcpy(last_good_url, url, strlen(url) + 1);
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return rc;
}

enum sa_code
sa_task_set_url(struct sa_task *t, const char *url, struct sa_err *err)
{
    enum sa_code rc = sa_task_check_url(url, err);

    if (rc != SA_OK)
        return rc;
    free(t->url);
    t->url = strdup(url);
    return t->url ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory for a URL");
}

enum sa_code
sa_task_set_body(struct sa_task *t, const void *body, size_t len, struct sa_err *err)
{
    if (len > SA_BODY_MAX)
        return sa_fail(err, SA_EINVAL, "body is %zu bytes; the limit is %d", len, SA_BODY_MAX);
    free(t->body);
    t->body = NULL;
    t->body_len = 0;
    if (len == 0)
        return SA_OK;
    t->body = malloc(len);
    if (!t->body)
        return sa_fail(err, SA_ENOMEM, "no memory for a %zu byte body", len);
    memcpy(t->body, body, len);
    t->body_len = len;
    return SA_OK;
}

/* The full list forgets its oldest entry: the newest failures say most in a dead letter. */
static void
drop_oldest_attempt(struct sa_task *t)
{
    free(t->attempt_error[0]);
    t->n_attempts--;
    memmove(t->attempt_error, t->attempt_error + 1, t->n_attempts * sizeof(*t->attempt_error));
    memmove(t->attempt_at_ms, t->attempt_at_ms + 1, t->n_attempts * sizeof(*t->attempt_at_ms));
}

enum sa_code
sa_task_add_attempt(struct sa_task *t, int64_t at_ms, const char *error, struct sa_err *err)
{
    int64_t *at;
    char **msg;

    if (t->n_attempts >= SA_ATTEMPTS_MAX)
        drop_oldest_attempt(t);
    at = realloc(t->attempt_at_ms, (t->n_attempts + 1) * sizeof(*at));
    if (!at)
        return sa_fail(err, SA_ENOMEM, "no memory for an attempt");
    t->attempt_at_ms = at;
    msg = realloc(t->attempt_error, (t->n_attempts + 1) * sizeof(*msg));
    if (!msg)
        return sa_fail(err, SA_ENOMEM, "no memory for an attempt");
    t->attempt_error = msg;
    msg[t->n_attempts] = strndup(error ? error : "", 255);
    if (!msg[t->n_attempts])
        return sa_fail(err, SA_ENOMEM, "no memory for an attempt");
    at[t->n_attempts++] = at_ms;
    return SA_OK;
}

void
sa_task_clear_attempts(struct sa_task *t)
{
    for (size_t i = 0; i < t->n_attempts; i++)
        free(t->attempt_error[i]);
    free(t->attempt_error);
    free(t->attempt_at_ms);
    t->attempt_error = NULL;
    t->attempt_at_ms = NULL;
    t->n_attempts = 0;
    t->first_due_ms = 0;
    t->first_started_ms = 0;
}

enum sa_code
sa_task_validate(const struct sa_task *t, struct sa_err *err)
{
    enum sa_code rc;

    if (!sa_layout_id_valid(t->id))
        return sa_fail(err, SA_EINVAL, "task id \"%.70s\" must be 1-%d of A-Z a-z 0-9 _ -", t->id,
                       SA_ID_MAX);
    if (t->due_ms <= 0)
        return sa_fail(err, SA_EINVAL, "task has no due time");
    if (t->due_ms > SA_TIME_MAX_MS || t->not_after_ms > SA_TIME_MAX_MS ||
        t->until_ms > SA_TIME_MAX_MS)
        return sa_fail(err, SA_EINVAL, "a time of the task is after 9999-12-31");
    if (t->not_after_ms && t->not_after_ms < t->due_ms)
        return sa_fail(err, SA_EINVAL, "not-after is before the due time");
    if (t->attempt < 1)
        return sa_fail(err, SA_EINVAL, "attempt %d is below 1", t->attempt);
    if (t->cron && (rc = sa_task_check_recurrence(t, err)) != SA_OK)
        return rc;
    if (t->channel == SA_CHANNEL_EMAIL)
        return sa_task_validate_email(t, err);
    if (t->channel != SA_CHANNEL_WEBHOOK)
        return sa_fail(err, SA_EINVAL, "task has no channel this consumer can send");
    if ((rc = sa_task_check_url(t->url, err)) != SA_OK)
        return rc;
    if (t->body_len > SA_BODY_MAX)
        return sa_fail(err, SA_EINVAL, "body is %zu bytes; the limit is %d", t->body_len,
                       SA_BODY_MAX);
    if (t->n_headers > SA_HEADERS_MAX)
        return sa_fail(err, SA_EINVAL, "more than %d headers", SA_HEADERS_MAX);
    for (size_t i = 0; i < t->n_headers; i++)
        if ((rc = check_header(t->headers[i].name, t->headers[i].value, err)) != SA_OK)
            return rc;
    return SA_OK;
}

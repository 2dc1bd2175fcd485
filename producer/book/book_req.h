/* The typed booking request: what one task or series is to be, as `sendat schedule`'s flags,
 * a batch line and the body of POST /v1/tasks all give it. The booking core reads only this
 * (never the CLI's options), and its refusals name the field they concern (sa_err.field). */
#ifndef BOOK_REQ_H
#define BOOK_REQ_H

#include "sa_err.h"
#include "task.h"

struct book_req {
    const char *at, *not_after, *webhook, *data, *data_file, *id;
    const char *group; /* cancel --group NAME cancels what was booked in it */
    const char *headers[SA_HEADERS_MAX + 1];
    int n_headers;
    int at_most_once;
    /* email */
    const char *rcpt[3][64]; /* each entry may hold a comma-separated list */
    int n_rcpt[3];
    const char *subject, *text, *text_file, *html_file, *from, *reply_to;
    const char *html; /* inline HTML (batch lines) */
    /* recurrence */
    const char *cron, *tz, *until, *count;
    /* How messages spell a field: 0 as the CLI's flag ("--at"), 1 as the API's key ("at").
     * Only the words differ; the field a refusal names (sa_err.field) is the key either way. */
    int key_names;
};

/* Adds a comma-separated recipient list of one kind; -1 if there are too many lists. */
int book_add_rcpt(struct book_req *o, enum sa_rcpt kind, const char *list);

/* Checks that the request names one complete task (SA_EINVAL says what is missing). */
enum sa_code book_check(const struct book_req *o, struct sa_err *err) SA_MUST_CHECK;

/* Builds a whole task (times, channel, id) from a checked request and validates it. */
enum sa_code book_build_task(struct sa_task *t, const struct book_req *o, const uint8_t *body,
                             size_t body_len, int64_t now, struct sa_err *err) SA_MUST_CHECK;

/* Fills the email part of t from the request (files read, addresses checked). */
enum sa_code book_build_email(struct sa_task *t, const struct book_req *o,
                              struct sa_err *err) SA_MUST_CHECK;

/* Reads a whole file ("-": stdin) of at most limit bytes; more is refused, not truncated.
 * *out is malloc'd and NUL-terminated. */
enum sa_code book_read_file(const char *path, size_t limit, char **out, size_t *len,
                            struct sa_err *err) SA_MUST_CHECK;

#endif

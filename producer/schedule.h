/* sendat schedule's options and the builders that turn them into a task. */
#ifndef SCHEDULE_H
#define SCHEDULE_H

#include "cli.h"
#include "task.h"

struct sched_opts {
    struct cli cli;
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
    /* batch */
    const char *batch, *template_file;
    int strict;
};

/* Adds a comma-separated recipient list of one kind; -1 if there are too many lists. */
int schedule_add_rcpt(struct sched_opts *o, enum sa_rcpt kind, const char *list);

/* Checks that the options name one complete task (SA_EINVAL says what is missing). */
enum sa_code schedule_check(const struct sched_opts *o, struct sa_err *err) SA_MUST_CHECK;

/* Builds a whole task (times, channel, id) from checked options and validates it. */
enum sa_code schedule_build_task(struct sa_task *t, const struct sched_opts *o, const uint8_t *body,
                                 size_t body_len, int64_t now, struct sa_err *err) SA_MUST_CHECK;

/* cmd_batch.c: checks --batch's companions; runs the batch (prints the summary, returns the exit
 * code). */
int batch_check_opts(const struct sched_opts *o);
int batch_run(const struct sched_opts *o);

/* Fills the email part of t from the options (files read, addresses checked). */
enum sa_code schedule_build_email(struct sa_task *t, const struct sched_opts *o,
                                  struct sa_err *err) SA_MUST_CHECK;

/* Reads a whole file ("-": stdin) of at most limit bytes; more is refused, not truncated.
 * *out is malloc'd and NUL-terminated. */
enum sa_code schedule_read_file(const char *path, size_t limit, char **out, size_t *len,
                                struct sa_err *err) SA_MUST_CHECK;

#endif

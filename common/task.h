/* A send task as C values: the protobuf-c codec, validation shared by producer and consumer
 * (invariant 5: bad input is refused at the producer and dead-lettered at the consumer,
 * never sent), and seal/open through the envelope. */
#ifndef SA_TASK_H
#define SA_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"
#include "keyring.h"
#include "layout.h"

#define SA_BODY_MAX (256 * 1024) /* webhook body or email text/html, each */
#define SA_HEADERS_MAX 64
#define SA_HEADER_MAX 8192 /* one header line */
#define SA_URL_MAX 4096
#define SA_ATTEMPTS_MAX 100 /* failed attempts a task lists (SENDAT_RETRY_ATTEMPTS <= 100) */

enum sa_channel { SA_CHANNEL_NONE = 0, SA_CHANNEL_WEBHOOK, SA_CHANNEL_EMAIL };
enum sa_rcpt { SA_RCPT_TO = 0, SA_RCPT_CC, SA_RCPT_BCC };
enum sa_email_field {
    SA_EMAIL_FROM,
    SA_EMAIL_REPLY_TO,
    SA_EMAIL_SUBJECT,
    SA_EMAIL_TEXT,
    SA_EMAIL_HTML
};

#define SA_RCPT_MAX 1000 /* recipients per message, to + cc + bcc */

struct sa_header {
    char *name;
    char *value;
};

struct sa_task {
    char id[SA_ID_MAX + 1];
    int64_t due_ms;
    int64_t not_after_ms; /* 0: none */
    int64_t created_ms;
    int64_t first_due_ms;     /* a retry: its first attempt's due time (0: due_ms is that) */
    int64_t first_started_ms; /* a retry: when its first attempt started */
    int attempt;              /* 1 for the first attempt */
    int at_most_once;
    enum sa_channel channel;
    /* webhook */
    char *url;
    struct sa_header *headers;
    size_t n_headers;
    uint8_t *body;
    size_t body_len;
    /* email */
    char **rcpt[3]; /* indexed by enum sa_rcpt */
    size_t n_rcpt[3];
    char *from, *reply_to, *subject, *text, *html;
    /* recurrence: this task is one occurrence of a series */
    char *cron, *tz;
    int64_t until_ms; /* 0: none */
    int count;        /* occurrences in all, 0: unlimited */
    int index;        /* this occurrence's number, from 1, below INT32_MAX */
    char series_id[SA_ID_MAX + 1];
    char group[SA_ID_MAX + 1]; /* the group it was booked in, "" for none */
    /* the producer made id for this booking (no id given, no series): it is published without
     * a Nats-Msg-Id. Not encoded: a decoded or copied task has 0. */
    int id_generated;
    /* failed attempts so far, for the dead letter */
    size_t n_attempts;
    int64_t *attempt_at_ms;
    char **attempt_error;
};

/* A zeroed task with attempt 1. SA_ENOMEM only. */
enum sa_code sa_task_new(struct sa_task **out, struct sa_err *err) SA_MUST_CHECK;
void sa_task_free(struct sa_task *t);
void sa_task_free_email(struct sa_task *t); /* the email fields only (task_email.c) */

/* Copies name and value after checking them (token name, no CR/LF or NUL in the value). */
enum sa_code sa_task_add_header(struct sa_task *t, const char *name, const char *value,
                                struct sa_err *err) SA_MUST_CHECK;
/* Parses "Name: value" and adds it. */
enum sa_code sa_task_add_header_line(struct sa_task *t, const char *line,
                                     struct sa_err *err) SA_MUST_CHECK;
enum sa_code sa_task_set_url(struct sa_task *t, const char *url, struct sa_err *err) SA_MUST_CHECK;
enum sa_code sa_task_set_body(struct sa_task *t, const void *body, size_t len,
                              struct sa_err *err) SA_MUST_CHECK;
/* Records a failed attempt (time and reason) on the task. A list already SA_ATTEMPTS_MAX long
 * drops its oldest entry, so the list never grows past the ceiling. */
enum sa_code sa_task_add_attempt(struct sa_task *t, int64_t at_ms, const char *error,
                                 struct sa_err *err) SA_MUST_CHECK;

/* Email: adds one recipient after checking the address ("a@b.example" or "Name <a@b.example>"). */
enum sa_code sa_task_add_rcpt(struct sa_task *t, enum sa_rcpt kind, const char *addr,
                              struct sa_err *err) SA_MUST_CHECK;
/* Email: sets From/Reply-To (checked addresses), Subject (no CR/LF), text or HTML body (size). */
enum sa_code sa_task_set_email(struct sa_task *t, enum sa_email_field f, const char *value,
                               struct sa_err *err) SA_MUST_CHECK;
/* Checks the email part of a task (recipients, subject, bodies, header fields). */
enum sa_code sa_task_validate_email(const struct sa_task *t, struct sa_err *err) SA_MUST_CHECK;

/* Makes t an occurrence of a series (copies cron and tz after checking them). */
enum sa_code sa_task_set_recurrence(struct sa_task *t, const char *cron, const char *tz,
                                    int64_t until_ms, int count, struct sa_err *err) SA_MUST_CHECK;

/* Checks cron, tz and series id of an occurrence. */
enum sa_code sa_task_check_recurrence(const struct sa_task *t, struct sa_err *err) SA_MUST_CHECK;

/* Forgets the failed attempts and the first attempt's times (a new occurrence starts afresh). */
void sa_task_clear_attempts(struct sa_task *t);

/* A deep copy (for the next occurrence of a series). */
enum sa_code sa_task_copy(const struct sa_task *t, struct sa_task **out,
                          struct sa_err *err) SA_MUST_CHECK;

/* Checks everything a consumer relies on: id, times, channel, URL scheme and host, headers,
 * sizes. SA_EINVAL with one line naming the problem. */
enum sa_code sa_task_validate(const struct sa_task *t, struct sa_err *err) SA_MUST_CHECK;

/* Checks a webhook URL: http or https, a host, at most SA_URL_MAX bytes, no CR/LF/space. */
enum sa_code sa_task_check_url(const char *url, struct sa_err *err) SA_MUST_CHECK;

/* Encodes to protobuf bytes; *out is malloc'd. */
enum sa_code sa_task_encode(const struct sa_task *t, uint8_t **out, size_t *len,
                            struct sa_err *err) SA_MUST_CHECK;
/* Decodes protobuf bytes into a new task (not yet validated). SA_EINVAL if undecodable. */
enum sa_code sa_task_decode(const uint8_t *buf, size_t len, struct sa_task **out,
                            struct sa_err *err) SA_MUST_CHECK;

/* encode + seal with the ring's newest key, bound to t->id. *env is malloc'd. */
enum sa_code sa_task_seal(const struct sa_keyring *ring, const struct sa_task *t, uint8_t **env,
                          size_t *env_len, struct sa_err *err) SA_MUST_CHECK;
/* open (bound to id) + decode + validate + check the sealed id equals id. The plaintext is
 * wiped before return. SA_ECRYPTO / SA_EINVAL as the steps say. */
enum sa_code sa_task_open(const struct sa_keyring *ring, const char *id, const uint8_t *env,
                          size_t len, struct sa_task **out, struct sa_err *err) SA_MUST_CHECK;

#endif

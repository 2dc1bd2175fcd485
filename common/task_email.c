/* The email half of a task: addresses checked at the producer and again after opening at the
 * consumer; no CR or LF can reach a header (invariant 5: refused, never sent). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "mailhdr.h"
#include "task.h"

static const char *const rcpt_names[] = {"To", "Cc", "Bcc"};

/* Checks one address; the message says where it is ("recipient 3 of To: ..."), not what. */
static enum sa_code
check_address(const char *text, const char *where, size_t i, struct sa_err *err)
{
    char name[256], addr[SA_ADDRESS_MAX + 1];
    struct sa_err why = {0};
    enum sa_code rc = sa_address_parse(text, name, sizeof(name), addr, sizeof(addr), &why);

    if (rc == SA_OK)
        return rc;
    if (i)
        return sa_fail(err, rc, "recipient %zu of %s: %s", i, where, why.msg);
    return sa_fail(err, rc, "%s: %s", where, why.msg);
}

enum sa_code
sa_task_add_rcpt(struct sa_task *t, enum sa_rcpt kind, const char *addr, struct sa_err *err)
{
    enum sa_code rc = check_address(addr, rcpt_names[kind], t->n_rcpt[kind] + 1, err);
    char **list;

    if (rc != SA_OK)
        return rc;
    if (t->n_rcpt[0] + t->n_rcpt[1] + t->n_rcpt[2] >= SA_RCPT_MAX)
        return sa_fail(err, SA_EINVAL, "more than %d recipients", SA_RCPT_MAX);
    list = realloc(t->rcpt[kind], (t->n_rcpt[kind] + 1) * sizeof(*list));
    if (!list)
        return sa_fail(err, SA_ENOMEM, "no memory for a recipient");
    t->rcpt[kind] = list;
    list[t->n_rcpt[kind]] = strdup(addr);
    if (!list[t->n_rcpt[kind]])
        return sa_fail(err, SA_ENOMEM, "no memory for a recipient");
    t->n_rcpt[kind]++;
    t->channel = SA_CHANNEL_EMAIL;
    return SA_OK;
}

static char **
field_of(struct sa_task *t, enum sa_email_field f)
{
    char **fields[] = {&t->from, &t->reply_to, &t->subject, &t->text, &t->html};

    return fields[f];
}

static enum sa_code
check_field(enum sa_email_field f, const char *v, struct sa_err *err)
{
    static const char *names[] = {"from", "reply-to", "subject", "text", "html"};

    if (f <= SA_EMAIL_SUBJECT && strpbrk(v, "\r\n"))
        return sa_fail(err, SA_EINVAL, "%s has CR or LF", names[f]);
    if ((f == SA_EMAIL_FROM || f == SA_EMAIL_REPLY_TO) && *v)
        return check_address(v, names[f], 0, err);
    if (f == SA_EMAIL_SUBJECT && strlen(v) > 998)
        return sa_fail(err, SA_EINVAL, "subject is longer than 998 bytes");
    if (f == SA_EMAIL_SUBJECT && !sa_mailhdr_value_ok(v)) /* sent labelled UTF-8 */
        return sa_fail(err, SA_EINVAL, "subject has a control byte or broken UTF-8");
    if (strlen(v) > SA_BODY_MAX)
        return sa_fail(err, SA_EINVAL, "%s is %zu bytes; the limit is %d", names[f], strlen(v),
                       SA_BODY_MAX);
    return SA_OK;
}

enum sa_code
sa_task_set_email(struct sa_task *t, enum sa_email_field f, const char *value, struct sa_err *err)
{
    char **slot = field_of(t, f);
    enum sa_code rc = check_field(f, value, err);

    if (rc != SA_OK)
        return rc;
    free(*slot);
    *slot = strdup(value);
    t->channel = SA_CHANNEL_EMAIL;
    return *slot ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory for an email field");
}

/* The folded To, Cc and Subject fields fit SA_MAILHDR_MAX: built here by the consumer's own
 * code, so what the producer accepts the consumer can send (invariant 5). */
static enum sa_code
check_buildable(const struct sa_task *t, struct sa_err *err)
{
    char *field = NULL;
    enum sa_code rc = SA_OK;

    for (int k = SA_RCPT_TO; rc == SA_OK && k <= SA_RCPT_CC; k++) {
        if (t->n_rcpt[k])
            rc = sa_mailhdr_addresses(&field, rcpt_names[k], t->rcpt[k], t->n_rcpt[k], err);
        free(field);
        field = NULL;
    }
    if (rc == SA_OK)
        rc = sa_mailhdr_text(&field, "Subject", t->subject, err);
    free(field);
    return rc;
}

enum sa_code
sa_task_validate_email(const struct sa_task *t, struct sa_err *err)
{
    enum sa_code rc;

    if (t->n_rcpt[SA_RCPT_TO] + t->n_rcpt[SA_RCPT_CC] + t->n_rcpt[SA_RCPT_BCC] == 0)
        return sa_fail(err, SA_EINVAL, "email has no recipient");
    if (t->n_rcpt[0] + t->n_rcpt[1] + t->n_rcpt[2] > SA_RCPT_MAX)
        return sa_fail(err, SA_EINVAL, "more than %d recipients", SA_RCPT_MAX);
    if (!t->subject || !*t->subject)
        return sa_fail(err, SA_EINVAL, "email has no subject");
    if ((!t->text || !*t->text) && (!t->html || !*t->html))
        return sa_fail(err, SA_EINVAL, "email has no text");
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < t->n_rcpt[k]; i++)
            if ((rc = check_address(t->rcpt[k][i], rcpt_names[k], i + 1, err)) != SA_OK)
                return rc;
    for (int f = SA_EMAIL_FROM; f <= SA_EMAIL_HTML; f++) {
        const char *v = *field_of((struct sa_task *)t, (enum sa_email_field)f);
        if (v && (rc = check_field((enum sa_email_field)f, v, err)) != SA_OK)
            return rc;
    }
    return check_buildable(t, err);
}

void
sa_task_free_email(struct sa_task *t)
{
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < t->n_rcpt[k]; i++)
            free(t->rcpt[k][i]);
        free(t->rcpt[k]);
    }
    free(t->from);
    free(t->reply_to);
    free(t->subject);
    if (t->text)
        sodium_memzero(t->text, strlen(t->text));
    free(t->text);
    if (t->html)
        sodium_memzero(t->html, strlen(t->html));
    free(t->html);
}

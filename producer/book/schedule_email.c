/* Email tasks from a booking request: recipients from comma-separated lists, bodies from
 * flags or files, every address checked here so a bad one exits 2 before anything is
 * published (invariant 5). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book_req.h"

enum sa_code
book_read_file(const char *path, size_t limit, char **out, size_t *len, struct sa_err *err)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    enum sa_code rc = SA_OK;

    *out = NULL;
    if (!f)
        return sa_fail(err, SA_EINVAL, "%s: %s", path, strerror(errno));
    *out = malloc(limit + 2);
    if (!*out)
        rc = sa_fail(err, SA_ENOMEM, "no memory to read %s", path);
    if (rc == SA_OK) {
        *len = fread(*out, 1, limit + 1, f);
        (*out)[*len] = '\0';
        if (ferror(f))
            rc = sa_fail(err, SA_EINVAL, "%s: read error", path);
        else if (*len > limit)
            rc = sa_fail(err, SA_EINVAL, "%s is over the limit of %zu bytes", path, limit);
    }
    if (f != stdin)
        fclose(f);
    if (rc != SA_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

static enum sa_code
add_list(struct sa_task *t, enum sa_rcpt kind, const char *list, struct sa_err *err)
{
    char *copy = strdup(list), *save = NULL, *tok;
    enum sa_code rc = copy ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory");

    for (tok = copy ? strtok_r(copy, ",", &save) : NULL; rc == SA_OK && tok;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        for (char *end = tok + strlen(tok); end > tok && end[-1] == ' ';)
            *--end = '\0';
        if (*tok)
            rc = sa_task_add_rcpt(t, kind, tok, err);
    }
    free(copy);
    return rc;
}

/* Sets one email field; bad input names the field by its key ("subject"). */
static enum sa_code
set_email(struct sa_task *t, enum sa_email_field f, const char *value, struct sa_err *err)
{
    static const char *const keys[] = {[SA_EMAIL_FROM] = "from",
                                       [SA_EMAIL_REPLY_TO] = "reply-to",
                                       [SA_EMAIL_SUBJECT] = "subject",
                                       [SA_EMAIL_TEXT] = "text",
                                       [SA_EMAIL_HTML] = "html"};

    return sa_err_field(err, sa_task_set_email(t, f, value, err), keys[f]);
}

static enum sa_code
set_from_file(struct sa_task *t, enum sa_email_field f, const char *path, struct sa_err *err)
{
    char *text = NULL;
    size_t len = 0;
    enum sa_code rc = book_read_file(path, SA_BODY_MAX, &text, &len, err);

    if (rc == SA_OK && strlen(text) != len)
        rc = sa_fail(err, SA_EINVAL, "%s holds a NUL byte", path);
    if (rc == SA_OK)
        rc = set_email(t, f, text, err);
    free(text);
    return rc;
}

enum sa_code
book_build_email(struct sa_task *t, const struct book_req *o, struct sa_err *err)
{
    enum sa_code rc = SA_OK;

    for (int k = 0; k < 3; k++)
        for (int i = 0; rc == SA_OK && i < o->n_rcpt[k]; i++)
            rc = add_list(t, (enum sa_rcpt)k, o->rcpt[k][i], err);
    if (rc == SA_OK)
        rc = set_email(t, SA_EMAIL_SUBJECT, o->subject, err);
    if (rc == SA_OK)
        rc = o->text ? set_email(t, SA_EMAIL_TEXT, o->text, err)
                     : set_from_file(t, SA_EMAIL_TEXT, o->text_file, err);
    if (rc == SA_OK && o->html_file)
        rc = set_from_file(t, SA_EMAIL_HTML, o->html_file, err);
    if (rc == SA_OK && o->html)
        rc = set_email(t, SA_EMAIL_HTML, o->html, err);
    if (rc == SA_OK && o->from)
        rc = set_email(t, SA_EMAIL_FROM, o->from, err);
    if (rc == SA_OK && o->reply_to)
        rc = set_email(t, SA_EMAIL_REPLY_TO, o->reply_to, err);
    return rc;
}

/* Batch lines as task options: the keys are the long flag names, so a line reads like the
 * command it replaces. A value of the wrong type or an unknown key refuses the line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

enum sa_code
batch_template(struct batch *b, struct sa_err *err)
{
    size_t len = 0;

    if (!b->o->template_file)
        return SA_OK;
    return schedule_read_file(b->o->template_file, INPUT_LINE_MAX, &b->tmpl, &len, err);
}

static json_t *
csv_row(struct batch *b, char *line, struct sa_err *err)
{
    char *values[INPUT_FIELDS_MAX];
    int n;

    if (!b->header) { /* the first row names the columns */
        b->header = strdup(line);
        n = b->header ? csv_split(b->header, b->names, INPUT_FIELDS_MAX) : -1;
        if (n < 0)
            sa_fail(err, SA_EINVAL, "the CSV header row does not parse");
        b->n_names = n < 0 ? 0 : n;
        return NULL;
    }
    n = csv_split(line, values, INPUT_FIELDS_MAX);
    if (n != b->n_names) {
        sa_fail(err, SA_EINVAL, "row has %d fields, the header %d", n, b->n_names);
        return NULL;
    }
    return template_fill(b->tmpl, b->names, values, n, err);
}

json_t *
batch_line_json(struct batch *b, char *line, struct sa_err *err)
{
    json_error_t jerr;
    json_t *obj;

    if (b->tmpl)
        return csv_row(b, line, err);
    obj = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj) {
        sa_fail(err, SA_EINVAL, "not JSON: %s", jerr.text);
        return NULL;
    }
    if (!json_is_object(obj)) {
        json_decref(obj);
        sa_fail(err, SA_EINVAL, "a line must be a JSON object");
        return NULL;
    }
    return obj;
}

/* A string, or an array of strings (header, email, cc, bcc). */
static enum sa_code
each_string(json_t *v, const char *key, const char **out, int max, int *n, struct sa_err *err)
{
    size_t i;
    json_t *e;

    if (json_is_string(v)) {
        if (*n >= max)
            return sa_fail(err, SA_EINVAL, "too many \"%s\" values", key);
        out[(*n)++] = json_string_value(v);
        return SA_OK;
    }
    if (!json_is_array(v))
        return sa_fail(err, SA_EINVAL, "\"%s\" must be a string or a list of strings", key);
    json_array_foreach(v, i, e)
    {
        if (!json_is_string(e))
            return sa_fail(err, SA_EINVAL, "\"%s\" must hold strings", key);
        if (*n >= max)
            return sa_fail(err, SA_EINVAL, "too many \"%s\" values", key);
        out[(*n)++] = json_string_value(e);
    }
    return SA_OK;
}

static enum sa_code
set_list(struct sched_opts *o, const char *key, json_t *v, struct sa_err *err)
{
    static const char *kinds[] = {"email", "cc", "bcc"};

    if (!strcmp(key, "header"))
        return each_string(v, key, o->headers, SA_HEADERS_MAX, &o->n_headers, err);
    for (int k = 0; k < 3; k++)
        if (!strcmp(key, kinds[k]))
            return each_string(v, key, o->rcpt[k], 64, &o->n_rcpt[k], err);
    return sa_fail(err, SA_EINVAL, "unknown key \"%.40s\"", key);
}

static const char **
string_field(struct sched_opts *o, const char *key)
{
    static const char *keys[] = {"at",    "webhook", "data",  "id",       "not-after", "subject",
                                 "text",  "html",    "from",  "reply-to", "cron",      "tz",
                                 "until", "count",   "group", NULL};
    const char **fields[] = {&o->at,      &o->webhook, &o->data,  &o->id,    &o->not_after,
                             &o->subject, &o->text,    &o->html,  &o->from,  &o->reply_to,
                             &o->cron,    &o->tz,      &o->until, &o->count, &o->group};

    for (int i = 0; keys[i]; i++)
        if (!strcmp(key, keys[i]))
            return fields[i];
    return NULL;
}

enum sa_code
batch_opts_from_json(struct sched_opts *o, json_t *obj, struct sa_err *err)
{
    const char *key, **field;
    json_t *v;
    enum sa_code rc = SA_OK;

    json_object_foreach(obj, key, v)
    {
        if (!strcmp(key, "at-most-once")) {
            if (!json_is_boolean(v))
                return sa_fail(err, SA_EINVAL, "\"at-most-once\" must be true or false");
            o->at_most_once = json_is_true(v);
        } else if ((field = string_field(o, key))) {
            if (!json_is_string(v))
                return sa_fail(err, SA_EINVAL, "\"%s\" must be a string", key);
            *field = json_string_value(v);
        } else if ((rc = set_list(o, key, v, err)) != SA_OK) {
            return rc;
        }
    }
    return SA_OK;
}

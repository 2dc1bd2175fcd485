/* Turning a booking request (book_req.h) into a task: shared by `sendat schedule`, every line
 * of a batch and the API, so all refuse exactly the same input (invariant 5); each refusal
 * names the field it concerns (sa_fail_field), in the words of the request's door. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "cron.h"
#include "netpolicy.h"
#include "book_req.h"
#include "timeparse.h"

#define PAST_LIMIT_MS (10 * 60 * 1000LL)            /* further back is refused */
#define FUTURE_LIMIT_MS (10 * 366 * 86400 * 1000LL) /* about ten years ahead */

int
book_add_rcpt(struct book_req *o, enum sa_rcpt kind, const char *list)
{
    if (o->n_rcpt[kind] == 64)
        return -1;
    o->rcpt[kind][o->n_rcpt[kind]++] = list;
    return 0;
}

static enum sa_code
check_email(const struct book_req *o, struct sa_err *err)
{
    if (o->webhook)
        return sa_fail(err, SA_EINVAL, "give webhook or email, not both");
    if (o->data || o->data_file || o->n_headers)
        return sa_fail(err, SA_EINVAL, "data, data-file and header are for webhooks");
    if (!o->subject)
        return sa_fail_field(err, SA_EINVAL, "subject", "subject is required for email");
    if (!o->text == !o->text_file)
        return sa_fail(err, SA_EINVAL, "give text or text-file for email");
    return SA_OK;
}

/* How o's messages write a field name before it: "--" for the CLI's flags, nothing for keys. */
static const char *
dash(const struct book_req *o)
{
    return o->key_names ? "" : "--";
}

enum sa_code
book_check(const struct book_req *o, struct sa_err *err)
{
    const char *d = dash(o);

    if (!o->at && !o->cron)
        return sa_fail_field(err, SA_EINVAL, "at",
                             "%sat TIME (or %scron EXPR %stz ZONE) is required", d, d, d);
    if ((o->tz || o->until || o->count) && !o->cron)
        return sa_fail_field(err, SA_EINVAL, "cron", "%stz, %suntil and %scount go with %scron", d,
                             d, d, d);
    if (o->n_rcpt[0] + o->n_rcpt[1] + o->n_rcpt[2] > 0)
        return check_email(o, err);
    if (!o->webhook)
        return sa_fail_field(err, SA_EINVAL, "webhook", "%swebhook URL or %semail ADDR is required",
                             d, d);
    if (o->data && o->data_file)
        return sa_fail_field(err, SA_EINVAL, "data", "give %sdata or %sdata-file, not both", d, d);
    return SA_OK;
}

/* A time field; an error names it ("--at: bad time ..."). */
static enum sa_code
time_opt(const struct book_req *o, const char *key, const char *text, int64_t now, int64_t *out,
         struct sa_err *err)
{
    struct sa_err why = {0};
    enum sa_code rc = sa_time_parse(text, now, out, &why);

    return rc == SA_OK ? SA_OK : sa_fail_field(err, rc, key, "%s%s: %s", dash(o), key, why.msg);
}

static enum sa_code
set_times(struct sa_task *t, const struct book_req *o, int64_t now, struct sa_err *err)
{
    const char *d = dash(o);
    enum sa_code rc = time_opt(o, "at", o->at, now, &t->due_ms, err);

    if (rc != SA_OK)
        return rc;
    if (t->due_ms < now - PAST_LIMIT_MS) {
        char ago[32], when[40], limit[32];
        sa_duration_format(ago, sizeof(ago), now - t->due_ms);
        sa_time_format(when, sizeof(when), t->due_ms);
        sa_duration_format(limit, sizeof(limit), PAST_LIMIT_MS);
        return sa_fail_field(err, SA_EINVAL, "at",
                             "%sat %s is %s in the past (%s; the limit is %s)", d, o->at, ago, when,
                             limit);
    }
    if (t->due_ms > now + FUTURE_LIMIT_MS)
        return sa_fail_field(err, SA_EINVAL, "at", "%sat %s is more than ten years ahead", d,
                             o->at);
    if (o->not_after &&
        (rc = time_opt(o, "not-after", o->not_after, now, &t->not_after_ms, err)) != SA_OK)
        return rc;
    if (o->not_after && t->not_after_ms < t->due_ms) /* the field the API has always named */
        return sa_fail_field(err, SA_EINVAL, "at", "%snot-after %s is before %sat", d, o->not_after,
                             d);
    t->created_ms = now;
    return SA_OK;
}

/* A series: the first occurrence after --at (or now), its id "<occ_ms>-<series>". */
static enum sa_code
series_times(struct sa_task *t, const struct book_req *o, int64_t now, struct sa_err *err)
{
    struct sa_cron *c = NULL;
    int64_t start = now, until = 0;
    long count = 0;
    int flags = 0;
    char *end = NULL;
    const char *d = dash(o);
    enum sa_code rc = SA_OK;

    if (!o->tz)
        return sa_fail_field(err, SA_EINVAL, "cron",
                             "%scron needs %stz ZONE (an IANA name like Asia/Seoul)", d, d);
    if (o->not_after)
        return sa_fail_field(err, SA_EINVAL, "not-after",
                             "%snot-after is for single tasks, not with %scron", d, d);
    if (o->count && ((count = strtol(o->count, &end, 10)) < 1 || *end || count > 1000000))
        return sa_fail_field(err, SA_EINVAL, "count", "%scount %.20s must be 1 to 1000000", d,
                             o->count);
    if (o->at && (rc = time_opt(o, "at", o->at, now, &start, err)) == SA_OK)
        start -= 1; /* --at itself may be the first fire */
    if (rc == SA_OK && o->until)
        rc = time_opt(o, "until", o->until, now, &until, err);
    if (rc == SA_OK) /* before the recurrence, which parses it too but names no field */
        rc = sa_err_field(err, sa_cron_parse(&c, o->cron, err), "cron");
    if (rc == SA_OK)
        rc = sa_task_set_recurrence(t, o->cron, o->tz, until, (int)count, err);
    if (rc == SA_OK)
        rc = sa_cron_next(c, o->tz, start, &t->due_ms, &flags, err);
    sa_cron_free(c);
    if (rc == SA_OK && until && t->due_ms > until)
        rc = sa_fail_field(err, SA_EINVAL, "until", "the first fire comes after %suntil", d);
    if (rc != SA_OK)
        return rc;
    if (o->id && (!sa_layout_id_valid(o->id) || strlen(o->id) > SA_SERIES_ID_MAX))
        return sa_fail_field(err, SA_EINVAL, "id",
                             "%sid \"%.70s\" must be 1-%d of A-Z a-z 0-9 _ - for a series", d,
                             o->id, SA_SERIES_ID_MAX);
    if (o->id)
        snprintf(t->series_id, sizeof(t->series_id), "%s", o->id);
    else
        sa_layout_series_new(t->series_id, sizeof(t->series_id));
    sa_layout_occurrence_id(t->id, sizeof(t->id), t->series_id, t->due_ms);
    t->index = 1;
    t->created_ms = now;
    return SA_OK;
}

/* The last destination this thread let through, and the policy it passed: a batch books the
 * same URL again and again, and the policy lists do not change under a running producer. */
static _Thread_local struct {
    char url[SA_URL_MAX + 1], allow[512], deny[512];
} passed;

static int
passed_before(const char *url, const char *allow, const char *deny)
{
    return passed.url[0] && !strcmp(url, passed.url) && !strcmp(allow, passed.allow) &&
           !strcmp(deny, passed.deny);
}

static void
remember_passed(const char *url, const char *allow, const char *deny)
{
    if (strlen(url) < sizeof(passed.url) && strlen(allow) < sizeof(passed.allow) &&
        strlen(deny) < sizeof(passed.deny)) {
        strcpy(passed.url, url);
        strcpy(passed.allow, allow);
        strcpy(passed.deny, deny);
    }
}

/* A literal address the consumers would refuse is refused here already, with exit 2 (the
 * consumers judge names, and every address again, when they connect). The policy is read
 * per task (two short lists, and a bad one is named on the line that meets it) unless the
 * same URL passed the same lists just before. */
static enum sa_code
check_destination(const char *url, struct sa_err *err)
{
    struct sa_netpolicy *p = NULL;
    const char *allow = getenv("SENDAT_WEBHOOK_ALLOW"), *deny = getenv("SENDAT_WEBHOOK_DENY");
    enum sa_code rc;

    if (passed_before(url, allow ? allow : "", deny ? deny : ""))
        return SA_OK;
    rc = sa_netpolicy_new(&p, allow, deny, err); /* a bad list is the server's, no field */
    if (rc == SA_OK)
        rc = sa_err_field(err, sa_netpolicy_check_url(p, url, err), "webhook");
    sa_netpolicy_free(p);
    if (rc == SA_OK)
        remember_passed(url, allow ? allow : "", deny ? deny : "");
    return rc;
}

/* --group: a name a cancel can later use for all the group's tasks (not a series: its
 * occurrences are not booked one by one). */
static enum sa_code
set_group(struct sa_task *t, const struct book_req *o, struct sa_err *err)
{
    if (!o->group)
        return SA_OK;
    if (!sa_layout_id_valid(o->group))
        return sa_fail_field(err, SA_EINVAL, "group",
                             "%sgroup \"%.70s\" must be 1-%d of A-Z a-z 0-9 _ -", dash(o), o->group,
                             SA_ID_MAX);
    if (o->cron) /* the field the API has always named */
        return sa_fail_field(err, SA_EINVAL, "cron", "%sgroup is for single tasks, not with %scron",
                             dash(o), dash(o));
    snprintf(t->group, sizeof(t->group), "%s", o->group);
    return SA_OK;
}

enum sa_code
book_build_task(struct sa_task *t, const struct book_req *o, const uint8_t *body, size_t body_len,
                int64_t now, struct sa_err *err)
{
    enum sa_code rc = o->cron ? series_times(t, o, now, err) : set_times(t, o, now, err);

    if (rc == SA_OK && o->webhook) {
        rc = sa_err_field(err, sa_task_set_url(t, o->webhook, err), "webhook");
        if (rc == SA_OK)
            rc = check_destination(o->webhook, err);
        for (int i = 0; rc == SA_OK && i < o->n_headers; i++)
            rc = sa_err_field(err, sa_task_add_header_line(t, o->headers[i], err), "header");
        if (rc == SA_OK)
            rc = sa_err_field(err, sa_task_set_body(t, body, body_len, err), "data");
    } else if (rc == SA_OK) {
        rc = book_build_email(t, o, err);
    }
    if (rc != SA_OK)
        return rc;
    if (!o->cron && o->id && !sa_layout_id_valid(o->id))
        return sa_fail_field(err, SA_EINVAL, "id", "%sid \"%.70s\" must be 1-%d of A-Z a-z 0-9 _ -",
                             dash(o), o->id, SA_ID_MAX);
    if (!o->cron && o->id) /* a series named its occurrence already */
        snprintf(t->id, sizeof(t->id), "%s", o->id);
    else if (!o->cron) {
        sa_layout_id_new(t->id, sizeof(t->id), t->due_ms);
        t->id_generated = 1;
    }
    t->at_most_once = o->at_most_once;
    if ((rc = set_group(t, o, err)) != SA_OK)
        return rc;
    return sa_task_validate(t, err);
}

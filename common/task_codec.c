/* The task module's codec half: struct sa_task <-> protobuf bytes <-> sealed envelope, and a
 * deep copy as a round trip through the bytes.
 * protobuf-c's unpack/free_unpacked stay here; decode copies into struct sa_task so no
 * generated type leaks out. Plaintext is wiped before it is freed. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "envelope.h"
#include "sendat.pb-c.h"
#include "task.h"

#define FEW 8              /* headers or attempts encoded without an allocation */
#define SEAL_ON_STACK 4096 /* a task that packs into this many bytes is sealed from the stack */

struct pb_task {
    Sendat__Task t;
    Sendat__Webhook wh;
    Sendat__Email em;
    Sendat__Recurrence rec;
    Sendat__Header *hdrs;
    Sendat__Header **hdr_ptrs;
    Sendat__Attempt *atts;
    Sendat__Attempt **att_ptrs;
    /* where a task with few headers and attempts keeps them: no allocation per encode */
    Sendat__Header few_hdrs[FEW];
    Sendat__Header *few_hdr_ptrs[FEW];
    Sendat__Attempt few_atts[FEW];
    Sendat__Attempt *few_att_ptrs[FEW];
};

static char *
or_empty(char *s)
{
    return s ? s : (char *)"";
}

static void
fill_email(Sendat__Email *em, const struct sa_task *t)
{
    sendat__email__init(em);
    em->n_to = t->n_rcpt[SA_RCPT_TO];
    em->to = t->rcpt[SA_RCPT_TO];
    em->n_cc = t->n_rcpt[SA_RCPT_CC];
    em->cc = t->rcpt[SA_RCPT_CC];
    em->n_bcc = t->n_rcpt[SA_RCPT_BCC];
    em->bcc = t->rcpt[SA_RCPT_BCC];
    em->from = or_empty(t->from);
    em->reply_to = or_empty(t->reply_to);
    em->subject = or_empty(t->subject);
    em->text = or_empty(t->text);
    em->html = or_empty(t->html);
}

static enum sa_code
fill_pb(struct pb_task *p, const struct sa_task *t, struct sa_err *err)
{
    sendat__task__init(&p->t);
    sendat__webhook__init(&p->wh);
    p->t.id = (char *)t->id;
    p->t.due_ms = t->due_ms;
    p->t.not_after_ms = t->not_after_ms;
    p->t.attempt = t->attempt;
    p->t.created_ms = t->created_ms;
    p->t.first_due_ms = t->first_due_ms;
    p->t.first_started_ms = t->first_started_ms;
    p->t.delivery = t->at_most_once ? SENDAT__TASK__DELIVERY__AT_MOST_ONCE
                                    : SENDAT__TASK__DELIVERY__AT_LEAST_ONCE;
    if (t->n_headers < FEW) {
        p->hdrs = p->few_hdrs;
        p->hdr_ptrs = p->few_hdr_ptrs;
    } else {
        p->hdrs = calloc(t->n_headers + 1, sizeof(*p->hdrs));
        p->hdr_ptrs = calloc(t->n_headers + 1, sizeof(*p->hdr_ptrs));
    }
    if (t->n_attempts < FEW) {
        p->atts = p->few_atts;
        p->att_ptrs = p->few_att_ptrs;
    } else {
        p->atts = calloc(t->n_attempts + 1, sizeof(*p->atts));
        p->att_ptrs = calloc(t->n_attempts + 1, sizeof(*p->att_ptrs));
    }
    if (!p->hdrs || !p->hdr_ptrs || !p->atts || !p->att_ptrs)
        return sa_fail(err, SA_ENOMEM, "no memory to encode a task");
    for (size_t i = 0; i < t->n_headers; i++) {
        sendat__header__init(&p->hdrs[i]);
        p->hdrs[i].name = t->headers[i].name;
        p->hdrs[i].value = t->headers[i].value;
        p->hdr_ptrs[i] = &p->hdrs[i];
    }
    for (size_t i = 0; i < t->n_attempts; i++) {
        sendat__attempt__init(&p->atts[i]);
        p->atts[i].at_ms = t->attempt_at_ms[i];
        p->atts[i].error = t->attempt_error[i];
        p->att_ptrs[i] = &p->atts[i];
    }
    if (t->cron) {
        sendat__recurrence__init(&p->rec);
        p->rec.cron = t->cron;
        p->rec.tz = or_empty(t->tz);
        p->rec.until_ms = t->until_ms;
        p->rec.count = t->count;
        p->rec.index = t->index;
        p->t.recurrence = &p->rec;
        p->t.series_id = (char *)t->series_id;
    }
    if (t->group[0])
        p->t.group = (char *)t->group;
    p->t.n_attempts = t->n_attempts;
    p->t.attempts = p->att_ptrs;
    if (t->channel == SA_CHANNEL_EMAIL) {
        fill_email(&p->em, t);
        p->t.channel_case = SENDAT__TASK__CHANNEL_EMAIL;
        p->t.email = &p->em;
    }
    if (t->channel == SA_CHANNEL_WEBHOOK) {
        p->wh.url = t->url ? t->url : "";
        p->wh.n_headers = t->n_headers;
        p->wh.headers = p->hdr_ptrs;
        p->wh.body.data = t->body;
        p->wh.body.len = t->body_len;
        p->t.channel_case = SENDAT__TASK__CHANNEL_WEBHOOK;
        p->t.webhook = &p->wh;
    }
    return SA_OK;
}

static void
free_pb(struct pb_task *p)
{
    if (p->hdrs != p->few_hdrs) {
        free(p->hdrs);
        free(p->hdr_ptrs);
    }
    if (p->atts != p->few_atts) {
        free(p->atts);
        free(p->att_ptrs);
    }
}

enum sa_code
sa_task_encode(const struct sa_task *t, uint8_t **out, size_t *len, struct sa_err *err)
{
    struct pb_task p = {0};
    enum sa_code rc;

    *out = NULL;
    rc = fill_pb(&p, t, err);
    if (rc != SA_OK)
        goto out;
    *len = sendat__task__get_packed_size(&p.t);
    *out = malloc(*len ? *len : 1);
    if (!*out) {
        rc = sa_fail(err, SA_ENOMEM, "no memory to encode a task of %zu bytes", *len);
        goto out;
    }
    sendat__task__pack(&p.t, *out);
out:
    free_pb(&p);
    return rc;
}

static enum sa_code
copy_webhook(struct sa_task *t, const Sendat__Webhook *wh, struct sa_err *err)
{
    enum sa_code rc;

    t->channel = SA_CHANNEL_WEBHOOK;
    t->url = strdup(wh->url);
    if (!t->url)
        return sa_fail(err, SA_ENOMEM, "no memory to decode a task");
    if (wh->n_headers > SA_HEADERS_MAX)
        return sa_fail(err, SA_EINVAL, "task has %zu headers (limit %d)", wh->n_headers,
                       SA_HEADERS_MAX);
    for (size_t i = 0; i < wh->n_headers; i++)
        if ((rc = sa_task_add_header(t, wh->headers[i]->name, wh->headers[i]->value, err)) != SA_OK)
            return rc;
    return sa_task_set_body(t, wh->body.data, wh->body.len, err);
}

static enum sa_code
copy_list(struct sa_task *t, enum sa_rcpt kind, char **list, size_t n, struct sa_err *err)
{
    enum sa_code rc = SA_OK;

    for (size_t i = 0; rc == SA_OK && i < n; i++)
        rc = sa_task_add_rcpt(t, kind, list[i], err);
    return rc;
}

static enum sa_code
copy_email(struct sa_task *t, const Sendat__Email *em, struct sa_err *err)
{
    const char *fields[] = {em->from, em->reply_to, em->subject, em->text, em->html};
    enum sa_code rc;

    t->channel = SA_CHANNEL_EMAIL;
    if (em->n_to + em->n_cc + em->n_bcc > SA_RCPT_MAX)
        return sa_fail(err, SA_EINVAL, "more than %d recipients", SA_RCPT_MAX);
    if ((rc = copy_list(t, SA_RCPT_TO, em->to, em->n_to, err)) != SA_OK ||
        (rc = copy_list(t, SA_RCPT_CC, em->cc, em->n_cc, err)) != SA_OK ||
        (rc = copy_list(t, SA_RCPT_BCC, em->bcc, em->n_bcc, err)) != SA_OK)
        return rc;
    for (int f = SA_EMAIL_FROM; f <= SA_EMAIL_HTML; f++)
        if (fields[f] && *fields[f] &&
            (rc = sa_task_set_email(t, (enum sa_email_field)f, fields[f], err)) != SA_OK)
            return rc;
    return SA_OK;
}

static enum sa_code
copy_recurrence(struct sa_task *t, const Sendat__Task *m, struct sa_err *err)
{
    const Sendat__Recurrence *r = m->recurrence;

    if (strlen(m->series_id) > SA_ID_MAX)
        return sa_fail(err, SA_EINVAL, "series id is longer than %d", SA_ID_MAX);
    memcpy(t->series_id, m->series_id, strlen(m->series_id) + 1);
    t->index = r->index;
    t->cron = strdup(r->cron);
    t->tz = strdup(r->tz);
    t->until_ms = r->until_ms;
    t->count = r->count;
    return t->cron && t->tz ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory to decode a task");
}

static enum sa_code
copy_from_pb(struct sa_task *t, const Sendat__Task *m, struct sa_err *err)
{
    enum sa_code rc;

    if (strlen(m->id) > SA_ID_MAX)
        return sa_fail(err, SA_EINVAL, "task id is longer than %d", SA_ID_MAX);
    memcpy(t->id, m->id, strlen(m->id) + 1);
    if (m->group[0] && !sa_layout_id_valid(m->group))
        return sa_fail(err, SA_EINVAL, "task group is not 1-%d of A-Z a-z 0-9 _ -", SA_ID_MAX);
    memcpy(t->group, m->group, strlen(m->group) + 1);
    t->due_ms = m->due_ms;
    t->not_after_ms = m->not_after_ms;
    t->created_ms = m->created_ms;
    t->first_due_ms = m->first_due_ms;
    t->first_started_ms = m->first_started_ms;
    t->attempt = m->attempt;
    t->at_most_once = m->delivery == SENDAT__TASK__DELIVERY__AT_MOST_ONCE;
    t->channel = SA_CHANNEL_NONE;
    if (m->n_attempts > SA_ATTEMPTS_MAX)
        return sa_fail(err, SA_EINVAL, "task lists %zu failed attempts (limit %d)", m->n_attempts,
                       SA_ATTEMPTS_MAX);
    for (size_t i = 0; i < m->n_attempts; i++)
        if ((rc = sa_task_add_attempt(t, m->attempts[i]->at_ms, m->attempts[i]->error, err)) !=
            SA_OK)
            return rc;
    if (m->recurrence && (rc = copy_recurrence(t, m, err)) != SA_OK)
        return rc;
    if (m->channel_case == SENDAT__TASK__CHANNEL_WEBHOOK)
        return copy_webhook(t, m->webhook, err);
    if (m->channel_case == SENDAT__TASK__CHANNEL_EMAIL)
        return copy_email(t, m->email, err);
    return SA_OK;
}

enum sa_code
sa_task_decode(const uint8_t *buf, size_t len, struct sa_task **out, struct sa_err *err)
{
    Sendat__Task *m = NULL;
    struct sa_task *t = NULL;
    enum sa_code rc;

    *out = NULL;
    m = sendat__task__unpack(NULL, len, buf);
    if (!m)
        return sa_fail(err, SA_EINVAL, "task does not decode (%zu bytes)", len);
    rc = sa_task_new(&t, err);
    if (rc == SA_OK)
        rc = copy_from_pb(t, m, err);
    sendat__task__free_unpacked(m, NULL);
    if (rc != SA_OK) {
        sa_task_free(t);
        return rc;
    }
    *out = t;
    return SA_OK;
}

enum sa_code
sa_task_seal(const struct sa_keyring *ring, const struct sa_task *t, uint8_t **env, size_t *env_len,
             struct sa_err *err)
{
    uint8_t stack[SEAL_ON_STACK], *plain = NULL;
    struct pb_task p;
    size_t len = 0;
    enum sa_code rc;

    *env = NULL;
    memset(&p, 0, sizeof(p));
    rc = fill_pb(&p, t, err);
    if (rc == SA_OK) {
        len = sendat__task__get_packed_size(&p.t);
        plain = len <= sizeof(stack) ? stack : malloc(len ? len : 1);
        if (!plain)
            rc = sa_fail(err, SA_ENOMEM, "no memory to encode a task of %zu bytes", len);
    }
    if (rc == SA_OK) {
        sendat__task__pack(&p.t, plain);
        rc = sa_envelope_seal(ring, t->id, plain, len, env, env_len, err);
        sodium_memzero(plain, len);
    }
    if (plain != stack)
        free(plain);
    free_pb(&p);
    return rc;
}

enum sa_code
sa_task_open(const struct sa_keyring *ring, const char *id, const uint8_t *env, size_t len,
             struct sa_task **out, struct sa_err *err)
{
    uint8_t *plain = NULL;
    size_t plain_len = 0;
    struct sa_task *t = NULL;
    enum sa_code rc;

    *out = NULL;
    rc = sa_envelope_open(ring, id, env, len, &plain, &plain_len, err);
    if (rc != SA_OK)
        return rc;
    rc = sa_task_decode(plain, plain_len, &t, err);
    sa_envelope_free_plain(plain, plain_len);
    if (rc == SA_OK && strcmp(t->id, id) != 0)
        rc = sa_fail(err, SA_ECRYPTO, "sealed id %.64s differs from subject id %.64s", t->id, id);
    if (rc == SA_OK)
        rc = sa_task_validate(t, err);
    if (rc != SA_OK) {
        sa_task_free(t);
        return rc;
    }
    *out = t;
    return SA_OK;
}

enum sa_code
sa_task_copy(const struct sa_task *t, struct sa_task **out, struct sa_err *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    enum sa_code rc = sa_task_encode(t, &buf, &len, err);

    *out = NULL;
    if (rc == SA_OK)
        rc = sa_task_decode(buf, len, out, err);
    if (buf)
        sodium_memzero(buf, len); /* the encoded task is plaintext: recipients and bodies */
    free(buf);
    return rc;
}

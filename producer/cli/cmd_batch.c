/* sendat schedule --batch: many tasks from NDJSON lines or CSV rows through a template, with
 * PubAcks outstanding in bulk (the scheduling rate is the broker's, not a round trip per
 * task). Every line goes through the same checks as the single command; a bad line is
 * reported with its number and skipped, or with --strict nothing is published at all. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "dupcheck.h"
#include "group.h"
#include "input.h"
#include "publish.h"
#include "schedule.h"
#include "series.h"
#include "tasklimit.h"
#include "timeparse.h"

int
batch_check_opts(const struct sched_cmd *c)
{
    const struct book_req *o = &c->req;

    if (o->at || o->cron || o->tz || o->webhook || o->n_rcpt[0] || o->n_rcpt[1] || o->n_rcpt[2] ||
        o->data || o->data_file || o->n_headers || o->subject || o->text || o->id)
        return cli_error(EXIT_USAGE,
                         "schedule: --batch takes the tasks from the file; give no task flags");
    return EXIT_OK;
}

static void
refuse(struct batch *b, const char *why)
{
    if (b->refused < BATCH_REFUSALS_KEPT) {
        b->refusals[b->refused].line = b->line;
        snprintf(b->refusals[b->refused].why, sizeof(b->refusals[0].why), "%s", why);
    }
    b->refused++;
}

static enum sa_code
prepare(struct batch *b, const struct book_req *o, struct prepared *p, struct sa_err *err)
{
    enum sa_code rc = book_check(o, err);
    int64_t now = sa_now_ms();

    memset(p, 0, sizeof(*p));
    p->line = b->line;
    p->no_id = !o->id && !o->cron;
    if (rc == SA_OK)
        rc = sa_task_new(&p->t, err);
    if (rc == SA_OK)
        rc = book_build_task(p->t, o, (const uint8_t *)o->data, o->data ? strlen(o->data) : 0, now,
                             err);
    if (rc == SA_OK && p->t->group[0] && !b->groups_ttl_known &&
        (rc = group_ttl(b->n, &b->groups_ttl_ms, err)) == SA_OK)
        b->groups_ttl_known = 1;
    if (rc == SA_OK)
        rc = group_fits(p->t, now, b->groups_ttl_ms, err);
    if (rc == SA_OK && p->t->cron) /* room first: a series registered stays registered */
        rc = tasklimit_admit(b->n, sa_layout_shard_of(&b->n->layout, p->t->id), 0, err);
    if (rc == SA_OK && p->t->cron)
        rc = series_register(b->n, p->t, err); /* SA_EEXIST: scheduled already, publish nothing */
    if (rc == SA_EEXIST && batch_booked(b, b->line, p->t->series_id, err) != SA_OK)
        rc = SA_ENOMEM;
    if (rc == SA_OK)
        rc = sa_task_seal(b->ring, p->t, &p->env, &p->len, err);
    if (rc != SA_OK) {
        sa_task_free(p->t);
        p->t = NULL;
    }
    return rc;
}

enum sa_code
batch_booked(struct batch *b, long line, const char *id, struct sa_err *err)
{
    size_t len;

    if (b->n_booked == b->cap_booked) {
        size_t cap = b->cap_booked ? b->cap_booked * 2 : 1024;
        struct booked *grown = realloc(b->booked, cap * sizeof(*grown));
        if (!grown)
            return sa_fail(err, SA_ENOMEM, "no memory to remember %zu ids", b->n_booked);
        b->booked = grown;
        b->cap_booked = cap;
    }
    len = strnlen(id, SA_ID_MAX); /* as snprintf would cut it, without its formatting per id */
    b->booked[b->n_booked].line = line;
    memcpy(b->booked[b->n_booked].id, id, len);
    b->booked[b->n_booked].id[len] = '\0';
    b->n_booked++;
    return SA_OK;
}

static enum sa_code
send_prepared(struct batch *b, struct prepared *p, struct sa_err *err)
{
    enum sa_code rc = publisher_send(b->pub, p->t, p->env, p->len, sa_now_ms(), p->line, err);

    if (rc == SA_OK) {
        b->sent++;
        b->no_id += p->no_id;
        rc = batch_booked(b, p->line, p->t->cron ? p->t->series_id : p->t->id, err);
    }
    sa_task_free(p->t);
    free(p->env);
    p->t = NULL;
    p->env = NULL;
    return rc;
}

static enum sa_code
keep(struct batch *b, struct prepared *p, struct sa_err *err)
{
    if (b->n_kept == b->cap_kept) {
        size_t cap = b->cap_kept ? b->cap_kept * 2 : 1024;
        struct prepared *k = realloc(b->kept, cap * sizeof(*k));
        if (!k)
            return sa_fail(err, SA_ENOMEM, "--strict: no memory to hold %zu tasks", b->n_kept);
        b->kept = k;
        b->cap_kept = cap;
    }
    b->kept[b->n_kept++] = *p;
    return SA_OK;
}

/* Files line's id as taken (SA_ECONFLICT), used and gone (SA_ENOTFOUND) or not read. */
static void
file_dup(struct batch *b, long line, const char *id, enum sa_code rc, const char *why)
{
    long i = b->taken + b->unverified + b->unchecked;

    b->taken += rc == SA_ECONFLICT;
    b->unverified += rc == SA_ENOTFOUND;
    b->unchecked += rc != SA_ECONFLICT && rc != SA_ENOTFOUND;
    if (i >= BATCH_REFUSALS_KEPT)
        return;
    b->dups[i].line = line;
    b->dups[i].code = rc;
    snprintf(b->dups[i].id, sizeof(b->dups[i].id), "%s", id);
    snprintf(b->dups[i].why, sizeof(b->dups[i].why), "%s", why);
}

/* Reads back what each duplicate PubAck so far points at (dupcheck.h), one round trip each:
 * only ids scheduled before cost it. */
static void
check_dups(struct batch *b)
{
    uint64_t seq;
    natsMsg *msg;
    long line;

    while (publisher_next_dup(b->pub, &line, &seq, &msg)) {
        struct sa_err err = {0};
        enum sa_code rc = dupcheck_verify_sealed(b->n, b->ring, msg, seq, &err);

        struct sa_place place = {0};

        (void)!sa_layout_parse_subject(&place, natsMsg_GetSubject(msg), NULL);
        if (rc == SA_OK)
            b->already++;
        else
            file_dup(b, line, place.id, rc, err.msg);
        natsMsg_Destroy(msg);
    }
}

/* Asks, for every kept line that names its own id, whether sendat remembers that id as
 * finished (dupcheck_gone_many): such a line is filed as gone (exit 6) and its task freed, so
 * that nothing is answered as booked that would never be sent. Returns the lines filed. */
static long
drop_gone(struct batch *b, enum sa_code *rc, struct sa_err *err)
{
    struct gone_ask *asks = NULL;
    size_t *at = NULL, count = 0, named = 0;
    long dropped = 0;

    for (size_t i = 0; i < b->n_kept; i++)
        named += !b->kept[i].no_id && !b->kept[i].t->cron;
    if (!named) /* nothing to ask: no allocation (a large one consolidates the heap each run) */
        return 0;
    asks = calloc(named, sizeof(*asks));
    at = calloc(named, sizeof(*at));
    if (!asks || !at) {
        *rc = sa_fail(err, SA_ENOMEM, "no memory to check %zu ids", b->n_kept);
        goto out;
    }
    for (size_t i = 0; i < b->n_kept; i++)
        if (!b->kept[i].no_id && !b->kept[i].t->cron) {
            asks[count] =
                (struct gone_ask){.id = b->kept[i].t->id, .booked_ms = b->kept[i].t->created_ms};
            at[count++] = i;
        }
    if ((*rc = dupcheck_gone_many(b->n, asks, count, err)) != SA_OK)
        goto out;
    for (size_t k = 0; k < count; k++) {
        struct prepared *p = &b->kept[at[k]];
        if (asks[k].rc == SA_OK)
            continue;
        file_dup(b, p->line, p->t->id, asks[k].rc, asks[k].err.msg);
        sa_task_free(p->t);
        free(p->env);
        p->t = NULL;
        p->env = NULL;
        dropped++;
    }
out:
    free(asks);
    free(at);
    return dropped;
}

/* Publishes the kept lines while rc is SA_OK (with --strict: only if no line was refused or
 * gone) and frees them. Without --strict lines are kept BATCH_SEND_RUN at a time: published in
 * one run, they leave in few socket writes instead of one each. */
static enum sa_code
publish_kept(struct batch *b, enum sa_code rc, struct sa_err *err)
{
    long gone = rc == SA_OK && !(b->strict && b->refused) ? drop_gone(b, &rc, err) : 0;

    for (size_t i = 0; i < b->n_kept; i++) {
        if (rc == SA_OK && b->kept[i].t && !(b->strict && (b->refused || gone)))
            rc = send_prepared(b, &b->kept[i], err);
        check_dups(b);
        sa_task_free(b->kept[i].t);
        free(b->kept[i].env);
    }
    b->n_kept = 0;
    return rc;
}

/* One line: refused (counted), or published / kept. SA_ENATS etc. only for broker failures.
 * A flat NDJSON line is read without jansson (batch_line_flat); every other line, bad ones
 * too, goes through jansson, which gives the reasons. */
static enum sa_code
one_line(struct batch *b, char *line, struct sa_err *fatal)
{
    struct sa_err err = {0};
    struct book_req o = {0};
    struct prepared p;
    json_t *obj = NULL;
    enum sa_code rc = SA_OK;

    if (b->tmpl || !batch_line_flat(&o, line, b->flat)) {
        obj = batch_line_json(b, line, &err);
        if (!obj) {
            if (err.code != SA_OK)
                refuse(b, err.msg);
            return SA_OK; /* a refusal, or the CSV header */
        }
        rc = batch_opts_from_json(&o, obj, &err);
    }
    if (rc == SA_OK)
        rc = prepare(b, &o, &p, &err);
    json_decref(obj);
    if (rc == SA_EEXIST) {
        b->series_again++;
        return SA_OK;
    }
    if (rc == SA_ENOMEM || rc == SA_EFULL)
        return sa_fail(fatal, rc, "line %ld: %s", b->line, err.msg);
    if (rc != SA_OK) {
        refuse(b, err.msg);
        return SA_OK;
    }
    rc = keep(b, &p, fatal);
    if (rc == SA_OK && !b->strict && b->n_kept >= BATCH_SEND_RUN)
        rc = publish_kept(b, rc, fatal);
    return rc;
}

static enum sa_code
read_all(struct batch *b, struct sa_err *err)
{
    char *line = NULL;
    size_t len = 0;
    int too_long = 0;
    enum sa_code rc = SA_OK;

    while (rc == SA_OK && input_next(b->in, &line, &len, &too_long)) {
        b->line++;
        if (too_long)
            refuse(b, "line is longer than 1 MiB");
        else if (len > 0 && line[strspn(line, " \t")])
            rc = one_line(b, line, err);
        check_dups(b);
        batch_progress(b, 0);
    }
    return rc;
}

static int
run(struct batch *b)
{
    struct sa_err err = {0};
    enum sa_code rc = read_all(b, &err);

    rc = publish_kept(b, rc, &err); /* what is kept is freed in any case */
    if (rc == SA_OK)
        rc = publisher_finish(b->pub, 60000, &err);
    b->full = rc == SA_EFULL; /* the lines before were booked; this one and the rest were not */
    check_dups(b);
    batch_progress(b, 1);
    return batch_summary(b, rc == SA_OK ? NULL : err.msg);
}

int
batch_run(const struct sched_cmd *o)
{
    struct batch b = {.template_file = o->template_file,
                      .strict = o->strict,
                      .json = o->cli.json,
                      .tty = isatty(STDERR_FILENO),
                      .started_ms = sa_now_ms()};
    struct sa_err err = {0};
    int code;

    b.total = o->batch ? input_count_lines(o->batch) : -1;
    if (o->template_file && b.total > 0)
        b.total--; /* the CSV header row is no task */
    if (batch_template(&b, &err) != SA_OK) {
        code = cli_error(EXIT_USAGE, "schedule: --template-file: %s", err.msg);
        goto out;
    }
    if ((code = cli_keyring(&o->cli, &b.ring)) != EXIT_OK ||
        (code = cli_connect(&o->cli, &b.n)) != EXIT_OK)
        goto out;
    b.flat = malloc(INPUT_LINE_MAX + 1);
    if (!b.flat) {
        code = cli_error(EXIT_FAIL, "schedule: no memory to read a line");
        goto out;
    }
    if (input_open(&b.in, o->batch, &err) != SA_OK ||
        publisher_new(&b.pub, b.n, 4096, &err) != SA_OK) {
        code = cli_error(cli_exit_for(err.code), "schedule: %s", err.msg);
        goto out;
    }
    if (b.tmpl) /* --template: the input is CSV */
        input_set_csv(b.in);
    code = run(&b);
out:
    input_close(b.in);
    publisher_free(b.pub);
    cli_close(b.n);
    sa_keyring_free(b.ring);
    free(b.tmpl);
    free(b.header);
    free(b.booked);
    free(b.kept);
    free(b.flat);
    return code;
}

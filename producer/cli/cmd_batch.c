/* sendat schedule --batch: many tasks from NDJSON lines or CSV rows through a template, booked
 * by the batch booker (book/booker.h: PubAcks outstanding in bulk, so the scheduling rate is
 * the broker's, not a round trip per task). Every line goes through the same checks as the
 * single command; a bad line is reported with its number and skipped, or with --strict nothing
 * is published at all. This file reads the lines and files what the booker says of each for
 * the summary (cmd_batch_report.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "booker.h"
#include "input.h"
#include "schedule.h"
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

/* The task a line's request describes, built and checked. */
static enum sa_code
build(const struct book_req *o, struct sa_task **t, struct sa_err *err)
{
    enum sa_code rc = book_check(o, err);

    *t = NULL;
    if (rc == SA_OK)
        rc = sa_task_new(t, err);
    if (rc == SA_OK)
        rc = book_build_task(*t, o, (const uint8_t *)o->data, o->data ? strlen(o->data) : 0,
                             sa_now_ms(), err);
    if (rc != SA_OK) {
        sa_task_free(*t);
        *t = NULL;
    }
    return rc;
}

/* Remembers that line booked id (for the ids printed). */
static enum sa_code
booked(struct batch *b, long line, const char *id, struct sa_err *err)
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

/* The booker's word on a line (booker.h): counted and filed for the summary. A line that
 * could not be published stops the batch (the lines before it were booked). The failed
 * PubAcks the summary reads from the booker itself. */
static enum sa_code
report(void *ctx, const struct booker_outcome *o, struct sa_err *err)
{
    struct batch *b = ctx;

    switch (o->what) {
    case BOOKER_SENT:
        b->no_id += !o->id_given && !o->series;
        return booked(b, o->line, o->id, err);
    case BOOKER_NOT_SENT:
        *err = *o->err;
        return o->rc;
    case BOOKER_GONE:
    case BOOKER_DUP:
        file_dup(b, o->line, o->id, o->rc, o->err->msg);
        return SA_OK;
    case BOOKER_ALREADY:
        b->already++;
        return SA_OK;
    case BOOKER_FAILED:
        return SA_OK;
    }
    return SA_OK;
}

/* One line: refused (counted), or held by the booker. SA_ENOMEM, SA_EFULL etc. only for what
 * stops the batch. A flat NDJSON line is read without jansson (batch_line_flat); every other
 * line, bad ones too, goes through jansson, which gives the reasons. */
static enum sa_code
one_line(struct batch *b, char *line, struct sa_err *fatal)
{
    struct sa_err err = {0};
    struct book_req o = {0};
    struct sa_task *t = NULL;
    char id[SA_ID_MAX + 1];
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
        rc = build(&o, &t, &err);
    if (rc == SA_OK)
        rc = booker_add(b->bk, b->line, t, o.id != NULL, id, &err);
    json_decref(obj);
    if (rc == SA_EEXIST) { /* a series scheduled before: nothing published */
        b->series_again++;
        return booked(b, b->line, id, fatal);
    }
    if (rc == SA_ENOMEM || rc == SA_EFULL)
        return sa_fail(fatal, rc, "line %ld: %s", b->line, err.msg);
    if (rc != SA_OK)
        refuse(b, err.msg);
    return SA_OK;
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
        if (rc == SA_OK)
            rc = booker_step(b->bk, err);
        batch_progress(b, 0);
    }
    return rc;
}

/* Reads every line, then publishes what is held (with --strict: only if no line was refused);
 * prints the summary and returns the exit code. */
static int
run(struct batch *b)
{
    struct sa_err err = {0};
    enum sa_code rc = read_all(b, &err);

    if (rc == SA_OK)
        rc = booker_finish(b->bk, !(b->strict && b->refused), &err);
    else /* nothing more goes out; the duplicates so far are still read back */
        (void)!booker_finish(b->bk, 0, &(struct sa_err){0});
    b->full = rc == SA_EFULL; /* the lines before were booked; this one and the rest were not */
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
        booker_new(&b.bk, b.n, &b.ring, NULL, b.strict, report, &b, &err) != SA_OK) {
        code = cli_error(cli_exit_for(err.code), "schedule: %s", err.msg);
        goto out;
    }
    if (b.tmpl) /* --template: the input is CSV */
        input_set_csv(b.in);
    code = run(&b);
out:
    input_close(b.in);
    booker_free(b.bk);
    cli_close(b.n);
    sa_keyring_free(b.ring);
    free(b.tmpl);
    free(b.header);
    free(b.booked);
    free(b.flat);
    return code;
}

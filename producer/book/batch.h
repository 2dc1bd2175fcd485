/* The state of one `sendat schedule --batch` run, shared by cli/cmd_batch.c (reading and
 * filing what the booker says), batch_json.c (a line to a task's request) and
 * cli/cmd_batch_report.c (progress and summary; those two declare theirs in cli/schedule.h). */
#ifndef BATCH_H
#define BATCH_H

#include <jansson.h>

#include "book_req.h"
#include "input.h"

#define BATCH_REFUSALS_KEPT 100

struct batch {
    const char *template_file; /* --template-file, or NULL */
    int strict, json;          /* --strict, --json */
    struct sa_nats *n;
    struct sa_keyring *ring;
    struct booker *bk; /* the run (booker.h) */
    struct input *in;
    char *tmpl;   /* --template-file: a task with {{column}} fields */
    char *header; /* CSV header row, split into names */
    char *names[INPUT_FIELDS_MAX];
    int n_names;
    long line, total, refused, series_again;
    long no_id; /* lines without an id that were published (refused ones are not counted) */
    struct {
        long line;
        char why[256];
    } refusals[BATCH_REFUSALS_KEPT];
    /* duplicate PubAcks read back: this very task, or the id taken (SA_ECONFLICT), no longer
     * stored to compare (SA_ENOTFOUND), or not read (another code) */
    long already, taken, unverified, unchecked;
    struct {
        long line;
        enum sa_code code;
        char id[SA_ID_MAX + 1];
        char why[256];
    } dups[BATCH_REFUSALS_KEPT];
    struct booked {
        long line;
        char id[SA_ID_MAX + 1];
    } * booked; /* every line published (or a series already there), for the ids printed */
    size_t n_booked, cap_booked;
    char *flat; /* INPUT_LINE_MAX + 1 bytes: the strings of a line batch_line_flat took */
    int tty;
    int full; /* the batch stopped at a full task stream (tasklimit.h) */
    int64_t started_ms, shown_ms;
};

/* batch_json.c */
/* Reads --template-file (if given) into b->tmpl; SA_EINVAL says why it cannot. */
enum sa_code batch_template(struct batch *b, struct sa_err *err) SA_MUST_CHECK;
/* The task object of a line; NULL with err set for a bad line, NULL without for the CSV header. */
json_t *batch_line_json(struct batch *b, char *line, struct sa_err *err);
/* Fills a zeroed o from a flat NDJSON line without jansson: one object whose keys are known
 * and unique, its values strings, true/false or lists of strings, its text ASCII (escapes
 * may name any character but U+0000). o's strings are copies in buf, which must hold
 * strlen(line) + 1 bytes and outlive o. Returns 1 with o set as batch_line_json and
 * batch_opts_from_json would set it; 0 (o zeroed again) for any other line, bad or not:
 * those go to jansson, which accepts them or says why not. */
int batch_line_flat(struct book_req *o, const char *line, char *buf);
/* Points o's fields at obj's strings (obj must outlive o). Unknown keys are refused. */
enum sa_code batch_opts_from_json(struct book_req *o, json_t *obj,
                                  struct sa_err *err) SA_MUST_CHECK;

#endif

/* Batch input: lines of NDJSON, or CSV rows filled into a task template. */
#ifndef INPUT_H
#define INPUT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "sa_err.h"

#define INPUT_LINE_MAX (1024 * 1024) /* one line of a batch file */
#define INPUT_FIELDS_MAX 256

struct input;

/* Opens path ("-": standard input). */
enum sa_code input_open(struct input **out, const char *path, struct sa_err *err) SA_MUST_CHECK;
void input_close(struct input *in);

/* The next line without its newline: 1, or 0 at the end. A line over INPUT_LINE_MAX is
 * returned as 1 with *too_long set and skipped: no more than INPUT_LINE_MAX + 1 bytes of it
 * are ever held. */
int input_next(struct input *in, char **line, size_t *len, int *too_long);

/* CSV input: a row whose quoted field holds a newline is read on to its end, and input_next
 * returns the whole row (its newlines kept, CRs before them dropped). */
void input_set_csv(struct input *in);

/* Lines in a regular file (for the progress bar), or -1 for a pipe. */
long input_count_lines(const char *path);

/* Splits one CSV row in place (RFC 4180 quoting; a quoted field may hold newlines). Returns the
 * number of fields, or -1 for a bad quote. */
int csv_split(char *line, char **fields, int max);

/* Fills {{name}} placeholders of a JSON template with the row's values (escaped for JSON
 * strings) and parses the result. A field in the "data" string lands in the syntax of where it
 * stands in the body: JSON-escaped inside a JSON string of a JSON body (the default
 * Content-Type, else one with "json"), percent-encoded in an x-www-form-urlencoded one, else as
 * written; a filled JSON body must parse. NULL with a reason in err if it does not parse, a
 * placeholder names no column, or the filled text would pass INPUT_LINE_MAX (refused there,
 * before it grows further). */
json_t *template_fill(const char *tmpl, char **names, char **values, int n, struct sa_err *err);

#endif

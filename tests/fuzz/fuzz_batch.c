/* Batch lines as `sendat schedule --batch` reads them, up to the sealed task. If the input
 * starts with "T", the rest of its first line is a --template-file and the lines after it are
 * CSV (a header row, then rows); otherwise every line is NDJSON. Each line that gives a task
 * object goes through the same checks and build as the command (no broker, a fixed clock), and
 * an NDJSON line the flat parser takes must give the options jansson gives. */
#include "../support/opts_same.h"
#include "batch.h"
#include "fuzz.h"

#define NOW_MS 1795340100000LL

/* A line the flat parser takes must give jansson's options (batch.h: batch_line_flat). */
static void
flat_as_jansson(const char *line, json_t *obj)
{
    struct book_req flat = {0}, o = {0};
    char *buf = malloc(strlen(line) + 1);

    if (!buf)
        abort();
    if (batch_line_flat(&flat, line, buf) &&
        (!obj || batch_opts_from_json(&o, obj, NULL) != SA_OK || !opts_same(&flat, &o)))
        abort();
    free(buf);
}

static void
one_line(struct batch *b, char *line)
{
    struct sa_err err = {0};
    struct book_req o = {0};
    struct sa_task *t = NULL;
    json_t *obj = batch_line_json(b, line, &err); /* reads an NDJSON line, changes it not */

    if (!b->tmpl)
        flat_as_jansson(line, obj);
    if (!obj)
        return;
    if (batch_opts_from_json(&o, obj, NULL) == SA_OK && book_check(&o, NULL) == SA_OK &&
        sa_task_new(&t, NULL) == SA_OK &&
        book_build_task(t, &o, (const uint8_t *)o.data, o.data ? strlen(o.data) : 0, NOW_MS,
                        NULL) == SA_OK &&
        sa_task_validate(t, NULL) != SA_OK)
        abort(); /* a built task is a valid task */
    sa_task_free(t);
    json_decref(obj);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), *lines[64];
    struct batch b = {0};
    int n = fuzz_lines(text, lines, 64), first = 0;

    if (text[0] == 'T') {
        b.tmpl = lines[0] + 1;
        first = 1;
    }
    for (int i = first; i < n; i++)
        if (strlen(lines[i]) <= INPUT_LINE_MAX)
            one_line(&b, lines[i]);
    free(b.header);
    free(text);
    return 0;
}

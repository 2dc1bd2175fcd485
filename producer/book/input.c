/* Reading batch files line by line with a ceiling on line length, CSV rows, and templates. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "input.h"

#define INPUT_BLOCK 65536

struct input {
    FILE *f;   /* read with read(2) on its descriptor: a pipe's line is taken as it comes */
    char *buf; /* INPUT_LINE_MAX + 2 bytes: a line, one byte past the ceiling, and a NUL */
    char block[INPUT_BLOCK];
    size_t at, end; /* block[at..end) is read and not yet taken */
    int csv;        /* a quoted field may hold newlines: a row goes on past one */
};

enum sa_code
input_open(struct input **out, const char *path, struct sa_err *err)
{
    struct input *in = calloc(1, sizeof(*in));

    *out = NULL;
    if (in)
        in->buf = malloc(INPUT_LINE_MAX + 2);
    if (!in || !in->buf) {
        free(in);
        return sa_fail(err, SA_ENOMEM, "no memory");
    }
    in->f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!in->f) {
        free(in->buf);
        free(in);
        return sa_fail(err, SA_EINVAL, "--batch %s: cannot open", path);
    }
    *out = in;
    return SA_OK;
}

void
input_close(struct input *in)
{
    if (!in)
        return;
    if (in->f && in->f != stdin)
        fclose(in->f);
    free(in->buf);
    free(in);
}

/* Reads the next block; 0 at the end (or on a read error, which ends the input as EOF did). */
static int
refill(struct input *in)
{
    ssize_t n;

    do
        n = read(fileno(in->f), in->block, sizeof(in->block));
    while (n < 0 && errno == EINTR);
    in->at = 0;
    in->end = n > 0 ? (size_t)n : 0;
    return n > 0;
}

/* Reads at most INPUT_LINE_MAX + 1 bytes of a line in all (getline would hold a 200 MB line
 * whole before its length could be refused) into buf from start, and skips the rest, up to and
 * with its newline, a block at a time. Returns the length from buf's start, or -1 at the end. */
static ssize_t
read_line(struct input *in, size_t start, int *too_long)
{
    size_t n = start;
    int any = 0;
    char *nl = NULL;

    while (!nl && (in->at < in->end || refill(in))) {
        char *from = in->block + in->at;
        size_t avail = in->end - in->at, take, room = INPUT_LINE_MAX + 1 - n;

        nl = memchr(from, '\n', avail);
        take = nl ? (size_t)(nl - from) : avail;
        memcpy(in->buf + n, from, take < room ? take : room);
        n += take < room ? take : room;
        in->at += take + (nl != NULL);
        any = 1;
    }
    if (!any)
        return -1;
    *too_long = n > INPUT_LINE_MAX;
    in->buf[n] = '\0';
    return (ssize_t)n;
}

void
input_set_csv(struct input *in)
{
    in->csv = 1;
}

/* Whether text (n bytes) ends inside a quoted CSV field: an odd number of quotes ("" inside a
 * field counts two). */
static int
open_quote(const char *text, size_t n)
{
    size_t quotes = 0;

    for (const char *q = text; (q = memchr(q, '"', (size_t)(text + n - q))); q++)
        quotes++;
    return quotes % 2;
}

static void
chop_cr(struct input *in, ssize_t *n)
{
    while (*n > 0 && in->buf[*n - 1] == '\r')
        in->buf[--*n] = '\0';
}

int
input_next(struct input *in, char **line, size_t *len, int *too_long)
{
    ssize_t n;

    *too_long = 0;
    n = read_line(in, 0, too_long);
    if (n < 0)
        return 0;
    chop_cr(in, &n);
    /* RFC 4180: a quoted field holds newlines, so a row goes on to the next line */
    while (in->csv && !*too_long && open_quote(in->buf, (size_t)n)) {
        ssize_t more;
        if ((size_t)n + 1 > INPUT_LINE_MAX) {
            *too_long = 1;
            break;
        }
        in->buf[n] = '\n';
        if ((more = read_line(in, (size_t)n + 1, too_long)) < 0) {
            in->buf[n] = '\0'; /* the end inside a quote: the row does not parse */
            break;
        }
        n = more;
        chop_cr(in, &n);
    }
    *line = in->buf;
    *len = (size_t)n;
    return 1;
}

long
input_count_lines(const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : NULL;
    char buf[65536];
    long lines = 0;
    size_t n;

    if (!f)
        return -1;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))); p++)
            lines++;
    fclose(f);
    return lines;
}

int
csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *r = line, *w = line;

    while (n < max) {
        fields[n++] = w;
        if (*r == '"') { /* quoted: "" is a quote, the field ends at the closing quote */
            for (r++;; r++) {
                if (!*r)
                    return -1;
                if (*r == '"' && r[1] == '"')
                    *w++ = *r++;
                else if (*r == '"')
                    break;
                else
                    *w++ = *r;
            }
            r++;
            if (*r && *r != ',')
                return -1;
        } else {
            while (*r && *r != ',')
                *w++ = *r++;
        }
        if (!*r) {
            *w = '\0';
            return n;
        }
        *w++ = '\0';
        r++;
    }
    return -1;
}

/* The JSON string body (no quotes) for value, malloc'd. */
static char *
json_escaped(const char *value)
{
    json_t *s = json_string(value);
    char *dumped = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    size_t n;

    json_decref(s);
    if (!dumped)
        return NULL;
    n = strlen(dumped);
    memmove(dumped, dumped + 1, n - 2);
    dumped[n - 2] = '\0';
    return dumped;
}

static const char *
lookup(const char *name, size_t len, char **names, char **values, int n)
{
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == len && !memcmp(names[i], name, len))
            return values[i];
    return NULL;
}

/* Appends n bytes of s. The ceiling is checked before anything grows, so a template of
 * thousands of fields stops at INPUT_LINE_MAX instead of expanding to gigabytes. */
static enum sa_code
append(char **out, size_t *len, size_t *cap, const char *s, size_t n, struct sa_err *err)
{
    if (n > INPUT_LINE_MAX - *len)
        return sa_fail(err, SA_EINVAL, "the filled template is longer than %d bytes",
                       INPUT_LINE_MAX);
    if (*len + n + 1 > *cap) {
        size_t nc = (*len + n + 1) * 2;
        char *b = realloc(*out, nc);
        if (!b)
            return sa_fail(err, SA_ENOMEM, "no memory to fill the template");
        *out = b;
        *cap = nc;
    }
    memcpy(*out + *len, s, n);
    *len += n;
    (*out)[*len] = '\0';
    return SA_OK;
}

/* Appends the JSON-escaped value of the {{field}} between open and close. */
static enum sa_code
append_field(char **out, size_t *len, size_t *cap, const char *open, const char *close,
             char **names, char **values, int n, struct sa_err *err)
{
    const char *v = lookup(open + 2, (size_t)(close - open - 2), names, values, n);
    char *esc;
    enum sa_code rc;

    if (!v)
        return sa_fail(err, SA_EINVAL, "template field {{%.*s}} is not a column",
                       (int)(close - open - 2), open + 2);
    esc = json_escaped(v);
    rc = esc ? append(out, len, cap, esc, strlen(esc), err)
             : sa_fail(err, SA_ENOMEM, "no memory to fill the template");
    free(esc);
    return rc;
}

/* The webhook body's syntax by its Content-Type header (the "header" key: a string or a list
 * of "Name: value" strings); JSON when there is none, as the consumer sends it. */
enum body_syntax { BODY_JSON, BODY_FORM, BODY_RAW };

static enum body_syntax
body_syntax_of(json_t *task)
{
    json_t *h = json_object_get(task, "header"), *one;
    size_t i;

    if (json_is_string(h))
        h = json_pack("[O]", h);
    else
        json_incref(h);
    json_array_foreach(h, i, one)
    {
        const char *v = json_string_value(one);
        if (!v || strncasecmp(v, "content-type:", 13))
            continue;
        v += 13;
        json_decref(h);
        if (strstr(v, "json"))
            return BODY_JSON;
        return strstr(v, "x-www-form-urlencoded") ? BODY_FORM : BODY_RAW;
    }
    json_decref(h);
    return BODY_JSON;
}

/* value percent-encoded for a form body, malloc'd. */
static char *
form_escaped(const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc(strlen(value) * 3 + 1), *w = out;

    for (const unsigned char *r = (const unsigned char *)value; out && *r; r++) {
        if ((*r >= 'A' && *r <= 'Z') || (*r >= 'a' && *r <= 'z') || (*r >= '0' && *r <= '9') ||
            strchr("-._~", *r)) {
            *w++ = (char)*r;
        } else {
            *w++ = '%';
            *w++ = hex[*r >> 4];
            *w++ = hex[*r & 15];
        }
    }
    if (out)
        *w = '\0';
    return out;
}

/* Fills the body template body_tmpl (the template's "data" as written) so that each field
 * lands in the syntax of where it stands: inside a JSON string JSON-escaped, elsewhere in JSON
 * as written (a number, say), in a form body percent-encoded, else as written. A JSON body must
 * parse once filled. NULL with a reason in err. */
static json_t *
body_fill(const char *body_tmpl, enum body_syntax syntax, char **names, char **values, int n,
          struct sa_err *err)
{
    char *out = NULL, *esc;
    size_t len = 0, cap = 0;
    int in_string = 0;
    json_error_t jerr;
    json_t *body = NULL, *check;
    enum sa_code rc = append(&out, &len, &cap, "", 0, err);

    for (const char *p = body_tmpl; rc == SA_OK && *p;) {
        const char *close = !strncmp(p, "{{", 2) ? strstr(p + 2, "}}") : NULL;
        const char *v = close ? lookup(p + 2, (size_t)(close - p - 2), names, values, n) : NULL;
        if (!close || !v) {
            if (syntax == BODY_JSON && *p == '"')
                in_string = !in_string;
            if (syntax == BODY_JSON && in_string && *p == '\\' && p[1]) {
                rc = append(&out, &len, &cap, p, 2, err);
                p += 2;
                continue;
            }
            rc = append(&out, &len, &cap, p, 1, err);
            p++;
            continue;
        }
        esc = syntax == BODY_FORM                ? form_escaped(v)
              : syntax == BODY_JSON && in_string ? json_escaped(v)
                                                 : strdup(v);
        rc = esc ? append(&out, &len, &cap, esc, strlen(esc), err)
                 : sa_fail(err, SA_ENOMEM, "no memory to fill the template");
        free(esc);
        p = close + 2;
    }
    if (rc == SA_OK && syntax == BODY_JSON) {
        check = json_loads(out, JSON_DECODE_ANY, &jerr);
        if (!check)
            rc = sa_fail(err, SA_EINVAL,
                         "the filled data is not JSON (sent as Content-Type: application/json): "
                         "%s",
                         jerr.text);
        json_decref(check);
    }
    if (rc == SA_OK)
        body = json_string(out);
    free(out);
    return body;
}

/* Puts the body filled by body_fill into obj when the template's "data" has fields. */
static json_t *
fill_data(json_t *obj, const char *tmpl, char **names, char **values, int n, struct sa_err *err)
{
    json_t *written = json_loads(tmpl, 0, NULL), *body;
    const char *data = json_string_value(json_object_get(written, "data"));

    if (obj && data && strstr(data, "{{")) {
        body = body_fill(data, body_syntax_of(obj), names, values, n, err);
        if (body)
            json_object_set_new(obj, "data", body);
        else
            obj = (json_decref(obj), NULL);
    }
    json_decref(written);
    return obj;
}

json_t *
template_fill(const char *tmpl, char **names, char **values, int n, struct sa_err *err)
{
    char *out = NULL;
    size_t len = 0, cap = 0;
    const char *p = tmpl, *open, *close;
    json_error_t jerr;
    json_t *obj = NULL;
    enum sa_code rc = SA_OK;

    while (rc == SA_OK && (open = strstr(p, "{{")) && (close = strstr(open + 2, "}}"))) {
        rc = append(&out, &len, &cap, p, (size_t)(open - p), err);
        if (rc == SA_OK)
            rc = append_field(&out, &len, &cap, open, close, names, values, n, err);
        p = close + 2;
    }
    if (rc == SA_OK)
        rc = append(&out, &len, &cap, p, strlen(p), err);
    if (rc == SA_OK && !(obj = json_loads(out, 0, &jerr)))
        sa_fail(err, SA_EINVAL, "template does not give JSON: %s", jerr.text);
    free(out);
    return fill_data(obj, tmpl, names, values, n, err);
}

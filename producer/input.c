/* Reading batch files line by line with a ceiling on line length, CSV rows, and templates. */
#include <stdlib.h>
#include <string.h>

#include "input.h"

struct input {
    FILE *f;
    char *buf;
    size_t cap;
};

enum sa_code
input_open(struct input **out, const char *path, struct sa_err *err)
{
    struct input *in = calloc(1, sizeof(*in));

    *out = NULL;
    if (!in)
        return sa_fail(err, SA_ENOMEM, "no memory");
    in->f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!in->f) {
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

int
input_next(struct input *in, char **line, size_t *len, int *too_long)
{
    ssize_t n = getline(&in->buf, &in->cap, in->f);

    *too_long = 0;
    if (n < 0)
        return 0;
    while (n > 0 && (in->buf[n - 1] == '\n' || in->buf[n - 1] == '\r'))
        in->buf[--n] = '\0';
    *too_long = n > INPUT_LINE_MAX;
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

static int
append(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t nc = (*len + n + 1) * 2;
        char *b = realloc(*out, nc);
        if (!b)
            return -1;
        *out = b;
        *cap = nc;
    }
    memcpy(*out + *len, s, n);
    *len += n;
    (*out)[*len] = '\0';
    return 0;
}

json_t *
template_fill(const char *tmpl, char **names, char **values, int n, struct sa_err *err)
{
    char *out = NULL, *esc;
    size_t len = 0, cap = 0;
    const char *p = tmpl, *open, *close, *v;
    json_error_t jerr;
    json_t *obj;

    while ((open = strstr(p, "{{")) && (close = strstr(open + 2, "}}"))) {
        if (append(&out, &len, &cap, p, (size_t)(open - p)) != 0)
            goto nomem;
        v = lookup(open + 2, (size_t)(close - open - 2), names, values, n);
        if (!v) {
            sa_fail(err, SA_EINVAL, "template field {{%.*s}} is not a column", (int)(close - open - 2), open + 2);
            free(out);
            return NULL;
        }
        esc = json_escaped(v);
        if (!esc || append(&out, &len, &cap, esc, strlen(esc)) != 0) {
            free(esc);
            goto nomem;
        }
        free(esc);
        p = close + 2;
    }
    if (append(&out, &len, &cap, p, strlen(p)) != 0)
        goto nomem;
    obj = json_loads(out, 0, &jerr);
    if (!obj)
        sa_fail(err, SA_EINVAL, "template does not give JSON: %s", jerr.text);
    free(out);
    return obj;
nomem:
    free(out);
    sa_fail(err, SA_ENOMEM, "no memory to fill the template");
    return NULL;
}

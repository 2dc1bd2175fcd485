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

    if (!b->template_file)
        return SA_OK;
    return book_read_file(b->template_file, INPUT_LINE_MAX, &b->tmpl, &len, err);
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
    if (n < 0) {
        sa_fail(err, SA_EINVAL,
                "row has a quote that does not close (or text after a closing one)");
        return NULL;
    }
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
            return sa_fail_field(err, SA_EINVAL, key, "too many \"%s\" values", key);
        out[(*n)++] = json_string_value(v);
        return SA_OK;
    }
    if (!json_is_array(v))
        return sa_fail_field(err, SA_EINVAL, key, "\"%s\" must be a string or a list of strings",
                             key);
    json_array_foreach(v, i, e)
    {
        if (!json_is_string(e))
            return sa_fail_field(err, SA_EINVAL, key, "\"%s\" must hold strings", key);
        if (*n >= max)
            return sa_fail_field(err, SA_EINVAL, key, "too many \"%s\" values", key);
        out[(*n)++] = json_string_value(e);
    }
    return SA_OK;
}

/* The slots of a list key (header, email, cc, bcc), its count and its ceiling; NULL for
 * another key. */
static const char **
list_field(struct book_req *o, const char *key, int **n, int *max)
{
    static const char *kinds[] = {"email", "cc", "bcc"};

    if (!strcmp(key, "header")) {
        *n = &o->n_headers;
        *max = SA_HEADERS_MAX;
        return o->headers;
    }
    for (int k = 0; k < 3; k++)
        if (!strcmp(key, kinds[k])) {
            *n = &o->n_rcpt[k];
            *max = 64;
            return o->rcpt[k];
        }
    return NULL;
}

/* An unknown key is the field at fault: named up to 40 bytes, and before any '"' in it. */
static enum sa_code
unknown_key(const char *key, struct sa_err *err)
{
    char name[41];
    int n = (int)strcspn(key, "\"");

    snprintf(name, sizeof(name), "%.*s", n, key);
    return sa_fail_field(err, SA_EINVAL, name[0] ? name : NULL, "unknown key \"%.40s\"", key);
}

static enum sa_code
set_list(struct book_req *o, const char *key, json_t *v, struct sa_err *err)
{
    int *n = NULL, max = 0;
    const char **slots = list_field(o, key, &n, &max);

    if (!slots)
        return unknown_key(key, err);
    return each_string(v, key, slots, max, n, err);
}

static const char **
string_field(struct book_req *o, const char *key)
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
batch_opts_from_json(struct book_req *o, json_t *obj, struct sa_err *err)
{
    const char *key, **field;
    json_t *v;
    enum sa_code rc = SA_OK;

    json_object_foreach(obj, key, v)
    {
        if (!strcmp(key, "at-most-once")) {
            if (!json_is_boolean(v))
                return sa_fail_field(err, SA_EINVAL, "at-most-once",
                                     "\"at-most-once\" must be true or false");
            o->at_most_once = json_is_true(v);
        } else if ((field = string_field(o, key))) {
            if (!json_is_string(v))
                return sa_fail_field(err, SA_EINVAL, key, "\"%s\" must be a string", key);
            *field = json_string_value(v);
        } else if ((rc = set_list(o, key, v, err)) != SA_OK) {
            return rc;
        }
    }
    return SA_OK;
}

/* The flat line parser (batch_line_flat): reads at r, writes strings unescaped at w. */
struct flat {
    const char *r;
    char *w;
};

static void
skip_space(struct flat *f)
{
    while (*f->r == ' ' || *f->r == '\t' || *f->r == '\n' || *f->r == '\r')
        f->r++;
}

/* Four hex digits at r (it stops at the first other byte, the NUL too); 0, or -1. */
static int
hex4(const char *r, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = (unsigned char)r[i];

        if (c >= '0' && c <= '9')
            c -= '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            c = (c | 0x20) - 'a' + 10;
        else
            return -1;
        *v = *v << 4 | c;
    }
    return 0;
}

/* The code point of \uXXXX (a surrogate pair: both escapes) at f->r, just past "\u", written
 * as UTF-8; -1 where jansson refuses: \u0000, a lone surrogate, not hex. */
static int
unicode_escape(struct flat *f)
{
    unsigned cp, lo;

    if (hex4(f->r, &cp) || cp == 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
        return -1;
    f->r += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (f->r[0] != '\\' || f->r[1] != 'u' || hex4(f->r + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
            return -1;
        f->r += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (cp < 0x80) {
        *f->w++ = (char)cp;
    } else if (cp < 0x800) {
        *f->w++ = (char)(0xC0 | cp >> 6);
        *f->w++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *f->w++ = (char)(0xE0 | cp >> 12);
        *f->w++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *f->w++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *f->w++ = (char)(0xF0 | cp >> 18);
        *f->w++ = (char)(0x80 | (cp >> 12 & 0x3F));
        *f->w++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *f->w++ = (char)(0x80 | (cp & 0x3F));
    }
    return 0;
}

/* The JSON string at f->r (its opening quote) copied unescaped to f->w and NUL-terminated:
 * its copy, or NULL where the line goes to jansson (no string, not ASCII, a control byte,
 * an escape jansson refuses). No copy is longer than its quoted text, so w never passes r. */
static const char *
flat_string(struct flat *f)
{
    static const char plain[] = "\"\\/bfnrt", meant[] = "\"\\/\b\f\n\r\t";
    const char *start = f->w, *esc;
    unsigned char c;

    if (*f->r++ != '"')
        return NULL;
    while ((c = (unsigned char)*f->r++) != '"') {
        if (c < 0x20 || c >= 0x80) /* the NUL too: not terminated */
            return NULL;
        if (c != '\\') {
            *f->w++ = (char)c;
            continue;
        }
        c = (unsigned char)*f->r++;
        if (c == 'u') {
            if (unicode_escape(f))
                return NULL;
        } else if (c && (esc = strchr(plain, c))) {
            *f->w++ = meant[esc - plain];
        } else {
            return NULL;
        }
    }
    *f->w++ = '\0';
    return start;
}

/* A list key's value: one string or a list of strings, each added to its slots; 0, or -1. */
static int
flat_list(struct flat *f, const char **slots, int *n, int max)
{
    if (*f->r != '[')
        return *n < max && (slots[*n] = flat_string(f)) ? (++*n, 0) : -1;
    f->r++;
    skip_space(f);
    if (*f->r == ']') {
        f->r++;
        return 0;
    }
    for (;;) {
        if (*n >= max || !(slots[*n] = flat_string(f)))
            return -1;
        ++*n;
        skip_space(f);
        if (*f->r == ']') {
            f->r++;
            return 0;
        }
        if (*f->r++ != ',')
            return -1;
        skip_space(f);
    }
}

/* One member's value set as batch_opts_from_json sets it; -1 for what it would refuse or a
 * value of another type (both go to jansson). */
static int
flat_value(struct flat *f, struct book_req *o, const char *key)
{
    const char **field, **slots;
    int *n = NULL, max = 0;

    if (!strcmp(key, "at-most-once")) {
        o->at_most_once = !strncmp(f->r, "true", 4);
        if (!o->at_most_once && strncmp(f->r, "false", 5))
            return -1;
        f->r += o->at_most_once ? 4 : 5;
        return 0;
    }
    if ((field = string_field(o, key)))
        return (*field = flat_string(f)) ? 0 : -1;
    slots = list_field(o, key, &n, &max);
    return slots ? flat_list(f, slots, n, max) : -1;
}

/* Whether key is one of the first n keys (JSON_REJECT_DUPLICATES). */
static int
seen(const char **keys, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(keys[i], key))
            return 1;
    return 0;
}

/* The members of the object at f->r (past its '{'); 0, or -1. Every key taken is a known one
 * and seen once, so no more than FLAT_KEYS fit. */
#define FLAT_KEYS 24
static int
flat_members(struct flat *f, struct book_req *o)
{
    const char *keys[FLAT_KEYS], *key;
    int n = 0;

    skip_space(f);
    if (*f->r == '}')
        return f->r++, 0;
    for (;;) {
        if (n == FLAT_KEYS || !(key = flat_string(f)) || seen(keys, n, key))
            return -1;
        keys[n++] = key;
        skip_space(f);
        if (*f->r++ != ':')
            return -1;
        skip_space(f);
        if (flat_value(f, o, key))
            return -1;
        skip_space(f);
        if (*f->r == '}')
            return f->r++, 0;
        if (*f->r++ != ',')
            return -1;
        skip_space(f);
    }
}

int
batch_line_flat(struct book_req *o, const char *line, char *buf)
{
    struct flat f = {.r = line, .w = buf};

    skip_space(&f);
    if (*f.r++ == '{' && flat_members(&f, o) == 0) {
        skip_space(&f);
        if (*f.r == '\0')
            return 1;
    }
    memset(o, 0, sizeof(*o));
    return 0;
}

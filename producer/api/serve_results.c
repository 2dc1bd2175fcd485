/* A batch's results as compact JSON text (serve_results.h): one growing buffer of texts and an
 * entry per line (its line, where its text is, whether it holds an id). A result put in
 * place of another is appended and the old text left behind: a line is replaced at most
 * twice (its run's id check, then its PubAck), so the buffer stays within three times the
 * answer. Memory is proportional to the answer and bounded by SERVE_RESULT_TEXT_MAX a line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_results.h"

struct entry {
    long line;
    size_t off, len;
    int ok; /* holds an id: scheduled, not refused */
};

struct serve_results {
    struct entry *e;
    size_t n, cap;
    char *text;
    size_t used, room;
};

enum sa_code
serve_results_new(struct serve_results **out, struct sa_err *err)
{
    *out = calloc(1, sizeof(**out));
    return *out ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory for a batch's results");
}

void
serve_results_free(struct serve_results *rs)
{
    if (!rs)
        return;
    free(rs->e);
    free(rs->text);
    free(rs);
}

/* doc as text (doc taken), *ok if it holds an id: its compact dump, or a refusal with its
 * status alone when there is none or it is longer than SERVE_RESULT_TEXT_MAX. */
static int
render(long line, json_t *doc, char *out, size_t cap, int *ok)
{
    json_t *e = json_object_get(doc, "error");
    int status = e ? (int)json_integer_value(json_object_get(e, "status")) : 0;
    size_t n = doc ? json_dumpb(doc, out, cap, JSON_COMPACT) : 0;

    *ok = json_object_get(doc, "id") != NULL;
    json_decref(doc);
    if (n > 0 && n < cap)
        return (int)n;
    *ok = 0;
    return snprintf(out, cap,
                    "{\"line\":%ld,\"error\":{\"status\":%d,\"message\":\"refused (the "
                    "reason was too long to show)\",\"field\":null}}",
                    line, status ? status : 400);
}

/* Appends len bytes of text to rs's buffer: their offset, or SIZE_MAX if no memory. */
static size_t
append_text(struct serve_results *rs, const char *text, size_t len)
{
    size_t at = rs->used;

    if (rs->used + len > rs->room) {
        size_t room = rs->room ? rs->room * 2 : 4096;
        char *grown;
        while (room < rs->used + len)
            room *= 2;
        if (!(grown = realloc(rs->text, room)))
            return SIZE_MAX;
        rs->text = grown;
        rs->room = room;
    }
    memcpy(rs->text + at, text, len);
    rs->used += len;
    return at;
}

/* Stores doc (taken) as e's text; 0 if no memory. */
static int
store(struct serve_results *rs, struct entry *e, json_t *doc)
{
    char text[SERVE_RESULT_TEXT_MAX + 1];
    int ok = 0, n = render(e->line, doc, text, sizeof(text), &ok);
    size_t at = append_text(rs, text, (size_t)n);

    if (at == SIZE_MAX)
        return 0;
    e->off = at;
    e->len = (size_t)n;
    e->ok = ok;
    return 1;
}

enum sa_code
serve_results_add(struct serve_results *rs, long line, json_t *doc, struct sa_err *err)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 256;
        struct entry *grown = realloc(rs->e, cap * sizeof(*grown));
        if (!grown) {
            json_decref(doc);
            return sa_fail(err, SA_ENOMEM, "no memory for line %ld's result", line);
        }
        rs->e = grown;
        rs->cap = cap;
    }
    rs->e[rs->n].line = line;
    if (!store(rs, &rs->e[rs->n], doc))
        return sa_fail(err, SA_ENOMEM, "no memory for line %ld's result", line);
    rs->n++;
    return SA_OK;
}

/* line's entry (entries are in line order), or NULL. */
static struct entry *
entry_of(const struct serve_results *rs, long line)
{
    size_t lo = 0, hi = rs->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rs->e[mid].line == line)
            return &rs->e[mid];
        if (rs->e[mid].line < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void
serve_results_set(struct serve_results *rs, long line, json_t *doc)
{
    struct entry *e = entry_of(rs, line);

    if (e)
        store(rs, e, doc); /* no memory: the line keeps its earlier result */
    else
        json_decref(doc);
}

json_t *
serve_results_get(const struct serve_results *rs, long line)
{
    const struct entry *e = entry_of(rs, line);

    return e ? json_loadb(rs->text + e->off, e->len, 0, NULL) : NULL;
}

char *
serve_results_answer(const struct serve_results *rs, size_t *len)
{
    char head[96];
    size_t ok = 0, need, at;
    char *out;
    int n;

    for (size_t i = 0; i < rs->n; i++)
        ok += rs->e[i].ok;
    n = snprintf(head, sizeof(head), "{\"scheduled\":%zu,\"refused\":%zu,\"results\":[", ok,
                 rs->n - ok);
    need = (size_t)n + 3; /* "]}" and the NUL */
    for (size_t i = 0; i < rs->n; i++)
        need += rs->e[i].len + 1;
    if (!(out = malloc(need)))
        return NULL;
    memcpy(out, head, (size_t)n);
    at = (size_t)n;
    for (size_t i = 0; i < rs->n; i++) {
        if (i)
            out[at++] = ',';
        memcpy(out + at, rs->text + rs->e[i].off, rs->e[i].len);
        at += rs->e[i].len;
    }
    memcpy(out + at, "]}", 3);
    *len = at + 2;
    return out;
}

size_t
serve_results_bytes(const struct serve_results *rs)
{
    return rs ? rs->room + rs->cap * sizeof(*rs->e) : 0;
}

/* A task's content as JSON (see content.h). Only a holder of the key sees it: the broker never
 * does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "content.h"

void
content_add(json_t *e, const struct sa_task *t)
{
    json_t *headers = json_array(), *to = json_array(), *data;

    for (size_t i = 0; i < t->n_headers; i++)
        json_array_append_new(headers,
                              json_sprintf("%s: %s", t->headers[i].name, t->headers[i].value));
    json_object_set_new(e, "header", headers);
    data = json_stringn((const char *)t->body, t->body_len);
    json_object_set_new(e, "data", data ? data : json_null());
    for (size_t i = 0; i < t->n_rcpt[SA_RCPT_TO]; i++)
        json_array_append_new(to, json_string(t->rcpt[SA_RCPT_TO][i]));
    if (t->channel == SA_CHANNEL_EMAIL) {
        json_object_set_new(e, "email", to);
        json_object_set_new(e, "subject", json_string(t->subject ? t->subject : ""));
        json_object_set_new(e, "text", json_string(t->text ? t->text : ""));
        json_object_set_new(e, "html", json_string(t->html ? t->html : ""));
    } else {
        json_decref(to);
    }
}

/* The length of the well-formed UTF-8 sequence at s (of at most left bytes) that a terminal
 * may be given as is, or 0: a C1 control (U+0080-U+009F) or a broken sequence. */
static size_t
utf8_len(const unsigned char *s, size_t left)
{
    size_t n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;

    if (n == 0 || n > left || (s[0] == 0xC2 && s[1] < 0xA0))
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* Writes len bytes of s as they are, but for what would drive a terminal: C0 controls (not
 * newline or tab), DEL, C1 controls and broken UTF-8 as \xNN. A newline goes on with indent. */
static void
put_text(const char *s, size_t len, const char *indent)
{
    const unsigned char *u = (const unsigned char *)s;

    for (size_t i = 0; i < len;) {
        size_t n = u[i] >= 0x80 ? utf8_len(u + i, len - i) : 1;
        if (u[i] == '\n') {
            printf("\n%s", indent);
        } else if (n == 0 || (u[i] < 0x20 && u[i] != '\t') || u[i] == 0x7F) {
            printf("\\x%02x", u[i]);
            n = 1;
        } else {
            fwrite(u + i, 1, n, stdout);
        }
        i += n;
    }
}

/* The length of s cut to at most max bytes, not inside a UTF-8 sequence. */
static size_t
cut_at(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

/* One field: "  LABEL key: value", a list's items joined by ", " (headers a line each), a
 * value longer than CONTENT_SHOWN_MAX cut with a line that says where. */
static void
print_field(const char *label, const char *key, json_t *v)
{
    const char *sep = *label ? " " : "";
    json_t *item;
    size_t i;

    if (json_is_array(v) && !strcmp(key, "header")) {
        json_array_foreach(v, i, item)
        {
            printf("  %s%s%s: ", label, sep, key);
            put_text(json_string_value(item), strlen(json_string_value(item)), "    ");
            putchar('\n');
        }
        return;
    }
    printf("  %s%s%s: ", label, sep, key);
    if (json_is_array(v)) {
        json_array_foreach(v, i, item)
        {
            if (i)
                fputs(", ", stdout);
            put_text(json_string_value(item), strlen(json_string_value(item)), "    ");
        }
    } else if (json_is_string(v)) {
        size_t len = json_string_length(v),
               shown = cut_at(json_string_value(v), len, CONTENT_SHOWN_MAX);
        put_text(json_string_value(v), shown, "    ");
        if (shown < len)
            printf("\n  %s%s%s cut here: %zu of %zu bytes shown (all of it: --json)", label, sep,
                   key, shown, len);
    } else {
        fputs("(not UTF-8 text: not shown; --json neither)", stdout);
    }
    putchar('\n');
}

void
content_print(json_t *e, const char *label)
{
    static const char *const keys[] = {"header", "data", "email", "subject", "text", "html", NULL};

    for (int i = 0; keys[i]; i++) {
        json_t *v = json_object_get(e, keys[i]);
        if (v && !(json_is_array(v) && !json_array_size(v) && !strcmp(keys[i], "header")))
            print_field(label, keys[i], v);
    }
}

const char *
content_escape(char *out, size_t cap, const char *s)
{
    size_t n = 0;

    for (; *s && n + 5 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\' || c == '"')
            n += (size_t)snprintf(out + n, cap - n, "\\%c", c);
        else if (c < 0x20 || c >= 0x7F)
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", c);
        else
            out[n++] = (char)c;
    }
    out[n] = '\0';
    return out;
}

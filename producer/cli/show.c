/* Terminal renderings of what read/ gives as JSON: a task's content and a history's events
 * (show.h). */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "show.h"

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
 * value longer than SHOW_CONTENT_MAX cut with a line that says where. */
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
               shown = cut_at(json_string_value(v), len, SHOW_CONTENT_MAX);
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
show_content(json_t *e, const char *label)
{
    static const char *const keys[] = {"header", "data", "email", "subject", "text", "html", NULL};

    for (int i = 0; keys[i]; i++) {
        json_t *v = json_object_get(e, keys[i]);
        if (v && !(json_is_array(v) && !json_array_size(v) && !strcmp(keys[i], "header")))
            print_field(label, keys[i], v);
    }
}

static void
print_quoted(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            printf("\\x%02x", c); /* a terminal never sees an escape code from a reason */
        else
            putchar(c);
    }
    putchar('"');
}

void
show_events(const json_t *events)
{
    size_t i;
    json_t *e;

    json_array_foreach(events, i, e)
    {
        const char *key;
        json_t *v;

        printf("%s %s", json_string_value(json_object_get(e, "at")),
               json_string_value(json_object_get(e, "event")));
        json_object_foreach((json_t *)e, key, v)
        {
            if (!strcmp(key, "at") || !strcmp(key, "at_ms") || !strcmp(key, "event"))
                continue;
            printf(" %s=", key);
            if (json_is_string(v))
                print_quoted(json_string_value(v));
            else
                printf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
        }
        putchar('\n');
    }
}

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
